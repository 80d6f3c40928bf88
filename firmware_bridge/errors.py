"""Errors of the device bridge above the protocol core (transports, link, emulator, profiles).

Each class also inherits the builtin a caller would naturally catch (as python-can does)::

    BridgeError
    +-- TransportError (+OSError)             a port or USB device cannot be used
    |   +-- DeviceDisconnected (+ConnectionError)  unplugged, closed far end, errno 19
    |   +-- TransportTimeout (+TimeoutError)        nothing arrived in time
    +-- LinkError                              the link gave up (retries exhausted, handshake failed)
    |   +-- CommandFailed                      the device refused a command (carries the NAK)
    |   +-- NotConnected                       the link is down: the command was NOT sent
    |   +-- HandshakeFailed                    the device was refused (protocol version, serial)
    |   +-- CommandOutcomeUnknown              sent, but no reply: it may or may not have run
    |       +-- CommandTimeout (+TimeoutError)        every attempt timed out (link then lost)
    |       +-- CommandInterrupted (+ConnectionError) the link went down while waiting
    +-- FaultSpecError (+ValueError)           a bad --faults specification

``LinkErrorKind``: what a link error the link reports without raising is about (its owner's
``on_error(kind, reason)``).

``os_error_words(exc)``: an ``OSError`` the machine raised (no descriptor left, say) in a few
plain words for the people at the table, without the errno number and path Python puts in it.
"""
from __future__ import annotations

import os
from enum import StrEnum
from typing import Any


class LinkErrorKind(StrEnum):
    """What a reported link error is about (``on_error(kind, reason)``), so that an owner can act
    on the one that needs a person without parsing words:

    - ``EVENTS_STALLED``: events never came although the device was asked again and again (a
      device fault, docs/protocol.md E7); every later event waits until the owner gives them up
      (``DeviceLink.accept_gap``);
    - ``EVENTS_GIVEN_UP``: ``accept_gap`` gave missing events up;
    - ``DEVICE_REFUSED``: the device refused one of the link's own commands (a NAK other than BUSY);
    - ``CONSUMER_FAILED``: ``on_event`` raised (the event is offered again).
    """

    EVENTS_STALLED = "events stalled"
    EVENTS_GIVEN_UP = "events given up"
    DEVICE_REFUSED = "device refused"
    CONSUMER_FAILED = "consumer failed"


def os_error_words(exc: BaseException) -> str:
    """``"too many open files"`` for ``OSError(EMFILE, ...)``: the error's own text, lower case,
    without its number or file name. An error that wraps the machine's (pyserial's
    ``SerialException("write failed: [Errno 5] ...")`` raised while handling the ``OSError``) is
    said by the ``OSError`` it came from; one with no errno anywhere by its own text (its
    ``strerror`` when it has one)."""
    seen: BaseException | None = exc
    for _ in range(4):  # a few links of the chain: pyserial wraps once
        if seen is None:
            break
        code = getattr(seen, "errno", None)
        if code:
            return os.strerror(code).lower()
        seen = seen.__cause__ or seen.__context__
    return getattr(exc, "strerror", None) or str(exc)  # pyusb's USBError: "[Errno None] ..." as str


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
    """The device answered a command with a NAK; ``code_name`` is its code's name (``BUSY``). The
    message names the command as the wire does (``SHUFFLE refused: BUSY``), as every link error does."""

    def __init__(self, command: Any, code: object, text: str = "") -> None:
        self.command = command  # the protocol Command refused
        self.code = code
        self.text = text
        self.code_name = str(getattr(code, "name", code))
        super().__init__(f"{command.TYPE.name} refused: {self.code_name}{': ' + text if text else ''}")


class UnreadableReply(LinkError):
    """The device answered a command with a reply that is not the command's, or cannot be read:
    whether it carried the command out is unknown, and the link stays up, so nothing sends it
    again by itself (docs/link.md's outcomes)."""


class FaultSpecError(BridgeError, ValueError):
    """A fault specification could not be parsed."""


class NotConnected(LinkError):
    """The link is not connected (connecting, disconnected or closed): the command was not sent,
    so it certainly did not run and may be sent again once the link is up."""


class HandshakeFailed(LinkError):
    """The handshake refused the device: unsupported protocol version, or a device whose
    IDENTITY serial number differs from the one this link is bound to."""


class CommandOutcomeUnknown(LinkError):
    """A command was sent but its reply never arrived: the device may or may not have executed
    it. The link starts a new session (SYNC), so the command is never resent automatically; the
    caller decides from STATUS and the events what happened (docs/link.md).

    Attributes: ``command`` (the command), ``attempts`` (transmissions made).
    """

    def __init__(self, message: str, *, command: object = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.command = command
        self.attempts = attempts


class CommandTimeout(CommandOutcomeUnknown, TimeoutError):
    """Every attempt of a command timed out; the link is then declared lost and reconnects."""


class CommandInterrupted(CommandOutcomeUnknown, ConnectionError):
    """The link went down (unplug, stop, a lost session) while a command awaited its reply."""
