"""``EventDeliverer`` with ``Acknowledgements`` and the real sequencer, driven through their public
methods with a fake clock and explicit thread interleavings (no device): what a mutation review of
delivery.py and acknowledgements.py showed no test checked.

- a new session's events wait for its ``CONNECTED`` report, also behind a turn already running,
  and the deliverer waits for the release without spinning (delivery.py ``hold_locked``);
- the supervisor is woken as soon as an event was delivered whose acknowledgement is now due
  (docs/link.md section 6: EVENT_ACK "at once", "not by a timer");
- an acknowledgement is refused for an event that is not inside ``on_event`` (a consumer that
  raised, another unit's, another epoch's): the device would forget events nobody stored;
- the redelivery backoff starts again from its minimum after a success (docs/link.md section 6).

No test asserts a duration: waits are conditions with a generous deadline.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from firmware_bridge.link import EventSequencer, LinkEvent
from firmware_bridge.link.acknowledgements import Acknowledgements
from firmware_bridge.link.backoff import Backoff
from firmware_bridge.link.delivery import EventDeliverer
from firmware_bridge.link.session import Session
from firmware_bridge.protocol import HostConnection
from firmware_bridge.transport import SerialTransport

from .fake_device import card

EPOCH = 7
DEADLINE = 10.0  # seconds before a wait is declared hung (never a performance limit)


class Parts:
    """A link's lock and condition, sequencer, session, acknowledgements and deliverer, wired as
    ``DeviceLink`` wires them (``delivered_locked`` is the acknowledgements' wake-up)."""

    def __init__(self, on_event: Callable[[LinkEvent], None], *, auto_ack: bool = True,
                 sequencer: EventSequencer | None = None) -> None:
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.now = [100.0]
        self.sequencer = sequencer or EventSequencer(profile_name="shoe")
        self.sequencer.set_epoch(EPOCH)
        self.session = Session(1, SerialTransport("loop://"), HostConnection())
        self.session.epoch_confirmed = True
        self.acks = Acknowledgements(self.cond, self.sequencer, lambda: self.session, auto_ack=auto_ack)
        self.reports: list[str] = []
        self.stopping = threading.Event()
        self.deliverer = EventDeliverer(
            self.lock, self.sequencer, on_event, stopping=self.stopping, clock=lambda: self.now[0],
            backoff=Backoff(0.5, 10.0), stats={"callback_errors": 0, "events_delivered": 0},
            report_error=self.reports.append, delivered_locked=self.acks.wake_if_due_locked)

    def arrive(self, *counters: int) -> None:
        with self.lock:
            for counter in counters:
                self.sequencer.offer(replace(card(counter), counter=counter))

    def turn(self) -> bool:
        """What the reader (hand-off mode) or the deliverer thread does: take the turn, deliver."""
        with self.lock:
            took = self.deliverer.take_turn_locked()
        if took:
            self.deliverer.deliver_turn()
        return took

    def acknowledge(self, counter: int, epoch: int | None, serial: str | None = None) -> bool:
        """What ``DeviceLink.acknowledge`` does."""
        with self.lock:
            return self.acks.consumer_acknowledged_locked(counter, epoch, self.deliverer.handing, serial)

    def target(self) -> int:
        with self.lock:
            return self.acks.target_locked()


def test_a_turn_running_at_the_next_sessions_identity_stops_before_that_sessions_events() -> None:
    """delivery.py ``hold_locked``: "A turn already running finishes the event in hand and stops at
    the next one", so the owner hears the session's CONNECTED before any of its events."""
    order: list[str] = []
    entered, gate = threading.Event(), threading.Event()

    def on_event(event: LinkEvent) -> None:
        order.append(f"event {event.counter}")
        if event.counter == 1:
            entered.set()
            assert gate.wait(DEADLINE)

    parts = Parts(on_event)
    parts.arrive(1)
    with parts.lock:
        assert parts.deliverer.take_turn_locked()
    turn = threading.Thread(target=parts.deliverer.deliver_turn)
    turn.start()
    assert entered.wait(DEADLINE)  # a slow consumer stores event 1 while the link reconnects
    with parts.lock:  # the reader accepts the new session's IDENTITY; its event 2 comes during the handshake
        parts.deliverer.hold_locked()
        parts.sequencer.offer(replace(card(2), counter=2))
    gate.set()
    turn.join(DEADLINE)
    assert not turn.is_alive()
    order.append("CONNECTED")  # the supervisor reports the session, then releases delivery
    parts.deliverer.release()
    assert parts.turn()
    assert order == ["event 1", "CONNECTED", "event 2"]


def test_the_deliverer_waits_for_the_release_without_spinning() -> None:
    """While a new session is held, the deliverer thread sleeps (docs/link.md section 2: it
    re-checks "at least every 0.5 s"), it does not take and give back the turn in a loop on the
    link's lock for the whole handshake and the owner's ``on_state(CONNECTED)``."""
    looks = [0]

    class Counting(EventSequencer):
        def peek(self) -> LinkEvent | None:
            looks[0] += 1
            return super().peek()

    delivered: list[int] = []
    parts = Parts(lambda event: delivered.append(event.counter), sequencer=Counting(profile_name="shoe"))
    with parts.lock:
        parts.deliverer.hold_locked()
    parts.arrive(1)
    deliverer = threading.Thread(target=parts.deliverer.run, daemon=True)
    deliverer.start()
    try:
        time.sleep(0.2)  # the handshake's STATUS, the owner's on_state(CONNECTED)
        seen = looks[0]
        assert delivered == []
        assert seen < 20, f"the deliverer looked at the queue {seen} times in 0.2 s while held"
        with parts.lock:
            assert not parts.deliverer.take_turn_locked()  # held: nobody takes a turn
        parts.deliverer.release()
        end = time.monotonic() + DEADLINE
        while not delivered and time.monotonic() < end:
            time.sleep(0.005)
        assert delivered == [1]
    finally:
        with parts.lock:
            parts.stopping.set()
            parts.deliverer.ready.notify_all()
        deliverer.join(DEADLINE)


@pytest.mark.parametrize("auto_ack", [True, False])
def test_the_supervisor_is_woken_as_soon_as_a_delivery_makes_an_acknowledgement_due(auto_ack: bool) -> None:
    """docs/link.md section 6: with ``auto_ack`` EVENT_ACK goes out once ``on_event`` returned; in
    hand-off mode an acknowledgement made inside ``on_event`` goes out "at once ... woken by that
    call, not by a timer" (acknowledgements.py: "else the end of that delivery wakes the
    supervisor"). The supervisor sleeps on the link's condition; nothing else wakes it here."""

    def on_event(event: LinkEvent) -> None:
        if not auto_ack:  # the hand-off consumer stores the event and acknowledges it at once
            assert parts.acknowledge(event.counter, event.epoch)

    parts = Parts(on_event, auto_ack=auto_ack)
    parts.arrive(1)
    waiting, woken = threading.Event(), []

    def supervisor() -> None:
        with parts.cond:
            waiting.set()
            woken.append(parts.cond.wait(DEADLINE))
            woken.append(parts.acks.due_locked())

    thread = threading.Thread(target=supervisor)
    thread.start()
    assert waiting.wait(DEADLINE)
    assert parts.turn()
    thread.join(DEADLINE)
    assert woken == [True, True]  # woken by the delivery, with EVENT_ACK(1) due


def test_an_event_whose_consumer_raised_is_not_acknowledged_until_it_is_handed_over_again() -> None:
    """``handing`` is "the event inside on_event right now": once ``on_event`` raised, the event
    was not handed over (docs/link.md: "Nothing is acknowledged for that event"), so an
    acknowledgement of it is refused, and the redelivery is acknowledged only by the consumer."""
    fail = {2}

    def on_event(event: LinkEvent) -> None:
        if event.counter in fail:
            fail.discard(event.counter)
            raise RuntimeError("journal unavailable")

    parts = Parts(on_event, auto_ack=False)
    parts.arrive(1, 2)
    assert parts.turn()
    assert parts.sequencer.last_delivered == (EPOCH, 1)
    with pytest.raises(ValueError, match="event 2 has not been delivered"):
        parts.acknowledge(2, EPOCH)
    assert parts.deliverer.handing is None  # no event is inside on_event now
    parts.now[0] += 1.0
    assert parts.turn()  # redelivered: on_event returned (handed over), not stored yet
    assert parts.target() == 0


def test_a_late_acknowledgement_of_the_last_units_event_acknowledges_nothing_of_the_next_unit() -> None:
    """Another unit under the same epoch number has counters of its own (docs/link.md section 6):
    the owner's acknowledgement of unit A's last event, made after unit B answered, must not
    acknowledge B's events when they are handed over (the device would forget them unstored)."""
    parts = Parts(lambda event: None, auto_ack=False,
                  sequencer=EventSequencer(profile_name="shoe", serial="UNIT-A"))
    parts.arrive(1, 2, 3)
    assert parts.turn()  # A's events 1-3 handed over; the owner is still storing them
    with parts.lock:  # unit B answers with the same epoch number (Supervisor.identity_arrived_locked)
        parts.acks.restart_locked()
        parts.sequencer.set_epoch(EPOCH, "UNIT-B")
    with pytest.raises(ValueError):
        parts.acknowledge(3, EPOCH)  # the owner's late acknowledgement of A's event 3
    parts.arrive(1, 2, 3)  # B's events
    assert parts.turn()
    assert parts.target() == 0  # handed over, not stored: nothing of B's may be acknowledged


def test_a_late_acknowledgement_naming_the_replaced_unit_acknowledges_nothing_of_the_next_units_events() -> None:
    """The same, with the new unit's events already handed over when the owner's acknowledgement of
    the old unit's event 3 comes (the owner was storing it): by its number it would cover the new
    unit's events 1-3, handed over but not stored. The acknowledgement names its unit (the
    event's ``serial``, as the table's runner gives it) and is ignored."""
    parts = Parts(lambda event: None, auto_ack=False,
                  sequencer=EventSequencer(profile_name="shoe", serial="UNIT-A"))
    parts.arrive(1, 2, 3)
    assert parts.turn()
    with parts.lock:
        parts.acks.restart_locked()
        parts.sequencer.set_epoch(EPOCH, "UNIT-B")
    parts.arrive(1, 2, 3)
    assert parts.turn()  # unit B's events 1-3 handed over, not stored yet
    assert not parts.acknowledge(3, EPOCH, "UNIT-A")
    assert parts.target() == 0
    assert parts.acknowledge(3, EPOCH, "UNIT-B")  # stored: now they may be acknowledged
    assert parts.target() == 3


def test_a_replaced_units_events_delivered_after_the_switch_acknowledge_nothing_of_the_next_unit() -> None:
    """With ``auto_ack``: the replaced unit's events still queued are delivered after another
    unit answered under the same epoch number (docs/link.md: events already received are
    delivered first), but they are no delivery of the new unit's counters: EVENT_ACK(3) to the new
    unit would make it forget its events 1-3 before any of them was delivered (a review: it did)."""
    delivered: list[tuple[str, int]] = []
    parts = Parts(lambda event: delivered.append((event.serial, event.counter)), auto_ack=True,
                  sequencer=EventSequencer(profile_name="shoe", serial="UNIT-A"))
    parts.arrive(1, 2, 3)
    with parts.lock:
        parts.acks.restart_locked()
        parts.sequencer.set_epoch(EPOCH, "UNIT-B")
    while parts.turn():
        pass
    assert delivered == [("UNIT-A", 1), ("UNIT-A", 2), ("UNIT-A", 3)]
    assert parts.target() == 0
    parts.arrive(1, 2)  # the new unit's own
    while parts.turn():
        pass
    assert delivered[3:] == [("UNIT-B", 1), ("UNIT-B", 2)] and parts.target() == 2


def test_an_old_epochs_event_in_hand_does_not_count_as_handed_over_in_the_new_epoch() -> None:
    """acknowledgements.py: ``handing`` counts only in the current epoch. Epoch 7's event 10,
    redelivered after the device's epoch became 8 (old events are still delivered first), is
    acknowledged from inside ``on_event`` without an epoch: that says nothing of epoch 8's counters,
    so epoch 8's events are not acknowledged before the consumer stored them."""
    parts = Parts(lambda event: None, auto_ack=False)
    parts.arrive(*range(1, 11))
    with parts.lock:
        for _ in range(9):
            parts.sequencer.commit(parts.sequencer.peek())  # type: ignore[arg-type]
        assert parts.acks.consumer_acknowledged_locked(9, EPOCH, None)
        parts.acks.restart_locked()  # IDENTITY: event epoch 8
        parts.sequencer.set_epoch(EPOCH + 1)
        handing = parts.sequencer.peek()  # (7, 10), inside on_event now
        assert handing is not None and (handing.epoch, handing.counter) == (EPOCH, 10)
        with pytest.raises(ValueError, match="event 10 has not been delivered"):
            parts.acks.consumer_acknowledged_locked(10, None, handing)
        parts.sequencer.commit(handing)
        assert parts.acks.requested == 0
    parts.arrive(1, 2, 3)  # epoch 8's events, handed over, not stored yet
    assert parts.turn()
    assert parts.target() == 0


def test_the_redelivery_backoff_starts_again_from_its_minimum_after_a_success() -> None:
    """docs/link.md section 6: a consumer that raises gets the event again after ``reconnect_min_ms``,
    doubling while it keeps failing; a failure after a success is a new one (backoff.py: ``reset()``
    "after a success"), not one more doubling: sporadic failures would end at ``reconnect_max_ms``."""
    fail = {1, 2}

    def on_event(event: LinkEvent) -> None:
        if event.counter in fail:
            fail.discard(event.counter)
            raise RuntimeError("journal unavailable")

    parts = Parts(on_event)
    parts.arrive(1, 2)
    assert parts.turn()  # event 1 fails
    parts.now[0] += 0.51
    assert parts.turn()  # event 1 delivered; event 2 fails
    assert [r.split("; ")[-1] for r in parts.reports] == ["not acknowledged, redelivered in 0.5 s"] * 2, parts.reports
    parts.now[0] += 0.51
    assert parts.turn()  # offered again after the minimum
    assert parts.sequencer.last_delivered == (EPOCH, 2)
