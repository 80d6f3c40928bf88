"""The journal's SQLite schema: creating it in a new file, and recognising a journal (its ``meta``)
in an existing one, of either schema version.

Version 2 (written now) differs from version 1 (still read) in one column name (``device_id`` is
``device_serial``) and in the words of three input kinds (``controller.journal.vocabulary``).
``layout_of(meta)`` gives what a reader needs to read a file of either version: the SELECT of its
columns and which of its entries were written under version 1 (all of them in a version-1 file;
those a migration copied, ``meta.migrated_entries``, in a migrated one)."""
from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from controller.journal.chain import ALGORITHMS, Hasher
from controller.journal.entry import COLUMNS, Clock, format_ts, parse_ts
from controller.journal.errors import JournalError, NotAJournalError

FORMAT = "shoectl-journal"
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)
MIN_SQLITE = (3, 37, 0)  # STRICT tables
_INT64_MAX = 2**63 - 1

# The column that holds the device's serial, by schema version (the other columns kept their names).
_SERIAL_COLUMN = {1: "device_id", 2: "device_serial"}


@dataclass(frozen=True)
class Layout:
    """How to read a journal file: its schema ``version``, the column holding a device's serial,
    the SELECT of every column in ``COLUMNS`` order, and ``earlier_until``: entries 1 to it were
    written under schema version 1 (0 when none was)."""

    version: int
    serial_column: str
    select: str
    earlier_until: int

    def entry_version(self, seq: int) -> int:
        """The schema version whose words entry ``seq`` is written in."""
        return 1 if seq <= self.earlier_until else self.version


def layout_of(meta: dict[str, str]) -> Layout:
    """The ``Layout`` of a journal whose meta (as ``inspect_meta`` returns it) is ``meta``."""
    version = int(meta["schema_version"])
    serial = _SERIAL_COLUMN[version]
    columns = [serial if c == "device_serial" else c for c in COLUMNS]
    earlier = _INT64_MAX if version == 1 else int(meta.get("migrated_entries", "0"))
    return Layout(version, serial, "SELECT " + ", ".join(columns) + " FROM entries", earlier)


CURRENT = layout_of({"schema_version": str(SCHEMA_VERSION)})

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
    device_serial  TEXT,
    device_epoch   INTEGER,
    device_counter INTEGER,
    operator       TEXT,
    payload        TEXT NOT NULL,
    prev_hash      TEXT NOT NULL,
    hash           TEXT NOT NULL,
    CHECK (device_counter IS NULL OR (device_serial IS NOT NULL AND device_epoch IS NOT NULL))
) STRICT;
CREATE UNIQUE INDEX entries_device_event ON entries (device_serial, device_epoch, device_counter)
    WHERE device_counter IS NOT NULL;
CREATE INDEX entries_device_seq ON entries (device_serial, seq) WHERE device_serial IS NOT NULL;
CREATE INDEX entries_shoe_seq ON entries (shoe_id, seq) WHERE shoe_id IS NOT NULL;
CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
    BEGIN SELECT RAISE(ABORT, 'journal entries are append-only'); END;
CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
    BEGIN SELECT RAISE(ABORT, 'journal entries are append-only'); END;
"""


def check_sqlite_version() -> None:
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        raise JournalError(f"SQLite {sqlite3.sqlite_version} is too old for the journal "
                           f"(needs {'.'.join(map(str, MIN_SQLITE))} or newer)")


def inspect_meta(conn: sqlite3.Connection, path: Path | str) -> dict[str, str] | None:
    """The meta of a journal, None for an empty database; NotAJournalError for anything else.
    Empty means nothing in it at all: no schema object (a table, a view, an index, a trigger),
    user_version and application_id 0 (the journal sets no application id). A database with only
    a view, or only another program's application id, is someone else's, never made a journal."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    objects = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
    if not objects and version == 0 and application_id == 0:
        return None
    names = {name for kind, name in objects if kind == "table"}
    if "meta" not in names or "entries" not in names:
        raise NotAJournalError(f"{path}: not a journal: an SQLite database without the journal's tables")
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    except sqlite3.DatabaseError as exc:
        raise NotAJournalError(f"{path}: not a journal: unreadable meta table ({exc})") from None
    if meta.get("format") != FORMAT:
        said = "missing" if meta.get("format") is None else repr(str(meta.get("format"))[:40])
        raise NotAJournalError(f"{path}: not a journal: its meta table's format is {said}, not {FORMAT!r}")
    stated = meta.get("schema_version")
    if version not in READABLE_VERSIONS:
        newer = version > SCHEMA_VERSION
        raise NotAJournalError(
            f"{path}: journal schema version {version} is not supported (this shoectl reads versions "
            f"{' and '.join(map(str, READABLE_VERSIONS))}{'; it was written by a newer shoectl' if newer else ''})")
    if stated != str(version):
        said = "missing" if stated is None else repr(str(stated)[:40])
        raise NotAJournalError(f"{path}: not a journal: its meta table's schema version is {said}, but the "
                               f"file's SQLite header says {version} (a damaged or edited file)")
    migrated = meta.get("migrated_entries", "0")
    if not (migrated.isascii() and migrated.isdigit() and int(migrated) <= _INT64_MAX):
        raise NotAJournalError(f"{path}: not a journal: meta.migrated_entries is {migrated[:40]!r}, not a count")
    if meta.get("hash_algorithm") not in ALGORITHMS:
        raise NotAJournalError(f"{path}: not a journal: unknown hash algorithm {meta.get('hash_algorithm')!r}")
    if not meta.get("table_id"):
        raise NotAJournalError(f"{path}: not a journal: meta has no table_id")
    created = meta.get("created")
    try:  # the journal's identity with its table id: anchors and feed cursors name it
        parse_ts(created)
    except ValueError:
        said = "missing" if created is None else repr(str(created)[:40])
        raise NotAJournalError(f"{path}: not a journal: its meta table's creation time is {said}, not a journal "
                               "timestamp (a damaged or edited file)") from None
    return meta


def create_schema(conn: sqlite3.Connection, path: Path, table_id: str, hasher: Hasher, clock: Clock) -> dict[str, str]:
    meta = {
        "format": FORMAT,
        "schema_version": str(SCHEMA_VERSION),
        "table_id": table_id,
        "created": format_ts(clock()),
        "hash_algorithm": hasher.algorithm,
    }
    if hasher.key_id is not None:
        meta["key_id"] = hasher.key_id
    return create_schema_with_meta(conn, path, meta)


def set_wal_mode(conn: sqlite3.Connection, path: Path) -> None:
    """Put the database in WAL mode (kept in its file's header); JournalError where the filesystem
    cannot have it (SQLite then keeps the mode it had)."""
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise JournalError(f"{path}: cannot use WAL mode here (journal_mode stays {mode!r}); "
                           "put the journal on a local filesystem that supports it")


def create_schema_with_meta(conn: sqlite3.Connection, path: Path, meta: dict[str, str]) -> dict[str, str]:
    """Create the current schema in an empty database with this ``meta`` (which must say the
    current schema version); the meta of the journal someone else created meanwhile, if any."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if inspect_meta(conn, path) is not None:  # created meanwhile by someone else
            conn.execute("ROLLBACK")
            return inspect_meta(conn, path)  # type: ignore[return-value]
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
