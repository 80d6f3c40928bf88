"""``MessageDecoder`` (the host's one-pass decoder with its CARD_READ fast path) gives item for item
what the reference path gives: ``FrameDecoder`` then ``decode_message`` (docs/protocol.md 3.4)."""
from __future__ import annotations

from binascii import crc_hqx
from dataclasses import FrozenInstanceError

import pytest

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    FLAG_RETRANSMISSION,
    CardRead,
    Frame,
    FrameDecoder,
    RemoteProtocolError,
    decode_message,
    encode_message,
)
from firmware_bridge.protocol.framing import CRC_INIT, CRC_INIT_BEFORE_ZERO
from firmware_bridge.protocol.message_stream import Decoded, MessageDecoder

from .harness import comparable
from .strategies import stream_pieces

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


@given(st.lists(stream_pieces, max_size=30), st.lists(st.integers(1, 200), max_size=10))
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
    assert [comparable(i) for i in got] == [comparable(i) for i in expected]
    assert decoder.buffered == buffered


def test_card_read_decoded_in_one_pass_is_the_message_sent() -> None:
    card = CardRead(13, 3, True, 416, 0xFFFF_FFFF, 0x0100_0000)
    decoder = MessageDecoder()
    decoder.receive_data(encode_message(card, 0, FLAG_RETRANSMISSION))
    [item] = decoder.take_items()
    assert item == Decoded(card, 0x80, 0, FLAG_RETRANSMISSION)
    assert type(item.message) is CardRead and item.message.face_up is True
    # Built through its writable twin, the card is still a frozen, hashable CardRead.
    with pytest.raises(FrozenInstanceError):
        item.message.rank = 1  # type: ignore[misc]
    assert hash(item.message) == hash(card)


def test_the_crc_register_before_a_zero_byte_becomes_the_initial_value() -> None:
    assert crc_hqx(b"\x00", CRC_INIT_BEFORE_ZERO) == CRC_INIT
    assert crc_hqx(b"\x00123456789", CRC_INIT_BEFORE_ZERO) == 0x29B1
