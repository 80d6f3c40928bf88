"""The journal's writer: an append-only, hash-chained SQLite file (WAL, synchronous=FULL).

(Reading is ``controller.journal.reader``; entries and their validation ``entry``; the schema
``schema``; connections and SQLite's errors ``connection``; opening for writing (the lock, creating a new
journal whole, the settings and the meta check) ``opening``. The names are re-exported here.)

Writing: ``Journal.open(path, table_id=...)`` returns the one writer. Each ``append`` is its own
committed transaction: when it returns, the entry is on disk (the WAL is fsynced). ``append_batch``
commits several entries in one transaction, all or nothing. A device event (``device_serial``,
``epoch``, ``counter``) that is already stored is a duplicate: ``append`` returns ``None`` and stores
nothing.

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
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from controller.journal.anchors import Anchor
from controller.journal.checkpoints import (
    HARD_FRAMES, SQLITE_AUTOCHECKPOINT, WAL_SIZE_LIMIT, Checkpointer, preallocate_wal,
)
from controller.journal.clockwatch import ClockStep, ClockWatch
from controller.journal.chain import GENESIS_HASH, Hasher, canonical_json, entry_body_bytes
from controller.journal.connection import DEFAULT_BUSY_TIMEOUT, require_journal_file, translate
from controller.journal.files import InPlace
from controller.journal.entry import (Clock, Entry, PreparedEntry, Record, check_str, format_ts, parse_ts, prepare,
                                      record_fields, utc_now)
from controller.journal import kinds
from controller.journal.errors import (DeviceEventConflict, JournalBusyError, JournalError, JournalFileGone,
                                       PayloadError)
from controller.journal.reader import JournalReader, _ReadApi
from controller.journal.opening import open_writer
from controller.journal.schema import SCHEMA_VERSION, check_sqlite_version, layout_of

log = structlog.get_logger()
CLOSE_CHECKPOINT_WAIT_S = 3.0  # how long a closing writer waits for a reader to let its checkpoint through

__all__ = ["Entry", "Journal", "JournalReader", "Record", "SCHEMA_VERSION", "format_ts", "parse_ts"]



_INSERT = ("INSERT INTO entries (seq, ts, kind, table_id, shoe_id, round_no, device_serial, device_epoch, "
           "device_counter, operator, payload, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")


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
                 clock: Clock, lock_fd: int, watch: ClockWatch | None = None) -> None:
        self._conn = conn
        self._watch = watch
        self._first_seq = 0  # the seq the last transaction began at
        self.last_ts: str | None = None  # the time of the entries the last transaction stored (they share it)
        self.last_step: tuple[int, str, ClockStep] | None = None  # the last clock_step journaled: seq, ts, step
        self.path = path
        self.meta = meta
        self.layout = layout_of(meta)
        self._hasher = hasher
        self._clock = clock
        self._lock_fd = lock_fd
        self._owner: int | None = None
        self._tail = _Tail()
        self._closed = False
        self._checkpointer: Checkpointer | None = None
        self._in_place = InPlace(path)  # the files this writer writes: those at ``path`` until they are not
        self.gone: str | None = None  # why the file is no longer at ``path``, once a commit found it

    # opening

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, table_id: str, hmac_key: bytes | None = None,
             clock: Clock | None = None, create: bool = True,
             busy_timeout: float = DEFAULT_BUSY_TIMEOUT, steady: Callable[[], float] | None = None) -> Journal:
        """Open (or with ``create``, create) the journal at ``path`` for writing.

        ``table_id`` must match the journal's; ``hmac_key`` (bytes, see ``load_hmac_key``) must be
        given exactly when the journal was created with one, and be that key. ``clock`` returns
        an aware datetime (default: now, UTC); the writer watches it against ``steady`` (default,
        with the default clock: ``time.monotonic``) and journals its steps
        (``controller.journal.clockwatch``). Refuses (JournalError) if WAL or synchronous=FULL
        cannot be set, another process has the journal open for writing, or the journal is of an
        earlier schema version (it is read, not continued: ``controller.journal.migrate``).
        """
        check_sqlite_version()
        check_str("table_id", table_id, optional=False)
        raw = os.fspath(path)
        if raw in ("", ":memory:") or str(raw).startswith("file:"):
            raise JournalError(f"{raw or '(empty)'}: the journal must be a file path (WAL needs a file)")
        p = Path(raw)
        hasher = Hasher(hmac_key)
        if p.is_dir():
            raise JournalError(f"{p}: is a directory, not a journal")
        if not p.parent.is_dir():
            raise JournalError(f"{p}: directory {p.parent} does not exist")
        if p.exists():
            require_journal_file(p)
        elif not create:
            raise JournalError(f"{p}: no such journal")
        conn, meta, lock_fd = open_writer(p, table_id=table_id, hasher=hasher, clock=clock or utc_now,
                                          create=create, busy_timeout=busy_timeout)
        try:
            watch = ClockWatch(steady or time.monotonic) if clock is None or steady is not None else None
            journal = cls(conn, p, meta, hasher, clock or utc_now, lock_fd, watch)
            journal._load_tail()
            if watch is not None and not watch.opened(journal._stored_last_ts(), now := journal._clock()):
                log.warning("the wall clock was never set: every entry's time is wrong until it is (NTP); "
                            "its step then is journaled as clock_step", clock=format_ts(now))
        except BaseException:
            conn.close()
            os.close(lock_fd)
            raise
        return journal

    # writing

    def append(self, kind: str, payload: dict[str, Any], *, shoe: str | None = None, round: int | None = None,
               device_serial: str | None = None, epoch: int | None = None, counter: int | None = None,
               operator: str | None = None) -> Entry | None:
        """Append one entry in its own transaction; durable when this returns.

        Returns the stored Entry, or None when ``(device_serial, epoch, counter)`` is already stored with
        the same kind and payload (a resent device event). Raises PayloadError for a bad field or
        a float in the payload, DeviceEventConflict for a counter reused with a different event,
        JournalError when the write fails (the journal is then unchanged).
        """
        rec = prepare(kind, payload, shoe=shoe, round=round, device_serial=device_serial, epoch=epoch,
                      counter=counter, operator=operator)
        return self._commit([rec])[0]

    def append_batch(self, items: Iterable[Record | Mapping[str, Any]], *,
                     results: bool = True) -> list[Entry | None]:
        """Append several entries in one transaction: all are stored or none.

        ``items`` are Records or mappings with append's argument names (``kind``, ``payload``,
        ``shoe``, ...). Returns one result per item, as ``append`` would (None for a duplicate
        device event, including one repeated within the batch). Every item is validated before
        the transaction starts. ``results=False`` (a writer that does not read them back, the
        table's owner on the card path): an empty list, and no ``Entry`` is built.
        """
        prepared = []
        for i, item in enumerate(items):
            try:
                if type(item) is Record:  # the owner's records: no dict of fields in between
                    prepared.append(prepare(item.kind, item.payload, shoe=item.shoe, round=item.round,
                                            device_serial=item.device_serial, epoch=item.epoch,
                                            counter=item.counter, operator=item.operator))
                else:
                    prepared.append(prepare(**record_fields(item, i)))
            except PayloadError as exc:
                raise PayloadError(f"batch item {i}: {exc}") from None
        if not prepared:
            return []
        return self._commit(prepared, results=results)

    def _commit(self, records: list[PreparedEntry], *, results: bool = True) -> list[Entry | None]:
        """One transaction: the records chained and inserted; durable (the WAL
        fsynced by SQLite, synchronous=FULL) when this returns. A device event already stored
        makes the unique key refuse the insert; then the transaction is done again, looking each
        device event up (the slow path of a resend after a crash)."""
        self._check_writer()
        if self._checkpointer is not None and self._checkpointer.failed:
            self._checkpointer = None  # its thread stopped: SQLite's own checkpoints again
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute(f"PRAGMA wal_autocheckpoint = {SQLITE_AUTOCHECKPOINT}").fetchall()
        committed = self._tail  # the tail as this writer left it (_abort forgets it)
        wall = self._clock()  # one reading stamps the whole transaction, so that a step cannot fall inside it
        step = self._watch.check(wall) if self._watch is not None else None
        if step is not None:
            # in the shoe and round of the entry it comes before, so that a replay shows it there
            records = [prepare(kinds.CLOCK_STEP, step.payload(), shoe=records[0].shoe, round=records[0].round), *records]
        ts = format_ts(wall)
        try:
            out = self._transaction(records, committed, ts, look_up=False, results=results)
        except sqlite3.IntegrityError:
            out = self._transaction(records, committed, ts, look_up=True, results=results)
        self.last_ts = ts
        self._require_in_place()
        if self._watch is not None:
            self._watch.committed()
        if step is None:
            return out
        self.last_step = (self._first_seq, ts, step)  # the clock_step's own seq
        step.log(self._first_seq)
        return out[1:]

    def _transaction(self, records: list[PreparedEntry], committed: _Tail, ts: str, *, look_up: bool,
                     results: bool) -> list[Entry | None]:
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "append") from None
        try:
            seq, prev = self._tail_in_transaction(committed, read=look_up)
            self._first_seq = seq + 1
            out: list[Entry | None] = []
            rows: list[tuple[Any, ...]] = []
            batch_events: dict[tuple[str, int, int], Entry] = {}
            table_id, digest_of = self.table_id, self._hasher.digest
            for rec in records:
                if look_up and rec.counter is not None:
                    key = (rec.device_serial, rec.epoch, rec.counter)
                    existing = batch_events.get(key) or self._stored_device_event(*key)  # type: ignore[arg-type]
                    if existing is not None:
                        _same_event_or_raise(existing, rec)
                        out.append(None)
                        continue
                seq += 1
                body = entry_body_bytes(seq, ts, rec.kind, table_id, rec.shoe, rec.round, rec.device_serial,
                                        rec.epoch, rec.counter, rec.operator, rec.payload_bytes)
                digest = digest_of(prev, body)
                rows.append((seq, ts, rec.kind, table_id, rec.shoe, rec.round, rec.device_serial, rec.epoch,
                             rec.counter, rec.operator, rec.payload_text, prev, digest))
                if results or look_up:
                    entry = Entry(seq, ts, rec.kind, table_id, rec.shoe, rec.round, rec.device_serial, rec.epoch,
                                  rec.counter, rec.operator, rec.payload, prev, digest, SCHEMA_VERSION)
                    if rec.counter is not None:
                        batch_events[(rec.device_serial, rec.epoch, rec.counter)] = entry  # type: ignore[index]
                    out.append(entry)
                prev = digest
            conn.executemany(_INSERT, rows)  # one statement for the lot (the same SQL text: prepared once)
            conn.execute("COMMIT")
        except BaseException as exc:
            self._abort()
            if isinstance(exc, sqlite3.IntegrityError) and not look_up:
                raise  # a device event already stored: _commit does it again, looking it up
            if isinstance(exc, sqlite3.Error):
                raise translate(exc, self.path, "append") from None
            raise
        self._tail = _Tail(seq, prev, True)
        return out if results else []

    def _tail_in_transaction(self, committed: _Tail, *, read: bool) -> tuple[int, str]:
        """The tail to chain onto. What this writer last committed, without a query, when it knows
        (``committed.known``) and need not ``read``: an entry another writer appended meanwhile
        (the writer lock keeps them out) holds the seq this writer inserts next, so the insert is
        refused and the retry reads. Otherwise the stored tail, checked against ``committed``."""
        if committed.known and not read:
            return committed.seq, committed.hash
        seq, prev = self._stored_tail()
        if committed.known and (seq, prev) != (committed.seq, committed.hash):
            raise JournalBusyError(
                f"{self.path}: the journal was changed by another writer (last entry {seq}, this writer "
                f"wrote up to {committed.seq}); refusing to append")
        return seq, prev

    def _stored_device_event(self, device_serial: str | None, epoch: int | None, counter: int) -> Entry | None:
        row = self._conn.execute(f"{self.layout.select} WHERE device_serial = ? AND device_epoch = ? "
                                 "AND device_counter = ?", (device_serial, epoch, counter)).fetchone()
        return self._entry(row) if row else None

    def _abort(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        # Whatever happened (a COMMIT that failed late may still have landed), re-read the tail
        # from the database at the next append instead of trusting memory.
        self._tail = _Tail()

    def _load_tail(self) -> None:
        try:
            self._tail = _Tail(*self._stored_tail(), True)
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "open the journal") from None

    def _stored_last_ts(self) -> str | None:
        row = self._conn.execute("SELECT ts FROM entries ORDER BY seq DESC LIMIT 1").fetchone()
        return row[0] if row else None

    def _stored_tail(self) -> tuple[int, str]:
        """``(seq, hash)`` of the last stored entry; ``(0, GENESIS_HASH)`` in an empty journal."""
        row = self._conn.execute("SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1").fetchone()
        return (row[0], row[1]) if row else (0, GENESIS_HASH)

    def _require_in_place(self) -> None:
        """JournalFileGone once the journal or its ``-wal`` is not the file this writer writes (``InPlace``)."""
        self.gone = self._in_place.problem(self._first_seq)
        if self.gone is not None:
            raise JournalFileGone(self.gone)

    def _check_writer(self) -> None:
        if self._closed:
            raise JournalError(f"{self.path}: the journal is closed")
        if self.gone is not None:
            raise JournalFileGone(self.gone)
        me = threading.get_ident()
        if self._owner is None:
            self._owner = me
        elif self._owner != me:
            raise RuntimeError("the Journal is written by one thread only (the table's); "
                               "other threads must enqueue, or read with a JournalReader")

    def take_anchor(self) -> Anchor:
        """The journal's head as an ``Anchor`` for a witness to keep, signed with the journal's key
        if it has one (see ``controller.journal.anchors``)."""
        seq, digest = self.anchor().split(":")
        return Anchor(self.table_id, self.meta["created"], int(seq), digest, self.hash_algorithm, self.key_id,
                      format_ts(self._clock())).signed(self._hasher)

    def checkpoint_in_background(self) -> None:
        """For a long-running writer: a thread of the journal's checkpoints between commits, in the
        writer's quiet moments, once the WAL holds ``SOFT_FRAMES`` (``controller.journal.checkpoints``)
        until ``close``; a commit checkpoints only when the WAL reaches ``HARD_FRAMES`` without a
        quiet moment (a writer without pauses). The WAL is filled with zeros up to ``SOFT_FRAMES``
        first (``preallocate_wal``: the commits then rewrite blocks the file has, which syncs
        faster than growing it). Idempotent; on this writer's thread only."""
        if self._checkpointer is not None:
            return
        self._check_writer()
        try:
            self._conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}").fetchall()
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {HARD_FRAMES}").fetchall()  # a writer without pauses
            page_size = self._conn.execute("PRAGMA page_size").fetchone()[0]
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "configure checkpoints") from None
        try:
            preallocate_wal(Path(f"{self.path}-wal"), page_size)
        except OSError as exc:  # only slower commits: the WAL grows as it did
            log.warning("journal WAL not preallocated", journal=str(self.path), error=str(exc))
        self._checkpointer = Checkpointer(self.path).start()

    # closing

    def close(self) -> None:
        """Checkpoint the WAL whole into the journal file, close the connection and release the
        writer lock. SQLite checkpoints at close only the last connection to the file: with a
        reader beside it (a feed, a scoreboard, an export) the last entries stayed in the -wal
        alone, and the journal file, copied by itself after a clean stop, ended short of them (a
        long-run review). A reader in the middle of a long read holds the checkpoint back for
        ``CLOSE_CHECKPOINT_WAIT_S`` at most; what is left stays in the -wal, read with the file."""
        if self._closed:
            return
        self._closed = True
        if self._checkpointer is not None:
            self._checkpointer.stop()
        try:
            try:
                self._conn.execute(f"PRAGMA busy_timeout = {int(CLOSE_CHECKPOINT_WAIT_S * 1000)}")
                busy = self._conn.execute("PRAGMA wal_checkpoint(FULL)").fetchone()[0]
                if busy:
                    log.info("journal WAL not wholly checkpointed at close: a reader held it", journal=str(self.path))
            except sqlite3.Error as exc:  # what is left stays in the -wal: still the journal's
                log.warning("journal WAL not checkpointed at close", journal=str(self.path), error=str(exc))
            self._conn.close()
        finally:
            os.close(self._lock_fd)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _same_event_or_raise(existing: Entry, rec: PreparedEntry) -> None:
    if existing.kind == rec.kind and canonical_json(existing.payload) == rec.payload_text:
        return
    raise DeviceEventConflict(
        f"device {rec.device_serial} epoch {rec.epoch} counter {rec.counter} is already stored as entry {existing.seq} "
        f"with a different {'kind' if existing.kind != rec.kind else 'payload'}: not a resend",
        existing, rec.kind, rec.payload)
