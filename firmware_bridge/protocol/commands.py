"""Commands, host -> device: one frozen dataclass per command, each answered by exactly one reply.

Contract: as ``message_base`` says for every message (validated on construction, exact payloads).
The reply a device gives when it accepts a command is ``messages.EXPECTED_REPLY[type(command)]``
(ACK unless said otherwise); NAK is always allowed. Byte layouts: docs/protocol.md.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .errors import InvalidMessageError
from .framing import PROTOCOL_VERSION
from .message_base import Command, WireLayout, check_text, expect_end, layout, pack_text, unpack_text
from .wire_values import MAX_TEXT, DeliverTarget, DeviceMode, MessageType, ResetKind

__all__ = [
    "Deliver",
    "Display",
    "EventAck",
    "GateLock",
    "GateUnlock",
    "Heartbeat",
    "Hello",
    "ResendEvents",
    "Reset",
    "SetMode",
    "Shuffle",
    "StatusRequest",
    "Sync",
]


# --- handshake and control commands ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Hello(Command):
    """Ask the device who it is; the reply is IDENTITY. ``host_version``: highest version spoken."""

    TYPE: ClassVar[MessageType] = MessageType.HELLO
    _WIRE: ClassVar[WireLayout] = layout(("host_version", "B"))
    host_version: int = PROTOCOL_VERSION


@dataclass(frozen=True, slots=True)
class Sync(Command):
    """Start a session: the device forgets its last sequence number and cached reply."""

    TYPE: ClassVar[MessageType] = MessageType.SYNC


@dataclass(frozen=True, slots=True)
class Heartbeat(Command):
    """Liveness probe; the device echoes ``token`` in HEARTBEAT_REPLY."""

    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT
    _WIRE: ClassVar[WireLayout] = layout(("token", "I"))
    token: int


@dataclass(frozen=True, slots=True)
class Reset(Command):
    """Reset the mechanism (faults cleared, re-homed) or reboot the device after the reply."""

    TYPE: ClassVar[MessageType] = MessageType.RESET
    _WIRE: ClassVar[WireLayout] = layout(("kind", "B"))
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
    _WIRE: ClassVar[WireLayout] = layout(("decks", "B"))
    decks: int

    def _check(self) -> None:
        if self.decks < 1:
            raise InvalidMessageError("Shuffle.decks must be at least 1")


@dataclass(frozen=True, slots=True)
class Deliver(Command):
    """Hand the shuffled stack to the shoe, or present it to the dealer for a manual cut."""

    TYPE: ClassVar[MessageType] = MessageType.DELIVER
    _WIRE: ClassVar[WireLayout] = layout(("target", "B"))
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
        check_text(self.text, "Display.text", MAX_TEXT)

    def encode_payload(self) -> bytes:
        return pack_text(self.text)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        text, end = unpack_text(payload, 0, "DISPLAY text", MAX_TEXT)
        expect_end(cls, payload, end)
        return cls(text)


@dataclass(frozen=True, slots=True)
class SetMode(Command):
    """Switch the device's operating mode."""

    TYPE: ClassVar[MessageType] = MessageType.SET_MODE
    _WIRE: ClassVar[WireLayout] = layout(("mode", "B"))
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"mode": DeviceMode}
    mode: DeviceMode


@dataclass(frozen=True, slots=True)
class EventAck(Command):
    """The host has durably stored every event up to and including ``counter``."""

    TYPE: ClassVar[MessageType] = MessageType.EVENT_ACK
    _WIRE: ClassVar[WireLayout] = layout(("counter", "I"))
    counter: int


@dataclass(frozen=True, slots=True)
class ResendEvents(Command):
    """Ask the device to send every unacknowledged event again (after its ACK)."""

    TYPE: ClassVar[MessageType] = MessageType.RESEND_EVENTS
