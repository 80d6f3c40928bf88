"""The roads computed from results (controller.roadmaps.roads), against grids computed by hand."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from controller.roadmaps.roads import (
    BigRoadEntry,
    Result,
    big_eye_boy,
    big_road,
    cockroach_pig,
    columns_of,
    compute,
    derived_marks,
    derived_road,
    parse_results,
    result_from_round,
    results_from_rounds,
    small_road,
)

R, U = "red", "blue"  # U for blUe, so that a column reads at a glance


def E(outcome: str, ties: int = 0, pp: bool = False, bp: bool = False) -> BigRoadEntry:
    return BigRoadEntry(outcome, ties, pp, bp)  # type: ignore[arg-type]


def outcomes(big) -> list[str]:
    return ["".join(e.outcome for e in col) for col in big]


# --- inputs ----------------------------------------------------------------------------------------


def test_parse_results_reads_letters_and_pair_marks() -> None:
    assert parse_results("B Pp T Tpb Bb") == [
        Result("B"), Result("P", player_pair=True), Result("T"), Result("T", True, True), Result("B", banker_pair=True)]


def test_only_normal_rounds_are_on_the_roads() -> None:
    rounds = [
        {"kind": "normal", "outcome": "banker", "player_pair": True, "banker_pair": False},
        {"kind": "simulated", "outcome": "player"},
        {"kind": "void", "outcome": None, "reason": "misdeal"},
        {"kind": "normal", "outcome": "tie"},  # pair flags absent: unknown, so no pair mark
        {"kind": "normal", "outcome": "player", "banker_pair": True},
    ]
    assert results_from_rounds(rounds) == [Result("B", True, False), Result("T"), Result("P", False, True)]
    assert result_from_round({"kind": "normal", "outcome": None}) is None


def test_unknown_outcome_is_an_error() -> None:
    import pytest

    with pytest.raises(ValueError, match="unknown outcome 'dragon'"):
        result_from_round({"kind": "normal", "round": 7, "outcome": "dragon"})


# --- bead plate and big road -----------------------------------------------------------------------


def test_long_banker_streak_is_one_logical_column() -> None:
    maps = compute(parse_results("BBBBBBBBB P"))
    assert maps.to_json()["bead_plate"] == ["B"] * 9 + ["P"]
    assert outcomes(maps.big_road) == ["B" * 9, "P"]  # nine rows in JSON: never folded to six


def test_ties_at_the_start_are_counted_on_the_first_entry() -> None:
    maps = compute(parse_results("T T B P"))
    assert maps.to_json()["bead_plate"] == ["T", "T", "B", "P"]
    assert maps.big_road == [[E("B", ties=2)], [E("P")]]


def test_a_shoe_of_ties_only_has_an_empty_big_road() -> None:
    maps = compute(parse_results("TTT"))
    assert maps.to_json() == {"bead_plate": ["T", "T", "T"], "bead_pairs": ["", "", ""], "big_road": [],
                              "big_eye_boy": [], "small_road": [], "cockroach_pig": []}


def test_the_pairs_of_every_bead_are_in_the_json_a_ties_too() -> None:
    """A review of the scoreboard: a tie's pairs were on no road the page drew (the big road
    carries a tie on the entry before it, with that entry's pairs), and the bead plate drew none."""
    maps = compute(parse_results("Bp Tpb P Tb"))
    assert maps.to_json()["bead_pairs"] == ["P", "PB", "", "B"]
    assert [(e["player_pair"], e["banker_pair"]) for col in maps.to_json()["big_road"] for e in col] == [
        (True, False), (False, False)]  # the ties' pairs are not on the big road: the bead plate holds them


def test_ties_in_the_middle_are_counted_on_the_previous_entry() -> None:
    big = big_road(parse_results("B T T T B P T B T T"))
    assert big == [[E("B", 3), E("B")], [E("P", 1)], [E("B", 2)]]


def test_a_tie_does_not_break_a_streak() -> None:
    assert outcomes(big_road(parse_results("B T B T B P T P"))) == ["BBB", "PP"]


def test_alternating_results_make_a_new_column_each() -> None:
    maps = compute(parse_results("BPBPBP"))
    assert outcomes(maps.big_road) == ["B", "P", "B", "P", "B", "P"]
    # Every column starts a new one, and every two compared columns are of length 1: all red.
    # Big eye boy from column 3 (4 marks), small road from column 4 (3), cockroach pig from 5 (2).
    assert maps.big_eye_boy == [[R, R, R, R]]
    assert maps.small_road == [[R, R, R]]
    assert maps.cockroach_pig == [[R, R]]


def test_pairs_are_marked_on_their_own_entry_and_on_the_bead_plate() -> None:
    results = parse_results("Bp Bb Pbp Tpb")
    maps = compute(results)
    assert maps.bead_plate == [Result("B", True, False), Result("B", False, True), Result("P", True, True),
                               Result("T", True, True)]
    # The tie's pairs stay on the bead plate; the entry it is marked on keeps its own flags.
    assert maps.big_road == [[E("B", pp=True), E("B", bp=True)], [E("P", ties=1, pp=True, bp=True)]]
    assert maps.to_json()["big_road"][0][0] == {"outcome": "B", "ties": 0, "player_pair": True,
                                                "banker_pair": False}


# --- derived roads, by hand ------------------------------------------------------------------------

# Big road (columns numbered from 1, lengths): c1 BBB (3), c2 PP (2), c3 B (1), c4 PPPP (4),
# c5 BB (2), c6 P (1), c7 BBB (3). Ties between are ignored by the derived roads.
TRICKY = "BBB PP B PPPP BB P BBB"


def test_tricky_big_road() -> None:
    assert [len(c) for c in big_road(parse_results(TRICKY))] == [3, 2, 1, 4, 2, 1, 3]


def test_big_eye_boy_by_hand() -> None:
    big = big_road(parse_results(TRICKY))
    expected_marks = [
        R,  # c2 r2: start (column 2 has two entries); c1 has row 2 -> red
        U,  # c3 r1: new column; c2 (2) vs c1 (3) differ -> blue
        U,  # c4 r1: c3 (1) vs c2 (2) differ -> blue
        U,  # c4 r2: c3 has row 1 but not row 2 (ended one row above) -> blue
        R,  # c4 r3: c3 has neither row 3 nor row 2 (both empty) -> red
        R,  # c4 r4: c3 has neither row 4 nor row 3 -> red
        U,  # c5 r1: c4 (4) vs c3 (1) differ -> blue
        R,  # c5 r2: c4 has row 2 -> red
        U,  # c6 r1: c5 (2) vs c4 (4) differ -> blue
        U,  # c7 r1: c6 (1) vs c5 (2) differ -> blue
        U,  # c7 r2: c6 ended at row 1 -> blue
        R,  # c7 r3: c6 has neither row 3 nor row 2 -> red
    ]
    assert derived_marks(big, 1) == expected_marks
    assert big_eye_boy(big) == [[R], [U, U, U], [R, R], [U], [R], [U, U, U], [R]]


def test_small_road_by_hand() -> None:
    big = big_road(parse_results(TRICKY))
    expected_marks = [
        # c3 has only row 1, and a first row is marked from column 4: c3 gets nothing.
        U,  # c4 r1: c3 (1) vs c1 (3) differ -> blue
        R,  # c4 r2: c2 has row 2 -> red
        U,  # c4 r3: c2 ended at row 2, one above -> blue
        R,  # c4 r4: c2 has neither row 4 nor row 3 -> red
        U,  # c5 r1: c4 (4) vs c2 (2) -> blue
        U,  # c5 r2: c3 ended at row 1 -> blue
        U,  # c6 r1: c5 (2) vs c3 (1) -> blue
        U,  # c7 r1: c6 (1) vs c4 (4) -> blue
        R,  # c7 r2: c5 has row 2 -> red
        U,  # c7 r3: c5 ended at row 2 -> blue
    ]
    assert derived_marks(big, 2) == expected_marks
    assert small_road(big) == [[U], [R], [U], [R], [U, U, U, U], [R], [U]]


def test_cockroach_pig_by_hand() -> None:
    big = big_road(parse_results(TRICKY))
    expected_marks = [
        # c4 r1 would compare c3 with c0: nothing. The road starts at c4 r2.
        R,  # c4 r2: c1 has row 2 -> red
        R,  # c4 r3: c1 has row 3 -> red
        U,  # c4 r4: c1 ended at row 3 -> blue
        U,  # c5 r1: c4 (4) vs c1 (3) -> blue
        R,  # c5 r2: c2 has row 2 -> red
        R,  # c6 r1: c5 (2) vs c2 (2) equal -> red
        R,  # c7 r1: c6 (1) vs c3 (1) equal -> red
        R,  # c7 r2: c4 has row 2 -> red
        R,  # c7 r3: c4 has row 3 -> red
    ]
    assert derived_marks(big, 3) == expected_marks
    assert cockroach_pig(big) == [[R, R], [U, U], [R, R, R, R, R]]


def test_starting_points() -> None:
    # Column 2 with two entries: big eye boy starts at c2 r2 (one mark: c1 has row 2 -> red).
    assert big_eye_boy(big_road(parse_results("BB PP"))) == [[R]]
    # Column 2 with one entry: nothing until c3 r1 (c2 (1) vs c1 (2) differ -> blue).
    assert big_eye_boy(big_road(parse_results("BB P"))) == []
    assert big_eye_boy(big_road(parse_results("BB P B"))) == [[U]]
    # Small road: nothing before c3 r2 / c4 r1; cockroach pig: nothing before c4 r2 / c5 r1.
    assert small_road(big_road(parse_results("B P B"))) == []
    assert small_road(big_road(parse_results("B P BB"))) == [[U]]  # c3 r2: c1 ended at row 1
    assert cockroach_pig(big_road(parse_results("B P B P"))) == []
    assert cockroach_pig(big_road(parse_results("B P B PP"))) == [[U]]  # c4 r2: c1 ended at row 1
    assert cockroach_pig(big_road(parse_results("B P B P B"))) == [[R]]  # c5 r1: c4 (1) vs c1 (1)


def test_a_long_streak_compares_with_the_unfolded_column() -> None:
    # c1 has 8 entries (rows 7 and 8 are a dragon tail on screen, but logical rows here);
    # c2 goes to row 8 too: every continuing entry finds c1 beside it -> red.
    big = big_road(parse_results("B" * 8 + "P" * 8))
    assert big_eye_boy(big) == [[R] * 7]


def test_derived_road_columns() -> None:
    assert columns_of([R, R, U, R, U, U]) == [[R, R], [U], [R], [U, U]]
    assert derived_road([], 1) == []


# --- properties ------------------------------------------------------------------------------------

results_strategy = st.lists(st.sampled_from([Result("B"), Result("P"), Result("T"), Result("B", True, False),
                                             Result("P", False, True)]), max_size=80)


def _grid_rule(lengths: list[int], k: int) -> list[str]:
    """The derived-road rule stated on cells instead of lengths, as a cross-check: a continuing
    entry is red when column c-k has the same thing (entry or nothing) at its row and the row above."""
    filled = {(c, r) for c, n in enumerate(lengths) for r in range(n)}
    marks = []
    for c, n in enumerate(lengths):
        for r in range(n):
            if r == 0 and c - 1 - k >= 0:
                marks.append(R if lengths[c - 1] == lengths[c - 1 - k] else U)
            elif r > 0 and c - k >= 0:
                marks.append(R if ((c - k, r) in filled) == ((c - k, r - 1) in filled) else U)
    return marks


@given(results_strategy)
def test_big_road_accounts_for_every_result(results: list[Result]) -> None:
    big = big_road(results)
    wins = [r for r in results if r.outcome != "T"]
    assert [e.outcome for col in big for e in col] == [r.outcome for r in wins]
    assert sum(e.ties for col in big for e in col) == (len(results) - len(wins) if wins else 0)
    assert all(len({e.outcome for e in col}) == 1 for col in big)
    assert all(a[0].outcome != b[0].outcome for a, b in zip(big, big[1:]))


@given(results_strategy, st.sampled_from([1, 2, 3]))
def test_derived_roads_follow_the_cell_rule_and_only_grow(results: list[Result], k: int) -> None:
    big = big_road(results)
    marks = derived_marks(big, k)
    assert marks == _grid_rule([len(c) for c in big], k)
    # A mark, once made, never changes: the marks of every prefix are a prefix of the whole.
    for n in range(len(results)):
        prefix = derived_marks(big_road(results[:n]), k)
        assert marks[: len(prefix)] == prefix
    assert [m for col in derived_road(big, k) for m in col] == marks
