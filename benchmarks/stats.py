"""Small helpers for benchmark figures: median and p99 of repeated timings."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[k]


def timings(fn: Callable[[], object], repeats: int, warmup: int = 1) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def summary(values: list[float], scale: float = 1.0, unit: str = "s") -> dict[str, float | str]:
    return {"median": statistics.median(values) * scale, "p99": percentile(values, 99) * scale,
            "min": min(values) * scale, "n": len(values), "unit": unit}
