"""docs/floor.md, Security: the broker ties each client id to its account
(``use_username_as_clientid true``). Without it any account could log in under the collector's
client id and take its persistent session: the journal messages due to it were then denied to
the intruder by the ACL and dropped, acknowledged to the table and never stored, with no alarm;
and a table's account under another table's feed's client id made the broker publish that
feed's Last Will, the other table "offline", again and again (a security review of the floor)."""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.floor.broker import stop_client
from floor.collector_processes import publish, publisher, start
from floor.helpers import count
from floor.journals import run_table
from floor.mqtt_clients import Subscriber, connected_client
from services.mosquitto import DISPLAY, Mosquitto, running

TIED = ("use_username_as_clientid true",)  # the documented broker's line (docs/floor.md, Security)
HANG = 60  # seconds before a wait is declared hung (never a performance limit)


@pytest.fixture
def tied_broker() -> Iterator[Mosquitto]:
    with running(settings=TIED) as broker:
        yield broker


def test_a_display_account_cannot_take_the_collectors_session(tied_broker: Mosquitto, floor_db: str, collectors,
                                                              tmp_path: Path) -> None:
    """"An entry acknowledged by the broker reaches a subscriber with a persistent session (the
    collector) even when that subscriber is down": a display's account logging in as
    ``shoectl-collector`` gets a session of its own, and every entry is stored."""
    journal = run_table(tmp_path / "t3", table_id="T3", rounds=3)
    collector = start(collectors, tied_broker, floor_db, tmp_path)
    intruder = connected_client(tied_broker, DISPLAY, client_id="shoectl-collector", persistent=True)
    intruder.reconnect_delay_set(0.05, 0.1)
    try:
        table = publisher(tied_broker, "T3")
        publish(table, journal.lines, table="T3")  # every entry acknowledged by the broker
        stop_client(table)
        deadline = time.monotonic() + HANG
        while count(floor_db, "SELECT count(*) FROM entries WHERE table_id = 'T3'") < len(journal.lines) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop_client(intruder)
    assert count(floor_db, "SELECT count(*) FROM entries WHERE table_id = 'T3'") == len(journal.lines)
    assert collector.proc.poll() is None and "broker unavailable" not in collector.stderr(), collector.stderr()[-600:]


@contextlib.contextmanager
def fed_and_watched(broker: Mosquitto, tmp_path: Path, table: str) -> Iterator[Callable[[], list[bytes]]]:
    """``table``'s feed running and a display watching its status once it says online; yields what
    reads the ``online: false`` statuses since then. Afterwards the feed must never have lost the
    broker."""
    from floor.feeds import start_feed, stopped

    feed = start_feed(broker, run_table(tmp_path / table.lower(), table_id=table, rounds=2).path, user=table)
    topic = f"shoectl/v1/tables/{table}/status"
    display = Subscriber(broker, DISPLAY, topic, client_id="test-display")
    try:
        display.wait_for(lambda: any(b'"online":true' in p for p in display.payloads(topic)), f"{table}'s feed online")
        before = len(display.messages)
        yield lambda: [p for _, p, _ in display.messages[before:] if b'"online":false' in p]
    finally:
        display.close()
        _, err = stopped(feed)
    assert "lost the broker" not in err, err[-800:]


def test_another_tables_account_cannot_knock_a_feed_offline(tied_broker: Mosquitto, tmp_path: Path) -> None:
    """"Table T1 cannot publish as T2": logging in as T1 under T2's feed's client id does not make
    the broker publish T2's Last Will (``online: false``, retained)."""
    with fed_and_watched(tied_broker, tmp_path, "T2") as offline:
        intruder = connected_client(tied_broker, "T1", client_id="shoectl-feed-T2")  # T1's own account
        time.sleep(2)
        stop_client(intruder)
        time.sleep(1)
        assert offline() == [], f"T1 made the broker say T2 is offline {len(offline())} times"


def test_a_feed_of_another_journal_under_a_tables_login_does_not_knock_that_table_offline(
        tied_broker: Mosquitto, tmp_path: Path) -> None:
    """Under this broker a feed's client id is its account's name whatever it asks: a feed of T2's
    journal logged in as T1 took T1's feed's connection and the broker said T1 offline (a review).
    It is refused at its start, before it reaches the broker."""
    from floor.feeds import start_feed

    with fed_and_watched(tied_broker, tmp_path, "T1") as offline:
        wrong = start_feed(tied_broker, run_table(tmp_path / "t2", table_id="T2", rounds=2).path, user="T1")
        said = wrong.communicate(timeout=HANG)[1]
        code = wrong.returncode
        assert code == 2 and "a table's MQTT user name is its table id" in said, said
        time.sleep(1)
        assert offline() == []
