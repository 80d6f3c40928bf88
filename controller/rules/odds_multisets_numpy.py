"""The multiset table of the exact odds evaluated with numpy (the optional ``fast`` extra).

Contract:
- ``NumpyMultisetPlan(groups, categories)``: the same table and the same ``counts(f, n_cards)``
  as ``odds_multisets.MultisetPlan``, the same exact integers (tested against it and against the
  product per multiset on seeded shoes). Importing this module imports numpy.
- ``plan.fits(f)``: whether numpy's 64-bit integers hold every figure of this shoe exactly. A
  caller asks first and uses the pure plan otherwise (``odds_main_game`` does): a shoe of more
  than 1,448 cards of one value class, far beyond any Rules Submission, or a table whose
  coefficients are too large for the sums (none the rules make: the largest is 360 ordered
  value sequences, in 21 Baccarat's table).

Why it is exact: a multiset's weight is a product of at most ``ROUND_CARDS`` factors, each
``(cards of a class) - j``, so ``|weight| <= max|f| ** 6 < 2**63``. The weights of one level are
split into high and low 31-bit halves and each half is multiplied by the level's category matrix
(``rows x categories``): a half is below ``2**32``, so a sum of ``rows`` products with
coefficients below ``C`` stays below ``2**63`` when ``rows * C < 2**31`` (checked when the plan
is built). The halves are joined and multiplied by the free trailing positions in Python's own
integers.

Why it is fast (docs/odds.md): a level is two array gathers, one multiplication and two small
matrix products instead of thousands of Python integer operations: about 0.13 ms against 1.06
for the pure plan on a full 8-deck shoe.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .odds_multisets import Group, level_keys
from .odds_sequences import ROUND_CARDS, falling

__all__ = ["NumpyMultisetPlan"]

_HALF = 31
_LOW = (1 << _HALF) - 1
_LARGEST_FACTOR = 1448  # 1448 ** 6 < 2 ** 63 <= 1449 ** 6


class NumpyMultisetPlan:
    """See the module docstring."""

    def __init__(self, groups: Sequence[Group], categories: int) -> None:
        self.categories = categories
        self._table_fits = True
        table = {k: (slots, cols) for k, slots, cols in groups}
        keys = level_keys(table)
        # (k, parent indices or None, last slots, category matrix or None) per size.
        self.levels: list[tuple[int, np.ndarray | None, np.ndarray, np.ndarray | None]] = []
        index_below: dict[tuple[int, ...], int] = {}
        for k in range(1, max(table) + 1):
            parents = (np.array([index_below[s[:-1]] for s in keys[k]], dtype=np.intp)
                       if k > 1 else None)
            last = np.array([s[-1] for s in keys[k]], dtype=np.intp)
            index_below = {s: i for i, s in enumerate(keys[k])}
            matrix = None
            if k in table:
                slots, cols = table[k]
                matrix = np.zeros((len(keys[k]), categories), dtype=np.int64)
                rows = np.array([index_below[s] for s in slots], dtype=np.intp)
                matrix[rows, :] = np.array(cols, dtype=np.int64).T
                largest = max((abs(x) for col in cols for x in col), default=0)
                self._table_fits = self._table_fits and len(keys[k]) * largest < 1 << _HALF
            self.levels.append((k, parents, last, matrix))

    def fits(self, f: Sequence[int]) -> bool:
        """Whether every figure of this shoe fits a 64-bit integer (see the module docstring)."""
        return self._table_fits and max(map(abs, f)) <= _LARGEST_FACTOR

    def counts(self, f: Sequence[int], n_cards: int) -> list[int]:
        """One exact count per category, as ``MultisetPlan.counts`` (``fits(f)`` must hold)."""
        factors = np.array(f, dtype=np.int64)
        out = [0] * self.categories
        weights = factors
        for k, parents, last, matrix in self.levels:
            weights = factors[last] if parents is None else weights[parents] * factors[last]
            if matrix is None:
                continue
            tail = falling(n_cards - k, ROUND_CARDS - k)
            if not tail:
                continue
            high = (weights >> _HALF) @ matrix
            low = (weights & _LOW) @ matrix
            for c in range(self.categories):
                out[c] += tail * ((int(high[c]) << _HALF) + int(low[c]))
        return out
