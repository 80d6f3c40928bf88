"""``MessageDecoder`` (the host's one-pass decoder with its CARD_READ fast path) gives item for item
what the reference path gives: ``FrameDecoder`` then ``decode_message`` (docs/protocol.md 3.4)."""
from __future__ import annotations

from binascii import crc_hqx

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    CARD_UNREADABLE,
    FLAG_RETRANSMISSION,
    CardRead,
    Frame,
    FrameDecoder,
    RemoteProtocolError,
    cobs_encode,
    decode_message,
    encode_frame,
    encode_message,
)
from firmware_bridge.protocol.framing import CRC_INIT, CRC_INIT_BEFORE_ZERO
from firmware_bridge.protocol.message_stream import Decoded, MessageDecoder

from .test_protocol_properties import any_message, u8, u16, u32

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
noise = st.binary(max_size=40)


def _cobs_frame(version: int, msg_type: int, seq: int, payload: bytes) -> bytes:
    body = bytes((version, msg_type, seq, 0, len(payload), 0)) + payload
    return cobs_encode(body + crc_hqx(body, CRC_INIT).to_bytes(2, "big")) + b"\x00"


def _damage(frame: bytes, position: int, value: int) -> bytes:
    data = bytearray(frame)
    data[position % max(1, len(data) - 1)] = value or 1
    return bytes(data)


pieces = st.one_of(card_reads, card_reads, other_frames, lookalikes, noise,
                   st.builds(_damage, card_reads, u8, u8))


def _reference(stream: bytes, cuts: list[int]) -> tuple[list[object], int]:
    """Every item of ``FrameDecoder`` then ``decode_message``, and the bytes left buffered."""
    decoder = FrameDecoder()
    out: list[object] = []
    for piece in _split(stream, cuts):
        decoder.receive_data(piece)
        for item in decoder:
            if type(item) is Frame:
                try:
                    out.append(Decoded(decode_message(item), item.msg_type, item.seq, item.flags))
                except RemoteProtocolError as exc:
                    out.append(exc)
            else:
                out.append(item)
    return out, decoder.buffered


def _split(stream: bytes, cuts: list[int]) -> list[bytes]:
    out, pos = [], 0
    for size in cuts:
        out.append(stream[pos:pos + size])
        pos += size
    out.append(stream[pos:])
    return out


def _comparable(item: object) -> object:
    if isinstance(item, RemoteProtocolError):
        return (type(item), str(item), item.seq, item.msg_type)
    if type(item) is Decoded:
        return (type(item.message), item)
    return item


@given(st.lists(pieces, max_size=30), st.lists(st.integers(1, 200), max_size=10))
@settings(suppress_health_check=[HealthCheck.too_slow])
@example([encode_message(CardRead(1, 0, False, 1, 1000, 1), 1)], [])
def test_fast_path_gives_what_the_reference_path_gives(parts: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(parts)
    decoder = MessageDecoder()
    got: list[object] = []
    for piece in _split(stream, cuts):
        decoder.receive_data(piece)
        got.extend(decoder.take_items())
    expected, buffered = _reference(stream, cuts)
    assert [_comparable(i) for i in got] == [_comparable(i) for i in expected]
    assert decoder.buffered == buffered


def test_card_read_decoded_in_one_pass_is_the_message_sent() -> None:
    card = CardRead(13, 3, True, 416, 0xFFFF_FFFF, 0x0100_0000)
    decoder = MessageDecoder()
    decoder.receive_data(encode_message(card, 0, FLAG_RETRANSMISSION))
    [item] = decoder.take_items()
    assert item == Decoded(card, 0x80, 0, FLAG_RETRANSMISSION)
    assert type(item.message) is CardRead and item.message.face_up is True


def test_the_crc_register_before_a_zero_byte_becomes_the_initial_value() -> None:
    assert crc_hqx(b"\x00", CRC_INIT_BEFORE_ZERO) == CRC_INIT
    assert crc_hqx(b"\x00123456789", CRC_INIT_BEFORE_ZERO) == 0x29B1
