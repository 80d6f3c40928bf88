"""The control socket under a flood of failed logins (issue 9, item 13): a table at ``--speed max``
with the automated dealer, an operator's command (``sit`` or ``leave``, dealer d1, right PIN) timed on an idle
socket and then while eight clients send logins for unknown operators as fast as the table answers
them; the flood's rate, the table's resident memory before and after, and what the journal kept
(refusals one by one, and counted in ``refusals_summary`` records).
"""
from __future__ import annotations

import multiprocessing
import shutil
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.control.running_table import command_line, launch_table, make_operators_file, rss_kib

FLOOD_CLIENTS = 8


def _timed_commands(t: Any, n: int) -> list[float]:
    """``n`` commands the table takes, timed: a player sits at a seat the automated dealer left
    free and leaves it again (a seat is taken once)."""
    seat = next(s for s in range(1, 8) if s not in t.status()["seats_taken"])
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        reply = t.ask(command_line("fp1", "leave" if i % 2 else "sit", seat=seat))  # the automated dealer deals
        out.append(time.perf_counter() - t0)
        assert reply and reply["ok"], reply
    return out


def _flood(sock: str, worker: int, attempts: int) -> None:
    """One flooding client (run in processes of their own, so that the timed client does not wait
    for its own process's lock behind them)."""
    from tests.control.running_table import send_and_read

    for n in range(attempts):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(sock)
            send_and_read(s, command_line(f"intruder-{worker}-{n}", "open"))


def run(quick: bool = False) -> dict[str, Any]:
    attempts = 250 if quick else 2500
    d = Path(tempfile.mkdtemp(prefix="shoectl-bench-", dir="/tmp"))
    try:
        t = launch_table(d, make_operators_file(d / "operators.toml"), edge_monitor=True)
        try:
            time.sleep(1.0)
            idle = _timed_commands(t, 10)
            rss_before = rss_kib(t.proc.pid) / 1024
            per_client = attempts // FLOOD_CLIENTS
            ctx = multiprocessing.get_context("fork")
            clients = [ctx.Process(target=_flood, args=(str(t.sock), w, per_client)) for w in range(FLOOD_CLIENTS)]
            t0 = time.perf_counter()
            for c in clients:
                c.start()
            time.sleep(0.5)
            under_flood = _timed_commands(t, 10)
            for c in clients:
                c.join()
            flood_s = time.perf_counter() - t0
            rss_after = rss_kib(t.proc.pid) / 1024
            time.sleep(1.5)  # the last summary
        finally:
            t.stop()
        single, counted = t.refusals("auth")
        return {
            "command_idle_ms_median": round(statistics.median(idle) * 1000, 1),
            "command_under_flood_ms_median": round(statistics.median(under_flood) * 1000, 1),
            "command_under_flood_ms_max": round(max(under_flood) * 1000, 1),
            "flood_attempts": per_client * FLOOD_CLIENTS,
            "flood_attempts_per_s": round(per_client * FLOOD_CLIENTS / flood_s),
            "rss_mib_before": round(rss_before, 1),
            "rss_mib_after": round(rss_after, 1),
            "journaled_one_by_one": single,
            "journaled_as_counts": counted,
        }
    finally:
        shutil.rmtree(d, ignore_errors=True)
