"""DeviceLink over real parts (a pty opened by pyserial, the real protocol core, a scripted device):
getting back device events that went missing: a damaged event asked for at once, a resume from a
journal position, an event epoch change and the events lost with it, a gap that cannot be
recovered (the host decides), and a long stream over a faulty line with unplugs.

No test asserts a duration: waits are conditions with a generous deadline that only turns a hang
into a failure.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from firmware_bridge.emulator.faults import FaultSpec
from firmware_bridge.link import LinkState
from firmware_bridge.profiles import Timing
from firmware_bridge.protocol import CardRead, DeviceConnection, EventAck, NakCode
from firmware_bridge.protocol import device_connection as dc

from .fake_device import FakeDevice, card, damaged, default_identity
from .rig import TIMING, Rig, connected, wait_for


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


def test_damaged_events_one_after_another_are_each_repaired_without_waiting_a_reply_timeout(
        rig_factory: Callable[..., Rig]) -> None:
    """Two events arrive damaged in quick succession (line noise at a busy table). Each was
    repaired only a reply timeout after the one before (the probe and the RESEND_EVENTS were
    spaced by it): a table at --speed max with 1 % of bytes corrupted waited 250 ms per damaged
    card. Now a probe may follow another after a tenth of the reply timeout, and a RESEND_EVENTS
    about a gap no request has covered goes at once. The link's clock is held still but for that
    tenth, so the old spacing never came due and the second event was never repaired."""
    now = [1000.0]
    timing = replace(TIMING, heartbeat_interval_ms=3_600_000)
    rig = connected(rig_factory(timing=timing, clock=lambda: now[0]))
    rig.device.emit(card(0))
    wait_for(lambda: len(rig.sink) == 1, "the first event")
    emit_damaged(rig.device, card(1))
    wait_for(lambda: len(rig.sink) == 2, "the first damaged event, resent")
    now[0] += timing.response_timeout_ms / 1000 / 10 + 0.001  # a tenth of the reply timeout: not a whole one
    emit_damaged(rig.device, card(2))
    wait_for(lambda: len(rig.sink) == 3, "the second damaged event, resent")
    assert rig.sink.messages() == rig.device.emitted
    assert rig.link.stats["probes"] >= 2 and rig.link.stats["resend_requests"] >= 2


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
    # Events 1 and 2 were acknowledged by someone else (given up at the handshake); the device
    # lost event 3 (a device fault): 4 and 5 wait behind a gap that never fills.
    stored = [replace(card(i), counter=i + 1) for i in range(5)]
    device.conn = DeviceConnection(device.identity, next_event_counter=6,
                                   unacknowledged=stored[3:], last_acknowledged_event=2)
    seen_at_connect: list[tuple[str | None, int]] = []
    rig = connected(rig_factory(device=device))
    wait_for(lambda: rig.link.stats["events_buffered"] == 2, "events 4..5 wait behind the gap")
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
    # In the connect's own report, which the table journals (reported apart while the link was
    # still connecting, it never reached the journal: a device-control review).
    assert any(r and "events 3 of event epoch 7 never arrived and are lost with it" in r for r, _ in seen_at_connect)
    assert [e for r, e in seen_at_connect if r and "epoch changed" in r] == [8]
    assert rig.link.stats["epoch_changes"] == 1
    device.unplug()
    device.plug()                      # the same epoch again: a plain reconnect says nothing
    wait_for(lambda: len(seen_at_connect) >= 2, "the reconnect")
    assert seen_at_connect[-1] == (None, 8), seen_at_connect


def test_events_the_journal_holds_but_the_device_still_keeps_are_acknowledged(
        tmp_path: Path, rig_factory: Callable[..., Rig]) -> None:
    """A crash between the journal's commit and EVENT_ACK: the journal holds events 1-5 (the seed),
    the device still keeps them. In hand-off mode (the table runner's) they were resent at every
    connect, dropped as duplicates and never acknowledged, so the device kept them for ever (a
    device-control review); the seed is the consumer's word that they are stored."""
    device = FakeDevice(tmp_path)
    for i in range(5):
        device.emit(card(i))
    rig = connected(rig_factory(device=device, auto_ack=False, last_delivered=(7, 5),
                                last_delivered_serial="SN-TEST-1"))
    wait_for(lambda: device.unacknowledged() == 0, "events 1-5 acknowledged")
    assert device.last_acknowledged() == 5
    assert len(rig.sink) == 0  # not handed over again
    device.emit(card(5))
    wait_for(lambda: len(rig.sink) == 1, "event 6")
    assert [e.counter for e in rig.sink.events] == [6]
    assert device.unacknowledged() == 1  # until the consumer says it stored it


def test_an_event_ack_refused_busy_is_sent_again(tmp_path: Path, rig_factory: Callable[..., Rig],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """NAK BUSY means "ask again later" (docs/protocol.md): a device writing its event store
    refuses one EVENT_ACK so. The link took any NAK to it as final and never sent it again, so the
    device kept the events (the last of a shoe: until the next was acknowledged; a device-control
    review). It is sent again after a reply timeout, and not reported as an error."""
    answer = dc._AUTO_HANDLERS[EventAck]
    refusals = {"left": 1}

    def busy_once(conn: DeviceConnection, seq: int, command: EventAck, cache: object) -> object:
        if refusals["left"]:
            refusals["left"] -= 1
            return conn._nak(seq, command, NakCode.BUSY, "writing the event store", cache)
        return answer(conn, seq, command, cache)

    monkeypatch.setitem(dc._AUTO_HANDLERS, EventAck, busy_once)
    rig = connected(rig_factory(auto_ack=False))
    for i in range(3):
        rig.device.emit(card(i))
    wait_for(lambda: len(rig.sink) == 3, "three events")
    rig.link.acknowledge(3, rig.sink.events[-1].epoch)
    wait_for(lambda: rig.device.unacknowledged() == 0, "the refused acknowledgement sent again")
    # the device forgets the events before its ACK reaches the link, which counts it then
    wait_for(lambda: rig.link.stats["acks"] == 1, "the acknowledgement's ACK")
    assert refusals["left"] == 0
    assert "refused" not in rig.states.reasons()


def test_another_unit_under_the_seeds_epoch_number_has_its_events_taken_from_its_first(
        tmp_path: Path, rig_factory: Callable[..., Rig]) -> None:
    """The journal's last event from the port came from unit SN-OLD (epoch 1, counter 50); the
    unit now on the port is SN-NEW, whose counter space is its own though its epoch number is
    also 1 (a protocol only asks a unit to change its epoch when its own counter restarts). Its
    first events are not the old unit's 1-50: all are delivered, and the connect says another
    unit answers. They were dropped as duplicates (a device-control review)."""
    device = FakeDevice(tmp_path, identity=default_identity(serial="SN-NEW", epoch=1))
    for i in range(6):
        device.emit(card(i))
    rig = connected(rig_factory(device=device, auto_ack=False, last_delivered=(1, 50),
                                last_delivered_serial="SN-OLD"))
    wait_for(lambda: len(rig.sink) >= 6, "the new unit's six events")
    assert [(e.serial, e.epoch, e.counter) for e in rig.sink.events] == [("SN-NEW", 1, c) for c in range(1, 7)]
    assert rig.link.stats["events_duplicate"] == 0
    assert ("another unit answers (serial SN-NEW; the events stored last came from SN-OLD): its events are taken "
            "from its first (event epoch 1)") in rig.states.reasons()
    rig.link.acknowledge(6, 1)
    wait_for(lambda: device.unacknowledged() == 0, "the new unit's events acknowledged")  # never the old unit's 50


def test_the_seeds_own_unit_under_its_epoch_is_a_plain_resume(tmp_path: Path,
                                                               rig_factory: Callable[..., Rig]) -> None:
    """The same unit as the seed's, at the seed's epoch: counters up to the seed are duplicates."""
    device = FakeDevice(tmp_path)
    for i in range(6):
        device.emit(card(i))
    rig = connected(rig_factory(device=device, last_delivered=(7, 4), last_delivered_serial="SN-TEST-1"))
    wait_for(lambda: len(rig.sink) >= 2, "events 5..6")
    time.sleep(0.05)
    assert [e.counter for e in rig.sink.events] == [5, 6]
    assert "another unit" not in rig.states.reasons()


def test_events_acknowledged_before_this_host_had_any_are_the_devices_past(tmp_path: Path,
                                                                           rig_factory: Callable[..., Rig]) -> None:
    """Events 1 and 2 were acknowledged by someone else (the device served another journal): it
    no longer has them, and no resend brings them. The link waited for them for ever (a table on
    a new journal beside devices an old one used never dealt, an integrator review); it now takes
    the device's events from 3, in order, and says so as a warning: nothing for anyone to do."""
    device = FakeDevice(tmp_path)
    stored = [replace(card(i), counter=i + 1) for i in range(5)]
    device.conn = DeviceConnection(device.identity, next_event_counter=6,
                                   unacknowledged=stored[2:], last_acknowledged_event=2)
    rig = connected(rig_factory(device=device))
    wait_for(lambda: len(rig.sink) >= 3, "events 3..5")
    assert rig.sink.messages() == stored[2:]
    assert ("events 1-2 of event epoch 7 were acknowledged before this host had any (another journal or host): "
            "its events are taken from 3") in rig.states.reasons()


def test_events_acknowledged_past_what_this_host_stored_are_reported_lost(tmp_path: Path,
                                                                          rig_factory: Callable[..., Rig]) -> None:
    """The journal holds the device's events up to 1 (``last_delivered``), the device says 3 were
    acknowledged: 2 and 3 are in no journal of this host (an older copy restored, or another host
    on the device). An error, and the events after them are delivered."""
    device = FakeDevice(tmp_path)
    stored = [replace(card(i), counter=i + 1) for i in range(5)]
    device.conn = DeviceConnection(device.identity, next_event_counter=6,
                                   unacknowledged=stored[3:], last_acknowledged_event=3)
    rig = connected(rig_factory(device=device, last_delivered=(7, 1)))
    wait_for(lambda: len(rig.sink) >= 2, "events 4..5")
    assert rig.sink.messages() == stored[3:]
    assert ("events 2-3 of event epoch 7 were acknowledged to another host or journal: they are not in this one, "
            "and lost to it") in rig.states.reasons()


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
