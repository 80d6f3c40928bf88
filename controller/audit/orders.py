"""Card orders as the audit sees them: lists of card codes, one list per shoe.

A *card code* is ``Card.code`` of ``controller.rules.cards``: ``(rank - 1) * 4 + suit`` with suit
0 clubs, 1 diamonds, 2 hearts, 3 spades, so 0 = AC, 1 = AD, ..., 51 = KS. An *order* lists the
codes of a stack from the top (index 0, the first card out) down. A *complete* order of ``decks``
decks holds every code exactly ``decks`` times; the statistical tests take only complete orders.
A *partial* order has ``None`` where a card is unknown (never read, or unreadable).

Contracts:
- ``code(rank, suit)`` -> int; ``card_text(code)`` -> ``"AS"``, ``"10H"``; bad values raise
  ``ValueError``.
- ``fresh_order(decks)``: ``decks`` new decks in the emulator's fixed order (each deck clubs,
  diamonds, hearts, spades, each suit ace to king; ``firmware_bridge.emulator.standard_stack``).
- ``check_complete(order, decks)``: raises ``ValueError`` naming the first card held the wrong
  number of times.
- ``impute(partial, decks, rng)`` -> ``(order, imputed)``: the ``None`` places filled with the
  cards the composition still owes, in a random order drawn from ``rng``. Raises ``ValueError``
  when the known cards do not fit the composition (a card seen too often, a code out of range, or
  a length other than ``decks * 52``). Under the null hypothesis of a uniform shuffle this leaves
  the distribution of any statistic of the completed order unchanged (the unknown cards are then
  a uniform arrangement of what is left); under a weak shuffle it only dilutes the evidence.
"""
from __future__ import annotations

import random
from collections.abc import Sequence

from controller.rules.cards import card_from_wire

__all__ = ["CARDS_PER_DECK", "CODES", "card_text", "check_complete", "code", "fresh_order", "impute", "rank_of"]

CARDS_PER_DECK = 52
CODES = range(CARDS_PER_DECK)


def code(rank: int, suit: int) -> int:
    """The code of ``rank`` (1-13) and ``suit`` (0-3, C D H S)."""
    if not (isinstance(rank, int) and 1 <= rank <= 13 and isinstance(suit, int) and 0 <= suit <= 3):
        raise ValueError(f"no such card: rank {rank!r}, suit {suit!r}")
    return (rank - 1) * 4 + suit


def rank_of(c: int) -> int:
    return c // 4 + 1


def card_text(c: int) -> str:
    if not (isinstance(c, int) and 0 <= c < CARDS_PER_DECK):
        raise ValueError(f"not a card code: {c!r}")
    return str(card_from_wire(rank_of(c), c % 4))


def fresh_order(decks: int) -> list[int]:
    """``decks`` new decks as the emulated shuffler starts them (its pre-shuffle order)."""
    if not isinstance(decks, int) or decks < 1:
        raise ValueError(f"decks must be a whole number of at least 1, not {decks!r}")
    deck = [code(rank, suit) for suit in range(4) for rank in range(1, 14)]
    return deck * decks


def check_complete(order: Sequence[int], decks: int, *, what: str = "order") -> None:
    """Raise ``ValueError`` unless ``order`` holds every code exactly ``decks`` times."""
    if len(order) != decks * CARDS_PER_DECK:
        raise ValueError(f"{what}: {len(order)} cards, a {decks}-deck stack has {decks * CARDS_PER_DECK}")
    counts = [0] * CARDS_PER_DECK
    for c in order:
        if not isinstance(c, int) or not 0 <= c < CARDS_PER_DECK:
            raise ValueError(f"{what}: {c!r} is not a card code")
        counts[c] += 1
    for c, n in enumerate(counts):
        if n != decks:
            raise ValueError(f"{what}: {card_text(c)} appears {n} times, a {decks}-deck stack holds {decks}")


def impute(partial: Sequence[int | None], decks: int, rng: random.Random) -> tuple[list[int], int]:
    """Fill the unknown places of ``partial`` with the cards still owed, in a random order."""
    if len(partial) != decks * CARDS_PER_DECK:
        raise ValueError(f"{len(partial)} places, a {decks}-deck stack has {decks * CARDS_PER_DECK}")
    owed = [decks] * CARDS_PER_DECK
    holes = []
    for i, c in enumerate(partial):
        if c is None:
            holes.append(i)
            continue
        if not isinstance(c, int) or not 0 <= c < CARDS_PER_DECK:
            raise ValueError(f"{c!r} is not a card code")
        owed[c] -= 1
        if owed[c] < 0:
            raise ValueError(f"{card_text(c)} seen more than {decks} times")
    fill = [c for c in CODES for _ in range(owed[c])]
    rng.shuffle(fill)
    order = list(partial)
    for i, c in zip(holes, fill):
        order[i] = c
    return order, len(holes)  # type: ignore[return-value]
