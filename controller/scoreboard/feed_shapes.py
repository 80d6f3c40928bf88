"""Which floor-feed messages the floor scoreboard takes (``MqttFloorSource``): the shapes the feed
publishes (``controller.floor.feed``: a table's ``status`` and its current shoe's ``roads``, as
``shoectl roadmap --json`` gives them; docs/floor.md), checked before anything is kept, so that a
message of another shape (a table's bug, a stray publisher the ACL let through) changes nothing and
can never stop the scoreboard's network thread.

Contract: ``problem(kind, table, body) -> str | None``: why ``body`` (decoded JSON) is not a
``kind`` (``STATUS``, else ``ROADS``) message of ``table``, in a few words, or None when it is.
A topic whose table id no table can have (``controller.table_ids``) carries no message of a table.

- status: an object whose ``table_id`` is the topic's table; ``online`` a boolean; ``state``,
  ``shoe``, ``last_outcome`` and ``ts`` text; ``round`` and ``seq`` whole numbers of at least 0;
  ``faults`` a list of objects (each may say its ``reason``). Each may be absent or null, but
  ``table_id``; other fields are ignored.
- roads: an object whose ``bead_plate`` lists ``B``/``P``/``T`` (and ``bead_pairs``, if given, one
  of ``""``/``P``/``B``/``PB`` for each), whose ``big_road`` lists non-empty
  columns of cells ``{"outcome": "B"|"P", "ties": n >= 0, "player_pair": bool, "banker_pair":
  bool}``, and whose derived roads (``big_eye_boy``, ``small_road``, ``cockroach_pig``) list
  non-empty columns of ``red``/``blue`` (the words of ``controller.roadmaps.roads``); each may be
  absent. At most ``MAX_CELLS`` cells a road: a shoe
  of eight decks has at most 104 rounds.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from controller.floor.topics import STATUS
from controller.roadmaps.roads import Colour, Outcome, Win
from controller.table_ids import TABLE_ID, TABLE_ID_RULE

__all__ = ["MAX_CELLS", "problem"]

MAX_CELLS = 1000
_TEXT_FIELDS = ("state", "shoe", "last_outcome", "ts")
_COUNT_FIELDS = ("round", "seq")
_CELL_KEYS = {"outcome", "ties", "player_pair", "banker_pair"}
_DERIVED = ("big_eye_boy", "small_road", "cockroach_pig")
_OUTCOMES, _WINS, _COLOURS = get_args(Outcome), get_args(Win), get_args(Colour)  # the roads' own words
_PAIRS = ("", "P", "B", "PB")  # a bead's pairs: Player's, Banker's


def problem(kind: str, table: str, body: Any) -> str | None:
    """Why ``body`` is not a ``kind`` message of ``table`` (see the module docstring), or None."""
    if not TABLE_ID.fullmatch(table):  # the rule of shoectl run --table-id: no table publishes on another
        return f"the topic's table id is not one a table can have ({TABLE_ID_RULE})"
    if not isinstance(body, dict):
        return "not a JSON object"
    return _status_problem(table, body) if kind == STATUS else _roads_problem(body)


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _status_problem(table: str, body: dict[str, Any]) -> str | None:
    if body.get("table_id") != table:
        return "its table_id is not its topic's table"
    if body.get("online") is not None and type(body["online"]) is not bool:
        return "online is not true or false"
    for name in _TEXT_FIELDS:
        if body.get(name) is not None and type(body[name]) is not str:
            return f"{name} is not text"
    for name in _COUNT_FIELDS:
        if body.get(name) is not None and not _is_count(body[name]):
            return f"{name} is not a whole number"
    faults = body.get("faults")
    if faults is not None and not (type(faults) is list and all(type(f) is dict for f in faults)):
        return "faults is not a list of objects"
    return None


def _roads_problem(body: dict[str, Any]) -> str | None:
    beads = body.get("bead_plate", [])
    if type(beads) is not list or len(beads) > MAX_CELLS or any(b not in _OUTCOMES for b in beads):
        return "bead_plate is not a list of B, P and T"
    pairs = body.get("bead_pairs", [""] * len(beads))  # a feed of before 2026-12-06 sends none
    if type(pairs) is not list or len(pairs) != len(beads) or any(p not in _PAIRS for p in pairs):
        return "bead_pairs is not one of '', P, B, PB for each bead"
    why = _columns_problem(body.get("big_road", []), _is_big_road_cell)
    if why is not None:
        return f"big_road {why}"
    for name in _DERIVED:
        why = _columns_problem(body.get(name, []), lambda mark: mark in _COLOURS)
        if why is not None:
            return f"{name} {why}"
    return None


def _is_big_road_cell(cell: Any) -> bool:
    return (type(cell) is dict and cell.keys() == _CELL_KEYS and cell["outcome"] in _WINS
            and _is_count(cell["ties"]) and type(cell["player_pair"]) is bool and type(cell["banker_pair"]) is bool)


def _columns_problem(columns: Any, fits: Callable[[Any], bool]) -> str | None:
    if type(columns) is not list or not all(type(c) is list and c for c in columns):
        return "is not a list of non-empty columns"
    if sum(map(len, columns)) > MAX_CELLS:
        return f"has more than {MAX_CELLS} cells"
    if not all(fits(cell) for column in columns for cell in column):
        return "has a cell of another shape"
    return None
