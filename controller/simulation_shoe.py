"""What every simulation path shares: the generator, one shoe's preparation, and the ``Tally``.

Contract:
- ``make_rng(seed)``: a seeded ``random.Random`` for reproducible runs, the OS's CSPRNG when
  ``seed`` is None.
- ``shuffle(rng, stack)`` shuffles a list in place with exactly the draws and swaps of
  ``rng.shuffle`` (the same permutation for the same generator state; a test checks it), about
  three times faster: the Fisher-Yates loop with ``getrandbits`` inline instead of a method call
  per card.
- ``draw_shoe(submission, rng, stack)`` shuffles ``stack`` (a list, in place) and draws the cut position and the second cover card's place; it returns
  ``ShoeDraw(cut, cover_from_bottom)``. Its draws depend only on the stack's length, so the same
  generator state deals the same shoe whether the stack holds ``Card`` objects (the reference
  path) or their ranks (the fast path): ``shuffle_and_prepare`` and ``simulation_fast`` both use it.
- ``shuffle_and_prepare(submission, rng, base) -> PreparedShoe``: the cut at a legal random
  position (681a.5(c)), the second cover card 14-16 cards above the bottom (681a.5(d)), the first
  card(s) burned (681a.7(c)).
- ``Tally``: what a simulation counted (``facts`` maps each distinct round summary to its count,
  with one sub-tally per batch of whole shoes for the confidence intervals).
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from controller.rules.cards import Card
from controller.rules.shoe import PreparedShoe, prepare, random_cut, second_cover_limits

COVER_FROM_BOTTOM = (14, 16)  # where the dealer puts the second cover card (>= 10, 681a.5(d))


@dataclass
class Tally:
    """What a simulation counted. ``facts`` maps each distinct round summary to its count."""

    shoes: int = 0
    rounds: int = 0
    void_rounds: int = 0
    cards_dealt: int = 0
    facts: Counter = field(default_factory=Counter)
    batches: list[tuple[int, Counter]] = field(default_factory=list)  # (rounds, facts) per batch of shoes

    def merge(self, other: Tally, *, new_batch: bool = False) -> None:
        self.shoes += other.shoes
        self.rounds += other.rounds
        self.void_rounds += other.void_rounds
        self.cards_dealt += other.cards_dealt
        self.facts.update(other.facts)
        if new_batch or not self.batches:
            self.batches.append((0, Counter()))
        n, f = self.batches[-1]
        f.update(other.facts)
        self.batches[-1] = (n + other.rounds, f)


def make_rng(seed: int | None) -> random.Random:
    """A seeded generator for reproducible runs; the OS CSPRNG when ``seed`` is None."""
    return random.Random(seed) if seed is not None else random.SystemRandom()


class ShoeDraw(NamedTuple):
    cut: int
    cover_from_bottom: int


def cover_range(submission: Any) -> tuple[int, int]:
    """Where the dealer puts the second cover card, in cards above the bottom: ``COVER_FROM_BOTTOM``
    moved up to the submission's ``min_cover_depth`` (681a.5(d)) and down below its burned cards
    (681a.7(c)), within the places the rules allow (``second_cover_limits``; the submission's
    parser refuses burn counts that leave none)."""
    lowest, highest = second_cover_limits(submission.decks * 52, submission.min_cover_depth, submission.burn_cards)
    hi = min(max(COVER_FROM_BOTTOM[1], lowest), highest)
    return min(max(COVER_FROM_BOTTOM[0], lowest), hi), hi


@lru_cache(maxsize=None)
def _sweep(n: int) -> tuple[tuple[int, int], ...]:
    """For Fisher-Yates on ``n`` items: each position from the last down to 1, with the bits
    ``random.Random._randbelow`` draws for it."""
    return tuple((i, (i + 1).bit_length()) for i in range(n - 1, 0, -1))


def shuffle(rng: random.Random, stack: list) -> None:
    """``rng.shuffle(stack)``, the same draws and swaps, inline (module docstring)."""
    getrandbits = rng.getrandbits
    for i, k in _sweep(len(stack)):
        j = getrandbits(k)
        while j > i:  # rejection, as _randbelow: uniform over 0..i
            j = getrandbits(k)
        stack[i], stack[j] = stack[j], stack[i]


def draw_shoe(submission: Any, rng: random.Random, stack: list) -> ShoeDraw:
    """Shuffle ``stack`` in place and draw the cut and the second cover card (module docstring)."""
    shuffle(rng, stack)
    lo, hi = cover_range(submission)
    return ShoeDraw(random_cut(rng, len(stack), submission.min_cover_depth), rng.randint(lo, hi))


def shuffle_and_prepare(submission: Any, rng: random.Random, base: list[Card]) -> PreparedShoe:
    cards = list(base)
    cut, cover_from_bottom = draw_shoe(submission, rng, cards)
    return prepare(cards, cut, cover_from_bottom, submission.burn_cards, submission.min_cover_depth)
