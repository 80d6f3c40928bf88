"""The baccarat roadmaps, computed purely from the results of one shoe (see docs/roadmaps.md).

Contract:

- ``results_from_rounds(rounds) -> list[Result]``: the ``"round"`` dicts of
  ``controller.journal.replay`` to results, in order; only ``kind == "normal"`` rounds count
  (simulated and void rounds are not on the roads). Pair flags absent from a round are ``False``.
- ``bead_plate(results)``: every result in order (``B``/``P``/``T`` with its pair flags).
- ``big_road(results)``: logical columns (never folded) of consecutive Banker or Player wins; a
  tie adds one to ``ties`` of the entry before it; ties before the first Banker or Player win are
  carried and counted on the first entry; an entry's pair flags are those of its own round.
- ``derived_road(big, k)`` with ``k`` = 1 (big eye boy), 2 (small road), 3 (cockroach pig):
  ``"red"``/``"blue"`` marks, laid out in logical columns of consecutive equal colours.
- ``compute(results) -> Roadmaps`` with all five; ``Roadmaps.to_json()`` is the stable JSON.

Nothing here does I/O; every function returns new values and never mutates its arguments.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Outcome = Literal["B", "P", "T"]
Win = Literal["B", "P"]
Colour = Literal["red", "blue"]

RED: Colour = "red"
BLUE: Colour = "blue"

#: ``k`` of each derived road: the column it compares a big-road column with, ``k`` to the left.
DERIVED_OFFSETS: dict[str, int] = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}

_OUTCOME_LETTER: dict[str, Outcome] = {"banker": "B", "player": "P", "tie": "T", "B": "B", "P": "P", "T": "T"}


@dataclass(frozen=True, slots=True)
class Result:
    """One normal round's result: ``outcome`` B/P/T and whether each hand's first two cards paired."""

    outcome: Outcome
    player_pair: bool = False
    banker_pair: bool = False

    def __post_init__(self) -> None:
        if self.outcome not in ("B", "P", "T"):
            raise ValueError(f"outcome must be 'B', 'P' or 'T', not {self.outcome!r}")


@dataclass(frozen=True, slots=True)
class BigRoadEntry:
    """One big-road cell: a Banker or Player win, the ties marked on it, its own round's pairs."""

    outcome: Win
    ties: int = 0
    player_pair: bool = False
    banker_pair: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "ties": self.ties, "player_pair": self.player_pair,
                "banker_pair": self.banker_pair}


BigRoad = list[list[BigRoadEntry]]
DerivedRoad = list[list[Colour]]


@dataclass(frozen=True, slots=True)
class Roadmaps:
    """The five roads of one shoe, in logical (unfolded) columns."""

    bead_plate: list[Result]
    big_road: BigRoad
    big_eye_boy: DerivedRoad
    small_road: DerivedRoad
    cockroach_pig: DerivedRoad

    def to_json(self) -> dict[str, Any]:
        """``{"bead_plate": ["B", ...], "bead_pairs": ["", "PB", ...], "big_road": [[entry, ...], ...],
        "big_eye_boy": [["red", ...], ...], "small_road": [...], "cockroach_pig": [...]}``
        (docs/roadmaps.md; ``bead_pairs``: each bead's pairs, ``P`` and/or ``B``)."""
        return {
            "bead_plate": [r.outcome for r in self.bead_plate],
            "bead_pairs": [("P" if r.player_pair else "") + ("B" if r.banker_pair else "") for r in self.bead_plate],
            "big_road": [[e.to_json() for e in col] for col in self.big_road],
            "big_eye_boy": [list(col) for col in self.big_eye_boy],
            "small_road": [list(col) for col in self.small_road],
            "cockroach_pig": [list(col) for col in self.cockroach_pig],
        }


def result_from_round(doc: Mapping[str, Any]) -> Result | None:
    """The result of one replayed round, or None if it is not on the roads (simulated, void, or
    without an outcome). ``outcome`` may be ``player``/``banker``/``tie`` or ``P``/``B``/``T``."""
    if doc.get("kind", "normal") != "normal" or doc.get("outcome") is None:
        return None
    try:
        letter = _OUTCOME_LETTER[str(doc["outcome"])]
    except KeyError:
        raise ValueError(f"round {doc.get('round')}: unknown outcome {doc['outcome']!r}") from None
    return Result(letter, bool(doc.get("player_pair", False)), bool(doc.get("banker_pair", False)))


def results_from_rounds(rounds: Iterable[Mapping[str, Any]]) -> list[Result]:
    """The results of the normal rounds among ``rounds``, in the given order."""
    out: list[Result] = []
    for doc in rounds:
        r = result_from_round(doc)
        if r is not None:
            out.append(r)
    return out


def parse_results(text: str) -> list[Result]:
    """Results from a compact string, for tests and examples: one letter per round, ``B``/``P``/
    ``T``, optionally followed by ``p`` (player pair), ``b`` (banker pair) or both; spaces ignored.
    ``"B Pp T Bpb"`` is a Banker win, a Player win with a player pair, a tie, and a Banker win with
    both pairs."""
    out: list[Result] = []
    for ch in text.replace(" ", ""):
        if ch in "BPT":
            out.append(Result(ch))  # type: ignore[arg-type]
        elif ch in "pb" and out:
            last = out[-1]
            out[-1] = Result(last.outcome, last.player_pair or ch == "p", last.banker_pair or ch == "b")
        else:
            raise ValueError(f"unexpected {ch!r} in results {text!r}")
    return out


def bead_plate(results: Iterable[Result]) -> list[Result]:
    """Every result, ties included, in the order played."""
    return list(results)


def big_road(results: Iterable[Result]) -> BigRoad:
    """Logical big-road columns. A new column starts whenever the winner (B/P) changes; ties are
    counted on the previous entry, or carried to the first entry if none has been played yet.
    A shoe of ties only has an empty big road (the ties are on the bead plate)."""
    columns: list[list[BigRoadEntry]] = []
    leading_ties = 0
    for r in results:
        if r.outcome == "T":
            if columns:
                last = columns[-1][-1]
                columns[-1][-1] = BigRoadEntry(last.outcome, last.ties + 1, last.player_pair, last.banker_pair)
            else:
                leading_ties += 1
            continue
        entry = BigRoadEntry(r.outcome, leading_ties if not columns else 0, r.player_pair, r.banker_pair)
        if columns and columns[-1][0].outcome == r.outcome:
            columns[-1].append(entry)
        else:
            columns.append([entry])
    return columns


def derived_marks(big: Sequence[Sequence[Any]], k: int) -> list[Colour]:
    """The derived road's marks in the order of the big-road entries they belong to.

    With columns ``c`` and rows ``r`` numbered from 1, the entry at (c, r) gets a mark when the
    columns it looks at exist: (r >= 2 and c >= k + 1) or (r == 1 and c >= k + 2). Then:

    - r == 1 (the entry starts a column): red if columns c-1 and c-1-k have the same length,
      else blue;
    - r >= 2: with L the length of column c-k, red if L >= r (an entry beside it), blue if
      L == r - 1 (that column ended exactly one row above), red if L < r - 1 (both empty).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    lengths = [len(col) for col in big]
    marks: list[Colour] = []
    for c0, length in enumerate(lengths):  # c0 = c - 1
        for r in range(1, length + 1):
            if r == 1:
                if c0 - 1 - k < 0:
                    continue
                marks.append(RED if lengths[c0 - 1] == lengths[c0 - 1 - k] else BLUE)
            else:
                if c0 - k < 0:
                    continue
                other = lengths[c0 - k]
                marks.append(BLUE if other == r - 1 else RED)
    return marks


def columns_of(marks: Iterable[Colour]) -> DerivedRoad:
    """Marks laid out as logical columns of consecutive equal colours."""
    columns: DerivedRoad = []
    for m in marks:
        if columns and columns[-1][0] == m:
            columns[-1].append(m)
        else:
            columns.append([m])
    return columns


def derived_road(big: Sequence[Sequence[Any]], k: int) -> DerivedRoad:
    """The derived road comparing each big-road column with the one ``k`` to its left."""
    return columns_of(derived_marks(big, k))


def big_eye_boy(big: Sequence[Sequence[Any]]) -> DerivedRoad:
    """Derived road with k = 1 (starts at column 2 row 2, or column 3 row 1)."""
    return derived_road(big, DERIVED_OFFSETS["big_eye_boy"])


def small_road(big: Sequence[Sequence[Any]]) -> DerivedRoad:
    """Derived road with k = 2 (starts at column 3 row 2, or column 4 row 1)."""
    return derived_road(big, DERIVED_OFFSETS["small_road"])


def cockroach_pig(big: Sequence[Sequence[Any]]) -> DerivedRoad:
    """Derived road with k = 3 (starts at column 4 row 2, or column 5 row 1)."""
    return derived_road(big, DERIVED_OFFSETS["cockroach_pig"])


def compute(results: Iterable[Result]) -> Roadmaps:
    """All five roads of one shoe from its normal rounds' results, in order."""
    beads = bead_plate(results)
    big = big_road(beads)
    return Roadmaps(beads, big, big_eye_boy(big), small_road(big), cockroach_pig(big))
