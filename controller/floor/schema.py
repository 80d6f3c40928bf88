"""The central store's schema and its migrations (docs/floor.md, "The store").

``migrate(conn)`` brings a database to ``SCHEMA_VERSION``: it creates the ``schema_version``
table on an empty database, then applies each step above the recorded version in its own
transaction, under an advisory lock so that two collectors starting together do not race.
A database of a newer version than this program knows is refused (``StoreError``).

Tables (version 1):
- ``entries``: one row per journal entry, keyed ``(table_id, seq)``: every column of the entry,
  the payload as ``jsonb`` for queries (NULL when it holds a ``\\u0000``, which ``jsonb`` cannot),
  ``line``: the exact JSON line received (what ``journal export`` wrote, without its newline: the
  byte-exact copy every comparison and every reader uses), ``stored_at`` (the commit's time);
- ``chain_positions``: per table, the last seq up to which the chain is contiguous and checked,
  and its hash (the incremental chain check resumes there), and ``sha256``: whether entry 1's hash
  is its plain SHA-256 (then every hash is recomputed without a key; NULL until entry 1 is checked);
- ``rejected_entries``: every body refused for a key (a second body, an entry that does not
  fit the chain), kept for the auditors, never read as an entry;
- ``floor_alarms``: gaps, chain breaks, bad hashes, forgeries; open until resolved;
- ``dropped_messages``: messages that were not journal entries, counted by table and reason.

Version 2 adds indexes for ``floor status``, which otherwise scans every entry of a table:
``entries (table_id, kind, seq)`` (the latest ``resumed``, the faults since) and ``entries
(table_id, kind, ts_at)`` (the rounds of a day). Version 3 adds ``floor_alarms.closed_by``: the
database role that closed an alarm by hand (``shoectl floor alarms --close``). Version 4 makes up
for the two shapes of version 1 the first programs of the floor wrote (2026-12-01, before 01:24 and
before 01:37), which record version 1 all the same and which no step after it mended:
``chain_positions.sha256`` added where it is missing (filled from entry 1 when the table's
position is next read, ``controller.floor.chain.position``), and ``rejected_entries`` keyed by
``md5(line)`` instead of the whole line (which a long line cannot be indexed by). On any other
store it changes nothing.
"""
from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 4
_LOCK_KEY = 0x5E0EC7F100  # pg_advisory_xact_lock: one migrator at a time

_STEPS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE entries (
            table_id text NOT NULL,
            seq bigint NOT NULL CHECK (seq >= 1),
            ts text NOT NULL,
            ts_at timestamptz NOT NULL,
            kind text NOT NULL,
            shoe_id text,
            round_no bigint,
            device_serial text,
            device_epoch bigint,
            device_counter bigint,
            operator text,
            payload jsonb,
            prev_hash text NOT NULL,
            hash text NOT NULL,
            schema_version integer NOT NULL,
            line text NOT NULL,
            stored_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            PRIMARY KEY (table_id, seq))""",
        """CREATE TABLE chain_positions (
            table_id text PRIMARY KEY,
            last_seq bigint NOT NULL,
            last_hash text NOT NULL,
            sha256 boolean,
            updated_at timestamptz NOT NULL DEFAULT clock_timestamp())""",
        """CREATE TABLE rejected_entries (
            id bigserial PRIMARY KEY,
            table_id text NOT NULL,
            seq bigint NOT NULL,
            why text NOT NULL,
            line text NOT NULL,
            received_at timestamptz NOT NULL DEFAULT clock_timestamp())""",
        # md5: a btree cannot hold a long line itself (a row of an index is at most about 2.7 kB)
        "CREATE UNIQUE INDEX rejected_entries_body ON rejected_entries (table_id, seq, md5(line))",
        """CREATE TABLE floor_alarms (
            id bigserial PRIMARY KEY,
            table_id text NOT NULL,
            seq bigint,
            kind text NOT NULL,
            detail text NOT NULL,
            first_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
            last_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
            count bigint NOT NULL DEFAULT 1,
            open boolean NOT NULL DEFAULT true,
            closed_at timestamptz,
            closed_why text)""",
        "CREATE UNIQUE INDEX floor_alarms_open ON floor_alarms (table_id, kind, coalesce(seq, 0)) WHERE open",
        """CREATE TABLE dropped_messages (
            table_id text NOT NULL,
            reason text NOT NULL,
            count bigint NOT NULL DEFAULT 0,
            last_detail text NOT NULL,
            last_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
            PRIMARY KEY (table_id, reason))""",
    ),
    2: (
        "CREATE INDEX entries_by_kind_seq ON entries (table_id, kind, seq)",
        "CREATE INDEX entries_by_kind_time ON entries (table_id, kind, ts_at)",
    ),
    3: (
        # who closed an alarm by hand (`shoectl floor alarms --close`); NULL: the store itself
        "ALTER TABLE floor_alarms ADD COLUMN closed_by text",
    ),
    4: (
        # The first programs' version 1 (a review ran them: today's collector failed at its first
        # entry on the one, at the first second body on the other). Each change only where it is
        # missing: CREATE INDEX wants the right to create in the schema even when the index exists.
        """DO $$ BEGIN
            IF NOT EXISTS (SELECT FROM information_schema.columns WHERE table_schema = current_schema()
                           AND table_name = 'chain_positions' AND column_name = 'sha256') THEN
                ALTER TABLE chain_positions ADD COLUMN sha256 boolean;
            END IF;
            IF EXISTS (SELECT FROM pg_constraint WHERE conname = 'rejected_entries_table_id_seq_line_key'
                       AND conrelid = 'rejected_entries'::regclass) THEN
                ALTER TABLE rejected_entries DROP CONSTRAINT rejected_entries_table_id_seq_line_key;
            END IF;
            IF to_regclass('rejected_entries_body') IS NULL THEN
                CREATE UNIQUE INDEX rejected_entries_body ON rejected_entries (table_id, seq, md5(line));
            END IF;
        END $$""",
    ),
}


class StoreError(Exception):
    """The central store cannot be used: one line for the user (the database, and why)."""


def current_version(conn: Any) -> int:
    """The recorded schema version (0 for a database without the ``schema_version`` table)."""
    row = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return row[0] or 0


def migrate(conn: Any, target: int = SCHEMA_VERSION) -> int:
    """See the module docstring; returns the version the database had before. ``target``: an
    older version to stop at (the tests make a store of a former version with it)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        before = current_version(conn)
        if before > SCHEMA_VERSION:
            raise StoreError(f"the database holds floor schema version {before}, newer than this program's "
                             f"{SCHEMA_VERSION}: upgrade shoectl")
        if before >= target:
            # No DDL for a store already there: a collector's user that may only read and write its
            # tables opens it (a review: one without CREATE on the schema was refused).
            return before
        try:
            if before == 0:  # (an upgrade needs no right to create in the schema: its steps are the tables')
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, "
                             "applied_at timestamptz NOT NULL DEFAULT clock_timestamp())")
            for version in range(before + 1, target + 1):
                for statement in _STEPS[version]:
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
        except Exception as exc:
            if getattr(exc, "sqlstate", None) == _NO_PRIVILEGE:
                if before == 0:
                    raise StoreError(f"this database user may not create the floor store ({server_message(exc)}): "
                                     "let the database's owner run it once, or grant this user the right to create "
                                     "in the schema") from None
                # Its steps index and alter the tables: their owner's (a review: the advice to grant
                # CREATE did not help a user that had it). What else the server refused is said as it is.
                said = server_message(exc)
                advice = ("only the owner of its tables may: run `shoectl floor backfill` or `floor collect` once "
                          "as that user" if said.startswith("must be owner") else
                          "grant this user what the server names, or let the database's owner run it once")
                raise StoreError(f"this database user may not upgrade the floor store from schema version {before} "
                                 f"({said}): {advice}") from None
            raise
    return before


_NO_PRIVILEGE = "42501"  # insufficient_privilege


def server_message(exc: Exception) -> str:
    """A database error's one-line message, never the SQL text (psycopg adds ``LINE 1: CREATE
    TABLE ... ^`` to a server error's message)."""
    diag = getattr(exc, "diag", None)
    return " ".join((getattr(diag, "message_primary", None) or str(exc).split("\nLINE ", 1)[0]).split())[:300]


def require_schema(conn: Any) -> None:
    """For the readers (verify, status, rounds): the database must hold this program's schema."""
    version = current_version(conn)
    if version == 0:
        raise StoreError("the database holds no floor store yet (`shoectl floor collect` or `shoectl floor "
                         "backfill` creates it)")
    if version != SCHEMA_VERSION:
        raise StoreError(f"the database holds floor schema version {version}, this program reads "
                         f"{SCHEMA_VERSION}" + (" (`shoectl floor collect` or `shoectl floor backfill` migrates it)"
                                                if version < SCHEMA_VERSION else ""))
