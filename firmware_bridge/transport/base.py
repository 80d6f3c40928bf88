"""The transport contract: a byte pipe to one device, opened and closed by the link layer.

A ``Transport`` moves raw bytes; it knows nothing of frames (the protocol core finds those). The
link layer owns one transport per device and uses it from two threads at most: a reader thread
calling ``read`` and one writer at a time calling ``write`` (the link serializes its commands).

Contract (every implementation):

- Construction never touches the device and never imports the optional driver library (pyserial,
  pyusb): a missing library is reported by ``open()``.
- ``open()`` opens the device; it may be called again after ``close()`` to reopen it (that is
  how the link reconnects after an unplug). Errors: ``TransportError`` naming the port or
  device; ``DeviceDisconnected`` (a ``TransportError``) when the device is not present.
  Calling ``open()`` on an open transport raises ``TransportError``.
- ``read(timeout)`` returns the bytes available now, waiting at most ``timeout`` seconds for the
  first one. **A quiet line is normal: it returns ``b""`` and never raises ``TransportTimeout``.**
  ``DeviceDisconnected``: the device went away (far end closed, unplugged, errno 19).
  ``TransportError``: any other failure, or the transport is not open.
- ``write(data)`` writes all of ``data`` or raises: ``DeviceDisconnected`` as for ``read``,
  ``TransportTimeout`` when the device does not take the bytes within the write timeout,
  ``TransportError`` otherwise.
- ``close()`` releases everything; it is idempotent and never raises.
- ``cancel_read()`` makes a ``read`` blocked in another thread return early (with what it has,
  possibly ``b""``) where the driver supports it; elsewhere it does nothing and the blocked read
  returns at its timeout. It never raises.
- ``describe()`` is a one-line human description (``serial /dev/ttyUSB0 115200 8N1``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import TYPE_CHECKING

from firmware_bridge.errors import TransportError

if TYPE_CHECKING:
    from .serial_sharing import SharedReading

__all__ = ["Transport"]


class Transport(ABC):
    """A byte pipe to one device (see the module docstring for the full contract)."""

    # While open, where two threads can wait on the line, the requester woken first
    # (``serial_sharing.SharedReading``, serial ports on Linux); ``None``: only ``read``.
    shared_reading: SharedReading | None = None

    @abstractmethod
    def open(self) -> None:
        """Open the device. Raises TransportError / DeviceDisconnected."""

    @abstractmethod
    def close(self) -> None:
        """Release the device; idempotent; never raises."""

    @abstractmethod
    def read(self, timeout: float) -> bytes:
        """Bytes available now, waiting up to ``timeout`` s for the first; ``b""`` if none."""

    @abstractmethod
    def write(self, data: bytes) -> None:
        """Write all of ``data``. Raises DeviceDisconnected / TransportTimeout / TransportError."""

    @property
    @abstractmethod
    def is_open(self) -> bool:
        """True between a successful ``open()`` and ``close()``."""

    @abstractmethod
    def describe(self) -> str:
        """One-line description of the port or device."""

    def line_settings(self) -> str | None:
        """The line's settings as a device's manual writes them (``38400 8E1``), where the
        transport has a line to set (a serial port); ``None`` otherwise."""
        return None

    def cancel_read(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Wake a ``read`` blocked in another thread, where supported; never raises."""

    def _require_open(self) -> None:
        if not self.is_open:
            raise TransportError(f"{self.describe()}: transport is not open")

    def __enter__(self) -> Transport:
        self.open()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"<{type(self).__name__} {self.describe()} ({state})>"
