"""Fast evaluation of a value-class multiset table on one shoe (pure; no I/O).

Contract:
- ``MultisetPlan(groups, categories)`` is compiled once per table from its groups
  ``(k, slot tuples, one column per category)`` (see ``odds_main_game``): a multiset of ``k``
  value classes is a sorted tuple of slots ``v * ROUND_CARDS + j``, and its weight on a shoe is
  ``prod f[slot]`` with ``f[v * ROUND_CARDS + j] = (cards of class v) - j``.
- ``plan.counts(f, n_cards)`` -> one exact integer per category:
  ``sum over k of (N-k)...(N-5) * sum over the multisets of size k of column * weight``, the same
  figure as the straightforward product per multiset (``odds_main_game.main_counts_reference``).
  The table must cover every sequence (each ends in exactly one category): one category, the one
  with the most multisets, is the total ``N(N-1)...(N-5)`` less the others.
- ``gather(indices)``: ``seq -> tuple(seq[i] for i in indices)`` in C, for one index too.
- ``level_keys(table)`` -> ``{k: sorted slot tuples}``: per size, the table's multisets of that size
  and the parents of the size above (every evaluation of a plan walks these levels; the numpy one,
  ``odds_multisets_numpy``, too).

Why it is fast (docs/odds.md): every multiset's weight is its parent's (the multiset less its last
slot) times one factor, so each weight costs one multiplication, level by level, with the gathers
done by ``operator.itemgetter`` in C; each category column is split by coefficient, so a count is
``sum over coefficients x of x * sum(gathered weights)``, the inner sums in C.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter, mul

from .odds_sequences import ROUND_CARDS, falling

__all__ = ["MultisetPlan", "gather", "level_keys"]

Slots = tuple[int, ...]
Group = tuple[int, tuple[Slots, ...], tuple[tuple[int, ...], ...]]


def gather(indices: Sequence[int]) -> Callable[[Sequence[int]], tuple[int, ...]]:
    """``seq -> tuple(seq[i] for i in indices)``, in C (``itemgetter`` returns a bare item for one
    index, hence the wrapper)."""
    if len(indices) == 1:
        only = indices[0]
        return lambda seq: (seq[only],)
    return itemgetter(*indices)


def level_keys(table: dict[int, tuple[tuple[Slots, ...], tuple[tuple[int, ...], ...]]]) -> dict[int, list[Slots]]:
    """Per size ``k`` from 1 to the largest: the table's multisets of size ``k`` and the parents
    (the multiset less its last slot) of those of size ``k + 1``, sorted."""
    keys: dict[int, list[Slots]] = {}
    need: set[Slots] = set()
    for k in range(max(table), 0, -1):
        mine = set(table[k][0]) if k in table else set()
        keys[k] = sorted(mine | need)
        need = {s[:-1] for s in keys[k]}
    return keys


class _Level:
    """The weights of the multisets of one size (parents' weights times the last slot's factor)
    and, when the table has multisets of this size, its terms ``(category, coefficient, gather)``:
    the multisets whose column holds that coefficient for that category."""

    __slots__ = ("k", "parents", "last", "terms")

    def __init__(self, k: int, keys: list[Slots], index_below: dict[Slots, int]) -> None:
        self.k = k
        self.parents = gather([index_below[s[:-1]] for s in keys]) if k > 1 else None
        self.last = gather([s[-1] for s in keys])
        self.terms: tuple[tuple[int, int, Callable[[Sequence[int]], tuple[int, ...]]], ...] = ()

    def weights(self, f: Sequence[int], below: Sequence[int] | None) -> list[int]:
        if self.parents is None:
            return list(self.last(f))
        return list(map(mul, self.parents(below), self.last(f)))


class MultisetPlan:
    """See the module docstring."""

    def __init__(self, groups: Sequence[Group], categories: int) -> None:
        self.categories = categories
        table = {k: (slots, cols) for k, slots, cols in groups}
        # The category with the most multisets is the rest of the total (every sequence ends in
        # exactly one category), so it is never summed.
        self.derived = max(range(categories), key=lambda c: sum(
            sum(1 for x in cols[c] if x) for _, cols in table.values()))
        top = max(table)
        keys = level_keys(table)
        self.levels: list[_Level] = []
        index_below: dict[Slots, int] = {}
        for k in range(1, top + 1):
            level = _Level(k, keys[k], index_below)
            index_below = {s: i for i, s in enumerate(keys[k])}
            if k in table:
                level.terms = self._terms(table[k], index_below)
            self.levels.append(level)

    def _terms(self, entry: tuple[tuple[Slots, ...], tuple[tuple[int, ...], ...]],
               index: dict[Slots, int]) -> tuple[tuple[int, int, Callable[[Sequence[int]], tuple[int, ...]]], ...]:
        slots, cols = entry
        terms = []
        for c, col in enumerate(cols):
            if c == self.derived:
                continue
            by_coefficient: dict[int, list[int]] = {}
            for s, x in zip(slots, col):
                if x:
                    by_coefficient.setdefault(x, []).append(index[s])
            terms.extend((c, x, gather(ix)) for x, ix in sorted(by_coefficient.items()))
        return tuple(terms)

    def counts(self, f: Sequence[int], n_cards: int) -> list[int]:
        """One exact count per category (see the module docstring)."""
        out = [0] * self.categories
        w: list[int] = []
        for level in self.levels:
            w = level.weights(f, w)
            if not level.terms:
                continue
            tail = falling(n_cards - level.k, ROUND_CARDS - level.k)
            if not tail:
                continue
            mine = [0] * self.categories
            for c, x, pick in level.terms:
                mine[c] += x * sum(pick(w))
            for c in range(self.categories):
                out[c] += tail * mine[c]
        out[self.derived] = falling(n_cards, ROUND_CARDS) - sum(out)
        return out
