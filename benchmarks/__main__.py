"""Run every ``benchmarks/bench_*.py`` module's ``run(quick)`` and print its figures.

``python -m benchmarks [--quick] [NAME ...] [--json FILE]``. Each module returns a dict of figures;
they are printed as indented JSON and, with ``--json``, written to a file (the default
``benchmarks/results/latest.json`` is git-ignored). A module's ``"summary"`` rows
(``benchmarks.stats.summary_row``: issue 15's figures) are printed last as one table: each figure
with its repeats' lowest and highest, beside its floor and its goal.

The modules that load the whole machine with processes of their own (``LAST``: 32 tables at a
real pace, the noisy-line runs, 64 tables feeding the floor) run after the others, in that order,
so that their load (a load average of 63-75 after the floor's) is not the neighbours' of the
figures measured in one process, nor of the 32 tables' tail;
each module's figures carry the load average before and after it (``_load_before``,
``_load_after``: 1, 5 and 15 minutes), so a figure is read beside the load it ran under.

The tables and links a benchmark runs in this process log through structlog as ``shoectl run``
does, configured once here: warnings and errors on standard error, so that standard output holds
the figures alone (unconfigured, structlog printed every info line among them).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

from controller.logconfig import configure_logging

from benchmarks.stats import DifferentAnswers

HERE = Path(__file__).resolve().parent
LAST = ("tables", "noise", "floor")  # whole-machine loads of their own, in this order, after the rest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks")
    ap.add_argument("names", nargs="*", help="benchmarks to run (e.g. odds simulate codec); default all")
    ap.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke run")
    ap.add_argument("--json", default=str(HERE / "results" / "latest.json"), metavar="FILE")
    args = ap.parse_args(argv)
    configure_logging("warning")
    names = args.names or sorted((p.stem[len("bench_"):] for p in HERE.glob("bench_*.py")),
                                 key=lambda name: (LAST.index(name) if name in LAST else -1, name))
    results = {"machine": {"python": platform.python_version(), "platform": platform.platform()}, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for i, name in enumerate(names, start=1):
        mod = importlib.import_module(f"benchmarks.bench_{name}")
        print(f"== {name} ({i} of {len(names)})", flush=True)  # progress: the whole run takes minutes
        t0, load_before = time.perf_counter(), _load()
        try:
            figures = mod.run(quick=args.quick)
        except DifferentAnswers as exc:
            print(f"benchmark {name} stopped: {exc}", file=sys.stderr)
            return 1
        figures["_wall_seconds"] = round(time.perf_counter() - t0, 2)
        figures["_load_before"], figures["_load_after"] = load_before, _load()
        results[name] = figures
        print(json.dumps(figures, indent=2, default=str), flush=True)
    rows = [row for name in names for row in results[name].get("summary", [])]
    if rows:
        print(summary_table(rows), flush=True)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    print(f"figures written to {out}")
    return 0


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _number(x: object) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and abs(x) < 100:
        return f"{x:.3g}"
    return f"{x:,}" if isinstance(x, int) else f"{x:,.0f}"


def _spread(row: dict) -> str:
    """The lowest and highest of the repeats behind a row's value, and how many ("-": none)."""
    if row.get("min") is None or row.get("max") is None:
        return "-"
    repeats = f" ({row['repeats']})" if row.get("repeats") else ""
    return f"{_number(row['min'])}-{_number(row['max'])}{repeats}"


def summary_table(rows: list[dict]) -> str:
    """The closing table: figure, value, its repeats' min-max, floor, ratio, goal, met."""
    head = ("figure", "value", "min-max (repeats)", "floor", "value/floor", "goal", "met")
    body = [(r["figure"], f"{_number(r['value'])} {r['unit']}", _spread(r), _number(r["floor"]), _number(r["ratio"]),
             r["goal"], "-" if r["met"] is None else "yes" if r["met"] else "NO") for r in rows]
    widths = [max(len(str(line[i])) for line in [head, *body]) for i in range(len(head))]
    lines = ["== summary (issue 15): each figure (the median of its repeats, with their lowest and highest, or "
             "the percentile or highest its name says) beside its floor in the same run and its goal"]
    for line in [head, *body]:
        lines.append("  ".join(str(cell).ljust(w) if i in (0, 5) else str(cell).rjust(w)
                               for i, (cell, w) in enumerate(zip(line, widths))).rstrip())
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
