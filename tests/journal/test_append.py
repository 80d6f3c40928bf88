"""The journal store's append path: append and read back, the chain carried on after a reopen, a
reader beside the writer, duplicate device events, batches, all on real SQLite files."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from controller.journal import (
    GENESIS_HASH,
    DeviceEventConflict,
    Entry,
    Journal,
    JournalError,
    JournalReader,
    JournalWriteError,
    PayloadError,
    Record,
    verify,
)

from tampering import rows

from .conftest import fill

# --- append and read back ----------------------------------------------------------------------


def test_append_and_read_back(journal: Journal) -> None:
    a = journal.append("shoe.loaded", {"decks": 8, "name": "Mini ☘"}, shoe="S1", operator="dealer-7")
    b = journal.append("card.read", {"card": "AS", "position": 1}, shoe="S1", round=1, device_serial="shoe-1", epoch=3, counter=1)
    assert isinstance(a, Entry) and (a.seq, b.seq) == (1, 2)
    assert a.prev_hash == GENESIS_HASH and b.prev_hash == a.hash
    assert a.ts == "2025-01-31T20:15:00.002000Z" and a.time.year == 2025  # .001: meta "created"
    assert list(journal.entries()) == [a, b]
    assert journal.last() == b and journal.get(1) == a and journal.get(3) is None
    assert [e.seq for e in journal.entries(since_seq=1)] == [2]
    assert [e.seq for e in journal.entries(kinds=["card.read"])] == [2]
    assert [e.seq for e in journal.entries(kinds="shoe.loaded")] == [1]
    assert [e.seq for e in journal.entries(shoe="S2")] == []
    assert list(journal.entries(kinds=[])) == []
    assert b.to_json()["payload"] == {"card": "AS", "position": 1}
    assert list(b.to_json()) == ["seq", "ts", "kind", "table_id", "shoe_id", "round_no", "device_serial",
                                 "device_epoch", "device_counter", "operator", "payload", "prev_hash", "hash",
                                 "schema_version"]
    assert b.to_json()["schema_version"] == 2 and b.device_serial == "shoe-1"
    # the payload column is canonical JSON
    assert rows(journal.path)[0][10] == '{"decks":8,"name":"Mini ☘"}'


def test_reopen_continues_the_chain(journal_path: Path) -> None:
    hashes = fill(journal_path, 3)
    with Journal.open(journal_path, table_id="T1", create=False) as j:
        e = j.append("more", {})
        assert e.seq == 4 and e.prev_hash == hashes[-1]
    assert verify(journal_path).ok


def test_entries_pages_through_many(journal: Journal) -> None:
    journal.append_batch([Record("x", {"i": i}, shoe="S1" if i % 2 else None) for i in range(2500)])
    assert [e.payload["i"] for e in journal.entries()] == list(range(2500))
    assert len(list(journal.entries(shoe="S1"))) == 1250
    assert [e.seq for e in journal.entries(since_seq=2498)] == [2499, 2500]


def test_reader_sees_the_writers_commits(journal: Journal, journal_path: Path) -> None:
    journal.append("a", {})
    with JournalReader.open(journal_path) as r:
        assert r.last_seq == 1 and r.table_id == "T1"
        journal.append("b", {})
        assert [e.kind for e in r.entries()] == ["a", "b"]
        with r.snapshot():
            journal.append("c", {})
            assert r.last_seq == 2  # fixed view inside the snapshot
        assert r.last_seq == 3


def test_reader_refuses_to_write(journal: Journal, journal_path: Path) -> None:
    journal.append("a", {})
    with JournalReader.open(journal_path) as r, pytest.raises(JournalError):
        r._query("INSERT INTO meta (key, value) VALUES ('x', 'y')")


# --- duplicates --------------------------------------------------------------------------------


def test_device_event_resent_is_dropped(journal: Journal) -> None:
    first = journal.append("card.read", {"card": "9H"}, device_serial="shoe-1", epoch=1, counter=7)
    assert journal.append("card.read", {"card": "9H"}, device_serial="shoe-1", epoch=1, counter=7) is None
    # other contexts after a reconnect don't matter: same device event
    assert journal.append("card.read", {"card": "9H"}, device_serial="shoe-1", epoch=1, counter=7, round=3) is None
    # same counter, other epoch or device: a different event
    assert journal.append("card.read", {"card": "9H"}, device_serial="shoe-1", epoch=2, counter=7).seq == 2
    assert journal.append("card.read", {"card": "9H"}, device_serial="shoe-2", epoch=1, counter=7).seq == 3
    # host events carry no counter and are never duplicates
    assert journal.append("note", {}).seq == 4 and journal.append("note", {}).seq == 5
    assert journal.find_device_event("shoe-1", 1, 7) == first
    assert journal.last_seq == 5


def test_conflicting_resend_raises_and_stores_nothing(journal: Journal) -> None:
    journal.append("card.read", {"card": "9H"}, device_serial="shoe-1", epoch=1, counter=1)
    with pytest.raises(DeviceEventConflict, match="different payload") as info:
        journal.append("card.read", {"card": "9D"}, device_serial="shoe-1", epoch=1, counter=1)
    assert info.value.existing.seq == 1 and info.value.payload == {"card": "9D"}
    with pytest.raises(DeviceEventConflict, match="different kind"):
        journal.append("door.open", {"card": "9H"}, device_serial="shoe-1", epoch=1, counter=1)
    journal.append("x", {"v": True}, device_serial="d", epoch=1, counter=1)
    with pytest.raises(DeviceEventConflict):  # true is not 1 in the journal (though True == 1 in Python)
        journal.append("x", {"v": 1}, device_serial="d", epoch=1, counter=1)
    assert journal.last_seq == 2
    assert journal.append("next", {}).seq == 3


def test_a_gap_the_table_gave_up_is_no_gap_for_the_seed(journal: Journal) -> None:
    """Events 3 of a device were given up (a floorperson cleared ``events:shoe``, protocol E7): the
    journal holds 1, 2, 4, 5 and the device acknowledged up to 5. The seed stopped before the hole
    (at 2), so every restart reported 3-5 "acknowledged to another host or journal ... lost to it"
    though 4 and 5 are here (a review of this stop's code). A gap recorded as given up is none; a
    later ordinary gap still is."""
    for c in (1, 2, 4, 5):
        journal.append("card", {"c": c}, device_serial="shoe-1", epoch=7, counter=c)
    assert journal.last_device_counter("shoe-1") == (7, 2)
    journal.append("events_given_up", {"device_role": "shoe", "device_serial": "shoe-1", "epoch": 7,
                                       "first": 3, "last": 3})
    journal.append("events_given_up", {"device_role": "shoe", "device_serial": "shoe-2", "epoch": 7,
                                       "first": 6, "last": 8})  # another device's: not this one's
    assert journal.last_device_counter("shoe-1") == (7, 5)
    journal.append("card", {"c": 9}, device_serial="shoe-1", epoch=7, counter=9)
    assert journal.last_device_counter("shoe-1") == (7, 5)  # 6-8: an ordinary gap, resent by the device


def test_unique_index_backs_the_duplicate_rule(journal: Journal) -> None:
    journal.append("e", {}, device_serial="d", epoch=1, counter=1)
    with pytest.raises(sqlite3.IntegrityError):
        journal._conn.execute(
            "INSERT INTO entries VALUES (2, 't', 'e', 'T1', NULL, NULL, 'd', 1, 1, NULL, '{}', 'p', 'h')")


def test_last_device_counter(journal: Journal) -> None:
    assert journal.last_device_counter("shoe-1") is None and journal.device_counter_gaps("shoe-1") == []
    for c in (1, 2, 3):
        journal.append("card", {"c": c}, device_serial="shoe-1", epoch=5, counter=c)
    journal.append("link.lost", {}, device_serial="shoe-1")  # a host event about the device: no counter
    assert journal.last_device_counter("shoe-1") == (5, 3)
    journal.append("card", {"c": 5}, device_serial="shoe-1", epoch=5, counter=5)  # 4 lost in the air
    assert journal.last_device_counter("shoe-1") == (5, 3)  # seed below the gap: 4 gets resent
    assert journal.last_device_counter("shoe-1", contiguous=False) == (5, 5)
    assert journal.device_counter_gaps("shoe-1") == [(4, 4)]
    journal.append("card", {"c": 9}, device_serial="shoe-1", epoch=5, counter=9)
    assert journal.device_counter_gaps("shoe-1", 5) == [(4, 4), (6, 8)]
    assert journal.last_device_counter("shoe-1") == (5, 3)
    journal.append("card", {"c": 4}, device_serial="shoe-1", epoch=5, counter=4)
    assert journal.last_device_counter("shoe-1") == (5, 5)
    for c in (6, 7, 8):
        journal.append("card", {"c": c}, device_serial="shoe-1", epoch=5, counter=c)
    assert journal.last_device_counter("shoe-1") == (5, 9) and journal.device_counter_gaps("shoe-1") == []
    journal.append("card", {"c": 1}, device_serial="shoe-1", epoch=6, counter=1)  # the device started a new epoch
    assert journal.last_device_counter("shoe-1") == (6, 1)
    journal.append("card", {"c": 900}, device_serial="shuffler-1", epoch=1, counter=900)  # a journal started mid-life
    assert journal.last_device_counter("shuffler-1") == (1, 900)


# --- batches -----------------------------------------------------------------------------------


def test_batch_appends_in_one_transaction(journal: Journal) -> None:
    out = journal.append_batch([
        Record("a", {"n": 1}, shoe="S1"),
        {"kind": "b", "payload": {"n": 2}, "device_serial": "d", "epoch": 1, "counter": 1},
        {"kind": "b", "payload": {"n": 2}, "device_serial": "d", "epoch": 1, "counter": 1},  # repeated within the batch
        Record("c", {"n": 3}),
    ])
    assert [e.seq if e else None for e in out] == [1, 2, None, 3]
    assert out[1].prev_hash == out[0].hash and out[3].prev_hash == out[1].hash
    assert journal.append_batch([]) == []
    assert journal.append_batch([{"kind": "b", "payload": {"n": 2}, "device_serial": "d", "epoch": 1, "counter": 1}]) == [None]
    assert verify(journal.path).ok


def test_batch_validation_error_stores_nothing(journal: Journal) -> None:
    journal.append("before", {})
    with pytest.raises(PayloadError, match="batch item 2: payload\\['x'\\] is a float"):
        journal.append_batch([Record("a", {}), Record("b", {}), Record("c", {"x": 0.5})])
    with pytest.raises(PayloadError, match="unknown field"):
        journal.append_batch([{"kind": "a", "payload": {}, "colour": "red"}])
    with pytest.raises(PayloadError, match="required"):
        journal.append_batch([{"kind": "a"}])
    with pytest.raises(PayloadError, match="Record or a mapping"):
        journal.append_batch([("a", {})])
    assert journal.last_seq == 1


def test_batch_database_error_mid_batch_stores_nothing(journal: Journal, mocker) -> None:
    journal.append("before", {})
    execute, executemany = journal._conn.execute, journal._conn.executemany

    def flaky(sql, rows):  # the batch's rows go in with one executemany: two land, then the disk fails
        if sql.startswith("INSERT INTO entries"):
            for row in list(rows)[:2]:
                execute(sql, row)
            raise sqlite3.OperationalError("disk I/O error")
        return executemany(sql, rows)
    mocker.patch.object(journal._conn, "executemany", side_effect=flaky)
    with pytest.raises(JournalWriteError, match="disk I/O error; nothing was stored"):
        journal.append_batch([Record(f"k{i}", {"i": i}) for i in range(5)])
    mocker.stopall()
    assert [e.kind for e in journal.entries()] == ["before"]
    assert [e.seq for e in journal.append_batch([Record("k", {})] * 2)] == [2, 3]
    assert verify(journal.path).ok


def test_batch_conflict_stores_nothing(journal: Journal) -> None:
    journal.append("card", {"c": 1}, device_serial="d", epoch=1, counter=1)
    with pytest.raises(DeviceEventConflict):
        journal.append_batch([Record("a", {}), Record("card", {"c": 2}, device_serial="d", epoch=1, counter=1)])
    assert journal.last_seq == 1


def test_a_device_event_twice_in_one_batch_is_stored_once_on_the_tables_path(journal: Journal) -> None:
    """``append_batch`` returns None for "a duplicate device event, including one repeated within
    the batch", and the table's card path (``results=False``, no entries built) stores the rest of
    the batch the same way: a repeated event did not refuse the whole batch."""
    ev = {"kind": "input.device", "payload": {"device_role": "shoe", "event": "CARD_READ"},
          "device_serial": "S1", "epoch": 1, "counter": 1}
    assert journal.append_batch([ev, dict(ev), {"kind": "note", "payload": {}}], results=False) == []
    assert [(e.kind, e.device_counter) for e in journal.entries()] == [("input.device", 1), ("note", None)]
    out = journal.append_batch([dict(ev, counter=2), dict(ev, counter=2)], results=True)
    assert [None if e is None else e.seq for e in out] == [3, None]
