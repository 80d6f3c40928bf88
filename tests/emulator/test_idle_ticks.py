"""An emulated device is ticked when it has something to do, not fifty times a second (issue 15:
32 emulated tables on one host): ``next_due`` says when (a shuffle's next progress step, the
dealer's next prompt, the host-loss timeout); a server, a loopback or the USB backend with
nothing due ticks its device about once a second; and an event emitted from another thread (the
shuffler loading the shoe, a test opening a door) wakes the pump or the waiting read at once."""
from __future__ import annotations

import math
import threading
import time

import pytest
import usb.core

import firmware_bridge.emulator.clock as emulator_clock
from firmware_bridge.emulator import EmulatedTable, EmulatedUsbBackend, ManualClock
from firmware_bridge.emulator.clock import IDLE_WAIT_S, tick_wait
from firmware_bridge.emulator.factory import build_device
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.emulator.pty_server import PtyServer
from firmware_bridge.emulator.shuffler import PROGRESS_STEPS
from firmware_bridge.protocol import Display, Door, Shuffle, ShuffleDone, ShuffleProgress
from firmware_bridge.protocol.message_stream import MessageDecoder

from .host_support import Host, LoopbackWire, SerialWire, UsbWire, connect, find_usb, open_port

DEADLINE = 10.0  # seconds a test waits for what must come at once (never a performance limit)


def test_a_server_with_nothing_due_ticks_its_device_about_once_a_second(tmp_path, mocker) -> None:
    device = build_device("emulated-shoe", speed=1.0)
    exchange = mocker.spy(device, "exchange")
    with PtyServer(device, link=tmp_path / "shoe"):
        time.sleep(0.2)
        before, started = exchange.call_count, time.monotonic()
        time.sleep(1.5)
        ticks, elapsed = exchange.call_count - before, time.monotonic() - started
    assert ticks <= elapsed / IDLE_WAIT_S + 1, f"{ticks} ticks in {elapsed:.2f} s"


def test_a_loopback_read_with_nothing_due_ticks_its_device_once_or_twice(mocker) -> None:
    device = build_device("emulated-shoe", speed=1.0)
    exchange = mocker.spy(device, "exchange")
    transport = LoopbackTransport(device)
    transport.open()
    assert transport.read(0.5) == b""  # nothing to say before the host syncs
    assert 1 <= exchange.call_count <= 2


def test_a_usb_read_with_nothing_due_ticks_its_device_once_or_twice(mocker) -> None:
    device = build_device("emulated-usb-shuffler", speed=1.0)
    dev = find_usb(EmulatedUsbBackend(device))
    dev.set_configuration()
    exchange = mocker.spy(device, "tick")
    with pytest.raises(usb.core.USBTimeoutError):
        dev.read(0x81, 64, timeout=500)  # nothing to say before the host syncs
    assert 1 <= exchange.call_count <= 2


def test_how_long_a_pump_sleeps() -> None:
    assert tick_wait(None, 100.0, 0.02) == IDLE_WAIT_S          # nothing due
    assert tick_wait(100.3, 100.0, 0.02) == pytest.approx(0.3)  # until the due
    assert tick_wait(500.0, 100.0, 0.02) == IDLE_WAIT_S         # far off: no longer than idle
    assert tick_wait(99.0, 100.0, 0.02) == 0.02                 # past: waits on a condition: poll


def test_faster_mechanisms_are_polled_more_often(tmp_path) -> None:
    for speed, period in ((1.0, 0.02), (4.0, 0.005), (20.0, 0.002), (math.inf, 0.002)):
        device = build_device("emulated-shoe", speed=speed)
        assert LoopbackTransport(device).poll_s == period
        assert PtyServer(device, link=tmp_path / f"s{speed}").poll_s == period


def test_a_shuffle_is_due_at_each_progress_step_then_at_its_end() -> None:
    clock = ManualClock()
    table = EmulatedTable(clock=clock, speed=1.0, seed=3)
    shuffler = table.shuffler
    shuffler.host_loss_timeout = None
    assert shuffler.next_due(clock()) is None  # nothing runs
    host = connect(shuffler, clock)
    started = clock()
    host.ok(Shuffle(8))
    duration = shuffler.shuffle_s
    for step in (*PROGRESS_STEPS, 100):
        due = shuffler.next_due(clock())
        assert due == pytest.approx(started + duration * step / 100, abs=0.05)
        clock.set(due + 0.001)
        with shuffler.lock:
            shuffler.tick()
    host.pump(0.1)
    assert [e.percent for e in host.of(ShuffleProgress)] == list(PROGRESS_STEPS)
    assert len(host.of(ShuffleDone)) == 1
    assert shuffler.next_due(clock()) is None  # done: nothing until the next command


def test_the_dealers_next_prompt_and_the_host_loss_timeout_are_due() -> None:
    clock = ManualClock()
    table = EmulatedTable(clock=clock, speed=1.0, seed=3, dealer_delay_s=2.0)
    shoe = table.shoe
    host = connect(shoe, clock)
    commanded = clock()
    assert shoe.next_due(clock()) == pytest.approx(commanded + shoe.host_loss_timeout, abs=0.05)
    host.ok(Display("BURN"))
    assert shoe.next_due(clock()) == pytest.approx(clock() + 2.0, abs=0.05)


def test_an_event_from_another_thread_wakes_a_server_with_nothing_due(tmp_path, monkeypatch) -> None:
    """With nothing due for a minute, the door opened from this thread still reaches the host:
    the emit wakes the pump (without that, the event would wait for the next tick)."""
    monkeypatch.setattr(emulator_clock, "IDLE_WAIT_S", 60.0)
    device = build_device("emulated-shoe", speed=1.0, host_loss_timeout=None)
    with PtyServer(device, link=tmp_path / "shoe") as server, open_port(server.port) as port:
        host = Host(SerialWire(port))
        host.handshake()
        time.sleep(0.3)  # the pump is asleep with nothing due
        with device.lock:
            device.open_door()
        assert host.wait_for(Door, timeout=DEADLINE).open


def test_an_event_from_another_thread_wakes_a_loopback_read_with_nothing_due(monkeypatch) -> None:
    """A host's read waiting on a quiet line, with nothing due for a minute and an hour's timeout,
    returns the door opened from another thread."""
    monkeypatch.setattr(emulator_clock, "IDLE_WAIT_S", 60.0)
    device = build_device("emulated-shoe", speed=1.0, host_loss_timeout=None)
    transport = LoopbackTransport(device)
    transport.open()
    Host(LoopbackWire(transport)).handshake()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(transport.read(3600.0)), daemon=True)
    reader.start()
    time.sleep(0.3)  # the read is waiting with nothing due
    with device.lock:
        device.open_door()
    reader.join(DEADLINE)
    if reader.is_alive():
        transport.cancel_read()
        pytest.fail("the read was not woken by the event")
    decoder = MessageDecoder()
    decoder.receive_data(got[0])
    assert [type(item.message) for item in decoder.take_items()] == [Door]



def test_an_event_from_another_thread_wakes_a_usb_read_with_nothing_due(monkeypatch) -> None:
    """A bulk read waiting forever (timeout 0), with nothing due for a minute, returns the door
    opened from another thread."""
    monkeypatch.setattr(emulator_clock, "IDLE_WAIT_S", 60.0)
    device = build_device("emulated-usb-shuffler", speed=1.0, host_loss_timeout=None)
    dev = find_usb(EmulatedUsbBackend(device))
    dev.set_configuration()
    Host(UsbWire(dev, 0x01, 0x81)).handshake()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(bytes(dev.read(0x81, 512, timeout=0))), daemon=True)
    reader.start()
    time.sleep(0.3)  # the read is waiting with nothing due
    with device.lock:
        device.open_door()
    reader.join(DEADLINE)
    assert not reader.is_alive(), "the read was not woken by the event"
    decoder = MessageDecoder()
    decoder.receive_data(got[0])
    assert [type(item.message) for item in decoder.take_items()] == [Door]
