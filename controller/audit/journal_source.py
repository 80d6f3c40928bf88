"""The audit's view of a journal: per shoe, the cards read and where they sat (a thin layer).

``collect_shoes(entries) -> list[ShoeData]`` reads journal entries (anything with ``kind``,
``payload`` and ``shoe_id``, e.g. ``JournalReader.entries()``), in journal order, and returns the
shoes in the order they started; a malformed record the audit needs raises
``JournalContentError`` (a ``ValueError``) naming the entry. It uses the core's records
``shoe_start`` {shoe, decks}, ``cut`` {position, by, stack}, ``cover`` {from_bottom},
``shoe_loaded`` {cards}, ``reconciliation``, and the device events (kind ``input.device``, payload
{device_role, event, fields}, read in either schema version's words) CARD_READ {rank, suit,
face_up, position}, COVER_CARD {position} and SHUFFLE_DONE {card_count, expected_count}: the kinds
``AUDIT_KINDS``. Other kinds are ignored.

``stack_map(shoe) -> StackMap``: which card of the stack each shoe position held. The loaded stack
is rebuilt the way the table builds it (681a.5(c)-(d), ``firmware_bridge.emulator.cards``): the
shuffler's output ``0..stack-1``; each ``cut`` at n moves the top n cards under the rest with the
cover card under them; each ``cover`` puts the second cover card ``from_bottom`` cards above the
bottom; then every COVER_CARD the shoe reported at a position the rebuilt stack does not have a
cover at (e.g. a misplaced cover card) is inserted there. Reads must land on cards: otherwise the
map is ``None`` with the reason (the journal does not describe how the stack was built).

``partial_order(shoe, order="shuffler"|"shoe") -> list[int | None]``: the stack as card codes,
``None`` where unknown. ``"shuffler"`` undoes the cut: place i is the i-th card out of the
shuffler, which is what a shuffler audit needs (a random cut spreads a stuck slot or a weak
shuffle's positional pattern over every position). ``"shoe"`` is the order of the loaded shoe.
Raises ``ValueError`` (with the reason) when the shoe cannot be mapped.

What a journal cannot tell: the cards never read (those below the cover card when the shoe is
unloaded, unreadable cards) - only how many; the order in which the discards went back into the
shuffler - the previous shoe's deal order is an assumption (``previous_orders``).
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from controller.journal import kinds
from controller.journal.errors import JournalContentError, malformed_entry, text_field
from controller.journal.vocabulary import current_payload
from controller.rules.cards import MAX_DECKS
from firmware_bridge.protocol import messages as m
from firmware_bridge.protocol.wire_values import UNKNOWN_POSITION

from .cardset import UNREADABLE, CardSetReport, Read, verify_cardset
from .orders import CARDS_PER_DECK, impute

__all__ = ["AUDIT_KINDS", "JournalContentError", "ShoeData", "StackMap", "collect_shoes", "partial_order",
           "previous_orders", "stack_map"]

AUDIT_KINDS = (kinds.SHOE_START, kinds.CUT, kinds.COVER, kinds.SHOE_LOADED, kinds.RECONCILIATION, kinds.INPUT_DEVICE,
               kinds.CARD_ENTERED)
_CARD_READ, _COVER_CARD, _SHUFFLE_DONE = (m.wire_name(cls) for cls in (m.CardRead, m.CoverCard, m.ShuffleDone))
_COVER = -1
_MOST_CARDS = 2 * MAX_DECKS * CARDS_PER_DECK  # above any stack's cards and cover cards


@dataclass
class ShoeData:
    """One shoe as the journal tells it."""

    shoe: str
    decks: int | None = None
    cuts: list[tuple[int, int | None]] = field(default_factory=list)   # (position, stack)
    covers_from_bottom: list[int] = field(default_factory=list)
    loaded: int | None = None
    reads: list[Read] = field(default_factory=list)
    cover_positions: list[int] = field(default_factory=list)
    reconciliation: dict[str, Any] | None = None
    shuffle_count: tuple[int, int] | None = None                          # (card_count, expected)
    # cards a floorperson entered for reads the shoe could not make: {"card", "by"}, as journaled.
    # Known from the entry alone (no device read them): the card set counts them unidentified.
    entered: list[dict[str, str]] = field(default_factory=list)
    # cards read after the reconciliation (drawn from the ended shoe before the next load): among
    # the cards it counted as remaining
    read_after_reconciliation: int = 0

    @property
    def remaining(self) -> int | None:
        rec = self.reconciliation
        value = rec.get("remaining_in_shoe") if rec else None
        return max(0, value - self.read_after_reconciliation) if isinstance(value, int) and value >= 0 else None

    @property
    def stack_size(self) -> int | None:
        if self.loaded is not None:
            return self.loaded
        if self.cuts and self.cuts[-1][1] is not None:
            return self.cuts[-1][1]
        return self.decks * CARDS_PER_DECK if self.decks else None

    def verify(self) -> CardSetReport:
        """The card-set verification of this shoe (``cardset.verify_cardset``)."""
        if not self.decks:
            raise ValueError(f"shoe {self.shoe}: the journal does not say how many decks")
        return verify_cardset(self.reads, decks=self.decks, loaded=self.loaded, remaining=self.remaining,
                              shoe=self.shoe)


def collect_shoes(entries: Iterable[Any]) -> list[ShoeData]:
    shoes: dict[str, ShoeData] = {}

    def get(sid: str) -> ShoeData:
        doc = shoes.get(sid)
        if doc is None:
            doc = shoes[sid] = ShoeData(sid)
        return doc

    for e in entries:
        try:
            _collect_one(e, get)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise malformed_entry(e, exc) from None
    return list(shoes.values())


def _collect_one(e: Any, get: Callable[[str], ShoeData]) -> None:
    kind, p = e.kind, e.payload
    if kind == kinds.SHOE_START:
        sid = p.get("shoe") or e.shoe_id
        if isinstance(sid, str):
            decks = p.get("decks")
            get(sid).decks = decks if isinstance(decks, int) else None
        return
    sid = e.shoe_id
    if not isinstance(sid, str):
        return
    doc = get(sid)
    if kind == kinds.CUT:
        stack = p.get("stack")
        doc.cuts.append((_count(p["position"], "position"), None if stack is None else _count(stack, "stack")))
    elif kind == kinds.COVER:
        doc.covers_from_bottom.append(_count(p["from_bottom"], "from_bottom"))
    elif kind == kinds.SHOE_LOADED:
        doc.loaded = _count(p["cards"], "cards")
    elif kind == kinds.RECONCILIATION:
        doc.reconciliation = dict(p)
    elif kind == kinds.CARD_ENTERED:
        doc.entered.append({"card": text_field(p, "card"), "by": text_field(p, "by")})
    elif kind == kinds.INPUT_DEVICE:
        p = current_payload(e)
        event, f = p.get("event"), p.get("fields") or {}
        if event == _CARD_READ:
            doc.reads.append(Read(_count(f["position"], "position"), _count(f["rank"], "rank"),
                                  _count(f["suit"], "suit")))
            doc.read_after_reconciliation += doc.reconciliation is not None
        elif event == _COVER_CARD:
            doc.cover_positions.append(_count(f["position"], "position"))
        elif event == _SHUFFLE_DONE:
            doc.shuffle_count = (_count(f.get("card_count", 0), "card_count"),
                                 _count(f.get("expected_count", 0), "expected_count"))


def _count(value: Any, name: str) -> int:
    """``value``, a count or a place of cards: a whole number no shoe exceeds (a stack is rebuilt
    card by card from it). Else ``TypeError(name)``: a malformed payload naming the field."""
    if type(value) is not int or not 0 <= value <= _MOST_CARDS:
        raise TypeError(name)
    return value


@dataclass(frozen=True)
class StackMap:
    """``index[position]``: the shuffler-output index of the card at that shoe position (1-based),
    and ``card_index[position]``: its index among the cards of the loaded shoe (covers skipped)."""

    stack: int
    index: dict[int, int]
    card_index: dict[int, int]


def _cut(items: list[int], n: int) -> list[int]:
    if not 1 <= n < len(items):
        raise ValueError(f"cut at {n} does not fit a stack of {len(items)} items")
    return [*items[n:], *items[:n], _COVER]


def _second_cover(items: list[int], n: int) -> list[int]:
    below = 0
    for i in range(len(items) - 1, -1, -1):
        if items[i] != _COVER:
            below += 1
            if below == n:
                return [*items[:i], _COVER, *items[i:]]
    raise ValueError(f"a cover card {n} cards above the bottom does not fit the stack")


def stack_map(shoe: ShoeData) -> tuple[StackMap | None, str | None]:
    """The position map of ``shoe``, or ``(None, reason)``."""
    size = shoe.cuts[0][1] if shoe.cuts and shoe.cuts[0][1] is not None else shoe.stack_size
    if not size:
        return None, "the journal does not say how many cards were loaded"
    if UNKNOWN_POSITION in shoe.cover_positions or any(r.position == UNKNOWN_POSITION for r in shoe.reads):
        # (it read "a cover card at position 0 is outside the stack": a review)
        return None, ("the shoe does not report positions (0, unknown: docs/protocol.md 9.18), so its cards "
                      "cannot be placed in the stack")
    items = list(range(size))
    try:
        for position, _ in shoe.cuts:
            items = _cut(items, position)
        for from_bottom in shoe.covers_from_bottom:
            items = _second_cover(items, from_bottom)
    except ValueError as exc:
        return None, str(exc)
    for position in sorted(set(shoe.cover_positions)):
        if position < 1 or position > len(items) + 1:
            return None, f"a cover card at position {position} is outside the stack"
        if position > len(items) or items[position - 1] != _COVER:
            items.insert(position - 1, _COVER)
    index: dict[int, int] = {}
    card_index: dict[int, int] = {}
    n = 0
    for pos, item in enumerate(items, start=1):
        if item != _COVER:
            index[pos] = item
            card_index[pos] = n
            n += 1
    for r in shoe.reads:
        if r.position not in index:
            return None, f"a card was read at position {r.position}, where the recorded cut puts no card"
    return StackMap(size, index, card_index), None


def partial_order(shoe: ShoeData, order: Literal["shuffler", "shoe"] = "shuffler") -> list[int | None]:
    """The stack as card codes (``None`` = unknown), in shuffler or shoe order."""
    smap, reason = stack_map(shoe)
    if smap is None:
        raise ValueError(f"shoe {shoe.shoe}: {reason}")
    places = smap.index if order == "shuffler" else smap.card_index
    out: list[int | None] = [None] * smap.stack
    for r in shoe.reads:
        if r.rank == UNREADABLE:
            continue
        c = r.card()
        if c is None:
            raise ValueError(f"shoe {shoe.shoe}: a foreign card at position {r.position}")
        i = places[r.position]
        if out[i] is not None:
            raise ValueError(f"shoe {shoe.shoe}: position {r.position} read twice")
        out[i] = c.code
    return out


def previous_orders(shoes: list[ShoeData], decks: int, seed: int) -> list[list[int] | None]:
    """For each shoe, the previous shoe's cards in the order they left it (unread cards appended
    in a seeded random order): the pre-shuffle order when the discards go back into the shuffler
    in deal order. ``None`` for the first shoe, or when the previous shoe cannot be used."""
    out: list[list[int] | None] = [None]
    for i in range(1, len(shoes)):
        prev = shoes[i - 1]
        try:
            if prev.decks != decks:
                raise ValueError("different decks")
            partial = partial_order(prev, "shoe")
            known = [c for c in partial if c is not None]
            rest: list[int | None] = [None] * (len(partial) - len(known))
            full, _ = impute([*known, *rest], decks, random.Random(f"{seed}:{prev.shoe}:pre"))
            out.append(full)
        except ValueError:
            out.append(None)
    return out
