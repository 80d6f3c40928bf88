"""The whole table: rounds per second at ``--speed max`` and the latency from a card leaving the
emulated shoe to the table core's journaled decision about it, over the real path (pty, pyserial,
protocol, link, owner thread, SQLite with synchronous=FULL), beside its floor measured in the same
run. The emulated table runs in a process of its own, as a real shoe is a device of its own: in
this process its threads would compete with the controller's for the interpreter.

The floor of one card is what any design pays on this machine: a raw pty round trip (23 bytes,
one CARD_READ frame, written to a pty master, echoed by a thread on the slave, read back) plus one
``fdatasync`` of a 4 KiB page overwritten in a file beside the journal (a WAL frame: the commit
that makes the decision durable). Each floor sample is one round trip plus one fdatasync; they are
taken in blocks between the segments of the table run (``TableBench``), so that both see the same
conditions on a shared machine. Goals (issue 10): median card-to-decision at most ``GOAL_RATIO``
x the floor's median, p99 at most ``GOAL_P99_US``.

``card_to_decision_median_us_per_segment``: the median in each measured segment, in order (the
summary's min-max: each segment a repeat, its floor samples taken just before it).

Where a card's time goes (``stages_us``, medians and p99 of each card's own stages): the wire (the
card leaving the shoe, through the emulator and the pty, to the link's reader handing the event to
the runner's callback), the hand-off (the owner thread taking it, the core deciding, the records
made) up to the start of ``Journal.append_batch``, the transaction (validation, chaining, SQLite,
the fsync), and after the commit (acknowledgement, snapshot, dispatch) up to the decision. The
stages are timed by wrapping the callback and ``append_batch`` of the bench's own objects.

``--sqlite-calls`` (``run(sqlite_calls=True)``) adds what the writer's SQLite calls cost inside
the running table (``SqliteCalls``): BEGIN, the inserts and COMMIT by wall clock and the owner's
CPU time, each commit's WAL frames (the ``-shm`` header's ``mxFrame``) and the share of commits
past the WAL's end. It adds a few microseconds: its figures are not the ones to compare.
"""
from __future__ import annotations

import bisect
import gc
import multiprocessing
import os
import statistics
import tempfile
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.stats import percentile, spread_of, summary_row
from benchmarks.table_sqlite_calls import SqliteCalls

GOAL_RATIO = 2.0     # card-to-decision median / floor median
GOAL_P99_US = 1000.0  # card-to-decision p99, microseconds
FRAME_BYTES = 23      # one CARD_READ frame on the wire
SEGMENT_TIMEOUT_S = 120.0  # a segment takes well under a second; a table that stops dealing fails the run
PAGE = 4096 + 24      # one WAL frame: a page and its header


class Floor:
    """Paired floor samples: a raw pty round trip of one CARD_READ frame, then one fdatasync of a
    page overwritten in a preallocated file in ``directory`` (as SQLite rewrites its WAL)."""

    def __init__(self, directory: Path) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        tty.setraw(self.slave)
        self._stop = threading.Event()
        self._echo = threading.Thread(target=self._echo_loop, daemon=True)
        self._fd = os.open(directory / "floor.wal", os.O_RDWR | os.O_CREAT, 0o600)
        self._slots = 256
        os.pwrite(self._fd, b"\0" * PAGE * self._slots, 0)
        os.fsync(self._fd)
        self._next = 0
        self.round_trips: list[float] = []
        self.syncs: list[float] = []

    def _echo_loop(self) -> None:
        while not self._stop.is_set():
            os.write(self.slave, os.read(self.slave, 4096))

    def __enter__(self) -> Floor:
        self._echo.start()
        return self

    def sample(self, n: int) -> None:
        payload = b"\x01" * FRAME_BYTES
        page = b"\x02" * PAGE
        for _ in range(n):
            t0 = time.perf_counter()
            os.write(self.master, payload)
            got = 0
            while got < FRAME_BYTES:
                got += len(os.read(self.master, 4096))
            t1 = time.perf_counter()
            # The page's write is counted with its sync: the journal's commit pays both (a review
            # of the benchmarks found the floor about 4 % low without it).
            os.pwrite(self._fd, page, (self._next % self._slots) * PAGE)
            self._next += 1
            os.fdatasync(self._fd)
            self.round_trips.append(t1 - t0)
            self.syncs.append(time.perf_counter() - t1)

    def totals(self) -> list[float]:
        return [a + b for a, b in zip(self.round_trips, self.syncs)]

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        os.write(self.master, b"x")
        self._echo.join(timeout=1)
        for fd in (self.master, self.slave, self._fd):
            os.close(fd)


def serve_emulated_table(conn: Any, directory: str, seed: int = 1, speed: float = float("inf"),
                         clock: Callable[[], float] = time.perf_counter) -> None:
    """The child process: an emulated table (at speed max by default) served over ptys in
    ``directory``, as ``shoectl emulate --table`` would. Sends its ports, serves until told to
    stop, then sends ``(position, clock())`` of every card that left the shoe (by default
    perf_counter, CLOCK_MONOTONIC: the same clock as the parent's)."""
    from firmware_bridge.emulator.serving import serve_table
    from firmware_bridge.emulator.table import EmulatedTable

    drawn: list[tuple[int, float]] = []
    table = EmulatedTable(seed=seed, speed=speed)
    table.shoe.add_draw_listener(lambda d: drawn.append((d.position, clock())))
    server = serve_table(table, directory=directory)
    conn.send(server.devices())
    conn.recv()
    server.close()
    conn.send(drawn)


class TableBench:
    """An emulated table in another process (as a real shoe is another device) and one journal,
    run in segments: each segment is a ``shoectl run`` as the CLI builds it (recovery from the
    journal, links seeded from it, hand-off delivery), stopped after ``rounds`` rounds. Between
    segments the floor is sampled, so both see the same machine conditions. The journal stays
    open throughout, as in one long run: SQLite then rewrites its WAL in place once the first
    checkpoint is behind (a warm-up segment, not measured), instead of growing a new one per
    segment. ``latency()``: seconds from each card leaving the shoe to the table's journaled
    record of it (matched by shoe position, in order); ``stages()``: the same cut in four."""

    def __init__(self, directory: Path, *, sqlite_calls: bool = False) -> None:
        from controller.journal import Journal
        from controller.rules.submission import load_preset

        self.directory = directory
        self.journal = Journal.open(directory / "journal.db", table_id="T1")
        self.sqlite_calls = SqliteCalls(self.journal) if sqlite_calls else None
        self.journal.append_batch = self._timed_transaction(self.journal.append_batch)  # type: ignore[method-assign]
        self.sub = load_preset("minibaccarat")
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._device = context.Process(target=serve_emulated_table, args=(child, str(directory / "dev")),
                                       daemon=True)
        self._device.start()
        self.ports = {d["profile"]: d["port"] for d in self._conn.recv()}
        self.decided: list[tuple[int, float]] = []
        self.segment_ends: list[int] = []  # len(decided) after each measured segment
        self.drawn: list[tuple[int, float]] = []
        self.handed: list[tuple[int, float]] = []  # (position, when the reader handed its event over)
        self.transactions: list[tuple[float, float, list[int]]] = []  # (start, end, positions recorded)
        self._measuring = False
        self.rounds = 0
        self.seconds = 0.0
        self.journal_entries = 0

    def segment(self, rounds: int, seed: int, *, measure: bool = True) -> None:
        if self.sqlite_calls is not None:
            self.sqlite_calls.measuring = measure
        from controller.table.autodealer import AutoDealer
        from controller.table.core import TableCore
        from controller.table.runner import TableRunner
        from firmware_bridge.link import DeviceLink
        from firmware_bridge.profiles import get_profile

        journal = self.journal
        started: list[float] = []
        self._measuring = measure

        def on_record(r) -> None:  # noqa: ANN001 - a controller.table.io.TableRecord
            if not measure:
                return
            if r.kind in DEALT_KINDS:
                self.decided.append((r.payload.get("position"), time.perf_counter()))
            elif r.kind == "round_result" and not started:
                started.append(time.perf_counter())  # rounds/s counted from the first round's end

        runner = TableRunner(TableCore(self.sub), journal, autodealer=AutoDealer(seed=seed),
                             on_record=on_record, rounds=rounds)
        runner.recover_from_journal()
        ports = self.ports
        links = {}
        for role in ("shuffler", "shoe"):
            seeded = runner.last_delivered_for(role)
            options = runner.link_options(role)
            options["on_event"] = self._timed_handoff(options["on_event"])
            links[role] = DeviceLink.from_profile(get_profile(f"emulated-{role}"), ports[f"emulated-{role}"],
                                                  **options, last_delivered=seeded[1] if seeded else None)
        runner.links = links
        watchdog = threading.Timer(SEGMENT_TIMEOUT_S, runner.stop)
        watchdog.start()
        try:
            runner.run()
        finally:
            watchdog.cancel()
        if not runner.limits.reached:
            last = journal.last()
            raise RuntimeError(f"the table stopped dealing: {runner.limits.rounds_done} of {rounds} rounds in "
                               f"{SEGMENT_TIMEOUT_S:g} s (the journal's last entry: "
                               f"{f'{last.seq} {last.kind}' if last else 'none'})")
        if started:
            self.seconds += time.perf_counter() - started[0]
            self.rounds += runner.limits.rounds_done - 1
        if measure:
            self.segment_ends.append(len(self.decided))
        self.journal_entries = journal.last_seq

    def close(self) -> None:
        """Close the journal, stop the emulated table and collect when its cards left the shoe."""
        if self.sqlite_calls is not None:
            self.sqlite_calls.detach(self.journal)
        self.journal.close()
        self._conn.send("stop")
        self.drawn = self._conn.recv()
        self._device.join(timeout=30)

    def _timed_handoff(self, on_event: Callable[[Any], None]) -> Callable[[Any], None]:
        def handed(link_event: Any) -> None:
            if self._measuring and hasattr(link_event.message, "position"):
                self.handed.append((link_event.message.position, time.perf_counter()))
            on_event(link_event)
        return handed

    def _timed_transaction(self, append_batch: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def timed(records: Any, **options: Any) -> Any:
            records = list(records)
            t0 = time.perf_counter()
            out = append_batch(records, **options)
            if self._measuring:
                self.transactions.append((t0, time.perf_counter(), [r.payload.get("position") for r in records
                                                                    if r.kind in DEALT_KINDS]))
            return out
        return timed

    def _last_before(self, events: list[tuple[int, float]]) -> Callable[[int, float], float | None]:
        """For (position, t): the last time in ``events`` at that position up to ``t``."""
        by_position: dict[int, list[float]] = {}
        for position, t in events:
            by_position.setdefault(position, []).append(t)  # in time order: one thread each
        for times in by_position.values():
            times.sort()

        def last(position: int, t: float) -> float | None:
            times = by_position.get(position, [])
            i = bisect.bisect_right(times, t)
            return times[i - 1] if i else None
        return last

    def _latencies(self) -> list[float | None]:
        """For each measured record (``decided``, in order), the time since the last time a card
        left the shoe at its position before it (a position comes round again only with the next
        shoe); None where none left before it."""
        drawn = self._last_before(self.drawn)
        out: list[float | None] = []
        for position, t in self.decided:
            left = drawn(position, t)
            out.append(None if left is None else t - left)
        return out

    def latency(self) -> list[float]:
        """Each measured record's card-to-decision latency (seconds)."""
        return [x for x in self._latencies() if x is not None]

    def segment_medians(self) -> list[float]:
        """Card-to-decision's median in each measured segment (microseconds), in order."""
        latencies, bounds = self._latencies(), [0, *self.segment_ends]
        medians = []
        for start, end in zip(bounds, bounds[1:]):
            values = [x for x in latencies[start:end] if x is not None]
            if values:
                medians.append(round(statistics.median(values) * 1e6, 1))
        return medians

    def stages(self) -> dict[str, list[float]]:
        """``latency()`` cut in four for each card seen at every stage (see the module docstring)."""
        drawn, handed = self._last_before(self.drawn), self._last_before(self.handed)
        ends = self._last_before([(p, end) for _, end, positions in self.transactions for p in positions])
        starts = {(p, end): start for start, end, positions in self.transactions for p in positions}
        out: dict[str, list[float]] = {name: [] for name in STAGES}
        for position, t in self.decided:
            left, end = drawn(position, t), ends(position, t)
            given = handed(position, end) if end is not None else None
            if left is None or given is None or given < left:
                continue
            start = starts[(position, end)]
            for name, value in zip(STAGES, (given - left, start - given, end - start, t - end)):
                out[name].append(value)
        return out


DEALT_KINDS = ("card", "burn", "discard")  # the records that say what became of a card
STAGES = ("wire_to_handoff", "handoff_to_transaction", "transaction", "commit_to_decision")


def _us(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values) * 1e6, 1),
            "p99": round(percentile(values, 99) * 1e6, 1), "n": len(values)}


def run(quick: bool = False, *, sqlite_calls: bool = False) -> dict:
    segments, rounds, warm_up = (3, 10, 10) if quick else (8, 25, 40)
    samples = (300 if quick else 2000) // (segments + 1)
    with tempfile.TemporaryDirectory(prefix="bench-table-") as tmp, Floor(Path(tmp)) as floor:
        bench = TableBench(Path(tmp), sqlite_calls=sqlite_calls)
        try:
            bench.segment(warm_up, seed=0, measure=False)
            gc.freeze()  # as shoectl run does once it has started
            for i in range(segments):
                floor.sample(samples)
                bench.segment(rounds, seed=i + 1)
            floor.sample(samples)
        finally:
            gc.unfreeze()
            bench.close()
    floor_us, card_us = _us(floor.totals()), _us(bench.latency())
    per_segment = bench.segment_medians()
    ratio = card_us["median"] / floor_us["median"]
    figures = {
        "floor_us": floor_us,
        "raw_pty_round_trip_us": _us(floor.round_trips),
        "fdatasync_us": _us(floor.syncs),
        "card_to_decision_us": card_us,
        "card_to_decision_median_us_per_segment": per_segment,
        "stages_us": {name: _us(values) for name, values in bench.stages().items() if values},
        "ratio_median": round(ratio, 2),
        "ratio_p99": round(card_us["p99"] / floor_us["p99"], 2),
        "goal": f"median <= {GOAL_RATIO:g}x floor, p99 <= {GOAL_P99_US:g} us",
        "goal_met": ratio <= GOAL_RATIO and card_us["p99"] <= GOAL_P99_US,
        "rounds_per_s_speed_max": round(bench.rounds / bench.seconds, 1) if bench.seconds else None,
        "rounds": segments * rounds,
        "segments": segments,
        "journal_entries": bench.journal_entries,
        "summary": [summary_row("card-to-decision, one table (median)", card_us["median"], "us",
                                f"median <= {GOAL_RATIO:g}x floor, p99 <= {GOAL_P99_US:g} us (p99 {card_us['p99']:g} us)",
                                ratio <= GOAL_RATIO and card_us["p99"] <= GOAL_P99_US, floor=floor_us["median"],
                                ratio=round(ratio, 2), **spread_of(per_segment))],
    }
    if bench.sqlite_calls is not None:
        figures["sqlite_calls"] = bench.sqlite_calls.figures()
    return figures


if __name__ == "__main__":
    import argparse
    import json

    from controller.logconfig import configure_logging

    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_table")
    ap.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    ap.add_argument("--sqlite-calls", action="store_true",
                    help="also time the writer's SQLite calls and count each commit's WAL frames")
    args = ap.parse_args()
    configure_logging("warning")  # standard output holds the figures alone (benchmarks/__main__.py)
    print(json.dumps(run(args.quick, sqlite_calls=args.sqlite_calls), indent=2))
