"""``EmulatedUsbBackend``: an in-process pyusb backend (``usb.backend.IBackend``) for one device.

These machines have no kernel USB, so the emulated USB device lives inside pyusb: pass the backend
to ``usb.core.find(backend=...)`` and pyusb's real find / set_configuration / claim / write / read
/ ctrl_transfer code runs against it. (pyftdi's ``tests/backend/usbvirt.py`` uses the same
design.)

Descriptors come from the profile's ``[transport]`` (type ``usb``), built by ``usb_descriptors``:
one configuration with one vendor-specific interface holding an OUT and an IN endpoint, and string
descriptors (served by GET_DESCRIPTOR through ``ctrl_transfer``, language 0x0409). Every field
pyusb reads is present.

Transfers:
- a write to the OUT endpoint feeds the device (``receive_data``) and returns the byte count;
- a read from the IN endpoint ticks the device and fills the passed array with up to its length
  of the device's output, returning the count; with nothing to send within ``timeout`` ms it
  raises ``usb.core.USBTimeoutError`` (``timeout`` 0 waits forever, as in libusb);
- line faults (corrupt / drop / dup / delay) apply to the device's frames as on the serial servers,
  and with ``both-ways=1`` corrupt / drop / dup to the host's bytes too.

``unplug()``: every call on an open handle raises ``usb.core.USBError`` with errno 19 (ENODEV) and
``enumerate_devices`` (so ``find``) stops listing the device. ``replug()`` lists it again at a new
address; handles opened before the unplug stay dead (find it again), as with libusb. The device
itself is self-powered: an unplug loses the link, not its session or events. Fault
``unplug-every=T`` / ``unplug-for=T`` drive this from the clock, checked on every call.

Thread safety: a reader thread and a writer thread may use the device at once: transfers and
unplug take ``device.lock``; a read waiting for data waits without holding it, until the host
writes, the device emits an event, an unplug, or the device's next due (``clock.tick_wait``: a
device waiting on a condition is ticked every ``poll_s``, one with nothing due once a second).
"""
from __future__ import annotations

import errno as errno_mod
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import usb.core
import usb.util
from usb.backend import IBackend

from firmware_bridge.profiles import UsbTransportSpec

from .clock import Clock, monotonic, tick_wait
from .device import EmulatedDevice
from .faults import FaultSpec, LineFaults
from .usb_descriptors import UsbDescriptor, VirtualUsbDevice, build_virtual_device, descriptor_bytes

__all__ = ["EmulatedUsbBackend", "UsbDescriptor"]  # UsbDescriptor lives in usb_descriptors
_LIBUSB_ERROR_NO_DEVICE = -4
_LIBUSB_ERROR_NOT_FOUND = -5
_LIBUSB_ERROR_TIMEOUT = -7
_LIBUSB_ERROR_PIPE = -9
_GET_STATUS, _GET_DESCRIPTOR, _GET_CONFIGURATION, _SET_CONFIGURATION = 0x00, 0x06, 0x08, 0x09
_GET_INTERFACE, _SET_INTERFACE = 0x0A, 0x0B


@dataclass(eq=False)
class _Handle:
    dev: VirtualUsbDevice
    configuration: int
    claimed: set[int] = field(default_factory=set)


def _no_device() -> usb.core.USBError:
    return usb.core.USBError("No such device (it may have been disconnected)",
                             _LIBUSB_ERROR_NO_DEVICE, errno_mod.ENODEV)


def _pipe_error(text: str = "Pipe error") -> usb.core.USBError:
    return usb.core.USBError(text, _LIBUSB_ERROR_PIPE, errno_mod.EPIPE)


def _fill(buff: Any, data: bytes | bytearray) -> int:
    """Copy as much of ``data`` as fits into the array ``buff``; return the byte count."""
    view = memoryview(buff).cast("B")
    n = min(len(view), len(data))
    view[:n] = data[:n]
    return n


class EmulatedUsbBackend(IBackend):
    """A pyusb backend holding one emulated USB device.

    Args:
        device: the emulated device; its profile's transport must be USB.
        faults: line faults and unplug-every for this link.
        clock: for timeouts and unplug-every (seconds).
        bus, port_numbers: where the device appears; ``address`` starts at ``first_address`` and
            goes up by one on every replug (a re-enumeration).
        poll_s: how often a waiting read ticks a device that waits on a condition.
    """

    def __init__(self, device: EmulatedDevice, *, faults: FaultSpec | None = None,
                 clock: Clock = monotonic, bus: int = 1, port_numbers: tuple[int, ...] = (1,),
                 first_address: int = 2, poll_s: float = 0.001) -> None:
        super().__init__()
        spec = device.profile.transport
        if not isinstance(spec, UsbTransportSpec):
            raise ValueError(f"profile {device.profile.name!r} is not a USB device "
                             f"(transport {spec.type})")
        self.device = device
        self.spec = spec
        self.faults = faults or FaultSpec()
        self.clock = clock
        self.bus = bus
        self.port_numbers = tuple(port_numbers)
        self.poll_s = poll_s
        self.line = LineFaults.from_spec(self.faults, stream=0)
        self.host_line = self.faults.host_line()
        self.unplugs = 0
        self._address = first_address
        self._generation = 1
        self._plugged = True
        self._auto_unplugged = False
        self._replug_at: float | None = None
        self._next_unplug = (clock() + self.faults.unplug_every
                             if self.faults.unplug_every > 0 else None)
        self._due: deque[tuple[float, bytes]] = deque()
        self._pending = bytearray()
        self._woken = threading.Event()  # bytes written, an event, an unplug: since a waiting read last looked
        self._dev = self._build()
        device.hooks.add_wake_listener(self._woken.set)

    # --- plugging ------------------------------------------------------------------------------

    @property
    def plugged(self) -> bool:
        self._auto_plug()
        return self._plugged

    @property
    def address(self) -> int:
        return self._address

    def unplug(self) -> None:
        """Pull the device: open handles die (errno 19), ``find`` no longer lists it."""
        with self.device.lock:
            self._unplug(auto=False)

    def replug(self) -> None:
        """Plug it back in at a new address (a fresh enumeration)."""
        if self._plugged:
            return
        self._plugged = True
        self._auto_unplugged = False
        self._address = self._address % 127 + 1
        self._generation += 1
        self._dev = self._build()

    def _unplug(self, auto: bool) -> None:
        if not self._plugged:
            return
        self._plugged = False
        self._auto_unplugged = auto
        self._due.clear()
        self._pending.clear()
        self.unplugs += 1
        self._woken.set()

    def _auto_plug(self) -> None:
        every = self.faults.unplug_every
        if every <= 0:
            return
        now = self.clock()
        with self.device.lock:
            if self._plugged and self._next_unplug is not None and now >= self._next_unplug:
                self._unplug(auto=True)
                self._replug_at = now + self.faults.unplug_for
            elif (not self._plugged and self._auto_unplugged and self._replug_at is not None
                  and now >= self._replug_at):
                self.replug()
                self._next_unplug = now + every

    def _live(self, handle: _Handle) -> _Handle:
        self._auto_plug()
        if not self._plugged or handle.dev.generation != self._generation:
            raise _no_device()
        return handle

    def _build(self) -> VirtualUsbDevice:
        return build_virtual_device(self.spec, generation=self._generation, bus=self.bus,
                                    address=self._address, port_numbers=self.port_numbers)

    # --- IBackend: enumeration and descriptors -------------------------------------------------

    def enumerate_devices(self):  # type: ignore[no-untyped-def]
        self._auto_plug()
        if self._plugged:
            yield self._dev

    def get_parent(self, dev: VirtualUsbDevice) -> None:
        return None

    def get_device_descriptor(self, dev: VirtualUsbDevice) -> UsbDescriptor:
        return dev.device

    def get_configuration_descriptor(self, dev: VirtualUsbDevice, config: int) -> UsbDescriptor:
        if config != 0:
            raise IndexError(f"no configuration index {config}")
        return dev.configuration

    def get_interface_descriptor(self, dev: VirtualUsbDevice, intf: int, alt: int,
                                 config: int) -> UsbDescriptor:
        if (config, intf, alt) != (0, 0, 0):
            raise IndexError(f"no interface index {intf} alt {alt} in configuration {config}")
        return dev.interface

    def get_endpoint_descriptor(self, dev: VirtualUsbDevice, ep: int, intf: int, alt: int,
                                config: int) -> UsbDescriptor:
        if (config, intf, alt) != (0, 0, 0) or not 0 <= ep < len(dev.endpoints):
            raise IndexError(f"no endpoint index {ep}")
        return dev.endpoints[ep]

    # --- IBackend: handles ---------------------------------------------------------------------

    def open_device(self, dev: VirtualUsbDevice) -> _Handle:
        self._auto_plug()
        if not self._plugged or dev.generation != self._generation:
            raise _no_device()
        # The kernel configures a freshly enumerated device with its first configuration.
        return _Handle(dev, dev.configuration.bConfigurationValue)

    def close_device(self, dev_handle: _Handle) -> None:
        dev_handle.claimed.clear()  # never fails, even after an unplug (as libusb_close)

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        handle = self._live(dev_handle)
        if config_value not in (0, handle.dev.configuration.bConfigurationValue):
            raise usb.core.USBError("Entity not found", _LIBUSB_ERROR_NOT_FOUND, errno_mod.ENOENT)
        handle.configuration = config_value

    def get_configuration(self, dev_handle: _Handle) -> int:
        return self._live(dev_handle).configuration

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        handle = self._live(dev_handle)
        if intf != handle.dev.interface.bInterfaceNumber or altsetting != 0:
            raise usb.core.USBError("Entity not found", _LIBUSB_ERROR_NOT_FOUND, errno_mod.ENOENT)

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        handle = self._live(dev_handle)
        if intf != handle.dev.interface.bInterfaceNumber:
            raise usb.core.USBError("Entity not found", _LIBUSB_ERROR_NOT_FOUND, errno_mod.ENOENT)
        handle.claimed.add(intf)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        dev_handle.claimed.discard(intf)
        self._live(dev_handle)

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        self._live(dev_handle)

    def reset_device(self, dev_handle: _Handle) -> None:
        self._live(dev_handle)

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        self._live(dev_handle)
        return False

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        self._live(dev_handle)

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        self._live(dev_handle)

    # --- IBackend: transfers -------------------------------------------------------------------

    def ctrl_transfer(self, dev_handle: _Handle, bmRequestType: int, bRequest: int, wValue: int,
                      wIndex: int, data: Any, timeout: int) -> int:
        handle = self._live(dev_handle)
        device_to_host = bool(bmRequestType & usb.util.CTRL_IN)
        if bmRequestType & 0x60 != usb.util.CTRL_TYPE_STANDARD:
            raise _pipe_error()  # the device defines no class or vendor requests
        if device_to_host:
            if bRequest == _GET_DESCRIPTOR:
                reply = descriptor_bytes(handle.dev, wValue >> 8, wValue & 0xFF, wIndex)
                if reply is None:
                    raise _pipe_error()
            elif bRequest == _GET_CONFIGURATION:
                reply = bytes([handle.configuration])
            elif bRequest == _GET_STATUS:
                reply = bytes([0x01, 0x00])  # self-powered
            elif bRequest == _GET_INTERFACE:
                reply = bytes([0])
            else:
                raise _pipe_error()
            return _fill(data, reply)
        if bRequest == _SET_CONFIGURATION:
            self.set_configuration(handle, wValue & 0xFF)
            return 0
        if bRequest == _SET_INTERFACE:
            self.set_interface_altsetting(handle, wIndex & 0xFF, wValue)
            return 0
        raise _pipe_error()

    def bulk_write(self, dev_handle: _Handle, ep: int, intf: int, data: Any, timeout: int) -> int:
        return self._write(dev_handle, ep, intf, data, "bulk")

    def intr_write(self, dev_handle: _Handle, ep: int, intf: int, data: Any, timeout: int) -> int:
        return self._write(dev_handle, ep, intf, data, "interrupt")

    def bulk_read(self, dev_handle: _Handle, ep: int, intf: int, buff: Any, timeout: int) -> int:
        return self._read(dev_handle, ep, intf, buff, timeout, "bulk")

    def intr_read(self, dev_handle: _Handle, ep: int, intf: int, buff: Any, timeout: int) -> int:
        return self._read(dev_handle, ep, intf, buff, timeout, "interrupt")

    def _check_endpoint(self, handle: _Handle, ep: int, intf: int, transfer: str,
                        expected: int) -> None:
        if handle.configuration == 0:
            raise usb.core.USBError("Entity not found", _LIBUSB_ERROR_NOT_FOUND, errno_mod.ENOENT)
        if ep != expected or transfer != self.spec.transfer or intf != self.spec.interface:
            raise _pipe_error(f"no {transfer} endpoint {ep:#04x} on interface {intf}")

    def _write(self, dev_handle: _Handle, ep: int, intf: int, data: Any, transfer: str) -> int:
        handle = self._live(dev_handle)
        self._check_endpoint(handle, ep, intf, transfer, self.spec.endpoint_out)
        payload = bytes(data)
        device = self.device
        with device.lock:
            device.receive_data(payload if self.host_line is None else self.host_line.apply_received(payload))
            device.tick()
            self._collect(device.outgoing())
        self._woken.set()
        return len(payload)

    def _read(self, dev_handle: _Handle, ep: int, intf: int, buff: Any, timeout: int,
              transfer: str) -> int:
        handle = self._live(dev_handle)
        self._check_endpoint(handle, ep, intf, transfer, self.spec.endpoint_in)
        deadline = None if timeout == 0 else self.clock() + timeout / 1000
        device = self.device
        while True:
            with device.lock:
                device.tick()
                self._collect(device.outgoing())
                self._release_due()
                if self._pending:
                    n = _fill(buff, self._pending)
                    del self._pending[:n]
                    return n
                now = self.clock()
                wait = tick_wait(device.next_due(now), now, self.poll_s,
                                 frame_due=self._due[0][0] if self._due else None,
                                 on_the_clock=self.faults.unplug_every > 0)
            if deadline is not None:
                if now >= deadline:
                    raise usb.core.USBTimeoutError("Operation timed out", _LIBUSB_ERROR_TIMEOUT,
                                                   errno_mod.ETIMEDOUT)
                wait = min(wait, deadline - now)
            self._woken.wait(wait)
            self._woken.clear()  # a wake before this line is seen by the look that follows
            self._live(handle)

    def _collect(self, frames: list[bytes]) -> None:
        if frames:
            self._due.extend(self.line.schedule(frames, self.clock() + self.faults.delay))

    def _release_due(self) -> None:
        now = self.clock()
        while self._due and self._due[0][0] <= now:
            self._pending += self._due.popleft()[1]
