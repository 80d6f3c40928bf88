"""``UsbTransport``: a native USB device through pyusb (one interface, one IN and one OUT endpoint).

``open()``:

1. ``find(find_all=True, idVendor=vid, idProduct=pid, backend=backend)``; when the spec names a
   serial number, the first device whose ``serial_number`` string matches (a device whose string
   cannot be read does not match). None found: ``DeviceDisconnected``, saying so of the units whose
   string could not be read for want of permission (the one named before the udev rules apply, or
   a spare the rules, which match the serial, do not give this user).
2. If a kernel driver is bound to the interface, detach it (``NotImplementedError`` and
   ``USBError`` from backends that cannot tell or cannot detach are tolerated; the driver is
   re-attached by ``close()`` if it was detached here).
3. ``set_configuration(spec.configuration)``, ``usb.util.claim_interface``.
4. Check that the interface (found by its number) has the spec's endpoints, in the right direction and of the spec's
   transfer type (bulk or interrupt); ``TransportError`` naming the endpoint otherwise.

``read(timeout)`` asks for a whole number of packets (pyusb needs a length >= ``max_packet``;
a bulk read ends early at a short packet, so one read returns one burst). ``USBTimeoutError`` is
"no data" (``b""``). ``close()`` releases the interface and disposes of pyusb's resources.

Error mapping: ``USBError`` with errno 19 (ENODEV) or "No such device" -> ``DeviceDisconnected``;
``USBTimeoutError`` on write -> ``TransportTimeout``; access denied -> ``TransportError`` pointing at
the udev rules (``PERMISSION_WORDS``); any other ``USBError`` -> ``TransportError``;
no libusb backend (``NoBackendError``) or no pyusb -> ``TransportError``.

pyusb is imported by ``open()``; ``find`` and ``backend`` are injectable (the emulator's
in-process ``IBackend``, or a stand-in for unit tests).
"""
from __future__ import annotations

import errno as _errno
import os
import threading
from collections.abc import Callable
from typing import Any

from firmware_bridge.errors import DeviceDisconnected, TransportError, TransportTimeout, os_error_words

from .base import Transport

__all__ = ["NO_LIBUSB", "PERMISSION_WORDS", "UsbTransport", "access_denied"]

DEFAULT_WRITE_TIMEOUT_MS = 1000
NO_LIBUSB = "no libusb backend (install libusb: apt install libusb-1.0-0)"  # pyusb finds none
BULK_READ_PACKETS = 64  # a bulk read asks for up to 64 packets (4 KiB at 64-byte packets)
_ENDPOINT_IN = 0x80
_TYPE_BULK, _TYPE_INTERRUPT = 0x02, 0x03


def _is_gone(exc: BaseException) -> bool:
    """True for the errors pyusb raises when the device was unplugged."""
    return getattr(exc, "errno", None) == _errno.ENODEV or "no such device" in str(exc).lower()


# What this user may not do to a device node is the udev rules' business (docs/udev.md): a
# "device not found" or a bare "permission denied" sent integrators to cables and hubs.
PERMISSION_WORDS = "permission denied (is this user in group shoectl? a udev rule gives the device to it: docs/udev.md)"


def access_denied(dev: Any, exc: BaseException | None = None) -> bool:
    """Whether this user may not open ``dev``: ``exc`` says so (libusb's LIBUSB_ERROR_ACCESS,
    EACCES), or the device's node (``/dev/bus/usb/BBB/DDD``) is not this user's to read and write.
    pyusb turns a string it may not read into "no langid (permission issue, no string descriptors
    supported or device error)", which a device without strings gives too: the node tells them
    apart."""
    if exc is not None and (getattr(exc, "errno", None) in (_errno.EACCES, _errno.EPERM)
                            or "access denied" in str(exc).lower()):
        return True
    bus, address = getattr(dev, "bus", None), getattr(dev, "address", None)
    if not isinstance(bus, int) or not isinstance(address, int):
        return False
    node = f"/dev/bus/usb/{bus:03d}/{address:03d}"
    return os.path.exists(node) and not os.access(node, os.R_OK | os.W_OK)


class UsbTransport(Transport):
    """A USB device described by a profile's ``UsbTransportSpec``.

    Args:
        spec: vid, pid, serial_number, configuration, interface, endpoint_in, endpoint_out,
            transfer (``"bulk"`` / ``"interrupt"``), max_packet.
        backend: a ``usb.backend.IBackend`` (``None``: pyusb picks libusb).
        find: ``usb.core.find`` or a stand-in with the same signature.
        write_timeout_ms: how long a write may take before ``TransportTimeout``.
    """

    def __init__(self, spec: Any, *, backend: Any = None, find: Callable[..., Any] | None = None,
                 write_timeout_ms: int = DEFAULT_WRITE_TIMEOUT_MS) -> None:
        if spec.transfer not in ("bulk", "interrupt"):
            raise ValueError(f"transfer must be 'bulk' or 'interrupt', not {spec.transfer!r}")
        self.spec = spec
        self.backend = backend
        self._find = find
        self.write_timeout_ms = int(write_timeout_ms)
        self._dev: Any = None
        self._detached = False
        self._read_size = spec.max_packet
        self._writing = threading.Lock()  # a write and close(), one at a time (``write``)

    @property
    def is_open(self) -> bool:
        return self._dev is not None

    def describe(self) -> str:
        s = self.spec
        text = f"usb {s.vid:04x}:{s.pid:04x}"
        if s.serial_number:
            text += f" serial {s.serial_number}"
        return (f"{text} {s.transfer} out 0x{s.endpoint_out:02x} in 0x{s.endpoint_in:02x}"
                f" interface {s.interface}")

    # open / close

    def open(self) -> None:
        if self._dev is not None:
            raise TransportError(f"{self.describe()}: already open")
        try:
            import usb.core  # noqa: PLC0415 - optional dependency, imported on use
            import usb.util  # noqa: PLC0415
        except ImportError as exc:
            raise TransportError(f"cannot open {self.describe()}: pyusb is not installed") from exc
        except OSError as exc:  # its files could not be read: no descriptor left (EMFILE), say
            raise TransportError(f"cannot open {self.describe()}: {os_error_words(exc)}") from exc
        find = self._find or usb.core.find
        try:
            dev = self._locate(find)
        except usb.core.NoBackendError as exc:
            raise TransportError(f"cannot open {self.describe()}: {NO_LIBUSB}") from exc
        except usb.core.USBError as exc:
            raise self._map_error("find", exc, usb.core) from exc
        if dev is None:
            raise DeviceDisconnected(f"{self.describe()}: device not found")
        try:
            self._configure(dev, usb)
        except BaseException:
            self._release(dev)
            raise
        self._dev = dev

    def _locate(self, find: Callable[..., Any]) -> Any:
        s = self.spec
        found = find(find_all=True, idVendor=s.vid, idProduct=s.pid, backend=self.backend)
        unread = 0  # units whose serial number this user may not read: the one named, or a spare
        for dev in found or ():
            if not s.serial_number:
                return dev
            try:
                serial = dev.serial_number
            except Exception as exc:  # noqa: BLE001 - unreadable string: not this device, as far as can be told
                unread += access_denied(dev, exc)
                continue
            if serial == s.serial_number:
                return dev
        if unread:  # not found among those it may read; said, as it may be one of the others
            units = f"{unread} units of its IDs" if unread > 1 else "a unit of its IDs"
            raise DeviceDisconnected(f"{self.describe()}: device not found; {units} could not be read by this user "
                                     f"(if it is that one: {PERMISSION_WORDS})")
        return None

    def _configure(self, dev: Any, usb: Any) -> None:
        s = self.spec
        self._detached = False
        try:
            if dev.is_kernel_driver_active(s.interface):
                dev.detach_kernel_driver(s.interface)
                self._detached = True
        except (NotImplementedError, usb.core.USBError) as exc:
            if isinstance(exc, usb.core.USBError) and _is_gone(exc):
                raise self._map_error("open", exc, usb.core) from exc
        try:
            dev.set_configuration(s.configuration)
            usb.util.claim_interface(dev, s.interface)
            # by its number (bInterfaceNumber), not its place among the configuration's interfaces
            # (pyusb's [(index, alt)]): a profile's `interface` is the number (an integrator review)
            intf = next((i for i in dev.get_active_configuration()
                         if i.bInterfaceNumber == s.interface and i.bAlternateSetting == 0), None)
        except usb.core.USBError as exc:
            raise self._map_error("open", exc, usb.core) from exc
        if intf is None:
            raise TransportError(f"{self.describe()}: configuration {s.configuration} has no interface number "
                                 f"{s.interface}")
        endpoints = {ep.bEndpointAddress: ep for ep in intf}
        wanted = _TYPE_BULK if s.transfer == "bulk" else _TYPE_INTERRUPT
        for address, inbound in ((s.endpoint_in, True), (s.endpoint_out, False)):
            ep = endpoints.get(address)
            if ep is None:
                raise TransportError(f"{self.describe()}: endpoint 0x{address:02x} not found on "
                                     f"interface {s.interface}")
            if bool(address & _ENDPOINT_IN) != inbound:
                raise TransportError(f"{self.describe()}: endpoint 0x{address:02x} is not an "
                                     f"{'IN' if inbound else 'OUT'} endpoint")
            if ep.bmAttributes & 0x03 != wanted:
                raise TransportError(f"{self.describe()}: endpoint 0x{address:02x} is not a "
                                     f"{s.transfer} endpoint")
        packet = max(s.max_packet, int(getattr(endpoints[s.endpoint_in], "wMaxPacketSize", 0)))
        self._read_size = packet * (BULK_READ_PACKETS if s.transfer == "bulk" else 1)

    def close(self) -> None:
        with self._writing:  # after a write in flight (at most its timeout), never under it
            dev, self._dev = self._dev, None
        if dev is not None:
            self._release(dev)

    def _release(self, dev: Any) -> None:
        try:
            import usb.util  # noqa: PLC0415
        except ImportError:  # pragma: no cover - open() would have failed first
            return
        for step in (lambda: usb.util.release_interface(dev, self.spec.interface),
                     lambda: dev.attach_kernel_driver(self.spec.interface) if self._detached
                     else None,
                     lambda: usb.util.dispose_resources(dev)):
            try:
                step()
            except Exception:  # noqa: BLE001 - close never raises; the device may be gone
                pass
        self._detached = False

    # I/O

    def read(self, timeout: float) -> bytes:
        dev = self._dev
        if dev is None:
            self._require_open()
        import usb.core  # noqa: PLC0415 - imported by open()

        timeout_ms = max(1, round(timeout * 1000))  # pyusb: 0 would mean "wait forever"
        try:
            data = dev.read(self.spec.endpoint_in, self._read_size, timeout_ms)
        except usb.core.USBTimeoutError:
            return b""
        except usb.core.USBError as exc:
            raise self._map_error("read", exc, usb.core) from exc
        return bytes(data)

    def write(self, data: bytes) -> None:
        # Under the lock close() takes: a write that took the device before a close and wrote
        # after it made pyusb open the disposed device again, claiming its interface behind the
        # transport (a review of descriptors across threads: a reconnect then found it busy).
        with self._writing:
            self._write(data)

    def _write(self, data: bytes) -> None:
        dev = self._dev
        if dev is None:
            self._require_open()
        import usb.core  # noqa: PLC0415 - imported by open()

        view = memoryview(data)
        while view:
            try:
                n = dev.write(self.spec.endpoint_out, bytes(view), self.write_timeout_ms)
            except usb.core.USBTimeoutError as exc:
                raise TransportTimeout(f"{self.describe()}: write timed out") from exc
            except usb.core.USBError as exc:
                raise self._map_error("write", exc, usb.core) from exc
            if not n:
                raise TransportError(f"{self.describe()}: write accepted no bytes")
            view = view[n:]

    def _map_error(self, what: str, exc: BaseException, core: Any) -> TransportError:
        if _is_gone(exc):
            return DeviceDisconnected(f"{self.describe()}: device gone ({os_error_words(exc)})")
        if isinstance(exc, core.USBTimeoutError):
            return TransportTimeout(f"{self.describe()}: {what} timed out")
        if access_denied(None, exc):
            return TransportError(f"{self.describe()}: {what} failed: {PERMISSION_WORDS}")
        return TransportError(f"{self.describe()}: {what} failed ({os_error_words(exc)})")
