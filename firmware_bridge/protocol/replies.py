"""Replies, device -> host: one frozen dataclass per reply, each carrying its command's sequence number.

Contract: as ``message_base`` says for every message (validated on construction, exact payloads).
``Ack`` and ``Nak`` answer any command; ``Identity`` answers HELLO, ``HeartbeatReply`` HEARTBEAT and
``StatusReply`` STATUS. Byte layouts: docs/protocol.md.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .errors import InvalidMessageError, MalformedPayloadError, NakCode
from .framing import MAX_PAYLOAD
from .message_base import (
    Reply,
    WireLayout,
    as_bool,
    check_text,
    construct_decoded,
    expect_end,
    layout,
    pack_text,
    unpack_text,
)
from .wire_values import MAX_ID_TEXT, MAX_TEXT, Capability, DeviceMode, DeviceState, MessageType

__all__ = ["Ack", "HeartbeatReply", "Identity", "Nak", "StatusReply"]


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
        check_text(self.text, "Nak.text", MAX_TEXT)

    def encode_payload(self) -> bytes:
        return bytes((self.code,)) + pack_text(self.text)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if not payload:
            raise MalformedPayloadError("NAK payload is empty")
        if len(payload) == 1:  # the text is optional (docs/protocol.md 9.14): a device may leave out its length byte
            return construct_decoded(cls, payload[0], "")
        text, end = unpack_text(payload, 1, "NAK text", MAX_TEXT)
        expect_end(cls, payload, end)
        return construct_decoded(cls, payload[0], text)


_IDENTITY_HEAD = layout(("protocol_version", "B"), ("capabilities", "H"), ("deck_capacity", "B"),
                       ("event_epoch", "I"))


@dataclass(frozen=True, slots=True)
class Identity(Reply):
    """Reply to HELLO: who the device is and what it can do.

    ``event_epoch`` changes whenever the device's event counter restarts (factory reset, or every
    boot on a device that cannot persist its counter); the host then restarts duplicate tracking.
    """

    TYPE: ClassVar[MessageType] = MessageType.IDENTITY
    _WIRE: ClassVar[WireLayout] = _IDENTITY_HEAD
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
            check_text(getattr(self, name), f"Identity.{name}", MAX_ID_TEXT)

    def encode_payload(self) -> bytes:
        head = _IDENTITY_HEAD.struct.pack(self.protocol_version, self.capabilities,
                                          self.deck_capacity, self.event_epoch)
        return head + b"".join(pack_text(getattr(self, n))
                               for n in ("model", "serial", "firmware"))

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        size = _IDENTITY_HEAD.struct.size
        if len(payload) < size:
            raise MalformedPayloadError(f"IDENTITY payload too short ({len(payload)} bytes)")
        head = _IDENTITY_HEAD.struct.unpack_from(payload)
        model, offset = unpack_text(payload, size, "IDENTITY model", MAX_ID_TEXT)
        serial, offset = unpack_text(payload, offset, "IDENTITY serial", MAX_ID_TEXT)
        firmware, offset = unpack_text(payload, offset, "IDENTITY firmware", MAX_ID_TEXT)
        expect_end(cls, payload, offset)
        return construct_decoded(cls, *head, model, serial, firmware)


@dataclass(frozen=True, slots=True)
class HeartbeatReply(Reply):
    """Reply to HEARTBEAT: the echoed token, the device clock (the CARD_READ timestamp clock)
    and the highest event counter issued so far (0 if none), so lost trailing events show."""

    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT_REPLY
    _WIRE: ClassVar[WireLayout] = layout(("token", "I"), ("uptime_ms", "I"), ("last_event_counter", "I"))
    token: int
    uptime_ms: int
    last_event_counter: int


_STATUS_WIRE = layout(("state", "B"), ("mode", "B"), ("_flags", "B"), ("cards_in_shoe", "H"),
                     ("pending_events", "H"), ("last_acked_event", "I"))
_STATUS_FIELDS = ("state", "mode", "door_open", "jam", "gate_locked", "cards_in_shoe",
                  "pending_events", "last_acked_event")


@dataclass(frozen=True, slots=True)
class StatusReply(Reply):
    """Reply to STATUS. ``pending_events`` is the number of unacknowledged events (saturating at
    65535); ``last_acked_event`` the highest counter the host has acknowledged."""

    TYPE: ClassVar[MessageType] = MessageType.STATUS_REPLY
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "state": DeviceState, "mode": DeviceMode,
        "door_open": as_bool, "jam": as_bool, "gate_locked": as_bool}
    _WIRE: ClassVar[WireLayout] = layout(("state", "B"), ("mode", "B"), ("cards_in_shoe", "H"),
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
        return cls.from_wire(_STATUS_FIELDS, (state, mode, flags & 1 == 1, flags & 2 == 2,
                                              flags & 4 == 4, cards, pending, acked))
