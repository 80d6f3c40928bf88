"""The files of a journal: the SQLite file and those kept beside it (SQLite's ``-wal`` and
``-shm``, the writer's ``.lock``, the anchors).

``journal_files(journal)`` lists them; ``is_journal_file(path, journal)`` says whether writing to
``path`` would write into one of them, however ``path`` is spelled (resolved, or the same file
under another name). Commands that write a file of the user's choosing refuse such a path.
``sqlite_files_undone(journal)``: a check that reads the journal and refuses it leaves no ``-wal``
or ``-shm`` of its own beside it.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from controller.fsutil import JOURNAL_SIDE_SUFFIXES
from controller.locks import lock_state
from controller.journal.walcheck import wal_path


def lock_path(journal: str | os.PathLike[str]) -> Path:
    """``<journal>.lock`` beside the journal's real file (symbolic links followed): the writer's
    lock file, one for every path to the journal. Named after the path as given, a journal started
    as ``/srv/t.db`` (a link) and as ``/data/t.db`` took two locks, and two writers ran on it (a
    review of the files' durability). A hard link is another name no lock can see: SQLite would
    then keep a -wal for each name (docs/journal.md)."""
    return Path(os.path.realpath(journal) + ".lock")


def journal_files(journal: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The journal and the files beside it (``fsutil.JOURNAL_SIDE_SUFFIXES``: among them its
    ``lock_path`` and ``anchors_path``), whether they exist or not."""
    base = os.fspath(journal)
    return (Path(base), *(Path(base + suffix) for suffix in JOURNAL_SIDE_SUFFIXES))


def is_journal_file(path: str | os.PathLike[str], journal: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is the journal or one of the files beside it."""
    target = _real(path)  # once, for every file beside the journal
    return any(_same(target, kept) for kept in journal_files(_real(journal)))


def same_file(path: str | os.PathLike[str], other: str | os.PathLike[str]) -> bool:
    """Whether writing to ``path`` would write into ``other``: the same path resolved, or the same
    file under another name (a hard link)."""
    return _same(_real(path), _real(other))


def _real(path: str | os.PathLike[str]) -> Path:
    # realpath, not Path.resolve: a symbolic link that loops is a path like another here (resolve
    # raised, a traceback where a review expected one line)
    return Path(os.path.realpath(path))


def _same(target: Path, kept: Path) -> bool:
    return target == kept or (target.exists() and kept.exists() and os.path.samefile(target, kept))


@contextlib.contextmanager
def sqlite_files_undone(journal: str | os.PathLike[str]) -> Iterator[None]:
    """Within the block, the journal may be read (a read-only connection makes a ``-wal`` and a
    ``-shm`` beside a WAL database, and cannot remove them). If the block raises, those it made
    are removed: only a ``-wal`` that was not there before and is still empty (one that was there
    may hold committed entries), and with it a ``-shm`` that was not there before (an index of
    nothing), and only when no connection, of any process, has the journal open (SQLite's own
    last close decides: ``connection.close_as_the_last``). For a command refused after reading: it leaves nothing behind."""
    from controller.journal.connection import close_as_the_last  # noqa: PLC0415 - it imports this module's package

    wal, shm = wal_path(journal), Path(os.fspath(journal) + "-shm")
    made = [side for side in (wal, shm) if not os.path.lexists(side)]
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            # Not while any connection has the journal open: a follower or a writer that opened it
            # meanwhile (a long verify, or Ctrl-C in it) uses these files: a follower never saw
            # another entry, a writer's commits went to a deleted WAL (a review of the files).
            # SQLite's last close removes them under its own lock, so no one opens the journal
            # between the look and the removal.
            if wal in made and wal.stat().st_size == 0:
                close_as_the_last(Path(journal))
        raise


def file_id(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The device and inode of the file at ``path`` (which file it is, whatever its name); None
    when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class InPlace:
    """Whether the journal at ``path`` and its ``-wal`` (the entries since the last checkpoint) are
    still the files a writer opened (deleted, or moved, while the table ran: a table that dealt on
    would deal into nothing; reviews saw 1,494 entries acknowledged into a deleted file, then exit
    0, and rounds lost to a crash after the -wal was deleted). ``problem(first_seq)`` after each
    commit: None, or why the table stops (two ``stat``s); the -wal is known from the first commit."""

    def __init__(self, path: Path) -> None:
        self.path, self._wal_path = path, f"{path}-wal"
        self._file = file_id(path)
        self._wal: tuple[int, int] | None = None

    def problem(self, first_seq: int) -> str | None:
        wal, journal = file_id(self._wal_path), file_id(self.path)
        if self._wal is None:
            self._wal = wal
        if journal == self._file and wal == self._wal:
            return None
        if journal == self._file:  # SQLite still holds the -wal open: its close checkpoints it
            return (f"{self.path}: the journal's -wal file was deleted or moved while the table ran: the table stops "
                    f"(entry {first_seq} and those since the last checkpoint were in it; the close copies them into "
                    "the journal's file if it can: run `shoectl journal verify`)")
        return (f"{self.path}: the journal's file was deleted or moved while the table ran: the table stops "
                f"(entry {first_seq} on went into a file no longer there, and no device was told it was stored)")


def writer_running(journal: str | os.PathLike[str]) -> bool | None:
    """Whether a writer (a running table) holds ``journal``'s lock now: True, False, or None when
    this process cannot tell (it may not open the lock file); looked at, never taken."""
    return lock_state(lock_path(journal))
