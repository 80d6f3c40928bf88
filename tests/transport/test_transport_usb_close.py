"""``UsbTransport`` through pyusb's real code on the emulated backend: a close while a write is
in flight. The link's supervisor closes the transport when a session ends (a command timed out,
the link stops) without waiting for the sender thread: a write that had taken the device before
the close and wrote after it made pyusb open the disposed device again and claim its interface
behind the transport (a review of descriptors across threads). The close now waits for the
write in flight (at most its timeout), and a write after the close is refused."""
from __future__ import annotations

import threading
import time

import pytest
import usb.core

from firmware_bridge.emulator.factory import build_device
from firmware_bridge.emulator.usb_backend import EmulatedUsbBackend
from firmware_bridge.errors import TransportError
from firmware_bridge.profiles import get_profile
from firmware_bridge.transport.usb import UsbTransport

DEADLINE = 30.0  # seconds before a wait is declared hung (never a performance limit)


def test_a_close_during_a_write_waits_for_it_and_no_write_follows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = get_profile("emulated-usb-shuffler")
    backend = EmulatedUsbBackend(build_device(profile, speed=float("inf")))
    calls: dict[str, int] = {}
    for name in ("open_device", "close_device", "claim_interface", "release_interface"):
        def counted(*args, _real=getattr(backend, name), _name=name, **kwargs):  # noqa: ANN002, ANN003, ANN202
            calls[_name] = calls.get(_name, 0) + 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(backend, name, counted)
    transport = UsbTransport(profile.transport, backend=backend)
    transport.open()

    writing, go_on = threading.Event(), threading.Event()
    real_write = usb.core.Device.write

    def slow_write(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - the sender descheduled in its write
        writing.set()
        go_on.wait(DEADLINE)
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(usb.core.Device, "write", slow_write)
    written: list[object] = []
    sender = threading.Thread(target=lambda: written.append(transport.write(b"\x00\x05A-COMMAND")), daemon=True)
    sender.start()
    assert writing.wait(DEADLINE)
    closer = threading.Thread(target=transport.close, daemon=True)
    closer.start()
    time.sleep(0.2)
    assert closer.is_alive()  # the close waits for the write in flight
    go_on.set()
    sender.join(DEADLINE)
    closer.join(DEADLINE)
    assert written == [None] and not transport.is_open
    with pytest.raises(TransportError, match="transport is not open"):
        transport.write(b"\x00\x05AFTER")  # refused: the device is not opened again
    assert calls == {"open_device": 1, "claim_interface": 1, "release_interface": 1, "close_device": 1}, calls
