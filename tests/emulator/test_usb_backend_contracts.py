"""docs/emulator.md "In-process USB": the descriptors the emulated USB device serves (through
pyusb's real code and through GET_DESCRIPTOR) and the backend's transfers and plugging, where no
other test held them (found by mutation testing of usb_descriptors.py and usb_backend.py)."""
from __future__ import annotations

import dataclasses
import errno
import threading
import time

import pytest
import usb.core
import usb.util

from firmware_bridge.emulator import EmulatedUsbBackend, FaultSpec, ManualClock, build_device
from firmware_bridge.emulator.usb_descriptors import build_virtual_device, descriptor_bytes
from firmware_bridge.profiles import get_profile

from .host_support import INF, find_usb


def test_the_configuration_is_self_powered_and_the_interface_vendor_specific() -> None:
    backend = EmulatedUsbBackend(build_device("emulated-usb-shuffler", speed=INF))
    dev = find_usb(backend)
    dev.set_configuration()
    cfg = dev.get_active_configuration()
    assert cfg.bmAttributes & 0x40  # self-powered
    assert cfg[(0, 0)].bInterfaceClass == 0xFF
    assert dev.ctrl_transfer(0x80, 0x00, 0, 0, 2).tobytes() == b"\x01\x00"  # GET_STATUS: self-powered
    usb.util.dispose_resources(dev)


def test_a_device_without_a_serial_number_has_no_serial_string() -> None:
    backend = EmulatedUsbBackend(build_device("acme-batchshuffler-x", speed=INF))
    dev = find_usb(backend, product=0x0002)
    assert dev.iSerialNumber == 0 and dev.serial_number is None
    assert (dev.manufacturer, dev.product) == ("Acme Table Devices", "BatchShuffler X")
    usb.util.dispose_resources(dev)


def test_high_speed_with_512_byte_packets_and_the_port_is_the_last_of_the_path() -> None:
    spec = get_profile("emulated-usb-shuffler").transport
    dev512 = build_virtual_device(dataclasses.replace(spec, max_packet=512), generation=1, bus=3, address=9,
                                  port_numbers=(2, 4, 1))
    assert dev512.device.speed == usb.util.SPEED_HIGH
    assert dev512.device.port_number == 1 and dev512.device.port_numbers == (2, 4, 1)
    dev64 = build_virtual_device(spec, generation=1, bus=3, address=9, port_numbers=(2,))
    assert dev64.device.speed == usb.util.SPEED_FULL


def test_get_descriptor_bytes_are_well_formed() -> None:
    spec = get_profile("emulated-usb-shuffler").transport
    vdev = build_virtual_device(spec, generation=1, bus=1, address=2, port_numbers=(1,))
    config = descriptor_bytes(vdev, usb.util.DESC_TYPE_CONFIG, 0, 0)
    assert int.from_bytes(config[2:4], "little") == len(config) == 9 + 9 + 7 * 2  # wTotalLength
    text = descriptor_bytes(vdev, usb.util.DESC_TYPE_STRING, 3, 0x0409)
    assert text[0] == len(text) and text[1] == 3 and text[2:].decode("utf-16-le") == "SHOECTL-EMU-0001"
    assert descriptor_bytes(vdev, usb.util.DESC_TYPE_STRING, 3, 0x0407) is None  # only 0x0409 is served


def test_replug_gives_a_new_address_and_a_second_replug_while_plugged_changes_nothing() -> None:
    backend = EmulatedUsbBackend(build_device("emulated-usb-shuffler", speed=INF))
    first = backend.address
    backend.unplug()
    backend.replug()
    second = backend.address
    assert second != first
    backend.replug()  # already plugged in: no new enumeration
    assert backend.address == second
    dev = find_usb(backend)
    dev.set_configuration()
    backend.replug()
    dev.get_active_configuration()  # the handle is still good
    usb.util.dispose_resources(dev)


def test_a_read_with_timeout_0_waits_for_data() -> None:
    """timeout 0 waits forever, as in libusb: it returns once the device has something to say."""
    device = build_device("emulated-usb-shuffler", speed=INF)
    backend = EmulatedUsbBackend(device)
    dev = find_usb(backend)
    dev.set_configuration()
    got = []
    reader = threading.Thread(target=lambda: got.append(bytes(dev.read(0x81, 512, timeout=0))), daemon=True)
    reader.start()
    time.sleep(0.05)
    assert not got and reader.is_alive()
    with device.lock:
        device.open_door()  # an event: DOOR
    reader.join(5)
    assert got and got[0]
    usb.util.dispose_resources(dev)


def test_an_unplug_wakes_a_waiting_read_at_once() -> None:
    backend = EmulatedUsbBackend(build_device("emulated-usb-shuffler", speed=INF))
    dev = find_usb(backend)
    dev.set_configuration()
    errors = []

    def read() -> None:
        try:
            dev.read(0x81, 512, timeout=10_000)
        except usb.core.USBError as exc:
            errors.append((exc.errno, time.monotonic()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.05)
    unplugged = time.monotonic()
    backend.unplug()
    reader.join(5)
    assert errors and errors[0][0] == errno.ENODEV and errors[0][1] - unplugged < 0.5  # not at the next idle tick, a second on


def test_frames_held_before_an_unplug_go_nowhere() -> None:
    """While the device is unplugged frames written go nowhere; the device keeps its events (the
    host asks for them again after the handshake), so a frame the line's delay held back is lost."""
    device = build_device("emulated-usb-shuffler", speed=INF)
    backend = EmulatedUsbBackend(device, faults=FaultSpec.parse("delay=300ms"))
    dev = find_usb(backend)
    dev.set_configuration()
    dev.write(0x01, b"\x00")  # a delimiter: nothing to answer
    with device.lock:
        device.open_door()  # DOOR: held back 300 ms on the line
    with pytest.raises(usb.core.USBTimeoutError):
        dev.read(0x81, 512, timeout=50)
    backend.unplug()
    backend.replug()
    dev2 = find_usb(backend)
    dev2.set_configuration()
    with pytest.raises(usb.core.USBTimeoutError):
        dev2.read(0x81, 512, timeout=600)
    assert device.connection.unacknowledged_count == 1  # kept by the device


def test_unplug_for_keeps_the_device_away_that_long() -> None:
    clock = ManualClock()
    backend = EmulatedUsbBackend(build_device("emulated-usb-shuffler", clock=clock), clock=clock,
                                 faults=FaultSpec.parse("unplug-every=1s,unplug-for=500ms"))
    clock.advance(1.0)
    assert find_usb(backend) is None
    clock.advance(0.499)
    assert find_usb(backend) is None
    clock.advance(0.001)
    assert find_usb(backend) is not None


def test_the_line_delay_holds_frames_back() -> None:
    device = build_device("emulated-usb-shuffler", speed=INF)
    backend = EmulatedUsbBackend(device, faults=FaultSpec.parse("delay=400ms"))
    dev = find_usb(backend)
    dev.set_configuration()
    with device.lock:
        device.open_door()
    started = time.monotonic()
    with pytest.raises(usb.core.USBTimeoutError):
        dev.read(0x81, 512, timeout=100)  # not due yet ...
    assert bytes(dev.read(0x81, 512, timeout=2000))  # ... and then it is
    assert time.monotonic() - started >= 0.35


def test_both_ways_drops_the_hosts_bytes_too() -> None:
    """both-ways=1: the line faults act on the host's bytes too: with drop=1 no command reaches the
    device, so it never starts counting towards host loss (next_due: nothing due)."""
    from firmware_bridge.protocol import HostConnection, Sync

    device = build_device("emulated-usb-shuffler", speed=INF)
    backend = EmulatedUsbBackend(device, faults=FaultSpec.parse("drop=1,both-ways=1,seed=1"))
    dev = find_usb(backend)
    dev.set_configuration()
    assert dev.write(0x01, b"\x00" + HostConnection().send(Sync())) > 0
    assert device.next_due(device.clock()) is None
    plain = build_device("emulated-usb-shuffler", speed=INF)
    other = find_usb(EmulatedUsbBackend(plain, faults=FaultSpec.parse("drop=1,seed=1")))
    other.set_configuration()
    other.write(0x01, b"\x00" + HostConnection().send(Sync()))
    assert plain.next_due(plain.clock()) is not None  # without both-ways the SYNC got there


def test_transfers_of_the_wrong_type_or_interface_are_refused() -> None:
    backend = EmulatedUsbBackend(build_device("emulated-usb-shuffler", speed=INF))
    dev = find_usb(backend)
    handle = backend.open_device(dev._ctx.dev)
    with pytest.raises(usb.core.USBError) as info:
        backend.intr_write(handle, 0x01, 0, b"\x00", 100)  # the endpoint is bulk
    assert info.value.errno == errno.EPIPE
    with pytest.raises(usb.core.USBError):
        backend.bulk_write(handle, 0x01, 1, b"\x00", 100)  # there is no interface 1
    with pytest.raises(usb.core.USBError):
        backend.claim_interface(handle, 1)
    with pytest.raises(usb.core.USBError):
        backend.set_configuration(handle, 2)  # only configuration 1 (or 0) exists
    backend.set_configuration(handle, 0)
    with pytest.raises(usb.core.USBError):  # unconfigured: no endpoints
        backend.bulk_write(handle, 0x01, 0, b"\x00", 100)
    with pytest.raises(usb.core.USBError) as info:
        backend.ctrl_transfer(handle, 0xC0, 0x06, 0x0100, 0, bytearray(18), 100)  # a vendor request
    assert info.value.errno == errno.EPIPE


def test_a_freshly_opened_handle_is_configured_with_the_first_configuration() -> None:
    backend = EmulatedUsbBackend(build_device("emulated-usb-shuffler", speed=INF))
    dev = find_usb(backend)
    handle = backend.open_device(dev._ctx.dev)
    assert backend.get_configuration(handle) == 1


def test_a_handle_kept_open_across_an_unplug_stays_dead_after_the_replug() -> None:
    """replug(): "Handles from before stay dead, so find the device again" (as with libusb), also
    one its holder never closed."""
    backend = EmulatedUsbBackend(build_device("emulated-usb-shuffler", speed=INF))
    dev = find_usb(backend)
    dev.set_configuration()
    dev.write(0x01, b"\x00")  # the handle is open
    backend.unplug()
    backend.replug()
    with pytest.raises(usb.core.USBError) as info:
        dev.write(0x01, b"\x00", timeout=50)
    assert info.value.errno == errno.ENODEV
    fresh = find_usb(backend)
    fresh.set_configuration()
    assert fresh.write(0x01, b"\x00") == 1
