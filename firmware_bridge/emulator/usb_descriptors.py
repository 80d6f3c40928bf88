"""The USB descriptors of an emulated device, as pyusb reads them and as GET_DESCRIPTOR sends them.

Contract:
- ``build_virtual_device(spec, generation=, bus=, address=, port_numbers=)`` -> a
  ``VirtualUsbDevice``: the descriptors of one plugged-in instance, from the profile's
  ``[transport]`` (a ``UsbTransportSpec``): one configuration (``configuration``, self-powered)
  with one vendor-specific interface (``interface``) holding an OUT and an IN endpoint
  (``endpoint_out`` / ``endpoint_in``, ``transfer`` bulk or interrupt, ``max_packet``); string
  descriptors 1-3 are ``manufacturer``, ``product`` and ``serial_number``. Every field pyusb reads
  is present: ``bus``, ``address``, ``port_number``, ``port_numbers``, ``speed``,
  ``extra_descriptors``, and ``bRefresh`` / ``bSynchAddress`` on endpoints. ``generation`` tells
  one enumeration from the next (a replug makes a new one).
- ``descriptor_bytes(dev, kind, index, langid)`` -> the bytes of a standard GET_DESCRIPTOR
  (device, configuration with its interface and endpoints, string in language 0x0409 or the
  language list), or ``None`` when the device has no such descriptor (the backend stalls).
- Pure: builds data, touches no device and no clock.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import usb.util

from firmware_bridge.profiles import UsbTransportSpec

__all__ = [
    "LANGID_EN_US", "UsbDescriptor", "VirtualUsbDevice", "build_virtual_device", "descriptor_bytes",
]

LANGID_EN_US = 0x0409


class UsbDescriptor:
    """A descriptor as pyusb reads it: plain attributes (``_set_attr`` uses ``getattr``)."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        return f"UsbDescriptor({self.__dict__!r})"


@dataclass(eq=False)
class VirtualUsbDevice:
    """What ``enumerate_devices`` yields: the descriptors of one plugged-in instance."""

    generation: int
    device: UsbDescriptor
    configuration: UsbDescriptor
    interface: UsbDescriptor
    endpoints: list[UsbDescriptor]
    strings: dict[int, str] = field(default_factory=dict)


def _speed_for(max_packet: int) -> int:
    if max_packet >= 1024:
        return usb.util.SPEED_SUPER
    if max_packet >= 512:
        return usb.util.SPEED_HIGH
    return usb.util.SPEED_FULL


def build_virtual_device(spec: UsbTransportSpec, *, generation: int, bus: int, address: int,
                         port_numbers: tuple[int, ...]) -> VirtualUsbDevice:
    """The descriptors of one enumeration of a device with this transport (module docstring)."""
    strings = {1: spec.manufacturer, 2: spec.product}
    if spec.serial_number:
        strings[3] = spec.serial_number
    kind = usb.util.ENDPOINT_TYPE_BULK if spec.transfer == "bulk" else usb.util.ENDPOINT_TYPE_INTR
    interval = 0 if spec.transfer == "bulk" else 1
    endpoints = [
        UsbDescriptor(bLength=7, bDescriptorType=usb.util.DESC_TYPE_ENDPOINT,
                      bEndpointAddress=endpoint, bmAttributes=kind,
                      wMaxPacketSize=spec.max_packet, bInterval=interval, bRefresh=0,
                      bSynchAddress=0, extra_descriptors=[])
        for endpoint in (spec.endpoint_out, spec.endpoint_in)
    ]
    interface = UsbDescriptor(bLength=9, bDescriptorType=usb.util.DESC_TYPE_INTERFACE,
                              bInterfaceNumber=spec.interface, bAlternateSetting=0,
                              bNumEndpoints=len(endpoints), bInterfaceClass=0xFF,
                              bInterfaceSubClass=0x00, bInterfaceProtocol=0x00,
                              iInterface=0, extra_descriptors=[])
    configuration = UsbDescriptor(bLength=9, bDescriptorType=usb.util.DESC_TYPE_CONFIG,
                                  wTotalLength=9 + 9 + 7 * len(endpoints), bNumInterfaces=1,
                                  bConfigurationValue=spec.configuration, iConfiguration=0,
                                  bmAttributes=0xC0, bMaxPower=50, extra_descriptors=[])
    device = UsbDescriptor(bLength=18, bDescriptorType=usb.util.DESC_TYPE_DEVICE,
                           bcdUSB=0x0200, bDeviceClass=0x00, bDeviceSubClass=0x00,
                           bDeviceProtocol=0x00, bMaxPacketSize0=64, idVendor=spec.vid,
                           idProduct=spec.pid, bcdDevice=0x0100, iManufacturer=1, iProduct=2,
                           iSerialNumber=3 if spec.serial_number else 0, bNumConfigurations=1,
                           bus=bus, address=address,
                           port_number=port_numbers[-1] if port_numbers else None,
                           port_numbers=port_numbers or None,
                           speed=_speed_for(spec.max_packet))
    return VirtualUsbDevice(generation, device, configuration, interface, endpoints, strings)


def descriptor_bytes(dev: VirtualUsbDevice, kind: int, index: int, langid: int) -> bytes | None:
    """The GET_DESCRIPTOR answer for (``kind``, ``index``, ``langid``), ``None`` if there is none."""
    if kind == usb.util.DESC_TYPE_DEVICE and index == 0:
        d = dev.device
        return bytes([18, 1]) + d.bcdUSB.to_bytes(2, "little") + bytes(
            [d.bDeviceClass, d.bDeviceSubClass, d.bDeviceProtocol, d.bMaxPacketSize0]) + \
            d.idVendor.to_bytes(2, "little") + d.idProduct.to_bytes(2, "little") + \
            d.bcdDevice.to_bytes(2, "little") + bytes(
            [d.iManufacturer, d.iProduct, d.iSerialNumber, d.bNumConfigurations])
    if kind == usb.util.DESC_TYPE_CONFIG and index == 0:
        c, i = dev.configuration, dev.interface
        out = bytes([9, 2]) + c.wTotalLength.to_bytes(2, "little") + bytes(
            [c.bNumInterfaces, c.bConfigurationValue, 0, c.bmAttributes, c.bMaxPower])
        out += bytes([9, 4, i.bInterfaceNumber, 0, i.bNumEndpoints, i.bInterfaceClass,
                      i.bInterfaceSubClass, i.bInterfaceProtocol, 0])
        for e in dev.endpoints:
            out += bytes([7, 5, e.bEndpointAddress, e.bmAttributes]) + \
                e.wMaxPacketSize.to_bytes(2, "little") + bytes([e.bInterval])
        return out
    if kind == usb.util.DESC_TYPE_STRING:
        if index == 0:
            return bytes([4, 3]) + LANGID_EN_US.to_bytes(2, "little")
        text = dev.strings.get(index)
        if text is None or langid != LANGID_EN_US:
            return None
        body = text.encode("utf-16-le")
        return bytes([2 + len(body), 3]) + body
    return None
