"""The live display of shoectl run: pure rendering, and a run that redraws it."""
from __future__ import annotations

import subprocess
import sys

from bench import Bench

from controller.table.autodealer import AutoDealer
from controller.table.display import render


def test_render_shows_state_hands_wagers_results_faults_and_roadmaps() -> None:
    b = Bench(seed=4)
    auto = AutoDealer(b.sub, seed=4)
    while len(b.of("round_result")) < 12:
        b.feed(auto.next_input(b.core))
    snap = b.core.snapshot()
    snap["faults"] = {"door:shoe": "shoe door open"}
    text = render(snap, b.of("round_result"), ["627a.13(d): a face-up card"])
    first = text.splitlines()[0]
    assert "state betting" in first and "T1-S0001" in first and "cards left" in first
    assert "Last round 12:" in text and "Results: " in text and "shoe door open" in text
    for road in ("Bead plate:", "Big road:", "Big eye boy:", "Small road:", "Cockroach pig:"):
        assert road in text
    outcomes = [r["outcome"][0].upper() for r in b.of("round_result")]
    assert "Results: " + " ".join(outcomes) in text


def test_run_with_the_live_display_redraws_the_table(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "controller.cli.main", "run", "--journal", str(tmp_path / "j.db"),
                           "--rounds", "5", "--speed", "max", "--seed", "2", "--display", "live"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    frames = proc.stdout.split("\x1b[H\x1b[2J")
    assert len(frames) > 5
    assert "Big road:" in frames[-1] and "Last round 5:" in proc.stdout
