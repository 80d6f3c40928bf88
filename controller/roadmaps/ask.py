"""The "ask" indicators of a scoreboard (banker ask / player ask): for each derived road, the mark
it would receive if the next result were Banker, and if it were Player (docs/roadmaps.md, "Ask").

Contract:

- ``ask_mark(lengths, win, last_win, k) -> "red" | "blue" | None``: the mark the derived road with
  offset ``k`` would receive for one more ``win`` (``"B"``/``"P"``) after a big road whose logical
  columns have ``lengths`` and whose last column is of ``last_win``; None when that entry would
  not yet receive a mark on that road (before its starting point, or an empty big road).
- ``ask_indicators(big) -> AskIndicators``: both hypothetical results on all three derived
  roads, from a big road of ``roads.big_road``; ``AskIndicators.to_json()`` is ``{"banker":
  {"big_eye_boy": ..., "small_road": ..., "cockroach_pig": ...}, "player": {...}}`` with
  ``"red"``, ``"blue"`` or ``null``.

A tie adds no big-road entry, so it moves no derived road: there is no "tie ask". Only the
lengths of the big road's last columns are compared (the new entry's column and the one ``k`` to
its left, or the two columns ``k`` apart before a new column): nothing is recomputed. The same
cell rule as ``roads.derived_marks``; the tests check it against appending the result to the
shoe's results and recomputing the roads.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from controller.roadmaps.roads import BLUE, DERIVED_OFFSETS, RED, Colour, Win

#: The hypothetical next results, with their JSON keys.
ASK_SIDES: dict[str, Win] = {"banker": "B", "player": "P"}


def ask_mark(lengths: Sequence[int], win: Win, last_win: Win | None, k: int) -> Colour | None:
    """The mark the derived road ``k`` would get for one more ``win`` (see the module docstring)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    n = len(lengths)
    if n == 0:
        return None  # the first entry of the shoe: column 1, no road has started
    if win == last_win:
        # continues the last column: (c, r) = (n, L + 1) with r >= 2; looks at column c - k
        if n < k + 1:
            return None
        row = lengths[-1] + 1
        return BLUE if lengths[n - 1 - k] == row - 1 else RED
    # starts column c = n + 1: compares columns c - 1 and c - 1 - k
    if n < k + 1:
        return None
    return RED if lengths[-1] == lengths[n - 1 - k] else BLUE


@dataclass(frozen=True, slots=True)
class AskIndicators:
    """For each hypothetical next result (``"banker"``, ``"player"``), each derived road's mark or
    None."""

    banker: dict[str, Colour | None]
    player: dict[str, Colour | None]

    def to_json(self) -> dict[str, Any]:
        return {"banker": dict(self.banker), "player": dict(self.player)}


def ask_indicators(big: Sequence[Sequence[Any]]) -> AskIndicators:
    """The ask indicators of a big road (logical columns of entries with ``outcome`` B/P)."""
    lengths = [len(col) for col in big]
    last_win = big[-1][0].outcome if big else None
    marks = {side: {road: ask_mark(lengths, win, last_win, k) for road, k in DERIVED_OFFSETS.items()}
             for side, win in ASK_SIDES.items()}
    return AskIndicators(marks["banker"], marks["player"])
