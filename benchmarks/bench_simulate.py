"""Simulation speed: Punto Banco rounds per second on one core (goal: >= 250,000), through the
compiled trie (the default path) and through the per-card RoundEngine path, measured in the same
run so the ratio is meaningful. Shuffling, cutting and burning are included."""
from __future__ import annotations

import statistics
import time

from controller.rules.submission import load_preset
from controller.simulation import simulate, trie_for


def _rate(sub, shoes: int, fast: bool, seed: int) -> float:
    t0 = time.perf_counter()
    t = simulate(sub, shoes, seed=seed, fast=fast)
    return t.rounds / (time.perf_counter() - t0)


def run(quick: bool = False) -> dict:
    out: dict = {}
    repeats = 3 if quick else 7
    for preset in ("minibaccarat", "ez-baccarat"):
        sub = load_preset(preset)
        t0 = time.perf_counter()
        trie_for(sub.game)
        compile_ms = (time.perf_counter() - t0) * 1000
        fast = [_rate(sub, 50 if quick else 400, True, seed) for seed in range(repeats)]
        ref = [_rate(sub, 5 if quick else 40, False, seed) for seed in range(max(3, repeats // 2))]
        out[preset] = {
            "fast_rounds_per_s_median": round(statistics.median(fast)),
            "fast_rounds_per_s_min": round(min(fast)),
            "engine_rounds_per_s_median": round(statistics.median(ref)),
            "speedup": round(statistics.median(fast) / statistics.median(ref), 1),
            "trie_compile_ms": round(compile_ms, 1),
        }
    sub = load_preset("21-baccarat")
    out["21-baccarat"] = {"engine_rounds_per_s_median": round(statistics.median(_rate(sub, 5 if quick else 20, False, s) for s in range(3)))}
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
