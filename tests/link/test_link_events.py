"""DeviceLink over real parts (a pty opened by pyserial, the real protocol core, a scripted device):
device events delivered in order exactly once (also those emitted while unplugged), redelivered
when the consumer raises, and acknowledged only once the consumer returned or, with
``auto_ack=False``, when the consumer acknowledges them (the hand-off on the reader thread).

No test asserts a duration: waits are conditions with a generous deadline that only turns a hang
into a failure.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from firmware_bridge.link import DeviceLink, LinkEvent

from .fake_device import card
from .rig import DEADLINE, Rig, connected, wait_for


def test_events_in_order_exactly_once(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    for i in range(300):
        rig.device.emit(card(i))
    wait_for(lambda: len(rig.sink) >= 300, "300 events")
    assert rig.sink.messages() == rig.device.emitted
    assert [e.counter for e in rig.sink.events] == list(range(1, 301))
    assert {e.epoch for e in rig.sink.events} == {7}
    assert {e.serial for e in rig.sink.events} == {"SN-TEST-1"}
    assert {e.profile_name for e in rig.sink.events} == {"SN-TEST-1"}
    wait_for(lambda: rig.device.unacknowledged() == 0, "all acknowledged")
    assert rig.link.last_delivered == (7, 300)


def test_events_emitted_while_unplugged_arrive_after_replug(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    for i in range(20):
        rig.device.emit(card(i))
    rig.device.unplug()
    for i in range(20, 50):
        rig.device.emit(card(i))  # kept by the device, unacknowledged
    rig.device.plug(power_cycle=True)  # counter and unacknowledged events survive a restart
    wait_for(lambda: len(rig.sink) >= 50, "50 events")
    time.sleep(0.05)
    assert rig.sink.messages() == rig.device.emitted


def test_callback_that_raises_is_redelivered(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    rig.sink.fail_once = {3, 7}
    for i in range(10):
        rig.device.emit(card(i))
    wait_for(lambda: len(rig.sink) >= 10, "10 events")
    assert rig.sink.failures == 2
    assert rig.sink.messages() == rig.device.emitted
    assert "on_event raised for event 7:3" in rig.states.reasons()
    wait_for(lambda: rig.device.unacknowledged() == 0, "all acknowledged")


def test_acknowledgement_only_after_the_callback_returned(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    rig.sink.gate = threading.Event()
    rig.device.emit(card(0))
    assert rig.sink.entered.wait(DEADLINE)
    # The consumer is still storing event 1: heartbeats go on, nothing is acknowledged.
    beats = rig.device.executed["Heartbeat"]
    wait_for(lambda: rig.device.executed["Heartbeat"] >= beats + 2, "heartbeats while blocked")
    assert rig.device.unacknowledged() == 1 and rig.device.last_acknowledged() == 0
    rig.sink.gate.set()
    wait_for(lambda: rig.device.unacknowledged() == 0, "acknowledged after the callback")
    assert rig.device.last_acknowledged() == 1


def test_manual_acknowledgement(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory(auto_ack=False))
    for i in range(5):
        rig.device.emit(card(i))
    wait_for(lambda: len(rig.sink) >= 5, "5 events")
    beats = rig.device.executed["Heartbeat"]
    wait_for(lambda: rig.device.executed["Heartbeat"] >= beats + 2, "heartbeats")
    assert rig.device.unacknowledged() == 5
    with pytest.raises(ValueError):
        rig.link.acknowledge(6)  # not delivered
    assert rig.link.acknowledge(3)
    wait_for(lambda: rig.device.last_acknowledged() == 3, "ack 3")
    assert rig.device.unacknowledged() == 2
    assert not rig.link.acknowledge(5, epoch=99)  # another epoch: ignored
    assert rig.link.acknowledge(5, epoch=7)
    wait_for(lambda: rig.device.unacknowledged() == 0, "ack 5")


def test_hand_off_delivery_runs_on_the_reader_and_is_acknowledged_when_stored(
        rig_factory: Callable[..., Rig]) -> None:
    """``auto_ack=False``: the reader hands each event over itself (no thread in between) and the
    consumer's acknowledgement, even of the event it is being handed, goes out at once. (An event
    that arrives between the link's CONNECTED and the owner having heard it waits for the owner
    and goes out on the deliverer thread: the warm-up event covers that moment.)"""
    threads: list[str] = []
    stored: list[LinkEvent] = []
    links: list[DeviceLink] = []

    def hand_off(event: LinkEvent) -> None:
        threads.append(threading.current_thread().name)
        stored.append(event)
        if event.counter % 2 == 1:  # "stored" at once: acknowledged before on_event returned
            links[0].acknowledge(event.counter, event.epoch)

    rig = connected(rig_factory(auto_ack=False, on_event=hand_off))
    links.append(rig.link)
    rig.device.emit(card(99))
    wait_for(lambda: rig.device.last_acknowledged() == 1, "the warm-up event acknowledged")
    threads.clear()
    for i in range(6):
        rig.device.emit(card(i))
    wait_for(lambda: rig.device.last_acknowledged() == 7, "events 2..7 acknowledged")
    assert [e.message for e in stored] == rig.device.emitted
    assert len(threads) == 6 and all(name.startswith("shoectl-read-") for name in threads), threads
    assert rig.link.stats["callback_errors"] == 0


def test_a_hand_off_that_raises_is_redelivered_in_order(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory(auto_ack=False))
    rig.sink.fail_once = {2}
    for i in range(5):
        rig.device.emit(card(i))
    wait_for(lambda: len(rig.sink) >= 5, "5 events")
    assert rig.sink.failures == 1 and rig.sink.messages() == rig.device.emitted
    assert rig.device.unacknowledged() == 5  # nothing acknowledged by the link itself
    assert rig.link.acknowledge(5)
    wait_for(lambda: rig.device.unacknowledged() == 0, "acknowledged by the consumer")
