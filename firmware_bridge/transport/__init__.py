"""Byte transports to devices: serial lines (pyserial URLs, ptys, TCP) and native USB (pyusb).

- ``Transport`` (``base``): the contract every transport keeps; ``read(timeout)`` returns ``b""``
  on a quiet line (never a timeout error), disconnects raise ``DeviceDisconnected``.
- ``SerialTransport`` (``serial``): ``serial.serial_for_url`` with pyserial settings.
- ``UsbTransport`` (``usb``): pyusb find/configure/claim, bulk or interrupt endpoints.
- ``open_transport(profile, port=None)``: the transport a device profile describes (not opened).

Neither pyserial nor pyusb is imported until a transport is opened.
"""
from __future__ import annotations

from typing import Any

from .base import Transport
from .serial import SerialTransport
from .usb import UsbTransport

__all__ = ["SerialTransport", "Transport", "UsbTransport", "open_transport"]


def open_transport(profile: Any, port: str | None = None, *, usb_backend: Any = None) -> Transport:
    """Build (without opening) the transport for ``profile``.

    Args:
        profile: a ``firmware_bridge.profiles.Profile``.
        port: for a serial profile, the device path or pyserial URL (required: a profile names
            a device model, not where it is plugged in; udev gives it a stable path). For a USB
            profile, ``port`` must be ``None``: the device is found by VID/PID/serial number.
        usb_backend: a pyusb ``IBackend`` for USB profiles (``None``: libusb).

    Raises:
        ValueError: a serial profile without ``port``, a USB profile with one, or an unknown
            transport type.
    """
    spec = profile.transport
    kind = getattr(spec, "type", None)
    if kind == "serial":
        if not port:
            raise ValueError(f"profile {profile.name!r} is a serial device: give its port "
                             "(a device path or a pyserial URL)")
        return SerialTransport(port, **spec.pyserial_kwargs())
    if kind == "usb":
        if port:
            raise ValueError(f"profile {profile.name!r} is a USB device, found by "
                             f"{spec.vid:04x}:{spec.pid:04x}: it takes no port ({port!r})")
        return UsbTransport(spec, backend=usb_backend)
    raise ValueError(f"profile {getattr(profile, 'name', '?')!r}: unknown transport {kind!r}")
