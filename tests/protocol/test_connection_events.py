"""Unit tests of the connection rules for events: counters, acknowledgement, resend, event epochs
and what the link's sequencer makes of them (docs/protocol.md 6)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge.link import EventSequencer
from firmware_bridge.link.sequencer import BUFFERED, DUPLICATE, QUEUED
from firmware_bridge.protocol import (
    FLAG_RETRANSMISSION,
    Ack,
    Capability,
    CardRead,
    CoverCard,
    DeviceConnection,
    DeviceEvent,
    Door,
    EventAck,
    EventReceived,
    Heartbeat,
    HeartbeatReply,
    HostConnection,
    Identity,
    InvalidMessageError,
    Jam,
    JamLocation,
    NakCode,
    ReplyReceived,
    ResendEvents,
    ShoeEmpty,
    ShoeLoaded,
    ShuffleProgress,
    Sync,
    decode_message,
    encode_message,
)

from .harness import IDENTITY, Pair, decode_all, drain


def events_from_device(pair: Pair, *events: DeviceEvent) -> bytes:
    return b"".join(pair.device.send(e) for e in events)


def test_events_are_counted_stored_acknowledged_and_released() -> None:
    pair = Pair()
    pair.handshake()
    data = events_from_device(pair, CardRead(1, 0, False, 1, 10), CardRead(13, 3, False, 2, 20))
    received = drain(pair.host, data)
    assert [e.event.counter for e in received] == [1, 2]  # type: ignore[attr-defined]
    assert pair.device.unacknowledged_count == 2
    [ack] = pair.command(EventAck(2))
    assert isinstance(ack, ReplyReceived) and ack.reply == Ack()
    assert pair.device.unacknowledged_events() == () and pair.device.last_acknowledged_event == 2
    assert pair.host.acknowledged_event_counter == 2


def sequenced(pair: Pair, events: list[object], sequencer: EventSequencer) -> list[tuple[int, str]]:
    """What the link's sequencer (the one judge of new, duplicate and missing, docs/link.md 6)
    makes of the events the host connection reported: ``(counter, verdict)``."""
    return [(e.event.counter, sequencer.offer(e.event)) for e in events  # type: ignore[attr-defined]
            if isinstance(e, EventReceived)]


def test_resent_events_come_again_flagged_and_the_sequencer_drops_them() -> None:
    pair = Pair()
    pair.handshake()
    sequencer = EventSequencer((IDENTITY.event_epoch, 0))
    first = drain(pair.host, events_from_device(pair, Door(True), Door(False)))
    assert all(isinstance(e, EventReceived) and not e.retransmitted for e in first)
    assert sequenced(pair, first, sequencer) == [(1, QUEUED), (2, QUEUED)]
    resent = pair.command(ResendEvents())
    assert isinstance(resent[0], ReplyReceived)
    assert all(isinstance(e, EventReceived) and e.retransmitted for e in resent[1:])
    assert sequenced(pair, resent, sequencer) == [(1, DUPLICATE), (2, DUPLICATE)]


def test_a_lost_event_is_a_gap_for_the_sequencer_and_comes_back_on_a_resend() -> None:
    pair = Pair()
    pair.handshake()
    sequencer = EventSequencer((IDENTITY.event_epoch, 0))
    one, _two, three = (pair.device.send(ShuffleProgress(p)) for p in (10, 20, 30))
    events = drain(pair.host, one + three)            # event 2 lost on the wire
    assert sequenced(pair, events, sequencer) == [(1, QUEUED), (3, BUFFERED)]
    assert sequencer.gap and sequencer.missing() == [(2, 2)] and sequencer.queued == 1
    resent = pair.command(ResendEvents())
    assert sequenced(pair, resent, sequencer) == [(1, DUPLICATE), (2, QUEUED), (3, DUPLICATE)]
    assert resent[2].retransmitted  # type: ignore[attr-defined]
    assert not sequencer.gap and sequencer.queued == 3


def test_a_lost_last_event_shows_in_the_heartbeat_and_an_unfillable_gap_can_be_accepted() -> None:
    app = lambda command: HeartbeatReply(command.token, 1000, pair.device.last_event_counter)  # noqa: E731
    pair = Pair(app)
    pair.handshake()
    sequencer = EventSequencer((IDENTITY.event_epoch, 0))
    pair.device.send(Jam(JamLocation.MIXER))          # never reaches the host
    [reply] = pair.command(Heartbeat(99))
    assert isinstance(reply, ReplyReceived) and reply.reply.last_event_counter == 1  # type: ignore[attr-defined]
    sequencer.note_highest(reply.reply.last_event_counter)  # type: ignore[attr-defined]
    assert sequencer.missing() == [(1, 1)]
    assert sequencer.accept_gap() == 1
    assert sequencer.queued == 1 and not sequencer.gap


def test_a_new_event_epoch_restarts_the_counters() -> None:
    pair = Pair()
    pair.handshake()
    events_from_device(pair, ShoeEmpty())
    pair.command(EventAck(1))
    assert pair.host.acknowledged_event_counter == 1
    pair.device = DeviceConnection(Identity(1, Capability(0), 8, 2, "S", "N", "F"))  # another epoch
    pair.handshake_with(pair.device.identity)
    assert pair.host.event_epoch == 2 and pair.host.acknowledged_event_counter == 0
    [event] = drain(pair.host, pair.device.send(ShoeEmpty()))
    assert isinstance(event, EventReceived) and event.event.counter == 1


def test_a_baseline_from_the_journal_drops_already_stored_events() -> None:
    host = HostConnection()
    sequencer = EventSequencer((1, 2))  # the journal holds epoch 1 up to counter 2
    wire = b"".join(encode_message(ShoeEmpty(counter=c), c) for c in (1, 2, 3))
    events = drain(host, wire)
    assert all(type(e) is EventReceived for e in events)
    assert [sequencer.offer(e.event) for e in events] == [DUPLICATE, DUPLICATE, QUEUED]  # type: ignore[attr-defined]


def test_device_event_ack_rules() -> None:
    pair = Pair()
    pair.handshake()
    events_from_device(pair, CoverCard(300), ShoeEmpty(), Door(True))
    answer, events = pair.to_device(encode_message(EventAck(9), 200))
    assert events[0].reply.code is NakCode.BAD_EVENT_ACK  # type: ignore[attr-defined]
    assert pair.device.unacknowledged_count == 3
    pair.to_device(encode_message(EventAck(2), 201))
    assert [e.counter for e in pair.device.unacknowledged_events()] == [3]  # type: ignore[attr-defined]


def test_device_restores_unacknowledged_events_after_a_restart() -> None:
    stored = (CardRead(2, 2, False, 5, 50, counter=7), CoverCard(8, counter=8))
    device = DeviceConnection(IDENTITY, next_event_counter=9, unacknowledged=stored,
                              last_acknowledged_event=6)
    drain(device, encode_message(Sync(), 0))
    [auto] = drain(device, encode_message(ResendEvents(), 1))
    frames = decode_all(auto.data)  # type: ignore[attr-defined]
    assert [decode_message(f) for f in frames] == [Ack(), *stored]  # type: ignore[arg-type]
    assert all(f.flags & FLAG_RETRANSMISSION for f in frames[1:])  # type: ignore[union-attr]
    assert device.send(ShoeEmpty()) == encode_message(ShoeEmpty(counter=9), 9)
    with pytest.raises(InvalidMessageError):
        DeviceConnection(IDENTITY, next_event_counter=8, unacknowledged=stored)


@given(st.lists(st.integers(1, 40), min_size=1, max_size=60))
def test_event_tracking_matches_a_model(counters: list[int]) -> None:
    """Whatever order counters arrive in, the host connection reports each and the sequencer
    judges: a duplicate is dropped, every new one kept, and the queued counter is the model's."""
    host = HostConnection()
    sequencer = EventSequencer((1, 0))
    seen: set[int] = set()
    for counter in counters:
        [event] = drain(host, encode_message(ShoeLoaded(52, counter=counter), counter))
        assert isinstance(event, EventReceived)
        verdict = sequencer.offer(event.event)
        assert (verdict == DUPLICATE) == (counter in seen)
        seen.add(counter)
        expected = 0
        while expected + 1 in seen:
            expected += 1
        assert sequencer.queued == expected
