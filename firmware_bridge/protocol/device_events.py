"""Device events, device -> host, unsolicited: one frozen dataclass per event.

Contract: as ``message_base`` says for every message (validated on construction, exact payloads).
Every event's payload starts with its u32 ``counter``, the dataclass's last field (0 until the
device's protocol core assigns it). ``CardRead`` is the hot path: its checks and decoding are
written by hand, with the same contract. Byte layouts: docs/protocol.md.
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from struct import Struct
from typing import Any, ClassVar, Self

from .errors import InvalidMessageError, MalformedPayloadError
from .message_base import (
    DeviceEvent,
    WireLayout,
    as_bool,
    check_text,
    construct_decoded,
    expect_end,
    layout,
    pack_text,
    unpack_text,
)
from .wire_values import CARD_UNREADABLE, MAX_TEXT, ButtonId, JamLocation, MessageType

__all__ = [
    "ButtonPress",
    "CardRead",
    "CoverCard",
    "Door",
    "Fault",
    "Jam",
    "ShoeEmpty",
    "ShoeLoaded",
    "ShuffleDone",
    "ShuffleProgress",
]

_setattr = object.__setattr__
_CARD_STRUCT = Struct("<IBBBHI")
# VALID_CARD[rank << 8 | suit] is 1 for the 52 cards and the misread marker, else 0: one index
# instead of building a tuple per card on the hot path.
_valid = bytearray(0x10000)
for _rank in range(1, 14):
    for _suit in range(4):
        _valid[_rank << 8 | _suit] = 1
_valid[CARD_UNREADABLE << 8 | CARD_UNREADABLE] = 1
VALID_CARD = bytes(_valid)
del _valid, _rank, _suit


def _valid_card(rank: int, suit: int) -> bool:
    return 0 <= rank <= 0xFF and 0 <= suit <= 0xFF and VALID_CARD[rank << 8 | suit] == 1


@dataclass(frozen=True, slots=True)
class CardRead(DeviceEvent):
    """A card left the shoe. ``rank`` 1 (ace)..13 (king) and ``suit`` 0..3 (``Suit``), or both
    ``CARD_UNREADABLE`` (0xFF) for a misread. ``position`` is 1-based from the top of the stack
    as loaded (0 = unknown); ``timestamp_ms`` is the device clock (see HeartbeatReply)."""

    TYPE: ClassVar[MessageType] = MessageType.CARD_READ
    rank: int
    suit: int
    face_up: bool
    position: int
    timestamp_ms: int
    counter: int = 0

    # Hand-written (hot path), same contract as Message.__post_init__: the Struct checks the
    # integer types and ranges in C, then the card itself is checked.
    def __post_init__(self) -> None:
        face_up = self.face_up
        if face_up is not True and face_up is not False:
            try:
                _setattr(self, "face_up", as_bool(face_up))
            except ValueError as exc:
                raise InvalidMessageError(f"CardRead.face_up: {exc}") from None
        try:
            _CARD_STRUCT.pack(self.counter, self.rank, self.suit, 0, self.position,
                              self.timestamp_ms)
        except struct.error as exc:
            raise InvalidMessageError(
                f"CardRead: rank/suit u8, position u16, timestamp_ms u32, counter u32: {exc}"
            ) from None
        if not _valid_card(self.rank, self.suit):
            raise InvalidMessageError(
                f"CardRead: rank 1..13 with suit 0..3, or both {CARD_UNREADABLE:#x}; "
                f"got rank={self.rank!r} suit={self.suit!r}")

    @property
    def readable(self) -> bool:
        return self.rank != CARD_UNREADABLE

    def encode_payload(self) -> bytes:
        return _CARD_STRUCT.pack(self.counter, self.rank, self.suit, self.face_up,
                                 self.position, self.timestamp_ms)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        try:
            counter, rank, suit, flags, position, timestamp = _CARD_STRUCT.unpack(payload)
        except struct.error:
            raise MalformedPayloadError(
                f"CARD_READ payload must be {_CARD_STRUCT.size} bytes, got {len(payload)}") from None
        if not VALID_CARD[rank << 8 | suit]:
            raise MalformedPayloadError(f"CARD_READ: invalid card rank={rank} suit={suit}")
        # The host's hot path is message_stream's (it fills the slots directly); this is the
        # generic one, checked by the constructor.
        return cls(rank, suit, flags & 1 == 1, position, timestamp, counter)


class CardReadUnderConstruction(CardRead):
    """A ``CardRead`` being filled by a decoder that has checked every field itself
    (``message_stream``), skipping ``__init__`` and its checks.

    Its slots take plain assignments (``object``'s own ``__setattr__``, which CPython specialises:
    about a third of the cost of calling each slot's setter), and the decoder then sets
    ``__class__`` to ``CardRead``, which makes it an ordinary frozen ``CardRead`` (same type, same
    equality). Never hand one out before that."""

    __slots__ = ()
    # Both, so that the type's setattr slot is object's own (one Python-level override of either
    # would route every assignment through a function call).
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


@dataclass(frozen=True, slots=True)
class CoverCard(DeviceEvent):
    """The cover (cut) card reached the shoe exit at ``position`` (1-based, 0 = unknown)."""

    TYPE: ClassVar[MessageType] = MessageType.COVER_CARD
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"), ("position", "H"))
    position: int
    counter: int = 0


@dataclass(frozen=True, slots=True)
class ButtonPress(DeviceEvent):
    """The dealer pressed a button."""

    TYPE: ClassVar[MessageType] = MessageType.BUTTON
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"), ("button", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"button": ButtonId}
    button: ButtonId
    counter: int = 0


@dataclass(frozen=True, slots=True)
class ShuffleProgress(DeviceEvent):
    """Shuffle progress, ``percent`` 0..100."""

    TYPE: ClassVar[MessageType] = MessageType.SHUFFLE_PROGRESS
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"), ("percent", "B"))
    percent: int
    counter: int = 0

    def _check(self) -> None:
        if self.percent > 100:
            raise InvalidMessageError(f"ShuffleProgress.percent must be 0..100, got {self.percent}")


@dataclass(frozen=True, slots=True)
class ShuffleDone(DeviceEvent):
    """The shuffle finished with ``card_count`` cards counted; ``expected_count`` is what the
    device expected (decks x 52). A difference is a count failure for the host to act on."""

    TYPE: ClassVar[MessageType] = MessageType.SHUFFLE_DONE
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"), ("card_count", "H"), ("expected_count", "H"))
    card_count: int
    expected_count: int
    counter: int = 0

    @property
    def count_ok(self) -> bool:
        return self.card_count == self.expected_count


@dataclass(frozen=True, slots=True)
class ShoeLoaded(DeviceEvent):
    """The shoe was loaded with ``card_count`` cards."""

    TYPE: ClassVar[MessageType] = MessageType.SHOE_LOADED
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"), ("card_count", "H"))
    card_count: int
    counter: int = 0


@dataclass(frozen=True, slots=True)
class ShoeEmpty(DeviceEvent):
    """The shoe holds no more cards."""

    TYPE: ClassVar[MessageType] = MessageType.SHOE_EMPTY
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"))
    counter: int = 0


@dataclass(frozen=True, slots=True)
class Door(DeviceEvent):
    """The device door or cover was opened (``open``) or closed."""

    TYPE: ClassVar[MessageType] = MessageType.DOOR
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"), ("open", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"open": as_bool}
    open: bool
    counter: int = 0


@dataclass(frozen=True, slots=True)
class Jam(DeviceEvent):
    """A card jam at ``location``."""

    TYPE: ClassVar[MessageType] = MessageType.JAM
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"), ("location", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"location": JamLocation}
    location: JamLocation
    counter: int = 0


_FAULT_HEAD = layout(("counter", "I"), ("code", "H"))


@dataclass(frozen=True, slots=True)
class Fault(DeviceEvent):
    """A device fault: a device-specific ``code`` (u16) and a text for the log."""

    TYPE: ClassVar[MessageType] = MessageType.FAULT
    _WIRE: ClassVar[WireLayout] = _FAULT_HEAD
    code: int
    text: str = ""
    counter: int = 0

    def _check(self) -> None:
        check_text(self.text, "Fault.text", MAX_TEXT)

    def encode_payload(self) -> bytes:
        return _FAULT_HEAD.struct.pack(self.counter, self.code) + pack_text(self.text)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        size = _FAULT_HEAD.struct.size
        if len(payload) < size:
            raise MalformedPayloadError(f"FAULT payload too short ({len(payload)} bytes)")
        counter, code = _FAULT_HEAD.struct.unpack_from(payload)
        text, end = unpack_text(payload, size, "FAULT text", MAX_TEXT)
        expect_end(cls, payload, end)
        return construct_decoded(cls, code, text, counter)
