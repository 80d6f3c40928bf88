"""Opening a journal for writing: ``open_writer`` takes the writer lock, creates a new journal
whole, connects, sets WAL and ``synchronous=FULL`` and checks the journal's meta against the
writer's table and key. ``Journal.open`` (``controller.journal.store``) builds the writer on it.

A new journal is built under a temporary name beside its path (WAL mode, the schema, the meta),
synced, then linked into place (``os.link``: never over a file that appeared meanwhile), so that a
reader never finds the path as an empty or half-made database: a feed or a scoreboard started with
the table would refuse it as not a journal. An empty file left by a crash of an older creation is
still made a journal in place here; ``shoectl run`` refuses an empty file at its journal's path
(it cannot tell one from a journal cut to nothing) and says to move it aside.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import structlog

from controller import sqlite_files
from controller.fsutil import fsync_dir
from controller.locks import exclusive_lock, lock_held
from controller.journal.chain import HMAC_SHA256, Hasher, key_id_shown
from controller.journal.connection import JournalConnection, sqlite_uri, translate
from controller.journal.entry import Clock
from controller.journal.errors import JournalBusyError, JournalError, NotAJournalError
from controller.journal.files import lock_path
from controller.journal.schema import SCHEMA_VERSION, create_schema, inspect_meta, set_wal_mode
from controller.journal.walcheck import keep_ignored_wal, orphaned_wal, wal_path, wal_problem

__all__ = ["open_writer", "refuse_running_writer"]

log = structlog.get_logger()


def open_writer(path: Path, *, table_id: str, hasher: Hasher, clock: Clock, create: bool,
                busy_timeout: float) -> tuple[sqlite3.Connection, dict[str, str], int]:
    """The writer's connection to the journal at ``path``, its meta and the writer lock's file
    descriptor (held until the writer closes it). ``path`` exists (a journal, or an empty file a
    crashed creation left) or, with ``create``, is made. JournalError (one line) when it cannot be
    opened for writing; nothing is left open then."""
    existed = path.exists()
    lock_fd = _take_writer_lock(path)
    conn = None
    try:
        if not existed:
            orphan = orphaned_wal(path)  # under the lock: no writer of this path is starting
            if orphan is not None:
                raise JournalError(orphan)
            _create_journal_file(path, table_id, hasher, clock)
        ignored = wal_problem(path)
        if ignored is not None and ignored.lost:
            raise JournalError(
                f"{ignored}: the table does not go on from a journal that lost committed entries; restore "
                f"{wal_path(path).name} from a copy, or move it aside to go on from the entries SQLite reads (what "
                "it held stays in the file moved; docs/journal.md, 'A -wal file SQLite ignores')")
        if ignored is not None:
            kept = keep_ignored_wal(path)
            log.warning("journal -wal file ignored by SQLite", journal=str(path), problem=ignored.text,
                        kept_as=str(kept) if kept else None)
        try:
            with sqlite_files.opening() as hold:  # its first locks taken while no other descriptor of it is open here
                conn = sqlite3.connect(sqlite_uri(path, mode="rw"), uri=True, timeout=busy_timeout,
                                       isolation_level=None, check_same_thread=False, factory=JournalConnection)
                meta = inspect_meta(conn, path)
                if meta is not None:
                    check_meta(path, meta, table_id, hasher)  # before any change: never convert someone else's database
                set_wal_mode(conn, path)
                hold(conn, path)
            conn.execute("PRAGMA synchronous = FULL")
            sync = conn.execute("PRAGMA synchronous").fetchone()[0]
            if sync != 2:
                raise JournalError(f"{path}: cannot set synchronous=FULL (got {sync})")
            if meta is None:  # an empty file (a crash during an older creation)
                if not create:
                    raise NotAJournalError(f"{path}: not a journal: an empty SQLite database")
                meta = create_schema(conn, path, table_id, hasher, clock)
                fsync_dir(path.parent.absolute())
        except (sqlite3.Error, UnicodeDecodeError) as exc:  # UnicodeDecodeError: translate's docstring
            raise translate(exc, path, "open the journal") from None
        return conn, meta, lock_fd
    except BaseException:
        if conn is not None:
            conn.close()
        os.close(lock_fd)
        raise


def _create_journal_file(path: Path, table_id: str, hasher: Hasher, clock: Clock) -> None:
    """Make a new journal at ``path`` whole or not at all (see the module docstring). A file that
    appeared at ``path`` meanwhile is left as it is: the caller opens and checks it like any other."""
    try:
        _build_and_link(path, table_id, hasher, clock)
    except FileExistsError:
        return
    except sqlite3.Error as exc:
        raise translate(exc, path, "create the journal") from None
    except OSError as exc:
        raise JournalError(f"{path}: cannot create the journal: {exc.strerror or exc}") from None
    fsync_dir(path.parent.absolute())


def _build_and_link(path: Path, table_id: str, hasher: Hasher, clock: Clock) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.creating")
    leftovers = [tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")]
    for f in leftovers:
        f.unlink(missing_ok=True)
    try:
        conn = sqlite3.connect(str(tmp), isolation_level=None, factory=JournalConnection)
        try:
            set_wal_mode(conn, path)
            create_schema(conn, path, table_id, hasher, clock)
        finally:
            conn.close()  # checkpoints the WAL into the file and removes it
        fd = os.open(tmp, os.O_RDONLY)
        try:
            # not for everyone: it holds the cards dealt face down and held for the next hand (a
            # security review: under umask 022 it was 0644). SQLite gives its -wal and -shm its mode.
            os.fchmod(fd, os.fstat(fd).st_mode & 0o770)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, path)  # never over a file that appeared meanwhile
    finally:
        for f in leftovers:
            with contextlib.suppress(OSError):
                f.unlink()


def _take_writer_lock(path: Path) -> int:
    """An exclusive flock on ``<journal>.lock`` for the writer's lifetime (a separate file: SQLite's
    own POSIX locks on the database must not be disturbed)."""
    lock = lock_path(path)
    try:
        fd = exclusive_lock(lock)
    except OSError as exc:
        if not os.access(path.parent, os.W_OK):
            raise JournalError(f"{path}: cannot open the journal for writing: directory {path.parent} is read-only") from None
        raise JournalError(f"{lock}: cannot create the writer lock: {exc.strerror or exc}") from None
    if fd is None:
        raise _open_for_writing(path)
    return fd


def refuse_running_writer(path: Path) -> None:
    """JournalBusyError, as opening would say it, when another writer holds the journal at
    ``path``: said without making its lock file, for a check before anything is created."""
    if lock_held(lock_path(path)):
        raise _open_for_writing(path)


def _open_for_writing(path: Path) -> JournalBusyError:
    return JournalBusyError(f"{path}: the journal is already open for writing (another shoectl holds "
                            f"{lock_path(path).name})")


def check_meta(path: Path, meta: dict[str, str], table_id: str, hasher: Hasher) -> None:
    """JournalError unless the journal of ``meta`` is table ``table_id``'s, chained as ``hasher``
    chains (an HMAC journal with its own key, a SHA-256 one without a key), and of this schema
    version (an earlier one is read, never continued)."""
    if meta["schema_version"] != str(SCHEMA_VERSION):
        raise JournalError(
            f"{path}: a schema-version-{meta['schema_version']} journal (an earlier shoectl's) is read but "
            f"not continued: migrate it into a new file (shoectl journal migrate {path} NEW) or start "
            "a new journal")
    if meta["table_id"] != table_id:
        raise JournalError(f"{path}: the journal belongs to table {meta['table_id']!r}, not {table_id!r}")
    algorithm = meta["hash_algorithm"]
    if algorithm == HMAC_SHA256 and hasher.algorithm != HMAC_SHA256:
        raise JournalError(f"{path}: the journal is HMAC-protected{key_id_shown(meta.get('key_id'))}: an HMAC key is required")
    if algorithm != HMAC_SHA256 and hasher.algorithm == HMAC_SHA256:
        raise JournalError(f"{path}: the journal was created without an HMAC key; it cannot be continued with one: "
                           "a keyed table starts a new journal (docs/deployment.md, Starting a table afresh)")
    if algorithm == HMAC_SHA256 and meta.get("key_id") != hasher.key_id:
        raise JournalError(f"{path}: wrong HMAC key (key id {hasher.key_id}; the journal's is {meta.get('key_id')})")
