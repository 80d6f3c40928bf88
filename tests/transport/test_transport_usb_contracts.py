"""UsbTransport contracts no other test held (found by mutation testing of transport/usb.py):
the interface is found by its number, a bulk read asks for BULK_READ_PACKETS packets, and EPERM
is a permission error like EACCES."""
from __future__ import annotations

import errno
from typing import Any

import pytest
import usb.core

from firmware_bridge.errors import DeviceDisconnected, TransportError
from firmware_bridge.transport import UsbTransport
from firmware_bridge.transport.usb import BULK_READ_PACKETS, PERMISSION_WORDS

from .test_transport_usb import Config, Endpoint, StandInDevice, finder, spec, util  # noqa: F401 - util is a fixture


class TwoInterfaces(StandInDevice):
    """A device whose interface 0 is another function's; the protocol is on interface 2."""

    def get_active_configuration(self) -> Config:
        return Config({(0, 0): [Endpoint(0x83), Endpoint(0x03)], (2, 0): self.endpoints})


def test_the_interface_is_found_by_its_number_not_its_place(util: Any) -> None:
    dev = TwoInterfaces()
    with UsbTransport(spec(interface=2), find=finder(dev)) as t:
        assert t.is_open
    util["claim_interface"].assert_called_once_with(dev, 2)
    with pytest.raises(TransportError, match="has no interface number 1"):
        UsbTransport(spec(interface=1), find=finder(TwoInterfaces())).open()


def test_a_bulk_read_asks_for_many_packets(util: Any) -> None:
    """"read(timeout) asks for a whole number of packets ... a bulk read ends early at a short
    packet, so one read returns one burst": BULK_READ_PACKETS of them (4 KiB at 64 bytes)."""
    dev = StandInDevice(endpoints=[Endpoint(0x81, size=512), Endpoint(0x01, size=512)])
    with UsbTransport(spec(), find=finder(dev)) as t:
        t.read(0.01)
    assert [c[2] for c in dev.calls if c[0] == "read"] == [512 * BULK_READ_PACKETS]


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM])
def test_eacces_and_eperm_are_permission_errors_pointing_at_udev(util: Any, code: int) -> None:
    util["claim_interface"].side_effect = usb.core.USBError("Operation not permitted", errno=code)
    with pytest.raises(TransportError) as info:
        UsbTransport(spec(), find=finder(StandInDevice())).open()
    assert not isinstance(info.value, DeviceDisconnected)
    assert str(info.value).endswith(f": open failed: {PERMISSION_WORDS}")
