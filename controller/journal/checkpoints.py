"""Checkpoints of the journal's WAL off the commit path.

SQLite copies the WAL back into the database file (a checkpoint) by itself when the WAL passes
1000 pages, inside the commit that passes it: that commit then also writes and syncs the database
file, milliseconds in the tail of a card's latency. A long-running writer (the table's owner)
turns that off (``Journal.checkpoint_in_background``) and a ``Checkpointer`` thread, with its own
connection, checkpoints instead, by how full the WAL is (the frames of its current generation,
read from the WAL file every ``interval`` seconds while it is being written: ``wal_frames``; a WAL
nobody writes is looked at less and less often, at least every ``IDLE_INTERVAL``, so that an idle
table's thread wakes about once a second instead of twenty times):

- past ``soft`` frames (SQLite's own 1000), a PASSIVE checkpoint once the writer has been quiet
  for ``quiet`` seconds (between rounds, while people act). It never waits for the writer nor the
  writer for it, and finished in a quiet moment it has copied every frame, so the writer's next
  transaction starts the WAL again from its beginning, rewriting the same blocks of the same file
  (an fsync with no change of file size to flush as well). That restart costs the commit that
  makes it one more fsync: once per ``soft`` frames, not once per card as checkpointing at every
  pause would.
- past ``HARD_FRAMES`` (a table dealing without a pause, ``--speed max``: no quiet moment comes,
  and a PASSIVE checkpoint never catches up with a writer that commits while it copies, so the
  WAL would grow for ever, each commit appending to a longer file: 270 us a card's commit here
  against 150 us rewriting a WAL that starts again), SQLite's own checkpoint inside the commit
  that passes them (``wal_autocheckpoint``, set by ``Journal.checkpoint_in_background``): one
  slow commit in several thousand frames.

``preallocate_wal`` (also asked for by ``Journal.checkpoint_in_background``) fills the WAL with
zeros up to ``SOFT_FRAMES`` frames before the first commit: a commit that writes past the end of
the file makes its ``fdatasync`` flush the file's new size too (on this disk about 180 us for a
card's four frames against 110 us for the same frames written over blocks already there), and
a table's WAL grows to about ``SOFT_FRAMES`` frames after every start before its first quiet
checkpoint lets it start again. SQLite reads a WAL only up to its last frame whose salts and
checksum match the header, so zeros beyond it are read as the end of the log (as the frames of
an earlier generation are, after a restart).

``journal_size_limit`` trims a WAL that grew past ``WAL_SIZE_LIMIT`` when it restarts. Where the
WAL cannot be read, the thread checkpoints by time: PASSIVE when the writer is quiet, at the
latest every ``longest`` seconds. (The count was read from the wal-index header in the ``-shm``
file before; a descriptor of that file, closed in the writer's process, released SQLite's lock on
it: ``controller.sqlite_files``. SQLite takes no locks on the WAL file.)

Durability does not change: every commit is still synced to the WAL before it returns
(synchronous=FULL); a checkpoint only moves committed pages into the database file, and a crash
in the middle of one is recovered by SQLite from the WAL.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
import struct
import threading
import time
from pathlib import Path

import structlog

from controller.journal.connection import DEFAULT_BUSY_TIMEOUT, JournalConnection, sqlite_uri

__all__ = ["HARD_FRAMES", "SQLITE_AUTOCHECKPOINT", "Checkpointer", "WAL_SIZE_LIMIT", "preallocate_wal", "wal_frames"]

log = structlog.get_logger()

CHECK_INTERVAL = 0.05   # seconds between looks at the WAL while it is being written
IDLE_INTERVAL = 1.0     # at most this long between looks at a WAL nobody writes (an idle table)
QUIET = 0.05            # seconds without a commit before a PASSIVE checkpoint may run
LONGEST = 2.0           # seconds a written WAL waits for a checkpoint at most (WAL unreadable)
SOFT_FRAMES = 1000      # frames (about 4 MiB) before a checkpoint in a quiet moment
HARD_FRAMES = 4000      # frames (about 16 MiB) before the writer's own commit checkpoints (wal_autocheckpoint)
WAL_SIZE_LIMIT = 16 << 20  # journal_size_limit: a WAL restart leaves at most this much
WAL_HEADER = 32         # bytes before the WAL's first frame
FRAME_HEADER = 24       # bytes before each frame's page
_ZEROS = bytes(1 << 20)  # written a MiB at a time
_WAL_HEAD = struct.Struct(">I4xI4x8s")  # magic, page size, salts (sqlite.org/fileformat2.html, 4.1)
_WAL_MAGICS = (0x377F0682, 0x377F0683)
_FRAME_SALTS = 8  # where a frame header's salts are
SQLITE_AUTOCHECKPOINT = 1000  # SQLite's default wal_autocheckpoint (pages), restored if the thread fails


class Checkpointer:
    """A daemon thread checkpointing the WAL of the journal at ``path`` (see the module
    docstring). ``start()`` once, ``stop()`` (idempotent) before the writer closes."""

    def __init__(self, path: Path, *, interval: float = CHECK_INTERVAL, quiet: float = QUIET,
                 longest: float = LONGEST, soft: int = SOFT_FRAMES,
                 idle_interval: float = IDLE_INTERVAL) -> None:
        self.path = path
        self.wal = Path(str(path) + "-wal")
        self.soft = soft
        self.interval = interval
        self.idle_interval = max(idle_interval, interval)
        self.looks = 0  # looks at the WAL so far
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
        wal = None
        try:
            conn = sqlite3.connect(sqlite_uri(self.path, mode="rw"), uri=True, timeout=DEFAULT_BUSY_TIMEOUT,
                                   isolation_level=None, check_same_thread=False, factory=JournalConnection)
            done_at = self._written_at()  # what the last checkpoint covered (mtime of the WAL)
            done_when = time.monotonic_ns()
            seen, interval = done_at, self.interval
            seen_when = done_when  # when a look first saw the WAL as written last
            while not self._stop.wait(interval):
                self.looks += 1
                written = self._written_at()
                now = time.monotonic_ns()
                if written == seen:  # nothing written since the last look: look less often
                    interval = min(interval * 2, self.idle_interval)
                else:
                    seen, interval, seen_when = written, self.interval, now
                if written == done_at:
                    continue
                # Quiet by the WAL's own time of the last write, to the nanosecond; or, the wall
                # clock stepped back past it (NTP, by hand), by how long the looks have seen it
                # unchanged: a review of long shifts saw an idle table's checkpoint wait out a step.
                quiet = time.time_ns() - written >= self.quiet_ns or now - seen_when >= self.quiet_ns
                if wal is None:
                    with contextlib.suppress(OSError):
                        wal = os.open(self.wal, os.O_RDONLY | os.O_CLOEXEC)
                frames = wal_frames(wal)
                if frames is None:  # cannot tell how full: by time, as a fallback
                    due = quiet or now - done_when >= self.longest_ns
                else:
                    due = quiet and frames >= self.soft
                if not due:
                    continue
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self.checkpoints += 1
                done_at, done_when = written, now
        except sqlite3.Error as exc:
            self.failed = True
            log.warning("journal checkpoints stopped; the writer checkpoints in its commits again",
                        journal=str(self.path), error=str(exc))
        finally:
            if wal is not None:
                os.close(wal)
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()

    def _written_at(self) -> int:
        try:
            return os.stat(self.wal).st_mtime_ns
        except OSError:
            return 0


def preallocate_wal(wal: Path, page_size: int, frames: int = SOFT_FRAMES) -> int:
    """Extend the WAL file ``wal`` with zeros to hold ``frames`` frames of ``page_size`` pages,
    and sync it; returns the bytes added (0 when the file is missing or already that long).

    Only bytes past the file's end are written, so the caller must be the journal's one writer,
    outside a transaction (no commit can extend the file meanwhile; readers and checkpoints never
    write the WAL). An OSError (a full disk) is left to the caller: the zeros written so far are
    past every frame, harmless."""
    want = WAL_HEADER + frames * (FRAME_HEADER + page_size)
    try:
        fd = os.open(wal, os.O_WRONLY)
    except FileNotFoundError:
        return 0  # SQLite creates it with the first commit
    try:
        size = os.fstat(fd).st_size
        at = size
        while at < want:
            at += os.pwrite(fd, _ZEROS[:want - at], at)
        if at > size:
            os.fdatasync(fd)
        return at - size
    finally:
        os.close(fd)


def wal_frames(wal: int | None) -> int | None:
    """The frames of the current generation of the WAL open at descriptor ``wal``: those whose
    salts are the WAL header's (sqlite.org/fileformat2.html, 4.1), the log's first frames (after a
    restart the frames of the earlier generation, and the zeros of ``preallocate_wal``, follow
    them with other salts), found by bisection. About the wal-index's ``mxFrame``: the frames of a
    transaction still being written count too. 0 before the first frame; None when the WAL
    cannot be read or is not one. A value torn by a concurrent commit only moves a checkpoint by
    one look."""
    if wal is None:
        return None
    try:
        header = os.pread(wal, WAL_HEADER, 0)
        size = os.fstat(wal).st_size
        if len(header) < WAL_HEADER or not any(header):
            return 0  # no frame written since the file was made (or filled with zeros)
        magic, page_size, salts = _WAL_HEAD.unpack_from(header)
        if magic not in _WAL_MAGICS or not page_size:
            return None
        frame = FRAME_HEADER + (65536 if page_size == 1 else page_size)  # 1 stands for 65536
        low, high = 0, (size - WAL_HEADER) // frame  # frames low and before are the generation's; after high none is
        while low < high:
            middle = (low + high + 1) // 2
            if os.pread(wal, 8, WAL_HEADER + (middle - 1) * frame + _FRAME_SALTS) == salts:
                low = middle
            else:
                high = middle - 1
        return low
    except OSError:
        return None
