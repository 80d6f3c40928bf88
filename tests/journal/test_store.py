"""The journal store: append/read back, duplicates, batches, float rejection, bad files, failures
at the SQLite edge (disk full, locked, read-only), all on real SQLite files."""
from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.journal import (
    GENESIS_HASH,
    DeviceEventConflict,
    Entry,
    Journal,
    JournalBusyError,
    JournalError,
    JournalReader,
    JournalWriteError,
    NotAJournalError,
    PayloadError,
    Record,
    canonical_json,
    format_ts,
    load_hmac_key,
    verify,
)
from controller.journal.store import SCHEMA_VERSION

from tampering import rows

from .conftest import KEY, OTHER_KEY, FakeClock, fill

# --- opening and the settings ------------------------------------------------------------------


def test_new_journal_uses_wal_full_and_schema(journal: Journal, journal_path: Path) -> None:
    conn = journal._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert journal.meta["format"] == "shoectl-journal" and journal.meta["table_id"] == "T1"
    assert journal.hash_algorithm == "sha256" and journal.key_id is None
    assert journal.last() is None and journal.last_seq == 0
    assert journal.anchor() == "0:" + GENESIS_HASH


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


def test_open_refusals(tmp_path: Path, journal_path: Path) -> None:
    with pytest.raises(JournalError, match="no such journal"):
        Journal.open(journal_path, table_id="T1", create=False)
    with pytest.raises(JournalError, match="does not exist"):
        Journal.open(tmp_path / "nope" / "j.db", table_id="T1")
    with pytest.raises(JournalError, match="is a directory"):
        Journal.open(tmp_path, table_id="T1")
    with pytest.raises(JournalError, match="must be a file"):
        Journal.open(":memory:", table_id="T1")
    with pytest.raises(PayloadError, match="table_id"):
        Journal.open(journal_path, table_id="")
    fill(journal_path, 1)
    with pytest.raises(JournalError, match="belongs to table 'T1'"):
        Journal.open(journal_path, table_id="T2")


def test_second_writer_is_refused(journal: Journal, journal_path: Path) -> None:
    with pytest.raises(JournalBusyError, match="already open for writing"):
        Journal.open(journal_path, table_id="T1")
    journal.append("still", {})
    journal.close()
    with Journal.open(journal_path, table_id="T1") as again:  # released on close
        assert again.last_seq == 1


def test_wal_refused_is_a_clear_error(journal_path: Path, mocker) -> None:
    """A filesystem where WAL cannot be used: SQLite keeps the old journal mode."""
    real = sqlite3.connect

    def connect(*a, **kw):
        conn = real(*a, **kw)
        execute = conn.execute

        def fake(sql, *args):
            if sql.replace(" ", "").upper() == "PRAGMAJOURNAL_MODE=WAL":
                return execute("PRAGMA journal_mode")  # 'delete': what SQLite answers when WAL is impossible
            return execute(sql, *args)
        conn.execute = fake
        return conn
    mocker.patch("controller.journal.store.sqlite3.connect", side_effect=connect)
    with pytest.raises(JournalError, match="cannot use WAL"):
        Journal.open(journal_path, table_id="T1")
    assert not journal_path.exists()  # no empty file left behind
    # and the lock was released
    mocker.stopall()
    with Journal.open(journal_path, table_id="T1") as j:
        assert j.append("ok", {}).seq == 1


# --- files that are not journals ---------------------------------------------------------------


def test_not_sqlite(tmp_path: Path) -> None:
    p = tmp_path / "notes.db"
    p.write_bytes(b"these are not the pages you are looking for\n" * 100)
    before = p.read_bytes()
    with pytest.raises(NotAJournalError, match="not an SQLite database"):
        Journal.open(p, table_id="T1")
    with pytest.raises(NotAJournalError, match="not an SQLite database"):
        JournalReader.open(p)
    with pytest.raises(NotAJournalError):
        verify(p)
    assert p.read_bytes() == before


def test_foreign_sqlite_is_refused_and_untouched(tmp_path: Path) -> None:
    p = tmp_path / "other.db"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    before = p.read_bytes()
    with pytest.raises(NotAJournalError, match="without the journal's tables"):
        Journal.open(p, table_id="T1")
    assert p.read_bytes() == before  # not even switched to WAL
    with pytest.raises(NotAJournalError):
        verify(p)


def test_newer_schema_is_refused(journal_path: Path) -> None:
    fill(journal_path, 1)
    conn = sqlite3.connect(journal_path)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(NotAJournalError, match="newer shoectl"):
        Journal.open(journal_path, table_id="T1")


def test_empty_file_becomes_a_journal(journal_path: Path) -> None:
    journal_path.touch()
    with Journal.open(journal_path, table_id="T1") as j:
        assert j.append("first", {}).seq == 1
    empty = journal_path.parent / "e.db"
    empty.touch()
    with pytest.raises(NotAJournalError, match="empty"):
        JournalReader.open(empty)
    with pytest.raises(NotAJournalError, match="empty"):
        verify(empty)


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


# --- values the journal refuses ------------------------------------------------------------------


@pytest.mark.parametrize("payload, where", [
    ({"amount": 12.5}, "payload['amount'] is a float"),
    ({"bets": [{"amount": 1.0}]}, "payload['bets'][0]['amount'] is a float"),
    ({"x": float("nan")}, "is a float"),
    ({"x": float("inf")}, "is a float"),
    ({"x": (1, 2.5)}, "payload['x'][1] is a float"),
    ({1: "a"}, "non-string key"),
    ({"x": {1, 2}}, "is a set"),
    ({"x": b"bytes"}, "is a bytes"),
    ({"x": "\ud800"}, "not valid Unicode"),
    ([1, 2], "must be a dict"),
    (None, "must be a dict"),
])
def test_refused_payloads(journal: Journal, payload, where) -> None:
    with pytest.raises(PayloadError, match=where.replace("[", "\\[").replace("]", "\\]").replace("(", "\\(")):
        journal.append("bet", payload)
    assert journal.last_seq == 0


def test_decimal_gets_a_hint(journal: Journal) -> None:
    from decimal import Decimal
    with pytest.raises(PayloadError, match="use int minor units or str"):
        journal.append("bet", {"amount": Decimal("1.50")})


def test_circular_and_deep_payloads(journal: Journal) -> None:
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(PayloadError, match="circular"):
        journal.append("x", loop)
    deep: dict = {}
    d = deep
    for _ in range(3000):
        d["d"] = {}
        d = d["d"]
    with pytest.raises(PayloadError, match="nested too deeply"):
        journal.append("x", deep)
    shared = {"a": 1}
    assert journal.append("x", {"p": shared, "q": shared, "r": [shared, shared]}).seq == 1  # shared, not circular
    fine: dict = {}
    d = fine
    for _ in range(100):
        d["d"] = {}
        d = d["d"]
    assert journal.append("x", fine).payload == fine


def test_tuples_read_back_as_lists(journal: Journal) -> None:
    e = journal.append("x", {"cards": ("AS", "9H"), "n": [1, (2, 3)]})
    assert e.payload == {"cards": ["AS", "9H"], "n": [1, [2, 3]]} == journal.get(1).payload


@pytest.mark.parametrize("kwargs, match", [
    ({"kind": ""}, "kind must not be empty"),
    ({"kind": 5}, "kind must be a str"),
    ({"shoe": 12}, "shoe must be a str"),
    ({"round": "3"}, "round must be an int"),
    ({"round": True}, "round must be an int"),
    ({"round": -1}, "between 0"),
    ({"counter": 1}, "device_serial, epoch and counter together"),
    ({"device_serial": "d", "counter": 1}, "device_serial, epoch and counter together"),
    ({"epoch": 1}, "epoch given without device_serial"),
    ({"device_serial": "d", "epoch": 1, "counter": 2**63}, "between 0"),
    ({"operator": b"x"}, "operator must be a str"),
])
def test_refused_columns(journal: Journal, kwargs, match) -> None:
    kw = {"kind": "k", **kwargs}
    kind = kw.pop("kind")
    with pytest.raises(PayloadError, match=match):
        journal.append(kind, {}, **kw)
    assert journal.last_seq == 0


def test_clock_must_be_aware(journal_path: Path) -> None:
    from datetime import datetime
    with Journal.open(journal_path, table_id="T1", clock=FakeClock()) as j:
        j._clock = lambda: datetime(2025, 1, 1)
        with pytest.raises(ValueError, match="naive"):
            j.append("x", {})
        j._clock = FakeClock()
        assert j.append("x", {}).seq == 1
    assert format_ts(FakeClock()()) == "2025-01-31T20:15:00.001000Z"


def test_no_float_in_any_stored_payload(journal: Journal) -> None:
    journal.append("x", {"big": 10**30, "neg": -5, "s": "1.5"})
    text = rows(journal.path)[0][10]
    assert json.loads(text, parse_float=lambda s: pytest.fail(f"float {s} stored")) == {"big": 10**30, "neg": -5, "s": "1.5"}


# --- hypothesis: random payloads round-trip --------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**20), max_value=10**20)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
payloads = st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",)), max_size=10), json_values, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(payloads, min_size=1, max_size=5))
def test_random_payloads_round_trip(items) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "j.db"
        with Journal.open(p, table_id="T1") as j:
            written = [j.append("k", payload) for payload in items]
            assert [e.payload for e in written] == items
        with JournalReader.open(p) as r:
            back = list(r.entries())
        assert [e.payload for e in back] == items and back == written
        assert [row[10] for row in rows(p)] == [canonical_json(x) for x in items]
        assert verify(p).ok


@settings(max_examples=60, deadline=None)
@given(payload=payloads, where=st.data())
def test_a_float_anywhere_is_refused(payload, where) -> None:
    """Put a float at a random place in a random payload: append refuses it, whatever the place."""
    target = payload
    path = "payload"
    while True:
        containers = [k for k, v in target.items() if isinstance(v, dict)] if isinstance(target, dict) else []
        if not containers or not where.draw(st.booleans()):
            break
        key = where.draw(st.sampled_from(containers))
        target, path = target[key], f"{path}[{key!r}]"
    target["__f"] = where.draw(st.floats(allow_nan=True))
    from controller.journal.chain import encode_payload
    with pytest.raises(PayloadError, match="is a float"):
        encode_payload(payload)


# --- failures at the SQLite edge: nothing committed is lost, the next append works -----------------


def _fail_on(journal: Journal, mocker, prefix: str, message: str) -> None:
    for method in ("execute", "executemany"):  # the entries go in with one executemany
        real = getattr(journal._conn, method)

        def failing(sql, *args, real=real):
            if sql.startswith(prefix):
                raise sqlite3.OperationalError(message)
            return real(sql, *args)
        mocker.patch.object(journal._conn, method, side_effect=failing)


@pytest.mark.parametrize("stage", ["BEGIN", "INSERT", "COMMIT"])
def test_disk_full_is_clear_and_harmless(journal: Journal, mocker, stage: str) -> None:
    kept = [journal.append("keep", {"i": i}) for i in range(3)]
    _fail_on(journal, mocker, stage, "database or disk is full")
    with pytest.raises(JournalWriteError, match="database or disk is full; nothing was stored") as info:
        journal.append("lost", {"i": 99})
    assert isinstance(info.value, OSError) and "\n" not in str(info.value)
    mocker.stopall()
    assert list(journal.entries()) == kept
    assert journal.append("after", {}).seq == 4
    report = verify(journal.path)
    assert report.ok and report.entries == 4


def test_really_full_database(journal: Journal) -> None:
    """A real SQLITE_FULL from SQLite: the database is capped at its current size."""
    kept = [journal.append("keep", {"i": i}) for i in range(3)]
    pages = journal._conn.execute("PRAGMA page_count").fetchone()[0]
    journal._conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(JournalWriteError, match="database or disk is full"):
        for i in range(200):  # fills the last page, then needs a new one
            journal.append("filler", {"text": "x" * 500, "i": i})
    journal._conn.execute("PRAGMA max_page_count = 1073741823")
    stored = list(journal.entries())
    assert stored[:3] == kept and all(e.kind == "filler" for e in stored[3:])
    assert journal.append("after", {}).seq == len(stored) + 1
    assert verify(journal.path).ok


def test_locked_database(journal: Journal, journal_path: Path) -> None:
    journal.append("keep", {})
    journal._conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(journal_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(JournalBusyError, match="locked"):
            journal.append("blocked", {})
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert journal.append("after", {}).seq == 2
    assert verify(journal_path).ok


def test_exclusively_locked_at_open(journal_path: Path) -> None:
    fill(journal_path, 2)
    other = sqlite3.connect(journal_path, isolation_level=None, timeout=0.05)
    other.execute("PRAGMA locking_mode = EXCLUSIVE")
    other.execute("BEGIN EXCLUSIVE")
    other.execute("COMMIT")  # keeps the exclusive lock in this locking mode
    try:
        with pytest.raises(JournalBusyError, match="locked"):
            Journal.open(journal_path, table_id="T1", busy_timeout=0.05)
        with pytest.raises(JournalBusyError, match="locked"):
            JournalReader.open(journal_path, busy_timeout=0.05)
    finally:
        other.close()
    with Journal.open(journal_path, table_id="T1") as j:
        assert j.append("after", {}).seq == 3


def test_unable_to_open_is_one_line(journal_path: Path, mocker) -> None:
    """A read-only directory as SQLite reports it (simulated: the tests may run as root)."""
    mocker.patch("controller.journal.store.sqlite3.connect",
                 side_effect=sqlite3.OperationalError("unable to open database file"))
    mocker.patch("controller.journal.store.os.access", return_value=False)
    with pytest.raises(JournalError, match="is read-only") as info:
        Journal.open(journal_path, table_id="T1")
    assert "\n" not in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_directory(tmp_path: Path) -> None:
    d = tmp_path / "ro"
    d.mkdir()
    os.chmod(d, 0o555)
    try:
        with pytest.raises(JournalError, match="read-only"):
            Journal.open(d / "j.db", table_id="T1")
    finally:
        os.chmod(d, 0o755)


def test_changed_behind_the_writers_back_is_refused(journal: Journal, journal_path: Path) -> None:
    journal.append("a", {})
    other = sqlite3.connect(journal_path, isolation_level=None)
    other.execute("INSERT INTO entries VALUES (2, ?, 'forged', 'T1', NULL, NULL, NULL, NULL, NULL, NULL, '{}', ?, ?)",
                  ("2025-01-01T00:00:00.000000Z", journal.last().hash, "0" * 64))
    other.close()
    with pytest.raises(JournalBusyError, match="changed by another writer"):
        journal.append("b", {})


def test_entries_are_append_only_in_sqlite(journal: Journal) -> None:
    journal.append("a", {})
    for sql in ("UPDATE entries SET kind = 'b'", "DELETE FROM entries"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            journal._conn.execute(sql)


def test_interrupted_append_rolls_back(journal: Journal, mocker) -> None:
    journal.append("keep", {})
    execute = journal._conn.execute

    def interrupt(sql, *args):
        if sql.startswith("COMMIT"):
            raise KeyboardInterrupt
        return execute(sql, *args)
    mocker.patch.object(journal._conn, "execute", side_effect=interrupt)
    with pytest.raises(KeyboardInterrupt):
        journal.append("half", {})
    mocker.stopall()
    assert [e.kind for e in journal.entries()] == ["keep"]
    assert journal.append("next", {}).seq == 2


# --- threads -------------------------------------------------------------------------------------


def test_one_writer_thread(journal: Journal) -> None:
    journal.append("owner", {})
    errors: list[BaseException] = []

    def other() -> None:
        try:
            journal.append("intruder", {})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert len(errors) == 1 and isinstance(errors[0], RuntimeError) and "one thread" in str(errors[0])
    assert journal.last_seq == 1


def test_closed_journal(journal_path: Path) -> None:
    j = Journal.open(journal_path, table_id="T1")
    j.close()
    j.close()
    with pytest.raises(JournalError, match="closed"):
        j.append("x", {})


# --- HMAC at open ------------------------------------------------------------------------------


def test_hmac_journal_needs_its_key_to_continue(journal_path: Path) -> None:
    fill(journal_path, 2, hmac_key=KEY)
    with pytest.raises(JournalError, match="HMAC key is required"):
        Journal.open(journal_path, table_id="T1")
    with pytest.raises(JournalError, match="wrong HMAC key"):
        Journal.open(journal_path, table_id="T1", hmac_key=OTHER_KEY)
    with Journal.open(journal_path, table_id="T1", hmac_key=KEY) as j:
        assert j.hash_algorithm == "hmac-sha256" and j.key_id and j.append("x", {}).seq == 3
    assert KEY.hex() not in journal_path.read_bytes().hex()  # the key itself is never stored


def test_plain_journal_cannot_be_continued_with_a_key(journal_path: Path) -> None:
    fill(journal_path, 1)
    with pytest.raises(JournalError, match="without an HMAC key"):
        Journal.open(journal_path, table_id="T1", hmac_key=KEY)


def test_load_hmac_key(key_file, tmp_path: Path) -> None:
    assert load_hmac_key(key_file()) == KEY
    assert load_hmac_key(key_file(b"z" * 16 + b"\n", name="nl.key")) == b"z" * 16 + b"\n"  # exact bytes
    with pytest.raises(JournalError, match="not found"):
        load_hmac_key(tmp_path / "missing.key")
    with pytest.raises(JournalError, match="empty"):
        load_hmac_key(key_file(b"", name="empty.key"))
    with pytest.raises(JournalError, match="too short"):
        load_hmac_key(key_file(b"short", name="short.key"))
    for mode in (0o640, 0o604, 0o644):
        with pytest.raises(JournalError, match="readable by group or others"):
            load_hmac_key(key_file(mode=mode, name=f"open{mode:o}.key"))
    with pytest.raises(JournalError, match="not a regular file"):
        load_hmac_key(tmp_path)
