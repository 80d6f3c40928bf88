"""The shoe's regulated preparation as pure functions: cut with cover cards, burn, cover reached.

Stacks are lists of cards, index 0 the top (the next card out of the shoe).

Contract:
- ``check_cut(n, position, min_depth)``: 681a.5(c): the cover card goes at least ``min_depth``
  cards in from the top AND the bottom of the stack (``position`` = cards above it). Raises
  ``CutError`` naming the limit otherwise.
- ``cut(stack, position, min_depth)`` -> new stack: 681a.5(d): the cards above the cover card (and
  the cover card) go to the bottom.
- ``check_second_cover(n, from_bottom, min_depth, burn)``: 681a.5(d): the second cover card at least
  ``min_depth`` cards above the bottom, and below the burned cards; ``second_cover_limits`` gives
  that range. ``PreparedShoe.cover_index`` is the number of cards dealt
  before the second cover card appears.
- ``prepare(cards, cut_position, cover_from_bottom, burn, min_depth)`` -> ``PreparedShoe``.
- ``round_may_start(dealt, cover_index)``: 681a.7(d): rounds go on until the cover card is reached;
  the round during which it appears (or at whose start it is the first card) is completed, then the
  cards are reshuffled.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .cards import Card
from .errors import RulesError

REGULATION_MIN_COVER_DEPTH = 10  # 681a.5(c)-(d)


class CutError(RulesError):
    """A cut or cover-card position that the regulation does not allow."""


def check_cut(n: int, position: int, min_depth: int = REGULATION_MIN_COVER_DEPTH) -> None:
    if min_depth < REGULATION_MIN_COVER_DEPTH:
        raise CutError(f"the minimum cover-card depth is {REGULATION_MIN_COVER_DEPTH} cards (681a.5(c)), not {min_depth}")
    if not min_depth <= position <= n - min_depth:
        raise CutError(
            f"cover card at {position} cards from the top of a {n}-card stack: it must be at least "
            f"{min_depth} cards in from the top and from the bottom (681a.5(c)), i.e. {min_depth}..{n - min_depth}"
        )


def cut(stack: Sequence[Card], position: int, min_depth: int = REGULATION_MIN_COVER_DEPTH) -> list[Card]:
    check_cut(len(stack), position, min_depth)
    return list(stack[position:]) + list(stack[:position])


def second_cover_limits(n: int, min_depth: int = REGULATION_MIN_COVER_DEPTH, burn: int = 1) -> tuple[int, int]:
    """The places the second cover card may take in a stack of ``n``, as cards above the bottom,
    lowest and highest (``check_second_cover``); empty (lowest above highest) when ``burn`` cards
    leave no place at ``min_depth``."""
    return min_depth, n - burn


def check_second_cover(n: int, from_bottom: int, min_depth: int = REGULATION_MIN_COVER_DEPTH, burn: int = 1) -> None:
    """681a.5(d): "at least ten cards above the bottom of the stack" (``min_depth``, which a Rules
    Submission may raise); and below the ``burn`` card(s) 681a.7(c) removes first after the load,
    or the cover card would come out before the burn."""
    lowest, highest = second_cover_limits(n, min_depth, burn)
    if lowest <= from_bottom <= highest:
        return
    if from_bottom < min_depth:
        raise CutError(f"second cover card {from_bottom} cards above the bottom of a {n}-card stack: it must be "
                       f"at least {min_depth} cards above the bottom (681a.5(d))")
    burned = "the card burned" if burn == 1 else f"the {burn} cards burned"
    raise CutError(f"second cover card {from_bottom} cards above the bottom of a {n}-card stack: it must be "
                   f"below {burned} after the load (681a.7(c)), at most {n - burn} cards above the bottom")


@dataclass(frozen=True, slots=True)
class PreparedShoe:
    """A cut, loaded shoe. ``stack`` includes the burned cards at its front; dealing starts at
    ``first_live``; the cover card appears when ``cover_index`` cards have left the shoe."""

    stack: tuple[Card, ...]
    cut_position: int
    cover_index: int
    burned: tuple[Card, ...]

    @property
    def first_live(self) -> int:
        return len(self.burned)


def prepare(
    cards: Sequence[Card],
    cut_position: int,
    cover_from_bottom: int,
    burn: int = 1,
    min_depth: int = REGULATION_MIN_COVER_DEPTH,
) -> PreparedShoe:
    """Cut (681a.5(c)-(d)), place the second cover card, burn the first card(s) (681a.7(c))."""
    stack = cut(cards, cut_position, min_depth)
    if burn < 1:
        raise CutError(f"cannot burn {burn} cards: 681a.7(c) removes the first card")
    check_second_cover(len(stack), cover_from_bottom, min_depth, burn)
    cover_index = len(stack) - cover_from_bottom
    return PreparedShoe(tuple(stack), cut_position, cover_index, tuple(stack[:burn]))


def round_may_start(dealt: int, cover_index: int) -> bool:
    """True while the cover card has not come out: when ``dealt == cover_index`` the cover card is
    the first card of this round; it is set aside and this round is still completed (681a.7(d))."""
    return dealt <= cover_index


def random_cut(rng: random.Random, n: int, min_depth: int = REGULATION_MIN_COVER_DEPTH) -> int:
    """A cut position drawn uniformly from the legal ones."""
    return rng.randint(min_depth, n - min_depth)
