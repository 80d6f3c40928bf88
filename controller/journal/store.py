"""The journal store: an append-only, hash-chained SQLite file (WAL, synchronous=FULL).

Writing: ``Journal.open(path, table_id=...)`` returns the one writer. Each ``append`` is its own
committed transaction: when it returns, the entry is on disk (the WAL is fsynced). ``append_batch``
commits several entries in one transaction, all or nothing. A device event (``device``, ``epoch``,
``counter``) that is already stored is a duplicate: ``append`` returns ``None`` and stores nothing.

Threads: a ``Journal`` is not thread-safe. It belongs to one thread (the table's): the first thread
that writes owns it, and a write from another thread raises RuntimeError. Other threads and
processes read through their own ``JournalReader`` (a read-only ``mode=ro`` connection); WAL lets
them read while the writer commits.

Errors: a journal that cannot be used (missing, not SQLite, not a journal, locked, read-only, disk
full) raises ``JournalError`` (an ``OSError``) with one clear line; a failing append leaves the
journal exactly as it was and the next append works. See ``controller.journal.errors``.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from controller.fsutil import fsync_dir
from controller.journal.chain import (
    ALGORITHMS,
    GENESIS_HASH,
    HMAC_SHA256,
    Hasher,
    canonical_json,
    encode_payload_value,
    entry_body,
)
from controller.journal.errors import (
    DeviceEventConflict,
    JournalBusyError,
    JournalError,
    JournalWriteError,
    NotAJournalError,
    PayloadError,
)

FORMAT = "shoectl-journal"
SCHEMA_VERSION = 1
MIN_SQLITE = (3, 37, 0)  # STRICT tables
DEFAULT_BUSY_TIMEOUT = 2.0
_PAGE = 1000
_INT64_MAX = 2**63 - 1

COLUMNS = ("seq", "ts", "kind", "table_id", "shoe_id", "round_no", "device_id", "device_epoch",
           "device_counter", "operator", "payload", "prev_hash", "hash")
_SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM entries"

SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;
CREATE TABLE entries (
    seq            INTEGER PRIMARY KEY NOT NULL CHECK (seq >= 1),
    ts             TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind <> ''),
    table_id       TEXT NOT NULL,
    shoe_id        TEXT,
    round_no       INTEGER,
    device_id      TEXT,
    device_epoch   INTEGER,
    device_counter INTEGER,
    operator       TEXT,
    payload        TEXT NOT NULL,
    prev_hash      TEXT NOT NULL,
    hash           TEXT NOT NULL,
    CHECK (device_counter IS NULL OR (device_id IS NOT NULL AND device_epoch IS NOT NULL))
) STRICT;
CREATE UNIQUE INDEX entries_device_event ON entries (device_id, device_epoch, device_counter)
    WHERE device_counter IS NOT NULL;
CREATE INDEX entries_device_seq ON entries (device_id, seq) WHERE device_id IS NOT NULL;
CREATE INDEX entries_shoe_seq ON entries (shoe_id, seq) WHERE shoe_id IS NOT NULL;
CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
    BEGIN SELECT RAISE(ABORT, 'journal entries are append-only'); END;
CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
    BEGIN SELECT RAISE(ABORT, 'journal entries are append-only'); END;
"""

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def format_ts(dt: datetime) -> str:
    """UTC ISO-8601 with microseconds and a ``Z``: ``2025-01-31T20:15:00.123456Z``."""
    if not isinstance(dt, datetime):
        raise TypeError(f"the journal clock must return a datetime, got {type(dt).__name__}")
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError("the journal clock returned a naive datetime; it must be timezone-aware (UTC)")
    return dt.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_ts(ts: str) -> datetime:
    if not (isinstance(ts, str) and len(ts) == 27 and ts.endswith("Z")):
        raise ValueError(f"not a journal timestamp: {ts!r}")
    return datetime.fromisoformat(ts[:-1]).replace(tzinfo=timezone.utc)


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal entry: every column, with ``payload`` decoded (a new dict for each read)."""

    seq: int
    ts: str
    kind: str
    table_id: str
    shoe_id: str | None
    round_no: int | None
    device_id: str | None
    device_epoch: int | None
    device_counter: int | None
    operator: str | None
    payload: dict[str, Any]
    prev_hash: str
    hash: str

    @property
    def time(self) -> datetime:
        """``ts`` as an aware UTC datetime."""
        return parse_ts(self.ts)

    @property
    def is_device_event(self) -> bool:
        return self.device_counter is not None

    def to_json(self) -> dict[str, Any]:
        """All columns, in schema order (``payload`` as an object): the export format."""
        return {name: getattr(self, name) for name in COLUMNS}


@dataclass(frozen=True, slots=True)
class Record:
    """An entry to append with ``append_batch``; the fields are ``append``'s arguments."""

    kind: str
    payload: dict[str, Any]
    shoe: str | None = None
    round: int | None = None
    device: str | None = None
    epoch: int | None = None
    counter: int | None = None
    operator: str | None = None


@dataclass(frozen=True, slots=True)
class _Prepared:
    kind: str
    payload: dict[str, Any]
    payload_text: str
    shoe: str | None
    round: int | None
    device: str | None
    epoch: int | None
    counter: int | None
    operator: str | None


# --- helpers -----------------------------------------------------------------------------------

def _check_sqlite_version() -> None:
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        raise JournalError(f"SQLite {sqlite3.sqlite_version} is too old for the journal "
                           f"(needs {'.'.join(map(str, MIN_SQLITE))} or newer)")


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return "file:" + urllib.parse.quote(str(path.absolute())) + ("?" + query if query else "")


class _Connection(sqlite3.Connection):
    """A plain connection; a Python subclass so that tests can patch ``execute`` at the edge."""


def translate(exc: BaseException, path: Path | str, action: str) -> JournalError:
    """A sqlite3 error as a one-line JournalError of the right kind."""
    msg = " ".join(str(exc).split()) or exc.__class__.__name__
    low = msg.lower()
    where = f"{path}: cannot {action}"
    if "file is not a database" in low or "not a database" in low:
        return NotAJournalError(f"{path}: not a journal: not an SQLite database")
    if "locked" in low or "busy" in low:
        return JournalBusyError(f"{where}: the database is locked by another connection ({msg})")
    if "disk is full" in low or "disk full" in low:
        return JournalWriteError(f"{where}: database or disk is full; nothing was stored")
    if "readonly" in low or "read-only" in low:
        return JournalError(f"{where}: the journal or its directory is read-only ({msg})")
    if "unable to open" in low:
        parent = Path(path).parent
        if not parent.is_dir():
            return JournalError(f"{where}: directory {parent} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            return JournalError(f"{where}: directory {parent} is read-only (WAL needs to create files beside the journal)")
        return JournalError(f"{where}: unable to open the database file")
    if "malformed" in low or "corrupt" in low:
        return NotAJournalError(f"{where}: the database file is corrupt ({msg})")
    if "i/o error" in low:
        return JournalWriteError(f"{where}: disk I/O error; nothing was stored")
    return JournalError(f"{where}: {msg}")


def _row_to_entry(row: tuple[Any, ...], path: Path | str) -> Entry:
    try:
        payload = json.loads(row[10])
    except (TypeError, ValueError):
        raise NotAJournalError(f"{path}: entry {row[0]} has a payload that is not JSON; run `shoectl journal verify`") from None
    return Entry(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], payload, row[11], row[12])


def _inspect(conn: sqlite3.Connection, path: Path | str) -> dict[str, str] | None:
    """The meta of a journal, None for an empty database; NotAJournalError for anything else."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not names and version == 0:
        return None
    if "meta" not in names or "entries" not in names:
        raise NotAJournalError(f"{path}: not a journal: an SQLite database without the journal's tables")
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    except sqlite3.DatabaseError as exc:
        raise NotAJournalError(f"{path}: not a journal: unreadable meta table ({exc})") from None
    if meta.get("format") != FORMAT:
        raise NotAJournalError(f"{path}: not a journal: meta.format is {meta.get('format')!r}, not {FORMAT!r}")
    if version != SCHEMA_VERSION or meta.get("schema_version") != str(SCHEMA_VERSION):
        newer = version > SCHEMA_VERSION
        raise NotAJournalError(
            f"{path}: journal schema version {version} is not supported (this shoectl reads {SCHEMA_VERSION}"
            f"{'; it was written by a newer shoectl' if newer else ''})")
    if meta.get("hash_algorithm") not in ALGORITHMS:
        raise NotAJournalError(f"{path}: not a journal: unknown hash algorithm {meta.get('hash_algorithm')!r}")
    if not meta.get("table_id"):
        raise NotAJournalError(f"{path}: not a journal: meta has no table_id")
    return meta


def _check_str(name: str, value: Any, *, optional: bool) -> None:
    if value is None:
        if optional:
            return
        raise PayloadError(f"{name} is required")
    if not isinstance(value, str):
        raise PayloadError(f"{name} must be a str, got {type(value).__name__} {value!r}")
    if not value:
        raise PayloadError(f"{name} must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PayloadError(f"{name} is not valid Unicode text") from None


def _check_int(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise PayloadError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if not 0 <= value <= _INT64_MAX:
        raise PayloadError(f"{name} must be between 0 and 2**63-1, got {value}")


def prepare(kind: str, payload: dict[str, Any], *, shoe: str | None = None, round: int | None = None,
            device: str | None = None, epoch: int | None = None, counter: int | None = None,
            operator: str | None = None) -> _Prepared:
    """Validate an entry's fields before any database work (PayloadError on a bad one)."""
    _check_str("kind", kind, optional=False)
    _check_str("shoe", shoe, optional=True)
    _check_int("round", round)
    _check_str("device", device, optional=True)
    _check_int("epoch", epoch)
    _check_int("counter", counter)
    _check_str("operator", operator, optional=True)
    if counter is not None and (device is None or epoch is None):
        raise PayloadError("a device event needs device, epoch and counter together")
    if epoch is not None and device is None:
        raise PayloadError("epoch given without device")
    text, value = encode_payload_value(payload)
    return _Prepared(kind, value, text, shoe, round, device, epoch, counter, operator)


# --- reading -----------------------------------------------------------------------------------

class _ReadApi:
    """Queries shared by the writer (``Journal``) and ``JournalReader``."""

    _conn: sqlite3.Connection
    path: Path
    meta: dict[str, str]

    @property
    def table_id(self) -> str:
        return self.meta["table_id"]

    @property
    def hash_algorithm(self) -> str:
        return self.meta["hash_algorithm"]

    @property
    def key_id(self) -> str | None:
        return self.meta.get("key_id")

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
        sql = f"{_SELECT} WHERE {' AND '.join(where)} ORDER BY seq LIMIT {_PAGE}"
        last = int(since_seq)
        while True:
            rows = self._query(sql, [last, *base])
            for row in rows:
                yield _row_to_entry(row, self.path)
            if len(rows) < _PAGE:
                return
            last = rows[-1][0]

    def get(self, seq: int) -> Entry | None:
        rows = self._query(f"{_SELECT} WHERE seq = ?", (seq,))
        return _row_to_entry(rows[0], self.path) if rows else None

    def last(self) -> Entry | None:
        rows = self._query(f"{_SELECT} ORDER BY seq DESC LIMIT 1")
        return _row_to_entry(rows[0], self.path) if rows else None

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

    def _latest_epoch(self, device_id: str) -> int | None:
        rows = self._query(
            "SELECT device_epoch FROM entries WHERE device_id = ? AND device_counter IS NOT NULL "
            "ORDER BY seq DESC LIMIT 1", (device_id,))
        return rows[0][0] if rows else None

    def last_device_counter(self, device_id: str, *, contiguous: bool = True) -> tuple[int, int] | None:
        """``(epoch, counter)`` to seed the link layer's duplicate tracking for ``device_id`` after
        a restart (``HostConnection(last_event_counter=counter, event_epoch=epoch)``), or None if
        no event of that device is stored.

        ``epoch`` is that of the device's most recent stored event (a device picks a new epoch,
        not necessarily a larger one, whenever its counter restarts). ``counter`` is, by default,
        the highest counter C of that epoch such that every counter from the epoch's lowest stored
        one up to C is stored: if a gap is open (events stored after a missing one), it stops
        before the gap, so the still-unacknowledged missing events are not taken for duplicates
        when the device resends them (and the journal drops the resent ones it already has).
        ``contiguous=False`` gives the highest stored counter (use it once the table has recorded
        a gap as unrecoverable, protocol E7); ``device_counter_gaps`` lists the gaps.
        """
        epoch = self._latest_epoch(device_id)
        if epoch is None:
            return None
        lo, hi, n = self._query(
            "SELECT min(device_counter), max(device_counter), count(*) FROM entries "
            "WHERE device_id = ? AND device_epoch = ? AND device_counter IS NOT NULL", (device_id, epoch))[0]
        if not contiguous or hi - lo + 1 == n:
            return epoch, hi
        return epoch, self.device_counter_gaps(device_id, epoch)[0][0] - 1

    def device_counter_gaps(self, device_id: str, epoch: int | None = None) -> list[tuple[int, int]]:
        """Inclusive ranges ``(first, last)`` of counters missing between the lowest and the
        highest stored counter of ``device_id`` in ``epoch`` (default: the epoch of its most
        recent stored event)."""
        if epoch is None:
            epoch = self._latest_epoch(device_id)
            if epoch is None:
                return []
        rows = self._query(
            "SELECT c, nxt FROM (SELECT device_counter AS c, lead(device_counter) OVER (ORDER BY device_counter) AS nxt "
            "FROM entries WHERE device_id = ? AND device_epoch = ? AND device_counter IS NOT NULL) "
            "WHERE nxt > c + 1 ORDER BY c", (device_id, epoch))
        return [(c + 1, nxt - 1) for c, nxt in rows]

    def find_device_event(self, device_id: str, epoch: int, counter: int) -> Entry | None:
        rows = self._query(f"{_SELECT} WHERE device_id = ? AND device_epoch = ? AND device_counter = ?",
                           (device_id, epoch, counter))
        return _row_to_entry(rows[0], self.path) if rows else None

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


class JournalReader(_ReadApi):
    """A read-only view of a journal (its own ``mode=ro`` connection); never modifies the file.

    One reader per thread. Open with ``JournalReader.open(path)``.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path, meta: dict[str, str]) -> None:
        self._conn = conn
        self.path = path
        self.meta = meta

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> JournalReader:
        p = Path(path)
        conn = open_readonly_connection(p, busy_timeout=busy_timeout)
        try:
            meta = _inspect(conn, p)
        except sqlite3.Error as exc:
            conn.close()
            raise translate(exc, p, "read the journal") from None
        except BaseException:
            conn.close()
            raise
        if meta is None:
            conn.close()
            raise NotAJournalError(f"{p}: not a journal: an empty SQLite database")
        return cls(conn, p, meta)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> JournalReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_readonly_connection(path: Path, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> sqlite3.Connection:
    """A ``mode=ro`` connection to an existing file. If SQLite cannot open it because the WAL
    index cannot be created (a read-only copy) and no ``-wal`` file exists (so no writer is
    active), the file is opened ``immutable``. JournalError if missing or unusable."""
    _check_sqlite_version()
    if not path.exists():
        raise JournalError(f"{path}: no such journal")
    if path.is_dir():
        raise JournalError(f"{path}: is a directory, not a journal")
    if not os.access(path, os.R_OK):
        raise JournalError(f"{path}: permission denied")
    try:
        conn = sqlite3.connect(_uri(path, mode="ro"), uri=True, timeout=busy_timeout, isolation_level=None,
                               factory=_Connection)
        try:
            conn.execute("PRAGMA query_only = 1")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn
    except sqlite3.Error as exc:
        if "unable to open" not in str(exc) or Path(str(path) + "-wal").exists():
            raise translate(exc, path, "open the journal") from None
    try:
        conn = sqlite3.connect(_uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None,
                               factory=_Connection)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.Error as exc:
        raise translate(exc, path, "open the journal") from None


# --- writing -----------------------------------------------------------------------------------

@dataclass
class _Tail:
    seq: int = 0
    hash: str = GENESIS_HASH
    known: bool = field(default=False)


class Journal(_ReadApi):
    """The journal's one writer. Not thread-safe: see the module docstring.

    Open with ``Journal.open(path, table_id=...)``; use as a context manager or call ``close()``.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path, meta: dict[str, str], hasher: Hasher,
                 clock: Clock, lock_fd: int) -> None:
        self._conn = conn
        self.path = path
        self.meta = meta
        self._hasher = hasher
        self._clock = clock
        self._lock_fd = lock_fd
        self._owner: int | None = None
        self._tail = _Tail()
        self._closed = False

    # opening

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, table_id: str, hmac_key: bytes | None = None,
             clock: Clock | None = None, create: bool = True,
             busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> Journal:
        """Open (or with ``create``, create) the journal at ``path`` for writing.

        ``table_id`` must match the journal's; ``hmac_key`` (bytes, see ``load_hmac_key``) must be
        given exactly when the journal was created with one, and be that key. ``clock`` returns
        an aware datetime (default: now, UTC). Refuses (JournalError) if WAL or synchronous=FULL
        cannot be set, or another process has the journal open for writing.
        """
        _check_sqlite_version()
        _check_str("table_id", table_id, optional=False)
        raw = os.fspath(path)
        if raw in ("", ":memory:") or str(raw).startswith("file:"):
            raise JournalError(f"{raw or '(empty)'}: the journal must be a file path (WAL needs a file)")
        p = Path(raw)
        hasher = Hasher(hmac_key)
        if p.is_dir():
            raise JournalError(f"{p}: is a directory, not a journal")
        if not p.parent.is_dir():
            raise JournalError(f"{p}: directory {p.parent} does not exist")
        existed = p.exists()
        if not existed and not create:
            raise JournalError(f"{p}: no such journal")
        lock_fd = _take_writer_lock(p)
        conn = None
        try:
            try:
                conn = sqlite3.connect(_uri(p, mode="rwc" if create else "rw"), uri=True, timeout=busy_timeout,
                                       isolation_level=None, check_same_thread=False, factory=_Connection)
                meta = _inspect(conn, p)  # before any change: never convert someone else's database
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise JournalError(f"{p}: cannot use WAL mode here (journal_mode stays {mode!r}); "
                                       "put the journal on a local filesystem that supports it")
                conn.execute("PRAGMA synchronous = FULL")
                sync = conn.execute("PRAGMA synchronous").fetchone()[0]
                if sync != 2:
                    raise JournalError(f"{p}: cannot set synchronous=FULL (got {sync})")
                if meta is None:
                    if not create:
                        raise NotAJournalError(f"{p}: not a journal: an empty SQLite database")
                    meta = _create_schema(conn, p, table_id, hasher, clock or utc_now)
                    fsync_dir(p.parent.absolute())
            except sqlite3.Error as exc:
                raise translate(exc, p, "open the journal") from None
            _check_meta(p, meta, table_id, hasher)
            journal = cls(conn, p, meta, hasher, clock or utc_now, lock_fd)
            journal._load_tail()
            return journal
        except BaseException:
            if conn is not None:
                conn.close()
            if not existed:  # leave no empty file behind from a failed creation
                with contextlib.suppress(OSError):
                    if p.stat().st_size == 0:
                        p.unlink()
            os.close(lock_fd)
            raise

    # writing

    def append(self, kind: str, payload: dict[str, Any], *, shoe: str | None = None, round: int | None = None,
               device: str | None = None, epoch: int | None = None, counter: int | None = None,
               operator: str | None = None) -> Entry | None:
        """Append one entry in its own transaction; durable when this returns.

        Returns the stored Entry, or None when ``(device, epoch, counter)`` is already stored with
        the same kind and payload (a resent device event). Raises PayloadError for a bad field or
        a float in the payload, DeviceEventConflict for a counter reused with a different event,
        JournalError when the write fails (the journal is then unchanged).
        """
        rec = prepare(kind, payload, shoe=shoe, round=round, device=device, epoch=epoch, counter=counter,
                      operator=operator)
        return self._commit([rec])[0]

    def append_batch(self, items: Iterable[Record | Mapping[str, Any]]) -> list[Entry | None]:
        """Append several entries in one transaction: all are stored or none.

        ``items`` are Records or mappings with append's argument names (``kind``, ``payload``,
        ``shoe``, ...). Returns one result per item, as ``append`` would (None for a duplicate
        device event, including one repeated within the batch). Every item is validated before
        the transaction starts.
        """
        prepared = []
        for i, item in enumerate(items):
            fields = _record_fields(item, i)
            try:
                prepared.append(prepare(**fields))
            except PayloadError as exc:
                raise PayloadError(f"batch item {i}: {exc}") from None
        if not prepared:
            return []
        return self._commit(prepared)

    def _commit(self, records: list[_Prepared]) -> list[Entry | None]:
        self._check_writer()
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "append") from None
        try:
            seq, prev = self._tail_in_transaction()
            out: list[Entry | None] = []
            batch_events: dict[tuple[str, int, int], Entry] = {}
            for rec in records:
                if rec.counter is not None:
                    key = (rec.device, rec.epoch, rec.counter)
                    existing = batch_events.get(key) or self._stored_device_event(*key)
                    if existing is not None:
                        _same_event_or_raise(existing, rec)
                        out.append(None)
                        continue
                seq += 1
                ts = format_ts(self._clock())
                body = entry_body(seq, ts, rec.kind, self.table_id, rec.shoe, rec.round, rec.device, rec.epoch,
                                  rec.counter, rec.operator, rec.payload_text)
                digest = self._hasher.digest(prev, body)
                conn.execute(
                    "INSERT INTO entries (seq, ts, kind, table_id, shoe_id, round_no, device_id, device_epoch, "
                    "device_counter, operator, payload, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (seq, ts, rec.kind, self.table_id, rec.shoe, rec.round, rec.device, rec.epoch, rec.counter,
                     rec.operator, rec.payload_text, prev, digest))
                entry = Entry(seq, ts, rec.kind, self.table_id, rec.shoe, rec.round, rec.device, rec.epoch,
                              rec.counter, rec.operator, rec.payload, prev, digest)
                if rec.counter is not None:
                    batch_events[(rec.device, rec.epoch, rec.counter)] = entry  # type: ignore[index]
                out.append(entry)
                prev = digest
            conn.execute("COMMIT")
        except BaseException as exc:
            self._abort()
            if isinstance(exc, sqlite3.Error):
                raise translate(exc, self.path, "append") from None
            raise
        self._tail = _Tail(seq, prev, True)
        return out

    def _tail_in_transaction(self) -> tuple[int, str]:
        """The stored tail, checked against what this writer last committed."""
        row = self._conn.execute("SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev = row if row else (0, GENESIS_HASH)
        if self._tail.known and (seq, prev) != (self._tail.seq, self._tail.hash):
            raise JournalBusyError(
                f"{self.path}: the journal was changed by another writer (last entry {seq}, this writer "
                f"wrote up to {self._tail.seq}); refusing to append")
        return seq, prev

    def _stored_device_event(self, device: str | None, epoch: int | None, counter: int) -> Entry | None:
        row = self._conn.execute(f"{_SELECT} WHERE device_id = ? AND device_epoch = ? AND device_counter = ?",
                                 (device, epoch, counter)).fetchone()
        return _row_to_entry(row, self.path) if row else None

    def _abort(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        # Whatever happened (a COMMIT that failed late may still have landed), re-read the tail
        # from the database at the next append instead of trusting memory.
        self._tail = _Tail()

    def _load_tail(self) -> None:
        try:
            row = self._conn.execute("SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1").fetchone()
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "open the journal") from None
        self._tail = _Tail(*(row if row else (0, GENESIS_HASH)), True)

    def _check_writer(self) -> None:
        if self._closed:
            raise JournalError(f"{self.path}: the journal is closed")
        me = threading.get_ident()
        if self._owner is None:
            self._owner = me
        elif self._owner != me:
            raise RuntimeError("the Journal is written by one thread only (the table's); "
                               "other threads must enqueue, or read with a JournalReader")

    # closing

    def close(self) -> None:
        """Close the connection (SQLite checkpoints the WAL) and release the writer lock."""
        if self._closed:
            return
        self._closed = True
        try:
            self._conn.close()
        finally:
            os.close(self._lock_fd)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _record_fields(item: Record | Mapping[str, Any], i: int) -> dict[str, Any]:
    if isinstance(item, Record):
        return {name: getattr(item, name) for name in Record.__slots__}  # type: ignore[attr-defined]
    if isinstance(item, Mapping):
        unknown = set(item) - set(Record.__slots__)  # type: ignore[attr-defined]
        if unknown:
            raise PayloadError(f"batch item {i}: unknown field(s) {sorted(unknown)}")
        if "kind" not in item or "payload" not in item:
            raise PayloadError(f"batch item {i}: kind and payload are required")
        return dict(item)
    raise PayloadError(f"batch item {i}: expected a Record or a mapping, got {type(item).__name__}")


def _same_event_or_raise(existing: Entry, rec: _Prepared) -> None:
    if existing.kind == rec.kind and canonical_json(existing.payload) == rec.payload_text:
        return
    raise DeviceEventConflict(
        f"device {rec.device} epoch {rec.epoch} counter {rec.counter} is already stored as entry {existing.seq} "
        f"with a different {'kind' if existing.kind != rec.kind else 'payload'}: not a resend",
        existing, rec.kind, rec.payload)


def _take_writer_lock(path: Path) -> int:
    """An exclusive flock on ``<journal>.lock`` for the writer's lifetime (a separate file: SQLite's
    own POSIX locks on the database must not be disturbed)."""
    lock_path = Path(str(path) + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if not os.access(path.parent, os.W_OK):
            raise JournalError(f"{path}: cannot open the journal for writing: directory {path.parent} is read-only") from None
        raise JournalError(f"{lock_path}: cannot create the writer lock: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise JournalBusyError(f"{path}: the journal is already open for writing (another shoectl holds {lock_path.name})") from None
    return fd


def _create_schema(conn: sqlite3.Connection, path: Path, table_id: str, hasher: Hasher, clock: Clock) -> dict[str, str]:
    meta = {
        "format": FORMAT,
        "schema_version": str(SCHEMA_VERSION),
        "table_id": table_id,
        "created": format_ts(clock()),
        "hash_algorithm": hasher.algorithm,
    }
    if hasher.key_id is not None:
        meta["key_id"] = hasher.key_id
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _inspect(conn, path) is not None:  # created meanwhile by someone else
            conn.execute("ROLLBACK")
            return _inspect(conn, path)  # type: ignore[return-value]
        for statement in SCHEMA.split(";\n"):
            if statement.strip():
                conn.execute(statement)
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(meta.items()))
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    return meta


def _check_meta(path: Path, meta: dict[str, str], table_id: str, hasher: Hasher) -> None:
    if meta["table_id"] != table_id:
        raise JournalError(f"{path}: the journal belongs to table {meta['table_id']!r}, not {table_id!r}")
    algorithm = meta["hash_algorithm"]
    if algorithm == HMAC_SHA256 and hasher.algorithm != HMAC_SHA256:
        raise JournalError(f"{path}: the journal is HMAC-protected (key id {meta.get('key_id')}): an HMAC key is required")
    if algorithm != HMAC_SHA256 and hasher.algorithm == HMAC_SHA256:
        raise JournalError(f"{path}: the journal was created without an HMAC key; it cannot be continued with one")
    if algorithm == HMAC_SHA256 and meta.get("key_id") != hasher.key_id:
        raise JournalError(f"{path}: wrong HMAC key (key id {hasher.key_id}; the journal's is {meta.get('key_id')})")
