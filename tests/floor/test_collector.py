"""``shoectl floor collect`` as a process between a real Mosquitto (under the documented ACL) and a
real PostgreSQL: every entry published is stored byte for byte; what is not a journal entry is
dropped, counted and never stored; a collector SIGKILLed loses nothing published while it was
down (persistent session, acknowledgement only after the commit); an unreachable broker is said
in one line and waited for; refused credentials and a refused database are one line, exit 2."""
from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from controller.floor.broker import stop_client
from floor.collector_processes import publish, publisher, start
from floor.helpers import HANG, SHOECTL, broker_login, query, stored_lines, wait_until
from floor.journals import TableJournal, forge_next, run_table
from services.mosquitto import COLLECTOR, Mosquitto
from services.postgres import free_port


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=6, seed=21)


def test_every_entry_is_stored_and_what_is_not_one_is_dropped_counted_never_stored(
        mosquitto: Mosquitto, floor_db: str, journal: TableJournal, tmp_path: Path, collectors) -> None:
    collector = start(collectors, mosquitto, floor_db, tmp_path, "--max-message-bytes", "8192")
    client = publisher(mosquitto)
    as_t2 = json.loads(journal.lines[0]) | {"table_id": "T2"}
    null_payload = json.loads(journal.lines[1]) | {"payload": None}
    malformed = [b"not json", json.dumps(as_t2), b"{" + b" " * 9000 + b"}", json.dumps({"seq": 31}),
                 b"", b"\xff\xfe{}", b"[" * 4000 + b"]" * 4000, json.dumps(null_payload)]
    try:
        publish(client, [*journal.lines[:30], *malformed, *journal.lines[30:]])
    finally:
        stop_client(client)
    collector.wait(lambda: len(stored_lines(floor_db)) == len(journal.lines), "every entry stored")
    collector.wait(lambda: query(floor_db, "SELECT sum(count) FROM dropped_messages") == [(len(malformed),)],
                   "every malformed message dropped")
    assert stored_lines(floor_db) == journal.lines
    dropped = dict(query(floor_db, "SELECT reason, count FROM dropped_messages WHERE table_id = 'T1'"))
    # empty, not JSON, nested deeper than any reader goes; one of T2's; over 8192 bytes; not UTF-8;
    # no columns, a payload that is not an object
    assert dropped == {"not_json": 3, "wrong_table": 1, "too_large": 1, "not_utf8": 1, "bad_field": 2}
    assert query(floor_db, "SELECT count(*) FROM entries WHERE table_id <> 'T1'") == [(0,)]
    assert query(floor_db, "SELECT count(*) FROM floor_alarms") == [(0,)]
    assert collector.stop() == 128 + signal.SIGTERM
    assert "Traceback" not in collector.stderr()
    status = subprocess.run([*SHOECTL, "floor", "status", "--db", floor_db], capture_output=True, text=True)
    assert f"{len(malformed)} dropped" in status.stdout and "dropped 1 message(s) on T1: wrong_table" in status.stdout


def test_a_collector_killed_loses_nothing_published_while_it_was_down(
        mosquitto: Mosquitto, floor_db: str, journal: TableJournal, tmp_path: Path, collectors) -> None:
    lines = journal.lines
    first = start(collectors, mosquitto, floor_db, tmp_path)
    client = publisher(mosquitto)
    try:
        publish(client, lines[:80])
        first.wait(lambda: len(stored_lines(floor_db)) == 80, "the first 80 stored")
        assert first.stop(signal.SIGKILL) == -signal.SIGKILL
        publish(client, lines[80:])  # nobody collecting: the broker keeps them for the session
        time.sleep(0.5)
        assert len(stored_lines(floor_db)) == 80
        second = start(collectors, mosquitto, floor_db, tmp_path)
        second.wait(lambda: len(stored_lines(floor_db)) == len(lines), "every entry stored")
    finally:
        stop_client(client)
    assert stored_lines(floor_db) == lines
    assert query(floor_db, "SELECT count(*) FROM floor_alarms") == [(0,)]
    verify = subprocess.run([*SHOECTL, "floor", "verify", "--db", floor_db], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_broker_restart_and_a_lost_database_connection_lose_nothing(
        mosquitto: Mosquitto, floor_db: str, journal: TableJournal, tmp_path: Path, collectors) -> None:
    lines = journal.lines
    collector = start(collectors, mosquitto, floor_db, tmp_path)
    for part, fault in ((lines[:40], None), (lines[40:80], "broker"), (lines[80:], "database")):
        if fault == "broker":
            mosquitto.restart()  # it saves the collector's session and loads it again
        elif fault == "database":
            query(floor_db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        client = publisher(mosquitto)
        try:
            publish(client, part)
        finally:
            stop_client(client)
        collector.wait(lambda: len(stored_lines(floor_db)) == lines.index(part[-1]) + 1, f"entries after the {fault}")
    assert stored_lines(floor_db) == lines
    assert query(floor_db, "SELECT count(*) FROM floor_alarms") == [(0,)]
    # the database was really lost: said once as it began, and once as it ended (a floor review read a
    # pair of warnings every retry, and nothing when it was back)
    said = collector.stderr().splitlines()
    lost = [line for line in said if "the database is unavailable; the entries wait" in line]
    back = [line for line in said if "the database is back; storing again" in line]
    assert len(lost) == 1 and len(back) == 1 and "[warning" in back[0], collector.stderr()
    assert said.index(lost[0]) < said.index(back[0])
    back = [line for line in collector.stderr().splitlines() if "broker reachable again" in line]
    assert len(back) == 1 and "[warning" in back[0], collector.stderr()  # the loss's level, not info
    # the loss in the feed's words, not paho's for a dropped connection (a floor review)
    assert "lost the broker" in collector.stderr() and "Unspecified error" not in collector.stderr()
    assert "Traceback" not in collector.stderr()


def test_forged_messages_from_a_client_the_acl_allows_raise_alarms_and_change_nothing(
        mosquitto: Mosquitto, floor_db: str, journal: TableJournal, tmp_path: Path, collectors) -> None:
    """Table T1's own account publishes a second body under a stored (T1, 10) and an entry 31 whose
    prev_hash does not fit: both alarmed, neither stored; the table's entries go on as before."""
    lines = journal.lines
    collector = start(collectors, mosquitto, floor_db, tmp_path)
    client = publisher(mosquitto)
    alarms = "SELECT kind, seq, open FROM floor_alarms ORDER BY id"
    try:
        publish(client, lines[:30])
        collector.wait(lambda: len(stored_lines(floor_db)) == 30, "the first 30 stored")
        publish(client, [forge_next(lines[9], operator="mallory"), forge_next(lines[30], prev_hash="ab" * 32)])
        collector.wait(lambda: len(query(floor_db, alarms)) == 2, "two alarms")
        assert stored_lines(floor_db) == lines[:30]
        publish(client, lines[30:])
        collector.wait(lambda: len(stored_lines(floor_db)) == len(lines), "every entry stored")
    finally:
        stop_client(client)
    assert stored_lines(floor_db) == lines
    assert query(floor_db, alarms) == [("forgery", 10, True), ("chain_break", 31, True)]
    verify = subprocess.run([*SHOECTL, "floor", "verify", "--db", floor_db], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_an_unreachable_broker_is_said_in_one_line_and_waited_for(
        mosquitto: Mosquitto, floor_db: str, journal: TableJournal, tmp_path: Path, collectors) -> None:
    mosquitto._halt()
    log_file = tmp_path / "collector.jsonl"
    collector = start(collectors, mosquitto, floor_db, tmp_path, "--log-file", str(log_file), subscribed=False)
    said = (f"the broker {mosquitto.url} is unreachable (nothing listens on port {mosquitto.port} of 127.0.0.1); "
            "retrying until it answers")
    collector.wait(lambda: said in collector.stderr(), "the one line")
    time.sleep(1)  # paho's retries meanwhile say nothing more
    # Not said again by the log: at the collector's default level (info, as here) the same fact
    # stood in two lines (a review of the docs, then of its mend: a warning made info).
    unreachable = [line for line in collector.stderr().splitlines() if "is unreachable" in line]
    assert unreachable == [f"shoectl floor collect: {said}"]
    mosquitto._run()
    collector.wait(lambda: "collecting" in collector.stderr(), "the collector subscribed")
    client = publisher(mosquitto)
    try:
        publish(client, journal.lines[:10])
    finally:
        stop_client(client)
    collector.wait(lambda: len(stored_lines(floor_db)) == 10, "entries stored once the broker is up")
    assert collector.stderr().count("shoectl floor collect: ") == 1
    # The log file has the outage before its end (a review: at the default level it had only "broker
    # reachable again", the line on standard error being the outage's only word).
    logged = [json.loads(line) for line in log_file.read_text(encoding="utf-8").splitlines()]
    outage = [i for i, e in enumerate(logged) if e["event"] == "broker unavailable; retrying"]
    back = [i for i, e in enumerate(logged) if e["event"] == "broker reachable again"]
    assert len(outage) == 1 and "is unreachable" in logged[outage[0]]["reason"] and back and outage[0] < back[0], logged


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_a_broker_that_takes_qos_0_only_ends_the_collector_in_one_line(floor_db: str, protocol: str) -> None:
    """A broker set with ``max_qos 0`` grants the collector's subscription at QoS 0: it would
    neither keep the entries while the collector is away nor wait for them to be stored, and the
    collector took that silently. MQTT 5 says it in the CONNACK, 3.1.1 in the SUBACK: either way
    one line, exit 2."""
    broker = Mosquitto.start(settings=("max_qos 0",))
    try:
        done = subprocess.run([*SHOECTL, "floor", "collect", "--broker", broker.url, "--db", floor_db,
                               "--mqtt-version", protocol, "--client-id", "c-qos0", *broker.login(COLLECTOR),
                               "--log-level", "error"], capture_output=True, text=True, timeout=HANG)
    finally:
        broker.stop()
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr == (f"shoectl floor collect: error: the broker {broker.url} refused the connection: it takes "
                           "no QoS 1 messages (max_qos 0), which the floor needs to know that each entry arrived\n")


def test_refused_credentials_or_database_are_one_line_exit_2(mosquitto: Mosquitto, floor_db: str,
                                                             tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.password"
    wrong.write_text("not-the-password\n")
    done = subprocess.run([*SHOECTL, "floor", "collect", "--broker", mosquitto.url, "--db", floor_db, "--username",
                           COLLECTOR, "--password-file", str(wrong), "--log-level", "error"],
                          capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 2 and "refused the connection as collector@floor" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "not-the-password" not in done.stderr
    closed = f"postgresql://postgres@127.0.0.1:{free_port()}/floor"
    done = subprocess.run([*SHOECTL, "floor", "collect", "--broker", mosquitto.url, "--db", closed,
                           *mosquitto.login(COLLECTOR)], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 2 and "cannot reach the database" in done.stderr and done.stderr.count("\n") == 1


def test_a_collector_whose_database_is_down_receives_no_more_than_it_holds(mosquitto: Mosquitto) -> None:
    """A review of the floor's threads: with the database down, the collector's inbox filled and
    paho's network thread waited in it, sending no keepalive; after 1.5 keepalives the broker
    dropped the collector, unseen until the database came back, and sent every entry in flight
    again. The collector now tells the broker (MQTT 5 Receive Maximum) to send it no more than
    half its inbox unacknowledged: the inbox never fills, and paho's thread never waits."""
    import threading

    from controller.floor.schema import StoreError
    from controller.floor.store import BatchResult

    up, stored = threading.Event(), []

    class DatabaseDown:
        def add(self, items, dropped=()):
            if not up.is_set():
                raise StoreError("the connection to the database was lost")
            stored.append(len(items) + len(dropped))  # not journal entries: each is dropped, counted
            return BatchResult(stored=len(items), dropped=len(dropped))

        def close(self) -> None:
            pass

    def reopen() -> DatabaseDown:
        if not up.is_set():
            raise StoreError("cannot reach the database: the connection was refused")
        return DatabaseDown()

    collector = _collector(mosquitto, DatabaseDown(), reopen, "c-down")
    thread = threading.Thread(target=collector.run, daemon=True)
    thread.start()
    client = publisher(mosquitto)
    try:
        deadline = time.monotonic() + HANG
        _publish_once_subscribed(collector, client, 300)
        time.sleep(1.0)  # the broker sends what it may
        held = collector.inbox.qsize()
        assert 0 < held <= collector.receive_maximum < collector.inbox.maxsize, (held, collector.receive_maximum)
        up.set()
        while sum(stored) < 300 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        collector.stop()
        thread.join(HANG)
        stop_client(client)
    assert sum(stored) == 300, sum(stored)  # each once: none sent again after a drop by the broker


def test_an_unexpected_error_in_the_collector_ends_it_even_with_its_inbox_full(mosquitto: Mosquitto) -> None:
    """A review of the floor's threads: over MQTT 3.1.1 (no Receive Maximum) the inbox can fill and
    paho's thread wait on it until the collector stops; an unexpected error on the collector's
    thread then joined paho's thread without stopping it first, and the collector hung for good,
    alive to systemd and saying nothing. The error now ends it."""

    from controller.floor.broker import MQTT_V311

    class Store:
        def add(self, items, dropped=()):
            raise AssertionError("nothing is taken from the inbox in this test")

        def close(self) -> None:
            pass

    collector = _collector(mosquitto, Store(), Store, "c-defect", protocol=MQTT_V311)

    def a_defect_once_the_inbox_is_full() -> list:  # nothing taken: the inbox fills, paho's thread waits
        if collector.inbox.full():
            raise KeyError("a defect of this program")
        time.sleep(0.05)
        return []

    collector._take = a_defect_once_the_inbox_is_full
    outcome = _run_to_its_end(mosquitto, collector, 300, "the collector hung after the error")
    assert [type(e) for e in outcome] == [KeyError]


def _statement_refused(name: str) -> Exception:
    import psycopg.errors

    return getattr(psycopg.errors, name)("refused by PostgreSQL")


@pytest.mark.parametrize("defect", [lambda: KeyError("a defect of this program"),
                                    lambda: _statement_refused("SyntaxError"),
                                    lambda: _statement_refused("UndefinedColumn")],
                         ids=["KeyError", "syntax error", "undefined column"])
def test_a_defect_in_storing_ends_the_collector_instead_of_being_retried_as_an_outage(mosquitto: Mosquitto,
                                                                                      defect) -> None:  # noqa: ANN001
    """A review of the floor's exactly-once: any exception in storing a batch was taken for the
    database being unavailable and retried for ever (every table waiting behind it, the log
    blaming the database). A defect of this program (a KeyError, or a statement PostgreSQL cannot
    run: no retry mends either) ends the collector, said as itself; its batch is not acknowledged
    (the broker keeps it)."""
    class Defective:
        calls = 0

        def add(self, items, dropped=()):
            Defective.calls += 1
            raise defect()

        def close(self) -> None:
            pass

    collector = _collector(mosquitto, Defective(), Defective, "c-defective")
    outcome = _run_to_its_end(mosquitto, collector, 1, "the collector retried a defect as an outage")
    assert [type(e) for e in outcome] == [type(defect())] and Defective.calls == 1


def test_a_privilege_revoked_on_the_database_is_waited_out_not_taken_for_a_defect(mosquitto: Mosquitto) -> None:
    """A refusal a person mends on the database (the collector's privilege revoked, the table
    dropped and restored) is retried like an outage: the collector stores the batch once it is
    mended, instead of ending as if the program were at fault."""
    from controller.floor.store import BatchResult

    class Revoked:
        calls = 0

        def add(self, items, dropped=()):
            Revoked.calls += 1
            if Revoked.calls == 1:
                raise _statement_refused("InsufficientPrivilege")
            return BatchResult(stored=len(items))

        def close(self) -> None:
            pass

    import threading

    collector = _collector(mosquitto, Revoked(), Revoked, "c-revoked")

    def stop_once_stored() -> None:
        wait_until(lambda: Revoked.calls >= 2, "the collector retried the batch")
        collector.stop()

    threading.Thread(target=stop_once_stored, daemon=True).start()
    assert _run_to_its_end(mosquitto, collector, 1, "the collector did not end when stopped") == []
    assert Revoked.calls == 2


def test_an_acknowledgement_never_names_a_message_of_an_earlier_connection(mosquitto: Mosquitto,
                                                                          journal: TableJournal) -> None:
    """A packet id names a message on its own connection only. A review of the floor's
    exactly-once: entries 1-3 were waiting for a slow database when the broker crashed and came
    back without the collector's session; it sent entries 4-6 under the same packet ids 1-3, and
    the collector, storing 1-3 at last, acknowledged them with those ids on the new connection:
    the broker took 4-6 as stored. The collector then died before storing them, and they were
    never sent again (a table's last entries: no alarm said so). An entry of an earlier
    connection is now never acknowledged (the broker sends it again if it kept the session)."""
    import threading

    from controller.floor.schema import StoreError
    from controller.floor.store import BatchResult

    release, dying = threading.Event(), threading.Event()

    class SlowDatabase:
        def __init__(self) -> None:
            self.stored: list[int] = []

        def add(self, items, dropped=()):
            seqs = [item.seq for item in items]
            if self is first and any(seq > 3 for seq in seqs):  # the collector dies before it stores these
                dying.wait(HANG)
                raise StoreError("the connection to the database was lost")
            if self is first:
                release.wait(HANG)
            self.stored.extend(seqs)
            return BatchResult(stored=len(items))

        def close(self) -> None:
            pass

    first, second = SlowDatabase(), SlowDatabase()
    collector = _collector(mosquitto, first, SlowDatabase, "c-acks")
    thread = threading.Thread(target=collector.run, daemon=True)
    thread.start()
    client = publisher(mosquitto)
    try:
        wait_until(lambda: collector._connected, "the collector connected")
        time.sleep(0.5)  # its SUBSCRIBE taken by the broker
        publish(client, journal.lines[:3])
        wait_until(lambda: collector.inbox.qsize() == 2, "entry 1 in a slow commit, 2 and 3 waiting")
        stop_client(client)
        mosquitto.crash()
        wait_until(lambda: collector._connected and collector.client.is_connected(), "the collector connected again")
        time.sleep(0.5)
        client = publisher(mosquitto)
        publish(client, journal.lines[3:6])
        wait_until(lambda: collector.inbox.qsize() == 5, "entries 4-6 received on the new connection")
        release.set()
        wait_until(lambda: first.stored == [1, 2, 3], "entries 1-3 stored")
        time.sleep(0.5)  # what the collector acknowledges after them has gone out
    finally:
        dying.set()
        collector.stop()
        thread.join(HANG)
        stop_client(client)
    again = _collector(mosquitto, second, SlowDatabase, "c-acks")  # restarted: the same session
    thread = threading.Thread(target=again.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: sorted(set(second.stored)) == [4, 5, 6], "entries 4-6 sent again, stored")
    finally:
        again.stop()
        thread.join(HANG)


def _run_to_its_end(broker: Mosquitto, collector, messages: int, hung: str) -> list[BaseException]:  # noqa: ANN001
    """``collector.run()`` on a thread of its own while ``messages`` messages that are not journal
    entries are published to it; it must end (else AssertionError ``hung``): what ended it."""
    import threading

    outcome: list[BaseException] = []

    def run() -> None:
        try:
            collector.run()
        except BaseException as exc:  # noqa: BLE001 - what ended it, for the assertion
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    client = publisher(broker)
    try:
        _publish_once_subscribed(collector, client, messages)
        thread.join(HANG)
        assert not thread.is_alive(), hung
    finally:
        collector.stop()
        stop_client(client)
    return outcome


def _collector(broker: Mosquitto, store, open_store, client_id: str, **options):  # noqa: ANN001, ANN202
    """A ``Collector`` in this process (batches of one: an inbox of 100) on ``broker`` as the
    collector's account, its store ``store``."""
    from controller.floor.collector import Collector

    return Collector(store, broker_login(broker, COLLECTOR, client_id=client_id, **options), open_store=open_store,
                     client_id=client_id, batch=1)


def _publish_once_subscribed(collector, client, count: int) -> None:  # noqa: ANN001
    """``count`` messages that are not journal entries, once ``collector`` is subscribed."""
    wait_until(lambda: collector._connected, "the collector connected")
    time.sleep(0.5)  # its SUBSCRIBE, sent as it connected, taken by the broker
    publish(client, [json.dumps({"n": i}) for i in range(count)])


def test_the_alarms_of_a_batch_are_errors_naming_their_table_and_entry() -> None:
    """A review of logs: a forgery alarm was logged at warning without its table, a chain break
    not at all, though each stays open for a person to read and close (docs/floor.md)."""
    from structlog.testing import capture_logs

    from controller.floor.chain import SetAside
    from controller.floor.collector import log_alarms
    from controller.floor.store import BatchResult

    result = BatchResult(refused=3 + 25, new_journal=1, new_journals=["T2 publishes a new journal"],
                         set_aside=[SetAside("T1", 2974, "chain_break", True)],
                         forged={"T3": [41, 7], "T1": list(range(100, 125))})
    with capture_logs() as logs:
        log_alarms(result)
    assert [(e["log_level"], e["event"]) for e in logs] == [
        ("error", "a new journal of a known table; its entries are not stored (new_journal alarm)"),
        ("error", "second bodies refused under stored keys (forgery alarm)"),
        ("error", "second bodies refused under stored keys (forgery alarm)"),
        ("error", "an entry set aside by the chain check (chain_break alarm)")]
    # A forgery's line names its table and entries (a review of logs: it gave a batch's count
    # only), a flood of them in one line a table with its first entries.
    assert [(e["table"], e["seqs"], e["count"]) for e in logs[1:3]] == [
        ("T1", list(range(100, 110)), 25), ("T3", [7, 41], 2)]
    assert (logs[3]["table"], logs[3]["seq"]) == ("T1", 2974)
