"""The in-memory loopback transport: the host link runs unchanged against an emulated device with
no pty and no pump thread — the handshake, a command round trip, every event exactly once and in
order through line noise and unplugs, and the transport contract (quiet line, disconnects)."""
from __future__ import annotations

import threading
import time

import pytest

from firmware_bridge.emulator.cards import standard_stack
from firmware_bridge.emulator.factory import build_device
from firmware_bridge.emulator.faults import FaultSpec
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.errors import DeviceDisconnected, TransportError
from firmware_bridge.link import DeviceLink
from firmware_bridge.profiles import get_profile
from firmware_bridge.protocol import CardRead, GateUnlock, StatusReply, StatusRequest
from link.consumer import Consumer, wait_until

INF = float("inf")


def link_to(device, transport: LoopbackTransport, consumer: Consumer) -> DeviceLink:
    profile = get_profile("emulated-shoe")
    return DeviceLink(transport, timing=profile.timing, profile_name=profile.name, on_event=consumer)


def test_quiet_line_returns_empty_and_unplug_raises_disconnected() -> None:
    t = LoopbackTransport(build_device("emulated-shoe", speed=INF))
    with pytest.raises(TransportError):
        t.read(0.01)  # not open yet
    t.open()
    started = time.monotonic()
    assert t.read(0.05) == b""
    assert time.monotonic() - started >= 0.04
    t.unplug()
    with pytest.raises(DeviceDisconnected):
        t.read(0.01)
    with pytest.raises(DeviceDisconnected):
        t.write(b"\0")
    t.close()
    with pytest.raises(DeviceDisconnected):
        t.open()
    t.replug()
    t.open()
    assert t.is_open
    t.close()


def test_cancel_read_wakes_a_blocked_reader() -> None:
    t = LoopbackTransport(build_device("emulated-shoe", speed=INF))
    t.open()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(t.read(10.0)))
    reader.start()
    time.sleep(0.05)
    t.cancel_read()
    reader.join(2.0)
    assert not reader.is_alive() and got == [b""]
    t.close()


def test_link_handshake_and_status_round_trip() -> None:
    shoe = build_device("emulated-shoe", seed=3, speed=INF)
    consumer = Consumer()
    link = link_to(shoe, LoopbackTransport(shoe), consumer)
    try:
        link.start()
        assert link.wait_connected(10)
        assert link.identity.serial == shoe.identity.serial
        assert isinstance(link.request(StatusRequest()), StatusReply)
    finally:
        link.stop()


@pytest.mark.parametrize("both_ways", [0, 1])
def test_every_card_once_in_order_through_noise_and_unplugs(both_ways: int) -> None:
    """Noise on the device's line, and with ``both-ways=1`` on the host's too (commands and
    acknowledgements damaged, dropped and duplicated): every card once, in order."""
    shoe = build_device("emulated-shoe", seed=1, speed=INF)
    delivered: list = []
    shoe.add_draw_listener(delivered.append)
    faults = FaultSpec.parse(f"corrupt=0.01,drop=0.002,dup=0.02,both-ways={both_ways},seed=5")
    transport = LoopbackTransport(shoe, faults=faults)
    consumer = Consumer()
    link = link_to(shoe, transport, consumer)
    try:
        link.start()
        assert link.wait_connected(10)
        with shoe.lock:
            shoe.load(standard_stack(8))
        link.request(GateUnlock())
        for i in range(120):
            with shoe.lock:
                assert shoe.draw().refused is None
            if i % 40 == 20:
                transport.unplug()  # events keep coming while the host is away
                for _ in range(5):
                    with shoe.lock:
                        assert shoe.draw().refused is None
                # the link sees the unplug before the replug (on a loaded machine its reader may
                # not run for a while: a replug first would leave the session as it was)
                assert wait_until(lambda: link.state.value != "connected", 10)
                transport.replug()
                assert link.wait_connected(10)
        assert wait_until(lambda: len(consumer.of(CardRead)) >= 135)
        time.sleep(0.1)  # a duplicate would arrive now
        assert [r.position for r in consumer.of(CardRead)] == [d.position for d in delivered]
        counters = [e.counter for e in consumer.events]
        assert counters == sorted(set(counters))
        assert link.stats["sessions"] >= 4 and transport.line.corrupted > 0
        assert (transport.host_line is not None and transport.host_line.corrupted > 0) == bool(both_ways)
    finally:
        link.stop()
