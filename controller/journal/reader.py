"""Reading a journal: the queries shared by the writer and ``JournalReader`` (a read-only view)."""
from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from controller.journal.chain import GENESIS_HASH
from controller.journal.connection import DEFAULT_BUSY_TIMEOUT, open_readonly_connection, sqlite_uri, translate
from controller.journal.entry import Entry, row_to_entry
from controller.journal.errors import JournalError, NotAJournalError
from controller.journal.schema import Layout, inspect_meta, layout_of

_PAGE = 1000


def hash_at(conn: sqlite3.Connection, path: Path, seq: int) -> str | None:
    """The hash of entry ``seq`` of the journal at ``path`` open on ``conn`` (None when it has none),
    its payload not read: a reader's and a live tail's alike."""
    try:
        row = conn.execute("SELECT hash FROM entries WHERE seq = ?", (seq,)).fetchone()
    except sqlite3.Error as exc:
        raise translate(exc, path, "read the journal") from None
    return None if row is None else row[0]


class _ReadApi:
    """Queries shared by the writer (``Journal``) and ``JournalReader``."""

    _conn: sqlite3.Connection
    path: Path
    meta: dict[str, str]
    layout: Layout

    @property
    def table_id(self) -> str:
        return self.meta["table_id"]

    @property
    def hash_algorithm(self) -> str:
        return self.meta["hash_algorithm"]

    @property
    def key_id(self) -> str | None:
        return self.meta.get("key_id")

    @property
    def schema_version(self) -> int:
        return self.layout.version

    def _entry(self, row: tuple[Any, ...]) -> Entry:
        return row_to_entry(row, self.path, self.layout.entry_version(row[0]))

    def hash_at(self, seq: int) -> str | None:
        """The hash of the journal's entry ``seq`` (None when it has none), its payload not read."""
        return hash_at(self._conn, self.path, seq)

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, tuple(params)).fetchall()
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "read the journal") from None

    def entries(self, since_seq: int = 0, kinds: Iterable[str] | None = None,
                shoe: str | None = None) -> Iterator[Entry]:
        """Entries with ``seq > since_seq`` in seq order, optionally only those ``kinds`` and/or
        that ``shoe``. Read in pages, so entries appended while iterating are included; use
        ``snapshot()`` for a fixed view."""
        where = ["seq > ?"]
        base: list[Any] = []
        if kinds is not None:
            kinds = [kinds] if isinstance(kinds, str) else list(kinds)
            if not kinds:
                return
            where.append("kind IN (" + ",".join("?" * len(kinds)) + ")")
            base.extend(kinds)
        if shoe is not None:
            where.append("shoe_id = ?")
            base.append(shoe)
        sql = f"{self.layout.select} WHERE {' AND '.join(where)} ORDER BY seq LIMIT {_PAGE}"
        last = int(since_seq)
        while True:
            rows = self._query(sql, [last, *base])
            for row in rows:
                yield self._entry(row)
            if len(rows) < _PAGE:
                return
            last = rows[-1][0]

    def get(self, seq: int) -> Entry | None:
        rows = self._query(f"{self.layout.select} WHERE seq = ?", (seq,))
        return self._entry(rows[0]) if rows else None

    def last(self) -> Entry | None:
        rows = self._query(f"{self.layout.select} ORDER BY seq DESC LIMIT 1")
        return self._entry(rows[0]) if rows else None

    def last_of_kind(self, kind: str) -> Entry | None:
        """The last entry of ``kind``, or None. Read backwards from the end (the kind has no
        index): as cheap as the entries after it are few, e.g. the shoe in play's."""
        rows = self._query(f"{self.layout.select} WHERE kind = ? ORDER BY seq DESC LIMIT 1", (kind,))
        return self._entry(rows[0]) if rows else None

    @property
    def last_seq(self) -> int:
        """The seq of the last entry (= the number of entries), 0 if empty."""
        rows = self._query("SELECT max(seq) FROM entries")
        return rows[0][0] or 0

    def anchor(self) -> str:
        """``SEQ:HASH`` of the last entry (``0:000...`` when empty): print it somewhere outside
        the journal (e.g. at each shoe end) and check it later with ``verify --anchor``."""
        rows = self._query("SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1")
        seq, h = rows[0] if rows else (0, GENESIS_HASH)
        return f"{seq}:{h}"

    def _latest_epoch(self, device_serial: str) -> int | None:
        rows = self._query(
            f"SELECT device_epoch FROM entries WHERE {self.layout.serial_column} = ? AND device_counter IS NOT NULL "
            "ORDER BY seq DESC LIMIT 1", (device_serial,))
        return rows[0][0] if rows else None

    def last_device_counter(self, device_serial: str, *, contiguous: bool = True) -> tuple[int, int] | None:
        """``(epoch, counter)`` to seed the link layer's duplicate tracking for the device with
        this serial after a restart (``DeviceLink(last_delivered=(epoch, counter))``), or None
        if no event of that device is stored.

        ``epoch`` is that of the device's most recent stored event (a device picks a new epoch,
        not necessarily a larger one, whenever its counter restarts). ``counter`` is, by default,
        the highest counter C of that epoch such that every counter from the epoch's lowest stored
        one up to C is stored: if a gap is open (events stored after a missing one), it stops
        before the gap, so the still-unacknowledged missing events are not taken for duplicates
        when the device resends them (and the journal drops the resent ones it already has).
        A gap the table recorded as given up (``events_given_up``, protocol E7) is no gap: those
        events will never come, and the device was told so. ``contiguous=False`` gives the highest
        stored counter; ``device_counter_gaps`` lists the gaps.
        """
        serial = self.layout.serial_column
        epoch = self._latest_epoch(device_serial)
        if epoch is None:
            return None
        lo, hi, n = self._query(
            "SELECT min(device_counter), max(device_counter), count(*) FROM entries "
            f"WHERE {serial} = ? AND device_epoch = ? AND device_counter IS NOT NULL", (device_serial, epoch))[0]
        if not contiguous or hi - lo + 1 == n:
            return epoch, hi
        given_up = self._given_up(device_serial, epoch)
        for first, last in self.device_counter_gaps(device_serial, epoch):
            if not any(a <= first and last <= b for a, b in given_up):
                return epoch, first - 1
        return epoch, hi

    def _given_up(self, device_serial: str, epoch: int) -> list[tuple[int, int]]:
        """The counter ranges of the device's ``epoch`` the table gave up (``events_given_up``)."""
        return [(e.payload["first"], e.payload["last"]) for e in self.entries(kinds="events_given_up")
                if e.payload.get("device_serial") == device_serial and e.payload.get("epoch") == epoch]

    def device_counter_gaps(self, device_serial: str, epoch: int | None = None) -> list[tuple[int, int]]:
        """Inclusive ranges ``(first, last)`` of counters missing between the lowest and the
        highest stored counter of the device ``device_serial`` in ``epoch`` (default: the epoch of
        its most recent stored event)."""
        if epoch is None:
            epoch = self._latest_epoch(device_serial)
            if epoch is None:
                return []
        rows = self._query(
            "SELECT c, nxt FROM (SELECT device_counter AS c, lead(device_counter) OVER (ORDER BY device_counter) AS nxt "
            f"FROM entries WHERE {self.layout.serial_column} = ? AND device_epoch = ? AND device_counter IS NOT NULL) "
            "WHERE nxt > c + 1 ORDER BY c", (device_serial, epoch))
        return [(c + 1, nxt - 1) for c, nxt in rows]

    def find_device_event(self, device_serial: str, epoch: int, counter: int) -> Entry | None:
        rows = self._query(f"{self.layout.select} WHERE {self.layout.serial_column} = ? AND device_epoch = ? "
                           "AND device_counter = ?", (device_serial, epoch, counter))
        return self._entry(rows[0]) if rows else None

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Within the block, reads see one consistent state of the journal (a read transaction)."""
        try:
            self._conn.execute("BEGIN")
            self._conn.execute("SELECT 1 FROM meta LIMIT 1").fetchall()  # the snapshot starts at the first read
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise translate(exc, self.path, "read the journal") from None
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("COMMIT")


def open_with_meta(path: Path, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
                   live: bool = False) -> tuple[sqlite3.Connection, dict[str, str]]:
    """A read-only connection to the journal at ``path`` and its meta (``open_readonly_connection``;
    ``live``: a journal being written, never opened immutable). JournalError, the connection
    closed, when it is not a journal."""
    conn = open_readonly_connection(path, busy_timeout=busy_timeout, live=live)
    try:
        meta = _meta_of(conn, path)
    except BaseException:
        conn.close()
        raise
    if meta is None:
        conn.close()
        raise NotAJournalError(f"{path}: not a journal: an empty SQLite database")
    return conn, meta


def meta_through_wal(path: Path) -> dict[str, str] | None:
    """The journal's meta read through its ``-wal`` (a read-only connection, which may make a
    ``-wal`` and a ``-shm`` beside it: call it inside ``files.sqlite_files_undone``), where
    ``meta_at_rest`` cannot read it; None for an empty database. JournalError for a file that is
    not a journal, or damaged."""
    conn = open_readonly_connection(path)
    try:
        return _meta_of(conn, path)
    finally:
        conn.close()


def _meta_of(conn: sqlite3.Connection, path: Path) -> dict[str, str] | None:
    """``inspect_meta``, SQLite's errors said as the journal's (``translate``)."""
    try:
        return inspect_meta(conn, path)
    except sqlite3.Error as exc:
        raise translate(exc, path, "read the journal") from None


def meta_at_rest(path: Path) -> dict[str, str] | None:
    """The journal's meta as its main file holds it, read ``immutable`` so that nothing is made
    beside it (no ``-wal``, no ``-shm``): for a check that must change nothing. None for an empty
    database, and when it cannot be read so while a ``-wal`` or a rollback ``-journal`` is beside
    it (its meta may still be there only: opening it says why, in its own words). With neither,
    the main file is all there is: JournalError, as opening would say it, for a file that is not a
    journal (someone else's database) or is damaged (cut short, a page overwritten)."""
    try:
        conn = sqlite3.connect(sqlite_uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None)
        try:
            return inspect_meta(conn, path)
        finally:
            conn.close()
    except (sqlite3.Error, JournalError, UnicodeDecodeError) as exc:
        if any(os.path.lexists(f"{path}{side}") for side in ("-wal", "-journal")):
            return None
        if isinstance(exc, JournalError):
            raise
        raise translate(exc, path, "open the journal") from None


class JournalReader(_ReadApi):
    """A read-only view of a journal (its own ``mode=ro`` connection); never modifies the file.

    One reader per thread. Open with ``JournalReader.open(path)``.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path, meta: dict[str, str]) -> None:
        self._conn = conn
        self.path = path
        self.meta = meta
        self.layout = layout_of(meta)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> JournalReader:
        p = Path(path)
        conn, meta = open_with_meta(p, busy_timeout=busy_timeout)
        return cls(conn, p, meta)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> JournalReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
