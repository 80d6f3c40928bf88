"""UsbTransport: find/configure/claim, endpoints, and the error mapping.

This machine has no kernel USB, so these are unit tests with a stand-in
device object handed to the transport through its ``find`` argument; ``usb.util``'s
claim/release/dispose (which reach into a real device's backend context) are replaced with
pytest-mock at that edge. pyusb's own find/configure/read/write code running against a virtual
``IBackend`` is tested with the emulator's backend, not here.
"""
from __future__ import annotations

import errno
import sys
from array import array
from collections.abc import Callable
from typing import Any

import pytest
import usb.core
from pytest_mock import MockerFixture

from firmware_bridge.errors import DeviceDisconnected, TransportError, TransportTimeout
from firmware_bridge.profiles import UsbTransportSpec
from firmware_bridge.transport import UsbTransport

BULK, INTERRUPT = 0x02, 0x03


def spec(**overrides: Any) -> UsbTransportSpec:
    values: dict[str, Any] = dict(vid=0x1209, pid=0x0001, manufacturer="m", product="p",
                                  endpoint_in=0x81, endpoint_out=0x01, max_packet=64)
    values.update(overrides)
    return UsbTransportSpec(**values)


class Endpoint:
    def __init__(self, address: int, kind: int = BULK, size: int = 64) -> None:
        self.bEndpointAddress = address
        self.bmAttributes = kind
        self.wMaxPacketSize = size


class Interface(list):
    """An interface's endpoints, with its number and alternate setting."""

    def __init__(self, number: int, alt: int, endpoints: list[Endpoint]) -> None:
        super().__init__(endpoints)
        self.bInterfaceNumber, self.bAlternateSetting = number, alt


class Config:
    def __init__(self, interfaces: dict[tuple[int, int], list[Endpoint]]) -> None:
        self.interfaces = [Interface(number, alt, eps) for (number, alt), eps in interfaces.items()]

    def __iter__(self):
        return iter(self.interfaces)


class StandInDevice:
    """What UsbTransport uses of a ``usb.core.Device``, scripted."""

    def __init__(self, serial_number: str | None = "SN1", kernel_driver: bool | Exception = False,
                 endpoints: list[Endpoint] | None = None) -> None:
        self._serial = serial_number
        self.kernel_driver = kernel_driver
        self.endpoints = endpoints if endpoints is not None else [Endpoint(0x81), Endpoint(0x01)]
        self.calls: list[tuple[Any, ...]] = []
        self.inbox: list[bytes | Exception] = []
        self.write_results: list[int | Exception] = []
        self.written = bytearray()

    @property
    def serial_number(self) -> str:
        if self._serial is None:
            raise usb.core.USBError("Access denied (insufficient permissions)", errno=13)
        return self._serial

    def is_kernel_driver_active(self, interface: int) -> bool:
        self.calls.append(("is_kernel_driver_active", interface))
        if isinstance(self.kernel_driver, Exception):
            raise self.kernel_driver
        return self.kernel_driver

    def detach_kernel_driver(self, interface: int) -> None:
        self.calls.append(("detach_kernel_driver", interface))

    def attach_kernel_driver(self, interface: int) -> None:
        self.calls.append(("attach_kernel_driver", interface))

    def set_configuration(self, configuration: int) -> None:
        self.calls.append(("set_configuration", configuration))

    def get_active_configuration(self) -> Config:
        return Config({(0, 0): self.endpoints})

    def read(self, endpoint: int, size: int, timeout: int) -> array[int]:
        self.calls.append(("read", endpoint, size, timeout))
        item = self.inbox.pop(0) if self.inbox else usb.core.USBTimeoutError("Operation timed out",
                                                                             errno=110)
        if isinstance(item, Exception):
            raise item
        return array("B", item)

    def write(self, endpoint: int, data: bytes, timeout: int) -> int:
        self.calls.append(("write", endpoint, len(data), timeout))
        result = self.write_results.pop(0) if self.write_results else len(data)
        if isinstance(result, Exception):
            raise result
        self.written += data[:result]
        return result


def finder(*devices: StandInDevice) -> Callable[..., Any]:
    def find(find_all: bool = False, backend: Any = None, **match: Any) -> Any:
        find.calls.append(dict(match, find_all=find_all, backend=backend))  # type: ignore[attr-defined]
        return iter(devices)
    find.calls = []  # type: ignore[attr-defined]
    return find


@pytest.fixture
def util(mocker: MockerFixture) -> Any:
    """The usb.util functions that need a real device's backend context."""
    return {name: mocker.patch(f"usb.util.{name}")
            for name in ("claim_interface", "release_interface", "dispose_resources")}


def test_open_finds_configures_claims(util: Any) -> None:
    dev = StandInDevice()
    find = finder(dev)
    t = UsbTransport(spec(configuration=1, interface=0), backend="B", find=find)
    assert not t.is_open
    t.open()
    assert t.is_open
    assert find.calls == [{"idVendor": 0x1209, "idProduct": 0x0001, "find_all": True,  # type: ignore[attr-defined]
                           "backend": "B"}]
    assert ("set_configuration", 1) in dev.calls
    util["claim_interface"].assert_called_once_with(dev, 0)
    t.close()
    util["release_interface"].assert_called_once_with(dev, 0)
    util["dispose_resources"].assert_called_once_with(dev)
    assert not t.is_open
    t.close()  # idempotent


def test_read_returns_data_and_timeout_is_no_data(util: Any) -> None:
    dev = StandInDevice()
    dev.inbox = [b"\x03\x01\x02\x00"]
    with UsbTransport(spec(), find=finder(dev)) as t:
        assert t.read(0.25) == b"\x03\x01\x02\x00"
        assert t.read(0.0) == b""  # USBTimeoutError: a quiet line
    reads = [c for c in dev.calls if c[0] == "read"]
    assert reads[0][1] == 0x81
    assert reads[0][2] >= 64 and reads[0][2] % 64 == 0  # whole packets, at least max_packet
    assert reads[0][3] == 250
    assert reads[1][3] == 1  # never 0: pyusb would wait forever


def test_interrupt_endpoints_read_one_packet(util: Any) -> None:
    dev = StandInDevice(endpoints=[Endpoint(0x82, INTERRUPT, 32), Endpoint(0x02, INTERRUPT, 32)])
    with UsbTransport(spec(endpoint_in=0x82, endpoint_out=0x02, transfer="interrupt",
                           max_packet=32), find=finder(dev)) as t:
        t.read(0.01)
    assert [c[2] for c in dev.calls if c[0] == "read"] == [32]


@pytest.mark.parametrize("exc", [
    usb.core.USBError("No such device (it may have been disconnected)", errno=errno.ENODEV),
    usb.core.USBError("No such device (it may have been disconnected)"),
    usb.core.USBError("Input/Output Error", errno=errno.ENODEV),
], ids=["errno19", "message", "errno-only"])
def test_unplug_on_read_is_device_disconnected(util: Any, exc: Exception) -> None:
    dev = StandInDevice()
    dev.inbox = [exc]
    with UsbTransport(spec(), find=finder(dev)) as t:
        with pytest.raises(DeviceDisconnected):
            t.read(0.1)


def test_other_usb_errors_are_transport_errors(util: Any) -> None:
    dev = StandInDevice()
    dev.inbox = [usb.core.USBError("Pipe error", errno=errno.EPIPE)]
    with UsbTransport(spec(), find=finder(dev)) as t:
        with pytest.raises(TransportError) as info:
            t.read(0.1)
    assert not isinstance(info.value, DeviceDisconnected)
    assert str(info.value).endswith(": read failed (broken pipe)")  # no "[Errno 32]"


def test_write_maps_errors_and_completes_partial_writes(util: Any) -> None:
    dev = StandInDevice()
    with UsbTransport(spec(), find=finder(dev)) as t:
        dev.write_results = [3]
        t.write(b"\x01\x02\x03\x04\x05\x00")
        assert bytes(dev.written) == b"\x01\x02\x03\x04\x05\x00"
        dev.write_results = [usb.core.USBTimeoutError("Operation timed out", errno=110)]
        with pytest.raises(TransportTimeout):
            t.write(b"x")
        dev.write_results = [usb.core.USBError("No such device", errno=errno.ENODEV)]
        with pytest.raises(DeviceDisconnected):
            t.write(b"x")
        dev.write_results = [0]
        with pytest.raises(TransportError):
            t.write(b"x")


def test_serial_number_selects_the_device(util: Any) -> None:
    other, unreadable, wanted = StandInDevice("SN0"), StandInDevice(None), StandInDevice("SN1")
    t = UsbTransport(spec(serial_number="SN1"), find=finder(other, unreadable, wanted))
    t.open()
    util["claim_interface"].assert_called_once_with(wanted, 0)
    t.close()
    with pytest.raises(DeviceDisconnected, match="not found"):
        UsbTransport(spec(serial_number="SN9"), find=finder(other, wanted)).open()


def test_a_unit_this_user_may_not_read_or_open_is_said_to_be_udevs_business(util: Any) -> None:
    """An integrator review: before the udev rules applied, a profile naming a serial number said
    "device not found" of a unit that was plugged in (its serial unreadable, it was skipped), and one
    without "open failed (permission denied)", neither pointing at udev."""
    # (not found all the same: the unreadable one may be a spare, which the rules, matching the
    # serial, never give this user: a review of that change)
    with pytest.raises(DeviceDisconnected, match=r"serial SN1 .*: device not found; a unit of its IDs could not be "
                                                 r"read by this user \(if it is that one: permission denied \(is this "
                                                 r"user in group shoectl\? a udev rule gives the device to it"):
        UsbTransport(spec(serial_number="SN1"), find=finder(StandInDevice("SN0"), StandInDevice(None))).open()
    util["claim_interface"].side_effect = usb.core.USBError("Access denied (insufficient permissions)", errno=13)
    with pytest.raises(TransportError, match=r": open failed: permission denied \(is this user in group shoectl"):
        UsbTransport(spec(), find=finder(StandInDevice())).open()


def test_no_device_is_device_disconnected(util: Any) -> None:
    with pytest.raises(DeviceDisconnected, match="1209:0001"):
        UsbTransport(spec(), find=finder()).open()


def test_kernel_driver_is_detached_and_reattached(util: Any) -> None:
    dev = StandInDevice(kernel_driver=True)
    t = UsbTransport(spec(), find=finder(dev))
    t.open()
    assert ("detach_kernel_driver", 0) in dev.calls
    t.close()
    assert ("attach_kernel_driver", 0) in dev.calls


@pytest.mark.parametrize("exc", [NotImplementedError(),
                                 usb.core.USBError("Operation not supported", errno=95)])
def test_backends_without_kernel_driver_support_are_tolerated(util: Any, exc: Exception) -> None:
    dev = StandInDevice(kernel_driver=exc)
    with UsbTransport(spec(), find=finder(dev)) as t:
        assert t.is_open
    assert ("detach_kernel_driver", 0) not in dev.calls
    assert ("attach_kernel_driver", 0) not in dev.calls


def test_missing_or_wrong_endpoints_are_refused(util: Any) -> None:
    dev = StandInDevice(endpoints=[Endpoint(0x81)])
    with pytest.raises(TransportError, match="endpoint 0x01 not found"):
        UsbTransport(spec(), find=finder(dev)).open()
    util["dispose_resources"].assert_called_with(dev)  # nothing left claimed
    dev = StandInDevice(endpoints=[Endpoint(0x81, INTERRUPT), Endpoint(0x01, INTERRUPT)])
    with pytest.raises(TransportError, match="not a bulk endpoint"):
        UsbTransport(spec(), find=finder(dev)).open()
    dev = StandInDevice(endpoints=[Endpoint(0x01), Endpoint(0x81)])
    with pytest.raises(TransportError, match="not an IN endpoint"):
        UsbTransport(spec(endpoint_in=0x01, endpoint_out=0x81), find=finder(dev)).open()


def test_claim_failure_releases_and_maps(util: Any) -> None:
    util["claim_interface"].side_effect = usb.core.USBError("Resource busy", errno=errno.EBUSY)
    dev = StandInDevice()
    with pytest.raises(TransportError, match="resource busy"):
        UsbTransport(spec(), find=finder(dev)).open()
    util["dispose_resources"].assert_called_once_with(dev)


def test_close_tolerates_a_vanished_device(util: Any) -> None:
    util["release_interface"].side_effect = usb.core.USBError("No such device", errno=19)
    t = UsbTransport(spec(), find=finder(StandInDevice()))
    t.open()
    t.close()
    assert not t.is_open


def test_no_backend_is_a_transport_error() -> None:
    def find(**_: Any) -> Any:
        raise usb.core.NoBackendError("No backend available")
    with pytest.raises(TransportError, match="no libusb backend"):
        UsbTransport(spec(), find=find).open()


def test_not_open_and_double_open(util: Any) -> None:
    t = UsbTransport(spec(), find=finder(StandInDevice()))
    with pytest.raises(TransportError, match="not open"):
        t.read(0.1)
    t.open()
    with pytest.raises(TransportError, match="already open"):
        t.open()
    t.close()


def test_constructing_needs_no_pyusb(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("usb", "usb.core", "usb.util"):
        monkeypatch.setitem(sys.modules, name, None)
    t = UsbTransport(spec())
    assert "1209:0001" in t.describe()
    with pytest.raises(TransportError, match="pyusb is not installed"):
        t.open()


def test_bad_transfer_kind() -> None:
    with pytest.raises(ValueError):
        UsbTransport(spec(transfer="isochronous"))
