"""Roadmaps on screen: a text grid, SVG, and PNG (with Pillow, if installed).

Contract:

- ``fold(columns, rows=6) -> list[Cell]``: logical columns placed on a grid ``rows`` high. A column
  goes down from row 0 of the display column after the previous logical column's start; when it
  reaches the bottom row, or the cell below is taken (by an earlier dragon tail), it turns right
  and runs along that row (the "dragon tail"). Folding is display only; the JSON is never folded.
- ``bead_cells(results, rows=6)``: the bead plate, filled top to bottom, then left to right.
- ``render_text(maps, title=None) -> str``, ``render_svg(maps, title=None) -> str`` (a complete,
  well-formed SVG document), ``render_png(maps, title=None) -> bytes``. ``render_png`` raises
  ``UsageError("PNG needs Pillow: pip install ...")`` (the ``png`` extra's packages) when
  Pillow cannot be imported; Pillow is imported only then, never at import time.

Conventions (docs/roadmaps.md): red is Banker, blue Player, green a tie; a banker pair is a red dot
at the top left of its cell, a player pair a blue dot at the bottom right. Big road entries are
hollow circles; ties are a green slash across the entry they are marked on, with their count when
more than one (in black on a white disc). Big eye boy marks are hollow circles, small road marks filled dots, cockroach pig
marks slashes, red or blue.
"""
from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar
from html import escape

from controller.errors import UsageError
from controller.roadmaps.roads import BigRoadEntry, Colour, Result, Roadmaps
from shoectl_config.extras import install_hint

T = TypeVar("T")

ROWS = 6

# --- layout ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cell(Generic[T]):
    """One item placed on the display grid: column ``x`` and row ``y`` from the top left."""

    x: int
    y: int
    item: T


def fold(columns: Sequence[Sequence[T]], rows: int = ROWS) -> list[Cell[T]]:
    """Place logical columns on a grid ``rows`` high, turning right into a dragon tail when a column
    reaches the bottom row or the cell below it is taken. Cells are returned in logical order."""
    if rows < 1:
        raise ValueError(f"rows must be at least 1, not {rows}")
    taken: set[tuple[int, int]] = set()
    cells: list[Cell[T]] = []
    start = -1
    for column in columns:
        x = start + 1
        while (x, 0) in taken:  # a tail along the top row pushes the next column right
            x += 1
        start, y, turned = x, 0, False
        for i, item in enumerate(column):
            if i > 0:
                if not turned and y + 1 < rows and (x, y + 1) not in taken:
                    y += 1
                else:
                    turned = True
                    x += 1
                    while (x, y) in taken:  # defensive: never overwrite a cell
                        x += 1
            taken.add((x, y))
            cells.append(Cell(x, y, item))
    return cells


def bead_cells(results: Sequence[Result], rows: int = ROWS) -> list[Cell[Result]]:
    """The bead plate: result ``i`` at column ``i // rows``, row ``i % rows``."""
    return [Cell(i // rows, i % rows, r) for i, r in enumerate(results)]


def _width(cells: Sequence[Cell[object]]) -> int:
    return max((c.x for c in cells), default=-1) + 1


# --- text ------------------------------------------------------------------------------------------

TEXT_LEGEND = ("B banker, P player, T tie; pairs: p player, b banker, * both; a number after B/P counts "
               "the ties marked on it; derived roads: r red, b blue; '.' empty")


def _pair_mark(player_pair: bool, banker_pair: bool) -> str:
    return "*" if player_pair and banker_pair else "p" if player_pair else "b" if banker_pair else ""


def bead_text(r: Result) -> str:
    """A bead-plate cell as text: the letter, then the pair mark if any (``Bp``, ``T*``)."""
    return r.outcome + _pair_mark(r.player_pair, r.banker_pair)


def big_road_text(e: BigRoadEntry) -> str:
    """A big-road cell as text: the letter, the tie count if any, the pair mark if any (``B2p``)."""
    return e.outcome + (str(e.ties) if e.ties else "") + _pair_mark(e.player_pair, e.banker_pair)


def derived_text(colour: Colour) -> str:
    return "r" if colour == "red" else "b"


def grid_text(cells: Sequence[Cell[str]], rows: int = ROWS, *, width: int | None = None) -> list[str]:
    """``rows`` lines; every cell padded to the widest cell text, ``.`` where empty, one space
    between columns, trailing spaces removed. No cells: one ``.`` per row. With ``width``, a grid
    wider than that is given in blocks of the columns that fit, one under the other, a blank line
    between them (an 80-column terminal wrapped every row of a shoe's big road: a review)."""
    columns = max(1, _width(cells))
    size = max((len(c.item) for c in cells), default=1)
    grid = [["." for _ in range(columns)] for _ in range(rows)]
    for c in cells:
        grid[c.y][c.x] = c.item
    per = columns if width is None else max(1, (width + 1) // (size + 1))
    lines: list[str] = []
    for start in range(0, columns, per):
        lines.extend([""] if start else [])
        lines.extend(" ".join(s.ljust(size) for s in line[start:start + per]).rstrip() for line in grid)
    return lines


def render_text(maps: Roadmaps, *, title: str | None = None, rows: int = ROWS, width: int | None = None) -> str:
    """The five roads as text grids ``rows`` high (dragon tails folded), each under its name, then
    a legend; with ``width`` (a terminal's), each grid in blocks that fit it. Ends with a newline."""
    sections: list[tuple[str, list[Cell[str]]]] = [
        ("Bead plate", [Cell(c.x, c.y, bead_text(c.item)) for c in bead_cells(maps.bead_plate, rows)]),
        ("Big road", [Cell(c.x, c.y, big_road_text(c.item)) for c in fold(maps.big_road, rows)]),
    ]
    for name, road in (("Big eye boy", maps.big_eye_boy), ("Small road", maps.small_road),
                       ("Cockroach pig", maps.cockroach_pig)):
        sections.append((name, [Cell(c.x, c.y, derived_text(c.item)) for c in fold(road, rows)]))
    lines: list[str] = [title] if title else []
    for name, cells in sections:
        lines.append(f"{name}:")
        lines.extend(("  " + line) if line else "" for line in grid_text(cells, rows, width=width and width - 2))
    lines.extend(textwrap.wrap(TEXT_LEGEND, width, break_on_hyphens=False) if width else [TEXT_LEGEND])
    return "\n".join(lines) + "\n"


# --- a scene of shapes, drawn as SVG or PNG --------------------------------------------------------

RED_INK, BLUE_INK, GREEN_INK = "#d0021b", "#1a53c4", "#1b8a3a"
GRID_INK, TITLE_INK, BACKGROUND = "#c8c8c8", "#222222", "#ffffff"
COUNT_INK = "#000000"  # a tie count, on a white disc over its green slash
CELL, SMALL_CELL, MARGIN, TITLE_H, MIN_COLUMNS = 24, 12, 10, 18, 12


@dataclass(frozen=True, slots=True)
class Circle:
    cx: float
    cy: float
    r: float
    fill: str | None
    stroke: str | None = None
    width: float = 0.0


@dataclass(frozen=True, slots=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float


@dataclass(frozen=True, slots=True)
class Text:
    x: float  # centre
    y: float  # centre
    text: str
    fill: str
    size: float
    anchor: str = "middle"  # "middle" or "start"


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str | None
    stroke: str | None
    width: float


Shape = Circle | Line | Text | Rect


@dataclass(frozen=True, slots=True)
class Scene:
    width: float
    height: float
    shapes: list[Shape]


def _ink(outcome: str) -> str:
    return {"B": RED_INK, "P": BLUE_INK, "T": GREEN_INK, "red": RED_INK, "blue": BLUE_INK}[outcome]


def _grid(x0: float, y0: float, cols: int, rows: int, size: float) -> list[Shape]:
    shapes: list[Shape] = [Rect(x0, y0, cols * size, rows * size, BACKGROUND, GRID_INK, 1)]
    for i in range(1, cols):
        shapes.append(Line(x0 + i * size, y0, x0 + i * size, y0 + rows * size, GRID_INK, 0.5))
    for j in range(1, rows):
        shapes.append(Line(x0, y0 + j * size, x0 + cols * size, y0 + j * size, GRID_INK, 0.5))
    return shapes


def _pair_dots(x: float, y: float, size: float, player_pair: bool, banker_pair: bool) -> list[Shape]:
    out: list[Shape] = []
    r = size * 0.12
    if banker_pair:
        out.append(Circle(x + size * 0.2, y + size * 0.2, r, RED_INK, BACKGROUND, 1))
    if player_pair:
        out.append(Circle(x + size * 0.8, y + size * 0.8, r, BLUE_INK, BACKGROUND, 1))
    return out


def _bead_shapes(cell: Cell[Result], x0: float, y0: float, s: float) -> list[Shape]:
    x, y, r = x0 + cell.x * s, y0 + cell.y * s, cell.item
    return [Circle(x + s / 2, y + s / 2, s * 0.42, _ink(r.outcome)),
            Text(x + s / 2, y + s / 2, r.outcome, BACKGROUND, s * 0.5),
            *_pair_dots(x, y, s, r.player_pair, r.banker_pair)]


def _big_road_shapes(cell: Cell[BigRoadEntry], x0: float, y0: float, s: float) -> list[Shape]:
    x, y, e = x0 + cell.x * s, y0 + cell.y * s, cell.item
    out: list[Shape] = [Circle(x + s / 2, y + s / 2, s * 0.36, None, _ink(e.outcome), s * 0.1)]
    if e.ties:
        out.append(Line(x + s * 0.22, y + s * 0.78, x + s * 0.78, y + s * 0.22, GREEN_INK, s * 0.09))
        if e.ties > 1:  # dark on a white disc: green on the green slash was hard to read (a review)
            out.append(Circle(x + s / 2, y + s / 2, s * 0.2, BACKGROUND))
            out.append(Text(x + s / 2, y + s / 2, str(e.ties), COUNT_INK, s * 0.42))
    out.extend(_pair_dots(x, y, s, e.player_pair, e.banker_pair))
    return out


def _derived_shapes(style: str, cell: Cell[Colour], x0: float, y0: float, s: float) -> list[Shape]:
    x, y, ink = x0 + cell.x * s, y0 + cell.y * s, _ink(cell.item)
    if style == "hollow":
        return [Circle(x + s / 2, y + s / 2, s * 0.34, None, ink, s * 0.14)]
    if style == "dot":
        return [Circle(x + s / 2, y + s / 2, s * 0.36, ink)]
    return [Line(x + s * 0.2, y + s * 0.8, x + s * 0.8, y + s * 0.2, ink, s * 0.16)]


def scene(maps: Roadmaps, *, title: str | None = None, rows: int = ROWS) -> Scene:
    """The roads as shapes: the bead plate and the big road in full-size cells, the three derived
    roads in half-size cells, stacked top to bottom under their names."""
    beads = bead_cells(maps.bead_plate, rows)
    big = fold(maps.big_road, rows)
    derived = [(name, style, fold(road, rows)) for name, style, road in (
        ("Big eye boy", "hollow", maps.big_eye_boy), ("Small road", "dot", maps.small_road),
        ("Cockroach pig", "slash", maps.cockroach_pig))]
    cols = max(MIN_COLUMNS, _width(beads), _width(big),
               *(-(-_width(cells) // 2) for _, _, cells in derived))
    inner = cols * CELL
    shapes: list[Shape] = []
    y = MARGIN
    if title:
        shapes.append(Text(MARGIN, y + TITLE_H / 2, title, TITLE_INK, 14, "start"))
        y += TITLE_H + 4

    def section(name: str, size: int) -> float:
        nonlocal y
        shapes.append(Text(MARGIN, y + TITLE_H / 2, name, TITLE_INK, 12, "start"))
        y += TITLE_H
        shapes.extend(_grid(MARGIN, y, int(inner // size), rows, size))
        top = y
        y += rows * size + MARGIN
        return top

    top = section("Bead plate", CELL)
    for b in beads:
        shapes.extend(_bead_shapes(b, MARGIN, top, CELL))
    top = section("Big road", CELL)
    for c in big:
        shapes.extend(_big_road_shapes(c, MARGIN, top, CELL))
    for name, style, cells in derived:
        top = section(name, SMALL_CELL)
        for d in cells:
            shapes.extend(_derived_shapes(style, d, MARGIN, top, SMALL_CELL))
    return Scene(inner + 2 * MARGIN, y, shapes)


def _num(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _svg_shape(s: Shape) -> str:
    if isinstance(s, Circle):
        paint = f'fill="{s.fill}"' if s.fill else 'fill="none"'
        if s.stroke:
            paint += f' stroke="{s.stroke}" stroke-width="{_num(s.width)}"'
        return f'<circle cx="{_num(s.cx)}" cy="{_num(s.cy)}" r="{_num(s.r)}" {paint}/>'
    if isinstance(s, Line):
        return (f'<line x1="{_num(s.x1)}" y1="{_num(s.y1)}" x2="{_num(s.x2)}" y2="{_num(s.y2)}" '
                f'stroke="{s.stroke}" stroke-width="{_num(s.width)}" stroke-linecap="round"/>')
    if isinstance(s, Rect):
        fill = s.fill or "none"
        stroke = f' stroke="{s.stroke}" stroke-width="{_num(s.width)}"' if s.stroke else ""
        return f'<rect x="{_num(s.x)}" y="{_num(s.y)}" width="{_num(s.w)}" height="{_num(s.h)}" fill="{fill}"{stroke}/>'
    return (f'<text x="{_num(s.x)}" y="{_num(s.y)}" fill="{s.fill}" font-size="{_num(s.size)}" '
            f'text-anchor="{s.anchor}" dominant-baseline="central">{escape(s.text, quote=False)}</text>')


def render_svg(maps: Roadmaps, *, title: str | None = None, rows: int = ROWS) -> str:
    """A standalone SVG document of the roads (see ``scene``). Ends with a newline."""
    sc = scene(maps, title=title, rows=rows)
    w, h = _num(sc.width), _num(sc.height)
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'font-family="Helvetica, Arial, sans-serif">',
        f"<title>{escape(title or 'Baccarat roadmaps', quote=False)}</title>",
        f'<rect width="{w}" height="{h}" fill="{BACKGROUND}"/>',
    ]
    return "\n".join(head + [_svg_shape(s) for s in sc.shapes] + ["</svg>"]) + "\n"


def render_png(maps: Roadmaps, *, title: str | None = None, rows: int = ROWS, scale: int = 2) -> bytes:
    """The roads as a PNG image (``scale`` pixels per SVG unit). UsageError if Pillow is missing."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise UsageError(f"PNG needs Pillow: {install_hint('png')}") from None
    sc = scene(maps, title=title, rows=rows)
    img = Image.new("RGB", (int(round(sc.width * scale)), int(round(sc.height * scale))), BACKGROUND)
    draw = ImageDraw.Draw(img)
    fonts: dict[int, object] = {}

    def font(size: float) -> object:
        px = max(6, int(round(size * scale)))
        if px not in fonts:
            try:
                fonts[px] = ImageFont.load_default(size=px)
            except TypeError:  # Pillow < 10.1: one bitmap size
                fonts[px] = ImageFont.load_default()
        return fonts[px]

    for s in sc.shapes:
        if isinstance(s, Circle):
            box = [(s.cx - s.r) * scale, (s.cy - s.r) * scale, (s.cx + s.r) * scale, (s.cy + s.r) * scale]
            width = max(1, int(round(s.width * scale))) if s.stroke else 0
            draw.ellipse(box, fill=s.fill, outline=s.stroke, width=width)
        elif isinstance(s, Line):
            draw.line([s.x1 * scale, s.y1 * scale, s.x2 * scale, s.y2 * scale], fill=s.stroke,
                      width=max(1, int(round(s.width * scale))))
        elif isinstance(s, Rect):
            draw.rectangle([s.x * scale, s.y * scale, (s.x + s.w) * scale, (s.y + s.h) * scale], fill=s.fill,
                           outline=s.stroke, width=max(1, int(round(s.width * scale))) if s.stroke else 0)
        else:
            draw.text((s.x * scale, s.y * scale), s.text, fill=s.fill, font=font(s.size),  # type: ignore[arg-type]
                      anchor="mm" if s.anchor == "middle" else "lm")
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()
