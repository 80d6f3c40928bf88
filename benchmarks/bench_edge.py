"""The live edge monitor's cost (docs/edge-monitor.md).

- ``figures_ms``: one round's figures (``edge_figures``: exact_odds of every EZ Baccarat wager) on
  the shoe as it is depleted round by round, 5 cards a round from a shuffled 8-deck shoe down to
  the cover card; goal (issue 15) at most 2 ms per round, beside the full-shoe call as its floor.
- ``card_to_decision_us``: the table's card-to-decision latency (``bench_table.TableBench``: the
  real path, the emulated table in a process of its own) with the monitor off, on with its worker
  in a process (the default), and on with its worker in a thread, segments interleaved so the three
  see the same machine. The monitor must not lengthen it.
- ``owner_ms_per_round``: what the monitor costs the owner thread per round (journaling the figures,
  one commit), measured inside those runs.
"""
from __future__ import annotations

import random
import statistics
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from benchmarks.bench_table import TableBench, _us
from benchmarks.stats import percentile

GOAL_FIGURES_MS = 2.0
MODES = ("off", "process", "thread")
CARDS_PER_ROUND = 5
COVER = 14


def _ms(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values) * 1e3, 3), "p99": round(percentile(values, 99) * 1e3, 3),
            "min": round(min(values) * 1e3, 3), "max": round(max(values) * 1e3, 3), "n": len(values)}


def figures_per_round(shoes: int) -> dict[str, Any]:
    from controller.rules.cards import Composition
    from controller.rules.submission import load_preset
    from controller.table.edge_figures import edge_figures

    sub = load_preset("ez-baccarat")
    full = Composition.standard(8)
    edge_figures(sub, full)  # the rule tables, built once per process
    depleted, whole = [], []
    rng = random.Random(15)
    for _ in range(shoes):
        cards = full.cards()
        rng.shuffle(cards)
        t0 = time.perf_counter()
        edge_figures(sub, full)
        whole.append(time.perf_counter() - t0)
        for out in range(CARDS_PER_ROUND, len(cards) - COVER, CARDS_PER_ROUND):
            left = full.remove(cards[:out])
            t0 = time.perf_counter()
            edge_figures(sub, left)
            depleted.append(time.perf_counter() - t0)
    per_round = _ms(depleted)
    return {"depleted_shoe_ms": per_round, "full_shoe_ms": _ms(whole),
            "ratio_median_to_full_shoe": round(per_round["median"] / _ms(whole)["median"], 2),
            "goal": f"median <= {GOAL_FIGURES_MS:g} ms per round", "goal_met": per_round["median"] <= GOAL_FIGURES_MS}


@contextmanager
def _runners(mode: str, owner_times: list[float]) -> Iterator[None]:
    """``TableBench`` builds its runner inside ``segment``: for the length of one segment, the
    runner it builds is one with the edge monitor attached (its worker per ``mode``), whose owner
    time spent journaling the figures is timed."""
    import controller.table.runner as runner_module
    from controller.table.edge_monitor import EdgeMonitor

    plain = runner_module.TableRunner
    if mode == "off":
        yield
        return

    class Monitored(plain):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.edge_monitor = EdgeMonitor(worker=mode)
            self.edge_monitor.prime(self.journal.entries())  # as shoectl run does when it resumes a journal
            self.edge_monitor.attach(self).wait_ready()  # its start-up is not what is measured

        def journal_outputs(self, outs: list[Any]) -> None:
            t0 = time.perf_counter()
            super().journal_outputs(outs)
            owner_times.append(time.perf_counter() - t0)

        def run(self) -> None:
            try:
                super().run()
            finally:
                self.edge_monitor.close()

    runner_module.TableRunner = Monitored
    try:
        yield
    finally:
        runner_module.TableRunner = plain


def latency(segments: int, rounds: int, warm_up: int) -> dict[str, Any]:
    decided: dict[str, list] = {mode: [] for mode in MODES}
    owner: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="bench-edge-") as tmp:
        bench = TableBench(Path(tmp))
        try:
            bench.segment(warm_up, seed=0, measure=False)
            seed = 0
            for _ in range(segments):
                for mode in MODES:
                    seed += 1
                    before = len(bench.decided)
                    with _runners(mode, owner[mode]):
                        bench.segment(rounds, seed=seed)
                    decided[mode].extend(bench.decided[before:])
        finally:
            bench.close()
        out: dict[str, Any] = {}
        for mode in MODES:
            bench.decided = decided[mode]
            out[mode] = _us(bench.latency())
    off = out["off"]["median"]
    return {
        "card_to_decision_us": out,
        "ratio_median_on_to_off": {m: round(out[m]["median"] / off, 2) for m in MODES[1:]},
        "ratio_p99_on_to_off": {m: round(out[m]["p99"] / out["off"]["p99"], 2) for m in MODES[1:]},
        "owner_ms_per_round": {m: _ms(owner[m]) for m in MODES[1:] if owner[m]},
        "rounds_per_mode": segments * rounds,
    }


def run(quick: bool = False) -> dict:
    segments, rounds, warm_up = (2, 8, 8) if quick else (6, 20, 30)
    return {"figures": figures_per_round(1 if quick else 4), **latency(segments, rounds, warm_up)}


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
