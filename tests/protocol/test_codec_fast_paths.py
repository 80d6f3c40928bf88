"""The codec's fast paths give what the reference paths give (issue 15: the link round trip).

- Decoding a fixed-layout payload (``Message.from_wire``: no range checks the Struct already made,
  enum fields looked up among their members) gives the class built from the unpacked values with
  every check of construction, item for item and error for error;
- a message without payload is encoded once per type, sequence number and flag: the same bytes
  as ``encode_frame``, and the same refusal of a bad sequence number or flag;
- ``MessageDecoder.next_item`` answers "nothing yet" without splitting when ``has_chunks`` says
  nothing is complete: item for item what ``take_items`` gives, on any stream cut anywhere."""
from __future__ import annotations

import dataclasses
from enum import Enum, IntFlag

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    FLAG_RETRANSMISSION,
    MESSAGE_CLASSES,
    Ack,
    Capability,
    DeviceMode,
    DeviceState,
    InvalidMessageError,
    MalformedPayloadError,
    Message,
    StatusReply,
    encode_frame,
    encode_message,
)
from firmware_bridge.protocol import FrameDecoder, messages
from firmware_bridge.protocol.message_stream import MessageDecoder

from .harness import comparable
from .strategies import stream_pieces
from firmware_bridge.protocol.message_base import _member_lookup, construct_decoded
from firmware_bridge.protocol.replies import _STATUS_WIRE

# The classes whose decode goes through from_wire: the generic fixed layouts, and STATUS_REPLY.
FIXED = tuple(cls for cls in MESSAGE_CLASSES
              if cls.decode_payload.__func__ is Message.decode_payload.__func__)  # type: ignore[attr-defined]
ENUMS = sorted({convert for cls in MESSAGE_CLASSES for convert in cls._COERCE.values()
                if isinstance(convert, type) and issubclass(convert, Enum)}, key=lambda e: e.__name__)


def reference_decode(cls: type[Message], payload: bytes) -> Message:
    """The decode as construction does it: every value through the class's own checks."""
    if cls is StatusReply:
        state, mode, flags, cards, pending, acked = _STATUS_WIRE.struct.unpack(payload)
        return construct_decoded(cls, state, mode, bool(flags & 1), bool(flags & 2),
                                 bool(flags & 4), cards, pending, acked)
    wire = cls._WIRE
    values = dict(zip(wire.names, wire.struct.unpack(payload)))
    return construct_decoded(cls, *(values[f.name] for f in dataclasses.fields(cls)))


def outcome(decode, cls: type[Message], payload: bytes) -> tuple[str, object]:
    try:
        message = decode(cls, payload)
    except MalformedPayloadError as exc:
        return "error", str(exc)
    fields = tuple((f.name, type(getattr(message, f.name)), getattr(message, f.name))
                   for f in dataclasses.fields(cls))
    return "message", (message, fields)


payloads = st.sampled_from((*FIXED, StatusReply)).flatmap(
    lambda cls: st.tuples(st.just(cls), st.binary(min_size=cls._WIRE.struct.size if cls is not StatusReply
                                                   else _STATUS_WIRE.struct.size,
                                                   max_size=cls._WIRE.struct.size if cls is not StatusReply
                                                   else _STATUS_WIRE.struct.size)))


@given(payloads)
@example((StatusReply, bytes((9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))))  # no such DeviceState
@example((StatusReply, bytes((0, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0))))  # reserved flag bits set
def test_decoding_a_fixed_layout_gives_what_construction_gives(case: tuple[type[Message], bytes]) -> None:
    cls, payload = case
    assert outcome(lambda c, p: c.decode_payload(p), cls, payload) == outcome(reference_decode, cls, payload)


def test_every_fixed_layout_lists_every_field() -> None:
    """from_wire sets only the fields it is given: a fixed layout must name every field."""
    for cls in FIXED:
        assert set(cls._WIRE.names) == {f.name for f in dataclasses.fields(cls)}, cls.__name__


@pytest.mark.parametrize("enum", ENUMS, ids=lambda e: e.__name__)
def test_enum_fields_convert_as_the_enum_class_does(enum: type[Enum]) -> None:
    convert = _member_lookup(enum)
    values: list[object] = [*enum, *(m.value for m in enum), True, False, 0, 1, 2.0, 300, -1, "1",
                            None, [1], {"a": 1}]
    if issubclass(enum, IntFlag):
        values += [0b11, 0xFFFF, 0x1_0000]
    for value in values:
        try:
            expected: object = ("member", enum(value))
        except (ValueError, TypeError) as exc:
            expected = (type(exc), str(exc))
        try:
            got: object = ("member", convert(value))
        except (ValueError, TypeError) as exc:
            got = (type(exc), str(exc))
        assert got == expected, value
        if got[0] == "member":
            assert type(got[1]) is enum


def test_a_value_outside_an_enum_is_refused_in_the_same_words() -> None:
    with pytest.raises(InvalidMessageError, match=r"StatusReply\.state: 9 is not a valid DeviceState"):
        StatusReply(9, DeviceMode.NORMAL, False, False, False, 0, 0, 0)
    with pytest.raises(MalformedPayloadError,
                       match=r"STATUS_REPLY: StatusReply\.state: 9 is not a valid DeviceState"):
        StatusReply.decode_payload(bytes((9,)) + bytes(10))
    reply = StatusReply(DeviceState.IDLE.value, 0, 1, 0, True, 5, 6, 7)
    assert reply.state is DeviceState.IDLE and reply.mode is DeviceMode.NORMAL
    assert reply.door_open is True and reply.jam is False
    assert Capability(3) == _member_lookup(Capability)(3)


EMPTY = [Ack(), *(cls() for cls in MESSAGE_CLASSES if not cls._WIRE.names and not dataclasses.fields(cls))]


def test_a_message_without_payload_is_encoded_as_encode_frame_encodes_it() -> None:
    assert {type(m).__name__ for m in EMPTY} >= {"Ack", "Sync", "StatusRequest", "ResendEvents"}
    for message in EMPTY:
        for seq in range(256):
            for flags in (0, FLAG_RETRANSMISSION):
                expected = encode_frame(message.TYPE, seq, b"", flags)
                assert encode_message(message, seq, flags) == expected  # made
                assert encode_message(message, seq, flags) == expected  # kept


def encoded(encode, *args: object) -> tuple[str, object]:
    try:
        return "frame", encode(*args)
    except InvalidMessageError as exc:
        return "refused", str(exc)


@pytest.mark.parametrize(("seq", "flags"), [(256, 0), (-1, 0), (None, 0), (1.0, 0), (True, 0),
                                            (1, 2), (1, 0x81), (1, -1), (1, None), (1, 256)])
def test_other_sequence_numbers_and_flags_are_encoded_as_before_and_not_kept(seq: object,
                                                                             flags: object) -> None:
    kept = dict(messages._EMPTY_FRAMES)
    for message in EMPTY:
        assert (encoded(encode_message, message, seq, flags)
                == encoded(encode_frame, message.TYPE, seq, b"", flags))
    assert messages._EMPTY_FRAMES == kept


@given(st.lists(stream_pieces, max_size=20), st.lists(st.integers(1, 700), max_size=10))
@settings(suppress_health_check=[HealthCheck.too_slow])
@example([b"\x01" * 600], [])  # rule 4: a long run without a delimiter is reported
@example([b"\x00\x00"], [1])  # idle fill only
def test_next_item_gives_item_for_item_what_take_items_gives(parts: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(parts)
    by_item, by_batch, frames = MessageDecoder(), MessageDecoder(), FrameDecoder()
    got: list[object] = []
    expected: list[object] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        piece, start = stream[start:start + cut], start + cut
        for decoder in (by_item, by_batch, frames):
            decoder.receive_data(piece)
        has = frames.has_chunks()
        assert has == bool(frames.take_chunks())
        while (item := by_item.next_item()) is not None:
            got.append(comparable(item))
        expected.extend(comparable(item) for item in by_batch.take_items())
    assert got == expected
