"""Card-set verification: the cards a shoe yielded against the composition it should hold.

This is the pure function the live table calls at each reshuffle and the offline audit calls for
every shoe of a journal (``shoectl audit cards``).

``verify_cardset(reads, *, decks=None, composition=None, loaded=None, remaining=None, shoe=None)
-> CardSetReport``

- ``reads``: every card that left the shoe, as ``Read(position, rank, suit)`` (the CARD_READ
  fields: position 1-based as loaded, cover cards taking positions too; rank 1-13 or
  ``UNREADABLE`` (0xFF); suit 0-3 for C D H S). Order does not matter.
- ``decks`` or ``composition``: the expected set (``Composition.standard(decks)``, or any
  ``controller.rules.cards.Composition``). Exactly one of them.
- ``loaded``: the shoe's count when loaded (SHOE_LOADED), if known.
- ``remaining``: cards still in the shoe, never read (the reconciliation's ``remaining_in_shoe``);
  if ``None`` it is ``loaded - len(reads)`` when ``loaded`` is known, else 0 (every card was read).

What the reads can and cannot prove: a card read more often than the composition holds is
*extra* (the later reads, by position); a card the composition does not hold (or a rank/suit out
of range) is *foreign*; a read position used twice is *reused* (never position 0: "unknown",
from a shoe that does not sense positions); ``unaccounted`` is
``loaded - (reads + remaining)`` when both are known (a card that left unread, or a double read). Cards never read (below the cover
card, unloaded unread) and unreadable reads are *unidentified*: their number is known but not what
they are. So *missing* cards are named only when nothing is unidentified; otherwise the report
gives how many are missing (``expected - identified - unidentified``, when positive) and the cards
not seen (``not_seen``, the candidates). ``surplus`` is how many more cards the shoe held than the
composition (an extra card may hide among the unread ones).

``CardSetReport.ok`` is true when nothing is extra, foreign, reused, missing or surplus, and the
loaded count (when known) equals the composition. ``problems`` lists one line per finding.
Raises ``ValueError`` for bad arguments (both or neither of decks/composition, a negative count).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from controller.rules.cards import Card, Composition, card_from_wire
from controller.rules.errors import CardError
from firmware_bridge.protocol.wire_values import CARD_UNREADABLE as UNREADABLE, UNKNOWN_POSITION

__all__ = ["UNREADABLE", "CardSetReport", "Read", "verify_cardset"]


class Read(NamedTuple):
    """One CARD_READ: ``position`` (1-based, as loaded), ``rank`` (1-13 or 0xFF), ``suit`` (0-3)."""

    position: int
    rank: int
    suit: int

    @property
    def readable(self) -> bool:
        return self.rank != UNREADABLE

    def card(self) -> Card | None:
        """The card read, or ``None`` when unreadable or out of range."""
        try:
            return card_from_wire(self.rank, self.suit)
        except CardError:
            return None

    def text(self) -> str:
        c = self.card()
        return str(c) if c is not None else f"rank {self.rank} suit {self.suit}"


@dataclass(frozen=True)
class CardSetReport:
    """The verification of one shoe (see the module docstring for the meaning of each field)."""

    shoe: str | None
    expected: int
    loaded: int | None
    read: int
    identified: int
    unreadable: list[int] = field(default_factory=list)            # positions
    unread: int = 0
    extra: list[tuple[str, int]] = field(default_factory=list)     # (card, position)
    foreign: list[tuple[str, int]] = field(default_factory=list)   # (card or raw text, position)
    reused_positions: list[int] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)               # named only when nothing is unidentified
    missing_count: int = 0
    surplus: int = 0
    not_seen: list[str] = field(default_factory=list)
    unaccounted: int = 0                                           # loaded - (reads + remaining)

    @property
    def unidentified(self) -> int:
        return self.unread + len(self.unreadable)

    @property
    def problems(self) -> list[str]:
        out = []
        if self.loaded is not None and self.loaded != self.expected:
            out.append(f"loaded {self.loaded} cards, expected {self.expected}")
        if self.unaccounted:
            out.append(f"loaded {self.loaded} cards but {self.read} read + {self.unread} remaining "
                       f"= {self.read + self.unread}")
        for c, pos in self.extra:
            out.append(f"extra {c} at position {pos}")
        for c, pos in self.foreign:
            out.append(f"foreign card ({c}) at position {pos}")
        for pos in self.reused_positions:
            out.append(f"position {pos} read more than once")
        if self.missing:
            out.append(f"missing {', '.join(self.missing)}")
        elif self.missing_count:
            out.append(f"{self.missing_count} card(s) missing (not identifiable: {self.unidentified} unidentified)")
        if self.surplus:
            out.append(f"{self.surplus} card(s) more than the composition")
        return out

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "shoe": self.shoe, "ok": self.ok, "expected": self.expected, "loaded": self.loaded, "read": self.read,
            "identified": self.identified, "unreadable": list(self.unreadable), "unread": self.unread,
            "extra": [{"card": c, "position": p} for c, p in self.extra],
            "foreign": [{"card": c, "position": p} for c, p in self.foreign],
            "reused_positions": list(self.reused_positions), "missing": list(self.missing),
            "missing_count": self.missing_count, "surplus": self.surplus, "unaccounted": self.unaccounted,
            "not_seen": list(self.not_seen),
            "problems": self.problems,
        }


def verify_cardset(reads: Iterable[Read | tuple[int, int, int]], *, decks: int | None = None,
                   composition: Composition | None = None, loaded: int | None = None,
                   remaining: int | None = None, shoe: str | None = None) -> CardSetReport:
    if (decks is None) == (composition is None):
        raise ValueError("give exactly one of decks and composition")
    comp = Composition.standard(decks) if composition is None else composition  # type: ignore[arg-type]
    for name, value in (("loaded", loaded), ("remaining", remaining)):
        if value is not None and (not isinstance(value, int) or value < 0):
            raise ValueError(f"{name} must be a count of 0 or more, not {value!r}")
    all_reads = sorted((Read(*r) for r in reads), key=lambda r: r.position)
    left = comp.counts()
    seen_positions: Counter[int] = Counter()
    unreadable: list[int] = []
    extra: list[tuple[str, int]] = []
    foreign: list[tuple[str, int]] = []
    identified = 0
    for r in all_reads:
        seen_positions[r.position] += 1
        if not r.readable:
            unreadable.append(r.position)
            continue
        c = r.card()
        if c is None or comp.count(c) == 0:
            foreign.append((r.text(), r.position))
            continue
        if left.get(c, 0) == 0:
            extra.append((str(c), r.position))
            continue
        left[c] -= 1
        identified += 1
    if remaining is None:
        remaining = max(0, loaded - len(all_reads)) if loaded is not None else 0
    unidentified = remaining + len(unreadable)
    held = len(all_reads) + remaining
    not_seen = [str(c) for c, n in sorted(left.items(), key=lambda kv: kv[0].code) for _ in range(n)]
    missing_count = max(0, comp.total - identified - unidentified)
    # Extra and foreign cards are reported one by one; the surplus counts the rest.
    surplus = max(0, held - comp.total - len(extra) - len(foreign))
    missing = not_seen if unidentified == 0 and missing_count else []
    return CardSetReport(
        shoe=shoe, expected=comp.total, loaded=loaded, read=len(all_reads), identified=identified,
        unreadable=unreadable, unread=remaining, extra=extra, foreign=foreign,
        # position 0 is "unknown" (docs/protocol.md 9.18: a shoe that does not sense positions), never
        # one position read twice (a review: such a shoe failed every shoe's reconciliation)
        reused_positions=sorted(p for p, n in seen_positions.items() if n > 1 and p != UNKNOWN_POSITION),
        missing=missing,
        missing_count=missing_count, surplus=surplus, not_seen=not_seen,
        unaccounted=(loaded - held) if loaded is not None else 0,
    )
