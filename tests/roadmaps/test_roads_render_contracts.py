"""Contracts of controller/roadmaps (docs/roadmaps.md) that no test held: each test here kills a mutant
the suite let live (a mutation review)."""
from __future__ import annotations

import pytest

from controller.roadmaps.render import (
    BLUE_INK, CELL, GREEN_INK, RED_INK, SMALL_CELL, Circle, Line, Text, big_road_text, fold, grid_text,
    render_text, scene,
)
from controller.roadmaps.roads import BigRoadEntry, Result, compute, derived_road, parse_results, result_from_round


# --- roads.py ------------------------------------------------------------------------------------

def test_a_round_without_a_kind_is_a_normal_round_on_the_roads() -> None:
    # result_from_round: doc.get("kind", "normal"): a replayed round without "kind" is on the roads
    assert result_from_round({"round": 1, "outcome": "banker"}) == Result("B")


def test_a_result_refuses_an_outcome_that_is_not_b_p_or_t() -> None:
    with pytest.raises(ValueError, match="outcome must be"):
        Result("X")  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [0, -1])
def test_derived_road_refuses_an_offset_below_one(k: int) -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        derived_road(compute(parse_results("B P B P B")).big_road, k)


# --- render.py: fold (docs/roadmaps.md, "On screen") ---------------------------------------------

def test_a_top_row_tail_two_cells_long_pushes_the_next_column_past_both() -> None:
    # rows=2: column 0 tails along row 1 to x=2; column 1 is blocked at once and tails along row 0
    # to x=3; column 2 would start at x=2 (taken) and x=3 (taken): "the next free display column".
    cells = fold([list("abcd"), list("efg"), ["h"]], rows=2)
    places = [(c.x, c.y) for c in cells]
    assert places == [(0, 0), (0, 1), (1, 1), (2, 1), (1, 0), (2, 0), (3, 0), (4, 0)]
    assert len(set(places)) == len(places)  # no cell drawn twice


def test_a_turned_tail_keeps_to_its_row_even_where_the_cell_below_is_free() -> None:
    # 8 Banker (tail along row 5 to x=2), then 8 Player: blocked above (1,5), turns at row 4 and
    # "continues along that row" (4), never dropping back to row 5 at x=3 where it is free.
    maps = compute(parse_results("B" * 8 + "P" * 8))
    places = [(c.x, c.y) for c in fold(maps.big_road)]
    assert places[8:] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4), (3, 4), (4, 4)]


# --- render.py: text ---------------------------------------------------------------------------

def test_a_big_road_entry_with_one_tie_shows_its_count_in_text() -> None:
    assert big_road_text(BigRoadEntry("B", 1)) == "B1"
    assert big_road_text(BigRoadEntry("P", 2, player_pair=True)) == "P2p"


def test_a_grid_exactly_as_wide_as_the_terminal_is_one_block() -> None:
    # 4 one-character columns take 4 + 3 separators = 7 characters: they fit a width of 7.
    cells = fold([["B"], ["P"], ["B"], ["P"]], rows=1)
    from controller.roadmaps.render import Cell
    lines = grid_text([Cell(c.x, c.y, c.item) for c in cells], rows=1, width=7)
    assert lines == ["B P B P"]


def test_render_text_folds_the_big_road_to_the_rows_asked() -> None:
    maps = compute(parse_results("BBBB"))
    text = render_text(maps, rows=3)
    big = text.split("Big road:\n")[1].split("Big eye boy:")[0]
    assert big.splitlines() == ["  B .", "  B .", "  B B"]


# --- render.py: the pictures ---------------------------------------------------------------------

def _big_road_shapes(results: str) -> list:
    from controller.roadmaps.render import _big_road_shapes
    from controller.roadmaps.render import Cell
    maps = compute(parse_results(results))
    return _big_road_shapes(Cell(0, 0, maps.big_road[0][0]), 0, 0, CELL)


def test_a_banker_pair_is_a_red_dot_top_left_and_a_player_pair_a_blue_dot_bottom_right() -> None:
    dots = [s for s in _big_road_shapes("Bpb") if isinstance(s, Circle) and s.fill in (RED_INK, BLUE_INK)]
    red = [d for d in dots if d.fill == RED_INK]
    blue = [d for d in dots if d.fill == BLUE_INK]
    assert len(red) == len(blue) == 1
    assert red[0].cx < CELL / 2 and red[0].cy < CELL / 2    # top left
    assert blue[0].cx > CELL / 2 and blue[0].cy > CELL / 2  # bottom right


def test_one_tie_is_a_green_slash_without_a_number() -> None:
    shapes = _big_road_shapes("BT")
    assert [s for s in shapes if isinstance(s, Line) and s.stroke == GREEN_INK]  # the slash
    assert not [s for s in shapes if isinstance(s, Text)]                          # no count


def test_two_ties_are_a_slash_with_their_number() -> None:
    shapes = _big_road_shapes("BTT")
    assert [s for s in shapes if isinstance(s, Line) and s.stroke == GREEN_INK]
    assert [s.text for s in shapes if isinstance(s, Text)] == ["2"]


def test_the_picture_is_wide_enough_for_a_derived_road_of_an_odd_number_of_columns() -> None:
    # Nine big-road columns of six, then a tenth: the big eye boy is one red column of 48 marks,
    # 43 half-size cells wide on screen: 21.5 full-size columns, so 22 are needed.
    big = "".join(("BP"[i % 2]) * 6 for i in range(9)) + "P"
    maps = compute(parse_results(big))
    assert len(maps.big_eye_boy) == 1
    width = max(c.x for c in fold(maps.big_eye_boy)) + 1
    assert width == 43
    sc = scene(maps)
    needed = width * SMALL_CELL
    inner = sc.width - 2 * 10
    assert inner >= needed
