"""End to end through the real path: ``shoectl emulate --table`` in one process (pyserial on ptys,
the protocol, the emulated dealer), ``shoectl run`` in another (links, table core, journal).

The controller is killed with SIGKILL at random moments and started again on the same journal;
in the end the cards in the journal are exactly the cards the emulated shoe delivered (its dealt
log): none lost, none twice; no wager settled twice; the chain verifies.
"""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.journal import JournalReader, verify
from controller.journal.replay import replay
from firmware_bridge.emulator.table import read_dealt_log

from .journal_checks import journal_cards

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def start_table(tmp: Path, seed: int, faults: str | None = None, speed: str = "max") -> tuple[subprocess.Popen, dict[str, str]]:
    cmd = [*SHOECTL, "emulate", "--table", "--seed", str(seed), "--speed", speed, "--dealt-log", str(tmp / "dealt.log"),
           "--dir", str(tmp / "dev")]
    if faults:
        cmd += ["--faults", faults]
    (tmp / "dev").mkdir()
    emu = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = json.loads(emu.stdout.readline())
    return emu, {d["profile"]: d["port"] for d in first["devices"]}


def run_cmd(ports: dict[str, str], journal: Path, *extra: str) -> list[str]:
    return [*SHOECTL, "run", "--device", f"emulated-shuffler@{ports['emulated-shuffler']}",
            "--device", f"emulated-shoe@{ports['emulated-shoe']}", "--journal", str(journal), "--json", "--automated", *extra]


@pytest.mark.slow
@pytest.mark.reg("681a.7(l)")
@pytest.mark.parametrize("seed", [11])  # `make soak` kills 100 times more (benchmarks/soak_crash.py)
def test_sigkill_at_random_moments_loses_and_duplicates_nothing(tmp_path: Path, seed: int) -> None:
    """681a.7(l): the cards are kept "in a manner that permits the reconstruction of each hand in
    the event of a question or dispute". ``shoectl run`` is killed at random moments (starting,
    recovering, dealing) and restarted on the same journal: every card the emulated shoe dealt is
    in the journal once and in order, the journal verifies, and every round is reconstructed once
    with each wager settled exactly once."""
    rng = random.Random(seed)
    emu, ports = start_table(tmp_path, seed)
    journal = tmp_path / "journal.db"
    try:
        for i in range(5):
            proc = subprocess.Popen(run_cmd(ports, journal, "--seed", str(seed + i)), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            # a random moment: starting, recovering (about 0.3-0.9 s in) or dealing (thousands of
            # entries a second at --speed max)
            time.sleep(rng.uniform(0.5, 1.5))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        final = subprocess.run(run_cmd(ports, journal, "--rounds", "15", "--seed", "99"), capture_output=True,
                               text=True, timeout=240)
        assert final.returncode == 0, final.stderr[-2000:]
    finally:
        emu.send_signal(signal.SIGTERM)
        emu.communicate(timeout=20)  # waits, and closes its pipes
    dealt = [d.card for d in read_dealt_log(tmp_path / "dealt.log")]
    assert len(dealt) > 40
    assert journal_cards(journal) == [str(c) for c in dealt]
    report = verify(journal)
    assert report.ok, report
    with JournalReader.open(journal) as r:
        docs = list(replay(r.entries()))
    rounds = [d for d in docs if d["type"] == "round"]
    keys = [(d["shoe"], d["round"]) for d in rounds]
    assert len(keys) == len(set(keys))  # no round decided twice
    for d in rounds:
        staked = sorted((w["seat"], w["kind"], w["amount"]) for w in d["wagers"])
        settled = sorted((s["seat"], s["kind"], s["amount"]) for s in d["settlements"])
        assert settled == staked  # every wager settled exactly once


@pytest.mark.slow
def test_a_table_stopped_during_a_shuffle_deals_when_started_again(tmp_path: Path) -> None:
    """An integrator's review: stopped (SIGTERM) while its shuffler shuffled, the shuffle finished
    while the table was down, and started again, the table asked for the shuffle again, took the
    first shuffle's SHUFFLE_DONE for its own, showed the cut's prompts while the kept stack was
    shuffled a second time, and the dealer refused them: no round was ever dealt, no fault said
    why. Started again, the table deals."""
    emu, ports = start_table(tmp_path, 5, speed="5")  # the shuffle takes seconds, not none
    journal = tmp_path / "journal.db"
    try:
        first = subprocess.Popen(run_cmd(ports, journal), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not _has_kind(journal, "shoe_start"):  # SHUFFLE sent: the shuffler is shuffling
            assert time.monotonic() < deadline and first.poll() is None, "the table never began its shuffle"
            time.sleep(0.05)
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=30) == 143
        time.sleep(5)  # the shuffle ends while the table is down
        again = subprocess.run(run_cmd(ports, journal, "--rounds", "2"), capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
    finally:
        emu.send_signal(signal.SIGTERM)
        emu.communicate(timeout=20)
    with JournalReader.open(journal) as r:
        assert sum(1 for _ in r.entries(kinds=["round_result"])) == 2
        assert not list(r.entries(kinds=["fault"]))
    assert journal_cards(journal) == [str(d.card) for d in read_dealt_log(tmp_path / "dealt.log")]


def _has_kind(journal: Path, kind: str) -> bool:
    if not journal.exists():
        return False
    try:
        with JournalReader.open(journal) as r:
            return r.last_of_kind(kind) is not None
    except Exception:  # noqa: BLE001 - not yet a journal (being created): asked again
        return False
