"""Errors of the device bridge above the protocol core (transports, link, emulator, profiles).

Each class also inherits the builtin a caller would naturally catch (as python-can does)::

    BridgeError
    +-- TransportError (+OSError)             a port or USB device cannot be used
    |   +-- DeviceDisconnected (+ConnectionError)  unplugged, closed far end, errno 19
    |   +-- TransportTimeout (+TimeoutError)        nothing arrived in time
    +-- LinkError                              the link gave up (retries exhausted, handshake failed)
    |   +-- CommandFailed                      the device refused a command (carries the NAK)
    +-- FaultSpecError (+ValueError)           a bad --faults specification
"""
from __future__ import annotations


class BridgeError(Exception):
    """Base of the bridge's own errors."""


class TransportError(BridgeError, OSError):
    """A transport could not be opened, read or written."""


class DeviceDisconnected(TransportError, ConnectionError):
    """The device went away (unplugged, far end closed, USB errno 19)."""


class TransportTimeout(TransportError, TimeoutError):
    """A read or write did not complete in time."""


class LinkError(BridgeError):
    """The link gave up on a command or a session."""


class CommandFailed(LinkError):
    """The device answered a command with a NAK."""

    def __init__(self, command: object, code: object, text: str = "") -> None:
        self.command = command
        self.code = code
        self.text = text
        name = getattr(code, "name", code)
        super().__init__(f"{type(command).__name__} refused: {name}{': ' + text if text else ''}")


class FaultSpecError(BridgeError, ValueError):
    """A fault specification could not be parsed."""
