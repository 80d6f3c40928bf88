"""Device profiles: the transport settings. The serial settings are pyserial's (and open a real
pty), the defaults and the timing in seconds, USB identity matching."""
from __future__ import annotations

import os
import pty
import tomllib
from pathlib import Path

import pytest
import serial

from firmware_bridge.profiles import (
    SerialTransportSpec,
    UsbIdentity,
    UsbTransportSpec,
    get_profile,
    load_profile,
    parse_profile,
)

from .profile_documents import SERIAL_BASE, SHIPPED, USB_BASE, with_change

SHIPPED_SERIAL = [p for p in SHIPPED if tomllib.loads(p.read_text(encoding="utf-8"))["transport"]["type"] == "serial"]


@pytest.mark.parametrize("path", SHIPPED_SERIAL, ids=lambda p: p.stem)
def test_pyserial_accepts_the_settings(path: Path) -> None:
    p = load_profile(path)
    assert isinstance(p.transport, SerialTransportSpec)
    kw = p.transport.pyserial_kwargs()
    assert set(kw) == {"baudrate", "bytesize", "parity", "stopbits", "rtscts", "xonxoff", "dsrdtr"}
    assert kw["bytesize"] in serial.Serial.BYTESIZES
    assert kw["parity"] in serial.Serial.PARITIES
    assert kw["stopbits"] in serial.Serial.STOPBITS
    port = serial.serial_for_url("loop://", **kw)
    try:
        assert (port.baudrate, port.bytesize, port.parity, port.stopbits) == (
            kw["baudrate"], kw["bytesize"], kw["parity"], kw["stopbits"])
    finally:
        port.close()


def test_emulated_serial_settings_open_a_real_pty() -> None:
    """The emulator serves a pseudo-terminal: the profile's settings must open it."""
    master, slave = pty.openpty()
    try:
        kw = get_profile("emulated-shoe").transport.pyserial_kwargs()
        port = serial.Serial(os.ttyname(slave), timeout=1, **kw)
        try:
            port.write(b"ping")
            assert os.read(master, 4) == b"ping"
        finally:
            port.close()
    finally:
        os.close(master)
        os.close(slave)


def test_stopbits_one_and_a_half_is_pyserials_constant() -> None:
    data = with_change(SERIAL_BASE, "transport.stopbits", 1.5)
    spec = parse_profile(data, "x.toml", "x").transport
    assert spec.pyserial_kwargs()["stopbits"] == serial.STOPBITS_ONE_POINT_FIVE
    data = with_change(SERIAL_BASE, "transport.stopbits", 2.0)
    assert parse_profile(data, "x.toml", "x").transport.stopbits == serial.STOPBITS_TWO


def test_defaults_and_timing_in_seconds() -> None:
    p = parse_profile(USB_BASE, "x.toml", "x")
    t = p.transport
    assert isinstance(t, UsbTransportSpec)
    assert (t.configuration, t.interface, t.transfer, t.max_packet) == (1, 0, "bulk", 64)
    assert (t.manufacturer, t.product) == ("Test Vendor", "Shuffler 1")  # from [device]
    assert p.protocol_version == 1 and p.description == ""
    assert p.timing.response_timeout_s == 0.25 and p.timing.reconnect_max_s == 5.0
    assert p.timing.heartbeat_interval_s == 1.0 and p.timing.shuffle_s == 30.0


def test_usb_identity_matching() -> None:
    ident = UsbIdentity(0x1209, 0x0001, "SN1")
    assert ident.matches(0x1209, 0x0001, "SN1")
    assert not ident.matches(0x1209, 0x0001, "SN2")
    assert not ident.matches(0x1209, 0x0001, None)  # unreadable serial: not proven to be this one
    assert UsbIdentity(0x1209, 0x0001).matches(0x1209, 0x0001, None)
    assert not UsbIdentity(0x1209, 0x0001).matches(0x1209, 0x0002)
    assert ident.id_str == "1209:0001"
