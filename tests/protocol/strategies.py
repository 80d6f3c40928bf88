"""Hypothesis strategies for every protocol message and for wire bytes, shared by the protocol
tests (tests/protocol/test_*.py)."""
from __future__ import annotations

from binascii import crc_hqx

from hypothesis import strategies as st

from firmware_bridge.protocol import (
    CARD_UNREADABLE,
    FLAG_RETRANSMISSION,
    MAX_ID_TEXT,
    MAX_PAYLOAD,
    MAX_TEXT,
    Ack,
    ButtonId,
    ButtonPress,
    Capability,
    CardRead,
    CoverCard,
    Deliver,
    DeliverTarget,
    DeviceMode,
    DeviceState,
    Display,
    Door,
    EventAck,
    Fault,
    GateLock,
    GateUnlock,
    Heartbeat,
    HeartbeatReply,
    Hello,
    Identity,
    Jam,
    JamLocation,
    Message,
    Nak,
    NakCode,
    ResendEvents,
    Reset,
    ResetKind,
    SetMode,
    ShoeEmpty,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
    ShuffleProgress,
    StatusReply,
    StatusRequest,
    Sync,
    cobs_encode,
    encode_frame,
    encode_message,
)
from firmware_bridge.protocol.framing import CRC_INIT


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


# The pieces of a byte stream for the one-pass decoder (test_message_stream.py, test_codec_fast_paths.py):
# CARD_READ frames, other frames, lookalikes of a CARD_READ, noise and damaged frames.

# Any (rank, suit), valid or not, so that the fast path meets the cards it must refuse.
card_reads = st.builds(
    lambda c, n, p, t, f, seq, flags: encode_frame(
        0x80, seq, n.to_bytes(4, "little") + bytes(c) + bytes((f,)) + p.to_bytes(2, "little")
        + t.to_bytes(4, "little"), flags),
    st.one_of(st.tuples(st.integers(1, 13), st.integers(0, 3)), st.tuples(u8, u8),
              st.just((CARD_UNREADABLE, CARD_UNREADABLE))),
    u32, u16, u32, u8, u8, st.sampled_from([0, FLAG_RETRANSMISSION]))
other_frames = st.builds(lambda m, seq, flags: encode_message(m, seq, flags), any_message, u8,
                         st.sampled_from([0, FLAG_RETRANSMISSION]))
# 22-byte chunks that are not CARD_READ frames: another type, another version, a bad length
# field, all with a valid CRC, so that only the header tells them apart.
lookalikes = st.builds(
    lambda version, msg_type, seq, payload: _cobs_frame(version, msg_type, seq, payload),
    st.sampled_from([1, 2]), st.sampled_from([0x80, 0x81, 0x44, 0x8A, 0x10]), u8,
    st.binary(min_size=13, max_size=13))
stream_noise = st.binary(max_size=40)


def _cobs_frame(version: int, msg_type: int, seq: int, payload: bytes) -> bytes:
    body = bytes((version, msg_type, seq, 0, len(payload), 0)) + payload
    return cobs_encode(body + crc_hqx(body, CRC_INIT).to_bytes(2, "big")) + b"\x00"


def _damage(frame: bytes, position: int, value: int) -> bytes:
    data = bytearray(frame)
    data[position % max(1, len(data) - 1)] = value or 1
    return bytes(data)


stream_pieces = st.one_of(card_reads, card_reads, other_frames, lookalikes, stream_noise,
                   st.builds(_damage, card_reads, u8, u8))
