"""The proof (issue 13 §3): the central store equals the tables' journals, entry for entry, under
faults. A real Mosquitto under the documented ACL, a real PostgreSQL, a real ``shoectl floor
collect`` and four real tables (``shoectl run --speed 5 --pace 20`` on the built-in emulator); three
publish with ``--feed`` in their own process, one (T3) through a separate ``shoectl feed``.

While they deal: T3's feed is SIGKILLed and started again, the collector is SIGKILLed and started
again, the broker is restarted, and T4's controller (with its feed) is SIGKILLed and started
again on its journal. Each table then deals on and is stopped by SIGTERM. At the end, for every table: PostgreSQL holds exactly the journal's entries
(same seq, same hash, none missing, none doubled), ``floor verify`` passes, and ``floor rounds``
equals ``journal replay``. Then a forger with T1's account (which the ACL lets publish on T1's
topic) publishes a well-formed entry whose hash does not fit the chain and a second body under a
stored ``(T1, seq)``: both raise alarms and nothing stored changes.
"""
from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cli_run import run
from controller.floor.broker import stop_client
from controller.journal import JournalReader
from floor.feeds import has_entries
from floor.helpers import SHOECTL
from floor.journals import forge_next
from floor.mqtt_clients import connected_client
from services.mosquitto import COLLECTOR, Mosquitto

TABLES = ("T1", "T2", "T3", "T4")
AFTER_FAULTS = 80  # entries each table journals after the faults before it is stopped
HANG = 90  # seconds before a wait is declared hung (never a performance limit)
# Each table deals a round about every 150 ms for as long as the test runs, which is what the faults
# need, without four tables each taking a core flat out: ``--speed`` (5: the emulator's mechanisms five
# times real time) times only the shuffle, and the automated dealer deals flat out unless paced.
SPEED, PACE_MS = "5", "20"


class Processes:
    """Every process the test starts, killed at the end whatever happened."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, *argv: str) -> subprocess.Popen[bytes]:
        err = (self.tmp / f"{name}-{len(self.started)}.err").open("wb")
        proc = subprocess.Popen([*SHOECTL, *argv], stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        err.close()
        proc.err_path = err.name  # type: ignore[attr-defined]
        self.started.append(proc)
        return proc

    def kill_all(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    yield procs
    procs.kill_all()


def stderr_of(proc: subprocess.Popen[bytes]) -> str:
    return Path(proc.err_path).read_text(errors="replace")  # type: ignore[attr-defined]


def wait_until(predicate, what: str, timeout: float = HANG) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.1)


def killed(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=HANG)


def stored(db: str, table: str) -> list[tuple[int, str]]:
    try:
        with psycopg.connect(db) as conn:
            return conn.execute("SELECT seq, hash FROM entries WHERE table_id = %s ORDER BY seq", (table,)).fetchall()
    except psycopg.errors.UndefinedTable:
        return []


def journaled(journal: Path) -> list[tuple[int, str]]:
    with JournalReader.open(journal) as r:
        return [(e.seq, e.hash) for e in r.entries()]


def cursor_of(journal: Path) -> int:
    return json.loads(Path(f"{journal}.feed-cursor").read_text())["seq"]


def open_alarms(db: str, table: str) -> list[tuple[str, int | None]]:
    with psycopg.connect(db) as conn:
        return conn.execute("SELECT kind, seq FROM floor_alarms WHERE table_id = %s AND open ORDER BY id",
                            (table,)).fetchall()


def cli_json_lines(capsys, *argv: str) -> list[dict]:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.slow
def test_the_store_equals_every_journal_under_faults_and_forgeries_change_nothing(
        mosquitto: Mosquitto, floor_db: str, tmp_path: Path, processes: Processes, capsys) -> None:
    journals = {t: tmp_path / f"{t}.db" for t in TABLES}

    def collector() -> subprocess.Popen[bytes]:
        proc = processes.start("collector", "floor", "collect", "--broker", mosquitto.url, "--db", floor_db,
                               *mosquitto.login(COLLECTOR), "--log-level", "info")
        wait_until(lambda: "collecting" in stderr_of(proc), "the collector subscribed")
        return proc

    def table(t: str, feed: bool = True) -> subprocess.Popen[bytes]:
        # No --rounds: a table deals until it is stopped, so every fault below lands while all four deal,
        # however fast the machine is.
        return processes.start(t, "run", "--speed", SPEED, "--pace", PACE_MS, "--seed", str(TABLES.index(t) + 1),
                               "--table-id", t, "--journal", str(journals[t]), "--display", "lines",
                               "--no-edge-monitor", *(["--feed", mosquitto.url, *mosquitto.login(t)] if feed else []))

    def t3_feed() -> subprocess.Popen[bytes]:
        return processes.start("feed-T3", "feed", "--journal", str(journals["T3"]), "--broker", mosquitto.url,
                               *mosquitto.login("T3"), "--max-inflight", "20")

    coll = collector()
    runs = {t: table(t, feed=t != "T3") for t in TABLES}
    wait_until(lambda: has_entries(journals["T3"]), "T3's journal")
    feed = t3_feed()
    wait_until(lambda: len(stored(floor_db, "T4")) > 40, "T4's first entries stored")

    killed(feed)  # T3's feed: SIGKILL, then again from its cursor
    killed(coll)  # the collector: SIGKILL; the broker keeps its session meanwhile
    killed(runs["T4"])  # T4's controller, and its feed with it
    runs["T4"] = table("T4")  # resumes its journal; its feed resumes from its cursor
    mosquitto.restart(down_for=0.5)  # every feed loses it and comes back
    feed = t3_feed()
    assert all(p.poll() is None for t, p in runs.items()), "a table ended before the faults"
    coll = collector()

    at_faults = {t: len(journaled(journals[t])) for t in TABLES}
    for t, proc in runs.items():  # each deals on after the faults, then stops cleanly on SIGTERM
        wait_until(lambda: len(journaled(journals[t])) >= at_faults[t] + AFTER_FAULTS, f"{t} dealing on")
        proc.send_signal(signal.SIGTERM)
    for t, proc in runs.items():
        assert proc.wait(timeout=HANG) == 128 + signal.SIGTERM, stderr_of(proc)
    for t in ("T1", "T2", "T4"):  # a --feed stops with its table, after a drain; on a loaded machine some may be
        if cursor_of(journals[t]) < len(journaled(journals[t])):  # left: the table's next feed publishes them
            processes.start(f"feed-{t}", "feed", "--journal", str(journals[t]), "--broker", mosquitto.url,
                            *mosquitto.login(t))
    for t in TABLES:
        wait_until(lambda: stored(floor_db, t) == journaled(journals[t]), f"{t}'s journal in the store")
    feed.send_signal(signal.SIGTERM)
    assert feed.wait(timeout=HANG) == 128 + signal.SIGTERM, stderr_of(feed)

    for t in TABLES:
        entries = journaled(journals[t])
        assert len(entries) > 100
        assert stored(floor_db, t) == entries  # same seq, same hash; none missing, none doubled
        rounds = cli_json_lines(capsys, "floor", "rounds", "--db", floor_db, "--table", t, "--json")
        assert rounds == cli_json_lines(capsys, "journal", "replay", str(journals[t]), "--json")
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db)
    assert code == 0, out + err

    # A forger with T1's account: on T1's topic, which the ACL allows it.
    before = stored(floor_db, "T1")
    with JournalReader.open(journals["T1"]) as r:
        lines = [e.to_json_line() for e in r.entries()]
    not_in_chain = forge_next(lines[-1], seq_delta=1, payload_forged=True)  # seq n+1, prev_hash of n-1: breaks
    second_body = forge_next(lines[9], payload_forged=True)  # (T1, 10) again, another body
    forger = connected_client(mosquitto, "T1", client_id="forger")
    try:
        for body in (not_in_chain, second_body):
            forger.publish("shoectl/v1/tables/T1/journal", body, qos=1).wait_for_publish(timeout=HANG)
    finally:
        stop_client(forger)
    wait_until(lambda: len(open_alarms(floor_db, "T1")) >= 2, "two alarms for T1")
    alarms = open_alarms(floor_db, "T1")
    assert {seq for _, seq in alarms} >= {10, len(lines) + 1}, alarms
    assert stored(floor_db, "T1") == before  # nothing stored changed
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1")
    assert code == 0, out + err
    coll.send_signal(signal.SIGTERM)
    assert coll.wait(timeout=HANG) == 128 + signal.SIGTERM, stderr_of(coll)
    assert "Traceback" not in stderr_of(coll)
