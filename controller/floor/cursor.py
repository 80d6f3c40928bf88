"""The feed's position: the last journal entry the broker acknowledged, kept in a file of its own
(the journal is append-only: a feed never writes into it).

``FeedCursor(path, table_id, journal_created, journal=None)``: ``position()`` returns the
``CursorPosition`` stored (``seq`` 0 when there is no file yet; ``hash`` the hash of entry ``seq``,
None in a cursor saved before the hash was kept) and ``load()`` its ``seq``; both raise
``CursorError`` (one line, exit 2) for a file that is not a cursor, or is the cursor of another
table's or another journal's feed (a new journal at the same path starts from its first entry only
once the old cursor is moved away). ``check_journal`` refuses a journal that does not hold the
entry the cursor names, as the cursor saw it (another copy of the journal: restored from an
earlier copy, then written on). ``save(seq, digest)`` replaces the file atomically
(``controller.fsutil.atomic_writer``: a temporary file, fsynced, renamed), so after a crash it holds
either the old position or the new one, never a torn one. The file is one line of JSON:
``{"format": "shoectl-feed-cursor/1", "table_id": ..., "journal_created": ..., "seq": N, "hash":
H}`` (``hash`` absent in an older cursor: the next save writes it).

``claim()`` holds the cursor's lock and, given the ``journal``, the journal's
(``journal_lock_path``): one feed per cursor, and one per journal whatever its cursor.

``AckWindow(start, start_hash)`` follows the entries published and not yet acknowledged:
``published(mid, seq, digest)`` in ``seq`` order, ``acknowledged(mid)`` in any order (with several
messages in flight, PUBACKs may come out of order); ``acked_through`` is the highest ``seq`` up to
which every entry was acknowledged, the only position a cursor may hold (a gap is never stepped
over), and ``acked_hash`` that entry's hash.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.errors import UsageError
from controller.fsutil import atomic_writer, side_file_problem
from controller.locks import exclusive_lock, lock_held
from shoectl_config.files import NotARegularFile, require_regular_file

FORMAT = "shoectl-feed-cursor/1"
_MAX_BYTES = 4096
_HASH = re.compile(r"[0-9a-f]{16,128}", re.ASCII)


class CursorError(UsageError):
    """A cursor file that cannot be used; one line."""


CURSOR_SUFFIX = ".feed-cursor"
JOURNAL_LOCK_SUFFIX = ".feed.lock"


def default_cursor_path(journal: str | os.PathLike[str]) -> Path:
    """``<journal>.feed-cursor``, beside the journal."""
    return Path(f"{journal}{CURSOR_SUFFIX}")


def journal_lock_path(journal: str | os.PathLike[str]) -> Path:
    """``<journal>.feed.lock`` beside the journal's own file (symbolic links followed, the path made
    absolute): held by the journal's feed whatever its cursor, so that every path to the journal
    names the same lock."""
    return Path(os.path.realpath(journal) + JOURNAL_LOCK_SUFFIX)


@dataclass(frozen=True)
class CursorPosition:
    """Entry ``seq`` and every one before it were acknowledged; ``hash`` is entry ``seq``'s (None
    for ``seq`` 0, and in a cursor saved before the hash was kept)."""

    seq: int
    hash: str | None = None


class FeedCursor:
    """See the module docstring."""

    def __init__(self, path: str | os.PathLike[str], table_id: str, journal_created: str, *,
                 journal: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path)
        self.table_id = table_id
        self.journal_created = journal_created
        self.journal = None if journal is None else Path(journal)
        self._lock_fds: list[int] = []

    @property
    def lock_path(self) -> Path:
        """``<cursor>.lock``: held by the feed that moves this cursor."""
        return Path(f"{self.path}.lock")

    def claim(self) -> None:
        """Hold ``lock_path`` and, given the ``journal``, ``journal_lock_path`` until ``release``;
        CursorError when another feed holds either. Two feeds of one journal, with one cursor or
        two, would race on the cursor or publish it twice and, under the one MQTT client id a
        table's feed has, take the broker's session from each other without end."""
        if not self.lock_path.parent.is_dir():  # said as the option's folder, before any lock file is made
            raise CursorError(f"{self.path}: no such folder {self.lock_path.parent}")
        try:
            # The journal's first: a feed that another claims the journal before it (two started at
            # once) is refused without making its own cursor's lock file (a review of races).
            if self.journal is not None:
                self._hold(journal_lock_path(self.journal), self._journal_busy(self.journal))
            self._hold(self.lock_path, self._cursor_busy())
        except BaseException:
            self.release()
            raise

    def _hold(self, lock: Path, busy: str) -> None:
        try:
            fd = exclusive_lock(lock)
        except OSError as exc:
            raise CursorError(f"{lock}: cannot create the feed's lock: {exc.strerror or exc}") from None
        if fd is None:
            raise CursorError(busy)
        self._lock_fds.append(fd)

    def _cursor_busy(self) -> str:
        # Said after the journal's lock was found free (require_unclaimed, claim): the feed holding
        # the cursor is another journal's, and stopping it, or moving its cursor away, mends nothing
        # here (a review: it was said as a feed of this journal, to be stopped).
        whose = "another journal's feed" if self.journal is not None else "another feed"
        return (f"{self.path}: {whose} is running with this cursor (it holds {self.lock_path.name}); a cursor "
                "serves one journal's feed: one of the two needs a cursor of its own (shoectl feed --cursor)")

    @staticmethod
    def _journal_busy(journal: Path) -> str:
        lock = journal_lock_path(journal)
        held = lock.name if lock.parent == Path(os.path.realpath(journal.parent)) else str(lock)
        return (f"{journal}: another feed of this journal is running (it holds {held}, whatever its "
                "cursor); one feed per journal: stop that one first")

    def release(self) -> None:
        """Let another feed claim this cursor and journal (nothing if not claimed)."""
        fds, self._lock_fds = self._lock_fds, []
        for fd in fds:
            os.close(fd)

    def require_unclaimed(self) -> None:
        """CursorError when another feed holds the cursor, or the ``journal``, now (a check before
        anything is created: no lock file is made)."""
        if self.journal is not None and lock_held(journal_lock_path(self.journal)):  # looked at, not taken
            raise CursorError(self._journal_busy(self.journal))  # whatever the cursor: this journal's feed
        if lock_held(self.lock_path):
            raise CursorError(self._cursor_busy())

    def load(self) -> int:
        """The ``seq`` of ``position()``."""
        return self.position().seq

    def position(self) -> CursorPosition:
        """The position stored (``seq`` 0 without a file); CursorError, see the module docstring."""
        beside = side_file_problem(self.path, own=CURSOR_SUFFIX)  # it is written over, later
        if beside is not None:
            raise CursorError(f"{self.path}: {beside}; give the feed its own cursor file")
        try:
            require_regular_file(self.path)  # a FIFO would be waited on for a writer, without end
            with open(self.path, "rb") as fh:
                data = fh.read(_MAX_BYTES + 1)
        except FileNotFoundError:
            return CursorPosition(0)
        except NotARegularFile as exc:
            raise CursorError(f"{exc} (a feed cursor is a file the feed writes)") from None
        except OSError as exc:
            raise CursorError(f"{self.path}: cannot read the feed's cursor: {exc.strerror or exc}") from None
        try:
            doc = json.loads(data) if len(data) <= _MAX_BYTES else None
        except (ValueError, RecursionError):  # not JSON (nor UTF-8: a ValueError), or nested too deep
            doc = None
        seq = doc.get("seq") if isinstance(doc, dict) else None
        digest = doc.get("hash") if isinstance(doc, dict) else None
        if (not isinstance(doc, dict) or doc.get("format") != FORMAT or type(seq) is not int or seq < 0
                or not (digest is None or (isinstance(digest, str) and _HASH.fullmatch(digest)))):
            raise CursorError(f"{self.path}: not a feed cursor (move it away to publish the journal from its start)")
        if doc.get("table_id") != self.table_id or doc.get("journal_created") != self.journal_created:
            raise CursorError(f"{self.path}: the cursor of another journal (table {doc.get('table_id')}, created "
                              f"{doc.get('journal_created')}); move it away to publish this one from its start")
        return CursorPosition(seq, digest if seq else None)

    def check_journal(self, end: int, hash_of: Callable[[int], str | None]) -> None:
        """CursorError unless the journal holds the entry of the cursor's ``position()`` as the
        cursor saw it (or the cursor is not this journal's: ``position`` says so): ``end`` is the
        journal's last seq, ``hash_of(seq)`` the hash of its entry ``seq`` (None when it has none),
        asked only when the cursor has a hash. A journal that ends before that entry would be waited on
        for entries it never had; one whose entry differs (restored from an earlier copy, then
        written on) would have its own entries up to there skipped: never published."""
        at = self.position()
        journal = f"the journal {self.journal}" if self.journal else "the journal"
        # The same journal (``load`` checked its table and creation) behind the floor's record of it:
        # published, it would be a second history of the entries the floor holds (a recovery drill:
        # a forgery alarm for each). Told as that, with the step that does not fork the floor.
        restore = ('start the table on a new journal under a new table id, and keep this one as the record up to '
                   'its end (docs/deployment.md, "Restoring a table from a copy")')
        if at.seq > end:
            raise CursorError(f"{self.path}: the cursor says the floor has this journal's entries up to "
                              f"{at.seq}, but the journal ends at entry {end}: an earlier copy of it (restored, "
                              f"or its -wal lost), and entries {end + 1}-{at.seq} are only on the floor; {restore}")
        if at.hash is not None and at.seq > 0 and hash_of(at.seq) != at.hash:
            raise CursorError(f"{self.path}: the cursor of another copy of {journal} (its entry "
                              f"{at.seq} is not the one the broker acknowledged: restored from an earlier copy, "
                              f"then written on?); {restore}")

    def save(self, seq: int, digest: str | None = None) -> None:
        """Store ``seq`` and ``digest``, the hash of entry ``seq`` (left out when None)."""
        doc: dict[str, object] = {"format": FORMAT, "table_id": self.table_id,
                                  "journal_created": self.journal_created, "seq": seq}
        if digest is not None:
            doc["hash"] = digest
        try:
            with atomic_writer(self.path, side_file=CURSOR_SUFFIX) as fh:
                fh.write(json.dumps(doc, separators=(",", ":")) + "\n")
        except OSError as exc:  # named: a bare "No space left on device" said no file (a review of disk faults)
            raise OSError(exc.errno, f"cannot save the feed's cursor: {exc.strerror or exc}", str(self.path)) from None


class AckWindow:
    """See the module docstring. One thread."""

    def __init__(self, start: int, start_hash: str | None = None) -> None:
        self.acked_through = start
        self.acked_hash = start_hash  # entry acked_through's, for the cursor (None: not known)
        self.last_published = start
        self._seq_of: dict[int, int] = {}
        self._hash_of: dict[int, str] = {}
        self._acked: set[int] = set()

    @property
    def outstanding(self) -> int:
        """Entries published and not yet acknowledged."""
        return len(self._seq_of)

    def published(self, mid: int, seq: int, digest: str | None = None) -> None:
        """Entry ``seq`` (its hash ``digest``) published as message ``mid``."""
        if seq != self.last_published + 1:
            raise ValueError(f"entry {seq} published after {self.last_published}")
        self._seq_of[mid] = seq
        if digest is not None:
            self._hash_of[seq] = digest
        self.last_published = seq

    def acknowledged(self, mid: int) -> bool:
        """Take the PUBACK of message ``mid``; True when ``acked_through`` moved."""
        seq = self._seq_of.pop(mid, None)
        if seq is None:
            return False  # not one of ours (a status or roads message)
        self._acked.add(seq)
        moved = False
        while self.acked_through + 1 in self._acked:
            self.acked_through += 1
            self._acked.discard(self.acked_through)
            self.acked_hash = self._hash_of.pop(self.acked_through, None)
            moved = True
        return moved
