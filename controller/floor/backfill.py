"""``shoectl floor backfill``: a ``shoectl journal export`` file into the central store, through the
same path as a message from the broker (``FloorStore.add``: insert-if-absent, second bodies
refused, chains checked, gaps closed).

``open_export(path)`` opens the file and refuses at once what cannot be an export (missing, not a
regular file, a journal's SQLite database given by mistake, empty). ``backfill(store, handle,
path)`` then streams it: each line is read with a bound (a line longer than ``max_bytes`` is
refused without being read whole; its end, LF or CRLF, does not count and is not stored: a file
that went through a Windows tool holds the same entries), checked (``parse_entry``) and stored in
batches of ``BATCH``, all in ONE transaction. A line that is not a journal entry refuses the file
(``BackfillError`` naming the line): the transaction is rolled back and nothing is stored. Memory
holds one batch, whatever the size of the file. The result (``Backfilled``) counts what the chain check set aside
apart from what stays stored: an entry of the file moved out as not fitting the chain is not
counted as stored.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from controller.floor.chain import SetAside
from controller.floor.message import MAX_MESSAGE_BYTES, FloorEntry, NotAnEntry, parse_entry
from controller.floor.store import FloorStore
from controller.fsutil import SQLITE_HEADER
from shoectl_config.files import NotARegularFile, require_regular_file

BATCH = 2000


class BackfillError(ValueError):
    """The export file cannot be used (one line: the file, the line, why)."""


@dataclass
class Backfilled:
    """What became of a file's entries. ``stored``: new entries that stay stored (those the chain
    check set aside again are in ``set_aside_new`` instead); ``set_aside_before``: entries stored
    before that the check reached and set aside; ``examples``: the first few set aside."""
    entries: int = 0
    stored: int = 0
    duplicates: int = 0
    refused: int = 0  # second bodies under stored keys
    new_journal: int = 0  # entries of a new journal of a known table (``controller.floor.store``)
    set_aside_new: int = 0
    set_aside_before: int = 0
    examples: list[SetAside] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)  # table -> last checked seq


EXAMPLES = 5


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
        head = handle.read(len(SQLITE_HEADER))
        handle.seek(0)
    except OSError as exc:
        handle.close()
        raise BackfillError(f"{p}: cannot read it: {exc.strerror or exc}") from None
    if head == SQLITE_HEADER:
        handle.close()
        raise BackfillError(f"{p}: not a journal export (this looks like a journal database: use shoectl journal "
                            f"export FILE)")
    if not head:
        handle.close()
        raise BackfillError(f"{p}: no journal entries in the file (a `shoectl journal export` file is expected)")
    return handle


def backfill(store: FloorStore, handle: BinaryIO, path: str | Path,
             max_bytes: int = MAX_MESSAGE_BYTES) -> Backfilled:
    """Store every entry of the export ``handle`` (the file ``path``) in one transaction; what
    became of them. BackfillError: nothing stored."""
    total = Backfilled()
    with store.conn.transaction():
        batch: list[FloorEntry] = []
        for item in _entries(handle, path, max_bytes):
            batch.append(item)
            total.entries += 1
            if len(batch) == BATCH:
                _add(store, batch, total)
                batch = []
        if batch:
            _add(store, batch, total)
        if total.entries == 0:
            raise BackfillError(f"{path}: no journal entries in the file (a `shoectl journal export` file is expected)")
    return total


def _add(store: FloorStore, batch: list[FloorEntry], total: Backfilled) -> None:
    part = store.add(batch)
    new = sum(1 for moved in part.set_aside if moved.new)
    total.stored += part.stored - new
    total.set_aside_new += new
    total.set_aside_before += len(part.set_aside) - new
    total.duplicates += part.duplicates
    total.refused += part.second_bodies
    total.new_journal += part.new_journal
    total.positions.update(part.positions)
    total.examples.extend(part.set_aside[:EXAMPLES - len(total.examples)])


def _entries(handle: BinaryIO, path: str | Path, max_bytes: int) -> Iterator[FloorEntry]:
    number = 0
    try:
        while True:
            raw = handle.readline(max_bytes + 3)  # an entry, its CR LF, and one byte to see it is too long
            if not raw:
                return
            number += 1
            body = raw[:-1] if raw.endswith(b"\n") else raw
            body = body[:-1] if body.endswith(b"\r") else body  # a line's end, LF or CRLF, is no part of it
            if len(body) > max_bytes:
                raise BackfillError(f"{path} line {number}: longer than the limit of {max_bytes} bytes; nothing was "
                                    f"stored")
            if not body.strip():
                continue
            try:
                yield parse_entry(body, max_bytes=max_bytes)
            except NotAnEntry as exc:
                raise BackfillError(f"{path} line {number}: {exc.detail}; nothing was stored") from None
    except OSError as exc:
        raise BackfillError(f"{path}: cannot read it: {exc.strerror or exc}") from None
