"""The "ask" indicators (controller.roadmaps.ask), computed incrementally from the big road's last
columns, against a second implementation: append the hypothetical result to the shoe's results,
recompute every road from scratch with ``compute`` and take the new mark. Over 1,500 random shoes
(a third of them with long streaks), and over every example of docs/roadmaps.md ("Ask")."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.roadmaps import AskIndicators, ask_indicators, ask_mark, big_road, compute, parse_results
from controller.roadmaps.roads import DERIVED_OFFSETS, Result

DOC = Path(__file__).resolve().parents[2] / "docs" / "roadmaps.md"
ROADS = tuple(DERIVED_OFFSETS)
SIDES = {"banker": "B", "player": "P"}


def recomputed_ask(results: list[Result]) -> dict[str, dict[str, str | None]]:
    """The second implementation: the mark each derived road gains when the result is appended
    and the roads recomputed, or None when it gains none."""
    before = compute(results)
    out: dict[str, dict[str, str | None]] = {}
    for side, letter in SIDES.items():
        after = compute([*results, Result(letter)])  # type: ignore[arg-type]
        out[side] = {}
        for road in ROADS:
            old = [m for col in getattr(before, road) for m in col]
            new = [m for col in getattr(after, road) for m in col]
            assert new[: len(old)] == old and len(new) - len(old) in (0, 1)
            out[side][road] = new[-1] if len(new) > len(old) else None
    return out


results_strategy = st.lists(
    st.sampled_from([Result("B"), Result("P"), Result("T"), Result("B", True, False), Result("P", False, True)]),
    max_size=90)
# Long streaks as well (dragon tails: logical rows past 6), which uniform draws rarely give.
streaky_strategy = st.lists(st.tuples(st.sampled_from("BPT"), st.integers(1, 9)), max_size=25).map(
    lambda runs: [Result(letter) for letter, n in runs for _ in range(n)])  # type: ignore[arg-type]


@settings(max_examples=1000, deadline=None)
@given(results_strategy)
def test_ask_equals_appending_the_result_and_recomputing(results: list[Result]) -> None:
    assert ask_indicators(big_road(results)).to_json() == recomputed_ask(results)


@settings(max_examples=500, deadline=None)
@given(streaky_strategy)
def test_ask_equals_recomputing_with_long_streaks(results: list[Result]) -> None:
    assert ask_indicators(big_road(results)).to_json() == recomputed_ask(results)


@given(results_strategy)
def test_a_tie_changes_no_ask(results: list[Result]) -> None:
    """A tie adds no big-road entry: the ask after it is the ask before it, and appending a tie
    moves no derived road."""
    with_tie = [*results, Result("T")]
    assert ask_indicators(big_road(with_tie)) == ask_indicators(big_road(results))
    before, after = compute(results), compute(with_tie)
    assert [getattr(before, r) for r in ROADS] == [getattr(after, r) for r in ROADS]


def test_an_empty_shoe_and_a_shoe_of_ties_ask_nothing() -> None:
    nothing = {road: None for road in ROADS}
    assert ask_indicators([]) == AskIndicators(nothing, nothing)
    assert ask_indicators(big_road(parse_results("T T T"))).to_json() == {"banker": nothing, "player": nothing}


def test_ask_mark_refuses_a_bad_offset() -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        ask_mark([1, 2], "B", "P", 0)


# --- the examples of docs/roadmaps.md -----------------------------------------------------------------

_MARK = {"r": "red", "b": "blue", "-": None}


def doc_examples() -> list[tuple[str, dict[str, dict[str, str | None]]]]:
    """The rows of the table under "## Ask" in docs/roadmaps.md: results (``parse_results``
    letters, or "(none)"), then banker ask and player ask as three marks each (big eye boy,
    small road, cockroach pig: ``r`` red, ``b`` blue, ``-`` none)."""
    section = DOC.read_text(encoding="utf-8").split("\n## Ask", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]*)` \| `([rb-]{3})` \| `([rb-]{3})` \|", section, flags=re.M)
    return [(results, {side: dict(zip(ROADS, (_MARK[c] for c in marks)))
                       for side, marks in zip(SIDES, (banker, player))}) for results, banker, player in rows]


def test_the_docs_have_ask_examples_for_every_starting_point() -> None:
    examples = doc_examples()
    assert len(examples) >= 10
    seen = {(side, road, mark) for _, ask in examples for side, marks in ask.items() for road, mark in marks.items()}
    assert {(s, r, m) for s in SIDES for r in ROADS for m in ("red", "blue", None)} <= seen


@pytest.mark.parametrize(("results", "expected"), doc_examples(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_docs_examples(results: str, expected: dict[str, dict[str, str | None]]) -> None:
    played = parse_results("" if results == "(none)" else results)
    assert ask_indicators(big_road(played)).to_json() == expected
    assert recomputed_ask(played) == expected
