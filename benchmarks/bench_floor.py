"""The floor at scale (issue 13 §4; figures, not a pass/fail test): real Mosquitto (under the
documented ACL), real PostgreSQL (``fsync`` on, as in production), one ``shoectl floor collect``.

``run(quick=False) -> dict``:

- ``catchup``: a journal written beforehand (``shoectl run --speed max``) and a ``shoectl feed``
  started while the broker is down; when the broker comes back, the feed publishes the backlog:
  ``entries_per_s`` from the first to the last entry received (QoS 1) by a subscriber with a
  persistent session, and ``first_entry_after_s``: from the broker's return to the first entry
  (the feed's reconnection backoff, at most 8 s).
- ``tables_32``, ``tables_64`` (``tables_8`` with ``--quick``): N tables as separate ``shoectl run
  --speed max --rounds R --feed`` processes (each its own emulator, dealing as fast as this machine
  allows), all started at once, at the lowest CPU priority (``nice 19``: they stand for other
  machines; 64 of them saturate these 2 cores, and the floor's processes must not starve for it); ``paced_64`` (``paced_8``): the same at ``--speed 20``, the emulator's
  mechanisms 20 times faster than real ones, far above any real table's pace: ``entries``, ``entries_per_s`` into
  PostgreSQL (stored entries over the span from the first to the last store), ``lag_ms`` from the
  journal's commit (the entry's ``ts``, taken in the commit's transaction) to PostgreSQL's
  (``stored_at``, taken in the collector's transaction) — ``median``, ``p99``, ``max`` —, the
  collector's ``cpu_percent`` (of one core, from the first entry stored to the last) and
  ``peak_rss_mib``, and
  ``lost``/``doubled`` (every table's stored ``(seq, hash)`` against its journal: both must be 0).
  A table's ``--feed`` stops a few seconds after its table; on a saturated machine it may not have
  published everything by then (the rest waits in the journal): a ``shoectl feed`` then publishes
  it, as it would at a real table, whose feed always runs (``tables_finished_by_shoectl_feed``).

Run from the project root: ``python -m benchmarks floor [--quick]``. Needs mosquitto and
PostgreSQL's server binaries (tests/services/ starts both); 2 cores shared with 64 tables make
every figure a floor of what a real deployment (one process per machine) reaches.
"""
from __future__ import annotations

import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 900  # seconds before a wait is given up (never a figure)


def _services() -> tuple[object, object]:
    """The test suite's service helpers (tests/services), imported without running pytest."""
    sys.path[:0] = [str(ROOT / "tests")]
    from services import mosquitto, postgres

    return mosquitto, postgres


@contextlib.contextmanager
def _postgres() -> Iterator[str]:
    """A throwaway cluster with ``fsync`` on (the tests' runs without): yields a database URL."""
    _, pg = _services()
    bindir = pg.server_binaries()
    root = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    pg._chown_to_server_account(root)
    cluster = pg.PostgresCluster(bindir, root, pg.free_port())
    try:
        pg._init(cluster)
        options = (f"-c listen_addresses=127.0.0.1 -p {cluster.port} -c unix_socket_directories={cluster.socket_dir} "
                   "-c fsync=on -c synchronous_commit=on -c max_connections=100")
        pg._run([str(bindir / "pg_ctl"), "-D", str(cluster.data), "-o", options, "-l", str(root / "log"), "-w",
                 "start"], "pg_ctl start")
        yield cluster.url(cluster.create_database())
    finally:
        pg._stop(cluster)
        subprocess.run(["rm", "-rf", str(root)], check=False)


def _broker():  # -> Mosquitto
    mq, _ = _services()
    return mq.Mosquitto.start(users=(*(f"B{i}" for i in range(1, 65)), mq.COLLECTOR, mq.DISPLAY))


def _wait(predicate, what: str) -> None:
    end = time.monotonic() + HANG
    while not predicate():
        if time.monotonic() > end:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _journal(directory: Path, table: str, rounds: int, seed: int) -> Path:
    path = directory / f"{table}.db"
    subprocess.run([*SHOECTL, "run", "--speed", "max", "--rounds", str(rounds), "--seed", str(seed), "--table-id",
                    table, "--journal", str(path), "--display", "lines", "--no-edge-monitor"],
                   check=True, capture_output=True, timeout=HANG)
    return path


def _entries(journal: Path) -> list[tuple[int, str]]:
    from controller.journal import JournalReader

    with JournalReader.open(journal) as r:
        return [(e.seq, e.hash) for e in r.entries()]


def catchup(tmp: Path, rounds: int) -> dict:
    """See the module docstring (``catchup``)."""
    mq, _ = _services()
    sys.path[:0] = [str(ROOT / "tests")]
    from floor.mqtt_clients import Subscriber

    journal = _journal(tmp, "B1", rounds, seed=1)
    n = len(_entries(journal))
    broker = _broker()
    sub = feed = None
    try:
        sub = Subscriber(broker, mq.COLLECTOR, "shoectl/v1/tables/+/journal", persistent=True, client_id="bench-sub")
        broker._halt()  # the outage: the feed starts and waits
        feed = subprocess.Popen([*SHOECTL, "feed", "--journal", str(journal), "--broker", broker.url,
                                 *broker.login("B1")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(3)
        broker._run()
        back = time.monotonic()
        topic = "shoectl/v1/tables/B1/journal"
        _wait(lambda: sub.payloads(topic), "the first entry")
        first = time.monotonic()
        _wait(lambda: len(set(sub.payloads(topic))) >= n, "the backlog")
        took = time.monotonic() - first
        return {"entries": n, "entries_per_s": round((n - 1) / took), "first_entry_after_s": round(first - back, 2)}
    finally:
        if feed is not None:
            feed.send_signal(signal.SIGTERM)
            feed.wait(timeout=60)
        if sub is not None:
            sub.close()
        broker.stop()


def _as_another_machine() -> None:
    """In a table's process before it runs: the lowest CPU priority. The tables stand for other
    machines; here they share the floor's 2 cores, and without this 64 of them would starve the
    broker, the collector and PostgreSQL, and the figures would measure that, not the floor."""
    os.nice(19)


def _cursor(journal: Path) -> int:
    import json

    try:
        return json.loads(Path(f"{journal}.feed-cursor").read_text())["seq"]
    except FileNotFoundError:
        return 0


def _cpu_and_rss(pid: int) -> tuple[float, float]:
    """CPU seconds so far and peak RSS (MiB) of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmHWM:"))
    return cpu, rss / 1024


def tables(tmp: Path, n: int, rounds: int, speed: str = "max") -> dict:
    """See the module docstring (``tables_<N>``)."""
    import psycopg

    mq, _ = _services()
    broker = _broker()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with _postgres() as db:
            err = (tmp / "collector.err").open("wb")
            collector = subprocess.Popen([*SHOECTL, "floor", "collect", "--broker", broker.url, "--db", db,
                                          *broker.login(mq.COLLECTOR), "--log-level", "info"],
                                         stdout=subprocess.DEVNULL, stderr=err)
            procs.append(collector)
            _wait(lambda: "collecting" in (tmp / "collector.err").read_text(errors="replace"), "the collector")
            cpu0, _ = _cpu_and_rss(collector.pid)
            t0 = time.monotonic()
            journals = {}
            for i in range(1, n + 1):
                table = f"B{i}"
                journals[table] = tmp / f"{table}.db"
                procs.append(subprocess.Popen(
                    [*SHOECTL, "run", "--speed", speed, "--rounds", str(rounds), "--seed", str(i), "--table-id", table,
                     "--journal", str(journals[table]), "--display", "lines", "--no-edge-monitor",
                     "--feed", broker.url, *broker.login(table)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_as_another_machine))
            for proc in procs[1:]:  # the tables
                if proc.wait(timeout=HANG) != 0:
                    raise RuntimeError(f"a table exited {proc.returncode}")
            expected = {t: _entries(j) for t, j in journals.items()}
            total = sum(map(len, expected.values()))
            # A table's feed stops a few seconds after its table: what it had not published then waits
            # in the journal for the next feed. At a real table the feed is always running; here one
            # `shoectl feed` per such table publishes the rest.
            behind = [t for t, j in journals.items() if _cursor(j) < len(expected[t])]
            for t in behind:
                procs.append(subprocess.Popen([*SHOECTL, "feed", "--journal", str(journals[t]), "--broker", broker.url,
                                               *broker.login(t)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                              preexec_fn=_as_another_machine))

            def stored_count() -> int:
                with psycopg.connect(db) as conn:
                    return conn.execute("SELECT count(*) FROM entries").fetchone()[0]
            _wait(lambda: stored_count() >= total, "every entry stored")
            wall = time.monotonic() - t0
            cpu1, rss = _cpu_and_rss(collector.pid)
            with psycopg.connect(db) as conn:
                first, last = conn.execute("SELECT min(stored_at), max(stored_at) FROM entries").fetchone()
                lags = [r[0] for r in conn.execute(
                    "SELECT extract(epoch FROM stored_at - ts_at) * 1000 FROM entries ORDER BY 1")]
                stored = {t: conn.execute("SELECT seq, hash FROM entries WHERE table_id = %s ORDER BY seq",
                                          (t,)).fetchall() for t in journals}
            lost = sum(len(set(expected[t]) - set(stored[t])) for t in journals)
            doubled = sum(len(stored[t]) - len(set(stored[t])) for t in journals)
            lags = [float(x) for x in lags]
            span = (last - first).total_seconds()
            return {"tables": n, "speed": speed, "rounds_each": rounds, "entries": total,
                    "entries_per_s": round(total / span) if span else None,
                    "lag_ms": {"median": round(statistics.median(lags), 1),
                               "p99": round(lags[min(len(lags) - 1, int(len(lags) * 0.99))], 1),
                               "max": round(lags[-1], 1)},
                    "collector_cpu_percent": round(100 * (cpu1 - cpu0) / span, 1) if span else None,
                    "collector_peak_rss_mib": round(rss, 1), "wall_s": round(wall, 1),
                    "load_average_1min": round(os.getloadavg()[0], 1), "tables_finished_by_shoectl_feed": len(behind),
                    "lost": lost, "doubled": doubled}
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        broker.stop()


RUNS = {  # name: (tables, rounds each, --speed)
    "tables_32": (32, 20, "max"),
    "tables_64": (64, 10, "max"),
    "paced_64": (64, 6, "20"),
}
QUICK_RUNS = {"tables_8": (8, 5, "max"), "paced_8": (8, 3, "20")}


def run(quick: bool = False) -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        out["catchup"] = catchup(Path(tmp), rounds=40 if quick else 150)
    for name, (n, rounds, speed) in (QUICK_RUNS if quick else RUNS).items():
        with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
            out[name] = tables(Path(tmp), n, rounds, speed)
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(quick="--quick" in sys.argv), indent=2))
