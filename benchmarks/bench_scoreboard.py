"""The scoreboard's journal-to-client latency (issue 14; figures, not a pass/fail test).

``run(quick=False) -> dict``: ``shoectl run --speed 5 --pace 10 --shoes 1 --scoreboard
127.0.0.1:0`` deals a whole shoe (``--quick``: 20 rounds) while an SSE client (http.client) reads
``/tables/T1/events``; for every state received, the time from its journal entry's ``ts`` (taken
in the commit's transaction) to the moment the client has the whole message: ``median_ms``,
``p99_ms``, ``max_ms`` over ``states``, and ``rounds``. The browser adds its drawing to this (a
few milliseconds; ``tests/scoreboard/test_browser.py`` prints the journal-to-page figure and keeps
it in ``artifacts/scoreboard/latency.json``). The scoreboard looks at the journal every 50 ms, so
the median is about half of that plus the delivery.

``floor``: the floor scoreboard's cost per MQTT message (``MqttFloorSource``), for 32 and 256
tables each holding a shoe of 60 results: ``message_us`` (one table's status: that table rebuilt
in both languages, its floor row encoded; without an event loop the floor is published at once,
so this includes a floor snapshot: the worst case), ``floor_snapshot_us`` (the floor's state joined from
the kept rows: at most every 200 ms, whatever the message rate), and ``rebuild_all_us``: what one
message cost before (every table's state rebuilt and the whole floor encoded again), for
comparison. Medians of ``benchmarks.stats.timings``.

``stages``: where the time goes, for a scoreboard in a process of its own (``shoectl scoreboard
--journal``) following a table that deals (``shoectl run --speed 5 --pace 10``): for each state,
``commit_to_read_ms`` (the entry's ``ts`` to the follower's poll returning it) and
``read_to_state_ms`` (to the state built and encoded in both languages, ready for the event
stream), median and p99, with the follower looking every 50 ms (as shipped) and every 10 ms.
The rest of the journal-to-client figure is the event loop and the socket.

Run from the project root: ``python -m benchmarks scoreboard [--quick]``.
"""
from __future__ import annotations

import http.client
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.stats import percentile, summary, timings

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 300  # seconds before a wait is given up (never a figure)


def _received(url: str, proc: subprocess.Popen) -> list[tuple[int, float]]:
    """(version, arrival time) of every state the event stream gives until the table stops."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=HANG)
    conn.request("GET", parts.path + "/events")
    resp = conn.getresponse()
    got, event_id = [], None
    try:
        while True:
            line = resp.fp.readline()
            if not line:  # the server stopped with the table
                return got
            line = line.decode("utf-8").rstrip("\n")
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line == "" and event_id is not None:
                got.append((event_id, time.time()))
                event_id = None
    finally:
        conn.close()


def _ts(journal: Path) -> dict[int, float]:
    from controller.journal.reader import JournalReader

    with JournalReader.open(journal) as reader:
        return {e.seq: datetime.fromisoformat(e.ts[:-1] + "+00:00").timestamp() for e in reader.entries()}


def _rounds(journal: Path) -> int:
    from controller.journal.reader import JournalReader

    with JournalReader.open(journal) as reader:
        return sum(1 for _ in reader.entries(kinds=["round_result"]))


def _floor_source(tables: int):
    """A floor source (no broker: messages handed to it directly) holding ``tables`` tables."""
    import json as _json

    from controller.floor.broker import BrokerOptions
    from controller.roadmaps import compute, parse_results
    from controller.scoreboard.mqtt_source import MqttFloorSource

    source = MqttFloorSource(BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False))
    roads = _json.dumps(compute(parse_results("B P B B T P P P B B P B B B B P T " * 4)).to_json()).encode()

    class Message:
        def __init__(self, topic: str, payload: bytes) -> None:
            self.topic, self.payload = topic, payload

    def status(table: str, seq: int) -> Message:
        body = {"table_id": table, "seq": seq, "state": "betting", "shoe": f"{table}-S0001", "round": 60,
                "last_outcome": "banker", "online": True}
        return Message(f"shoectl/v1/tables/{table}/status", _json.dumps(body).encode())

    for i in range(tables):
        source._on_message(None, None, Message(f"shoectl/v1/tables/T{i}/roads", roads))
        source._on_message(None, None, status(f"T{i}", 1))
    return source, status


def floor(quick: bool = False) -> dict:
    """The floor's figures (see the module docstring)."""
    from controller.scoreboard.sources import LANGS, floor_row, snapshot_of

    repeats = 20 if quick else 200
    out = {}
    for tables in (32, 256):
        source, status = _floor_source(tables)
        seq = iter(range(2, 10**9))
        message = timings(lambda: source._on_message(None, None, status("T7", next(seq))), repeats)
        snapshot = timings(source._floor_snapshot, repeats)

        def rebuild_all() -> None:
            docs = {t: source._table_docs(t) for t in sorted(source._rows)}
            snapshot_of(0, {lang: {"tables": [floor_row(d[lang]) for d in docs.values()]} for lang in LANGS})
        before = timings(rebuild_all, max(5, repeats // 10))
        out[str(tables)] = {"message_us": round(summary(message, 1e6)["median"], 1),
                            "floor_snapshot_us": round(summary(snapshot, 1e6)["median"], 1),
                            "rebuild_all_us": round(summary(before, 1e6)["median"], 1)}
    return out


def run(quick: bool = False) -> dict:
    return {"floor": floor(quick), "stages": {f"poll_{int(p * 1000)}ms": stages(p, quick) for p in (0.05, 0.01)},
            **latency(quick), "separate_process": latency(quick, separate=True)}


def stages(poll_s: float, quick: bool = False) -> dict:
    """The follower's stages (see the module docstring), looking every ``poll_s``."""
    with tempfile.TemporaryDirectory() as tmp:
        journal = Path(tmp) / "journal.db"
        limit = ["--rounds", "20"] if quick else ["--shoes", "1"]
        proc = subprocess.Popen([*SHOECTL, "run", "--journal", str(journal), "--speed", "5", "--pace", "10",
                                 "--seed", "14", *limit, "--display", "lines"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
        reads: dict[int, float] = {}
        built: list[tuple[int, float]] = []
        try:
            source = _opened(journal)
            source.catch_up()  # what was journaled before it looked: left out
            publish, poll = source._publish_state, source._tail.poll

            def timed_poll(n: int) -> list:
                entries = poll(n)
                now = time.time()
                reads.update((e.seq, now) for e in entries)
                return entries

            def timed_publish() -> None:
                publish()
                built.append((source._view.version, time.time()))
            source._tail.poll, source._publish_state = timed_poll, timed_publish
            while proc.poll() is None:
                if not source.catch_up():
                    time.sleep(poll_s)
            source.catch_up()
            source._tail.close()
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        ts = _ts(journal)
    read = [(reads[v] - ts[v]) * 1000 for v, _ in built if v in reads]
    state = [(t - reads[v]) * 1000 for v, t in built if v in reads]
    return {"states": len(read),
            "commit_to_read_ms": {"median": round(statistics.median(read), 1), "p99": round(percentile(read, 99), 1)},
            "read_to_state_ms": {"median": round(statistics.median(state), 1), "p99": round(percentile(state, 99), 1)}}


def _opened(journal: Path):
    """``JournalSource.open(journal)`` once the table has written it."""
    from controller.journal.errors import JournalError
    from controller.scoreboard.sources import JournalSource

    deadline = time.monotonic() + HANG
    while True:
        try:
            return JournalSource.open(journal)
        except JournalError:
            assert time.monotonic() < deadline, "the table wrote no journal"
            time.sleep(0.05)


def latency(quick: bool = False, separate: bool = False) -> dict:
    """The journal-to-client figures (see the module docstring); ``separate``: the scoreboard as a
    process of its own (``shoectl scoreboard --journal``) instead of ``run --scoreboard``."""
    with tempfile.TemporaryDirectory() as tmp:
        journal = Path(tmp) / "journal.db"
        limit = ["--rounds", "20"] if quick else ["--shoes", "1"]
        proc = subprocess.Popen([*SHOECTL, "run", "--journal", str(journal), "--speed", "5", "--pace", "10",
                                 "--seed", "14", *limit, "--display", "lines",
                                 *([] if separate else ["--scoreboard", "127.0.0.1:0"])],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp)
        board = None
        try:
            if separate:
                _opened(journal)  # the journal exists: the scoreboard may open it
                board = subprocess.Popen([*SHOECTL, "scoreboard", "--journal", str(journal), "--listen", "127.0.0.1:0"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                url = board.stdout.readline().split(": ", 1)[1].strip()

                def stop_with_the_table() -> None:
                    proc.wait()
                    time.sleep(0.5)
                    board.terminate()
                threading.Thread(target=stop_with_the_table, daemon=True).start()
            else:
                from tests.scoreboard.serving import run_scoreboard_url  # the tests' reader of it

                url = run_scoreboard_url(proc, HANG)
            received = _received(url, proc)
            proc.wait(timeout=HANG)
        finally:
            for p in (proc, board):
                if p is not None and p.poll() is None:
                    p.kill()
                if p is not None:
                    p.wait()
            proc.stderr.close()
            if board is not None:
                board.stdout.close()
        ts = _ts(journal)
        first = received[0][0] if received else 0  # journaled before the client connected: left out
        lat = sorted((t - ts[v]) * 1000 for v, t in received if v in ts and v > first)
        rounds = _rounds(journal)
    if not lat:
        return {"states": 0}
    return {"rounds": rounds, "states": len(lat), "median_ms": round(statistics.median(lat), 1),
            "p99_ms": round(percentile(lat, 99), 1), "max_ms": round(lat[-1], 1)}
