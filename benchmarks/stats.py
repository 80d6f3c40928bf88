"""Small helpers for benchmark figures: median and p99 of repeated timings."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[k]


def timings(fn: Callable[[], object], repeats: int, warmup: int = 1,
            clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Seconds per call of ``fn`` by ``clock`` (wall time; ``time.thread_time``: this thread's CPU)."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return out


def summary(values: list[float], scale: float = 1.0, unit: str = "s") -> dict[str, float | str]:
    return {"median": statistics.median(values) * scale, "p99": percentile(values, 99) * scale,
            "min": min(values) * scale, "n": len(values), "unit": unit}


def spread_of(values: Sequence[float]) -> dict[str, object]:
    """``summary_row``'s ``spread`` and ``repeats`` from the medians of a figure's repeats (or of
    its run's parts); nothing for none."""
    return {"spread": (min(values), max(values)), "repeats": len(values)} if values else {}


def summary_row(figure: str, value: float | None, unit: str, goal: str, met: bool | None, *,
                floor: float | None = None, ratio: float | None = None,
                spread: Sequence[float] | None = None, repeats: int | None = None) -> dict[str, object]:
    """One row of ``make bench``'s closing table (``benchmarks/__main__.py``): a figure of issue 15,
    its floor measured in the same run (None: it has none), value over floor, the goal in words
    and whether it is met; ``spread``, the lowest and highest of its ``repeats`` (the medians of
    a run's tenths or segments where the figure is the median of the whole run; None for a figure
    with no repeats). A module lists its rows under ``"summary"`` in its figures."""
    low, high = (spread[0], spread[1]) if spread is not None else (None, None)
    return {"figure": figure, "value": value, "unit": unit, "floor": floor, "ratio": ratio, "goal": goal, "met": met,
            "min": low, "max": high, "repeats": repeats}


class DifferentAnswers(AssertionError):
    """A fast path answered otherwise than its reference path on a benchmark's own input: its
    speed is then no figure (a benchmark review: the benchmarks timed the fast paths without
    looking at their answers, which only the tests compared)."""


def check_same(what: str, fast: object, reference: object) -> str:
    """Raise ``DifferentAnswers`` unless ``fast == reference``; else the line a module puts in
    its figures as ``answers_checked``."""
    if fast != reference:
        raise DifferentAnswers(f"{what}: the fast path's answer differs from the reference path's")
    return f"{what}: equal"
