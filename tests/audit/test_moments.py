"""Exact null moments, checked by enumerating every arrangement of small multisets (the formulas
take any codes and copy counts), and against the classical results they generalize."""
from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterator, Sequence
from math import comb

import pytest

from controller.audit.moments import (
    adjacency_moments,
    positional_moments,
    rising_moments,
    runs_moments,
    serial_moments,
)
from controller.audit.orders import fresh_order
from controller.audit.randomness import kept_adjacencies, rising_sequences, runs_up_down


def arrangements(items: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every distinct arrangement of a multiset, each once."""
    counts: dict[int, int] = {}
    for c in items:
        counts[c] = counts.get(c, 0) + 1
    keys = sorted(counts)
    out: list[int] = []

    def rec() -> Iterator[tuple[int, ...]]:
        if len(out) == len(items):
            yield tuple(out)
            return
        for k in keys:
            if counts[k]:
                counts[k] -= 1
                out.append(k)
                yield from rec()
                out.pop()
                counts[k] += 1
    yield from rec()


def exact(values: list[int]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.pvariance(values)


PRE_ORDERS = [
    ([0, 1, 2, 0, 1, 2], 2),                 # "fresh decks" of a 3-card deck
    ([0, 0, 1, 1, 2, 2], 2),                 # copies side by side (pairs (a, a) and constant steps)
    ([2, 0, 1, 1, 0, 2], 2),
    ([0, 1, 2, 3, 0, 1, 2, 3], 2),
    ([3, 1, 0, 2, 2, 1, 3, 0], 2),
    ([0, 1, 2, 0, 1, 2, 0, 1, 2], 3),
    ([1, 0, 2, 2, 1, 0, 0, 2, 1], 3),
]


@pytest.mark.parametrize("pre, copies", PRE_ORDERS)
def test_rising_and_adjacency_moments_are_exact(pre: list[int], copies: int) -> None:
    all_orders = list(arrangements(pre))
    assert len(all_orders) == len(set(all_orders))
    rising = exact([rising_sequences(o, pre) for o in all_orders])
    kept = exact([kept_adjacencies(o, pre) for o in all_orders])
    assert rising_moments(pre, copies) == pytest.approx(rising, rel=1e-12, abs=1e-12)
    assert adjacency_moments(pre, copies) == pytest.approx(kept, rel=1e-12, abs=1e-12)


def test_rising_sequences_of_distinct_cards_are_eulerian() -> None:
    # one deck: R - 1 = descents of a uniform permutation: mean (n+1)/2, variance (n+1)/12
    mean, var = rising_moments(fresh_order(1), 1)
    assert mean == pytest.approx(53 / 2, rel=1e-12)
    assert var == pytest.approx(53 / 12, rel=1e-12)


def test_eight_deck_moments_are_plausible() -> None:
    # against 20,000 uniform shuffles (measured once: rising 207.0 / 55.0, kept 7.97 / 8.0)
    mean, var = rising_moments(fresh_order(8), 8)
    assert 206 < mean < 208 and 53 < var < 57
    mean, var = adjacency_moments(fresh_order(8), 8)
    assert mean == pytest.approx(8.0) and 7.5 < var < 8.2


def test_positional_collision_moments_are_exact() -> None:
    # every combination of arrangements: 3 codes x 2 copies in two shoes, 2 codes x 2 copies in
    # three and four shoes
    for pre, shoes in (([0, 1, 2, 0, 1, 2], 2), ([0, 1, 0, 1], 3), ([0, 1, 0, 1], 4)):
        all_orders = list(arrangements(pre))
        codes = len(set(pre))
        values = []
        for combo in itertools.product(all_orders, repeat=shoes):
            y = 0
            for place in range(len(pre)):
                column = [o[place] for o in combo]
                y += sum(comb(column.count(c), 2) for c in set(column))
            values.append(y)
        assert positional_moments(len(pre), shoes, 2, codes=codes) == pytest.approx(exact(values), rel=1e-12)


def test_positional_moments_of_one_shoe_are_degenerate() -> None:
    assert positional_moments(416, 1, 8) == (0.0, 0.0)


def test_runs_up_and_down_moments() -> None:
    for n in (4, 6, 8):
        values = [runs_up_down(p) for p in itertools.permutations(range(n))]
        assert runs_moments(n) == pytest.approx(exact(values), rel=1e-12)
    with pytest.raises(ValueError):
        runs_moments(2)


def test_serial_moments_match_every_permutation() -> None:
    for vals in ([1, 2, 2, 3, 5, 5], [1, 1, 1, 13, 13, 7, 2], [0, 4, 4, 4, 9]):
        n = len(vals)
        sums = [sum(p[i] * p[i - 1] for i in range(n)) for p in itertools.permutations(vals)]
        assert serial_moments(vals) == pytest.approx(exact(sums), rel=1e-12)
    with pytest.raises(ValueError):
        serial_moments([1, 2, 3])
