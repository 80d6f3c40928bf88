"""The feed's position: the last journal entry the broker acknowledged, kept in a file of its own
(the journal is append-only: a feed never writes into it).

``FeedCursor(path, table_id, journal_created)``: ``load()`` returns the ``seq`` stored (0 when
there is no file yet) and raises ``CursorError`` (one line, exit 2) for a file that is not a
cursor, or is the cursor of another table's or another journal's feed (a new journal at the same
path starts from its first entry only once the old cursor is moved away). ``save(seq)`` replaces
the file atomically (``controller.fsutil.atomic_writer``: a temporary file, fsynced, renamed), so
after a crash it holds either the old position or the new one, never a torn one. The file is one
line of JSON: ``{"format": "shoectl-feed-cursor/1", "table_id": ..., "journal_created": ...,
"seq": N}``.

``AckWindow(start)`` follows the entries published and not yet acknowledged: ``published(mid,
seq)`` in ``seq`` order, ``acknowledged(mid)`` in any order (with several messages in flight,
PUBACKs may come out of order); ``acked_through`` is the highest ``seq`` up to which every entry
was acknowledged, the only position a cursor may hold (a gap is never stepped over).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from controller.errors import UsageError
from controller.fsutil import atomic_writer, exclusive_lock, side_file_problem
from shoectl_config.files import NotARegularFile, require_regular_file

FORMAT = "shoectl-feed-cursor/1"
_MAX_BYTES = 4096


class CursorError(UsageError):
    """A cursor file that cannot be used; one line."""


CURSOR_SUFFIX = ".feed-cursor"


def default_cursor_path(journal: str | os.PathLike[str]) -> Path:
    """``<journal>.feed-cursor``, beside the journal."""
    return Path(f"{journal}{CURSOR_SUFFIX}")


class FeedCursor:
    """See the module docstring."""

    def __init__(self, path: str | os.PathLike[str], table_id: str, journal_created: str) -> None:
        self.path = Path(path)
        self.table_id = table_id
        self.journal_created = journal_created
        self._lock_fd: int | None = None

    @property
    def lock_path(self) -> Path:
        """``<cursor>.lock``: held by the feed that moves this cursor."""
        return Path(f"{self.path}.lock")

    def claim(self) -> None:
        """Hold ``lock_path`` until ``release``; CursorError when another feed holds it. Two feeds
        of one journal would race on the cursor and, under the one MQTT client id a table's feed
        has, take the broker's session from each other without end."""
        try:
            fd = exclusive_lock(self.lock_path)
        except OSError as exc:
            raise CursorError(f"{self.lock_path}: cannot create the feed's lock: {exc.strerror or exc}") from None
        if fd is None:
            raise CursorError(f"{self.path}: another feed of this journal is running (it holds "
                              f"{self.lock_path.name}); one feed per journal: stop that one first")
        self._lock_fd = fd

    def release(self) -> None:
        """Let another feed claim this cursor (nothing if not claimed)."""
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)

    def require_unclaimed(self) -> None:
        """CursorError when another feed holds the cursor now (a check before anything is created:
        no lock file is made)."""
        if self.lock_path.exists():
            self.claim()
            self.release()

    def load(self) -> int:
        beside = side_file_problem(self.path, own=CURSOR_SUFFIX)  # it is written over, later
        if beside is not None:
            raise CursorError(f"{self.path}: {beside}; give the feed its own cursor file")
        try:
            require_regular_file(self.path)  # a FIFO would be waited on for a writer, without end
            with open(self.path, "rb") as fh:
                data = fh.read(_MAX_BYTES + 1)
        except FileNotFoundError:
            return 0
        except NotARegularFile as exc:
            raise CursorError(f"{exc} (a feed cursor is a file the feed writes)") from None
        except OSError as exc:
            raise CursorError(f"{self.path}: cannot read the feed's cursor: {exc.strerror or exc}") from None
        try:
            doc = json.loads(data) if len(data) <= _MAX_BYTES else None
        except (ValueError, RecursionError):  # not JSON (nor UTF-8: a ValueError), or nested too deep
            doc = None
        seq = doc.get("seq") if isinstance(doc, dict) else None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or type(seq) is not int or seq < 0:
            raise CursorError(f"{self.path}: not a feed cursor (move it away to publish the journal from its start)")
        if doc.get("table_id") != self.table_id or doc.get("journal_created") != self.journal_created:
            raise CursorError(f"{self.path}: the cursor of another journal (table {doc.get('table_id')}, created "
                              f"{doc.get('journal_created')}); move it away to publish this one from its start")
        return seq

    def save(self, seq: int) -> None:
        doc = {"format": FORMAT, "table_id": self.table_id, "journal_created": self.journal_created, "seq": seq}
        with atomic_writer(self.path, side_file=CURSOR_SUFFIX) as fh:
            fh.write(json.dumps(doc, separators=(",", ":")) + "\n")


class AckWindow:
    """See the module docstring. One thread."""

    def __init__(self, start: int) -> None:
        self.acked_through = start
        self.last_published = start
        self._seq_of: dict[int, int] = {}
        self._acked: set[int] = set()

    @property
    def outstanding(self) -> int:
        """Entries published and not yet acknowledged."""
        return len(self._seq_of)

    def published(self, mid: int, seq: int) -> None:
        if seq != self.last_published + 1:
            raise ValueError(f"entry {seq} published after {self.last_published}")
        self._seq_of[mid] = seq
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
            moved = True
        return moved
