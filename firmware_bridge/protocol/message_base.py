"""The base of every protocol message, and the payload codec pieces the messages are built from.

Every message is a frozen, slotted dataclass with a ``TYPE`` (its ``MessageType`` byte) and a
``KIND`` (command, reply or event, which is also the top two bits of the type byte):

- ``Command`` (0x01-0x3F): host -> device. Exactly one reply each (``commands``).
- ``Reply`` (0x40-0x7F): device -> host, carrying the command's sequence number (``replies``).
- ``DeviceEvent`` (0x80-0xBF): device -> host, unsolicited; every payload starts with the u32
  event counter. In the dataclasses ``counter`` is the *last* field, defaulting to 0, because the
  device's protocol core assigns it when the event is sent (``device_events``).

Contract:
- Constructing a message validates it: a field out of its wire range or outside the spec raises
  ``InvalidMessageError`` (a ``ValueError``). Integer enum fields accept plain ints and are
  normalised to the enum (``_COERCE``). So every message object can be encoded.
- ``msg.encode_payload() -> bytes``; ``Cls.decode_payload(payload) -> Cls`` raises
  ``MalformedPayloadError`` for a wrong length, a bad enum value, bad UTF-8 or a bad value. A
  message with a fixed layout declares it as ``_WIRE = layout((attribute, struct code), ...)``
  and inherits both; others write them with ``pack_text`` / ``unpack_text``,
  ``construct_decoded`` and ``expect_end``. ``clip_text`` fits a sender's text into a field's limit.
- Payloads are exact: trailing bytes are an error. Reserved bits in bit fields are sent as 0 and
  ignored on receipt.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from struct import Struct
from typing import Any, ClassVar, NamedTuple, Self

from .errors import InvalidMessageError, MalformedPayloadError
from .wire_values import MessageKind, MessageType

__all__ = [
    "Command",
    "DeviceEvent",
    "Message",
    "Reply",
    "WireLayout",
    "as_bool",
    "check_text",
    "clip_text",
    "construct_decoded",
    "expect_end",
    "layout",
    "pack_text",
    "unpack_text",
]


class WireLayout(NamedTuple):
    """Fixed layout of a payload: a Struct, the attribute names in wire order, their maxima."""

    struct: Struct
    names: tuple[str, ...]
    maxima: tuple[int, ...]


_MAXIMUM = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFF_FFFF}


def layout(*fields: tuple[str, str]) -> WireLayout:
    """Build a little-endian fixed layout from (attribute, struct code) pairs."""
    codes = "".join(code for _, code in fields)
    return WireLayout(Struct("<" + codes), tuple(n for n, _ in fields), tuple(_MAXIMUM[c] for _, c in fields))


def as_bool(value: object) -> bool:
    if value is True or value is False:
        return value  # type: ignore[return-value]
    if value in (0, 1):  # True/False compare equal to 1/0
        return bool(value)
    raise ValueError(f"expected a boolean (0 or 1), got {value!r}")


def check_text(value: object, name: str, limit: int) -> bytes:
    if not isinstance(value, str):
        raise InvalidMessageError(f"{name} must be a str, got {type(value).__name__}")
    raw = value.encode("utf-8")
    if len(raw) > limit:
        raise InvalidMessageError(f"{name} is {len(raw)} UTF-8 bytes; the limit is {limit}")
    return raw


def clip_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character: what a sender
    puts in a text field of that limit when its own text may be longer."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def pack_text(value: str) -> bytes:
    raw = value.encode("utf-8")
    return bytes((len(raw),)) + raw


def unpack_text(payload: bytes, offset: int, name: str, limit: int) -> tuple[str, int]:
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
_new_object = object.__new__
# Per message class, its ``_COERCE`` converters as ``_member_lookup`` made them (filled on first use).
_COERCIONS: dict[type, tuple[tuple[str, Callable[[Any], Any]], ...]] = {}


def _member_lookup(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``convert`` itself, or for an Enum class a converter giving the same member faster: the
    member whose value equals the given one (what calling the class looks up first), else the
    class's own answer (a composite flag value, or the ValueError for a value it lacks)."""
    if not (isinstance(convert, type) and issubclass(convert, Enum)):
        return convert
    members = {member.value: member for member in convert}

    def to_member(value: Any) -> Any:
        try:
            member = members.get(value)
        except TypeError:  # unhashable: the class says what is wrong with it
            member = None
        return convert(value) if member is None else member

    return to_member


@dataclass(frozen=True, slots=True)
class Message:
    """Base of all messages. Subclasses set TYPE and, for fixed layouts, _WIRE and _COERCE."""

    TYPE: ClassVar[MessageType]
    KIND: ClassVar[MessageKind]
    _WIRE: ClassVar[WireLayout] = layout()
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    def __post_init__(self) -> None:
        wire = self._WIRE
        for name, maximum in zip(wire.names, wire.maxima):
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= maximum:
                raise InvalidMessageError(
                    f"{type(self).__name__}.{name} must be an integer 0..{maximum}, got {value!r}")
        self._normalise()

    def _normalise(self) -> None:
        """Coerce the ``_COERCE`` fields, then the semantic checks (``_check``); raise
        InvalidMessageError."""
        coercions = _COERCIONS.get(type(self))
        if coercions is None:
            coercions = _COERCIONS[type(self)] = tuple(
                (name, _member_lookup(convert)) for name, convert in self._COERCE.items())
        for name, convert in coercions:
            try:
                _setattr(self, name, convert(getattr(self, name)))
            except ValueError as exc:
                raise InvalidMessageError(f"{type(self).__name__}.{name}: {exc}") from None
        self._check()

    @classmethod
    def from_wire(cls, names: tuple[str, ...], values: tuple[Any, ...]) -> Self:
        """The message whose fields ``names`` (every field) have the decoded ``values``: what
        ``construct_decoded(cls, **dict(zip(names, values)))`` gives, without the wire range
        checks that the ``_WIRE`` Struct which unpacked the integers already made (a u8 is
        0..255). Coercion and ``_check`` run as in construction. Raises MalformedPayloadError."""
        message = _new_object(cls)
        for name, value in zip(names, values):
            _setattr(message, name, value)
        try:
            message._normalise()
        except InvalidMessageError as exc:
            raise MalformedPayloadError(f"{cls.TYPE.name}: {exc}") from None
        return message

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
        return cls.from_wire(wire.names, wire.struct.unpack(payload))


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


def construct_decoded(cls: type[Message], *args: Any) -> Any:
    """Build a decoded message, turning a validation failure into MalformedPayloadError."""
    try:
        return cls(*args)
    except InvalidMessageError as exc:
        raise MalformedPayloadError(f"{cls.TYPE.name}: {exc}") from None


def expect_end(cls: type[Message], payload: bytes, end: int) -> None:
    if end != len(payload):
        raise MalformedPayloadError(f"{cls.TYPE.name}: {len(payload) - end} trailing bytes")
