"""An emulated device that nobody talks to costs next to no CPU: at real speed its server (and the
in-process loopback) tick it every 20 ms, not every 2 ms; faster mechanisms are ticked more often
(issue 15: 32 emulated tables on one host)."""
from __future__ import annotations

import math
import time

from firmware_bridge.emulator.factory import build_device
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.emulator.pty_server import PtyServer


def test_an_idle_server_at_real_speed_ticks_its_device_about_fifty_times_a_second(tmp_path, mocker) -> None:
    device = build_device("emulated-shoe", speed=1.0)
    exchange = mocker.spy(device, "exchange")
    with PtyServer(device, link=tmp_path / "shoe"):
        time.sleep(0.2)
        before, started = exchange.call_count, time.monotonic()
        time.sleep(0.5)
        ticks, elapsed = exchange.call_count - before, time.monotonic() - started
    assert 0 < ticks <= 60 * elapsed + 3, f"{ticks} ticks in {elapsed:.2f} s"


def test_an_idle_loopback_read_at_real_speed_ticks_its_device_about_fifty_times_a_second(mocker) -> None:
    device = build_device("emulated-shoe", speed=1.0)
    exchange = mocker.spy(device, "exchange")
    transport = LoopbackTransport(device)
    transport.open()
    started = time.monotonic()
    assert transport.read(0.5) == b""  # nothing to say before the host syncs
    elapsed = time.monotonic() - started
    assert 0 < exchange.call_count <= 60 * elapsed + 3, f"{exchange.call_count} ticks in {elapsed:.2f} s"


def test_faster_mechanisms_are_ticked_more_often(tmp_path) -> None:
    for speed, period in ((1.0, 0.02), (4.0, 0.005), (20.0, 0.002), (math.inf, 0.002)):
        device = build_device("emulated-shoe", speed=speed)
        assert LoopbackTransport(device).poll_s == period
        assert PtyServer(device, link=tmp_path / f"s{speed}").poll_s == period
