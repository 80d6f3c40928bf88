"""``SqliteCalls``: the table writer's SQLite connection wrapped, for ``bench_table --sqlite-calls``
(benchmarks/bench_table.py's docstring says what it measures and what not to compare it with)."""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.stats import percentile


class SqliteCalls:
    """The writer's connection wrapped (see the module docstring): each BEGIN, insert and COMMIT
    timed by wall clock and by this thread's CPU time, and each COMMIT's WAL frames and whether
    the WAL file grew. ``figures()``: medians and p90s in microseconds."""

    CALLS = ("BEGIN IMMEDIATE", "INSERT", "COMMIT")

    def __init__(self, journal: Any) -> None:
        self._conn = journal._conn
        self._wal = f"{journal.path}-wal"
        self._wal_fd = os.open(self._wal, os.O_RDONLY)  # not the -shm: a descriptor of it closed here releases the writer's lock
        self.measuring = False
        self.wall: dict[str, list[float]] = {name: [] for name in self.CALLS}
        self.cpu: dict[str, list[float]] = {name: [] for name in self.CALLS}
        self.frames: list[int] = []
        self.grew: list[bool] = []
        journal._conn = self

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, sql: str, *args: Any) -> Any:
        if sql != "COMMIT":
            return self._timed(sql, self._conn.execute, sql, *args)
        from controller.journal.checkpoints import wal_frames

        before, size = wal_frames(self._wal_fd) or 0, os.stat(self._wal).st_size
        out = self._timed(sql, self._conn.execute, sql, *args)
        after = wal_frames(self._wal_fd) or 0
        if self.measuring:
            self.frames.append(after - before if after >= before else after)  # a restart begins again
            self.grew.append(os.stat(self._wal).st_size > size)
        return out

    def executemany(self, sql: str, rows: Any) -> Any:
        return self._timed("INSERT", self._conn.executemany, sql, rows)

    def _timed(self, name: str, call: Callable[..., Any], *args: Any) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        out = call(*args)
        if self.measuring and name in self.wall:
            self.cpu[name].append(time.thread_time() - c0)
            self.wall[name].append(time.perf_counter() - t0)
        return out

    def detach(self, journal: Any) -> None:
        """Give ``journal`` its own connection back (before it closes)."""
        journal._conn = self._conn
        os.close(self._wal_fd)

    def figures(self) -> dict[str, Any]:
        def us(values: list[float]) -> dict[str, float]:
            return {"median": round(statistics.median(values) * 1e6, 1),
                    "p90": round(percentile(values, 90) * 1e6, 1)} if values else {}
        frames: dict[int, int] = {}
        for n in self.frames:
            frames[n] = frames.get(n, 0) + 1
        return {"wall_us": {name: us(v) for name, v in self.wall.items()},
                "cpu_us": {name: us(v) for name, v in self.cpu.items()},
                "wal_frames_per_commit": dict(sorted(frames.items())),
                "commits_growing_the_wal": f"{sum(self.grew)} of {len(self.grew)}"}
