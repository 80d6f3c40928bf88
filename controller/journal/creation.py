"""Creating a journal file whole or not at all: ``create_journal_file``."""
from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from controller.journal.chain import Hasher
from controller.fsutil import fsync_dir
from controller.journal.connection import JournalConnection, translate
from controller.journal.entry import Clock
from controller.journal.errors import JournalError
from controller.journal.schema import create_schema, set_wal_mode

__all__ = ["create_journal_file"]


def create_journal_file(path: Path, table_id: str, hasher: Hasher, clock: Clock) -> None:
    """Create a new journal at ``path`` whole or not at all: built under a temporary name beside it
    (WAL mode, the schema, the meta), synced, then linked into place, so that a reader never finds
    ``path`` as an empty or half-made database (a feed or scoreboard started with the table would
    refuse it as not a journal). A file that appeared at ``path`` meanwhile is left as it is (the
    caller opens and checks it like any other). JournalError (one line) when the journal cannot be
    made. Nothing is left behind but ``path``."""
    try:
        _build_and_link(path, table_id, hasher, clock)
    except FileExistsError:
        return
    except sqlite3.Error as exc:
        raise translate(exc, path, "create the journal") from None
    except OSError as exc:
        raise JournalError(f"{path}: cannot create the journal: {exc.strerror or exc}") from None
    fsync_dir(path.parent.absolute())


def _build_and_link(path: Path, table_id: str, hasher: Hasher, clock: Clock) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.creating")
    leftovers = [tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")]
    for f in leftovers:
        f.unlink(missing_ok=True)
    try:
        conn = sqlite3.connect(str(tmp), isolation_level=None, factory=JournalConnection)
        try:
            set_wal_mode(conn, path)
            create_schema(conn, path, table_id, hasher, clock)
        finally:
            conn.close()  # checkpoints the WAL into the file and removes it
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, path)  # never over a file that appeared meanwhile
    finally:
        for f in leftovers:
            with contextlib.suppress(OSError):
                f.unlink()
