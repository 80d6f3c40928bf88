"""Checkpoints of the journal's WAL off the commit path.

SQLite copies the WAL back into the database file (a checkpoint) by itself when the WAL passes
1000 pages, inside the commit that passes it: that commit then also writes and syncs the database
file, milliseconds in the tail of a card's latency. A long-running writer (the table's owner)
turns that off (``Journal.checkpoint_in_background``) and a ``Checkpointer`` thread, with its own
connection, runs PASSIVE checkpoints instead (they never wait for the writer, nor it for them):
when the WAL was written since the last one and has then been quiet for ``quiet`` seconds (between
rounds, while people act), or at the latest every ``longest`` seconds (a table at full speed). Once a checkpoint has copied every frame, the
writer's next transaction starts the WAL again from its beginning, rewriting the same blocks of
the same file (its fsync has no change of file size to flush as well); ``journal_size_limit``
trims a WAL that grew while checkpoints could not finish (a reader holding an old snapshot).

Durability does not change: every commit is still synced to the WAL before it returns
(synchronous=FULL); a checkpoint only moves committed pages into the database file, and a crash
in the middle of one is recovered by SQLite from the WAL.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path

import structlog

from controller.journal.connection import DEFAULT_BUSY_TIMEOUT, JournalConnection, sqlite_uri

__all__ = ["SQLITE_AUTOCHECKPOINT", "Checkpointer", "WAL_SIZE_LIMIT"]

log = structlog.get_logger()

CHECK_INTERVAL = 0.05   # seconds between looks at the WAL's modification time
QUIET = 0.05            # seconds without a commit before a checkpoint may run
LONGEST = 2.0           # seconds a written WAL waits for a checkpoint at most
WAL_SIZE_LIMIT = 16 << 20  # journal_size_limit: a WAL reset leaves at most this much
SQLITE_AUTOCHECKPOINT = 1000  # SQLite's default wal_autocheckpoint (pages), restored if the thread fails


class Checkpointer:
    """A daemon thread checkpointing the WAL of the journal at ``path`` (see the module
    docstring). ``start()`` once, ``stop()`` (idempotent) before the writer closes."""

    def __init__(self, path: Path, *, interval: float = CHECK_INTERVAL, quiet: float = QUIET,
                 longest: float = LONGEST) -> None:
        self.path = path
        self.wal = Path(str(path) + "-wal")
        self.interval = interval
        self.quiet_ns = int(quiet * 1e9)
        self.longest_ns = int(longest * 1e9)
        self.checkpoints = 0
        self.failed = False  # the writer then checkpoints in its commits again (Journal._commit)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shoectl-checkpoint", daemon=True)

    def start(self) -> Checkpointer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        conn = None
        try:
            conn = sqlite3.connect(sqlite_uri(self.path, mode="rw"), uri=True, timeout=DEFAULT_BUSY_TIMEOUT,
                                   isolation_level=None, check_same_thread=False, factory=JournalConnection)
            done_at = self._written_at()  # what the last checkpoint covered (mtime of the WAL)
            done_when = time.time_ns()
            while not self._stop.wait(self.interval):
                written = self._written_at()
                if written == done_at:
                    continue
                now = time.time_ns()
                if now - written >= self.quiet_ns or now - done_when >= self.longest_ns:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                    done_at, done_when = written, now
        except sqlite3.Error as exc:
            self.failed = True
            log.warning("journal checkpoints stopped; the writer checkpoints in its commits again",
                        journal=str(self.path), error=str(exc))
        finally:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()

    def _written_at(self) -> int:
        try:
            return os.stat(self.wal).st_mtime_ns
        except OSError:
            return 0
