"""Exact odds speed (issue 15), pure Python.

- ``full shoe``: one ``exact_odds`` call for a full 8-deck shoe; goal for Punto Banco, warm:
  <= 1 ms. "warm" calls reuse the composition-independent tables and plans built from the rules
  on first use; "cold" includes building them (``odds.clear_caches()`` first).
- ``after every round``: a real seeded shoe is dealt round by round (``simulation.deal_shoe``:
  cut, burn, rounds to the cover card), and after each round ``exact_odds`` runs on the cards
  left (every wager of the submission); goal: <= 2 ms per round. Every composition is new, so
  nothing is reused but the composition-independent tables.

This machine is shared (2 cores, often many runnable processes): a call's wall time then includes
waiting for a core, several milliseconds at a time. Each per-round call is therefore also timed
in CPU time of this thread (``time.thread_time``), which is what the call costs; ``cpu_*``.
"""
from __future__ import annotations

import time

from controller.rules import odds
from controller.rules.cards import Composition
from controller.rules.submission import load_preset
from controller.simulation import deal_shoe, make_rng, shuffle_and_prepare

from benchmarks.stats import summary, timings

CASES = (("punto-banco", "minibaccarat"), ("ez-baccarat", "ez-baccarat"), ("21-baccarat", "21-baccarat"))
GOAL_FULL_MS = 1.0
GOAL_ROUND_MS = 2.0


def _cold(sub, shoe) -> float:
    odds.clear_caches()
    t0 = time.perf_counter()
    odds.exact_odds(sub, shoe)
    return time.perf_counter() - t0


def after_every_round(sub, shoes: int) -> tuple[list[float], list[float]]:
    """Seconds per ``exact_odds`` call on what is left after each round of ``shoes`` seeded shoes:
    wall time and this thread's CPU time."""
    full = Composition.standard(sub.decks)
    wall, cpu = [], []
    for seed in range(shoes):
        shoe = shuffle_and_prepare(sub, make_rng(seed), full.cards())
        left = full.remove(shoe.burned)
        for result in deal_shoe(shoe, sub, bonus_in_play=True):
            if result is None:
                break
            left = left.remove(c for c, _ in result.dealt)
            t0, c0 = time.perf_counter(), time.thread_time()
            odds.exact_odds(sub, left)
            cpu.append(time.thread_time() - c0)
            wall.append(time.perf_counter() - t0)
    return wall, cpu


def run(quick: bool = False) -> dict:
    repeats = 5 if quick else 100
    cold_repeats = 2 if quick else 10
    out: dict = {"decks": 8, "repeats": repeats, "goal_full_shoe_warm_ms": GOAL_FULL_MS,
                 "goal_per_round_ms": GOAL_ROUND_MS}
    for game, preset in CASES:
        sub = load_preset(preset)
        shoe = Composition.standard(8)
        cold = [_cold(sub, shoe) for _ in range(cold_repeats)]
        warm = timings(lambda: odds.exact_odds(sub, shoe), repeats, warmup=1)
        per_round, per_round_cpu = after_every_round(sub, 1 if quick else 3)
        w = summary(warm, 1000, "ms")
        c = summary(cold, 1000, "ms")
        r = summary(per_round, 1000, "ms")
        rc = summary(per_round_cpu, 1000, "ms")
        out[game] = {
            "warm_median_ms": round(w["median"], 3),
            "warm_min_ms": round(w["min"], 3),
            "warm_p99_ms": round(w["p99"], 3),
            "cold_median_ms": round(c["median"], 2),
            "cold_p99_ms": round(c["p99"], 2),
            "per_round_rounds": r["n"],
            "per_round_median_ms": round(r["median"], 3),
            "per_round_p99_ms": round(r["p99"], 3),
            "per_round_max_ms": round(max(per_round) * 1000, 3),
            "per_round_cpu_median_ms": round(rc["median"], 3),
            "per_round_cpu_p99_ms": round(rc["p99"], 3),
            "per_round_cpu_max_ms": round(max(per_round_cpu) * 1000, 3),
        }
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
