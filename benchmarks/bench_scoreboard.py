"""The scoreboard's journal-to-client latency (issue 14; figures, not a pass/fail test).

``run(quick=False) -> dict``: ``shoectl run --speed 5 --pace 10 --shoes 1 --scoreboard
127.0.0.1:0`` deals a whole shoe (``--quick``: 20 rounds) while an SSE client (http.client) reads
``/tables/T1/events``; for every state received, the time from its journal entry's ``ts`` (taken
in the commit's transaction) to the moment the client has the whole message: ``median_ms``,
``p99_ms``, ``max_ms`` over ``states``, and ``rounds``. The browser adds its drawing to this (a
few milliseconds; ``tests/scoreboard/test_browser.py`` prints the journal-to-page figure and keeps
it in ``artifacts/scoreboard/latency.json``). The scoreboard looks at the journal every 50 ms, so
the median is about half of that plus the delivery.

Run from the project root: ``python -m benchmarks scoreboard [--quick]``.
"""
from __future__ import annotations

import http.client
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.stats import percentile

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


def run(quick: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        journal = Path(tmp) / "journal.db"
        limit = ["--rounds", "20"] if quick else ["--shoes", "1"]
        proc = subprocess.Popen([*SHOECTL, "run", "--journal", str(journal), "--speed", "5", "--pace", "10",
                                 "--seed", "14", *limit, "--display", "lines", "--scoreboard", "127.0.0.1:0"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp)
        try:
            from tests.scoreboard.serving import run_scoreboard_url  # the tests' reader of it

            received = _received(run_scoreboard_url(proc, HANG), proc)
            proc.wait(timeout=HANG)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stderr.close()
        ts = _ts(journal)
        first = received[0][0] if received else 0  # journaled before the client connected: left out
        lat = sorted((t - ts[v]) * 1000 for v, t in received if v in ts and v > first)
        rounds = _rounds(journal)
    if not lat:
        return {"states": 0}
    return {"rounds": rounds, "states": len(lat), "median_ms": round(statistics.median(lat), 1),
            "p99_ms": round(percentile(lat, 99), 1), "max_ms": round(lat[-1], 1)}
