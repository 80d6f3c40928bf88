"""The main game's value-class tables, shipped precomputed with the package (docs/odds.md,
"Shipped tables").

Deriving a table from the drawing rules costs a tenth of a second of CPU, which every process
that values a shoe (``shoectl run``'s edge monitor, ``shoectl odds``) would pay on its first call.
The tables of the presets' rule sets are therefore derived once, by the same builders, and stored
in ``controller/rules/tables/`` (``tools/shipped_odds_tables.py --write``).

Contract:
- ``table_key(name, facts)``: the table's file name without suffix, ``<name>-<16 hex digits>``,
  the digits those of SHA-256 over ``facts`` as canonical JSON. ``facts`` is everything the
  builder reads of the rules (which totals are naturals, who draws on what, how each finished
  round is categorised, ...), so rules that change change the key: a stored table is only ever
  found for the rules it was derived from.
- ``load(key) -> groups | None``: the groups stored under ``key`` (tuples, as the builder returns
  them), or None when none is stored or the stored file cannot be read; the caller then derives
  the table, as it always can. Loading costs about 10 ms.
- The files are gzip'd JSON, ``[[k, slots, cols], ...]``, written by the tool
  (``tools/shipped_odds_tables.py``: ``write``); the package only reads them.

A test derives every stored table again and requires it to be equal, and requires the presets'
rule sets to be stored (tests/rules/test_odds_tables.py): a builder changed without the files
written again fails there, not silently at a table.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

__all__ = ["SUFFIX", "TABLES", "load", "table_key"]

TABLES = Path(__file__).resolve().parent / "tables"
SUFFIX = ".json.gz"

Group = tuple[int, tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]


def table_key(name: str, facts: Any) -> str:
    """``<name>-<16 hex digits of SHA-256 over facts as canonical JSON>``."""
    text = json.dumps(facts, sort_keys=True, separators=(",", ":"))
    return f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def load(key: str, folder: Path = TABLES) -> tuple[Group, ...] | None:
    """The groups stored under ``key``, or None (none stored, or not readable as a table)."""
    try:
        raw = json.loads(gzip.decompress((folder / f"{key}{SUFFIX}").read_bytes()))
        return tuple((int(k), tuple(map(tuple, slots)), tuple(map(tuple, cols))) for k, slots, cols in raw)
    except (OSError, EOFError, zlib.error, ValueError, TypeError):  # zlib.error: a damaged stream
        return None
