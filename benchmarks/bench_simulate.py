"""Simulation speed beside its floor, in the same run (issue 15).

The floor is ``benchmarks/floor_loop.py``: the straightforward 50-line Punto Banco loop
(random.shuffle, list indexing, the tableau as ifs, Banker/Player/Tie tallies only). Measured
against it, each path deals EZ Baccarat and tallies every wager (pairs, Dragon 7 and Panda 8
included), shuffle, cut and burn included:

- ``python``: the pure-Python fast path (the default without numpy); goal: at least the floor's
  speed (ratio >= 1);
- ``numpy``: vectorised across shoes; goal: >= 5,000,000 rounds/s;
- ``engine``: RoundEngine fed card by card (the reference; few shoes).

The repeats are interleaved (floor, python, numpy, engine, floor, ...) so that a noisy moment on
this shared machine hits every path alike; each repeat's ratio is against the floor of the same
repeat. Figures: median, min and max over the repeats, by wall time and by this thread's CPU time
(``cpu_*``: what the work costs, without the waits for a core that a loaded machine adds).
``whole_process`` also times ``shoectl simulate --engine python`` and the floor as whole
processes, start-up and report included, side by side (wall, and the children's CPU time).
"""
from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from controller.rules.submission import load_preset
from controller.rules.odds import exact_odds
from controller.simulation import numpy_available, outcome_frequencies, simulate, trie_for, wager_holds
from controller.simulation_shoe import shuffle as shoe_shuffle

from benchmarks.floor_loop import floor_loop
from benchmarks.stats import DifferentAnswers, check_same, summary_row

PRESET = "ez-baccarat"
GOAL_NUMPY = 5_000_000


def _spread(values: list[float], digits: int = 0) -> dict[str, float]:
    return {"median": round(statistics.median(values), digits), "min": round(min(values), digits),
            "max": round(max(values), digits)}


def _rates(deal: Callable[[int], int], seed: int) -> tuple[float, float]:
    """Rounds per second of ``deal(seed)``: by wall time and by this thread's CPU time."""
    t0, c0 = time.perf_counter(), time.thread_time()
    rounds = deal(seed)
    return rounds / (time.perf_counter() - t0), rounds / (time.thread_time() - c0)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _whole_process(shoes: int, repeats: int) -> dict:
    """Wall time of the floor and of ``shoectl simulate --engine python`` as processes."""
    floor_cmd = [sys.executable, "-m", "benchmarks.floor_loop", str(shoes)]
    sim_cmd = [sys.executable, "-m", "controller.cli.main", "simulate", "--game", PRESET, "--engine", "python",
               "--shoes", str(shoes), "--json", "--seed"]
    times: dict[str, list[float]] = {"floor_s": [], "simulate_python_s": [], "floor_cpu_s": [],
                                     "simulate_python_cpu_s": []}
    for seed in range(repeats):
        for cmd, name in ((floor_cmd, "floor"), (sim_cmd, "simulate_python")):
            t0, c0 = time.perf_counter(), _children_cpu()
            subprocess.run([*cmd, str(seed)], check=True, stdout=subprocess.DEVNULL)
            times[f"{name}_s"].append(time.perf_counter() - t0)
            times[f"{name}_cpu_s"].append(_children_cpu() - c0)
    out: dict = {"shoes": shoes, **{name: _spread(values, 2) for name, values in times.items()}}
    for kind in ("", "cpu_"):
        sim, floor = times[f"simulate_python_{kind}s"], times[f"floor_{kind}s"]
        out[f"{kind}time_ratio_simulate_to_floor"] = _spread([a / b for a, b in zip(sim, floor)], 2)
    return out


def run(quick: bool = False) -> dict:
    sub = load_preset(PRESET)
    t0 = time.perf_counter()
    trie_for(sub.game)
    compile_ms = (time.perf_counter() - t0) * 1000
    repeats = 3 if quick else 7
    shoes = 100 if quick else 1000
    paths: dict[str, Callable[[int], int]] = {
        "floor": lambda seed: sum(floor_loop(shoes, seed)),
        # The same loop shuffling as the simulator does (the same draws and swaps, inline): most of
        # the pure-Python path's lead over the floor is that shuffle (a review of the benchmarks).
        "floor_same_shuffle": lambda seed: sum(floor_loop(shoes, seed, shuffle=shoe_shuffle)),
        "python": lambda seed: simulate(sub, shoes, seed, engine="python").rounds,
        "engine": lambda seed: simulate(sub, 5 if quick else 20, seed, engine="python", fast=False).rounds,
    }
    if numpy_available():
        numpy_shoes = 2000 if quick else 20000
        paths["numpy"] = lambda seed: simulate(sub, numpy_shoes, seed, engine="numpy").rounds
        paths["numpy"](0)  # builds its arrays once
    wall: dict[str, list[float]] = {name: [] for name in paths}
    cpu: dict[str, list[float]] = {name: [] for name in paths}
    for seed in range(repeats):
        for name, deal in paths.items():
            by_wall, by_cpu = _rates(deal, seed)
            wall[name].append(by_wall)
            cpu[name].append(by_cpu)
    out: dict = {"preset": PRESET, "repeats": repeats, "trie_compile_ms": round(compile_ms, 1),
                 "answers_checked": _check_answers(sub, numpy="numpy" in paths)}
    for name in paths:
        out[name] = {"rounds_per_s": _spread(wall[name]), "cpu_rounds_per_s": _spread(cpu[name])}
        if not name.startswith("floor"):
            out[name]["ratio_to_floor"] = _spread([v / f for v, f in zip(wall[name], wall["floor"])], 2)
            out[name]["cpu_ratio_to_floor"] = _spread([v / f for v, f in zip(cpu[name], cpu["floor"])], 2)
            out[name]["ratio_to_floor_same_shuffle"] = _spread(
                [v / f for v, f in zip(wall[name], wall["floor_same_shuffle"])], 2)
    out["python"]["goal"] = "ratio_to_floor >= 1 (every wager tallied; the floor counts B/P/T only)"
    if "numpy" in out:
        out["numpy"]["goal"] = f">= {GOAL_NUMPY:,} rounds/s"
    out["whole_process"] = _whole_process(500 if quick else 20000, 1 if quick else 3)
    out["summary"] = _summary_rows(out)
    return out


def _check_answers(sub, *, numpy: bool) -> list[str]:
    """The pure-Python fast path deals a seed's shoes as the reference engine does, tally for tally;
    the numpy path (its own random stream, so no shoe for shoe comparison) puts every outcome and
    every wager's hold within 1.8 times its 95 % half-width of the exact figure, at a fixed seed
    (tests/simulation: the same checks)."""
    fast, reference = simulate(sub, 20, 7, engine="python"), simulate(sub, 20, 7, engine="python", fast=False)
    lines = [check_same("20 shoes, pure Python path against the engine",
                        (fast.rounds, fast.cards_dealt, fast.facts), (reference.rounds, reference.cards_dealt, reference.facts))]
    if numpy:
        tally, exact = simulate(sub, 3000, seed=2026, engine="numpy"), exact_odds(sub)
        figures = [(name, estimate, exact.outcomes[name]) for name, estimate in outcome_frequencies(tally, sub.game).items()]
        figures += [(name, estimate, exact.wagers[name]["house_edge"]) for name, estimate in wager_holds(tally, sub).items()]
        far = [name for name, estimate, figure in figures
               if abs(estimate.mean - float(figure)) > 1.8 * (estimate.high - estimate.low) / 2]
        if far:
            raise DifferentAnswers(f"3000 shoes, numpy path: {', '.join(far)} far from the exact odds")
        lines.append(f"3000 shoes, numpy path: {len(figures)} figures within 1.8 half-widths of the exact odds")
    return lines


def _min_max(figure: dict) -> tuple[float, float]:
    return figure["min"], figure["max"]


def _summary_rows(out: dict) -> list[dict]:
    """The simulator's rows of ``make bench``'s table: rounds/s by wall time (median of the
    repeats), beside the floor loop's in the same run. Their ratio is the median of the repeats'
    own ratios (each repeat runs the paths back to back on the same seed), not the medians'
    ratio: the rows say so (a benchmark review read 9.14 beside 7,025,696 / 837,766 = 8.39)."""
    floor = out["floor"]["rounds_per_s"]["median"]
    rows = []
    if "numpy" in out:
        numpy_rate = out["numpy"]["rounds_per_s"]["median"]
        rows.append(summary_row("simulation, numpy (ratio: median of the repeats' ratios)", numpy_rate, "rounds/s", f">= {GOAL_NUMPY:,} rounds/s",
                                numpy_rate >= GOAL_NUMPY, floor=floor, ratio=out["numpy"]["ratio_to_floor"]["median"],
                                spread=_min_max(out["numpy"]["rounds_per_s"]), repeats=out["repeats"]))
    ratio = out["python"]["ratio_to_floor"]["median"]
    rows.append(summary_row("simulation, pure Python (ratio: median of the repeats' ratios)", out["python"]["rounds_per_s"]["median"], "rounds/s",
                            ">= 1x the floor loop, every wager tallied", ratio >= 1, floor=floor, ratio=ratio,
                            spread=_min_max(out["python"]["rounds_per_s"]), repeats=out["repeats"]))
    same = out["python"]["ratio_to_floor_same_shuffle"]["median"]
    rows.append(summary_row("simulation, pure Python beside the floor shuffling as it does (information)",
                            out["python"]["rounds_per_s"]["median"], "rounds/s", "none: says what the ratio above owes to "
                            "the shuffle", None, floor=out["floor_same_shuffle"]["rounds_per_s"]["median"], ratio=same,
                            spread=_min_max(out["python"]["rounds_per_s"]), repeats=out["repeats"]))
    return rows


if __name__ == "__main__":
    import json

    print(json.dumps(run(quick="--quick" in sys.argv[1:]), indent=2))
