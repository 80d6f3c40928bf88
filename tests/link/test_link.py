"""DeviceLink over real parts: a pty opened by pyserial, the real protocol core, a scripted device.

No test asserts a duration: waits are conditions with a generous deadline that only turns a hang
into a failure.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge.emulator.faults import FaultSpec
from firmware_bridge.errors import (
    CommandFailed,
    CommandInterrupted,
    CommandTimeout,
    NotConnected,
)
from firmware_bridge.link import Backoff, DeviceLink, EventSequencer, LinkEvent, LinkState
from firmware_bridge.link.sequencer import BUFFERED, DUPLICATE, OVERFLOW, QUEUED
from firmware_bridge.profiles import Timing, parse_profile
from firmware_bridge.protocol import (
    Ack,
    CardRead,
    DeviceConnection,
    GateLock,
    NakCode,
    Shuffle,
    StatusReply,
    StatusRequest,
    Sync,
)
from firmware_bridge.transport import SerialTransport

from .fake_device import FakeDevice, card, damaged, default_identity

DEADLINE = 60.0  # seconds before a wait is declared hung (never a performance limit)

TIMING = Timing(response_timeout_ms=200, heartbeat_interval_ms=300, retries=3,
                reconnect_min_ms=10, reconnect_max_ms=200)


def wait_for(predicate: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


class Sink:
    """A consumer: records events; can fail on chosen counters (once each) or block."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[LinkEvent] = []
        self.fail_once: set[int] = set()
        self.failures = 0
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def __call__(self, event: LinkEvent) -> None:
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(DEADLINE)
        if event.counter in self.fail_once:
            self.fail_once.discard(event.counter)
            self.failures += 1
            raise RuntimeError(f"journal unavailable for {event.counter}")
        with self.lock:
            self.events.append(event)

    def __len__(self) -> int:
        with self.lock:
            return len(self.events)

    def messages(self) -> list[Any]:
        with self.lock:
            return [e.message for e in self.events]


class States:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[tuple[LinkState, str | None]] = []

    def __call__(self, state: LinkState, reason: str | None) -> None:
        with self.lock:
            self.seen.append((state, reason))

    def states(self) -> list[LinkState]:
        with self.lock:
            return [s for s, _ in self.seen]

    def reasons(self) -> str:
        with self.lock:
            return "\n".join(str(r) for _, r in self.seen)


@dataclass
class Rig:
    device: FakeDevice
    link: DeviceLink
    sink: Sink
    states: States


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(*, device: FakeDevice | None = None, start: bool = True, plugged: bool = True,
             **link_kwargs: Any) -> Rig:
        dev = device or FakeDevice(tmp_path)
        if not dev._thread.is_alive():
            dev.start(plugged=plugged)
        sink, states = Sink(), States()
        link_kwargs.setdefault("timing", TIMING)
        link_kwargs.setdefault("on_event", sink)
        link = DeviceLink(SerialTransport(str(dev.path)), on_state=states, **link_kwargs)
        rig = Rig(dev, link, sink, states)
        made.append(rig)
        if start:
            link.start()
        return rig

    yield make
    for rig in made:
        rig.link.stop()
        rig.device.stop()


def connected(rig: Rig) -> Rig:
    assert rig.link.wait_connected(DEADLINE), rig.states.reasons()
    return rig


# --- handshake, requests ---------------------------------------------------------------------

def test_handshake(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    dev, link = rig.device, rig.link
    assert link.state is LinkState.CONNECTED
    assert link.identity == dev.identity
    assert link.name == "SN-TEST-1"  # no profile name given: the serial number
    assert isinstance(link.last_status, StatusReply)
    wait_for(lambda: len(rig.states.states()) >= 2, "on_state reports")  # after the change
    assert rig.states.states()[:2] == [LinkState.CONNECTING, LinkState.CONNECTED]
    with dev.lock:
        assert dev.received["Sync"] >= 1 and dev.received["Hello"] >= 1
        assert dev.received["StatusRequest"] >= 1
    link.stop()
    assert link.state is LinkState.CLOSED
    assert rig.states.states()[-1] is LinkState.CLOSED
    link.stop()  # idempotent


def test_request_reply(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    status = rig.link.request(StatusRequest())
    assert isinstance(status, StatusReply)
    assert rig.link.request(Shuffle(decks=8)) == Ack()
    with rig.device.lock:
        assert rig.device.executed["Shuffle"] == 1


def test_concurrent_callers_are_serialized(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            for _ in range(50):
                assert isinstance(rig.link.request(StatusRequest()), StatusReply)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=caller) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert not errors
    with rig.device.lock:
        assert rig.device.executed["StatusRequest"] >= 200


def test_nak_raises_command_failed(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    rig.device.naks[Shuffle] = (NakCode.DOOR_OPEN, "door open")
    with pytest.raises(CommandFailed) as info:
        rig.link.request(Shuffle(decks=8))
    assert info.value.code == NakCode.DOOR_OPEN and info.value.text == "door open"
    assert isinstance(info.value.command, Shuffle)
    assert rig.link.state is LinkState.CONNECTED  # a refusal is not a link problem
    del rig.device.naks[Shuffle]
    assert rig.link.request(Shuffle(decks=8)) == Ack()


def test_lost_reply_is_retransmitted_and_executed_once(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    dev = rig.device
    dev.drop_replies[Shuffle] = 1  # the device executes SHUFFLE but its ACK never arrives
    assert rig.link.request(Shuffle(decks=6)) == Ack()
    with dev.lock:
        assert dev.executed["Shuffle"] == 1      # executed once
        assert dev.received["Shuffle"] >= 2      # ... though it arrived (at least) twice
        assert dev.replayed >= 1                 # the retransmission got the replayed reply
    assert rig.link.stats["retransmissions"] >= 1


def test_requests_are_refused_while_not_connected(rig_factory: Callable[..., Rig]) -> None:
    rig = rig_factory(plugged=False)
    with pytest.raises(NotConnected):
        rig.link.request(StatusRequest())
    with pytest.raises(ValueError):
        rig.link.request(Sync())  # the link's own command
    rig.link.stop()


def test_all_attempts_time_out(rig_factory: Callable[..., Rig]) -> None:
    quiet = Timing(response_timeout_ms=200, heartbeat_interval_ms=600_000, retries=3,
                   reconnect_min_ms=10, reconnect_max_ms=200)  # no heartbeat gets there first
    rig = connected(rig_factory(timing=quiet))
    rig.device.mute = True  # the device hears but never answers
    with pytest.raises(CommandTimeout) as info:
        rig.link.request(Shuffle(decks=8))
    assert info.value.attempts == TIMING.retries + 1
    assert isinstance(info.value, TimeoutError)
    wait_for(lambda: LinkState.DISCONNECTED in rig.states.states(), "link marked down")
    rig.device.mute = False
    assert rig.link.wait_connected(DEADLINE)


def test_command_in_flight_at_unplug_fails_and_is_not_resent(
        rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    dev = rig.device

    def pull_the_plug(command: Any) -> None:
        if isinstance(command, Shuffle):
            dev._unplug()  # executed, but the cable is gone before the ACK
        return None

    dev.on_command = pull_the_plug
    with pytest.raises(CommandInterrupted) as info:
        rig.link.request(Shuffle(decks=8))
    assert isinstance(info.value, ConnectionError)
    dev.on_command = None
    dev.plug()
    assert rig.link.wait_connected(DEADLINE)
    heartbeats = dev.executed["Heartbeat"]
    wait_for(lambda: dev.executed["Heartbeat"] >= heartbeats + 2, "heartbeats after reconnect")
    with dev.lock:
        assert dev.executed["Shuffle"] == 1  # never run a second time by the link


# --- heartbeat, reconnect --------------------------------------------------------------------

def test_heartbeat_when_idle(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    wait_for(lambda: rig.device.executed["Heartbeat"] >= 3, "three heartbeats")
    assert rig.link.stats["heartbeats"] >= 2


def test_missed_heartbeat_marks_link_down_then_reconnects(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    rig.device.mute = True
    wait_for(lambda: LinkState.DISCONNECTED in rig.states.states(), "link marked down")
    assert "HEARTBEAT got no reply" in rig.states.reasons()
    rig.device.mute = False
    assert rig.link.wait_connected(DEADLINE)


def test_reconnect_after_unplug_and_replug(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    for _ in range(3):
        rig.device.unplug()
        wait_for(lambda: rig.link.state is not LinkState.CONNECTED, "link down after unplug")
        rig.device.plug()
        assert rig.link.wait_connected(DEADLINE)
        assert isinstance(rig.link.request(StatusRequest()), StatusReply)
    assert rig.link.stats["sessions"] >= 4


def test_backoff_doubles_up_to_the_maximum(rig_factory: Callable[..., Rig]) -> None:
    delays: list[float] = []
    release = threading.Event()

    def sleep(seconds: float) -> None:
        delays.append(seconds)
        if len(delays) >= 7:
            release.wait(DEADLINE)

    timing = Timing(response_timeout_ms=200, heartbeat_interval_ms=300, retries=3,
                    reconnect_min_ms=10, reconnect_max_ms=100)
    rig = rig_factory(plugged=False, timing=timing, sleep=sleep)
    wait_for(lambda: len(delays) >= 7, "seven backoff delays")
    assert delays[:7] == [0.01, 0.02, 0.04, 0.08, 0.1, 0.1, 0.1]
    assert rig.link.state is LinkState.DISCONNECTED
    assert "connect failed" in rig.states.reasons()
    release.set()
    rig.link.stop()


def test_stop_during_reconnect_returns_promptly(rig_factory: Callable[..., Rig]) -> None:
    timing = Timing(response_timeout_ms=200, heartbeat_interval_ms=300, retries=3,
                    reconnect_min_ms=600_000, reconnect_max_ms=600_000)
    rig = connected(rig_factory(timing=timing))
    rig.device.unplug()
    wait_for(lambda: rig.link.state is LinkState.DISCONNECTED, "disconnected")
    stopper = threading.Thread(target=rig.link.stop)
    stopper.start()
    stopper.join(DEADLINE)  # the backoff is 10 minutes: returning at all means it was cut short
    assert not stopper.is_alive()
    assert rig.link.state is LinkState.CLOSED
    assert not rig.link.transport.is_open


def test_stop_interrupts_a_waiting_request(rig_factory: Callable[..., Rig]) -> None:
    timing = Timing(response_timeout_ms=600_000, heartbeat_interval_ms=600_000, retries=0,
                    reconnect_min_ms=10, reconnect_max_ms=100)
    rig = connected(rig_factory(timing=timing))
    rig.device.mute = True
    errors: list[BaseException] = []

    def call() -> None:
        try:
            rig.link.request(StatusRequest())
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    wait_for(lambda: rig.device.received["StatusRequest"] >= 2, "the request reached the device")
    rig.link.stop()
    caller.join(DEADLINE)
    assert not caller.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], CommandInterrupted)


def test_serial_number_change_is_refused(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    rig.device.unplug()
    rig.device.plug(identity=default_identity(serial="SN-OTHER"))
    wait_for(lambda: "refused" in rig.states.reasons(), "the other device refused")
    assert rig.link.state is not LinkState.CONNECTED
    assert rig.link.identity is not None and rig.link.identity.serial == "SN-TEST-1"
    rig.device.unplug()
    rig.device.plug(identity=default_identity(serial="SN-TEST-1"))
    assert rig.link.wait_connected(DEADLINE)


def test_unsupported_protocol_version_is_refused(tmp_path: Path,
                                                 rig_factory: Callable[..., Rig]) -> None:
    device = FakeDevice(tmp_path, identity=default_identity(version=2))
    rig = rig_factory(device=device)
    wait_for(lambda: "protocol version 2" in rig.states.reasons(), "version refused")
    assert rig.link.state is not LinkState.CONNECTED
    rig.link.stop()


# --- events ----------------------------------------------------------------------------------

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


def emit_damaged(device: FakeDevice, event: CardRead) -> None:
    """Emit ``event`` with one byte of its frame changed on the wire (the device keeps it)."""
    with device.lock:
        data = device.conn.send(event)
        device.emitted.append(replace(event, counter=device.conn.last_event_counter))
        device._write(damaged(data))


def test_a_damaged_event_is_asked_for_at_once_not_at_the_next_heartbeat(
        rig_factory: Callable[..., Rig]) -> None:
    """The last event of a burst arrives damaged (nothing after it shows a gap) and the idle
    heartbeat is an hour away: the frame the decoder dropped makes the link ask (HEARTBEAT, whose
    reply shows the counter, then RESEND_EVENTS), so the event arrives long before."""
    timing = replace(TIMING, heartbeat_interval_ms=3_600_000)
    rig = connected(rig_factory(timing=timing))
    rig.device.emit(card(0))
    wait_for(lambda: len(rig.sink) == 1, "the first event")
    emit_damaged(rig.device, card(1))
    wait_for(lambda: len(rig.sink) == 2, "the damaged event, resent")
    assert rig.sink.messages() == rig.device.emitted
    stats = rig.link.stats
    assert stats["frames_dropped"] >= 1 and stats["probes"] >= 1 and stats["resend_requests"] >= 1


def test_a_damaged_reply_is_asked_for_again_at_once_and_the_command_runs_once(
        rig_factory: Callable[..., Rig]) -> None:
    """The reply to SHUFFLE arrives damaged and the reply timeout is longer than this test may
    wait: the damaged frame makes the link send the same bytes again at once, the device replays
    its reply (docs/protocol.md D3) and does not shuffle twice."""
    rig = connected(rig_factory())
    rig.device.damage_replies[Shuffle] = 1
    result: list[object] = []
    caller = threading.Thread(target=lambda: result.append(rig.link.request(Shuffle(decks=8), timeout=3600)),
                              daemon=True)
    caller.start()
    wait_for(lambda: bool(result), "the reply")
    assert result == [Ack()]
    assert rig.device.executed["Shuffle"] == 1 and rig.device.replayed == 1
    assert rig.link.stats["early_retransmissions"] == 1 and rig.link.stats["timeouts"] == 0


def test_resume_from_a_journal_position(tmp_path: Path, rig_factory: Callable[..., Rig]) -> None:
    device = FakeDevice(tmp_path)
    for i in range(10):
        device.emit(card(i))  # not plugged yet: all kept
    rig = connected(rig_factory(device=device, last_delivered=(7, 6)))
    wait_for(lambda: len(rig.sink) >= 4, "events 7..10")
    assert [e.counter for e in rig.sink.events] == [7, 8, 9, 10]
    wait_for(lambda: device.unacknowledged() == 0, "all acknowledged")


def test_epoch_change_restarts_counters(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    for i in range(5):
        rig.device.emit(card(i))
    wait_for(lambda: len(rig.sink) >= 5, "5 events")
    wait_for(lambda: rig.device.unacknowledged() == 0, "acknowledged")
    rig.device.unplug()
    rig.device.plug(new_epoch=8)  # the counter restarted at 1
    for i in range(3):
        rig.device.emit(card(100 + i))
    wait_for(lambda: len(rig.sink) >= 8, "3 events of the new epoch")
    assert [(e.epoch, e.counter) for e in rig.sink.events] == (
        [(7, c) for c in range(1, 6)] + [(8, c) for c in range(1, 4)])
    wait_for(lambda: rig.device.unacknowledged() == 0, "new epoch acknowledged")


def test_an_epoch_change_and_its_lost_events_are_reported_to_the_host(
        tmp_path: Path, rig_factory: Callable[..., Rig]) -> None:
    """The host must learn that the device restarted its counter (its memory is gone) and which
    events went with it: ``CONNECTED`` says so, with ``identity`` already the new device's."""
    device = FakeDevice(tmp_path)
    # Events 1 and 2 were acknowledged by someone else: 3..5 wait behind a gap that never fills.
    stored = [replace(card(i), counter=i + 1) for i in range(5)]
    device.conn = DeviceConnection(device.identity, next_event_counter=6,
                                   unacknowledged=stored[2:], last_acknowledged_event=2)
    seen_at_connect: list[tuple[str | None, int]] = []
    rig = connected(rig_factory(device=device))
    wait_for(lambda: rig.link.stats["events_buffered"] == 3, "events 3..5 wait behind the gap")
    states = rig.states
    wait_for(lambda: LinkState.CONNECTED in states.states(), "the first CONNECTED reported")

    def observe(state: LinkState, reason: str | None) -> None:
        if state is LinkState.CONNECTED:
            seen_at_connect.append((reason, rig.link.identity.event_epoch))
        states(state, reason)

    rig.link._reporter.on_state = observe
    device.unplug()
    device.plug(new_epoch=8)
    wait_for(lambda: any(r and "epoch changed from 7 to 8" in r for r, _ in seen_at_connect), "the epoch change")
    assert "events 1-2 of event epoch 7 never arrived" in states.reasons()
    assert [e for r, e in seen_at_connect if r and "epoch changed" in r] == [8]
    assert rig.link.stats["epoch_changes"] == 1
    device.unplug()
    device.plug()                      # the same epoch again: a plain reconnect says nothing
    wait_for(lambda: len(seen_at_connect) >= 2, "the reconnect")
    assert seen_at_connect[-1] == (None, 8), seen_at_connect


def test_unrecoverable_gap_waits_for_the_host_decision(tmp_path: Path,
                                                       rig_factory: Callable[..., Rig]) -> None:
    device = FakeDevice(tmp_path)
    # Events 1 and 2 were acknowledged by someone else: the device no longer has them.
    stored = [replace(card(i), counter=i + 1) for i in range(5)]
    device.conn = DeviceConnection(device.identity, next_event_counter=6,
                                   unacknowledged=stored[2:], last_acknowledged_event=2)
    rig = connected(rig_factory(device=device))
    wait_for(lambda: "not recoverable" in rig.states.reasons(), "the loss reported")
    wait_for(lambda: rig.link.stats["resend_requests"] >= 2, "resends while the gap lasts")
    assert len(rig.sink) == 0  # never out of order
    assert rig.link.accept_gap() == 2
    wait_for(lambda: len(rig.sink) >= 3, "events 3..5")
    assert rig.sink.messages() == stored[2:]


def test_stream_with_line_faults_and_unplugs(tmp_path: Path,
                                             rig_factory: Callable[..., Rig]) -> None:
    """2,000 events; 1 % of bytes corrupted, random byte drops and duplicated frames in both
    directions; four unplug/replug cycles (one a power cycle) during the stream. The consumer
    must see exactly the device's sequence."""
    faults = FaultSpec(corrupt=0.01, drop=0.002, dup=0.02, seed=20240611)
    device = FakeDevice(tmp_path, faults_out=faults, faults_in=faults)
    timing = Timing(response_timeout_ms=100, heartbeat_interval_ms=100, retries=4,
                    reconnect_min_ms=10, reconnect_max_ms=100)
    rig = connected(rig_factory(device=device, timing=timing))
    total = 2000
    cycles = {300: {}, 800: {"power_cycle": True}, 1300: {}, 1800: {}}
    for i in range(total):
        device.emit(card(i))
        if i in cycles:
            device.unplug()
            for _ in range(3):
                time.sleep(0.01)
            device.plug(**cycles[i])
        if i % 4 == 3:
            time.sleep(0.001)  # a shoe deals a few cards a second; this is still far faster
    wait_for(lambda: len(rig.sink) >= total, f"{total} events", deadline=180)
    wait_for(lambda: device.unacknowledged() == 0, "all acknowledged", deadline=180)
    assert rig.sink.messages() == device.emitted
    assert [e.counter for e in rig.sink.events] == list(range(1, total + 1))
    stats = rig.link.stats
    assert stats["frames_dropped"] > 0 and stats["resend_requests"] > 0  # the faults did bite
    assert device.plugs == 5
    assert device.faults_out is not None and device.faults_out.corrupted > 0


# --- the pure parts --------------------------------------------------------------------------

def test_sequencer_orders_and_deduplicates() -> None:
    seq = EventSequencer(profile_name="d")
    with pytest.raises(RuntimeError):
        seq.offer(card(0))
    seq.set_epoch(1)
    ev = [replace(card(i), counter=i + 1) for i in range(6)]
    assert seq.offer(ev[0]) == QUEUED
    assert seq.offer(ev[2]) == BUFFERED
    assert seq.gap and seq.missing() == [(2, 2)]
    assert seq.offer(ev[2]) == DUPLICATE
    assert seq.offer(ev[1]) == QUEUED  # releases 3
    assert not seq.gap and seq.queued == 3
    assert seq.offer(ev[0]) == DUPLICATE
    seq.note_highest(6)
    assert seq.missing() == [(4, 6)]
    delivered = []
    while (head := seq.peek()) is not None:
        delivered.append(head.counter)
        seq.commit(head)
    assert delivered == [1, 2, 3] and seq.last_delivered == (1, 3)
    assert seq.delivered_in_epoch() == 3
    assert seq.offer(ev[4]) == BUFFERED
    assert seq.accept_gap() == 2  # 4 and 6 given up; 5 delivered
    assert [seq.peek().counter] == [5]  # type: ignore[union-attr]


def test_sequencer_epoch_change_and_overflow() -> None:
    seq = EventSequencer((1, 10), max_buffered=2)
    assert seq.epoch == 1 and seq.queued == 10
    r = replace
    assert seq.offer(r(card(0), counter=5)) == DUPLICATE
    assert seq.offer(r(card(0), counter=11)) == QUEUED
    assert seq.offer(r(card(0), counter=13)) == BUFFERED
    assert not seq.full  # events behind a gap never fill it: only a resend can close the gap
    assert seq.offer(r(card(0), counter=14)) == OVERFLOW  # too far past the gap
    assert seq.set_epoch(2) == [(12, 12), (14, 14)]  # lost with the old epoch
    assert seq.peek() is not None and seq.peek().epoch == 1  # type: ignore[union-attr]
    seq.commit(seq.peek())  # type: ignore[arg-type]
    assert seq.delivered_in_epoch() == 0  # the last delivered belongs to the old epoch
    assert seq.offer(r(card(0), counter=1)) == QUEUED
    with pytest.raises(ValueError):
        EventSequencer((1, -1))


def test_backoff() -> None:
    b = Backoff(0.1, 0.5)
    assert [b.next() for _ in range(5)] == [0.1, 0.2, 0.4, 0.5, 0.5]
    b.reset()
    assert b.next() == 0.1
    with pytest.raises(ValueError):
        Backoff(1.0, 0.5)


def test_link_from_profile(tmp_path: Path) -> None:
    profile = parse_profile({"device": {"vendor": "v", "model": "m", "kind": "shoe",
                                        "protocol_version": 1},
                             "transport": {"type": "serial"},
                             "timing": {"response_timeout_ms": 300, "retries": 2}},
                            "test.toml", "table-7-shoe")
    link = DeviceLink.from_profile(profile, str(tmp_path / "tty"))
    assert link.name == "table-7-shoe"
    assert link.reply_timeout == 0.3 and link.attempts == 3
    assert isinstance(link.transport, SerialTransport)
    assert link.state is LinkState.DISCONNECTED
    link.stop()
    assert link.state is LinkState.CLOSED


def test_gate_lock_is_a_plain_request(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    assert rig.link.request(GateLock()) == Ack()


def test_stop_from_the_event_callback(rig_factory: Callable[..., Rig]) -> None:
    links: list[DeviceLink] = []
    rig = connected(rig_factory(on_event=lambda event: links[0].stop()))  # the consumer stops it
    links.append(rig.link)
    rig.device.emit(card(0))
    wait_for(lambda: rig.link.state is LinkState.CLOSED, "closed by its own callback")
    rig.link.stop()  # and from outside: nothing left to do
    assert not rig.link.transport.is_open
    with pytest.raises(RuntimeError):
        rig.link.start()
