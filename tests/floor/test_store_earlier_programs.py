"""Stores the floor's earlier programs wrote, taken on by this one (a review ran the programs of
every day since 2026-12-01 against one store; docs/floor.md, "The store": "a collector or a backfill
migrates an older database in one transaction").

- Version 1 was written three ways before version 2: the ``sha256`` column of ``chain_positions``
  came at 01:24, the MD5 key of ``rejected_entries`` at 01:37, and a store of either earlier shape
  records version 1 all the same. Today's collector failed at its first entry on the one
  (``column "sha256" does not exist``) and at the first second body on the other (``no unique or
  exclusion constraint matching the ON CONFLICT``), every restart: version 4 makes up for both.
- Before 2026-12-03 the floor stored any spelling of an entry whose hash fit. The table's own
  line of such an entry is the same entry ("The same key with the same line: a duplicate"), and
  the store "gives back byte for byte what the table's journal export wrote": it was alarmed as a
  forgery, and the other spelling stayed.
"""
from __future__ import annotations

import json

import pytest

from controller.floor.reading import open_alarms
from controller.floor.schema import SCHEMA_VERSION
from controller.floor.store import FloorStore, connect
from floor.helpers import query, stored_lines
from floor.journals import TableJournal, forge_next, items, run_table

_ENTRIES = """CREATE TABLE entries (
    table_id text NOT NULL, seq bigint NOT NULL CHECK (seq >= 1), ts text NOT NULL,
    ts_at timestamptz NOT NULL, kind text NOT NULL, shoe_id text, round_no bigint, device_serial text,
    device_epoch bigint, device_counter bigint, operator text, payload jsonb, prev_hash text NOT NULL,
    hash text NOT NULL, schema_version integer NOT NULL, line text NOT NULL,
    stored_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (table_id, seq))"""
_REST = (
    """CREATE TABLE rejected_entries (id bigserial PRIMARY KEY, table_id text NOT NULL, seq bigint NOT NULL,
        why text NOT NULL, line text NOT NULL, received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (table_id, seq, line))""",
    """CREATE TABLE floor_alarms (id bigserial PRIMARY KEY, table_id text NOT NULL, seq bigint, kind text NOT NULL,
        detail text NOT NULL, first_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
        last_seen timestamptz NOT NULL DEFAULT clock_timestamp(), count bigint NOT NULL DEFAULT 1,
        open boolean NOT NULL DEFAULT true, closed_at timestamptz, closed_why text)""",
    "CREATE UNIQUE INDEX floor_alarms_open ON floor_alarms (table_id, kind, coalesce(seq, 0)) WHERE open",
    """CREATE TABLE dropped_messages (table_id text NOT NULL, reason text NOT NULL, count bigint NOT NULL DEFAULT 0,
        last_detail text NOT NULL, last_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (table_id, reason))""",
    "CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())",
    "INSERT INTO schema_version (version) VALUES (1)",
)
# commit cd28ad88 (2026-12-01 01:21): chain_positions without sha256
FIRST = (_ENTRIES, "CREATE INDEX entries_shoe ON entries (table_id, shoe_id, seq)",
         """CREATE TABLE chain_positions (table_id text PRIMARY KEY, last_seq bigint NOT NULL, last_hash text NOT NULL,
             updated_at timestamptz NOT NULL DEFAULT clock_timestamp())""", *_REST)
# commit 999a8da9 (2026-12-01 01:32): sha256 there, rejected bodies still keyed by the whole line
SECOND = (_ENTRIES, "CREATE INDEX entries_shoe ON entries (table_id, shoe_id, seq)",
          """CREATE TABLE chain_positions (table_id text PRIMARY KEY, last_seq bigint NOT NULL, last_hash text NOT NULL,
              sha256 boolean, updated_at timestamptz NOT NULL DEFAULT clock_timestamp())""", *_REST)


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=3)


def _made_by(floor_db: str, statements: tuple[str, ...]) -> None:
    conn = connect(floor_db)
    with conn.transaction():
        for statement in statements:
            conn.execute(statement)
    conn.close()


def _edited_keeping_its_hash(line: str) -> str:
    """The entry of ``line`` with its timestamp moved a microsecond and its hash left as it was:
    links that fit, a hash that does not (what only a recomputed SHA-256 finds)."""
    obj = json.loads(line)
    obj["ts"] = obj["ts"][:25] + str((int(obj["ts"][25]) + 1) % 10) + obj["ts"][26:]
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


@pytest.mark.parametrize("shape", [FIRST, SECOND], ids=["cd28ad88", "999a8da9"])
def test_a_version_1_store_of_the_first_programs_takes_entries_and_second_bodies_once_migrated(
        floor_db: str, journal: TableJournal, shape: tuple[str, ...]) -> None:
    _made_by(floor_db, shape)
    lines = journal.lines
    store = FloorStore.open(floor_db)
    try:
        assert query(floor_db, "SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)] == [(4,)]
        assert store.add(items(lines[:20])).stored == 20
        assert store.add(items([forge_next(lines[9], payload_forged=True)])).refused == 1
        store.add(items(lines[20:]))
    finally:
        store.close()
    assert stored_lines(floor_db) == lines
    assert query(floor_db, "SELECT kind, seq FROM floor_alarms WHERE open") == [("forgery", 10)]
    assert query(floor_db, "SELECT count(*) FROM rejected_entries") == [(1,)]
    assert query(floor_db, "SELECT sha256 FROM chain_positions") == [(True,)]


def test_a_position_without_its_sha256_mark_takes_it_from_entry_1_before_it_checks_on(
        floor_db: str, journal: TableJournal) -> None:
    """Version 4 adds ``sha256`` with nothing in it to a first program's store that holds entries:
    without it the chain was checked on by its links alone, and an entry edited with its hash left
    as it was would be stored as the table's."""
    lines = journal.lines
    store = FloorStore.open(floor_db)
    try:
        store.add(items(lines[:20]))
        store.conn.execute("UPDATE chain_positions SET sha256 = NULL")
        store.conn.commit()
        store.add(items([_edited_keeping_its_hash(lines[20])]))
    finally:
        store.close()
    assert query(floor_db, "SELECT sha256 FROM chain_positions") == [(True,)]
    assert [kind for kind, in query(floor_db, "SELECT kind FROM floor_alarms WHERE open")] == ["bad_hash"]
    assert stored_lines(floor_db) == lines[:20]


@pytest.mark.parametrize("seq", [5, 1])
def test_the_tables_own_line_of_an_entry_an_earlier_program_stored_spelled_otherwise_takes_its_place(
        floor_db: str, store: FloorStore, journal: TableJournal, seq: int) -> None:
    """Entry 1 too: a table's entry 1 unlike the stored one is a new journal's, and the same entry
    spelled otherwise is not."""
    lines = journal.lines
    store.add(items(lines[:20]))
    # what the program of 2026-12-01 02:20 (08a3831c) stored for a publisher that spelled it with spaces
    spelled = json.dumps(json.loads(lines[seq - 1]), ensure_ascii=False, separators=(", ", ": "))
    store.conn.execute("UPDATE entries SET line = %s WHERE table_id = 'T1' AND seq = %s", (spelled, seq))
    store.conn.commit()
    again = store.add(items(lines[seq - 1:seq]))
    assert (again.refused, again.duplicates, again.new_journal) == (0, 1, 0)
    assert open_alarms(store.conn) == []
    assert stored_lines(floor_db) == lines[:20]
