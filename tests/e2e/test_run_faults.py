"""``shoectl run`` on the embedded emulated table with injected faults, through the real path:
pyserial on ptys, the protocol with retries, the links, the table core, the journal.

Whatever the fault, the journal's cards equal the emulated shoe's dealt log, every wager is
settled exactly once, the chain verifies, and the regulated reaction is journaled.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import JournalReader, verify
from controller.journal.replay import replay
from firmware_bridge.emulator.table import read_dealt_log

from .test_run_recovery import journal_cards

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def run_table(tmp: Path, faults: str, rounds: int = 25, seed: int = 5, submission: str | None = None) -> Path:
    journal = tmp / "journal.db"
    cmd = [*SHOECTL, "run", "--journal", str(journal), "--rounds", str(rounds), "--seed", str(seed), "--speed", "max",
           "--faults", faults, "--dealt-log", str(tmp / "dealt.log"), "--json"]
    if submission:
        cmd += ["--submission", submission]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return journal


def kinds(journal: Path) -> list[tuple[str, dict]]:
    with JournalReader.open(journal) as r:
        return [(e.kind, e.payload) for e in r.entries()]


def check_integrity(tmp: Path, journal: Path) -> list[dict]:
    dealt = [str(d.card) for d in read_dealt_log(tmp / "dealt.log")]
    assert journal_cards(journal) == dealt
    assert verify(journal).ok
    with JournalReader.open(journal) as r:
        rounds = [d for d in replay(r.entries()) if d["type"] == "round"]
    for d in rounds:
        staked = sorted((w["seat"], w["kind"], w["amount"]) for w in d["wagers"])
        settled = sorted((s["seat"], s["kind"], s["amount"]) for s in d["settlements"])
        assert settled == staked, d
    return rounds


@pytest.mark.slow
@pytest.mark.parametrize("faults", ["corrupt=0.01,drop=0.002,dup=0.02,seed=3", "unplug-every=250ms,unplug-for=100ms,seed=4"])
def test_line_noise_and_unplugs_lose_nothing(tmp_path: Path, faults: str) -> None:
    journal = run_table(tmp_path, faults, rounds=60)
    rounds = check_integrity(tmp_path, journal)
    assert len(rounds) >= 60
    if "unplug" in faults:
        assert any(k == "fault" and p["fault"].startswith("link:") for k, p in kinds(journal))


@pytest.mark.slow
def test_device_reset_mid_shoe_keeps_unacknowledged_events(tmp_path: Path) -> None:
    journal = run_table(tmp_path, "reset-at=40")
    check_integrity(tmp_path, journal)


@pytest.mark.slow
@pytest.mark.reg("627a.13(d)")
def test_face_up_card_in_the_shoe_gives_a_simulated_round(tmp_path: Path) -> None:
    journal = run_table(tmp_path, "face-up-at=30", rounds=20)
    rounds = check_integrity(tmp_path, journal)
    assert any(p.get("clause") == "627a.13(d)" for k, p in kinds(journal) if k == "irregularity")
    assert any(d["kind"] == "simulated" for d in rounds)


@pytest.mark.slow
@pytest.mark.reg("681a.5(a)")
def test_a_missing_card_keeps_the_table_closed(tmp_path: Path) -> None:
    """Every shuffle of this emulated shuffler is one card short: the table never opens. The run
    is stopped (SIGTERM) once the journal shows the count fault a few times."""
    import signal
    import time

    journal = tmp_path / "journal.db"
    proc = subprocess.Popen([*SHOECTL, "run", "--journal", str(journal), "--seed", "2", "--speed", "max",
                             "--faults", "missing-card=1", "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        faults: list[dict] = []
        while time.monotonic() < deadline and len(faults) < 3:
            time.sleep(0.3)
            if journal.exists():
                faults = [p for k, p in kinds(journal) if k == "count_fault"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err[-2000:]  # 128 + SIGTERM after a clean stop
    assert len(faults) >= 3 and all(f["problem"] == "1 card missing" for f in faults)
    entries = kinds(journal)
    assert not any(k in ("round_start", "burn", "shoe_loaded") for k, _ in entries)
    assert verify(journal).ok


@pytest.mark.slow
@pytest.mark.parametrize("faults, key", [("jam-at=12", "jam:shoe"), ("door-open-at=12", "door:shoe")])
def test_jam_and_door_hold_the_round_and_resume_it(tmp_path: Path, faults: str, key: str) -> None:
    journal = run_table(tmp_path, faults, rounds=10)
    check_integrity(tmp_path, journal)
    entries = kinds(journal)
    assert any(k == "fault" and p["fault"] == key for k, p in entries)
    assert any(k == "fault_cleared" and key in p["faults"] for k, p in entries)
