"""The protocol's messages as one vocabulary: the registry of every message type, and the codec.

Every message is a frozen, slotted dataclass with a ``TYPE`` (its ``MessageType`` byte) and a
``KIND`` (command, reply or event, which is also the top two bits of the type byte). They live by
direction, and every public name is importable from here:

- ``wire_values``: ``MessageType``, ``MessageKind``, the enumerated field values and limits;
- ``message_base``: ``Message`` and the kind bases ``Command``, ``Reply``, ``DeviceEvent``, and
  the payload codec pieces they share;
- ``commands`` (host -> device), ``replies`` (device -> host, one per command) and
  ``device_events`` (device -> host, unsolicited, each with its event counter).

Contract:
- Constructing a message validates it: a field out of its wire range or outside the spec raises
  ``InvalidMessageError`` (a ``ValueError``). Integer enum fields accept plain ints and are
  normalised to the enum. So every message object can be encoded.
- ``msg.encode_payload() -> bytes``; ``Cls.decode_payload(payload) -> Cls`` raises
  ``MalformedPayloadError`` for a wrong length, a bad enum value, bad UTF-8 or a bad value.
- ``encode_message(msg, seq, flags) -> bytes`` gives the full wire frame; ``decode_message(frame)``
  turns a ``Frame`` into its message (``UnknownMessageTypeError`` / ``MalformedPayloadError``).
- ``MESSAGE_CLASSES`` lists every message class once; ``message_class(type byte)`` and
  ``message_class_named(wire name)`` look one up, ``wire_name`` gives the name the journal stores;
  ``EXPECTED_REPLY[command class]`` is the reply that accepts it (NAK is always allowed too).
- Payloads are exact: trailing bytes are an error. Reserved bits in bit fields are sent as 0 and
  ignored on receipt.

The byte layouts are tabulated in ``docs/protocol.md``.
"""
from __future__ import annotations

from collections.abc import Callable

from .commands import (
    Deliver,
    Display,
    EventAck,
    GateLock,
    GateUnlock,
    Heartbeat,
    Hello,
    ResendEvents,
    Reset,
    SetMode,
    Shuffle,
    StatusRequest,
    Sync,
)
from .device_events import (
    ButtonPress,
    CardRead,
    CoverCard,
    Door,
    Fault,
    Jam,
    ShoeEmpty,
    ShoeLoaded,
    ShuffleDone,
    ShuffleProgress,
)
from .errors import MalformedPayloadError, UnknownMessageTypeError
from .framing import FLAG_RETRANSMISSION, Frame, encode_frame
from .message_base import Command, DeviceEvent, Message, Reply
from .replies import Ack, HeartbeatReply, Identity, Nak, StatusReply
from .wire_values import (
    CARD_UNREADABLE,
    MAX_ID_TEXT,
    MAX_TEXT,
    ButtonId,
    Capability,
    DeliverTarget,
    DeviceMode,
    DeviceState,
    JamLocation,
    MessageKind,
    MessageType,
    ResetKind,
    Suit,
    kind_of,
)

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

MESSAGE_CLASSES: tuple[type[Message], ...] = (
    Hello, Sync, Heartbeat, Reset, StatusRequest, Shuffle, Deliver, GateLock, GateUnlock, Display,
    SetMode, EventAck, ResendEvents,
    Ack, Nak, Identity, HeartbeatReply, StatusReply,
    CardRead, CoverCard, ButtonPress, ShuffleProgress, ShuffleDone, ShoeLoaded, ShoeEmpty, Door,
    Jam, Fault,
)
_BY_TYPE: dict[int, type[Message]] = {cls.TYPE: cls for cls in MESSAGE_CLASSES}
#: Types from here up are events, defined or not, each payload led by its u32 counter (docs/protocol.md 4).
EVENT_TYPES_FROM = 0x80
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
        exc = UnknownMessageTypeError(f"unknown message type {frame.msg_type:#04x}", seq=frame.seq,
                                      msg_type=frame.msg_type)
        if frame.msg_type >= EVENT_TYPES_FROM and len(frame.payload) >= 4:
            # An event type this version does not define (a newer firmware's): its counter is
            # read all the same, so that it is said to have come unreadable, not never to have
            # come (a firmware review).
            exc.event_counter = int.from_bytes(frame.payload[:4], "little")
        raise exc
    try:
        return decoder(frame.payload)
    except MalformedPayloadError as exc:
        exc.seq, exc.msg_type = frame.seq, frame.msg_type
        if issubclass(_BY_TYPE[frame.msg_type], DeviceEvent) and len(frame.payload) >= 4:  # its counter first (u32 LE)
            exc.event_counter = int.from_bytes(frame.payload[:4], "little")
        raise


# The frame of a message without payload (STATUS, SYNC, RESEND_EVENTS, an ACK, ...) depends on its
# type, sequence number and retransmission flag only: encode_frame makes each once, on first use
# (at most 256 types x 256 numbers x 2 flags; other flag values are not kept).
_EMPTY_FRAMES: dict[int, bytes] = {}


def encode_message(message: Message, seq: int, flags: int = 0) -> bytes:
    """The complete wire frame (COBS-encoded, delimiter included) carrying ``message``."""
    payload = message.encode_payload()
    if (payload or (flags != 0 and flags != FLAG_RETRANSMISSION) or type(seq) is not int
            or not 0 <= seq <= 0xFF):
        return encode_frame(message.TYPE, seq, payload, flags)
    key = message.TYPE << 9 | seq << 1 | flags
    frame = _EMPTY_FRAMES.get(key)
    if frame is None:
        frame = _EMPTY_FRAMES[key] = encode_frame(message.TYPE, seq, payload, flags)
    return frame
