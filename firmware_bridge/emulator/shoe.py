"""``EmulatedShoe``: a card-reading dealing shoe (sans-I/O).

The shoe holds an ordered stack (index 0 is the next item out) of cards and cover cards. Each item
gets its 1-based *position* when the stack is loaded (cover cards occupy positions too); CARD_READ
and COVER_CARD carry it, and faults name it.

Physical actions (the dealer's, or a test's):

- ``load(items)``: the stack goes in (the dealer's LOAD, or the shuffler's DELIVER(SHOE)) ->
  SHOE_LOADED(card count). Fault ``cover-at=K`` puts a cover card at position K. Loading a shoe
  that still holds anything raises ``EmulatorStateError``.
- ``draw(face_up=False)`` -> ``DrawResult``: one item leaves the shoe. A card gives CARD_READ
  (rank, suit, face-up flag, position, device time in ms); the cover card gives COVER_CARD; the
  last item is followed by SHOE_EMPTY. Refused (nothing leaves, no event) while the gate is
  locked, the door is open, a jam is present, the device is not in NORMAL mode, the event store
  is full (E8), or the shoe is empty. Faults: ``face-up-at=K`` (the card at K comes out face up),
  ``misread-at=K`` (CARD_READ with the unreadable marker 0xFF), ``jam-at=N`` / ``door-open-at=N``
  (a JAM at the shoe exit / the door opening after the N-th card delivered).
- ``unload()``: the dealer takes the remaining items out (no reads) -> SHOE_EMPTY.
- ``press(button)``: BUTTON; ``open_door()`` / ``close_door()``: DOOR; ``jam()``: JAM.

Capabilities: without FACE_UP_DETECTION the flag is always 0; without CARD_RECOGNITION every
CARD_READ is unreadable; without COVER_CARD_SENSOR the cover card leaves silently.

Commands: GATE_LOCK (always ACK), GATE_UNLOCK (NAK WRONG_STATE outside NORMAL mode, JAM,
FAULT, DOOR_OPEN, BUSY while the event store is full). The gate is locked at power-up, after
RESET(MECHANISM), and when the host is lost (no command for ``host_loss_timeout``: the display
then shows ``HOST LOST``).

Every card that leaves is also reported to the draw listeners as a ``Delivered`` record (what
really came out, whatever the reader saw): the table's dealt log is one.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from firmware_bridge.protocol import (
    CARD_UNREADABLE,
    Ack,
    ButtonId,
    ButtonPress,
    Capability,
    CardRead,
    CoverCard,
    DeviceMode,
    DeviceState,
    GateLock,
    GateUnlock,
    JamLocation,
    NakCode,
    ShoeEmpty,
    ShoeLoaded,
)

from .cards import COVER, DeviceCard, Item, card_count
from .device import EmulatedDevice, EmulatorStateError
from .refusals import Handled

__all__ = ["Delivered", "DrawResult", "EmulatedShoe"]


@dataclass(frozen=True, slots=True)
class Delivered:
    """A card that left the shoe: what it really was, and how it came out."""

    position: int
    card: DeviceCard
    face_up: bool
    misread: bool
    timestamp_ms: int


@dataclass(frozen=True, slots=True)
class DrawResult:
    """The outcome of one ``draw()``: ``item`` is the card or ``COVER`` that came out (``None``
    if the draw was refused; ``refused`` then says why)."""

    item: Item | None
    position: int = 0
    face_up: bool = False
    refused: str | None = None

    @property
    def card(self) -> DeviceCard | None:
        return self.item if isinstance(self.item, DeviceCard) else None

    @property
    def is_cover(self) -> bool:
        return self.item is COVER


class EmulatedShoe(EmulatedDevice):
    """A card-reading shoe. ``stack`` lists the items still in it, next out first."""

    def __init__(self, profile: Any, **kwargs: Any) -> None:
        super().__init__(profile, **kwargs)
        self._stack: deque[tuple[int, Item]] = deque()
        self.cards_delivered = 0
        self.loads = 0
        self._draw_listeners: list[Callable[[Delivered], None]] = []

    # --- state ---------------------------------------------------------------------------------

    @property
    def stack(self) -> list[Item]:
        return [item for _, item in self._stack]

    def cards_in_shoe(self) -> int:
        return sum(1 for _, item in self._stack if item is not COVER)

    def _activity_state(self) -> DeviceState:
        if self._stack:
            return DeviceState.LOADED
        return super()._activity_state()

    def add_draw_listener(self, listener: Callable[[Delivered], None]) -> None:
        """Call ``listener(delivered)`` for every card that leaves the shoe, in order."""
        self._draw_listeners.append(listener)

    # --- physical actions ----------------------------------------------------------------------

    def load(self, items: Iterable[Item]) -> int:
        """Put a stack into the (empty) shoe; return the cards loaded. Emits SHOE_LOADED."""
        if self._stack:
            raise EmulatorStateError(f"the shoe still holds {len(self._stack)} items")
        stack = list(items)
        cover_at = self.faults.cover_at
        if 1 <= cover_at <= len(stack) + 1:
            stack.insert(cover_at - 1, COVER)
        self._stack = deque(enumerate(stack, start=1))
        self.loads += 1
        count = card_count(stack)
        self.emit(ShoeLoaded(card_count=min(count, 0xFFFF)))
        return count

    def unload(self) -> list[Item]:
        """Take every remaining item out without reading it; emits SHOE_EMPTY if any were left."""
        items = self.stack
        self._stack.clear()
        if items:
            self.emit(ShoeEmpty())
        return items

    def draw_refusal(self) -> str | None:
        """Why a draw would be refused now, or ``None``."""
        if not self._stack:
            return "shoe empty"
        if self.jammed:
            return "jam"
        if self.door_open:
            return "door open"
        if self.mode != DeviceMode.NORMAL:
            return f"{self.mode.name.lower()} mode"
        if self.gate_locked:
            return "gate locked"
        if self.events_blocked:
            return "gate locked (event store full)"
        return None

    @property
    def gate_closed(self) -> bool:
        """E8: a shoe whose event store is full refuses to deal, and a shoe refuses a card by its
        gate: held locked until events are acknowledged, whatever GATE_UNLOCK said before (STATUS
        said unlocked while no card could come out: a device review)."""
        return self.gate_locked or self.events_blocked

    def draw(self, *, face_up: bool = False) -> DrawResult:
        """One item leaves the shoe (``face_up``: the dealer exposes the card)."""
        refused = self.draw_refusal()
        if refused is not None:
            return DrawResult(None, refused=refused)
        position, item = self._stack.popleft()
        caps = self.identity.capabilities
        if item is COVER:
            if caps & Capability.COVER_CARD_SENSOR:
                self.emit(CoverCard(position=min(position, 0xFFFF)))
            result = DrawResult(COVER, position)
        else:
            assert isinstance(item, DeviceCard)
            up = face_up or position == self.faults.face_up_at
            misread = position == self.faults.misread_at or not caps & Capability.CARD_RECOGNITION
            stamp = self.uptime_ms()
            rank, suit = (CARD_UNREADABLE, CARD_UNREADABLE) if misread else item
            self.emit(CardRead(rank=rank, suit=suit,
                               face_up=up and bool(caps & Capability.FACE_UP_DETECTION),
                               position=min(position, 0xFFFF), timestamp_ms=stamp))
            self.cards_delivered += 1
            record = Delivered(position, item, up, misread, stamp)
            for listener in tuple(self._draw_listeners):
                listener(record)
            result = DrawResult(item, position, up)
        if not self._stack:
            self.emit(ShoeEmpty())
        if result.card is not None:
            if self.cards_delivered == self.faults.jam_at:
                self.jam(JamLocation.SHOE_EXIT)
            if self.cards_delivered == self.faults.door_open_at:
                self.open_door()
        return result

    def press(self, button: ButtonId = ButtonId.REVEAL) -> None:
        """The dealer presses a button: BUTTON event."""
        self.emit(ButtonPress(button=button))

    # --- commands ------------------------------------------------------------------------------

    def _cmd_gate_lock(self, command: GateLock) -> Handled:
        self.gate_locked = True
        return Ack(), None

    def _cmd_gate_unlock(self, command: GateUnlock) -> Handled:
        refusal = self._refusal(busy_ok=True)
        if refusal is not None:
            return refusal, None
        if self.events_blocked:
            return self._nak(NakCode.BUSY, "event store full: acknowledge events first"), None
        self.gate_locked = False
        return Ack(), None

    def _on_host_lost(self) -> None:
        self.gate_locked = True
        self.display_text = "HOST LOST"
        super()._on_host_lost()
