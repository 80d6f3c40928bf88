"""Exact odds speed: one ``exact_odds`` call for a full 8-deck shoe (goal for Punto Banco: under
100 ms of compute, pure Python). "warm" calls reuse the composition-independent tables built from
the drawing rules on first use; "cold" includes building them (``odds.clear_caches()`` first)."""
from __future__ import annotations

import time

from controller.rules import odds
from controller.rules.cards import Composition
from controller.rules.submission import load_preset

from benchmarks.stats import summary, timings

CASES = (("punto-banco", "minibaccarat"), ("ez-baccarat", "ez-baccarat"), ("21-baccarat", "21-baccarat"))


def _cold(sub, shoe) -> float:
    odds.clear_caches()
    t0 = time.perf_counter()
    odds.exact_odds(sub, shoe)
    return time.perf_counter() - t0


def run(quick: bool = False) -> dict:
    repeats = 5 if quick else 100
    cold_repeats = 2 if quick else 10
    out: dict = {"decks": 8, "repeats": repeats}
    for game, preset in CASES:
        sub = load_preset(preset)
        shoe = Composition.standard(8)
        cold = [_cold(sub, shoe) for _ in range(cold_repeats)]
        warm = timings(lambda: odds.exact_odds(sub, shoe), repeats, warmup=1)
        w = summary(warm, 1000, "ms")
        c = summary(cold, 1000, "ms")
        out[game] = {
            "warm_median_ms": round(w["median"], 2),
            "warm_p99_ms": round(w["p99"], 2),
            "cold_median_ms": round(c["median"], 2),
            "cold_p99_ms": round(c["p99"], 2),
        }
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
