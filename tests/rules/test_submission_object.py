"""Tests for the Submission object (controller/rules/submission.py): payouts and offered wagers,
immutability and hashing, to_dict, and an import that reads no preset."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
from submission_helpers import W, roundtrip

from controller.rules import submission as sub_mod
from controller.rules.errors import WagerError
from controller.rules.model import BonusRank, Payout
from controller.rules.submission import load_preset

# The Submission object ----------------------------------------------------------------------


def test_payout_and_offers():
    s = load_preset("minibaccarat")
    assert s.payout(W.TIE) == Payout(8) and s.payout("banker") == Payout(1)
    assert s.offers("tie") and not s.offers(W.DRAGON7) and not s.offers("bogus")
    with pytest.raises(WagerError, match="'dragon7' is not offered"):
        s.payout(W.DRAGON7)
    with pytest.raises(WagerError, match="unknown wager 'bogus'"):
        s.payout("bogus")
    with pytest.raises(WagerError, match="use Submission.house_money"):
        load_preset("midibaccarat").payout(W.HOUSE_MONEY)
    t = load_preset("21-baccarat")
    with pytest.raises(WagerError, match="bonus_payout"):
        t.payout(W.PLAYER_BONUS)
    with pytest.raises(WagerError, match="does not win"):
        t.bonus_payout(BonusRank.NONE)
    with pytest.raises(WagerError, match="no Bonus Wager"):
        s.bonus_payout(BonusRank.PAIR)


def test_submission_is_immutable_and_hashable():
    s = load_preset("midibaccarat")
    with pytest.raises(FrozenInstanceError):
        s.decks = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.paytable[W.TIE] = Payout(9)  # type: ignore[index]
    assert hash(s) == hash(roundtrip(s))
    assert load_preset("midibaccarat") is s  # presets are parsed once


def test_to_dict_is_json_ready_and_in_file_layout():
    d = load_preset("midibaccarat").to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["source"] == "preset:midibaccarat"
    assert d["commission"] == {"rate": "0.05", "rounding": "down"}
    assert d["house_money"] == {"either_pair": "3:1", "both_pairs": "15:1", "portion": "1"}
    assert d["paytable"]["tie"] == "8:1" and "house_money" not in d["paytable"]
    assert "twentyone" not in d and "bonus_paytable" not in d
    t = load_preset("21-baccarat").to_dict()
    assert t["twentyone"]["draw_threshold"] == 17 and t["bonus_paytable"]["suited_three_of_a_kind"] == "100:1"
    assert "irregularities" not in t and "house_money" not in t


def test_importing_reads_no_preset():
    code = (
        "import sys\n"
        "seen = []\n"
        "sys.addaudithook(lambda ev, args: seen.append(str(args[0])) if ev == 'open' else None)\n"
        "import controller.rules.submission\n"
        "print([p for p in seen if p.endswith('.toml')])\n"
    )
    root = Path(sub_mod.__file__).parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert out.stdout.strip() == "[]"
