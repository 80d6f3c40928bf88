"""Property tests of the codec and unit tests of the connection rules (docs/protocol.md, 5-7)."""
from __future__ import annotations

import importlib.util
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from firmware_bridge.link import EventSequencer
from firmware_bridge.link.sequencer import BUFFERED, DUPLICATE, QUEUED
from firmware_bridge.protocol import (
    CARD_UNREADABLE,
    FLAG_RETRANSMISSION,
    MAX_ENCODED,
    MAX_ID_TEXT,
    MAX_PAYLOAD,
    MAX_TEXT,
    MESSAGE_CLASSES,
    NEED_DATA,
    Ack,
    AutoReply,
    ButtonId,
    ButtonPress,
    Capability,
    CardRead,
    CommandReceived,
    CoverCard,
    Deliver,
    DeliverTarget,
    DeviceConnection,
    DeviceEvent,
    DeviceMode,
    DeviceState,
    Display,
    Door,
    Dropped,
    DropReason,
    EventAck,
    EventBufferFullError,
    EventReceived,
    Fault,
    Frame,
    FrameDecoder,
    GateLock,
    GateUnlock,
    Heartbeat,
    HeartbeatReply,
    Hello,
    HostConnection,
    Identity,
    InvalidMessageError,
    Jam,
    JamLocation,
    LocalProtocolError,
    MalformedPayloadError,
    Message,
    Nak,
    NakCode,
    ProtocolError,
    ProtocolStateError,
    RemoteProtocolError,
    ReplyReceived,
    ResendEvents,
    Reset,
    ResetKind,
    SetMode,
    ShoeEmpty,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
    ShuffleProgress,
    StaleReply,
    StatusReply,
    StatusRequest,
    Sync,
    UnexpectedMessageError,
    UnknownMessageTypeError,
    WrongRoleError,
    cobs_decode,
    cobs_encode,
    decode_message,
    encode_frame,
    encode_message,
    parse_frame,
)

# --- strategies ----------------------------------------------------------------------------------

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)


def text(limit: int) -> st.SearchStrategy[str]:
    return st.text(max_size=limit).filter(lambda s: len(s.encode("utf-8")) <= limit)


cards = st.one_of(st.tuples(st.integers(1, 13), st.integers(0, 3)),
                  st.just((CARD_UNREADABLE, CARD_UNREADABLE)))

STRATEGIES: dict[type[Message], st.SearchStrategy[Message]] = {
    Hello: st.builds(Hello, u8),
    Sync: st.just(Sync()),
    Heartbeat: st.builds(Heartbeat, u32),
    Reset: st.builds(Reset, st.sampled_from(ResetKind)),
    StatusRequest: st.just(StatusRequest()),
    Shuffle: st.builds(Shuffle, st.integers(1, 255)),
    Deliver: st.builds(Deliver, st.sampled_from(DeliverTarget)),
    GateLock: st.just(GateLock()),
    GateUnlock: st.just(GateUnlock()),
    Display: st.builds(Display, text(MAX_TEXT)),
    SetMode: st.builds(SetMode, st.sampled_from(DeviceMode)),
    EventAck: st.builds(EventAck, u32),
    ResendEvents: st.just(ResendEvents()),
    Ack: st.builds(Ack, st.binary(max_size=MAX_PAYLOAD)),
    Nak: st.builds(Nak, st.sampled_from(NakCode), text(MAX_TEXT)),
    Identity: st.builds(Identity, u8, u16.map(Capability), u8, u32, text(MAX_ID_TEXT),
                        text(MAX_ID_TEXT), text(MAX_ID_TEXT)),
    HeartbeatReply: st.builds(HeartbeatReply, u32, u32, u32),
    StatusReply: st.builds(StatusReply, st.sampled_from(DeviceState), st.sampled_from(DeviceMode),
                           st.booleans(), st.booleans(), st.booleans(), u16, u16, u32),
    CardRead: st.builds(lambda c, f, p, t, n: CardRead(c[0], c[1], f, p, t, n),
                        cards, st.booleans(), u16, u32, u32),
    CoverCard: st.builds(CoverCard, u16, u32),
    ButtonPress: st.builds(ButtonPress, st.sampled_from(ButtonId), u32),
    ShuffleProgress: st.builds(ShuffleProgress, st.integers(0, 100), u32),
    ShuffleDone: st.builds(ShuffleDone, u16, u16, u32),
    ShoeLoaded: st.builds(ShoeLoaded, u16, u32),
    ShoeEmpty: st.builds(ShoeEmpty, u32),
    Door: st.builds(Door, st.booleans(), u32),
    Jam: st.builds(Jam, st.sampled_from(JamLocation), u32),
    Fault: st.builds(Fault, u16, text(MAX_TEXT), u32),
}
any_message = st.one_of(*STRATEGIES.values())
wire_frames = st.builds(lambda m, seq, flags: encode_message(m, seq, flags), any_message, u8,
                        st.sampled_from([0, FLAG_RETRANSMISSION]))
# Noise with and without 0x00 in it: zero-free noise merges with the next frame's chunk.
noise = st.one_of(st.binary(max_size=700),
                  st.binary(max_size=700).map(lambda b: b.replace(b"\x00", b"\x01")))


def test_every_message_class_has_a_strategy() -> None:
    assert set(STRATEGIES) == set(MESSAGE_CLASSES)


def _decode_all(data: bytes, chunks: list[int] | None = None) -> list[Frame | Dropped]:
    """Feed ``data`` (optionally split at the ``chunks`` sizes) and collect everything out."""
    decoder = FrameDecoder()
    out: list[Frame | Dropped] = []
    pos = 0
    for size in chunks or []:
        decoder.receive_data(data[pos:pos + size])
        pos += size
        out.extend(decoder)
    decoder.receive_data(data[pos:])
    out.extend(decoder)
    return out


def _is_subsequence(needles: list[Frame], haystack: list[Frame]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


# --- codec properties ----------------------------------------------------------------------------

@given(any_message, u8, st.sampled_from([0, FLAG_RETRANSMISSION]))
def test_round_trip_every_message(message: Message, seq: int, flags: int) -> None:
    wire = encode_message(message, seq, flags)
    assert wire.endswith(b"\x00") and b"\x00" not in wire[:-1]
    assert len(wire) <= MAX_ENCODED + 1
    [frame] = _decode_all(wire)
    assert frame == Frame(message.TYPE, seq, flags, message.encode_payload())
    decoded = decode_message(frame)
    assert type(decoded) is type(message)
    assert decoded == message


@given(st.binary(max_size=600))
@example(b"\x01" * 254)
@example(b"\x01" * 508)
@example(b"\x00" * 3)
def test_cobs_round_trip(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert b"\x00" not in encoded
    assert len(encoded) <= len(data) + max(1, -(-len(data) // 254))
    assert cobs_decode(encoded) == data


def test_cobs_decoder_accepts_a_trailing_empty_block_and_rejects_bad_structure() -> None:
    data = b"\x01" * 254
    assert cobs_decode(cobs_encode(data) + b"\x01") == data
    with pytest.raises(ValueError):
        cobs_decode(b"\x05\x01\x02")  # block runs past the end
    with pytest.raises(ValueError):
        cobs_decode(b"\x02\x00")


@given(st.lists(wire_frames, min_size=1, max_size=6),
       st.lists(noise, min_size=7, max_size=7),
       st.lists(st.integers(1, 64), max_size=30))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_garbage_before_between_and_after_frames_leaves_them_intact(
        frames: list[bytes], garbage: list[bytes], chunks: list[int]) -> None:
    stream = garbage[0] + b"".join(f + g for f, g in zip(frames, garbage[1:]))
    out = _decode_all(stream, chunks)
    expected = [parse_frame(f[:-1]) for f in frames]
    got = [item for item in out if type(item) is Frame]
    assert _is_subsequence(expected, got), (expected, got)


@given(st.binary(max_size=3000), st.lists(st.integers(1, 300), max_size=20))
@example(b"\x00" * 10, [])
@example(b"\x01" * 2000, [7, 300])
def test_decoder_never_raises_and_accounts_for_every_byte(data: bytes, chunks: list[int]) -> None:
    decoder = FrameDecoder()
    consumed = 0
    pos = 0
    for size in [*chunks, len(data)]:
        decoder.receive_data(data[pos:pos + size])
        pos += size
        for item in decoder:
            if type(item) is Frame:
                consumed += len(encode_frame(item.msg_type, item.seq, item.payload, item.flags)) - 1
            else:
                assert type(item) is Dropped and item.nbytes > 0
                consumed += item.nbytes
    delimiters = data[:len(data) - decoder.buffered].count(0)
    assert consumed + delimiters + decoder.buffered == len(data)
    assert decoder.buffered <= 2 * MAX_ENCODED + 300


@given(st.sampled_from(MESSAGE_CLASSES), st.binary(max_size=80))
def test_payload_decoding_fails_only_with_malformed_payload(cls: type[Message], payload: bytes) -> None:
    try:
        message = cls.decode_payload(payload)
    except MalformedPayloadError:
        return
    assert cls.decode_payload(message.encode_payload()) == message


@given(st.lists(st.one_of(wire_frames, noise), max_size=20))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_host_raises_nothing_but_remote_errors_on_any_input(pieces: list[bytes]) -> None:
    host = _synced_host()
    host.receive_data(b"".join(pieces))
    remote_errors = 0
    while True:
        try:
            if host.next_event() is NEED_DATA:
                break
        except RemoteProtocolError:
            remote_errors += 1
    assert remote_errors <= len(pieces)  # at most one per frame, then it carries on
    assert host.next_event() is NEED_DATA


@pytest.mark.parametrize("noise_size", [1, 5, 200, MAX_ENCODED - 10, MAX_ENCODED + 1, 2000])
def test_zero_free_noise_glued_to_a_frame_is_cut_off(noise_size: int) -> None:
    frame = encode_message(CardRead(1, 1, False, 1, 1, counter=1), 1)
    out = _decode_all(bytes([0x42]) * noise_size + frame)
    reason = DropReason.GARBAGE if noise_size <= MAX_ENCODED - len(frame) + 1 else DropReason.OVERSIZE
    assert out == [Dropped(reason, noise_size), parse_frame(frame[:-1])]


@given(st.lists(st.one_of(wire_frames, st.binary(max_size=40)), max_size=20))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_device_never_raises_on_any_input(pieces: list[bytes]) -> None:
    device = DeviceConnection(IDENTITY)
    device.receive_data(b"".join(pieces))
    while (event := device.next_event()) is not NEED_DATA:
        if isinstance(event, CommandReceived):
            device.send(Nak(NakCode.NOT_SUPPORTED))
        assert isinstance(event, (Dropped, CommandReceived, AutoReply))


def test_long_noise_without_delimiter_is_trimmed_and_a_frame_at_its_end_survives() -> None:
    frame = encode_message(Heartbeat(7), 3)
    out = _decode_all(b"\x01" * 5000 + frame, [1000] * 5)
    dropped = [d for d in out if type(d) is Dropped]
    assert all(d.reason is DropReason.OVERSIZE for d in dropped)
    assert sum(d.nbytes for d in dropped) == 5000
    assert out[-1] == parse_frame(frame[:-1])


@pytest.mark.parametrize(("mutate", "reason"), [
    (lambda body: body[:-2] + bytes([body[-2] ^ 1]) + body[-1:], DropReason.BAD_CRC),
    (lambda body: b"\x01\x02\x00", DropReason.TOO_SHORT),
])
def test_damaged_frames_are_reported(mutate: Callable[[bytes], bytes], reason: DropReason) -> None:
    body = cobs_decode(encode_message(StatusRequest(), 1)[:-1])
    out = _decode_all(cobs_encode(mutate(body)) + b"\x00")
    assert [type(o) for o in out] == [Dropped] and out[0].reason is reason


@pytest.mark.parametrize(("header", "reason"), [
    (struct.pack("<BBBBH", 2, 0x10, 9, 0, 0), DropReason.BAD_VERSION),
    (struct.pack("<BBBBH", 1, 0x10, 9, 0, 5), DropReason.BAD_LENGTH),
])
def test_crc_valid_but_bad_headers_keep_their_sequence_number(header: bytes,
                                                              reason: DropReason) -> None:
    out = _decode_all(_raw_frame(header))
    assert out == [Dropped(reason, len(cobs_encode(header + b"00")), 9, 0x10)]


def _raw_frame(header_and_payload: bytes) -> bytes:
    crc = struct.pack(">H", __import__("binascii").crc_hqx(header_and_payload, 0xFFFF))
    return cobs_encode(header_and_payload + crc) + b"\x00"


def test_message_validation_on_construction() -> None:
    for build in (lambda: CardRead(14, 0, False, 1, 0), lambda: CardRead(1, CARD_UNREADABLE, False, 1, 0),
                  lambda: CardRead(1, 0, 2, 1, 0), lambda: CardRead(1, 0, False, 70000, 0),
                  lambda: Shuffle(0), lambda: ShuffleProgress(101), lambda: Heartbeat(-1),
                  lambda: Display("x" * (MAX_TEXT + 1)), lambda: Nak(0x99), lambda: Door(2),
                  lambda: Deliver(7), lambda: Ack(b"x" * (MAX_PAYLOAD + 1))):
        with pytest.raises(InvalidMessageError) as info:
            build()
        assert isinstance(info.value, ValueError) and isinstance(info.value, LocalProtocolError)
    assert Deliver(1).target is DeliverTarget.DEALER
    assert CardRead(1, 0, 1, 1, 0).face_up is True


def test_reserved_bits_are_ignored_on_receipt() -> None:
    payload = bytearray(CardRead(5, 1, True, 3, 9, counter=4).encode_payload())
    payload[6] |= 0xFE
    assert CardRead.decode_payload(bytes(payload)) == CardRead(5, 1, True, 3, 9, counter=4)


# --- connection harness --------------------------------------------------------------------------

IDENTITY = Identity(1, Capability.CARD_RECOGNITION | Capability.COVER_CARD_SENSOR, 8, 1,
                    "SHOE-1", "SN1", "1.0")


def drain(conn: HostConnection | DeviceConnection, data: bytes = b"") -> list[object]:
    """Feed ``data`` and return every event up to NEED_DATA (device: stops at a command)."""
    conn.receive_data(data)
    events: list[object] = []
    while (event := conn.next_event()) is not NEED_DATA:
        events.append(event)
        if isinstance(event, CommandReceived):
            break
    return events


class Pair:
    """A host and a device wired back to back; ``app`` answers the device's commands."""

    def __init__(self, app: Callable[[object], object] | None = None, **device_args: object) -> None:
        self.host = HostConnection()
        self.device = DeviceConnection(IDENTITY, **device_args)  # type: ignore[arg-type]
        self.executed: list[object] = []
        self.app = app or (lambda command: Ack())

    def to_device(self, data: bytes) -> tuple[bytes, list[object]]:
        """Deliver host bytes to the device; return the device's answer bytes and its events."""
        out = b""
        events: list[object] = []
        self.device.receive_data(data)
        while (event := self.device.next_event()) is not NEED_DATA:
            events.append(event)
            if isinstance(event, AutoReply):
                out += event.data
            elif isinstance(event, CommandReceived):
                self.executed.append(event.command)
                out += self.device.send(self.app(event.command))  # type: ignore[arg-type]
        return out, events

    def command(self, command: object) -> list[object]:
        reply, _ = self.to_device(self.host.send(command))  # type: ignore[arg-type]
        return drain(self.host, reply)

    def handshake(self) -> None:
        self.handshake_with(IDENTITY)

    def handshake_with(self, identity: Identity) -> None:
        assert isinstance(self.command(Sync())[0], ReplyReceived)
        assert self.command(Hello())[0].reply == identity  # type: ignore[attr-defined]


# --- connection rules ----------------------------------------------------------------------------

def test_handshake_then_commands() -> None:
    pair = Pair()
    pair.handshake()
    assert pair.host.synced and pair.device.synced and pair.host.event_epoch == 1
    [event] = pair.command(Shuffle(8))
    assert event == ReplyReceived(2, Shuffle(8), Ack(), 1)
    assert pair.executed == [Shuffle(8)]


def test_retransmitted_command_gets_the_replayed_reply_and_runs_once() -> None:
    pair = Pair()
    pair.handshake()
    first = pair.host.send(Shuffle(6))
    lost_reply, _ = pair.to_device(first)          # executed; the reply is lost on the wire
    assert pair.host.pending is not None and pair.host.pending.attempts == 1
    again = pair.host.retransmit_bytes()
    assert pair.host.pending.attempts == 2 and pair.host.pending.data == first
    [resent] = _decode_all(again)
    assert resent.seq == 2 and resent.flags == FLAG_RETRANSMISSION  # type: ignore[union-attr]
    replayed, events = pair.to_device(again)
    assert pair.executed == [Shuffle(6)]           # not executed a second time
    assert isinstance(events[0], AutoReply) and events[0].replayed
    assert _decode_all(replayed)[0].flags == FLAG_RETRANSMISSION  # type: ignore[union-attr]
    [event] = drain(pair.host, replayed)
    assert event == ReplyReceived(2, Shuffle(6), Ack(), 2)
    assert pair.host.pending is None
    # The late original reply is now stale and ignored.
    assert drain(pair.host, lost_reply) == [StaleReply(2, Ack())]


def test_same_sequence_with_different_content_is_refused() -> None:
    pair = Pair()
    pair.handshake()
    pair.command(GateLock())                          # seq 2 (SYNC was 0, HELLO 1)
    _, events = pair.to_device(encode_message(GateUnlock(), 2))
    assert isinstance(events[0], AutoReply)
    assert events[0].reply.code is NakCode.SEQUENCE_REUSED  # type: ignore[attr-defined]
    assert pair.executed == [GateLock()]


def test_device_refuses_commands_before_sync_and_sync_is_never_replayed() -> None:
    device = DeviceConnection(IDENTITY)
    [event] = drain(device, encode_message(StatusRequest(), 0))
    assert isinstance(event, AutoReply) and event.reply == Nak(NakCode.NOT_SYNCED, "send SYNC first")
    for _ in range(2):  # the same SYNC twice: executed both times, no SEQUENCE_REUSED
        [event] = drain(device, encode_message(Sync(), 0))
        assert isinstance(event, AutoReply) and event.reply == Ack() and not event.replayed
    [event] = drain(device, encode_message(StatusRequest(), 0))
    assert event == CommandReceived(0, StatusRequest())


def test_host_learns_not_synced_and_must_sync_again() -> None:
    pair = Pair()
    pair.handshake()
    pair.device = DeviceConnection(IDENTITY)  # the device rebooted
    [event] = pair.command(StatusRequest())
    assert event.reply.code is NakCode.NOT_SYNCED  # type: ignore[attr-defined]
    assert not pair.host.synced
    with pytest.raises(ProtocolStateError):
        pair.host.send(StatusRequest())
    pair.handshake()


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
    frames = _decode_all(auto.data)  # type: ignore[attr-defined]
    assert [decode_message(f) for f in frames] == [Ack(), *stored]  # type: ignore[arg-type]
    assert all(f.flags & FLAG_RETRANSMISSION for f in frames[1:])  # type: ignore[union-attr]
    assert device.send(ShoeEmpty()) == encode_message(ShoeEmpty(counter=9), 9)
    with pytest.raises(InvalidMessageError):
        DeviceConnection(IDENTITY, next_event_counter=8, unacknowledged=stored)


def test_device_answers_bad_frames_with_protocol_naks() -> None:
    device = DeviceConnection(IDENTITY)
    drain(device, encode_message(Sync(), 0))
    cases = [  # (frame, expected NAK code, events before the AutoReply)
        (_raw_frame(struct.pack("<BBBBH", 1, 0x11, 5, 0, 1) + b"\x00"), NakCode.BAD_PAYLOAD, []),
        (_raw_frame(struct.pack("<BBBBH", 1, 0x3F, 6, 0, 0)), NakCode.UNKNOWN_COMMAND, []),
        (encode_message(ShoeEmpty(counter=1), 7), NakCode.UNKNOWN_COMMAND, []),
        (_raw_frame(struct.pack("<BBBBH", 9, 0x10, 8, 0, 0)), NakCode.UNSUPPORTED_VERSION,
         [DropReason.BAD_VERSION]),
        (_raw_frame(struct.pack("<BBBBH", 1, 0x10, 9, 0, 3)), NakCode.BAD_FRAME,
         [DropReason.BAD_LENGTH]),
    ]
    for wire, code, drops in cases:
        *dropped, auto = drain(device, wire)
        assert [d.reason for d in dropped] == drops  # type: ignore[attr-defined]
        assert isinstance(auto, AutoReply) and auto.reply.code is code  # type: ignore[attr-defined]
        [frame] = _decode_all(auto.data)
        assert frame.seq == auto.seq == _wire_seq(wire)  # type: ignore[union-attr]
        assert _device_is_idle(device)


def _wire_seq(wire: bytes) -> int:
    return cobs_decode(wire[:-1])[2]


def _device_is_idle(device: DeviceConnection) -> bool:
    return device.awaiting_reply is None and device.next_event() is NEED_DATA


# --- local vs remote errors ----------------------------------------------------------------------

def test_local_errors_are_local_and_change_nothing() -> None:
    pair = Pair()
    pair.handshake()
    pair.host.send(StatusRequest())
    with pytest.raises(ProtocolStateError) as info:
        pair.host.send(GateLock())                    # one command at a time
    assert isinstance(info.value, LocalProtocolError) and isinstance(info.value, RuntimeError)
    assert pair.host.pending is not None and pair.host.pending.command == StatusRequest()
    with pytest.raises(WrongRoleError) as role:
        pair.host.send(CardRead(1, 0, False, 1, 0))  # type: ignore[arg-type]
    assert isinstance(role.value, TypeError)
    assert pair.host.abandon_command() == StatusRequest() and not pair.host.synced
    with pytest.raises(ProtocolStateError):
        pair.host.retransmit_bytes()

    device = pair.device
    with pytest.raises(ProtocolStateError):
        device.send(Ack())                            # nothing to reply to
    with pytest.raises(InvalidMessageError):
        device.send(ShoeEmpty(counter=5))             # the core assigns counters
    with pytest.raises(WrongRoleError):
        device.send(Sync())  # type: ignore[arg-type]
    drain(device, encode_message(StatusRequest(), 40))
    with pytest.raises(ProtocolStateError):
        device.next_event()                           # reply first
    with pytest.raises(ProtocolStateError):
        device.send(Ack())                            # STATUS wants STATUS_REPLY or NAK
    device.send(Nak(NakCode.BUSY))
    assert device.next_event() is NEED_DATA


def test_event_buffer_limit() -> None:
    device = DeviceConnection(IDENTITY, max_unacknowledged=2)
    device.send(ShoeEmpty())
    device.send(ShoeEmpty())
    with pytest.raises(EventBufferFullError) as info:
        device.send(ShoeEmpty())
    assert isinstance(info.value, ProtocolStateError)
    assert device.last_event_counter == 2


def _synced_host() -> HostConnection:
    host = HostConnection()
    host.send(Sync())
    drain(host, encode_message(Ack(), 0))
    assert host.synced
    return host


@pytest.mark.parametrize(("wire", "error", "builtin"), [
    (encode_message(Shuffle(3), 9), UnexpectedMessageError, RemoteProtocolError),
    (_raw_frame(struct.pack("<BBBBH", 1, 0x8F, 1, 0, 0)), UnknownMessageTypeError, LookupError),
    (_raw_frame(struct.pack("<BBBBH", 1, 0x80, 1, 0, 1) + b"\x01"), MalformedPayloadError, ValueError),
    (encode_message(ShoeEmpty(counter=0), 0), UnexpectedMessageError, RemoteProtocolError),
])
def test_remote_errors_are_raised_and_the_connection_continues(
        wire: bytes, error: type[Exception], builtin: type[Exception]) -> None:
    host = _synced_host()
    host.receive_data(wire + encode_message(ShoeEmpty(counter=1), 1))
    with pytest.raises(error) as info:
        host.next_event()
    assert isinstance(info.value, RemoteProtocolError) and isinstance(info.value, builtin)
    assert isinstance(info.value, ProtocolError) and not isinstance(info.value, LocalProtocolError)
    event = host.next_event()
    assert isinstance(event, EventReceived) and event.event == ShoeEmpty(counter=1)


def test_wrong_reply_type_fails_the_pending_command() -> None:
    host = _synced_host()
    host.send(StatusRequest())
    host.receive_data(encode_message(HeartbeatReply(1, 2, 3), 1))
    with pytest.raises(UnexpectedMessageError) as info:
        host.next_event()
    assert info.value.command == StatusRequest() and info.value.seq == 1
    assert host.pending is None


def test_heartbeat_token_must_be_echoed() -> None:
    host = _synced_host()
    host.send(Heartbeat(5))
    host.receive_data(encode_message(HeartbeatReply(6, 0, 0), 1))
    with pytest.raises(UnexpectedMessageError):
        host.next_event()


def test_connection_lost_discards_the_partial_frame_and_requires_sync() -> None:
    host = _synced_host()
    host.send(StatusRequest())
    host.receive_data(encode_message(Ack(), 1)[:4])
    assert host.connection_lost() == StatusRequest()
    assert host.next_event() == Dropped(DropReason.RESET, 4)
    assert not host.synced and host.pending is None
    assert host.next_event() is NEED_DATA


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


# --- the fuzz target stays runnable ---------------------------------------------------------------

def _load_fuzz_target() -> Callable[[bytes], None]:
    path = Path(__file__).resolve().parents[1] / "fuzz" / "fuzz_codec.py"
    spec = importlib.util.spec_from_file_location("fuzz_codec", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.test_one_input  # type: ignore[no-any-return]


FUZZ_ONE_INPUT = _load_fuzz_target()


@given(st.integers(0, 255), st.lists(st.tuples(noise, wire_frames), max_size=8))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_target_holds_on_generated_inputs(piece_size: int,
                                               pairs: list[tuple[bytes, bytes]]) -> None:
    data = bytes([piece_size]) + b"".join(n + f for n, f in pairs)
    # The target asserts its invariants itself; every valid frame must also come out.
    assert FUZZ_ONE_INPUT(data) >= len(pairs)
