"""The live display's screen, as a pure function of the table's snapshot and the shoe's rounds.

``screen(snap, shown, notices, width=80, height=24, unicode=True) -> rich renderable`` lays out,
in at most ``height`` lines of at most ``width`` cells:

1. the table, its Rules Submission and state; the shoe, round and cards left;
2. the hands on the layout; the last round (hands, totals, outcome);
3. the wagers by seat (in major units, ``controller.money``); the last results of the shoe;
4. faults (or none) and what the shoe tells the dealer; the latest warnings;
5. the roadmaps of ``shown`` (a ``ShownShoe``): bead plate and big road side by side, then big eye
   boy, small road and cockroach pig; each road shows its latest columns that fit;
6. with room to spare: the legend, then the latest rounds, one per line.

What does not fit is left out from the end of that order (the legend, the derived roads, the
warnings), never cut in the middle of a line. A wider terminal shows more road columns and
results, a taller one more rounds. Banker is red, player blue, a tie green (docs/roadmaps.md).
"""
from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from controller.money import money_text
from controller.roadmaps import compute, fold, results_from_rounds
from controller.roadmaps.render import BLUE_INK, GREEN_INK, RED_INK, bead_cells, bead_text, big_road_text

OUTCOME_STYLE = {"B": Style(color=RED_INK, bold=True), "P": Style(color=BLUE_INK, bold=True),
                 "T": Style(color=GREEN_INK, bold=True)}
COLOUR_STYLE = {"red": OUTCOME_STYLE["B"], "blue": OUTCOME_STYLE["P"]}
LABEL = Style(bold=True)
DIM = Style(dim=True)
WARN = Style(color="yellow", bold=True)
FAULT = Style(color="white", bgcolor="red", bold=True)
ROWS = 6
# 76 characters: whole on an 80-column terminal (a review of terminals saw the longer one always cut)
LEGEND = "B banker  P player  T tie · pairs: p player, b banker, * both · number: ties"
# The screen's own marks, and an ASCII spelling of each for a terminal that is not UTF-8 (a review of
# terminals: a Latin-1 one got nothing but a traceback, the marks being outside it).
GLYPHS = {True: {"dot": "·", "arrow": "→", "more": "…"}, False: {"dot": ".", "arrow": "->", "more": "..."}}
# Derived roads: big eye boy hollow circles, small road filled dots, cockroach pig slashes.
DERIVED_MARKS = {True: ("○", "●", "╱"), False: ("o", "@", "/")}


@dataclass(frozen=True)
class ShownShoe:
    """The shoe whose roads are on screen: the current one, or the last dealt one while the next
    has no round yet (``last`` True)."""

    shoe: str | None
    rounds: list[dict[str, Any]] = field(default_factory=list)
    last: bool = False


def screen(snap: dict[str, Any], shown: ShownShoe, notices: Sequence[str], *, width: int = 80, height: int = 24,
           unicode: bool = True) -> RenderableType:
    """See the module docstring."""
    width, height = max(width, 40), max(height, 8)
    rounds = shown.rounds
    g = GLYPHS[unicode]
    top = [_header(snap, width, g), _hands(snap), _last_round(rounds, g), _wagers(snap, width), _results(rounds, width, g),
           _faults(snap)]
    # each of the last two on up to two lines: a surveillance notice's figure was cut at 80 columns
    # (`player_pair +1…`: a review of terminals); what still does not fit ends in an ellipsis
    warnings = [_line(Text(part, style=WARN)) for n in notices[-2:]
                for part in _two_lines("!! " + n, width)]
    maps = compute(results_from_rounds(rounds))
    about = f"{shown.shoe}, the last dealt shoe" if shown.last else shown.shoe
    title = _line(Text(f"Roadmaps of {about}" if shown.shoe else "Roadmaps: no shoe yet", style=LABEL))
    main_roads = _side_by_side([("Bead plate", _bead(maps)), ("Big road", _big_road(maps))], width, g)
    glyphs = DERIVED_MARKS[unicode]
    derived = _side_by_side([(name, _derived(road, mark)) for name, road, mark in
                             (("Big eye boy", maps.big_eye_boy, glyphs[0]), ("Small road", maps.small_road, glyphs[1]),
                              ("Cockroach pig", maps.cockroach_pig, glyphs[2]))], width, g)
    legend = _line(Text(LEGEND if unicode else LEGEND.replace("·", "|"), style=DIM))
    road_lines = ROWS + 1
    used = len(top) + 1 + road_lines
    # What goes first when the screen is short: the legend, then the derived roads, then warnings.
    keep_warnings = used + len(warnings) <= height
    used += len(warnings) if keep_warnings else 0
    keep_derived = used + road_lines <= height
    used += road_lines if keep_derived else 0
    keep_legend = used + 1 <= height
    used += 1 if keep_legend else 0
    lines = [*top, *(warnings if keep_warnings else []), title, main_roads, *([derived] if keep_derived else []),
             *([legend] if keep_legend else []), *_recent(rounds, height - used, g)]
    if not unicode:  # rich's ellipsis is "…": a line too long is cut without it
        for line in lines:
            if isinstance(line, Text):
                line.overflow = "crop"
    return Group(*lines)


# -- lines -------------------------------------------------------------------------------------------

def _two_lines(text: str, width: int) -> list[str]:
    """``text`` broken between words into at most two lines of ``width`` (the second indented
    under the first's text), the rest of it left on the second."""
    lines = textwrap.wrap(text, width, subsequent_indent="   ", break_on_hyphens=False) or [text]
    return lines if len(lines) <= 2 else [lines[0], "   " + " ".join(part.strip() for part in lines[1:])]
def _line(text: Text) -> Text:
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


def _shown(value: Any) -> str:
    return "-" if value is None else str(value)


def _header(snap: dict[str, Any], width: int, g: dict[str, str]) -> Text:
    """The table and its state (left) and the shoe (right) on one line. Short of room, the Rules
    Submission's name is shortened first, then the shoe's facts left out from the end; the state is
    kept whole (at 80 columns "count fau…", "ready to …" were cut, and at 40 the shoe and round
    left out for the name: a review of terminals)."""
    table = Text(f"{_shown(snap.get('table'))} ", style=LABEL)
    state = Text(f" {str(snap.get('state') or '-').replace('_', ' ')} ", style=Style(reverse=True, bold=True))
    if snap.get("shoe"):
        left_in_shoe = snap.get("cards_remaining")
        facts = [Text(f"shoe {snap['shoe']}"), Text(f"round {_shown(snap.get('round'))}"),
                 *([Text(f"{left_in_shoe} cards left")] if left_in_shoe is not None else []),
                 *([Text("cover card out", style=WARN)] if snap.get("cover_reached") else [])]
    else:
        facts = [Text("no shoe in play", style=DIM)]
    right = Text(f" {g['dot']} ").join(facts)
    while len(facts) > 1 and table.cell_len + state.cell_len + 2 + right.cell_len > width:
        facts.pop(-2 if facts[-1].style == WARN and len(facts) > 2 else -1)  # the cover card's word stays
        right = Text(f" {g['dot']} ").join(facts)
    room = width - right.cell_len - 2 - table.cell_len - state.cell_len
    name = f"{_shown(snap.get('submission'))}  "
    if len(name) > room:
        cut = max(room - 2 - len(g["more"]), 0)
        name = (name[:cut] + g["more"] + "  ") if cut else ""
    left = Text.assemble(table, name, state)
    return _line(Text.assemble(left, " " * max(2, width - left.cell_len - right.cell_len), right))


def _cards(cards: Sequence[str]) -> str:
    return " ".join(cards) if cards else "-"


def _hands(snap: dict[str, Any]) -> Text:
    if not (snap.get("player") or snap.get("banker")):
        return _line(Text("Hand    no cards on the layout", style=DIM))
    return _line(Text.assemble(("Hand    ", LABEL), ("Player ", OUTCOME_STYLE["P"]), _cards(snap.get("player") or []),
                               "    ", ("Banker ", OUTCOME_STYLE["B"]), _cards(snap.get("banker") or [])))


def _last_round(rounds: Sequence[dict[str, Any]], g: dict[str, str]) -> Text:
    last = next((r for r in reversed(rounds) if r.get("kind") != "void"), None)
    if last is None:
        return _line(Text("Last    no round yet in this shoe", style=DIM))
    return _line(Text.assemble(("Last    ", LABEL), *_round_parts(last, g)))


def _round_parts(r: dict[str, Any], g: dict[str, str]) -> list[Any]:
    outcome = str(r.get("outcome", ""))
    return [f"round {r['round']}: ", ("Player ", OUTCOME_STYLE["P"]),
            f"{_cards(r['player']['cards'])} ({r['player']['total']})  ", ("Banker ", OUTCOME_STYLE["B"]),
            f"{_cards(r['banker']['cards'])} ({r['banker']['total']})  {g['arrow']} ",
            (outcome, OUTCOME_STYLE.get(outcome[:1].upper(), LABEL))]


def _wagers(snap: dict[str, Any], width: int) -> Text:
    """Each seat's wagers; too long for the line, each seat's total and count, then its total
    alone, so that every seat shows (at 80 columns three seats showed, then `seat …`: a review of
    terminals)."""
    by_seat: dict[int, list[dict[str, Any]]] = {}
    for w in snap.get("wagers") or []:
        by_seat.setdefault(w["seat"], []).append(w)
    text = "; ".join(f"seat {s}: " + ", ".join(f"{w['kind']} {money_text(w['amount'])}" for w in ws)
                     for s, ws in sorted(by_seat.items())) or "none"
    for compact in ("seat {s}: {total} ({n})", "{s}: {total}"):  # shorter and shorter, until every seat fits
        if len("Wagers  ") + len(text) <= width:
            break
        text = "  ".join(compact.format(s=s, total=money_text(sum(w["amount"] for w in ws)), n=len(ws))
                         for s, ws in sorted(by_seat.items()))
    return _line(Text.assemble(("Wagers  ", LABEL), text))


def _results(rounds: Sequence[dict[str, Any]], width: int, g: dict[str, str]) -> Text:
    letters = [str(r["outcome"])[:1].upper() for r in rounds if r.get("kind") == "normal"]
    counts = "  ".join(f"{k} {letters.count(k)}" for k in "BPT")
    room = max(0, (width - 8 - len(counts) - 4) // 2)
    shown = letters[-room:] if room else []
    text = Text("Results ", style=LABEL)
    if len(shown) < len(letters):
        text.append(f"{g['more']} ", style=DIM)
    for letter in shown:
        text.append(letter, style=OUTCOME_STYLE[letter])
        text.append(" ")
    if not letters:
        text.append("-", style=DIM)
    text.append(f"   {counts}" if letters else "", style=DIM)
    return _line(text)


def _faults(snap: dict[str, Any]) -> Text:
    faults = snap.get("faults") or {}
    text = Text("Faults  ", style=LABEL)
    if faults:
        text.append(" " + "; ".join(faults.values()) + " ", style=FAULT)
    else:
        text.append("none", style=DIM)
    if snap.get("shoe_given_up"):  # over the prompt, which may name a card of it (as ctl status says it)
        text.append(f" SHOE GIVEN UP once they are cleared ({snap['shoe_given_up']}) ", style=FAULT)
    elif snap.get("prompt"):
        text.append("    Dealer: ", style=LABEL)
        text.append(str(snap["prompt"]))
    return _line(text)


def _recent(rounds: Sequence[dict[str, Any]], room: int, g: dict[str, str]) -> list[RenderableType]:
    """The latest rounds under a heading, in ``room`` lines (none when fewer than two)."""
    if room < 2 or not rounds:
        return []
    lines: list[RenderableType] = [_line(Text("Latest rounds", style=LABEL))]
    for r in list(rounds)[-(room - 1):]:
        if r.get("kind") == "void":
            lines.append(_line(Text(f"round {r['round']}: VOID ({r.get('reason') or 'no reason given'})", style=DIM)))
        else:
            lines.append(_line(Text.assemble(*_round_parts(r, g))))
    return lines


# -- roads -------------------------------------------------------------------------------------------
Grid = list[tuple[int, int, str, Style]]  # (column, row, text, style)


def _bead(maps: Any) -> Grid:
    return [(c.x, c.y, bead_text(c.item), OUTCOME_STYLE[c.item.outcome]) for c in bead_cells(maps.bead_plate, ROWS)]


def _big_road(maps: Any) -> Grid:
    return [(c.x, c.y, big_road_text(c.item), OUTCOME_STYLE[c.item.outcome]) for c in fold(maps.big_road, ROWS)]


def _derived(road: Any, mark: str) -> Grid:
    return [(c.x, c.y, mark, COLOUR_STYLE[c.item]) for c in fold(road, ROWS)]


def _road_lines(grid: Grid, room: int, dot: str) -> list[Text]:
    """``ROWS`` lines of at most ``room`` cells: the latest columns of ``grid`` that fit."""
    size = max((len(t) for _, _, t, _ in grid), default=1)
    columns = max((x for x, _, _, _ in grid), default=-1) + 1
    fit = max(1, (room + 1) // (size + 1))
    first = max(0, columns - fit)
    cells = {(x, y): (t, s) for x, y, t, s in grid if x >= first}
    lines = []
    for y in range(ROWS):
        line = Text()
        for x in range(first, first + min(fit, max(columns - first, 1))):
            t, s = cells.get((x, y), (dot, DIM))
            line.append(t.ljust(size), style=s)
            line.append(" ")
        line.rstrip()
        lines.append(_line(line))
    return lines


def _side_by_side(roads: list[tuple[str, Grid]], width: int, g: dict[str, str]) -> Table:
    """The roads in columns under their names: ``ROWS + 1`` lines. Each road gets the width it
    needs, up to an equal share; the last takes the rest."""
    gap = 3
    needs = [max(len(name), (max((x for x, _, _, _ in g), default=0) + 1) * (max((len(t) for _, _, t, _ in g), default=1) + 1))
             for name, g in roads]
    share = (width - gap * (len(roads) - 1)) // len(roads)
    widths = [min(n, share) for n in needs[:-1]]
    widths.append(width - sum(widths) - gap * (len(roads) - 1))
    grid = Table.grid(padding=(0, gap, 0, 0))
    for w in widths:
        grid.add_column(width=w, no_wrap=True, overflow="crop")
    grid.add_row(*(Text(name, style=LABEL) for name, _ in roads))
    columns = [_road_lines(grid_of, w, g["dot"]) for (_, grid_of), w in zip(roads, widths)]
    for y in range(ROWS):
        grid.add_row(*(col[y] for col in columns))
    return grid
