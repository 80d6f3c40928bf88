"""What the protocol connections hand back from ``next_event()`` (docs/protocol.md), and the
type-byte constants both roles share. See ``connection`` for the contract."""
from __future__ import annotations

from dataclasses import dataclass

from .framing import Dropped

from .messages import (
    Command,
    DeviceEvent,
    MessageType,
    Reply,
)

_U32 = 0xFFFF_FFFF
_EVENT_BITS = 0x80   # top two bits of the type byte: 10 = event, 01 = reply, 00 = command
_REPLY_BITS = 0x40
_KIND_MASK = 0xC0


# --- events --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class NeedData:
    """No complete frame is buffered: call ``receive_data()`` with more bytes."""


NEED_DATA = NeedData()


@dataclass(frozen=True, slots=True)
class ReplyReceived:
    """Host: the reply to the pending command arrived; the command is finished (even if NAK)."""

    seq: int
    command: Command
    reply: Reply
    attempts: int


@dataclass(frozen=True, slots=True)
class StaleReply:
    """Host: a reply for no pending command (e.g. the original and a replayed reply both came)."""

    seq: int
    reply: Reply


@dataclass(frozen=True, slots=True)
class EventReceived:
    """Host: a device event arrived (a first sending or a resend: the counter says which, to the
    consumer that knows what it already stored). ``retransmitted``: the device flagged it as
    sent again (RESEND_EVENTS)."""

    event: DeviceEvent
    retransmitted: bool = False


@dataclass(frozen=True, slots=True)
class CommandReceived:
    """Device: a new command to execute. Reply with exactly one ``send(reply)`` before the next
    ``next_event()``."""

    seq: int
    command: Command


@dataclass(frozen=True, slots=True)
class AutoReply:
    """Device: the protocol core answered a frame by itself; write ``data`` to the link.

    ``command`` is the command answered (``None`` if the frame did not decode to one), ``reply``
    the reply sent, ``replayed`` true when this is the cached reply of a retransmitted command.
    For RESEND_EVENTS, ``data`` holds the ACK followed by the resent events.
    """

    seq: int
    command: Command | None
    reply: Reply
    data: bytes
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class PendingCommand:
    """Host: the command awaiting its reply. ``data`` is its first transmission; ``attempts``
    counts transmissions so far (1 after ``send``, +1 per ``retransmit_bytes``)."""

    seq: int
    command: Command
    data: bytes
    attempts: int


HostEvent = NeedData | Dropped | ReplyReceived | StaleReply | EventReceived
DeviceSideEvent = NeedData | Dropped | CommandReceived | AutoReply


# --- host ----------------------------------------------------------------------------------------


_DEFINED_TYPES = frozenset(MessageType)


def type_name(msg_type: int) -> str:
    return MessageType(msg_type).name if msg_type in _DEFINED_TYPES else f"type {msg_type:#04x}"
