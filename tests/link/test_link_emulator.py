"""The host link against the real emulator: over a pty with line noise and unplugs, and over USB
through pyusb's real code on the emulated backend (timeouts, unplug errno 19, replug). Every event
the device emitted reaches the consumer exactly once and in order."""
from __future__ import annotations

import time

import pytest

from firmware_bridge.emulator.cards import standard_stack
from firmware_bridge.emulator.factory import build_device
from firmware_bridge.emulator.faults import FaultSpec
from firmware_bridge.emulator.pty_server import PtyServer
from firmware_bridge.emulator.usb_backend import EmulatedUsbBackend
from firmware_bridge.link import DeviceLink
from firmware_bridge.profiles import get_profile
from firmware_bridge.protocol import CardRead, GateUnlock, Shuffle, ShuffleDone, StatusRequest, StatusReply
from firmware_bridge.transport.usb import UsbTransport
from link.consumer import Consumer, wait_until

INF = float("inf")


@pytest.mark.slow
def test_pty_with_line_noise_and_unplugs_delivers_every_card_once_in_order() -> None:
    shoe = build_device("emulated-shoe", seed=1, speed=INF)
    delivered: list = []
    shoe.add_draw_listener(delivered.append)
    faults = FaultSpec.parse("corrupt=0.01,drop=0.002,dup=0.02,both-ways=1,seed=5")
    server = PtyServer(shoe, faults=faults).start()
    consumer = Consumer()
    link = DeviceLink.from_profile(get_profile("emulated-shoe"), server.port, on_event=consumer)
    try:
        link.start()
        assert link.wait_connected(20)
        with shoe.lock:
            shoe.load(standard_stack(8))
        link.request(GateUnlock())
        for i in range(300):
            with shoe.lock:
                assert shoe.draw().refused is None
            time.sleep(0.001)
            if i % 75 == 30:
                server.unplug()  # mid-stream: events keep coming while the host is away
                for _ in range(10):
                    with shoe.lock:
                        assert shoe.draw().refused is None
                time.sleep(0.15)
                server.replug()
                assert link.wait_connected(20)
        assert wait_until(lambda: len(consumer.of(CardRead)) >= 340)
        time.sleep(0.3)  # anything extra (a duplicate) would arrive now
        reads = consumer.of(CardRead)
        assert [r.position for r in reads] == [d.position for d in delivered]
        counters = [e.counter for e in consumer.events]
        assert counters == sorted(set(counters))  # exactly once, in order
        assert len(reads) == 340 and link.stats["sessions"] >= 5 and server.line.corrupted > 0
    finally:
        link.stop()
        server.close()


def _usb_link(profile, backend: EmulatedUsbBackend, consumer: Consumer) -> DeviceLink:
    """A started link through pyusb's real code to ``backend``, connected (within 20 s)."""
    link = DeviceLink(UsbTransport(profile.transport, backend=backend), timing=profile.timing,
                      profile_name=profile.name, on_event=consumer)
    link.start()
    if not link.wait_connected(20):
        link.stop()
        raise AssertionError("the USB link never connected")
    return link


def test_usb_with_noise_on_both_lines_shuffles_and_answers() -> None:
    """``both-ways=1`` on the emulated USB device: the host's OUT transfers are damaged too;
    commands are retransmitted until they get through, and every event comes once."""
    profile = get_profile("emulated-usb-shuffler")
    backend = EmulatedUsbBackend(build_device(profile, seed=2, speed=INF),
                                 faults=FaultSpec.parse("corrupt=0.01,drop=0.002,both-ways=1,seed=3"))
    consumer = Consumer()
    link = _usb_link(profile, backend, consumer)
    try:
        for i in range(3):
            assert isinstance(link.request(StatusRequest()), StatusReply)
            link.request(Shuffle(8))
            assert wait_until(lambda: len(consumer.of(ShuffleDone)) >= i + 1, 30)
        assert [d.card_count for d in consumer.of(ShuffleDone)] == [416] * 3
        counters = [e.counter for e in consumer.events]
        assert counters == sorted(set(counters))
        assert backend.host_line is not None and backend.host_line.corrupted + backend.host_line.dropped > 0
    finally:
        link.stop()


def test_usb_through_pyusb_real_code_with_timeouts_unplug_and_replug() -> None:
    profile = get_profile("emulated-usb-shuffler")
    shuffler = build_device(profile, seed=2, speed=INF)
    backend = EmulatedUsbBackend(shuffler)
    consumer = Consumer()
    link = _usb_link(profile, backend, consumer)
    try:
        assert link.identity.serial == profile.transport.serial_number
        assert isinstance(link.request(StatusRequest()), StatusReply)
        for i in range(6):
            link.request(Shuffle(8))
            assert wait_until(lambda: len(consumer.of(ShuffleDone)) >= i + 1, 20)
            if i in (1, 3):
                backend.unplug()  # every call now raises USBError errno 19
                assert wait_until(lambda: link.state.value != "connected", 10)
                backend.replug()
                assert link.wait_connected(20)
        done = consumer.of(ShuffleDone)
        assert [d.card_count for d in done] == [416] * 6
        counters = [e.counter for e in consumer.events]
        assert counters == list(range(1, len(counters) + 1))
        assert link.stats["sessions"] >= 3
    finally:
        link.stop()


def test_usb_read_timeout_is_a_quiet_line_not_an_error() -> None:
    profile = get_profile("emulated-usb-shuffler")
    backend = EmulatedUsbBackend(build_device(profile, speed=INF))
    t = UsbTransport(profile.transport, backend=backend)
    t.open()
    try:
        assert t.read(0.05) == b""
    finally:
        t.close()


def test_a_link_from_a_profile_refuses_a_device_without_its_cover_card_sensor() -> None:
    """``DeviceLink.from_profile`` holds the device to its profile's capabilities (a firmware
    review: IDENTITY's were logged, not checked): an emulated shoe built from a profile without a
    cover card sensor, on a link whose profile declares one, is refused at the handshake, in words
    naming what it lacks."""
    import dataclasses

    declared = get_profile("emulated-shoe")
    assert declared.capabilities.cover_card_sensor
    without = dataclasses.replace(declared, capabilities=dataclasses.replace(declared.capabilities, cover_card_sensor=False))
    server = PtyServer(build_device(without, seed=1, speed=INF)).start()
    reasons: list[str] = []
    link = DeviceLink.from_profile(declared, server.port, on_event=Consumer(),
                                   on_state=lambda state, reason: reasons.append(reason or ""))
    try:
        link.start()
        assert wait_until(lambda: any("lacks what this link's profile declares (cover_card_sensor)" in r for r in reasons))
        assert link.identity is None
    finally:
        link.stop()
        server.close()
