"""``verify``'s second process: the later half of a journal's chain checked beside the first.

Every entry stores the hash it follows (``prev_hash``), so the chain from entry ``k + 1`` on can be
checked without the entries before it, starting at the hash entry ``k`` has in the file. ``verify``
(``controller.journal.verification``) splits a long journal in two: a forked process checks the entries
after ``k`` with a ``ChainCheck`` of its own, seeded with ``(k, hash of k)``, while the first
process checks entries 1 to ``k``. Entry ``k`` itself is checked by the first process, which
therefore proves the very hash the second one started from: the halves join into one chain. The
verdict is the one a single pass gives (the first failure, the entries good before it, the last
good entry); ``tests/journal/test_split_check.py`` holds that on tampered journals.

It is used only where it pays and is safe (``split_point``): a journal of ``MIN_ROWS`` entries or
more, at least two CPUs this process may run on, and one thread in this process (a fork copies
only the calling thread: a lock held by another thread would stay held in the child for ever). A
second process that fails (killed, an SQLite error, a result that cannot be read) costs time,
never the verdict: the first process then checks the later half itself, as a single pass would.

The child reads the journal through a read-only connection of its own, in its own read
transaction, up to the last entry the first process's snapshot holds; it never writes, and it
leaves by ``os._exit`` (none of the parent's clean-up runs twice).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import threading
from dataclasses import astuple, dataclass
from pathlib import Path

from controller.journal.chain import Hasher
from controller.journal.chaincheck import BATCH_ROWS, AnchorMap, ChainCheck
from controller.journal.connection import open_readonly_connection

__all__ = ["FIRST_SHARE_WITH_INTEGRITY", "MIN_ROWS", "LaterHalf", "SplitResult", "split_point"]

MIN_ROWS = 10_000  # below this the fork (about 2 ms) buys little: ~30 ms of checking, halved
# The first process's part of the chain when it also runs SQLite's quick_check while the second
# one checks: the quick_check costs about a tenth of checking the chain in one pass (8-14 ms
# against 90-125 ms for a real journal of 18,000 entries, docs/performance.md).
FIRST_SHARE_WITH_INTEGRITY = 0.45


@dataclass(frozen=True)
class SplitResult:
    """The later half's verdict: ``ChainCheck``'s fields after its last row, and ``rows`` read."""

    good: int
    last_seq: int
    last_hash: str
    reason: str | None
    first_bad_seq: int | None
    rows: int
    anchor_said: str | None  # an anchor differed before any held in this half: ``ChainCheck.anchor_failure``


def split_point(conn: sqlite3.Connection, processes: int | None,
                first_share: float = 0.5) -> tuple[int, str, int] | None:
    """``(k, hash of entry k, last seq)`` to split the journal open on ``conn`` (in its read
    transaction) at, or None to check it in one pass. ``processes``: None decides by the rules in
    the module docstring; 1 never splits; 2 splits any journal of two entries or more.
    ``first_share``: about that fraction of the entries is the first process's (0 < share < 1)."""
    if processes == 1:
        return None
    last = conn.execute("SELECT max(seq) FROM entries").fetchone()[0]
    if type(last) is not int or last < 2:
        return None
    if processes is None and (last < MIN_ROWS or len(os.sched_getaffinity(0)) < 2 or threading.active_count() != 1):
        return None
    row = conn.execute("SELECT seq, hash FROM entries WHERE seq <= ? ORDER BY seq DESC LIMIT 1",
                       (max(1, int(last * first_share)),)).fetchone()
    if row is None or type(row[0]) is not int or type(row[1]) is not str:
        return None  # a journal too damaged to split is checked in one pass, which says how
    return row[0], row[1], last


_PR_SET_PDEATHSIG = 1  # prctl(2)


def _end_with(parent: int) -> None:
    """In the forked child: a stop signal ends it (not the parent's handlers, which hold SIGTERM
    until start-up ends), and so does the parent's end: a child left checking a killed parent's
    journal held it open, its WAL checkpoints waiting (a review of signals)."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # noqa: PLC0415 - in the child only

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent ended before the request
        os._exit(1)


class LaterHalf:
    """The entries after ``k`` up to ``last`` (read with ``select``, the journal layout's SELECT of
    every column) checked in a forked process (``start``); ``result()``
    waits for its verdict (None when it failed); ``cancel()`` stops it. Use as a context manager:
    leaving it reaps the child whatever happened."""

    def __init__(self, path: Path, select: str, table_id: str, hasher: Hasher | None, anchors: AnchorMap,
                 k: int, k_hash: str, last: int) -> None:
        self.path, self.select, self.table_id, self.hasher, self.anchors = path, select, table_id, hasher, anchors
        self.k, self.k_hash, self.last = k, k_hash, last
        self._pid: int | None = None
        self._fd: int | None = None

    def __enter__(self) -> LaterHalf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def start(self) -> LaterHalf:
        read_fd, write_fd = os.pipe()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return self  # no second process: result() is None, the first checks it all
        if pid == 0:  # the child
            code = 1
            try:
                os.close(read_fd)
                _end_with(parent)
                data = json.dumps(list(astuple(self._check()))).encode()
                view = memoryview(data)
                while view:
                    view = view[os.write(write_fd, view):]
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        self._pid, self._fd = pid, read_fd
        return self

    def _check(self) -> SplitResult:
        """In the child: the chain from ``k + 1`` to ``last``, in one read transaction."""
        check = ChainCheck(self.table_id, self.hasher, self.anchors)
        check.last_seq, check.last_hash = self.k, self.k_hash
        check.anchored = None  # entry k is proven by the first half's chain, by an anchor only if that half says
        conn = open_readonly_connection(self.path)
        rows_read = 0
        try:
            conn.execute("BEGIN")
            cur = conn.execute(f"{self.select} WHERE seq > ? AND seq <= ? ORDER BY seq", (self.k, self.last))
            while check.ok:
                rows = cur.fetchmany(BATCH_ROWS)
                if not rows:
                    break
                rows_read += len(rows)
                check.feed_rows(rows)
        finally:
            conn.close()
        return SplitResult(check.good, check.last_seq, check.last_hash, check.reason, check.first_bad_seq, rows_read,
                           check.anchor_said)

    def result(self) -> SplitResult | None:
        """The child's verdict, once it has finished; None when it failed or never started."""
        if self._fd is None:
            return None
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            self._fd = None
        status = self._reap()
        if status != 0:
            return None
        try:
            return SplitResult(*json.loads(b"".join(chunks)))
        except (ValueError, TypeError):
            return None

    def cancel(self) -> None:
        """Stop the child (when it still runs) and reap it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reap()

    def _reap(self) -> int | None:
        pid, self._pid = self._pid, None
        if pid is None:
            return None
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)
