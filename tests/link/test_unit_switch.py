"""A unit that answers again after another one (A, then B, then A, under the same epoch number)
takes up where its delivery stood: its events are delivered once, the owner's acknowledgement of
those it handed over is taken, and the connect does not say they were acknowledged elsewhere; the
old epoch's events held behind a gap at an epoch change are delivered or reported lost
(docs/link.md section 6)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from firmware_bridge.link import EventSequencer

from .fake_device import FakeDevice, card, default_identity
from .rig import Rig, connected, wait_for
from .test_delivery_order import EPOCH, Parts


def _answers(parts: Parts, unit: str) -> None:
    """What Supervisor.identity_arrived_locked does when ``unit`` answers under the same epoch number."""
    with parts.lock:
        parts.acks.restart_locked()
        parts.sequencer.set_epoch(EPOCH, unit)


def test_a_unit_that_answers_again_after_another_gets_its_queued_events_once() -> None:
    """docs/link.md section 6, "Exactly once per (epoch, counter)": unit A's events 1-3 wait for a
    slow consumer; B answers, then A again and resends its unacknowledged 1-3. Each key
    (serial, epoch, counter) must reach on_event once (they were delivered twice)."""
    delivered: list[tuple[str, int]] = []
    parts = Parts(lambda e: delivered.append((e.serial, e.counter)), auto_ack=True,
                  sequencer=EventSequencer(profile_name="shoe", serial="UNIT-A"))
    parts.arrive(1, 2, 3)
    _answers(parts, "UNIT-B")
    _answers(parts, "UNIT-A")
    parts.arrive(1, 2, 3)  # RESEND_EVENTS: A resends what it was never told was stored
    while parts.turn():
        pass
    assert delivered == [("UNIT-A", 1), ("UNIT-A", 2), ("UNIT-A", 3)]


def test_the_owners_acknowledgement_of_a_handed_over_event_does_not_raise_when_its_unit_answers_again() -> None:
    """DeviceLink.acknowledge: "Raises ValueError for a counter not handed over yet". A's events 1-3
    were handed over; B answered, then A again; the owner (the table's runner) finishes storing them
    and acknowledges with their epoch and serial. It raised ValueError ("event 3 has not been
    delivered (last: 0)"), which stops the table's runner (runner.py: link.acknowledge is not guarded)."""
    parts = Parts(lambda e: None, auto_ack=False,
                  sequencer=EventSequencer(profile_name="shoe", serial="UNIT-A"))
    parts.arrive(1, 2, 3)
    assert parts.turn()  # handed over to the owner, who is storing them
    _answers(parts, "UNIT-B")
    _answers(parts, "UNIT-A")
    parts.acknowledge(3, EPOCH, "UNIT-A")  # must not raise: event 3 of UNIT-A was handed over
    parts.arrive(1, 2, 3)  # A resends them; the owner finds them stored and acknowledges again
    while parts.turn():
        pass
    parts.acknowledge(3, EPOCH, "UNIT-A")
    assert parts.target() == 3


def test_events_held_behind_a_gap_at_an_epoch_change_are_delivered_or_reported_lost() -> None:
    """docs/link.md section 6, Epoch change: "events of the old epoch already received are still
    delivered first; old-epoch counters that never arrived are lost and reported". Events 3 and 4
    arrived (behind missing 2): they were neither delivered nor in the lost ranges."""
    seq = EventSequencer(profile_name="shoe", serial="UNIT-A")
    seq.set_epoch(7, "UNIT-A")
    for counter in (1, 3, 4):
        seq.offer(replace(card(counter), counter=counter))
    lost = seq.set_epoch(8, "UNIT-A")  # the device's counter restarted
    delivered = []
    while (event := seq.peek()) is not None:
        delivered.append(event.counter)
        seq.commit(event)
    reported = {c for a, b in lost for c in range(a, b + 1)}
    assert {3, 4} <= set(delivered) | reported, (delivered, lost)


def test_a_unit_answering_again_is_not_said_to_have_been_acknowledged_elsewhere(
        tmp_path: Path, rig_factory: Callable[..., Rig]) -> None:
    """docs/link.md section 3 step 4: "acknowledged before this host had any (another journal or
    host)" is for events this host never had. A's events 1-3 were delivered and acknowledged by
    this link; after B, A answers again and the connect's report said exactly that of them."""
    a = FakeDevice(tmp_path, identity=default_identity(serial="UNIT-A"))
    b = FakeDevice(tmp_path, identity=default_identity(serial="UNIT-B"))
    b.start(plugged=False)
    try:
        rig = connected(rig_factory(device=a))
        for i in range(1, 4):
            a.emit(card(i))
        wait_for(lambda: a.last_acknowledged() == 3, "A's events acknowledged")
        a.unplug()
        b.plug()
        wait_for(lambda: rig.link.identity.serial == "UNIT-B" and rig.link.wait_connected(0.01), "B")
        b.unplug()
        a.plug()
        wait_for(lambda: "serial UNIT-A;" in rig.states.reasons() and rig.link.wait_connected(0.01), "A again")
        assert "before this host had any" not in rig.states.reasons()
    finally:
        b.stop()


def test_a_units_events_handed_over_while_another_answered_count_as_handed_when_it_answers_again() -> None:
    """Unit A's queued events are handed over after B answered (they happened first); when A
    answers again the owner's acknowledgement of them is taken: they were handed over, of A's."""
    parts = Parts(lambda e: None, auto_ack=False,
                  sequencer=EventSequencer(profile_name="shoe", serial="UNIT-A"))
    parts.arrive(1, 2, 3)  # queued, not handed over yet
    _answers(parts, "UNIT-B")
    while parts.turn():  # A's events handed over during B's session
        pass
    assert not parts.acknowledge(3, EPOCH, "UNIT-A")  # A is not answering: nothing to tell B
    _answers(parts, "UNIT-A")
    assert parts.acknowledge(3, EPOCH, "UNIT-A")
    assert parts.target() == 3
