"""The whole table: rounds per second at ``--speed max`` and the latency from a card leaving the
emulated shoe to the table core's journaled decision about it, over the real path (pty, pyserial,
protocol, link, owner thread, SQLite with synchronous=FULL), beside a raw pty echo round trip
measured in the same run.

The raw baseline: 23 bytes (one CARD_READ frame) written to a pty master and read back on the
slave by another thread, echoed, and read on the master: what any protocol on a pty pays.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
import tty
from pathlib import Path

from benchmarks.stats import percentile


def raw_pty_round_trip(n: int = 2000, size: int = 23) -> list[float]:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    stop = threading.Event()

    def echo() -> None:
        while not stop.is_set():
            data = os.read(slave, 4096)
            os.write(slave, data)

    t = threading.Thread(target=echo, daemon=True)
    t.start()
    payload = b"\x01" * size
    out = []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            os.write(master, payload)
            got = 0
            while got < size:
                got += len(os.read(master, 4096))
            out.append(time.perf_counter() - t0)
    finally:
        stop.set()
        os.write(master, b"x")
        t.join(timeout=1)
        os.close(master)
        os.close(slave)
    return out


def table_run(rounds: int) -> dict:
    from controller.journal import Journal
    from controller.rules.submission import load_preset
    from controller.table.autodealer import AutoDealer
    from controller.table.core import TableCore
    from controller.table.runner import TableRunner
    from firmware_bridge.emulator.serving import serve_table
    from firmware_bridge.emulator.table import Table
    from firmware_bridge.link import DeviceLink
    from firmware_bridge.profiles import get_profile

    drawn: list[float] = []
    decided: list[float] = []
    sub = load_preset("minibaccarat")
    with tempfile.TemporaryDirectory() as tmp:
        table = Table(seed=1, speed=float("inf"))
        table.shoe.add_draw_listener(lambda d: drawn.append(time.perf_counter()))
        server = serve_table(table, directory=Path(tmp) / "dev")
        journal = Journal.open(Path(tmp) / "journal.db", table_id="T1")
        core = TableCore(sub)

        def on_record(r) -> None:
            if r.kind in ("card", "burn", "discard"):
                decided.append(time.perf_counter())

        runner = TableRunner(core, journal, autodealer=AutoDealer(sub, seed=1), on_record=on_record, rounds=rounds)
        ports = {d["profile"]: d["port"] for d in server.devices()}
        runner.links = {role: DeviceLink.from_profile(get_profile(f"emulated-{role}"), ports[f"emulated-{role}"],
                                                      on_event=runner.link_event_callback(role),
                                                      on_state=runner.link_state_callback(role))
                        for role in ("shuffler", "shoe")}
        t0 = time.perf_counter()
        first_round = None

        def first(r) -> None:
            nonlocal first_round
            on_record(r)
            if r.kind == "round_result" and first_round is None:
                first_round = time.perf_counter()

        runner.on_record = first
        runner.run()
        elapsed = time.perf_counter() - (first_round or t0)
        journal_entries = journal.last_seq
        journal.close()
        server.close()
    n = min(len(drawn), len(decided))
    lat = [decided[i] - drawn[i] for i in range(n)]
    return {"rounds": runner.rounds_done, "rounds_per_s": (runner.rounds_done - 1) / elapsed if elapsed else None,
            "journal_entries": journal_entries, "latency": lat}


def run(quick: bool = False) -> dict:
    raw = raw_pty_round_trip(500 if quick else 3000)
    res = table_run(30 if quick else 200)
    lat = res.pop("latency")
    raw_med = statistics.median(raw)
    med = statistics.median(lat)
    return {
        "raw_pty_round_trip_us": {"median": round(raw_med * 1e6, 1), "p99": round(percentile(raw, 99) * 1e6, 1)},
        "card_to_decision_us": {"median": round(med * 1e6, 1), "p99": round(percentile(lat, 99) * 1e6, 1), "n": len(lat)},
        "ratio_median": round(med / raw_med, 1),
        "rounds_per_s_speed_max": round(res["rounds_per_s"], 1) if res["rounds_per_s"] else None,
        "rounds": res["rounds"],
        "journal_entries": res["journal_entries"],
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
