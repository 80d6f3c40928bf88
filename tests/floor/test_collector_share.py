"""``shoectl floor collect`` beside others and over TLS, between a real Mosquitto and a real
PostgreSQL: two collectors of one ``--share`` group (an MQTT 5 shared subscription) store every
entry exactly once and the chain verifies (the store's per-table chain position lock keeps their
concurrent batches one sequence); ``--share`` with MQTT 3.1.1 or without a client id is refused
in one line; a broker whose TLS certificate is not trusted is one line, exit 2, not an outage
retried for ever; a database that refuses writes is one line, exit 2."""
from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest

from cli_run import run
from controller.floor.broker import stop_client
from floor.collector_processes import publish, publisher, start
from floor.helpers import HANG, SHOECTL, query, stored_lines
from floor.journals import TableJournal, run_table
from services.mosquitto import COLLECTOR, Mosquitto


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=8, seed=31)


def stored_by(stderr: str) -> int:
    """How many entries a stopped collector stored (its last log line's count)."""
    found = re.findall(r"collector stopped.*?\bstored=(\d+)", stderr)
    assert found, stderr
    return int(found[-1])


def test_two_collectors_sharing_one_subscription_store_every_entry_once(
        mosquitto: Mosquitto, floor_db: str, journal: TableJournal, tmp_path: Path, collectors) -> None:
    lines = journal.lines
    group = [start(collectors, mosquitto, floor_db, tmp_path, "--share", "floor", "--client-id", f"collector-{n}",
                   "--batch", "20") for n in (1, 2)]
    client = publisher(mosquitto)
    try:
        for start_at in range(0, len(lines), 25):  # bursts: each collector gets a part of most of them
            publish(client, lines[start_at:start_at + 25])
        group[0].wait(lambda: len(stored_lines(floor_db)) == len(lines), "every entry stored")
    finally:
        stop_client(client)
    for c in group:
        assert c.stop() == 128 + signal.SIGTERM
        assert "Traceback" not in c.stderr()
    shares = [stored_by(c.stderr()) for c in group]
    assert all(shares) and sum(shares) == len(lines), shares  # both worked; nothing stored twice
    assert stored_lines(floor_db) == lines
    assert query(floor_db, "SELECT count(*) FROM rejected_entries") == [(0,)]
    assert query(floor_db, "SELECT kind, seq FROM floor_alarms WHERE open") == []  # a gap while the other's batch
    verify = subprocess.run([*SHOECTL, "floor", "verify", "--db", floor_db], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr  # was in flight closed once it was committed


@pytest.mark.parametrize("extra, says", [
    (["--share", "floor", "--client-id", "c1", "--mqtt-version", "3.1.1"], "--share needs MQTT 5"),
    (["--share", "floor"], "--share needs --client-id"),
    (["--share", "a/b", "--client-id", "c1"], "--share needs a group name without /"),
])
def test_a_share_the_broker_cannot_give_is_one_line(capsys, mosquitto: Mosquitto, floor_db: str, extra: list[str],
                                                    says: str) -> None:
    code, out, err = run(capsys, "floor", "collect", "--broker", mosquitto.url, "--db", floor_db,
                         *mosquitto.login(COLLECTOR), *extra)
    assert code == 2 and out == "" and says in err and err.count("\n") == 1, err
    assert query(floor_db, "SELECT count(*) FROM pg_tables WHERE tablename = 'entries'") == [(0,)]


def test_a_broker_whose_certificate_is_not_trusted_is_one_line_exit_2(tls_broker: Mosquitto, floor_db: str) -> None:
    done = subprocess.run([*SHOECTL, "floor", "collect", "--broker", tls_broker.tls_url, "--db", floor_db,
                           *tls_broker.login(COLLECTOR)], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 2, done.stderr
    assert f"the broker {tls_broker.tls_url} is not trusted: its certificate" in done.stderr
    assert done.stderr.count("\n") == 1 and "unreachable" not in done.stderr


def test_a_database_that_refuses_writes_stops_the_collector_in_one_line(mosquitto: Mosquitto, floor_db: str) -> None:
    """A read-only server refuses the schema: one line, exit 2, no traceback, no SQL text."""
    read_only = floor_db + "?options=-c%20default_transaction_read_only%3Don"
    done = subprocess.run([*SHOECTL, "floor", "collect", "--broker", mosquitto.url, "--db", read_only,
                           *mosquitto.login(COLLECTOR)], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 2, done.stderr
    assert "the database is read-only" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and "LINE" not in done.stderr
