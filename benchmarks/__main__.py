"""Run every ``benchmarks/bench_*.py`` module's ``run(quick)`` and print its figures.

``python -m benchmarks [--quick] [NAME ...] [--json FILE]``. Each module returns a dict of figures;
they are printed as indented JSON and, with ``--json``, written to a file (the default
``benchmarks/results/latest.json`` is git-ignored).
"""
from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks")
    ap.add_argument("names", nargs="*", help="benchmarks to run (e.g. odds simulate codec); default all")
    ap.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke run")
    ap.add_argument("--json", default=str(HERE / "results" / "latest.json"), metavar="FILE")
    args = ap.parse_args(argv)
    names = args.names or sorted(p.stem[len("bench_"):] for p in HERE.glob("bench_*.py"))
    results = {"machine": {"python": platform.python_version(), "platform": platform.platform()}, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for i, name in enumerate(names, start=1):
        mod = importlib.import_module(f"benchmarks.bench_{name}")
        print(f"== {name} ({i} of {len(names)})", flush=True)  # progress: the whole run takes minutes
        t0 = time.perf_counter()
        figures = mod.run(quick=args.quick)
        figures["_wall_seconds"] = round(time.perf_counter() - t0, 2)
        results[name] = figures
        print(json.dumps(figures, indent=2, default=str), flush=True)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    print(f"figures written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
