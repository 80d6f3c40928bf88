"""A whole shoe of each game through the real path (pty, pyserial, protocol, link, table core,
journal), the journal then checked against the regulated procedure, clause by clause."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import JournalReader
from controller.rules.submission import load_preset

from .journal_checks import check_integrity

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def played(tmp: Path, preset: str, seed: int = 3) -> list:
    journal = tmp / "journal.db"
    proc = subprocess.run([*SHOECTL, "run", "--submission", preset, "--journal", str(journal), "--shoes", "1",
                           "--seed", str(seed), "--speed", "max", "--dealt-log", str(tmp / "dealt.log"), "--json"],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    check_integrity(tmp, journal)
    with JournalReader.open(journal) as r:
        return list(r.entries())


def of(entries: list, kind: str) -> list[dict]:
    return [e.payload for e in entries if e.kind == kind]


@pytest.mark.slow
@pytest.mark.reg("681a.5(a)", "681a.5(b)", "681a.5(c)", "681a.5(d)", "681a.5(f)", "681a.7(a)", "681a.7(c)",
                 "681a.7(d)", "681a.7(d)(1)", "681a.7(d)(2)", "681a.7(h)", "681a.7(l)")
@pytest.mark.parametrize("preset", ["minibaccarat", "ez-baccarat", "21-baccarat"])
def test_a_whole_shoe_follows_the_procedure(tmp_path: Path, preset: str) -> None:
    sub = load_preset(preset)
    entries = played(tmp_path, preset)
    kinds = [e.kind for e in entries]
    # shuffled and counted, offered for the cut, cut and covered within the limits, loaded, burned
    assert of(entries, "input.device")[0]["event"] in ("SHUFFLE_PROGRESS", "SHUFFLE_DONE")
    assert kinds.index("shoe_start") < kinds.index("cut_offer") < kinds.index("cut") < kinds.index("cover") \
        < kinds.index("shoe_loaded") < kinds.index("burn") < kinds.index("round_start")
    cut, cover = of(entries, "cut")[0], of(entries, "cover")[0]
    assert 10 <= cut["position"] <= cut["stack"] - 10 and cover["from_bottom"] >= 10
    # the cover card came out, that round was completed, then the cards were reconciled and reshuffled
    i_cover = kinds.index("cover_card")
    assert "round_result" in kinds[i_cover:]
    rec = of(entries, "reconciliation")[0]
    assert rec["ok"] and rec["total"] == sub.decks * 52
    assert kinds.index("reconciliation") > i_cover and kinds[kinds.index("reconciliation"):].count("shoe_start") == 1
    # settlement counterclockwise from the dealer's right, Player/Banker first
    order = {s: i for i, s in enumerate(sub.seats)}
    seq = []
    for e in entries:
        if e.kind == "round_start":
            seq = []
        elif e.kind == "settlement" and e.payload["kind"] in ("player", "banker"):
            seq.append(order[e.payload["seat"]])
        elif e.kind == "round_result":
            assert seq == sorted(seq)
    # every round's cards go to the discard rack in the order they were dealt
    assert len(of(entries, "discard_rack")) == len([r for r in of(entries, "round_result") if r["kind"] != "void"])


@pytest.mark.slow
@pytest.mark.reg("629a.8(c)", "629a.8(c)(1)", "629a.8(c)(2)", "629a.8(c)(3)", "629a.8(c)(3)(i)", "629a.8(c)(3)(ii)")
def test_midibaccarat_squeeze_and_house_money_before_third_cards(tmp_path: Path) -> None:
    entries = played(tmp_path, "midibaccarat", seed=8)
    squeezes = of(entries, "squeeze")
    assert {s["hand"] for s in squeezes} >= {"player", "banker"}
    rounds_with_hm = 0
    cards_in_round = 0
    hm_seen_at = None
    for e in entries:
        if e.kind == "round_start":
            cards_in_round, hm_seen_at = 0, None
        elif e.kind == "card":
            cards_in_round += 1
        elif e.kind == "settlement" and e.payload["kind"] == "house_money" and hm_seen_at is None:
            hm_seen_at = cards_in_round
            rounds_with_hm += 1
            assert cards_in_round == 4  # after the first two cards of each hand, before any third
    assert rounds_with_hm > 0
