"""A table's new journal (docs/floor.md, "A table's new journal") whatever the order its entries
reach the store in: shuffled, backwards (its entry 1 last), in batches committed out of turn as
two ``--share`` collectors commit them, by two connections at once, interleaved with the table's
first journal going on, and through real collectors on a real Mosquitto (two sharing the work, or
one fed out of order). The result is always the documented one: ONE open ``new_journal`` alarm
counting each of the new journal's entries once, none of them stored, every alarm raised for them
before they were recognised closed as withdrawn, the stored journal byte for byte and verifying.
Against a real PostgreSQL; both journals written by ``shoectl run``."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from controller.floor.broker import stop_client
from controller.floor.reading import verify_table
from controller.floor.new_journal import NEW_JOURNAL_WHY
from controller.floor.store import FloorStore
from floor.collector_processes import publish, publisher, start
from floor.helpers import SHOECTL, query, stored_lines
from floor.journals import TableJournal, forge_next, items, run_table
from services.mosquitto import Mosquitto

OPEN = "SELECT kind, seq, open, count FROM floor_alarms WHERE open ORDER BY id"
CLOSED = "SELECT kind, closed_why FROM floor_alarms WHERE NOT open"


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("day1"), rounds=3, seed=5)


@pytest.fixture(scope="module")
def second(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    """The same table id's next journal: longer, so that many of its entries lie beyond the first's end."""
    return run_table(tmp_path_factory.mktemp("day2"), rounds=8, seed=9)


def chunks(lines: list[str], size: int) -> list[list[str]]:
    return [lines[n:n + size] for n in range(0, len(lines), size)]


def shuffled(lines: list[str], seed: int) -> list[str]:
    out = list(lines)
    random.Random(seed).shuffle(out)
    return out


def out_of_turn(lines: list[str], size: int) -> list[list[str]]:
    """Batches of ``size`` committed pairwise the other way round (2, 1, 4, 3, ...): two collectors
    sharing the work, the second's batch committed before the first's."""
    parts = chunks(lines, size)
    for n in range(0, len(parts) - 1, 2):
        parts[n], parts[n + 1] = parts[n + 1], parts[n]
    return parts


ORDERS = {
    "shuffled, batches of 7": lambda new: chunks(shuffled(new, 3), 7),
    "shuffled, one by one": lambda new: chunks(shuffled(new, 11), 1),
    "backwards, its entry 1 last": lambda new: chunks(new[::-1], 10),
    "two collectors' batches committed out of turn": lambda new: out_of_turn(new, 20),
}


def assert_documented(db: str, store: FloorStore, first: TableJournal, second: TableJournal) -> None:
    """The documented result of a new journal, however it arrived."""
    new = second.lines
    assert stored_lines(db) == first.lines  # byte for byte: nothing of the new journal stored
    assert query(db, OPEN) == [("new_journal", 1, True, len(new))]  # one alarm, each entry counted once
    detail = query(db, "SELECT detail FROM floor_alarms WHERE open")[0][0]
    assert detail.startswith(f"T1 publishes another journal (its first entry, written {json.loads(new[0])['ts']}, "
                             f"differs from the stored journal's, written {json.loads(first.lines[0])['ts']})")
    for kind, why in query(db, CLOSED):  # raised before the entry was known as the new journal's (or a gap
        assert (kind in ("forgery", "chain_break", "gap") and why.startswith("withdrawn: ")  # the table's own
                or kind == "gap" and why.startswith("filled: ")), (kind, why)  # entries filled)
    rejected = query(db, "SELECT seq, why, line FROM rejected_entries ORDER BY seq")
    assert [(seq, why) for seq, why, _ in rejected] == [(n, NEW_JOURNAL_WHY) for n in range(1, len(new) + 1)]
    assert [line + "\n" for _, _, line in rejected] == new
    assert query(db, "SELECT last_seq FROM chain_positions") == [(len(first.lines),)]
    verdict = verify_table(store.conn, "T1", None)
    store.conn.commit()
    assert verdict.ok and verdict.entries == verdict.last_seq == len(first.lines)


def store_first(store: FloorStore, first: TableJournal) -> None:
    for part in chunks(first.lines, 100):
        store.add(items(part))
    assert stored_lines_of(store) == first.lines


def stored_lines_of(store: FloorStore) -> list[str]:
    rows = store.conn.execute("SELECT line FROM entries ORDER BY seq").fetchall()
    store.conn.commit()
    return [line + "\n" for (line,) in rows]


@pytest.mark.parametrize("order", list(ORDERS))
def test_a_new_journal_in_any_order_is_one_alarm_and_changes_nothing(store: FloorStore, floor_db: str,
                                                                     first: TableJournal, second: TableJournal,
                                                                     order: str) -> None:
    store_first(store, first)
    said: list[str] = []
    for part in ORDERS[order](second.lines):
        said += store.add(items(part)).new_journals
    assert len(said) == 1  # the collector says it once
    assert_documented(floor_db, store, first, second)

    # published again (a feed restarted), in another order: nothing changes, nothing counted again
    for part in chunks(shuffled(second.lines, 99), 13):
        result = store.add(items(part))
        assert result.stored == 0 and result.new_journals == []
    assert_documented(floor_db, store, first, second)

    # a genuine forgery (a second body naming the stored entry 9) is still one, and the stored
    # journal goes on where it ended
    assert store.add(items([forge_next(first.lines[9], operator="mallory")])).refused == 1
    assert ("forgery", 10, True, 1) in query(floor_db, OPEN)
    following = forge_next(first.lines[-1], seq_delta=1, prev_hash=json.loads(first.lines[-1])["hash"])
    assert store.add(items([following])).stored == 1
    assert stored_lines(floor_db) == first.lines + [following]


def test_the_first_journal_going_on_beside_a_shuffled_new_one_is_stored_whole(store: FloorStore, floor_db: str,
                                                                              first: TableJournal,
                                                                              second: TableJournal) -> None:
    """The table's first journal's last entries arrive among the new journal's, whose entries at
    the same seqs may have been stored first (waiting after a gap) or refused under them: once the
    new journal is recognised, the first journal's own entries stand, and it verifies whole."""
    own, tail = first.lines[:-30], first.lines[-30:]
    for part in chunks(own, 100):
        store.add(items(part))
    mixed = shuffled(second.lines[1:] + tail, 17)
    mixed.insert(len(mixed) * 2 // 3, second.lines[0])  # the new journal's entry 1 comes late
    for part in chunks(mixed, 9):
        store.add(items(part))
    assert_documented(floor_db, store, first, second)


def test_two_connections_storing_a_new_journal_at_once_keep_the_store_equal_to_the_journal(
        floor_db: str, first: TableJournal, second: TableJournal) -> None:
    """Two collectors' transactions on one table at the same time: the table's lock makes them one
    sequence, and whichever commits first, the result is the documented one."""
    stores = [FloorStore.open(floor_db) for _ in range(2)]
    try:
        store_first(stores[0], first)
        parts = chunks(second.lines, 15)
        failures: list[BaseException] = []
        go = threading.Barrier(2)

        def work(store: FloorStore, mine: list[list[str]]) -> None:
            try:
                go.wait()
                for part in mine:
                    store.add(items(part))
            except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(s, parts[n::2])) for n, s in enumerate(stores)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        assert_documented(floor_db, stores[0], first, second)
    finally:
        for s in stores:
            s.close()


def collected(db: str, first: TableJournal, second: TableJournal) -> bool:
    n = len(second.lines)
    return (query(db, "SELECT count(*) FROM rejected_entries WHERE why = %s", (NEW_JOURNAL_WHY,)) == [(n,)]
            and query(db, "SELECT count FROM floor_alarms WHERE kind = 'new_journal'") == [(n,)]
            and stored_lines(db) == first.lines)


def assert_collected(db: str, first: TableJournal, second: TableJournal) -> None:
    store = FloorStore.open(db)
    try:
        assert_documented(db, store, first, second)
    finally:
        store.close()
    verify = subprocess.run([*SHOECTL, "floor", "verify", "--db", db, "--table", "T1"], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"T1: OK: {len(first.lines)} entries" in verify.stdout


def test_two_collectors_sharing_the_work_store_none_of_a_new_journal(mosquitto: Mosquitto, floor_db: str,
                                                                    first: TableJournal, second: TableJournal,
                                                                    tmp_path: Path, collectors) -> None:
    """The floor review's case: ``--share``, small batches, the new journal published in bursts."""
    group = [start(collectors, mosquitto, floor_db, tmp_path, "--share", "floor", "--client-id", f"collector-{n}",
                   "--batch", "5") for n in (1, 2)]
    client = publisher(mosquitto)
    try:
        publish(client, first.lines)
        group[0].wait(lambda: stored_lines(floor_db) == first.lines, "the first journal stored")
        for part in chunks(second.lines, 40):
            publish(client, part)
        group[0].wait(lambda: collected(floor_db, first, second), "the new journal's entries refused")
    finally:
        stop_client(client)
    for c in group:
        assert c.stop() == 128 + signal.SIGTERM
        assert "Traceback" not in c.stderr()
    assert_collected(floor_db, first, second)


def test_one_collector_fed_a_new_journal_out_of_order_stores_none_of_it(mosquitto: Mosquitto, floor_db: str,
                                                                       first: TableJournal, second: TableJournal,
                                                                       tmp_path: Path, collectors) -> None:
    """A publisher that reorders (the floor review's scenario L): one collector, the same result."""
    collector = start(collectors, mosquitto, floor_db, tmp_path, "--batch", "8")
    client = publisher(mosquitto)
    try:
        publish(client, first.lines)
        collector.wait(lambda: stored_lines(floor_db) == first.lines, "the first journal stored")
        for part in chunks(shuffled(second.lines, 5), 25):
            publish(client, part)
        collector.wait(lambda: collected(floor_db, first, second), "the new journal's entries refused")
    finally:
        stop_client(client)
    assert collector.stop() == 128 + signal.SIGTERM
    assert "Traceback" not in collector.stderr()
    assert_collected(floor_db, first, second)
