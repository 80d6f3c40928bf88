"""``shoectl floor backfill``: a ``shoectl journal export`` file into the central store, through the
same path as a message from the broker (``FloorStore.add``: insert-if-absent, second bodies
refused, chains checked, gaps closed).

``open_export(path)`` opens the file and refuses at once what cannot be an export (missing, not a
regular file, a journal's SQLite database given by mistake, empty). ``backfill(store, handle,
path)`` then streams it: each line is read with a bound (a line longer than ``max_bytes`` is
refused without being read whole), checked (``parse_entry``) and stored in batches of ``BATCH``,
all in ONE transaction. A line that is not a journal entry refuses the file (``BackfillError``
naming the line): the transaction is rolled back and nothing is stored. Memory holds one batch,
whatever the size of the file.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from controller.floor.message import MAX_MESSAGE_BYTES, FloorEntry, NotAnEntry, parse_entry
from controller.floor.store import BatchResult, FloorStore
from shoectl_config.files import NotARegularFile, require_regular_file

BATCH = 2000
SQLITE_MAGIC = b"SQLite format 3\x00"


class BackfillError(ValueError):
    """The export file cannot be used (one line: the file, the line, why)."""


def open_export(path: str | Path) -> BinaryIO:
    """``path`` opened for reading, once it may be an export (see the module docstring)."""
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
    try:
        head = handle.read(len(SQLITE_MAGIC))
        handle.seek(0)
    except OSError as exc:
        handle.close()
        raise BackfillError(f"{p}: cannot read it: {exc.strerror or exc}") from None
    if head == SQLITE_MAGIC:
        handle.close()
        raise BackfillError(f"{p}: not a journal export (this looks like a journal database: use shoectl journal "
                            f"export FILE)")
    if not head:
        handle.close()
        raise BackfillError(f"{p}: no journal entries in the file (a `shoectl journal export` file is expected)")
    return handle


def backfill(store: FloorStore, handle: BinaryIO, path: str | Path,
             max_bytes: int = MAX_MESSAGE_BYTES) -> tuple[int, BatchResult]:
    """Store every entry of the export ``handle`` (the file ``path``) in one transaction; the
    number of entries read and the sum of the batches' results. BackfillError: nothing stored."""
    total = BatchResult()
    count = 0
    with store.conn.transaction():
        batch: list[FloorEntry] = []
        for item in _entries(handle, path, max_bytes):
            batch.append(item)
            count += 1
            if len(batch) == BATCH:
                _add(store, batch, total)
                batch = []
        if batch:
            _add(store, batch, total)
        if count == 0:
            raise BackfillError(f"{path}: no journal entries in the file (a `shoectl journal export` file is expected)")
    return count, total


def _add(store: FloorStore, batch: list[FloorEntry], total: BatchResult) -> None:
    part = store.add(batch)
    total.stored += part.stored
    total.duplicates += part.duplicates
    total.refused += part.refused
    total.positions.update(part.positions)


def _entries(handle: BinaryIO, path: str | Path, max_bytes: int) -> Iterator[FloorEntry]:
    number = 0
    try:
        while True:
            raw = handle.readline(max_bytes + 2)  # an entry, its newline, and one byte to see it is too long
            if not raw:
                return
            number += 1
            if len(raw) > max_bytes + 1 or (len(raw) == max_bytes + 1 and not raw.endswith(b"\n")):
                raise BackfillError(f"{path} line {number}: longer than the limit of {max_bytes} bytes; nothing was "
                                    f"stored")
            if not raw.strip():
                continue
            try:
                yield parse_entry(raw, max_bytes=max_bytes + 1)  # the newline does not count
            except NotAnEntry as exc:
                raise BackfillError(f"{path} line {number}: {exc.detail}; nothing was stored") from None
    except OSError as exc:
        raise BackfillError(f"{path}: cannot read it: {exc.strerror or exc}") from None
