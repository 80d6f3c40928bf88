"""The one-table floor (``bench_table.Floor``: a raw pty round trip, then a page written and
synced) sampled in a process of its own, for a benchmark whose own process is busy: sampled beside
the 32 tables' stream readers, its p99 read 1.1-2.9x what it reads alone, and the tables' ratio to
it was understated as much (a review of the benchmarks).

``python -m benchmarks.floor_process SECONDS INTERVAL_S`` samples once every ``INTERVAL_S`` for
``SECONDS`` and prints ``{"round_trips": [...], "syncs": [...]}`` (seconds), one JSON line.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_table import Floor


def sample_for(seconds: float, interval: float) -> dict[str, list[float]]:
    """One floor sample every ``interval`` seconds for ``seconds``."""
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp, Floor(Path(tmp)) as floor:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            floor.sample(1)
            time.sleep(max(0.0, min(interval, end - time.monotonic())))
        return {"round_trips": floor.round_trips, "syncs": floor.syncs}


if __name__ == "__main__":
    print(json.dumps(sample_for(float(sys.argv[1]), float(sys.argv[2]))))
