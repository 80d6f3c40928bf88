"""``shoectl floor backfill``: a ``shoectl journal export`` file into the central store, through the
same path as a message from the broker (``FloorStore.add``: insert-if-absent, second bodies
refused, chains checked, gaps closed).

``read_export(path, max_bytes)`` reads and checks the whole file before anything is stored: a
line that is not a journal entry refuses the file (``BackfillError`` naming the line), and
nothing is changed. ``backfill(store, items)`` then stores the entries in batches, all in one
transaction: the file goes in whole or not at all.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from controller.floor.message import MAX_MESSAGE_BYTES, FloorEntry, NotAnEntry, parse_entry
from controller.floor.store import BatchResult, FloorStore
from shoectl_config.files import NotARegularFile, require_regular_file

BATCH = 2000


class BackfillError(ValueError):
    """The export file cannot be used (one line: the file, the line, why)."""


def read_export(path: str | Path, max_bytes: int = MAX_MESSAGE_BYTES) -> list[FloorEntry]:
    """Every entry of the export file ``path``, checked for form (see the module docstring)."""
    p = Path(path)
    try:
        require_regular_file(p)
        handle = p.open("rb")
    except FileNotFoundError:
        raise BackfillError(f"{p}: no such file") from None
    except NotARegularFile as exc:
        raise BackfillError(str(exc)) from None
    except OSError as exc:
        raise BackfillError(f"{p}: cannot read it: {exc.strerror or exc}") from None
    items: list[FloorEntry] = []
    with handle:
        try:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    items.append(parse_entry(raw, max_bytes=max_bytes))
                except NotAnEntry as exc:
                    raise BackfillError(f"{p} line {number}: {exc.detail}; nothing was stored") from None
        except OSError as exc:
            raise BackfillError(f"{p}: cannot read it: {exc.strerror or exc}") from None
    if not items:
        raise BackfillError(f"{p}: no journal entries in the file (a `shoectl journal export` file is expected)")
    return items


def backfill(store: FloorStore, items: Sequence[FloorEntry]) -> BatchResult:
    """Store ``items`` in batches within one transaction; the sum of the batches' results."""
    total = BatchResult()
    with store.conn.transaction():
        for start in range(0, len(items), BATCH):
            part = store.add(items[start:start + BATCH])
            total.stored += part.stored
            total.duplicates += part.duplicates
            total.refused += part.refused
            total.positions.update(part.positions)
    return total
