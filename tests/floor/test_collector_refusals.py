"""The collector's batch path when PostgreSQL refuses an entry's content (an edge no well-formed
entry reaches today: every such case is refused earlier as not an entry; a store that raises the
database's own ``DataError`` for one entry stands in for it). The batch is not retried for ever:
it is stored entry by entry, the refused one dropped and counted, the rest stored, every message
acknowledged. A failure of the database itself is retried and loses nothing."""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import psycopg
import pytest

from controller.floor.broker import BrokerOptions
from controller.floor.collector import Collector, Received
from controller.floor.message import FloorEntry
from controller.floor.store import BatchResult, FloorStore
from floor.helpers import query
from floor.journals import TableJournal, run_table


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=1, seed=3)


class RefusingStore(FloorStore):
    """A real store on PostgreSQL that fails as told: ``refuse`` (a seq: DataError whenever a
    batch holds it), ``lose`` (how many more adds fail as a lost connection)."""

    refuse: int | None = None
    lose = 0

    def add(self, items: Sequence[FloorEntry], dropped=()) -> BatchResult:
        if self.lose:
            self.lose -= 1
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        if any(item.seq == self.refuse for item in items):
            raise psycopg.errors.NumericValueOutOfRange("value out of range")
        return super().add(items, dropped)


class Stores:
    """The stores a test and its collector open, all closed after the test."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.opened: list[FloorStore] = []

    def open(self) -> RefusingStore:
        store = RefusingStore(FloorStore.open(self.db).conn)
        self.opened.append(store)
        return store


@pytest.fixture
def stores(floor_db: str) -> Iterator[Stores]:
    made = Stores(floor_db)
    yield made
    for store in made.opened:
        store.close()


def collector(stores: Stores, store: FloorStore) -> tuple[Collector, list[int]]:
    options = BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False)
    c = Collector(store, options, open_store=stores.open)
    acked: list[int] = []
    c.client.ack = lambda mid, qos: acked.append(mid)  # no broker here: the acknowledgements are what we watch
    return c, acked


def batch(lines: list[str]) -> list[Received]:
    return [Received(mid, 1, "shoectl/v1/tables/T1/journal", line.encode()) for mid, line in enumerate(lines, 1)]


def stored(db: str) -> list[int]:
    return [seq for (seq,) in query(db, "SELECT seq FROM entries ORDER BY seq")]


def test_an_entry_the_database_refuses_is_dropped_and_counted_and_the_rest_stored(floor_db: str, stores: Stores,
                                                                                  journal: TableJournal) -> None:
    store = stores.open()
    store.refuse = 5
    c, acked = collector(stores, store)
    c._store(batch(journal.lines[:10]))
    assert acked == list(range(1, 11))
    assert stored(floor_db) == [1, 2, 3, 4, 6, 7, 8, 9, 10]
    assert query(floor_db, "SELECT table_id, reason, count FROM dropped_messages") == [("T1", "not_storable", 1)]
    assert query(floor_db, "SELECT kind, seq, open FROM floor_alarms") == [("gap", 5, True)]


def test_a_lost_database_is_retried_and_nothing_is_acknowledged_before_the_commit(
        floor_db: str, stores: Stores, journal: TableJournal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("controller.floor.collector.DB_RETRY_S", (0.01, 0.02))
    store = stores.open()
    store.lose = 1
    c, acked = collector(stores, store)
    c._store(batch(journal.lines[:10]))
    assert store.lose == 0 and c.store is not store  # failed once, then a new connection stored it
    assert acked == list(range(1, 11)) and stored(floor_db) == list(range(1, 11))
    assert c.stats["stored"] == 10 and c.stats["batches"] == 1
