"""Punto Banco drawing rules (Minibaccarat 627a, Midibaccarat 629a; tableau of 631a.11).

Pure functions of point counts. Card values: ace 1, 2-9 face value, 10/J/Q/K 0; a hand's Point
Count is the sum modulo 10. A Natural is a two-card 8 or 9.
"""
from __future__ import annotations

from collections.abc import Iterable

from .cards import Card

NATURALS = frozenset({8, 9})

# Banker 3-6 after the Player drew: the Player's third-card values on which the Banker draws
# (the standard Punto Banco tableau; column = value of the Player's third card).
BANKER_DRAWS_ON: dict[int, frozenset[int]] = {
    3: frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}),
    4: frozenset({2, 3, 4, 5, 6, 7}),
    5: frozenset({4, 5, 6, 7}),
    6: frozenset({6, 7}),
}


def card_value(c: Card) -> int:
    """Baccarat value of a card: A=1, 2-9 face value, 10/J/Q/K=0."""
    return c.rank if c.rank < 10 else 0


def point_count(cards: Iterable[Card]) -> int:
    """The hand's point count: its cards' values (``card_value``) summed, modulo 10."""
    total = 0
    for c in cards:  # card_value inlined: every decision and every odds enumeration counts points
        if c.rank < 10:
            total += c.rank
    return total % 10


def is_natural(two_card_total: int) -> bool:
    return two_card_total in NATURALS


def player_draws(player_total: int) -> bool:
    """631a.11(b): the Player draws on 0-5 and stands on 6-7 (naturals handled before)."""
    return player_total <= 5


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """631a.11(c): does the Banker draw?

    ``player_third`` is the value of the Player's third card, or ``None`` if the Player stood.
    (1) Player stood: Banker draws on 0-5, stands on 6-7.
    (2) Player drew: 0-2 draws, 7 stands, 3-6 per the table in ``BANKER_DRAWS_ON``.
    """
    if player_third is None:
        return banker_total <= 5
    if banker_total <= 2:
        return True
    if banker_total >= 7:
        return False
    return player_third in BANKER_DRAWS_ON[banker_total]
