"""``Acknowledgements`` on its own (docs/link.md section 6, "Acknowledged only after storage"): what
EVENT_ACK may cover, with the link's real sequencer and a real protocol state, no threads. The
link tests check the same rules end to end; these pin the collaborator's contract."""
from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from firmware_bridge.link import EventSequencer, LinkEvent
from firmware_bridge.link.acknowledgements import Acknowledgements
from firmware_bridge.link.session import Session
from firmware_bridge.protocol import HostConnection
from firmware_bridge.transport import SerialTransport

from .fake_device import card

EPOCH = 7


class Rig:
    """Acknowledgements over a real sequencer and session (its transport is never opened)."""

    def __init__(self, *, auto_ack: bool) -> None:
        self.cond = threading.Condition(threading.Lock())  # the link's lock and condition
        self.sequencer = EventSequencer()
        self.session = Session(1, SerialTransport("loop://"), HostConnection())
        self.acks = Acknowledgements(self.cond, self.sequencer, lambda: self.session, auto_ack=auto_ack)

    def consumer_acknowledged(self, counter: int, epoch: int, handing: LinkEvent | None = None) -> bool:
        """What ``DeviceLink.acknowledge`` does: the call with the link's lock held."""
        with self.cond:
            return self.acks.consumer_acknowledged_locked(counter, epoch, handing)


def rig(*, auto_ack: bool) -> tuple[Acknowledgements, EventSequencer, Session, Rig]:
    r = Rig(auto_ack=auto_ack)
    return r.acks, r.sequencer, r.session, r


def arrive(sequencer: EventSequencer, *counters: int) -> None:
    for counter in counters:
        sequencer.offer(replace(card(counter), counter=counter))


def deliver(sequencer: EventSequencer, how_many: int) -> None:
    for _ in range(how_many):
        event = sequencer.peek()
        assert event is not None
        sequencer.commit(event)


def confirm_epoch(sequencer: EventSequencer, session: Session, epoch: int = EPOCH) -> None:
    sequencer.set_epoch(epoch)
    session.epoch_confirmed = True


def test_nothing_is_acknowledged_before_the_sessions_identity() -> None:
    acks, sequencer, session, r = rig(auto_ack=True)
    sequencer.set_epoch(EPOCH)
    arrive(sequencer, 1, 2)
    deliver(sequencer, 2)
    assert acks.target_locked() == 0 and not acks.due_locked()  # the epoch is not this session's yet
    session.epoch_confirmed = True
    assert acks.target_locked() == 2 and acks.due_locked()


def test_auto_ack_covers_what_was_delivered_never_past_a_missing_counter() -> None:
    acks, sequencer, session, r = rig(auto_ack=True)
    confirm_epoch(sequencer, session)
    arrive(sequencer, 1, 2, 4, 5)  # 3 is missing: 4 and 5 wait behind it
    deliver(sequencer, 2)
    assert sequencer.peek() is None
    assert acks.target_locked() == 2
    acks.confirmed = 2  # the device answered EVENT_ACK(2)
    assert not acks.due_locked()


def test_hand_off_covers_only_what_the_consumer_stored() -> None:
    acks, sequencer, session, r = rig(auto_ack=False)
    confirm_epoch(sequencer, session)
    arrive(sequencer, 1, 2, 3)
    deliver(sequencer, 3)
    assert acks.target_locked() == 0  # handed over, not stored yet
    assert r.consumer_acknowledged(2, EPOCH, None) is True
    assert acks.target_locked() == 2 and acks.due_locked()
    with pytest.raises(ValueError, match="event 4 has not been delivered"):
        r.consumer_acknowledged(4, EPOCH, None)
    assert acks.requested == 2  # a refused acknowledgement changes nothing


def test_the_event_being_handed_over_counts_as_delivered() -> None:
    """The consumer may acknowledge from inside ``on_event``, before the link committed it."""
    acks, sequencer, session, r = rig(auto_ack=False)
    confirm_epoch(sequencer, session)
    arrive(sequencer, 1)
    handing = sequencer.peek()
    assert r.consumer_acknowledged(1, EPOCH, handing) is True
    assert acks.target_locked() == 0  # not past what the sequencer delivered ...
    deliver(sequencer, 1)
    assert acks.target_locked() == 1  # ... until on_event returned


def test_an_acknowledgement_for_another_epoch_is_ignored_and_a_new_epoch_starts_afresh() -> None:
    acks, sequencer, session, r = rig(auto_ack=False)
    confirm_epoch(sequencer, session)
    arrive(sequencer, 1, 2)
    deliver(sequencer, 2)
    r.consumer_acknowledged(2, EPOCH, None)
    acks.confirmed = 2
    sequencer.set_epoch(EPOCH + 1)  # the device's counter restarted
    acks.restart_locked()
    assert (acks.confirmed, acks.requested) == (0, 0)
    assert r.consumer_acknowledged(2, EPOCH, None) is False  # the old epoch's: ignored
    assert acks.requested == 0 and acks.target_locked() == 0


def test_an_acknowledgement_due_wakes_the_supervisor() -> None:
    acks, sequencer, session, r = rig(auto_ack=False)
    confirm_epoch(sequencer, session)
    arrive(sequencer, 1)
    deliver(sequencer, 1)
    cond = r.cond
    woke = threading.Event()

    def supervisor() -> None:
        with cond:
            ready.set()
            if cond.wait(5):
                woke.set()

    ready = threading.Event()
    thread = threading.Thread(target=supervisor)
    thread.start()
    ready.wait(5)
    r.consumer_acknowledged(1, EPOCH, None)
    thread.join(5)
    assert woke.is_set()


def test_an_event_whose_consumer_raised_is_offered_again_only_after_the_backoff() -> None:
    """delivery.py: "a raise leaves the event at the head, offered again after ``backoff``": a
    consumer that fails (a journal that is full) is not called again in a busy loop, and the
    report's "redelivered in 0.5 s" is true."""
    from firmware_bridge.link.backoff import Backoff
    from firmware_bridge.link.delivery import EventDeliverer

    seq = EventSequencer(profile_name="shoe")
    seq.set_epoch(1)
    seq.offer(replace(card(1), counter=1))
    calls: list[int] = []
    reports: list[str] = []

    def on_event(ev: LinkEvent) -> None:
        calls.append(ev.counter)
        raise RuntimeError("the journal is full")

    lock, now = threading.Lock(), [100.0]
    deliverer = EventDeliverer(lock, seq, on_event, stopping=threading.Event(), clock=lambda: now[0],
                               backoff=Backoff(0.5, 10.0), stats={"callback_errors": 0, "events_delivered": 0},
                               report_error=reports.append, delivered_locked=lambda: None)
    with lock:
        assert deliverer.take_turn_locked()
    deliverer.deliver_turn()
    assert calls == [1] and len(reports) == 1 and "0.5 s" in reports[0], reports
    with lock:
        assert not deliverer.take_turn_locked()  # the clock has not moved: not yet
    now[0] += 0.49
    with lock:
        assert not deliverer.take_turn_locked()
    now[0] += 0.02
    with lock:
        assert deliverer.take_turn_locked()  # past the backoff: offered again, the same event
    assert seq.peek() is not None and seq.peek().counter == 1  # type: ignore[union-attr]
