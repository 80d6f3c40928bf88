"""A table started afresh under the same table id publishes a new journal (seq again from 1, a new
chain) while the store holds its first journal. The store keeps one journal per table id: the
new journal is ONE open ``new_journal`` alarm that says so in words, its entries are refused
(counted on that alarm, kept in ``rejected_entries``) and none is stored; no ``forgery`` alarm;
the stored journal stays byte for byte and verifies. A second body of one entry that names the
stored chain is still a forgery. Against a real PostgreSQL and, for the collector, a real
Mosquitto under the documented ACL; both journals written by ``shoectl run``."""
from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from controller.floor.broker import stop_client
from controller.floor.reading import verify_table
from controller.floor.new_journal import NEW_JOURNAL_WHY
from controller.floor.store import FloorStore
from cli_run import run
from floor.collector_processes import publish, publisher, start
from floor.helpers import SHOECTL, query, stored_lines
from floor.journals import TableJournal, forge_next, items, run_table
from services.mosquitto import Mosquitto

ALARMS = "SELECT kind, seq, open, count FROM floor_alarms ORDER BY id"


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    """Table T1's journal of one day."""
    return run_table(tmp_path_factory.mktemp("day1"), rounds=3, seed=5)


@pytest.fixture(scope="module")
def second(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    """The same table id's next journal (the first moved aside): longer than the first, so that
    some of its entries have a seq the store does not hold yet."""
    return run_table(tmp_path_factory.mktemp("day2"), rounds=6, seed=9)


def test_the_two_journals_are_what_this_test_needs(first: TableJournal, second: TableJournal) -> None:
    a, b = json.loads(first.lines[0]), json.loads(second.lines[0])
    assert a["table_id"] == b["table_id"] == "T1" and a["seq"] == b["seq"] == 1
    assert a["prev_hash"] == b["prev_hash"] == "0" * 64 and a["hash"] != b["hash"]
    assert len(second.lines) > len(first.lines) > 2


def test_a_new_journal_of_a_stored_table_is_one_alarm_and_changes_nothing(store: FloorStore, floor_db: str,
                                                                          first: TableJournal,
                                                                          second: TableJournal) -> None:
    for start_at in range(0, len(first.lines), 100):
        store.add(items(first.lines[start_at:start_at + 100]))
    assert stored_lines(floor_db) == first.lines
    new = second.lines
    totals = {"stored": 0, "duplicates": 0, "refused": 0, "new_journal": 0}
    said: list[str] = []
    # in batches, with a feed's restart in the middle (entries 31-60 again)
    for part in (new[:60], new[30:60], new[60:150], new[150:]):
        result = store.add(items(part))
        for key in totals:
            totals[key] += getattr(result, key)
        said += result.new_journals
    assert totals == {"stored": 0, "duplicates": 0, "refused": len(new) + 30, "new_journal": len(new) + 30}
    assert stored_lines(floor_db) == first.lines  # byte for byte
    assert query(floor_db, ALARMS) == [("new_journal", 1, True, len(new))]  # one alarm; each entry counted once
    ts_new, ts_old = json.loads(new[0])["ts"], json.loads(first.lines[0])["ts"]
    assert said == [f"T1 publishes another journal (its first entry, written {ts_new}, differs from the stored "
                    f"journal's, written {ts_old}): the store keeps one journal per table id, so its entries are not "
                    f"stored (each counted on this alarm). Either the table was started afresh under its id, or one "
                    f"of the two is not the table's (without the table's key, a forger with its broker account who "
                    f"published first is stored as the table's): check the stored journal against the table's own "
                    f"(`shoectl journal verify` at the table, then `shoectl floor verify --expect T1=SEQ:HASH` with "
                    f"its figures); if the stored one is the table's, give the table a new table id to store the "
                    f"other"]
    assert query(floor_db, "SELECT detail FROM floor_alarms") == [(said[0],)]
    rejected = query(floor_db, "SELECT seq, why, line FROM rejected_entries ORDER BY seq")
    assert [(seq, why) for seq, why, _ in rejected] == [(n, NEW_JOURNAL_WHY) for n in range(1, len(new) + 1)]
    assert [line + "\n" for _, _, line in rejected] == new  # kept for the auditors, never read as entries
    assert query(floor_db, "SELECT last_seq FROM chain_positions") == [(len(first.lines),)]
    verdict = verify_table(store.conn, "T1", None)
    store.conn.commit()
    assert verdict.ok and verdict.entries == verdict.last_seq == len(first.lines)

    # a genuine forgery (a second body naming the stored entry 9) is still one
    forged = forge_next(first.lines[9], operator="mallory")
    assert store.add(items([forged])).refused == 1
    assert query(floor_db, ALARMS) == [("new_journal", 1, True, len(new)), ("forgery", 10, True, 1)]
    # and the stored journal goes on where it ended (the table's next entry, SHA-256 like its others)
    following = forge_next(first.lines[-1], seq_delta=1, prev_hash=json.loads(first.lines[-1])["hash"])
    assert store.add(items([following])).stored == 1
    assert stored_lines(floor_db) == first.lines + [following]
    assert query(floor_db, "SELECT last_seq FROM chain_positions") == [(len(first.lines) + 1,)]


def test_a_collector_says_a_new_journal_once_and_stores_none_of_it(mosquitto: Mosquitto, floor_db: str,
                                                                   first: TableJournal, second: TableJournal,
                                                                   tmp_path: Path, collectors) -> None:
    collector = start(collectors, mosquitto, floor_db, tmp_path)
    client = publisher(mosquitto)
    new = second.lines
    try:
        publish(client, first.lines)
        collector.wait(lambda: len(stored_lines(floor_db)) == len(first.lines), "the first journal stored")
        publish(client, new[:100])
        publish(client, new[:20])  # a restarted feed publishes again what it had not saved
        publish(client, new[100:])
        collector.wait(lambda: query(floor_db, "SELECT count(*) FROM rejected_entries") == [(len(new),)]
                       and query(floor_db, "SELECT count FROM floor_alarms") == [(len(new),)],
                       "the new journal's entries refused")
    finally:
        stop_client(client)
    assert collector.stop() == 128 + signal.SIGTERM
    assert stored_lines(floor_db) == first.lines
    assert query(floor_db, ALARMS) == [("new_journal", 1, True, len(new))]
    err = collector.stderr()
    assert err.count("a new journal of a known table") == 1, err
    assert "forgery" not in err and "Traceback" not in err

    verify = subprocess.run([*SHOECTL, "floor", "verify", "--db", floor_db, "--table", "T1"],
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"T1: OK: {len(first.lines)} entries" in verify.stdout
    status = subprocess.run([*SHOECTL, "floor", "status", "--db", floor_db], capture_output=True, text=True)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert len(lines) == 3 and lines[2].startswith("today: the gaming day from "), status.stdout  # the table's line, its one alarm, the day
    assert lines[0].startswith(f"T1: last entry {len(first.lines)} at ") and "1 new_journal" in lines[0]
    assert lines[1].startswith(f"alarm T1 entry 1: new_journal ({len(new)} times): T1 publishes another journal "
                               f"(its first entry, written {json.loads(new[0])['ts']}, differs from the stored "
                               f"journal's, written {json.loads(first.lines[0])['ts']}): the store keeps one journal "
                               f"per table id"), lines[1]
    assert "forgery" not in status.stdout and "Traceback" not in status.stderr


def test_a_backfill_of_a_new_journal_says_what_it_is(capsys, floor_db: str, first: TableJournal,
                                                     second: TableJournal) -> None:
    """`floor backfill` of the new journal's export counted its entries as "refused (second
    bodies)", the words of a forgery: it names them as a new journal's, refused under its alarm."""
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(first.export_file))
    assert code == 0, err
    n = len(second.lines)
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(second.export_file))
    assert code == 0, err
    assert (f"{n} entries: 0 stored, 0 already stored, 0 refused (second bodies), {n} of a new journal of a "
            "stored table (not stored: its new_journal alarm)") in out, out
    assert stored_lines(floor_db) == first.lines


@pytest.mark.parametrize("stamp", [None, "2026-01-01T00:00:00.000000Z"])
def test_a_forgers_journal_stored_first_is_never_advised_away(store: FloorStore, floor_db: str, first: TableJournal,
                                                              capsys, stamp: str | None) -> None:
    """A forger with the table's broker account, without an HMAC key on the collector, publishes
    a chain from entry 1 (the table's first entries re-chained; its own time or the table's) before
    the table's own: the forger's is stored and the table's own refused as "a new journal", and the
    alarm told staff to give the table a new table id, which leaves the forgery standing (a security
    review; then a review of the first mend, which went by the times, which a forger chooses). The
    alarm says that either the table started afresh or one of the two is not the table's, and how to
    tell; `floor verify --expect` with the table's own figures fails."""
    forged, prev = [], "0" * 64
    for line in first.lines[:5]:
        forged.append(forge_next(line, prev_hash=prev, operator="forger", **({"ts": stamp} if stamp else {})))
        prev = json.loads(forged[-1])["hash"]
    store.add(items(forged))  # the forger, first
    [said] = store.add(items(first.lines)).new_journals  # then the table's own journal, whole
    assert "Either the table was started afresh under its id, or one of the two is not the table's" in said, said
    assert "`shoectl floor verify --expect T1=SEQ:HASH` with its figures" in said
    assert said.endswith("if the stored one is the table's, give the table a new table id to store the other")
    last = json.loads(first.lines[-1])
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--expect", f"T1={last['seq']}:{last['hash']}")
    assert code == 1, out
