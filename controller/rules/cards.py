"""Cards, card strings and shoe compositions.

Contract:
- ``parse_card("AS") -> Card``; accepts a rank (``A 2..9 10 T J Q K``) then a suit (``C D H S`` or
  the symbols ``♣ ♦ ♥ ♠``), case-insensitive, surrounding white space ignored. Anything else raises
  ``CardError`` with a one-line message naming the bad text.
- ``card_from_wire(rank, suit) -> Card``: the card of a CARD_READ (rank 1-13, suit 0-3 in the order
  of ``SUITS``), the one place the controller turns the wire's suit numbers into letters (the
  emulator, which may not import the controller, names its own: ``firmware_bridge.emulator.cards``);
  ``CardError`` otherwise.
- ``Card`` is an immutable, hashable (rank, suit) pair; ``str(card)`` is the canonical form
  (``"AS"``, ``"10H"``, ``"KD"``). The 52 cards are interned: parsing returns the same objects.
- ``Composition`` is a multiset of cards (an N-deck shoe, possibly with cards removed). Removing
  more copies of a card than it holds raises ``CompositionError``.

Card values per game live with the games (``punto_banco.card_value``, ``twentyone.card_value``).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from shoectl_config.text import show

from .errors import CardError, CompositionError

RANKS: tuple[int, ...] = tuple(range(1, 14))
SUITS: tuple[str, ...] = ("C", "D", "H", "S")
RED_SUITS = frozenset({"D", "H"})

RANK_TEXT: dict[int, str] = {1: "A", **{n: str(n) for n in range(2, 11)}, 11: "J", 12: "Q", 13: "K"}  # as a card's name begins
_RANK_PARSE = {"A": 1, "T": 10, "10": 10, "J": 11, "Q": 12, "K": 13}
_RANK_PARSE.update({str(n): n for n in range(2, 10)})
_SUIT_PARSE = {"C": "C", "D": "D", "H": "H", "S": "S", "♣": "C", "♦": "D", "♥": "H", "♠": "S"}

MAX_DECKS = 12


class Card(NamedTuple):
    """A playing card: ``rank`` 1 (ace) .. 13 (king), ``suit`` one of ``C D H S``."""

    rank: int
    suit: str

    def __str__(self) -> str:
        return RANK_TEXT.get(self.rank, str(self.rank)) + self.suit

    @property
    def is_red(self) -> bool:
        return self.suit in RED_SUITS

    @property
    def code(self) -> int:
        """A dense index 0..51 (rank-major), for tables and compact storage."""
        return (self.rank - 1) * 4 + SUITS.index(self.suit)


ALL_CARDS: tuple[Card, ...] = tuple(Card(r, s) for r in RANKS for s in SUITS)
_INTERNED = {(c.rank, c.suit): c for c in ALL_CARDS}


def card(rank: int, suit: str) -> Card:
    """Return the interned card for ``rank`` (1-13) and ``suit`` (C/D/H/S)."""
    try:
        return _INTERNED[(rank, suit)]
    except KeyError:
        raise CardError(f"no such card: rank {rank!r}, suit {suit!r}") from None


def card_from_wire(rank: int, suit: int) -> Card:
    """The card a device reports in CARD_READ (docs/protocol.md): ``rank`` 1 (ace) .. 13 (king),
    ``suit`` 0 clubs, 1 diamonds, 2 hearts, 3 spades (the order of ``SUITS``). Anything else, the
    unreadable marker (0xFF) included, raises ``CardError``."""
    if _whole(rank) and _whole(suit) and 1 <= rank <= 13 and 0 <= suit < len(SUITS):
        return _INTERNED[(int(rank), SUITS[suit])]
    raise CardError(f"no such card: rank {rank!r}, suit {suit!r}")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # an IntEnum (protocol Suit) too


def parse_card(text: str) -> Card:
    """Parse one card string such as ``AS``, ``10h``, ``TH`` or ``K♦``."""
    if isinstance(text, Card):
        return text
    raw = str(text).strip()
    upper = raw.upper()
    if len(upper) < 2:
        raise CardError(f"unknown card {show(raw)}: expected a rank (A,2-9,10/T,J,Q,K) and a suit (C,D,H,S)")
    rank = _RANK_PARSE.get(upper[:-1])
    suit = _SUIT_PARSE.get(upper[-1])
    if rank is None or suit is None:
        raise CardError(f"unknown card {show(raw)}: expected a rank (A,2-9,10/T,J,Q,K) and a suit (C,D,H,S)")
    return _INTERNED[(rank, suit)]


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse a comma- or space-separated card list (or an iterable of card strings). An empty item
    between commas beside cards (``AS,,KD``, ``AS,``) is refused: a card left out of a list must
    not pass for a shorter list; a list of no card at all is ``[]``."""
    if isinstance(text, str):
        parts = [p for p in text.replace(",", " ").split() if p]
        if parts and any(not item.strip() for item in text.split(",")):  # (no card at all: the caller says so)
            raise CardError(f"an empty item in the card list {show(text)}: a card left out between commas?")
    else:
        parts = list(text)
    return [parse_card(p) for p in parts]


def format_cards(cards: Iterable[Card]) -> str:
    return ",".join(str(c) for c in cards)


class Composition:
    """A multiset of cards: what a shoe holds.

    ``Composition.standard(decks)`` is ``decks`` full 52-card decks. ``remove(cards)`` returns a new
    composition without those cards and raises ``CompositionError`` if a card is not there.
    """

    __slots__ = ("_counts", "decks")

    def __init__(self, counts: dict[Card, int], decks: int) -> None:
        self._counts = {c: n for c, n in counts.items() if n}
        self.decks = decks

    @classmethod
    def standard(cls, decks: int) -> Composition:
        if not isinstance(decks, int) or isinstance(decks, bool) or not 1 <= decks <= MAX_DECKS:
            raise CompositionError(f"decks must be a whole number from 1 to {MAX_DECKS}, not {decks!r}")
        return cls({c: decks for c in ALL_CARDS}, decks)

    def remove(self, cards: Iterable[Card]) -> Composition:
        counts = dict(self._counts)
        for c, n in Counter(cards).items():
            have = counts.get(c, 0)
            if n > have:
                raise CompositionError(
                    f"card {c} {n} times, but the {self.decks}-deck shoe holds {have}"
                )
            counts[c] = have - n
        return Composition(counts, self.decks)

    def count(self, c: Card) -> int:
        return self._counts.get(c, 0)

    @property
    def total(self) -> int:
        return sum(self._counts.values())

    def counts(self) -> dict[Card, int]:
        """A copy of the card -> count mapping (cards with count 0 omitted)."""
        return dict(self._counts)

    def rank_counts(self) -> list[int]:
        """Counts by rank: index 0 unused, 1 (ace) .. 13 (king)."""
        out = [0] * 14
        for c, n in self._counts.items():
            out[c.rank] += n
        return out

    def cards(self) -> list[Card]:
        """Every card, each repeated by its count, in a fixed (sorted) order."""
        return [c for c in ALL_CARDS for _ in range(self._counts.get(c, 0))]

    def __iter__(self) -> Iterator[Card]:
        return iter(self.cards())

    def __len__(self) -> int:
        return self.total

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Composition) and self._counts == other._counts

    def __repr__(self) -> str:
        return f"Composition(decks={self.decks}, total={self.total})"
