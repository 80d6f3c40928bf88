"""The central store (controller.floor.store) on a real PostgreSQL with a real table's journal:
insert-if-absent, duplicates, second bodies refused, the incremental chain check, gaps alarmed
and closed, what does not fit the chain never stored, HMAC hashes checked with the table's key."""
from __future__ import annotations

import hashlib
import json

import pytest

from controller.floor.reading import open_alarms, verify_table
from cli_run import run
from controller.floor.schema import SCHEMA_VERSION, migrate
from controller.floor.store import FloorStore, connect
from controller.journal.chain import Hasher
from floor.helpers import query, stored_lines
from floor.journals import TableJournal, forge_next, items, run_table


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=8)


@pytest.fixture(scope="module")
def hmac_journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("hmac-table"), table_id="T2", rounds=3, hmac=True)


def lines_of(store: FloorStore, table: str = "T1") -> list[str]:
    rows = store.conn.execute("SELECT line FROM entries WHERE table_id = %s ORDER BY seq", (table,)).fetchall()
    store.conn.commit()
    return [r[0] + "\n" for r in rows]


def alarms(store: FloorStore) -> list[tuple[str, int | None, bool]]:
    rows = store.conn.execute("SELECT kind, seq, open FROM floor_alarms ORDER BY id").fetchall()
    store.conn.commit()
    return rows


def test_a_journal_in_batches_is_stored_byte_for_byte_and_its_chain_checked(store: FloorStore,
                                                                            journal: TableJournal) -> None:
    lines = journal.lines
    for start in range(0, len(lines), 100):
        result = store.add(items(lines[start:start + 100]))
        assert (result.stored, result.duplicates, result.refused) == (len(lines[start:start + 100]), 0, 0)
    assert lines_of(store) == lines
    assert result.positions == {"T1": len(lines)}
    assert alarms(store) == []
    assert verify_table(store.conn, "T1", None).ok


def test_a_duplicate_is_harmless_and_changes_nothing(store: FloorStore, journal: TableJournal) -> None:
    store.add(items(journal.lines))
    again = store.add(items(journal.lines[:50] + journal.lines[:50]))
    assert (again.stored, again.duplicates, again.refused) == (0, 100, 0)
    assert lines_of(store) == journal.lines
    assert alarms(store) == []


def test_a_second_body_under_a_stored_key_is_refused_alarmed_and_never_overwrites(store: FloorStore,
                                                                                 journal: TableJournal) -> None:
    store.add(items(journal.lines))
    forged = forge_next(journal.lines[9], operator="mallory")  # entry 10, another body
    result = store.add(items([forged]))
    assert (result.stored, result.refused, result.forged) == (0, 1, {"T1": [10]})  # forged: for the log
    assert lines_of(store) == journal.lines
    assert alarms(store) == [("forgery", 10, True)]
    refused = store.conn.execute("SELECT seq, line FROM rejected_entries").fetchall()
    assert refused == [(10, forged.rstrip("\n"))]
    store.add(items([forged]))  # the same forgery again: counted on the same alarm
    assert store.conn.execute("SELECT count FROM floor_alarms").fetchone() == (2,)
    noise = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(300))  # compresses badly
    long = forge_next(journal.lines[9], payload_note=noise)  # longer than a btree row may be
    assert store.add(items([long])).refused == 1
    assert store.conn.execute("SELECT count(*), max(count) FROM floor_alarms").fetchone() == (1, 3)
    assert lines_of(store) == journal.lines


def test_a_gap_is_alarmed_then_closed_when_filled_and_the_chain_verifies_across_it(store: FloorStore,
                                                                                  journal: TableJournal) -> None:
    lines = journal.lines
    first = store.add(items(lines[:50] + lines[60:]))
    assert first.positions == {"T1": 50}  # the chain waits at the gap; the entries after it are kept
    assert alarms(store) == [("gap", 51, True)]
    assert open_alarms(store.conn)[0]["detail"] == "entries 51-60 are missing (entry 61 arrived)"
    filled = store.add(items(lines[50:60]))
    assert filled.positions == {"T1": len(lines)}
    assert alarms(store) == [("gap", 51, False)]
    assert lines_of(store) == lines


def test_a_gap_alarm_counts_every_entry_missing_not_only_its_first_run(store: FloorStore,
                                                                     journal: TableJournal) -> None:
    """Entries 51-60, 71 and 81-85 lost: the alarm at the chain's gap says all 16, not only the
    first run (a floorperson judging the loss saw 10), and follows as the runs are filled."""
    lines = journal.lines
    assert len(lines) > 90
    store.add(items(lines[:50] + lines[60:70] + lines[71:80] + lines[85:90]))
    assert open_alarms(store.conn)[0]["detail"] == ("entries 51-60 are missing (entry 61 arrived); "
                                                    "6 more entries are missing between it and entry 90, "
                                                    "the last that arrived")
    store.add(items(lines[50:60]))
    assert [(a["seq"], a["detail"]) for a in open_alarms(store.conn)] == [
        (71, "entry 71 is missing (entry 72 arrived); 5 more entries are missing between it and entry 90, "
             "the last that arrived")]
    store.add(items(lines[70:71] + lines[80:84]))
    assert [(a["seq"], a["detail"]) for a in open_alarms(store.conn)] == [
        (85, "entry 85 is missing (entry 86 arrived)")]


def test_an_entry_that_does_not_fit_the_chain_is_never_stored(store: FloorStore, journal: TableJournal) -> None:
    lines = journal.lines
    store.add(items(lines[:20]))
    stranger = forge_next(lines[20], prev_hash="ab" * 32)  # entry 21 naming a predecessor that is not 20
    result = store.add(items([stranger]))
    assert result.positions == {"T1": 20}
    assert lines_of(store) == lines[:20]
    assert alarms(store) == [("chain_break", 21, True)]
    store.add(items(lines[20:]))  # the table's own entry 21 and the rest
    assert lines_of(store) == lines
    assert verify_table(store.conn, "T1", None).ok


def test_a_forged_body_that_came_first_gives_way_to_the_body_the_chain_confirms(store: FloorStore,
                                                                               journal: TableJournal) -> None:
    """Without the table's key a forger can give entry 21 a valid SHA-256 over the right prev_hash;
    entry 22, which names the table's own entry 21, settles it."""
    lines = journal.lines
    store.add(items(lines[:20]))
    forged = forge_next(lines[20], operator="mallory")
    store.add(items([forged]))
    assert lines_of(store) == lines[:20] + [forged]  # nothing yet says it is not the table's
    store.add(items([lines[20]]))
    store.add(items(lines[21:]))
    assert lines_of(store) == lines
    assert ("forgery", 21, True) in alarms(store)
    assert verify_table(store.conn, "T1", None).ok


def test_an_entry_that_named_a_body_not_yet_received_is_taken_back_when_that_body_arrives(
        store: FloorStore, journal: TableJournal) -> None:
    """The same forgery in the other order: entry 22 arrives before the table's own 21. It does
    not fit the forged 21 and is refused; the table's 21, arriving last, is the body 22 named, so
    the forged one gives way and 22 is taken back from the refused bodies."""
    lines = journal.lines
    store.add(items(lines[:20]))
    store.add(items([forge_next(lines[20], operator="mallory")]))
    store.add(items(lines[21:]))
    assert lines_of(store) == lines[:20] + [forge_next(lines[20], operator="mallory")] + lines[22:]
    store.add(items([lines[20]]))
    assert lines_of(store) == lines
    assert ("forgery", 21, True) in alarms(store)
    assert verify_table(store.conn, "T1", None).ok


@pytest.mark.parametrize("order", ["entry 1 before 2", "entry 1 last"])
def test_a_forged_plain_sha256_entry_1_does_not_take_an_hmac_tables_chain(store: FloorStore, hmac_journal: TableJournal,
                                                                          order: str) -> None:
    """Without the key, a table whose entry 1 carries its plain SHA-256 has every hash recomputed.
    A forger who publishes such an entry 1 ahead of an HMAC table must not turn the table's own
    entries (HMAC hashes) into misfits: entry 2 names the table's entry 1, which settles it."""
    lines = hmac_journal.lines
    forged = forge_next(lines[0], operator="mallory")  # a plain SHA-256 over the genesis hash
    store.add(items([forged]))
    if order == "entry 1 before 2":
        store.add(items(lines))
    else:
        store.add(items(lines[1:]))
        store.add(items(lines[:1]))
    assert lines_of(store, "T2") == lines
    assert ("forgery", 1, True) in alarms(store)
    assert verify_table(store.conn, "T2", Hasher(hmac_journal.key_file.read_bytes())).ok
    key = Hasher(hmac_journal.key_file.read_bytes())
    following = forge_next(lines[-1], seq_delta=1, prev_hash=json.loads(lines[-1])["hash"], hasher=key)
    store.add(items([following]))  # the table's next entry, HMAC as its others: not checked as SHA-256
    assert lines_of(store, "T2") == lines + [following]


def test_with_the_tables_key_a_hash_that_is_not_its_hmac_is_refused(floor_db: str,
                                                                    hmac_journal: TableJournal) -> None:
    lines = hmac_journal.lines
    forged = forge_next(lines[5], operator="mallory")  # SHA-256 over the right prev_hash: no key needed
    keyed = FloorStore.open(floor_db, {"T2": Hasher(hmac_journal.key_file.read_bytes())})
    try:
        keyed.add(items(lines[:5] + [forged]))
        assert lines_of(keyed, "T2") == lines[:5]
        assert alarms(keyed) == [("bad_hash", 6, True)]
        keyed.add(items(lines))
        assert lines_of(keyed, "T2") == lines
        assert verify_table(keyed.conn, "T2", Hasher(hmac_journal.key_file.read_bytes())).ok
    finally:
        keyed.close()


def test_with_the_tables_key_a_forged_entry_after_a_gap_is_never_stored(floor_db: str,
                                                                        hmac_journal: TableJournal) -> None:
    """docs/floor.md: "(A table's HMAC key on the collector closes that door at once: the forged body
    fails its hash, `bad_hash`, and is never stored.)" An entry that arrives after a gap was stored
    to wait under the `gap` alarm, the forged one too, and read as the table's last entry (a
    security review): its own hash is checked over its own prev_hash on arrival; the table's own
    entries after the gap still wait, and the gap closes when it is filled."""
    lines = hmac_journal.lines
    forged = forge_next(lines[11], operator="forger")  # entry 12, 11 not yet arrived, plain SHA-256
    keyed = FloorStore.open(floor_db, {"T2": Hasher(hmac_journal.key_file.read_bytes())})
    try:
        result = keyed.add(items(lines[:10] + [forged, lines[12]]))
        assert (result.stored, [(a.seq, a.alarm, a.new) for a in result.set_aside]) == (12, [(12, "bad_hash", True)])
        assert lines_of(keyed, "T2") == lines[:10] + [lines[12]]  # entry 13 waits after the gap
        assert ("bad_hash", 12, True) in alarms(keyed)
        keyed.add(items(lines))
        assert lines_of(keyed, "T2") == lines
        assert verify_table(keyed.conn, "T2", Hasher(hmac_journal.key_file.read_bytes())).ok
        assert [(kind, seq) for kind, seq, is_open in alarms(keyed) if is_open] == [("bad_hash", 12)]
    finally:
        keyed.close()


def test_without_the_key_only_the_links_are_checked(store: FloorStore, hmac_journal: TableJournal) -> None:
    lines = hmac_journal.lines
    forged = forge_next(lines[5], operator="mallory")
    store.add(items(lines[:5] + [forged]))
    assert lines_of(store, "T2") == lines[:5] + [forged]  # the links hold: only the key tells
    assert not verify_table(store.conn, "T2", Hasher(hmac_journal.key_file.read_bytes())).ok


def test_a_version_1_store_is_migrated_to_the_current_version_and_keeps_its_rows(capsys, floor_db: str,
                                                                                  journal: TableJournal) -> None:
    """Version 2 adds the indexes `floor status` reads by (kind per table) instead of scanning
    every entry, version 3 who closed an alarm by hand, version 4 what the first programs'
    version 1 lacked (tests/floor/test_store_earlier_programs.py); the collector (``FloorStore.open``)
    migrates a store of version 1 in place, its rows and open alarms kept."""
    conn = connect(floor_db)
    migrate(conn, target=1)
    FloorStore(conn).add(items(journal.lines[:3] + journal.lines[5:]))  # a gap: an open alarm
    conn.close()
    indexes = "SELECT indexname FROM pg_indexes WHERE tablename = 'entries' ORDER BY 1"
    assert query(floor_db, indexes) == [("entries_pkey",)]
    code, _, err = run(capsys, "floor", "status", "--db", floor_db)
    assert code == 2 and "holds floor schema version 1, this program reads 4 (`shoectl floor collect`" in err
    FloorStore.open(floor_db).close()
    assert query(floor_db, "SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)] == [(4,)]
    assert query(floor_db, indexes) == [("entries_by_kind_seq",), ("entries_by_kind_time",), ("entries_pkey",)]
    assert query(floor_db, "SELECT kind, seq, open, closed_by FROM floor_alarms") == [("gap", 4, True, None)]
    assert stored_lines(floor_db) == journal.lines[:3] + journal.lines[5:]
    code, out, _ = run(capsys, "floor", "status", "--db", floor_db)
    assert code == 0 and out.startswith(f"T1: last entry {len(journal.lines)} ")


def test_a_tables_clock_step_is_an_open_alarm_in_words(store: FloorStore, tmp_path) -> None:
    """A review of clocks: a table whose clock stepped an hour back was visible in its own replay
    only; the floor, which matches tables to the cameras, saw nothing."""
    from datetime import datetime, timedelta, timezone

    from controller.journal import Journal, JournalReader

    class Clocks:
        def __init__(self) -> None:
            self.wall, self.steady = datetime(2026, 12, 6, 11, tzinfo=timezone.utc), 1000.0

        def __call__(self) -> datetime:
            self.wall += timedelta(milliseconds=1)
            self.steady += 0.001
            return self.wall

    clocks = Clocks()
    with Journal.open(tmp_path / "j.db", table_id="T1", clock=clocks, steady=lambda: clocks.steady) as journal:
        journal.append("note", {"text": "before"})
        clocks.wall -= timedelta(hours=1)
        journal.append("note", {"text": "after"})
    with JournalReader.open(tmp_path / "j.db") as reader:
        lines = [e.to_json_line() for e in reader.entries()]
    step_seq = next(json.loads(line)["seq"] for line in lines if json.loads(line)["kind"] == "clock_step")
    store.add(items(lines))
    assert alarms(store) == [("clock_step", step_seq, True)]
    detail = store.conn.execute("SELECT detail FROM floor_alarms").fetchone()[0]
    store.conn.commit()
    assert detail.startswith(f"entry {step_seq}: the table's clock stepped back 1 h 0 min 0.0 s (it should have said "
                             "2026-12-06 11:00:00 UTC)"), detail
    store.add(items(lines))  # the same entries again: no second alarm
    assert alarms(store) == [("clock_step", step_seq, True)]


@pytest.fixture(scope="module")
def long_journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("long-table"), rounds=32)


def test_more_entries_than_a_page_behind_a_filled_gap_are_all_checked(store: FloorStore,
                                                                      long_journal: TableJournal) -> None:
    """docs/floor.md: a gap alarm "closes by itself once the gap is filled ... and the chain verifies
    across it": the entries waiting behind it are checked page after page, not the first page only
    (more than a thousand wait behind a gap filled by a backfill, or by a collector's batch)."""
    lines = long_journal.lines
    assert len(lines) > 1100
    store.add(items(lines[:10] + lines[11:]))
    assert alarms(store) == [("gap", 11, True)]
    filled = store.add(items(lines[10:11]))
    assert filled.positions == {"T1": len(lines)}
    assert alarms(store) == [("gap", 11, False)]
    assert verify_table(store.conn, "T1", None).ok


def test_a_gap_filled_in_part_leaves_only_the_alarm_of_what_is_still_missing(store: FloorStore,
                                                                             journal: TableJournal) -> None:
    """docs/floor.md: the alarm closes once its gap is filled, "and the next missing run, if any,
    opens its own": entry 51 arrives late, 52 is still missing; no alarm says 51 is."""
    lines = journal.lines
    store.add(items(lines[:50] + lines[52:]))
    store.add(items(lines[50:51]))
    assert [(a["seq"], a["detail"]) for a in open_alarms(store.conn)] == [(52, "entry 52 is missing (entry 53 arrived)")]


def test_an_open_gap_is_one_alarm_counted_once_however_many_batches_follow(store: FloorStore,
                                                                          journal: TableJournal) -> None:
    """``floor alarms`` prints an alarm's count as how many times the same thing happened: a gap
    left open while the table deals on is one loss, not one more with every batch."""
    lines = journal.lines
    assert len(lines) > 120
    store.add(items(lines[:50] + lines[52:60]))
    for start in range(60, 120, 10):
        store.add(items(lines[start:start + 10]))
    assert [(a["seq"], a["count"]) for a in open_alarms(store.conn)] == [(51, 1)]


def test_a_line_stored_with_a_carriage_return_by_an_earlier_version_is_a_duplicate_not_a_forgery(
        store: FloorStore, journal: TableJournal) -> None:
    """A store written before lines were trimmed may hold a line ending in CR (a backfill of a CRLF
    export): the same entry delivered again is "a duplicate ...: nothing happens" (docs/floor.md),
    not "a second, different body"."""
    lines = journal.lines
    store.add(items(lines[:20]))
    store.conn.execute("UPDATE entries SET line = line || E'\\r' WHERE table_id = 'T1' AND seq = 5")
    store.conn.commit()
    again = store.add(items(lines[4:5]))
    assert (again.stored, again.duplicates, again.refused) == (0, 1, 0)
    assert open_alarms(store.conn) == []


def test_with_the_tables_key_its_own_entry_after_a_forged_one_in_the_same_batch_is_stored(
        floor_db: str, hmac_journal: TableJournal) -> None:
    """A forged body of entry 11 ahead of the table's own entry 11 in one batch: the forged one is
    refused on arrival and the table's own is stored in its place; it was refused as a second body
    of a row the check had then removed, and every later entry waited behind that gap (a review
    of the arrival check)."""
    lines = hmac_journal.lines
    forged = forge_next(lines[10], operator="forger")  # entry 11, plain SHA-256
    keyed = FloorStore.open(floor_db, {"T2": Hasher(hmac_journal.key_file.read_bytes())})
    try:
        result = keyed.add(items(lines[:10] + [forged, lines[10], lines[11]]))
        assert (result.positions, result.forged) == ({"T2": 12}, {})
        assert lines_of(keyed, "T2") == lines[:12]
        assert [(kind, seq) for kind, seq, is_open in alarms(keyed) if is_open] == [("bad_hash", 11)]
    finally:
        keyed.close()


def test_with_the_tables_key_a_stored_line_arriving_again_is_a_duplicate(floor_db: str,
                                                                        hmac_journal: TableJournal) -> None:
    """A forged entry a collector without the key stored, sent again once the key is given (a
    redelivery, the same export backfilled): a duplicate, as any line the store holds, not "stored
    and set aside" while it stays stored, in `entries` and `rejected_entries` at once (a review of
    the arrival check; the chain check is what finds the stored one, as before)."""
    lines = hmac_journal.lines
    forged = forge_next(lines[10], operator="forger")
    keyless = FloorStore.open(floor_db)
    try:
        keyless.add(items(lines[:10] + [forged]))
    finally:
        keyless.close()
    keyed = FloorStore.open(floor_db, {"T2": Hasher(hmac_journal.key_file.read_bytes())})
    try:
        result = keyed.add(items([forged]))
        assert (result.stored, result.duplicates, result.set_aside) == (0, 1, [])
        stored = {r[0] for r in keyed.conn.execute("SELECT line FROM entries WHERE table_id = 'T2'").fetchall()}
        rejected = {r[0] for r in keyed.conn.execute("SELECT line FROM rejected_entries").fetchall()}
        keyed.conn.commit()
        assert not stored & rejected
    finally:
        keyed.close()
