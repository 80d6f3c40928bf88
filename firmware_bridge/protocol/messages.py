"""Typed protocol messages and their payload encodings.

Every message is a frozen, slotted dataclass with a ``TYPE`` (its ``MessageType`` byte) and a
``KIND`` (command, reply or event, which is also the top two bits of the type byte):

- ``Command`` (0x01-0x3F): host -> device. Exactly one reply each.
- ``Reply`` (0x40-0x7F): device -> host, carrying the command's sequence number.
- ``DeviceEvent`` (0x80-0xBF): device -> host, unsolicited; every payload starts with the u32
  event counter. In the dataclasses ``counter`` is the *last* field, defaulting to 0, because the
  device's protocol core assigns it when the event is sent.

Contracts:
- Constructing a message validates it: a field out of its wire range or outside the spec raises
  ``InvalidMessageError`` (a ``ValueError``). Integer enum fields accept plain ints and are
  normalised to the enum. So every message object can be encoded.
- ``msg.encode_payload() -> bytes``; ``Cls.decode_payload(payload) -> Cls`` raises
  ``MalformedPayloadError`` for a wrong length, a bad enum value, bad UTF-8 or a bad value.
- ``encode_message(msg, seq, flags) -> bytes`` gives the full wire frame; ``decode_message(frame)``
  turns a ``Frame`` into its message (``UnknownMessageTypeError`` / ``MalformedPayloadError``).
- Payloads are exact: trailing bytes are an error. Reserved bits in bit fields are sent as 0 and
  ignored on receipt.

The byte layouts are tabulated in ``docs/protocol.md``.
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntEnum, IntFlag
from struct import Struct
from typing import Any, ClassVar, NamedTuple, Self

from .errors import InvalidMessageError, MalformedPayloadError, NakCode, UnknownMessageTypeError
from .framing import MAX_PAYLOAD, PROTOCOL_VERSION, Frame, encode_frame

__all__ = [
    "CARD_UNREADABLE",
    "EXPECTED_REPLY",
    "MAX_ID_TEXT",
    "MAX_TEXT",
    "MESSAGE_CLASSES",
    "Ack",
    "ButtonId",
    "ButtonPress",
    "Capability",
    "CardRead",
    "Command",
    "CoverCard",
    "Deliver",
    "DeliverTarget",
    "DeviceEvent",
    "DeviceMode",
    "DeviceState",
    "Display",
    "Door",
    "EventAck",
    "Fault",
    "GateLock",
    "GateUnlock",
    "Heartbeat",
    "HeartbeatReply",
    "Hello",
    "Identity",
    "Jam",
    "JamLocation",
    "Message",
    "MessageKind",
    "MessageType",
    "Nak",
    "Reply",
    "Reset",
    "ResendEvents",
    "ResetKind",
    "SetMode",
    "ShoeEmpty",
    "ShoeLoaded",
    "Shuffle",
    "ShuffleDone",
    "ShuffleProgress",
    "StatusReply",
    "StatusRequest",
    "Suit",
    "Sync",
    "decode_message",
    "encode_message",
    "kind_of",
    "message_class",
    "message_class_named",
    "wire_name",
]

MAX_TEXT = 64       # UTF-8 bytes in DISPLAY, NAK and FAULT texts
MAX_ID_TEXT = 32    # UTF-8 bytes in each IDENTITY string
CARD_UNREADABLE = 0xFF  # rank and suit value of a card the reader could not recognise


class MessageType(IntEnum):
    """The message type byte. Bits 7-6: 00 command, 01 reply, 10 event, 11 reserved."""

    HELLO = 0x01
    SYNC = 0x02
    HEARTBEAT = 0x03
    RESET = 0x04
    STATUS = 0x10
    SHUFFLE = 0x11
    DELIVER = 0x12
    GATE_LOCK = 0x13
    GATE_UNLOCK = 0x14
    DISPLAY = 0x15
    SET_MODE = 0x16
    EVENT_ACK = 0x17
    RESEND_EVENTS = 0x18
    ACK = 0x40
    NAK = 0x41
    IDENTITY = 0x42
    HEARTBEAT_REPLY = 0x43
    STATUS_REPLY = 0x44
    CARD_READ = 0x80
    COVER_CARD = 0x81
    BUTTON = 0x82
    SHUFFLE_PROGRESS = 0x83
    SHUFFLE_DONE = 0x84
    SHOE_LOADED = 0x85
    SHOE_EMPTY = 0x86
    DOOR = 0x87
    JAM = 0x88
    FAULT = 0x89


class MessageKind(Enum):
    COMMAND = "command"
    REPLY = "reply"
    EVENT = "event"


_KIND_BY_TOP_BITS = (MessageKind.COMMAND, MessageKind.REPLY, MessageKind.EVENT, None)


def kind_of(msg_type: int) -> MessageKind | None:
    """The kind a type byte belongs to by its top two bits (``None`` for the reserved range)."""
    return _KIND_BY_TOP_BITS[(msg_type >> 6) & 3]


class Suit(IntEnum):
    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3


class Capability(IntFlag):
    """IDENTITY capability bits (u16). Unassigned bits are reserved: send 0, ignore."""

    CARD_RECOGNITION = 1 << 0     # reads rank and suit of every card dealt
    FACE_UP_DETECTION = 1 << 1    # reports a card that leaves the shoe face up
    COVER_CARD_SENSOR = 1 << 2    # detects the cover (cut) card
    CARD_COUNT = 1 << 3           # counts the cards after each shuffle (SHUFFLE_DONE counts)
    AUTO_RESHUFFLE = 1 << 4       # automatic reshuffle and count, no cut (58 Pa. Code 681a.5(h))
    BATCH_SHUFFLER = 1 << 5
    CONTINUOUS_SHUFFLER = 1 << 6


class ButtonId(IntEnum):
    REVEAL = 0       # dealer reveals the squeezed cards (Midibaccarat)
    CONFIRM = 1
    CANCEL = 2
    CALL_FLOOR = 3   # dealer calls the floorperson


class DeliverTarget(IntEnum):
    SHOE = 0     # hand the shuffled stack to the attached shoe
    DEALER = 1   # present the stack to the dealer (manual cut)


class ResetKind(IntEnum):
    MECHANISM = 0  # clear faults and re-home the mechanism; the protocol session is kept
    REBOOT = 1     # restart the device after the reply; the host must SYNC again


class DeviceMode(IntEnum):
    NORMAL = 0
    MAINTENANCE = 1
    DIAGNOSTIC = 2


class DeviceState(IntEnum):
    BOOTING = 0
    IDLE = 1         # no stack in process
    SHUFFLING = 2
    SHUFFLED = 3     # a shuffled stack is ready to deliver
    DELIVERING = 4
    LOADED = 5       # the shoe holds cards; dealing
    FAULT = 6
    MAINTENANCE = 7


class JamLocation(IntEnum):
    UNKNOWN = 0
    INPUT = 1
    MIXER = 2
    ELEVATOR = 3
    OUTPUT = 4
    SHOE_EXIT = 5


class _Wire(NamedTuple):
    """Fixed layout of a payload: a Struct, the attribute names in wire order, their maxima."""

    struct: Struct
    names: tuple[str, ...]
    maxima: tuple[int, ...]


_MAXIMUM = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFF_FFFF}


def _wire(*fields: tuple[str, str]) -> _Wire:
    """Build a little-endian fixed layout from (attribute, struct code) pairs."""
    codes = "".join(code for _, code in fields)
    return _Wire(Struct("<" + codes), tuple(n for n, _ in fields), tuple(_MAXIMUM[c] for _, c in fields))


def _as_bool(value: object) -> bool:
    if value in (0, 1):  # True/False compare equal to 1/0
        return bool(value)
    raise ValueError(f"expected a boolean (0 or 1), got {value!r}")


def _text_bytes(value: object, name: str, limit: int) -> bytes:
    if not isinstance(value, str):
        raise InvalidMessageError(f"{name} must be a str, got {type(value).__name__}")
    raw = value.encode("utf-8")
    if len(raw) > limit:
        raise InvalidMessageError(f"{name} is {len(raw)} UTF-8 bytes; the limit is {limit}")
    return raw


def _pack_text(value: str) -> bytes:
    raw = value.encode("utf-8")
    return bytes((len(raw),)) + raw


def _unpack_text(payload: bytes, offset: int, name: str, limit: int) -> tuple[str, int]:
    """Read a u8-length-prefixed UTF-8 string at ``offset``; return it and the next offset."""
    if offset >= len(payload):
        raise MalformedPayloadError(f"{name}: missing length byte")
    size = payload[offset]
    end = offset + 1 + size
    if size > limit or end > len(payload):
        raise MalformedPayloadError(f"{name}: bad length {size}")
    try:
        return payload[offset + 1:end].decode("utf-8"), end
    except UnicodeDecodeError:
        raise MalformedPayloadError(f"{name}: not valid UTF-8") from None


_setattr = object.__setattr__


@dataclass(frozen=True, slots=True)
class Message:
    """Base of all messages. Subclasses set TYPE and, for fixed layouts, _WIRE and _COERCE."""

    TYPE: ClassVar[MessageType]
    KIND: ClassVar[MessageKind]
    _WIRE: ClassVar[_Wire] = _wire()
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    def __post_init__(self) -> None:
        wire = self._WIRE
        for name, maximum in zip(wire.names, wire.maxima):
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= maximum:
                raise InvalidMessageError(
                    f"{type(self).__name__}.{name} must be an integer 0..{maximum}, got {value!r}")
        for name, convert in self._COERCE.items():
            try:
                _setattr(self, name, convert(getattr(self, name)))
            except ValueError as exc:
                raise InvalidMessageError(f"{type(self).__name__}.{name}: {exc}") from None
        self._check()

    def _check(self) -> None:
        """Per-message semantic checks beyond the wire ranges; raise InvalidMessageError."""

    def encode_payload(self) -> bytes:
        """The payload bytes of this message (header and CRC excluded)."""
        wire = self._WIRE
        return wire.struct.pack(*[getattr(self, name) for name in wire.names])

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        """Decode a payload into a message. Raises MalformedPayloadError."""
        wire = cls._WIRE
        if len(payload) != wire.struct.size:
            raise MalformedPayloadError(
                f"{cls.TYPE.name} payload must be {wire.struct.size} bytes, got {len(payload)}")
        values = wire.struct.unpack(payload)
        try:
            return cls(**dict(zip(wire.names, values)))
        except InvalidMessageError as exc:
            raise MalformedPayloadError(f"{cls.TYPE.name}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Command(Message):
    """Host -> device; answered by exactly one Reply (see EXPECTED_REPLY)."""

    KIND: ClassVar[MessageKind] = MessageKind.COMMAND


@dataclass(frozen=True, slots=True)
class Reply(Message):
    """Device -> host answer to a command; carries the command's sequence number."""

    KIND: ClassVar[MessageKind] = MessageKind.REPLY


@dataclass(frozen=True, slots=True)
class DeviceEvent(Message):
    """Device -> host, unsolicited. Subclasses define ``counter: int = 0`` as their last field."""

    KIND: ClassVar[MessageKind] = MessageKind.EVENT
    # No ``counter`` field here: a base-class field would come first, before the subclass fields.


# --- handshake and control commands ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Hello(Command):
    """Ask the device who it is; the reply is IDENTITY. ``host_version``: highest version spoken."""

    TYPE: ClassVar[MessageType] = MessageType.HELLO
    _WIRE: ClassVar[_Wire] = _wire(("host_version", "B"))
    host_version: int = PROTOCOL_VERSION


@dataclass(frozen=True, slots=True)
class Sync(Command):
    """Start a session: the device forgets its last sequence number and cached reply."""

    TYPE: ClassVar[MessageType] = MessageType.SYNC


@dataclass(frozen=True, slots=True)
class Heartbeat(Command):
    """Liveness probe; the device echoes ``token`` in HEARTBEAT_REPLY."""

    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT
    _WIRE: ClassVar[_Wire] = _wire(("token", "I"))
    token: int


@dataclass(frozen=True, slots=True)
class Reset(Command):
    """Reset the mechanism (faults cleared, re-homed) or reboot the device after the reply."""

    TYPE: ClassVar[MessageType] = MessageType.RESET
    _WIRE: ClassVar[_Wire] = _wire(("kind", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"kind": ResetKind}
    kind: ResetKind = ResetKind.MECHANISM


# --- application commands ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StatusRequest(Command):
    """Ask for the device status; the reply is STATUS_REPLY."""

    TYPE: ClassVar[MessageType] = MessageType.STATUS


@dataclass(frozen=True, slots=True)
class Shuffle(Command):
    """Shuffle ``decks`` decks (>= 1). ACK means started; SHUFFLE_DONE reports the end."""

    TYPE: ClassVar[MessageType] = MessageType.SHUFFLE
    _WIRE: ClassVar[_Wire] = _wire(("decks", "B"))
    decks: int

    def _check(self) -> None:
        if self.decks < 1:
            raise InvalidMessageError("Shuffle.decks must be at least 1")


@dataclass(frozen=True, slots=True)
class Deliver(Command):
    """Hand the shuffled stack to the shoe, or present it to the dealer for a manual cut."""

    TYPE: ClassVar[MessageType] = MessageType.DELIVER
    _WIRE: ClassVar[_Wire] = _wire(("target", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"target": DeliverTarget}
    target: DeliverTarget


@dataclass(frozen=True, slots=True)
class GateLock(Command):
    """Lock the card gate (no card can be drawn)."""

    TYPE: ClassVar[MessageType] = MessageType.GATE_LOCK


@dataclass(frozen=True, slots=True)
class GateUnlock(Command):
    """Unlock the card gate."""

    TYPE: ClassVar[MessageType] = MessageType.GATE_UNLOCK


@dataclass(frozen=True, slots=True)
class Display(Command):
    """Show a prompt to the dealer (UTF-8, at most MAX_TEXT bytes; empty clears the display)."""

    TYPE: ClassVar[MessageType] = MessageType.DISPLAY
    text: str

    def _check(self) -> None:
        _text_bytes(self.text, "Display.text", MAX_TEXT)

    def encode_payload(self) -> bytes:
        return _pack_text(self.text)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        text, end = _unpack_text(payload, 0, "DISPLAY text", MAX_TEXT)
        _expect_end(cls, payload, end)
        return cls(text)


@dataclass(frozen=True, slots=True)
class SetMode(Command):
    """Switch the device's operating mode."""

    TYPE: ClassVar[MessageType] = MessageType.SET_MODE
    _WIRE: ClassVar[_Wire] = _wire(("mode", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"mode": DeviceMode}
    mode: DeviceMode


@dataclass(frozen=True, slots=True)
class EventAck(Command):
    """The host has durably stored every event up to and including ``counter``."""

    TYPE: ClassVar[MessageType] = MessageType.EVENT_ACK
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"))
    counter: int


@dataclass(frozen=True, slots=True)
class ResendEvents(Command):
    """Ask the device to send every unacknowledged event again (after its ACK)."""

    TYPE: ClassVar[MessageType] = MessageType.RESEND_EVENTS


# --- replies -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Ack(Reply):
    """Command accepted. ``result`` is reserved for command-specific results (empty in v1)."""

    TYPE: ClassVar[MessageType] = MessageType.ACK
    result: bytes = b""

    def _check(self) -> None:
        if not isinstance(self.result, bytes) or len(self.result) > MAX_PAYLOAD:
            raise InvalidMessageError(f"Ack.result must be bytes of at most {MAX_PAYLOAD}")

    def encode_payload(self) -> bytes:
        return self.result

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        return cls(bytes(payload))


@dataclass(frozen=True, slots=True)
class Nak(Reply):
    """Command refused, with a NakCode and an optional human-readable text."""

    TYPE: ClassVar[MessageType] = MessageType.NAK
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"code": NakCode}
    code: NakCode
    text: str = ""

    def _check(self) -> None:
        _text_bytes(self.text, "Nak.text", MAX_TEXT)

    def encode_payload(self) -> bytes:
        return bytes((self.code,)) + _pack_text(self.text)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if not payload:
            raise MalformedPayloadError("NAK payload is empty")
        text, end = _unpack_text(payload, 1, "NAK text", MAX_TEXT)
        _expect_end(cls, payload, end)
        return _construct(cls, payload[0], text)


_IDENTITY_HEAD = _wire(("protocol_version", "B"), ("capabilities", "H"), ("deck_capacity", "B"),
                       ("event_epoch", "I"))


@dataclass(frozen=True, slots=True)
class Identity(Reply):
    """Reply to HELLO: who the device is and what it can do.

    ``event_epoch`` changes whenever the device's event counter restarts (factory reset, or every
    boot on a device that cannot persist its counter); the host then restarts duplicate tracking.
    """

    TYPE: ClassVar[MessageType] = MessageType.IDENTITY
    _WIRE: ClassVar[_Wire] = _IDENTITY_HEAD
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"capabilities": Capability}
    protocol_version: int
    capabilities: Capability
    deck_capacity: int
    event_epoch: int
    model: str
    serial: str
    firmware: str

    def _check(self) -> None:
        for name in ("model", "serial", "firmware"):
            _text_bytes(getattr(self, name), f"Identity.{name}", MAX_ID_TEXT)

    def encode_payload(self) -> bytes:
        head = _IDENTITY_HEAD.struct.pack(self.protocol_version, self.capabilities,
                                          self.deck_capacity, self.event_epoch)
        return head + b"".join(_pack_text(getattr(self, n))
                               for n in ("model", "serial", "firmware"))

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        size = _IDENTITY_HEAD.struct.size
        if len(payload) < size:
            raise MalformedPayloadError(f"IDENTITY payload too short ({len(payload)} bytes)")
        head = _IDENTITY_HEAD.struct.unpack_from(payload)
        model, offset = _unpack_text(payload, size, "IDENTITY model", MAX_ID_TEXT)
        serial, offset = _unpack_text(payload, offset, "IDENTITY serial", MAX_ID_TEXT)
        firmware, offset = _unpack_text(payload, offset, "IDENTITY firmware", MAX_ID_TEXT)
        _expect_end(cls, payload, offset)
        return _construct(cls, *head, model, serial, firmware)


@dataclass(frozen=True, slots=True)
class HeartbeatReply(Reply):
    """Reply to HEARTBEAT: the echoed token, the device clock (the CARD_READ timestamp clock)
    and the highest event counter issued so far (0 if none), so lost trailing events show."""

    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT_REPLY
    _WIRE: ClassVar[_Wire] = _wire(("token", "I"), ("uptime_ms", "I"), ("last_event_counter", "I"))
    token: int
    uptime_ms: int
    last_event_counter: int


_STATUS_WIRE = _wire(("state", "B"), ("mode", "B"), ("_flags", "B"), ("cards_in_shoe", "H"),
                     ("pending_events", "H"), ("last_acked_event", "I"))


@dataclass(frozen=True, slots=True)
class StatusReply(Reply):
    """Reply to STATUS. ``pending_events`` is the number of unacknowledged events (saturating at
    65535); ``last_acked_event`` the highest counter the host has acknowledged."""

    TYPE: ClassVar[MessageType] = MessageType.STATUS_REPLY
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "state": DeviceState, "mode": DeviceMode,
        "door_open": _as_bool, "jam": _as_bool, "gate_locked": _as_bool}
    _WIRE: ClassVar[_Wire] = _wire(("state", "B"), ("mode", "B"), ("cards_in_shoe", "H"),
                                   ("pending_events", "H"), ("last_acked_event", "I"))
    state: DeviceState
    mode: DeviceMode
    door_open: bool
    jam: bool
    gate_locked: bool
    cards_in_shoe: int
    pending_events: int
    last_acked_event: int

    def encode_payload(self) -> bytes:
        flags = self.door_open | self.jam << 1 | self.gate_locked << 2
        return _STATUS_WIRE.struct.pack(self.state, self.mode, flags, self.cards_in_shoe,
                                        self.pending_events, self.last_acked_event)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if len(payload) != _STATUS_WIRE.struct.size:
            raise MalformedPayloadError(f"STATUS_REPLY payload must be {_STATUS_WIRE.struct.size} "
                                        f"bytes, got {len(payload)}")
        state, mode, flags, cards, pending, acked = _STATUS_WIRE.struct.unpack(payload)
        return _construct(cls, state, mode, bool(flags & 1), bool(flags & 2), bool(flags & 4),
                          cards, pending, acked)


# --- device events -----------------------------------------------------------------------------

_CARD_STRUCT = Struct("<IBBBHI")
# Valid (rank, suit) pairs: the 52 cards and the misread marker.
_CARDS = frozenset([(r, s) for r in range(1, 14) for s in range(4)]
                   + [(CARD_UNREADABLE, CARD_UNREADABLE)])


def _valid_card(rank: int, suit: int) -> bool:
    return (rank, suit) in _CARDS


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
                _setattr(self, "face_up", _as_bool(face_up))
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
        if not _valid_card(rank, suit):
            raise MalformedPayloadError(f"CARD_READ: invalid card rank={rank} suit={suit}")
        # Every field is now known valid (the Struct bounds the rest), so skip __init__ and
        # __post_init__ and fill the slots directly: about twice as fast on the hot path.
        card = _new_object(cls)
        _set_rank(card, rank)
        _set_suit(card, suit)
        _set_face_up(card, flags & 1 == 1)
        _set_position(card, position)
        _set_timestamp(card, timestamp)
        _set_counter(card, counter)
        return card


_new_object = object.__new__
_set_rank = CardRead.rank.__set__  # type: ignore[attr-defined]
_set_suit = CardRead.suit.__set__  # type: ignore[attr-defined]
_set_face_up = CardRead.face_up.__set__  # type: ignore[attr-defined]
_set_position = CardRead.position.__set__  # type: ignore[attr-defined]
_set_timestamp = CardRead.timestamp_ms.__set__  # type: ignore[attr-defined]
_set_counter = CardRead.counter.__set__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class CoverCard(DeviceEvent):
    """The cover (cut) card reached the shoe exit at ``position`` (1-based, 0 = unknown)."""

    TYPE: ClassVar[MessageType] = MessageType.COVER_CARD
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"), ("position", "H"))
    position: int
    counter: int = 0


@dataclass(frozen=True, slots=True)
class ButtonPress(DeviceEvent):
    """The dealer pressed a button."""

    TYPE: ClassVar[MessageType] = MessageType.BUTTON
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"), ("button", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"button": ButtonId}
    button: ButtonId
    counter: int = 0


@dataclass(frozen=True, slots=True)
class ShuffleProgress(DeviceEvent):
    """Shuffle progress, ``percent`` 0..100."""

    TYPE: ClassVar[MessageType] = MessageType.SHUFFLE_PROGRESS
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"), ("percent", "B"))
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
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"), ("card_count", "H"), ("expected_count", "H"))
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
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"), ("card_count", "H"))
    card_count: int
    counter: int = 0


@dataclass(frozen=True, slots=True)
class ShoeEmpty(DeviceEvent):
    """The shoe holds no more cards."""

    TYPE: ClassVar[MessageType] = MessageType.SHOE_EMPTY
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"))
    counter: int = 0


@dataclass(frozen=True, slots=True)
class Door(DeviceEvent):
    """The device door or cover was opened (``open``) or closed."""

    TYPE: ClassVar[MessageType] = MessageType.DOOR
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"), ("open", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"open": _as_bool}
    open: bool
    counter: int = 0


@dataclass(frozen=True, slots=True)
class Jam(DeviceEvent):
    """A card jam at ``location``."""

    TYPE: ClassVar[MessageType] = MessageType.JAM
    _WIRE: ClassVar[_Wire] = _wire(("counter", "I"), ("location", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"location": JamLocation}
    location: JamLocation
    counter: int = 0


_FAULT_HEAD = _wire(("counter", "I"), ("code", "H"))


@dataclass(frozen=True, slots=True)
class Fault(DeviceEvent):
    """A device fault: a device-specific ``code`` (u16) and a text for the log."""

    TYPE: ClassVar[MessageType] = MessageType.FAULT
    _WIRE: ClassVar[_Wire] = _FAULT_HEAD
    code: int
    text: str = ""
    counter: int = 0

    def _check(self) -> None:
        _text_bytes(self.text, "Fault.text", MAX_TEXT)

    def encode_payload(self) -> bytes:
        return _FAULT_HEAD.struct.pack(self.counter, self.code) + _pack_text(self.text)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        size = _FAULT_HEAD.struct.size
        if len(payload) < size:
            raise MalformedPayloadError(f"FAULT payload too short ({len(payload)} bytes)")
        counter, code = _FAULT_HEAD.struct.unpack_from(payload)
        text, end = _unpack_text(payload, size, "FAULT text", MAX_TEXT)
        _expect_end(cls, payload, end)
        return _construct(cls, code, text, counter)


# --- tables ------------------------------------------------------------------------------------

def _construct(cls: type[Message], *args: Any) -> Any:
    """Build a decoded message, turning a validation failure into MalformedPayloadError."""
    try:
        return cls(*args)
    except InvalidMessageError as exc:
        raise MalformedPayloadError(f"{cls.TYPE.name}: {exc}") from None


def _expect_end(cls: type[Message], payload: bytes, end: int) -> None:
    if end != len(payload):
        raise MalformedPayloadError(f"{cls.TYPE.name}: {len(payload) - end} trailing bytes")


MESSAGE_CLASSES: tuple[type[Message], ...] = (
    Hello, Sync, Heartbeat, Reset, StatusRequest, Shuffle, Deliver, GateLock, GateUnlock, Display,
    SetMode, EventAck, ResendEvents,
    Ack, Nak, Identity, HeartbeatReply, StatusReply,
    CardRead, CoverCard, ButtonPress, ShuffleProgress, ShuffleDone, ShoeLoaded, ShoeEmpty, Door,
    Jam, Fault,
)
_BY_TYPE: dict[int, type[Message]] = {cls.TYPE: cls for cls in MESSAGE_CLASSES}
_DECODERS: dict[int, Callable[[bytes], Message]] = {
    cls.TYPE: cls.decode_payload for cls in MESSAGE_CLASSES}

# The reply a device gives to each command when it accepts it; NAK is always allowed too.
EXPECTED_REPLY: dict[type[Command], type[Reply]] = {
    cls: Ack for cls in MESSAGE_CLASSES if issubclass(cls, Command)}  # type: ignore[misc]
EXPECTED_REPLY.update({Hello: Identity, Heartbeat: HeartbeatReply, StatusRequest: StatusReply})


def message_class(msg_type: int) -> type[Message]:
    """The class for a type byte. Raises UnknownMessageTypeError."""
    try:
        return _BY_TYPE[msg_type]
    except KeyError:
        raise UnknownMessageTypeError(f"unknown message type {msg_type:#04x}",
                                      msg_type=msg_type) from None


def wire_name(message: Message | type[Message]) -> str:
    """The name of a message (or message class) on the wire, as docs/protocol.md spells it and the
    journal stores it: its ``MessageType`` name (``CardRead`` -> ``"CARD_READ"``)."""
    return message.TYPE.name


def message_class_named(name: str) -> type[Message]:
    """The class of the message whose wire name is ``name`` (``"CARD_READ"`` -> ``CardRead``): the
    inverse of ``wire_name``. Raises UnknownMessageTypeError for any other text."""
    member = MessageType.__members__.get(name) if isinstance(name, str) else None
    if member is None:
        raise UnknownMessageTypeError(f"unknown message name {str(name)[:40]!r}")
    return _BY_TYPE[member]


def decode_message(frame: Frame) -> Message:
    """Decode a frame's payload into its typed message.

    Raises:
        UnknownMessageTypeError: the type byte is not defined.
        MalformedPayloadError: the payload does not decode (``seq``/``msg_type`` are set).
    """
    decoder = _DECODERS.get(frame.msg_type)
    if decoder is None:
        raise UnknownMessageTypeError(f"unknown message type {frame.msg_type:#04x}",
                                      seq=frame.seq, msg_type=frame.msg_type)
    try:
        return decoder(frame.payload)
    except MalformedPayloadError as exc:
        exc.seq, exc.msg_type = frame.seq, frame.msg_type
        raise


def encode_message(message: Message, seq: int, flags: int = 0) -> bytes:
    """The complete wire frame (COBS-encoded, delimiter included) carrying ``message``."""
    return encode_frame(message.TYPE, seq, message.encode_payload(), flags)
