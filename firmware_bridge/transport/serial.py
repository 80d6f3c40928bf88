"""``SerialTransport``: a serial line through pyserial's ``serial_for_url``.

Accepts what ``serial.serial_for_url`` accepts: a device path (``/dev/ttyUSB0``, a pty served by
the emulator, a stable symlink such as ``/dev/shoectl/acme-readershoe-s``), ``socket://host:port``,
``rfc2217://host:port`` and ``loop://``. Settings are pyserial keyword arguments, normally
``profile.transport.pyserial_kwargs()``.

Behaviour beyond the ``Transport`` contract:

- pyserial is imported by ``open()``, not at import time; without it ``open()`` raises
  ``TransportError``.
- Waiting: for a device path (and ``socket://``) the port is opened non-blocking (pyserial
  ``timeout=0``) and ``read`` waits with ``select`` on its descriptor and a private wake-up pipe
  (``cancel_read``), then reads the descriptor once, so the port is never reconfigured per call (pyserial applies a new timeout
  with ``tcsetattr``, which a pty refuses for some settings, e.g. even parity). Other URL handlers
  (``loop://``, ``rfc2217://``) get pyserial's own timeout, set only when it changes.
- No modem-line ioctls are issued by this class (RTS/DTR/CTS fail on a pty); pyserial itself
  tolerates the failure of its own DTR/RTS setup on a pty.
- A plain device path is opened with ``exclusive=True`` (an advisory ``flock``) unless the caller
  says otherwise, so two controllers cannot drive one device. URLs are opened as given.
- ``read`` errors (``SerialException``, ``OSError``: a closed far end makes pyserial report
  "readiness to read but returned no data", a pty gives EIO) raise ``DeviceDisconnected``; so do
  ``write`` errors, except a write timeout, which raises ``TransportTimeout``.
"""
from __future__ import annotations

import errno
import os
import select
from typing import Any

try:
    from termios import error as _TermiosError  # pyserial's open lets it through (a pty gone mid-open)
except ImportError:  # not POSIX
    class _TermiosError(Exception):  # type: ignore[no-redef]
        pass

from firmware_bridge.errors import DeviceDisconnected, TransportError, TransportTimeout, os_error_words

from .base import Transport
from .serial_sharing import MAX_READ, SharedReading

__all__ = ["SerialTransport"]

DEFAULT_WRITE_TIMEOUT = 1.0  # seconds; a device that takes no bytes for this long is gone
# pyserial port classes whose fileno() can be waited on with select() and read without blocking.
_SELECTABLE = frozenset({"serial.serialposix", "serial.urlhandler.protocol_socket"})
# Why a port did not open, in plain words (pyserial nests the OSError's repr in its message).
_OPEN_FAILURES = {
    errno.ENOENT: "no such device", errno.ENODEV: "no such device", errno.ENXIO: "no such device",
    errno.EBUSY: "in use by another program",
    errno.EAGAIN: "in use by another program (a port is opened exclusively)",
    errno.ENOTTY: "not a serial port", errno.EISDIR: "not a serial port",
}


class SerialTransport(Transport):
    """A serial port or pyserial URL.

    Args:
        url_or_path: device path or pyserial URL.
        write_timeout: seconds a ``write`` may block before ``TransportTimeout``.
        **settings: pyserial keyword arguments (``baudrate``, ``bytesize``, ``parity``,
            ``stopbits``, ``rtscts``, ``xonxoff``, ``dsrdtr``, ``exclusive``, ...).
    """

    def __init__(self, url_or_path: str, *, write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
                 **settings: Any) -> None:
        if not url_or_path:
            raise ValueError("a serial port path or URL is required")
        self.url = str(url_or_path)
        self.settings = dict(settings)
        self.write_timeout = write_timeout
        self._port: Any = None
        self._timeout: float | None = None
        self._fd: int | None = None                    # descriptor to select on, if any
        self._wake: tuple[int, int] | None = None      # (read end, write end) of cancel pipe
        self.shared_reading: SharedReading | None = None

    @property
    def is_url(self) -> bool:
        """True for ``scheme://...`` URLs, False for device paths."""
        return "://" in self.url

    @property
    def is_open(self) -> bool:
        return self._port is not None

    def describe(self) -> str:
        line = self.line_settings()
        return f"serial {self.url} {line}" if line else f"serial {self.url}"

    def line_settings(self) -> str | None:
        s = self.settings
        if "baudrate" not in s:
            return None
        stop = s.get("stopbits", 1)
        stop_text = "1.5" if stop == 1.5 else str(int(stop))
        return f"{s['baudrate']} {s.get('bytesize', 8)}{s.get('parity', 'N')}{stop_text}"

    def open(self) -> None:
        if self._port is not None:
            raise TransportError(f"{self.describe()}: already open")
        try:
            import serial  # noqa: PLC0415 - optional dependency, imported on use
        except ImportError as exc:
            raise TransportError(f"cannot open {self.url}: pyserial is not installed") from exc
        except OSError as exc:  # its files could not be read: no descriptor left (EMFILE), say
            raise TransportError(f"cannot open serial port {self.url}: {_open_failure(exc, self.url)}") from exc
        kwargs = dict(self.settings)
        if not self.is_url:
            kwargs.setdefault("exclusive", True)
        # Start with a short read timeout; read() changes it only when asked for another.
        self._timeout = 0.0
        try:
            port = serial.serial_for_url(self.url, timeout=self._timeout,
                                         write_timeout=self.write_timeout, **kwargs)
        except (serial.SerialException, OSError, ValueError, _TermiosError) as exc:
            raise TransportError(f"cannot open serial port {self.url}: {_open_failure(exc, self.url)}") from exc
        if type(port).__module__ in _SELECTABLE:
            try:
                self._fd = port.fileno()
                wake_r, wake_w = os.pipe()
            except Exception:  # noqa: BLE001 - fall back to pyserial's own timeout
                self._fd = None
            else:
                os.set_blocking(wake_r, False)
                os.set_blocking(wake_w, False)
                self._wake = (wake_r, wake_w)
                if SharedReading.available():
                    try:
                        self.shared_reading = SharedReading(self._fd, wake_r, self.url)
                    except OSError:  # out of descriptors: the reader reads through read() alone
                        self.shared_reading = None
        self._port = port

    def close(self) -> None:
        port, self._port = self._port, None
        wake, self._wake = self._wake, None
        shared, self.shared_reading = self.shared_reading, None
        self._fd = None
        if shared is not None:
            shared.close()
        if port is not None:
            try:
                port.close()
            except Exception:  # noqa: BLE001 - close never raises (contract)
                pass
        for fd in wake or ():
            try:
                os.close(fd)
            except OSError:
                pass

    def cancel_read(self) -> None:
        wake = self._wake
        if wake is not None:
            try:
                os.write(wake[1], b"x")
            except OSError:  # pipe full (already woken) or closed
                pass
            return
        port = self._port
        if port is None:
            return
        try:
            port.cancel_read()
        except Exception:  # noqa: BLE001 - unsupported by some URL handlers; harmless
            pass

    def read(self, timeout: float) -> bytes:
        port = self._port
        if port is None:
            self._require_open()
        timeout = max(0.0, float(timeout))
        try:
            if self._fd is not None:
                return self._read_selectable(port, timeout)
            if timeout != self._timeout:
                port.timeout = timeout
                self._timeout = timeout
            data = port.read(port.in_waiting or 1)
            while data and len(data) < MAX_READ:
                waiting = port.in_waiting
                more = port.read(min(waiting, MAX_READ - len(data))) if waiting else b""
                if not more:
                    break
                data += more
            return bytes(data)
        except TransportError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped below
            raise self._map_error("read", exc) from exc

    def _read_selectable(self, port: Any, timeout: float) -> bytes:
        wake = self._wake
        assert wake is not None and self._fd is not None
        ready, _, _ = select.select([self._fd, wake[0]], [], [], timeout)
        if wake[0] in ready:
            try:
                os.read(wake[0], 4096)
            except OSError:
                pass
            return b""
        if not ready:
            return b""
        # The descriptor is non-blocking: one read returns what is there. A closed far end
        # shows as readable with no data (or EIO on a pty): the device is gone.
        try:
            data = os.read(self._fd, MAX_READ)
        except (BlockingIOError, InterruptedError):
            return b""
        if not data:
            raise DeviceDisconnected(f"{self.url}: closed at the device's end")
        return data

    def write(self, data: bytes) -> None:
        port = self._port
        if port is None:
            self._require_open()
        try:
            written = port.write(data)
        except Exception as exc:  # noqa: BLE001 - mapped below
            raise self._map_error("write", exc) from exc
        if written is not None and written != len(data):
            raise TransportTimeout(f"{self.url}: wrote {written} of {len(data)} bytes")

    def _map_error(self, what: str, exc: BaseException) -> TransportError:
        import serial  # noqa: PLC0415 - already imported by open()

        if self._port is None:  # closed by another thread (the link's teardown) during the call:
            # pyserial then fails in its own words (a select on no descriptor), which say nothing
            return DeviceDisconnected(f"{self.url}: the line was closed during the {what}")
        if isinstance(exc, serial.SerialTimeoutException):
            return TransportTimeout(f"{self.url}: {what} timed out")
        if isinstance(exc, (serial.SerialException, OSError)):
            return DeviceDisconnected(f"{self.url}: device gone ({os_error_words(exc)})")
        return TransportError(f"{self.url}: {what} failed ({os_error_words(exc)})")


def _open_failure(exc: BaseException, path: str) -> str:
    """Why opening the port at ``path`` failed, in a few plain words (``"no such device"``),
    without the nested errno text pyserial builds."""
    if isinstance(exc, _TermiosError):  # (errno, text), as an OSError carries them
        exc = OSError(*exc.args)
    code = getattr(exc, "errno", None)
    if code is None and "Inappropriate ioctl" in str(exc):  # pyserial's "Could not configure port"
        code = errno.ENOTTY
    if code in (errno.EACCES, errno.EPERM):
        group = _group_of(path)
        if group == "root":  # joining it is no advice: a udev rule gives the port to a group
            return "permission denied (the port is root's: a udev rule gives it to group shoectl, docs/udev.md)"
        return f"permission denied (is this user in group {group}? docs/udev.md)"
    return _OPEN_FAILURES[code] if code in _OPEN_FAILURES else os_error_words(exc)


def _group_of(path: str) -> str:
    """The group that owns the port at ``path`` (the one a user needs; ``shoectl`` for a port the
    shipped udev rules made, often ``dialout`` for a plain ``/dev/ttyS0``: an integrator's review
    was sent to group shoectl for one), or ``shoectl`` when it cannot be told."""
    import grp  # noqa: PLC0415 - only on this failure

    try:
        gid = os.stat(path).st_gid
        return grp.getgrgid(gid).gr_name
    except (OSError, KeyError, ValueError):
        return "shoectl"
