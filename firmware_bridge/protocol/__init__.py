"""shoectl's device wire protocol as a sans-I/O core (bytes in -> typed events, messages -> bytes).

Layers, one module each:

- ``framing``: COBS frames with a version, sequence number, flags, length and CRC-16; an
  incremental ``FrameDecoder`` that reports damage as ``Dropped`` and resynchronises.
- ``messages``: the message vocabulary and codec (the registry of every message type,
  ``encode_message`` / ``decode_message``), re-exporting the messages, which live by direction:
  ``commands`` (host -> device), ``replies``, ``device_events``; each a frozen dataclass on
  ``message_base.Message`` with its payload encode/decode; ``wire_values``: the type bytes, field
  enumerations and limits.
- ``message_stream``: ``MessageDecoder``, bytes -> typed messages in one pass (the host's
  receiving side), with a hand-written CARD_READ path checked against the generic one.
- ``connection``: ``HostConnection`` (the controller) and ``DeviceConnection`` (a shuffler or
  shoe): sequence numbers, one command at a time, retransmission and replay, event counters and
  acknowledgements (which counters are new is decided across sessions by the link's
  ``EventSequencer``).
- ``errors``: the exception tree and the NAK codes.

The normative description, with a hex test vector for every message, is ``docs/protocol.md``.
"""
from .connection import (
    NEED_DATA,
    AutoReply,
    CommandReceived,
    DeviceConnection,
    EventReceived,
    HostConnection,
    NeedData,
    PendingCommand,
    ReplyReceived,
    StaleReply,
)
from .errors import (
    EventBufferFullError,
    InvalidMessageError,
    LocalProtocolError,
    MalformedPayloadError,
    NakCode,
    ProtocolError,
    ProtocolStateError,
    RemoteProtocolError,
    UnexpectedMessageError,
    UnknownMessageTypeError,
    WrongRoleError,
)
from .framing import (
    FLAG_RETRANSMISSION,
    MAX_ENCODED,
    MAX_FRAME,
    MAX_PAYLOAD,
    PROTOCOL_VERSION,
    Dropped,
    DropReason,
    Frame,
    FrameDecoder,
    cobs_decode,
    cobs_encode,
    crc16,
    encode_frame,
    parse_frame,
)
from .wire_values import HOST_LOSS_TIMEOUT_S, capability_bits
from .messages import (
    CARD_UNREADABLE,
    EXPECTED_REPLY,
    MAX_ID_TEXT,
    MAX_TEXT,
    MESSAGE_CLASSES,
    Ack,
    ButtonId,
    ButtonPress,
    Capability,
    CardRead,
    Command,
    CoverCard,
    Deliver,
    DeliverTarget,
    DeviceEvent,
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
    MessageKind,
    MessageType,
    Nak,
    Reply,
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
    Suit,
    Sync,
    decode_message,
    encode_message,
    kind_of,
    message_class,
)

__all__ = [
    "CARD_UNREADABLE", "EXPECTED_REPLY", "FLAG_RETRANSMISSION", "HOST_LOSS_TIMEOUT_S", "MAX_ENCODED", "MAX_FRAME",
    "MAX_ID_TEXT", "MAX_PAYLOAD", "MAX_TEXT", "MESSAGE_CLASSES", "NEED_DATA", "PROTOCOL_VERSION",
    "Ack", "AutoReply", "ButtonId", "ButtonPress", "Capability", "CardRead", "Command",
    "CommandReceived", "CoverCard", "Deliver", "DeliverTarget", "DeviceConnection", "DeviceEvent",
    "DeviceMode", "DeviceState", "Display", "Door", "DropReason", "Dropped",
    "EventAck", "EventBufferFullError", "EventReceived",
    "Fault",
    "Frame", "FrameDecoder", "GateLock", "GateUnlock", "Heartbeat", "HeartbeatReply", "Hello",
    "HostConnection", "Identity", "InvalidMessageError", "Jam", "JamLocation",
    "LocalProtocolError", "MalformedPayloadError", "Message", "MessageKind", "MessageType", "Nak",
    "NakCode", "NeedData", "PendingCommand", "ProtocolError", "ProtocolStateError",
    "RemoteProtocolError", "Reply", "ReplyReceived", "ResendEvents", "Reset", "ResetKind",
    "SetMode", "ShoeEmpty", "ShoeLoaded", "Shuffle", "ShuffleDone", "ShuffleProgress",
    "StaleReply", "StatusReply", "StatusRequest", "Suit", "Sync", "UnexpectedMessageError",
    "UnknownMessageTypeError", "WrongRoleError", "capability_bits", "cobs_decode", "cobs_encode", "crc16",
    "decode_message", "encode_frame", "encode_message", "kind_of", "message_class", "parse_frame",
]
