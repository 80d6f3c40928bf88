"""Property tests of the frame decoder's resynchronisation: garbage, noise and damaged frames are
dropped and accounted for, the valid frames among them come out intact (docs/protocol.md 3.4)."""
from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    MAX_ENCODED,
    MAX_PAYLOAD,
    CardRead,
    Dropped,
    DropReason,
    Frame,
    FrameDecoder,
    Heartbeat,
    InvalidMessageError,
    StatusRequest,
    cobs_decode,
    cobs_encode,
    encode_frame,
    encode_message,
    parse_frame,
)

from .harness import decode_all, raw_frame
from .strategies import noise, wire_frames


def _is_subsequence(needles: list[Frame], haystack: list[Frame]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


@given(st.lists(wire_frames, min_size=1, max_size=6),
       st.lists(noise, min_size=7, max_size=7),
       st.lists(st.integers(1, 64), max_size=30))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_garbage_before_between_and_after_frames_leaves_them_intact(
        frames: list[bytes], garbage: list[bytes], chunks: list[int]) -> None:
    stream = garbage[0] + b"".join(f + g for f, g in zip(frames, garbage[1:]))
    out = decode_all(stream, chunks)
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


@pytest.mark.parametrize("noise_size", [1, 5, 200, MAX_ENCODED - 10, MAX_ENCODED + 1, 2000])
def test_zero_free_noise_glued_to_a_frame_is_cut_off(noise_size: int) -> None:
    frame = encode_message(CardRead(1, 1, False, 1, 1, counter=1), 1)
    out = decode_all(bytes([0x42]) * noise_size + frame)
    reason = DropReason.GARBAGE if noise_size <= MAX_ENCODED - len(frame) + 1 else DropReason.OVERSIZE
    assert out == [Dropped(reason, noise_size), parse_frame(frame[:-1])]


def test_long_noise_without_delimiter_is_trimmed_and_a_frame_at_its_end_survives() -> None:
    frame = encode_message(Heartbeat(7), 3)
    out = decode_all(b"\x01" * 5000 + frame, [1000] * 5)
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
    out = decode_all(cobs_encode(mutate(body)) + b"\x00")
    assert [type(o) for o in out] == [Dropped] and out[0].reason is reason


@pytest.mark.parametrize(("header", "reason"), [
    (struct.pack("<BBBBH", 2, 0x10, 9, 0, 0), DropReason.BAD_VERSION),
    (struct.pack("<BBBBH", 1, 0x10, 9, 0, 5), DropReason.BAD_LENGTH),
])
def test_crc_valid_but_bad_headers_keep_their_sequence_number(header: bytes,
                                                              reason: DropReason) -> None:
    out = decode_all(raw_frame(header))
    assert out == [Dropped(reason, len(cobs_encode(header + b"00")), 9, 0x10)]


@pytest.mark.parametrize("length", [0, 2, 4])
def test_a_length_field_other_than_the_payloads_is_a_bad_length_either_way(length: int) -> None:
    """docs/protocol.md: "``length`` = body length - 8"; a CRC-valid frame whose length says fewer
    bytes than its payload holds is dropped as ``bad_length`` as surely as one that says more (a
    mutation review: only a length too large was tried, and a check for that alone passed)."""
    body = struct.pack("<BBBBH", 1, 0x10, 9, 0, length) + b"abc"
    out = decode_all(raw_frame(body))
    assert out == [Dropped(DropReason.BAD_LENGTH, len(cobs_encode(body + b"00")), 9, 0x10)]


def test_the_encoder_takes_a_payload_of_max_payload_bytes_and_refuses_one_more() -> None:
    """docs/protocol.md: "payload = length bytes (0..256)": 256 are encoded (and decoded whole),
    257 refused before anything is sent."""
    assert MAX_PAYLOAD == 256
    frame = encode_frame(0x10, 1, b"\x07" * MAX_PAYLOAD)
    assert decode_all(frame)[0].payload == b"\x07" * MAX_PAYLOAD
    with pytest.raises(InvalidMessageError, match="payload of 257 bytes exceeds MAX_PAYLOAD"):
        encode_frame(0x10, 1, b"\x07" * (MAX_PAYLOAD + 1))
