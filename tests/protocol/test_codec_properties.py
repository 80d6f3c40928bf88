"""Property tests of the codec: every message round-trips, COBS, payload decoding and message
validation (docs/protocol.md 3-4, 9)."""
from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    CARD_UNREADABLE,
    FLAG_RETRANSMISSION,
    MAX_ENCODED,
    MAX_PAYLOAD,
    MAX_TEXT,
    MESSAGE_CLASSES,
    Ack,
    CardRead,
    Deliver,
    DeliverTarget,
    Display,
    Door,
    Frame,
    Heartbeat,
    InvalidMessageError,
    LocalProtocolError,
    MalformedPayloadError,
    Message,
    Nak,
    Shuffle,
    ShuffleProgress,
    cobs_decode,
    cobs_encode,
    decode_message,
    encode_message,
)

from .harness import decode_all
from .strategies import STRATEGIES, any_message, u8


def test_every_message_class_has_a_strategy() -> None:
    assert set(STRATEGIES) == set(MESSAGE_CLASSES)


@given(any_message, u8, st.sampled_from([0, FLAG_RETRANSMISSION]))
def test_round_trip_every_message(message: Message, seq: int, flags: int) -> None:
    wire = encode_message(message, seq, flags)
    assert wire.endswith(b"\x00") and b"\x00" not in wire[:-1]
    assert len(wire) <= MAX_ENCODED + 1
    [frame] = decode_all(wire)
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


@given(st.sampled_from(MESSAGE_CLASSES), st.binary(max_size=80))
def test_payload_decoding_fails_only_with_malformed_payload(cls: type[Message], payload: bytes) -> None:
    try:
        message = cls.decode_payload(payload)
    except MalformedPayloadError:
        return
    assert cls.decode_payload(message.encode_payload()) == message


def test_message_validation_on_construction() -> None:
    for build in (lambda: CardRead(14, 0, False, 1, 0), lambda: CardRead(1, CARD_UNREADABLE, False, 1, 0),
                  lambda: CardRead(1, 0, 2, 1, 0), lambda: CardRead(1, 0, False, 70000, 0),
                  lambda: Shuffle(0), lambda: ShuffleProgress(101), lambda: Heartbeat(-1),
                  lambda: Display("x" * (MAX_TEXT + 1)), lambda: Nak(0x08), lambda: Door(2),
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
