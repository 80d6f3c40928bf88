"""21 Baccarat hand values and the Bonus Wager's "pair or better" ranking (681a).

681a.3 (cards, values, "pair or better") was not found; what is here follows the assumptions in
docs/assumptions.md, each switchable in the Rules Submission where it shapes play:
- card values as in Pennsylvania's 21-type games (633a.3): 2-10 face value, J/Q/K 10, an ace 11
  unless that takes the hand over 21, then 1; a total with an ace counted as 11 is soft;
- a natural is a two-card 21;
- "pair or better" is a poker ranking of the hand's two or three cards.
"""
from __future__ import annotations

from collections.abc import Sequence

from .cards import Card
from .model import BonusRank

# 681a.7(f)(2) and (g): a hand draws its one additional card when it "has a total value of less
# than a soft or hard 17". Fixed by the regulation, not a Rules Submission setting.
DRAW_BELOW = 17


def card_value(c: Card) -> int:
    """Hard value of a card (ace counted 1): 2-10 face value, J/Q/K 10."""
    return min(c.rank, 10)


def hand_total(cards: Sequence[Card]) -> tuple[int, bool]:
    """Return ``(total, soft)``: the best total, counting one ace as 11 when that does not take the
    hand over 21 (``soft`` is then True)."""
    hard = 0
    has_ace = False
    for c in cards:
        hard += min(c.rank, 10)
        if c.rank == 1:
            has_ace = True
    if has_ace and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


def total(cards: Sequence[Card]) -> int:
    return hand_total(cards)[0]


def is_natural(cards: Sequence[Card]) -> bool:
    """A two-card 21 (ace and a ten-value card)."""
    return len(cards) == 2 and total(cards) == 21


def _is_straight(ranks: Sequence[int]) -> bool:
    r = sorted(ranks)
    if len(set(r)) != 3:
        return False
    if r[2] - r[0] == 2:
        return True
    return r == [1, 12, 13]  # Q-K-A: the ace plays high


def bonus_rank(cards: Sequence[Card]) -> BonusRank:
    """Rank a hand of two or three cards for the Bonus Wager (681a.7(k)(2)-(3)).

    Three cards: suited three of a kind > straight flush > three of a kind > straight > flush >
    pair. Two cards can only make a pair. Any other size ranks NONE.
    """
    ranks = [c.rank for c in cards]
    if len(cards) == 2:
        return BonusRank.PAIR if ranks[0] == ranks[1] else BonusRank.NONE
    if len(cards) != 3:
        return BonusRank.NONE
    flush = len({c.suit for c in cards}) == 1
    distinct = len(set(ranks))
    if distinct == 1:
        return BonusRank.SUITED_THREE_OF_A_KIND if flush else BonusRank.THREE_OF_A_KIND
    straight = _is_straight(ranks)
    if straight and flush:
        return BonusRank.STRAIGHT_FLUSH
    if straight:
        return BonusRank.STRAIGHT
    if flush:
        return BonusRank.FLUSH
    if distinct == 2:
        return BonusRank.PAIR
    return BonusRank.NONE
