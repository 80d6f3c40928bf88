"""The numpy simulation path for the Punto Banco games (the optional ``fast`` extra).

Contract:
- ``deal_shoes(ranks, first_live, cover, tableau) -> Dealt``: every shoe of a 2-D array of card
  ranks (one shoe per row, top card first) dealt from ``first_live`` until its cover card (index
  ``cover[row]``) has come out, all shoes in lockstep: one array operation per step deals the
  next round of every shoe still in play. Per shoe it gives the rounds counted by the leaf code of
  ``simulation_fast.Tableau`` (so by ``RoundFacts``), the rounds and the cards dealt: the same
  figures as the reference path on the same shoes (a test gives both the same shuffled shoes).
  Every cover card must leave room for a whole round below it (``RulesError`` otherwise); the
  table's cover card (14-16 cards above the bottom) always does.
- ``simulate_numpy(submission, shoes, seed, batch_size, on_shoe=, on_progress=) -> Tally``: the
  shoes drawn by numpy's generator (``numpy.random.default_rng(seed)``: shuffled, cut at a legal
  random position, the second cover card 14-16 cards above the bottom, the burn), dealt in
  chunks of ``CHUNK`` shoes; batches of ``batch_size`` shoes as on the Python paths.

The lookup tables are the Python path's ``Tableau`` (compiled by running ``RoundEngine``) as
arrays, never typed again here.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from controller.rules.errors import RulesError
from controller.simulation_fast import ROUND_MAX, Tableau, base_ranks, tableau_for
from controller.simulation_shoe import Tally, cover_range

CHUNK = 4096  # shoes dealt together


class Dealt(NamedTuple):
    counts: np.ndarray  # (shoes, codes): rounds per leaf code
    rounds: np.ndarray  # (shoes,)
    cards: np.ndarray  # (shoes,): cards dealt after the burn


class _Arrays(NamedTuple):
    player: np.ndarray  # by pair index r1 << 4 | r3: the Player's part of the root entry
    banker: np.ndarray  # by pair index r2 << 4 | r4: the Banker's part
    flat: np.ndarray  # the tableau's flat list
    step: np.ndarray  # by node * 16 + rank: the next node; a leaf code stays where it is


_ARRAYS: dict[int, _Arrays] = {}


def _arrays(tableau: Tableau) -> _Arrays:
    key = id(tableau)
    if key not in _ARRAYS:
        flat = np.asarray(tableau.flat, np.int32)
        step = flat[np.minimum(np.arange(flat.size)[:, None] + np.arange(16), flat.size - 1)]
        step[: tableau.codes] = np.arange(tableau.codes)[:, None]
        _ARRAYS[key] = _Arrays(np.asarray(tableau.player, np.int32), np.asarray(tableau.banker, np.int32),
                               flat, step.ravel())
    return _ARRAYS[key]


def deal_shoes(ranks: np.ndarray, first_live: np.ndarray | int, cover: np.ndarray, tableau: Tableau) -> Dealt:
    """See the module docstring. ``first_live`` and ``cover`` are indices into each row (arrays,
    or one number for every row)."""
    shoes, width = ranks.shape
    cover = np.broadcast_to(np.asarray(cover, np.int64), (shoes,))
    first = np.broadcast_to(np.asarray(first_live, np.int64), (shoes,))
    if shoes and int((cover - width).max()) + ROUND_MAX > 0:
        raise RulesError("the numpy engine needs room for a whole round below every cover card")
    tables = _arrays(tableau)
    codes = tableau.codes
    cells = np.ascontiguousarray(ranks, np.int32).ravel()
    player, banker, flat, step = tables
    rows = np.arange(shoes, dtype=np.int64)
    pos, end = rows * width + first, rows * width + cover  # flat indices: the next card, the cover card
    seen_rows: list[np.ndarray] = []
    seen_codes: list[np.ndarray] = []
    while rows.size:
        node = flat[player[cells[pos] << 4 | cells[pos + 2]] + banker[cells[pos + 1] << 4 | cells[pos + 3]]]
        fifth = node >= codes
        node = step[node * 16 + cells[pos + 4]]
        sixth = node >= codes
        node = step[node * 16 + cells[pos + 5]]
        seen_rows.append(rows)
        seen_codes.append(node)
        pos += 4 + fifth + sixth
        going = pos <= end
        if not going.all():
            rows, pos, end = rows[going], pos[going], end[going]
    counts = np.bincount(np.concatenate(seen_rows or [rows]) * codes + np.concatenate(seen_codes or [rows]),
                         minlength=shoes * codes).reshape(shoes, codes)
    return Dealt(counts, counts.sum(axis=1), counts @ np.asarray(tableau.cards_used, np.int64))


def draw_shoes(submission: Any, rng: np.random.Generator, shoes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ranks, first_live, cover)`` for ``shoes`` shoes: each shuffled, cut at a legal random
    position (681a.5(c)), its second cover card placed (681a.5(d)) and its first card(s) burned
    (681a.7(c)). The cut is not moved in memory: each row holds its shuffled stack twice, and
    ``first_live`` and ``cover`` are counted from the cut."""
    base = np.asarray(base_ranks(submission.decks), np.uint64)
    n = base.size
    stacks = _shuffled(rng, base, shoes)
    depth = submission.min_cover_depth
    cut = rng.integers(depth, n - depth + 1, size=shoes)
    lo, hi = cover_range(submission)
    cover = cut + n - rng.integers(lo, hi + 1, size=shoes)
    return np.concatenate([stacks, stacks], axis=1), cut + submission.burn_cards, cover


def _shuffled(rng: np.random.Generator, base: np.ndarray, shoes: int) -> np.ndarray:
    """``shoes`` uniformly random orders of ``base`` (small values, < 16): each card gets 60
    random bits (the generator's raw output) above its value and every row is sorted; a row in which two cards drew the same
    bits is drawn again, so the order is exactly uniform."""
    keys = rng.bit_generator.random_raw((shoes, base.size))  # 64 random bits each
    keys &= np.uint64(~15 & (1 << 64) - 1)
    keys |= base
    keys.sort(axis=1)
    out = (keys & np.uint64(15)).astype(np.int8)
    tied = np.flatnonzero((np.diff(keys, axis=1) < 16).any(axis=1))
    if tied.size:
        out[tied] = _shuffled(rng, base, tied.size)
    return out


def simulate_numpy(submission: Any, shoes: int, seed: int | None, batch_size: int, *,
                   on_shoe: Callable[[int, Tally], None] | None = None,
                   on_progress: Callable[[int], None] | None = None) -> Tally:
    """See the module docstring."""
    tableau = tableau_for(submission.game)
    rng = np.random.default_rng(seed)
    batches = -(-shoes // batch_size)
    per_batch = np.zeros((batches, tableau.codes), np.int64)
    total = Tally()
    done = 0
    while done < shoes:
        size = min(CHUNK, shoes - done)
        ranks, first_live, cover = draw_shoes(submission, rng, size)
        dealt = deal_shoes(ranks, first_live, cover, tableau)
        batch_of = np.arange(done, done + size) // batch_size
        which, starts = np.unique(batch_of, return_index=True)
        per_batch[which] += np.add.reduceat(dealt.counts, starts, axis=0)
        total.shoes += size
        total.rounds += int(dealt.rounds.sum())
        total.cards_dealt += int(dealt.cards.sum())
        if on_shoe is not None:
            for i in range(size):
                one = Tally(shoes=1, rounds=int(dealt.rounds[i]), cards_dealt=int(dealt.cards[i]),
                            facts=_facts(tableau, dealt.counts[i]))
                on_shoe(done + i + 1, one)
        done += size
        if on_progress is not None:
            on_progress(done)
    total.facts = _facts(tableau, per_batch.sum(axis=0))
    total.batches = [(int(row.sum()), _facts(tableau, row)) for row in per_batch]
    return total


def _facts(tableau: Tableau, counts: np.ndarray) -> Counter:
    out: Counter = Counter()
    for code in np.flatnonzero(counts):
        out[tableau.facts[code]] += int(counts[code])
    return out
