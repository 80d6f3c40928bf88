"""Dealing through a noisy line (docs/hardening.md, docs/link.md section 4).

``shoectl run`` on the emulator, its own process, deals the same rounds three ways, one after the
other: on clean lines (the floor), with 1 % of the device's bytes damaged (``corrupt=0.01``, with
0.2 % dropped and 2 % of frames duplicated), and with the same noise on the host's bytes as well
(``both-ways=1``). Each run's journal is checked as the fault soak checks it (the dealt log card
for card, every wager settled once). The figures are seconds per run and the ratio to the clean
run: what the noise costs. A damaged command is recovered by the reply timeout alone (protocol
3.4, rule 5), so this is where the link's learnt retransmit wait shows (126-136 s for 100 rounds
both ways with a fixed 250 ms).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.soak_faults import one_run

NOISE = "corrupt=0.01,drop=0.002,dup=0.02"
WAYS = {"clean": "corrupt=0", "device": NOISE, "both-ways": f"{NOISE},both-ways=1"}
LIMIT_S = 600.0  # a run that takes longer is stuck (the soak's Defect)


def run(quick: bool = False) -> dict[str, object]:
    rounds = 20 if quick else 60
    seeds = (1,) if quick else (1, 2)
    seconds: dict[str, list[float]] = {way: [] for way in WAYS}
    with tempfile.TemporaryDirectory(prefix="shoectl-bench-noise-") as work:
        for seed in seeds:
            for way, faults in WAYS.items():
                figures = one_run(Path(work) / f"{way}-{seed}", faults, "minibaccarat", seed, rounds, LIMIT_S)
                seconds[way].append(figures["seconds"])
    clean = sum(seconds["clean"])
    return {
        "rounds_per_run": rounds,
        "seeds": list(seeds),
        "seconds": seconds,
        "ratio_to_clean": {way: round(sum(s) / clean, 1) for way, s in seconds.items() if way != "clean"},
    }
