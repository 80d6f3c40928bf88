"""The edge monitor's worker process dies (killed by the OOM killer, a crash): the monitor stops
with one warning and the table plays on, every round dealt, settled and journaled; the figures
journaled before the failure stay, and none comes after it (issue 15: "it must never delay a
card's decision")."""
from __future__ import annotations

import multiprocessing
import os
import signal
import time

from runner_rig import INF, make_runner, run_in_thread
from structlog.testing import capture_logs

from controller.journal import Journal, JournalReader, kinds, verify
from controller.table.edge_monitor import EdgeMonitor
from firmware_bridge.emulator.table import EmulatedTable

ROUNDS = 8
HANG = 60.0  # seconds before a wait is declared hung (never a performance limit)


def test_a_killed_worker_process_stops_the_monitor_and_the_table_deals_on(tmp_path) -> None:
    table = EmulatedTable(seed=21, speed=INF)
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal, "ez-baccarat", rounds=ROUNDS, pace=0.05)
    monitor = EdgeMonitor(worker="process").attach(runner)
    try:
        with capture_logs() as logs:
            thread = run_in_thread(runner)
            end = time.monotonic() + HANG
            while monitor.computed < 1:
                assert time.monotonic() < end and thread.is_alive(), "no figures came"
                time.sleep(0.01)
            workers = multiprocessing.active_children()
            assert workers, "the monitor's worker process"
            for child in workers:
                os.kill(child.pid, signal.SIGKILL)
            thread.join(HANG)
            assert not thread.is_alive(), "the table did not finish its rounds"
    finally:
        monitor.close()
        journal.close()
        table.close()
    assert runner.error is None and runner.limits.rounds_done == ROUNDS
    assert monitor.broken
    warnings = [e for e in logs if e["log_level"] == "warning" and "worker failed" in e["event"]]
    assert len(warnings) == 1, logs
    with JournalReader.open(tmp_path / "j.db") as r:
        entries = list(r.entries())
    results = [e for e in entries if e.kind == kinds.ROUND_RESULT]
    edges = [e for e in entries if e.kind == kinds.EDGE]
    assert len(results) == ROUNDS and 1 <= len(edges) < ROUNDS
    assert len(edges) == monitor.computed
    assert verify(tmp_path / "j.db").ok
