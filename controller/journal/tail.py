"""Following a journal that another process is writing: ``JournalTail``.

``JournalTail.open(path, hmac_key=None)`` opens the journal read-only for as long as it is
followed; ``poll(limit)`` returns the entries appended after the last one it returned (at most
``limit``, in ``seq`` order, ``[]`` when there is nothing new), each checked as it is read with
the same checks as ``verify`` (``ChainCheck``: ``seq`` without gaps, ``prev_hash`` links, the
hash, recomputed with the HMAC key when given, the columns). A break raises
``JournalIntegrityError`` (one line naming the entry) and every later ``poll`` raises it again:
a follower never skips over a bad entry. ``seek(after_seq)`` makes the next ``poll`` start after
entry ``after_seq``; the entries up to it are read and checked first, so the chain a follower
continues is one it has checked from the genesis. ``close()`` (or ``with``) ends it.

Why not ``JournalReader``: a reader of a copy may open the file ``immutable`` (SQLite then
assumes it never changes); a follower must see every commit, so it always opens the file
``mode=ro`` in WAL mode (``open_readonly_connection(live=True)``), which reads the WAL index,
the ``-shm`` file beside the journal.

**A follower running as another user** (the feed under its own account, a scoreboard) needs
read access to the journal and, while the table runs, to its ``-wal`` and ``-shm`` files (SQLite
3.22 and later read a WAL whose index they may not write). When the table is stopped SQLite has
removed those two files, and a follower can open the journal only if it may create them: write
access to the directory. The simple arrangement is a group shared by the table's account and the
reader's: the directory group-owned and ``chmod 2770`` (setgid, so new files take its group),
and the table run with ``umask 007`` (so ``-wal`` and ``-shm`` are group read-write). Without
it ``open`` says, in one line, what is missing. A follower never writes an entry: the
connection is ``mode=ro`` and ``query_only``.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from controller.journal.chain import Hasher, check_key
from controller.journal.chaincheck import ChainCheck
from controller.journal.connection import DEFAULT_BUSY_TIMEOUT, translate
from controller.journal.entry import Entry, row_to_entry
from controller.journal.errors import JournalError, JournalIntegrityError
from controller.journal.reader import hash_at, open_with_meta
from controller.journal.schema import Layout, layout_of

_SEEK_PAGE = 2000


class JournalTail:
    """See the module docstring. One thread at a time."""

    def __init__(self, conn: sqlite3.Connection, path: Path, meta: dict[str, str], hasher: Hasher | None) -> None:
        self._conn = conn
        self.path = path
        self.meta = meta
        self.layout: Layout = layout_of(meta)
        self._check = ChainCheck(meta["table_id"], hasher)
        self.links_only = hasher is None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, hmac_key: bytes | None = None,
             busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> JournalTail:
        """Follow the journal at ``path`` from its first entry. JournalError (one line) when it is
        missing, not a journal, cannot be followed (see the module docstring), or the key does not
        fit it; an HMAC journal followed without its key is checked links only (``links_only``)."""
        p = Path(path)
        conn, meta = open_with_meta(p, busy_timeout=busy_timeout, live=True)
        try:
            hasher = Hasher(hmac_key)
            failure, needs_key = check_key(meta, hasher)
            if failure is not None and not needs_key:
                raise JournalError(f"{p}: {failure}")
        except BaseException:
            conn.close()
            raise
        return cls(conn, p, meta, None if needs_key else hasher)

    @property
    def table_id(self) -> str:
        return self.meta["table_id"]

    @property
    def last_seq(self) -> int:
        """The seq of the last entry returned (or passed over by ``seek``); 0 before any."""
        return self._check.last_seq

    @property
    def last_hash(self) -> str:
        """The hash of that entry (the genesis hash before any)."""
        return self._check.last_hash

    def end_seq(self) -> int:
        """The seq of the last entry the journal holds now, read or not (0 for none)."""
        try:
            (end,) = self._conn.execute("SELECT coalesce(max(seq), 0) FROM entries").fetchone()
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "read the journal") from None
        return int(end)

    def hash_at(self, seq: int) -> str | None:
        """The hash of the journal's entry ``seq`` now, read or not (None when it has none)."""
        return hash_at(self._conn, self.path, seq)

    def poll(self, limit: int = 1000) -> list[Entry]:
        """Up to ``limit`` entries after the last one returned, checked (see the module
        docstring); ``[]`` when none was appended since. JournalIntegrityError on a break."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return [self._entry(row) for row in self._checked_rows(limit)]

    def seek(self, after_seq: int) -> None:
        """Continue after entry ``after_seq`` (0: from the start): the entries up to it are read
        and checked now, from the first. JournalError when the journal does not hold that entry
        yet; JournalIntegrityError when the chain breaks on the way."""
        if after_seq < 0:
            raise ValueError("after_seq must be 0 or more")
        if after_seq < self._check.last_seq:
            self._check = ChainCheck(self.table_id, self._check.hasher)
        while self._check.last_seq < after_seq:
            if not self._checked_rows(min(_SEEK_PAGE, after_seq - self._check.last_seq)):
                raise JournalError(f"{self.path}: the journal ends at entry {self._check.last_seq}; entry "
                                   f"{after_seq} is not in it (a cursor of another journal?)")

    def _checked_rows(self, limit: int) -> list[tuple[Any, ...]]:
        self._raise_if_broken()
        try:
            rows = self._conn.execute(f"{self.layout.select} WHERE seq > ? ORDER BY seq LIMIT ?",
                                      (self._check.last_seq, limit)).fetchall()
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "read the journal") from None
        check = self._check
        if check.feed_rows(rows):  # the same verdict as row by row, faster (the check of verify)
            return rows
        good = [row for row in rows if row[0] <= check.last_seq]  # those before the break; the next call raises
        if not good:
            self._raise_if_broken()
        return good

    def _raise_if_broken(self) -> None:
        check = self._check
        if not check.ok:
            raise JournalIntegrityError(f"{self.path}: FAILED at entry {check.first_bad_seq}: {check.reason} "
                                        f"({check.good} entries good before it)", seq=check.first_bad_seq,
                                        reason=check.reason)

    def _entry(self, row: tuple[Any, ...]) -> Entry:
        return row_to_entry(row, self.path, self.layout.entry_version(row[0]))

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> JournalTail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
