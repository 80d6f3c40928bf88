"""Rendering of the roads (controller.roadmaps.render): dragon-tail folding, text grids, SVG, PNG."""
from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET

import pytest

from controller.errors import UsageError
from controller.roadmaps.render import (
    BLUE_INK,
    CELL,
    COUNT_INK,
    GREEN_INK,
    RED_INK,
    SMALL_CELL,
    bead_cells,
    fold,
    grid_text,
    render_png,
    render_svg,
    render_text,
)
from controller.roadmaps.roads import compute, parse_results

SVG = "{http://www.w3.org/2000/svg}"


def positions(cells) -> list[tuple[int, int, object]]:
    return [(c.x, c.y, c.item) for c in cells]


# --- folding ---------------------------------------------------------------------------------------


def test_a_long_column_turns_right_at_the_bottom_row() -> None:
    assert positions(fold([list("abcdefgh"), ["x"]])) == [
        (0, 0, "a"), (0, 1, "b"), (0, 2, "c"), (0, 3, "d"), (0, 4, "e"), (0, 5, "f"),
        (1, 5, "g"), (2, 5, "h"),  # the dragon tail
        (1, 0, "x"),  # the next column still starts right after the previous one's start
    ]


def test_a_column_turns_right_above_an_earlier_tail() -> None:
    # 8 B, then 6 P (blocked at row 5 by the B tail: turns at row 4), then 1 B.
    maps = compute(parse_results("B" * 8 + "P" * 6 + "B"))
    cells = positions(fold(maps.big_road))
    assert [(x, y) for x, y, _ in cells] == [
        (0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (2, 5),
        (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4),
        (2, 0),
    ]


def test_a_tail_along_the_top_row_pushes_the_next_column_right() -> None:
    # Two rows: column 0 tails along row 1; column 1 is blocked at row 1 at once and tails along
    # row 0, taking (2, 0); column 2 would start at x = 2 and moves on to x = 3.
    assert positions(fold([["a", "b", "c"], ["d", "e"], ["f"]], rows=2)) == [
        (0, 0, "a"), (0, 1, "b"), (1, 1, "c"), (1, 0, "d"), (2, 0, "e"), (3, 0, "f")]


def test_fold_rejects_a_grid_without_rows() -> None:
    with pytest.raises(ValueError):
        fold([["a"]], rows=0)


def test_bead_plate_fills_down_then_right() -> None:
    cells = bead_cells(parse_results("BPTBPTB"))
    assert [(c.x, c.y, c.item.outcome) for c in cells] == [
        (0, 0, "B"), (0, 1, "P"), (0, 2, "T"), (0, 3, "B"), (0, 4, "P"), (0, 5, "T"), (1, 0, "B")]


# --- text ------------------------------------------------------------------------------------------


def test_grid_text_pads_cells_and_marks_empty_ones() -> None:
    from controller.roadmaps.render import Cell

    assert grid_text([Cell(0, 0, "B2p"), Cell(1, 1, "P")], rows=2) == ["B2p .", ".   P"]
    assert grid_text([], rows=2) == [".", "."]


def test_a_grid_wider_than_the_terminal_is_given_in_blocks_that_fit_it() -> None:
    """A review of terminals: a shoe's big road (134 characters a row) wrapped every row on an
    80-column terminal, and its columns could not be followed. Each grid comes in blocks of the
    columns that fit, one under the other; nothing is left out."""
    import random

    rng = random.Random(7)
    maps = compute(parse_results(" ".join(rng.choice("BBBPPPT") for _ in range(80))))
    whole, fitted = render_text(maps), render_text(maps, width=40)
    assert max(map(len, whole.splitlines())) > 40 and all(len(line) <= 40 for line in fitted.splitlines())
    for road in ("Big road", "Bead plate"):
        cells = lambda text: sorted(text.split(f"{road}:\n")[1].split(":\n")[0].split())  # noqa: E731
        assert cells(whole)[:-2] == cells(fitted)[:-2]  # the same cells (the next road's name aside)
    assert "\n\n" in fitted.split("Big road:\n")[1].split("Big eye boy:")[0]  # in blocks


def test_text_dragon_tail_and_nested_tail() -> None:
    text = render_text(compute(parse_results("B" * 8 + "P" * 6 + "B")))
    big = text.split("Big road:\n")[1].split("Big eye boy:")[0]
    assert big.splitlines() == [
        "  B P B",
        "  B P .",
        "  B P .",
        "  B P .",
        "  B P P",
        "  B B B",
    ]


def test_text_of_a_small_shoe_in_full() -> None:
    # T T B  B(p) P  P T T  B(b) P  B: leading ties on the first B; two ties on the second P.
    text = render_text(compute(parse_results("T T B Bp P P T T Bb P B")), title="shoe S1")
    assert text == "\n".join([
        "shoe S1",
        "Bead plate:",
        # filled down, then right: T T B Bp P P | T T Bb P B
        "  T  T",
        "  T  T",
        "  B  Bb",
        "  Bp P",
        "  P  B",
        "  P  .",
        "Big road:",
        # columns BB, PP, B, P, B; the first B carries the 2 leading ties, the second P two ties
        "  B2 P  Bb P  B",
        "  Bp P2 .  .  .",
        "  .  .  .  .  .",
        "  .  .  .  .  .",
        "  .  .  .  .  .",
        "  .  .  .  .  .",
        # big eye boy: c2 r2 (c1 has row 2) red; c3 r1 (2 vs 2) red; c4 r1 (1 vs 2) blue; c5 r1 (1 vs 1) red
        "Big eye boy:",
        "  r b r",
        "  r . .",
        "  . . .",
        "  . . .",
        "  . . .",
        "  . . .",
        # small road: c3 r1 is before the start; c4 r1 (1 vs 2) blue; c5 r1 (1 vs 2) blue
        "Small road:",
        "  b",
        "  b",
        "  .",
        "  .",
        "  .",
        "  .",
        # cockroach pig: c5 r1 (c4 1 vs c1 2) blue
        "Cockroach pig:",
        "  b",
        "  .",
        "  .",
        "  .",
        "  .",
        "  .",
        "B banker, P player, T tie; pairs: p player, b banker, * both; a number after B/P counts the ties "
        "marked on it; derived roads: r red, b blue; '.' empty",
    ]) + "\n"


def test_text_of_an_empty_shoe() -> None:
    text = render_text(compute([]))
    assert "Big road:\n  .\n  .\n  .\n  .\n  .\n  .\n" in text


# --- SVG -------------------------------------------------------------------------------------------


def _svg(results: str) -> ET.Element:
    return ET.fromstring(render_svg(compute(parse_results(results)), title="shoe <S1> & co").encode())


def _circles(root: ET.Element, **attrs: str) -> list[ET.Element]:
    return [c for c in root.iter(f"{SVG}circle") if all(c.get(k) == v for k, v in attrs.items())]


def test_svg_is_well_formed_and_sized() -> None:
    text = render_svg(compute(parse_results("B P T B")), title="shoe <S1> & co")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<svg ')
    root = ET.fromstring(text.encode())
    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}title").text == "shoe <S1> & co"  # escaped, and read back
    w, h = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    assert w >= 12 * CELL and h > 2 * 6 * CELL + 3 * 6 * SMALL_CELL


def test_svg_draws_each_road_in_its_convention() -> None:
    # Big road: BBB (second with a banker pair), then P with two ties and a player pair, then B.
    root = _svg("B Bb B P TT Pp")
    bead_r, big_r, eye_r = f"{CELL * 0.42:.2f}".rstrip("0").rstrip("."), "8.64", "4.08"
    # Bead plate: one filled circle per result, coloured by outcome, with its letter.
    assert len(_circles(root, r=bead_r, fill=RED_INK)) == 3
    assert len(_circles(root, r=bead_r, fill=BLUE_INK)) == 2
    assert len(_circles(root, r=bead_r, fill=GREEN_INK)) == 2
    letters = [t.text for t in root.iter(f"{SVG}text")]
    assert letters.count("B") == 3 and letters.count("P") == 2 and letters.count("T") == 2
    # Big road: hollow circles, red for Banker, blue for Player.
    assert len(_circles(root, r=big_r, fill="none", stroke=RED_INK)) == 3
    assert len(_circles(root, r=big_r, fill="none", stroke=BLUE_INK)) == 2
    # One green slash for the entry carrying ties, and its count (2) in dark ink on a white disc
    # (green on the green slash was hard to read: a review of the scoreboard)
    assert len([ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == GREEN_INK]) == 1
    assert [t.text for t in root.iter(f"{SVG}text") if t.get("fill") == COUNT_INK] == ["2"]
    assert not [t for t in root.iter(f"{SVG}text") if t.get("fill") == GREEN_INK]
    # Pair dots: banker pair (bead + big road) red, player pair (bead + big road) blue.
    assert len(_circles(root, r="2.88", fill=RED_INK)) == 2
    assert len(_circles(root, r="2.88", fill=BLUE_INK)) == 2
    # Big eye boy: c2 r1 starts nothing; c2 r2 (c1 has row 2) red: one hollow red circle.
    assert len(_circles(root, r=eye_r, fill="none", stroke=RED_INK)) == 1
    assert len(_circles(root, r=eye_r)) == 1
    # Small road and cockroach pig have not started: no filled small dots, no coloured slashes.
    assert _circles(root, r="4.32") == []
    assert [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") in (RED_INK, BLUE_INK)] == []


def test_svg_small_road_dots_and_cockroach_slashes() -> None:
    root = _svg("BPBPBP")  # small road: 3 red; cockroach pig: 2 red (see test_roads)
    assert len(_circles(root, r="4.32", fill=RED_INK)) == 3
    assert len([ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == RED_INK]) == 2


def test_svg_folds_a_dragon_tail_to_six_rows() -> None:
    root = _svg("B" * 9)
    big = _circles(root, r="8.64")
    ys = sorted({float(c.get("cy")) for c in big})
    xs = sorted({float(c.get("cx")) for c in big})
    assert len(ys) == 6 and len(xs) == 4  # one column of 6, then a tail of 3 along the bottom
    assert sum(float(c.get("cy")) == ys[-1] for c in big) == 4


def test_svg_numbers_are_plain() -> None:
    text = render_svg(compute(parse_results("BPT")))
    assert not re.search(r'="[-0-9.]*e[-0-9]', text)


# --- PNG -------------------------------------------------------------------------------------------


def test_png_without_pillow_is_a_usage_error(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # makes `from PIL import ...` raise ImportError
    # the packages themselves: shoectl is on no index, so 'shoectl[png]' would find nothing there
    with pytest.raises(UsageError, match=r"^PNG needs Pillow: pip install 'pillow<13,>=10' \(shoectl's png extra\)$"):
        render_png(compute(parse_results("BP")))


def test_png_with_pillow() -> None:
    pil = pytest.importorskip("PIL.Image")
    import io

    data = render_png(compute(parse_results("B P T B B Pp")), title="shoe S1", scale=1)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    img = pil.open(io.BytesIO(data))
    root = ET.fromstring(render_svg(compute(parse_results("B P T B B Pp")), title="shoe S1").encode())
    assert img.size == (round(float(root.get("width"))), round(float(root.get("height"))))
    assert img.convert("RGB").getpixel((0, 0)) == (255, 255, 255)
