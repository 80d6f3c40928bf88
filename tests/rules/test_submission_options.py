"""Tests for what a valid Rules Submission file sets (controller/rules/submission.py): the game's
defaults for what it leaves out, the commission, 21 Baccarat options, seats and wager limits it may set."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from submission_helpers import PB, PRESETS, W, roundtrip, write

from controller.rules.model import Dealing, Game, Payout
from controller.rules.errors import SubmissionError
from controller.rules.submission import TwentyOneOptions, load_preset, load_submission
from controller.rules.submission_data import WagerLimit

# Defaults by game ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game, decks, wagers, commission",
    [
        ("punto-banco", 8, {W.PLAYER, W.BANKER, W.TIE, W.PLAYER_PAIR, W.BANKER_PAIR}, Decimal("0.05")),
        ("ez-baccarat", 8, {W.PLAYER, W.BANKER, W.TIE, W.PLAYER_PAIR, W.BANKER_PAIR, W.DRAGON7, W.PANDA8}, 0),
        ("21-baccarat", 6, {W.PLAYER, W.BANKER, W.TIE, W.PLAYER_BONUS, W.BANKER_BONUS}, 0),
    ],
)
def test_minimal_file_takes_the_game_defaults(tmp_path, game, decks, wagers, commission):
    s = load_submission(write(tmp_path, f'[submission]\ngame = "{game}"\n'))
    assert s.game == Game(game) and s.decks == decks and s.wagers == wagers
    assert s.commission == commission
    assert s.dealing is Dealing.FACE_UP and s.burn_cards == 1 and s.min_cover_depth == 10
    assert s.seats == tuple(range(1, 8))
    assert set(s.paytable) == wagers - {W.PLAYER_BONUS, W.BANKER_BONUS, W.HOUSE_MONEY}
    assert s.source == str(tmp_path / "rules.toml")
    assert s.name
    assert roundtrip(s) == s


def test_partial_paytable_keeps_the_other_defaults(tmp_path):
    s = load_submission(write(tmp_path, '[submission]\ngame = "punto-banco"\n[paytable]\ntie = "9 to 1"\n'))
    assert s.payout(W.TIE) == Payout(9) and s.payout("player_pair") == Payout(11)


@pytest.mark.parametrize("text, expected", [("0.05", "0.05"), ("0.025", "0.025"), ("0", "0"), ("4e-2", "0.04")])
def test_commission_is_an_exact_decimal(tmp_path, text, expected):
    for toml_value in (f'"{text}"', text):
        s = load_submission(write(tmp_path, f'[submission]\ngame = "punto-banco"\n[commission]\nrate = {toml_value}\n'))
        assert isinstance(s.commission, Decimal) and s.commission == Decimal(expected)
        assert s.to_dict()["commission"]["rate"] == str(s.commission)


@pytest.mark.parametrize("rounding", ["down", "half-up", "half-even", "up"])
def test_commission_rounding_values(tmp_path, rounding):
    s = load_submission(write(tmp_path, f'[submission]\ngame = "punto-banco"\n[commission]\nrounding = "{rounding}"\n'))
    assert s.commission_rounding == rounding


def test_21_baccarat_commission_may_be_set(tmp_path):
    s = load_submission(write(tmp_path, '[submission]\ngame = "21-baccarat"\n[commission]\nrate = "0.05"\n'))
    assert s.commission == Decimal("0.05")


def test_twentyone_options_are_switchable(tmp_path):
    text = (
        '[submission]\ngame = "21-baccarat"\n[twentyone]\nnaturals = true\ndraw_rule = "first-only"\n'
        'bonus_only_card = true\ndraw_threshold = 17\n'  # what 681a.7 fixes may be stated, as it is
    )
    s = load_submission(write(tmp_path, text))
    assert s.twentyone == TwentyOneOptions(True, "first-only")
    assert roundtrip(s) == s


@pytest.mark.reg("681a.7(f)", "681a.7(f)(1)")
def test_a_submission_cannot_take_the_naturals_away(tmp_path):
    """681a.7(f): "If either the Player's Hand or Banker's Hand is a natural and if:" (1) "There were
    no Bonus Wagers placed, no additional cards may be dealt to either hand." A Rules Submission that
    said no two-card 21 is a natural would let the Banker draw after the Player's natural: the
    file is refused in one line naming the key and the clause, and the table's rules stay as
    they were (a refused file loads nothing)."""
    path = write(tmp_path, '[submission]\ngame = "21-baccarat"\n[twentyone]\nnaturals = false\n')
    with pytest.raises(SubmissionError) as refused:
        load_submission(path)
    message = str(refused.value)
    assert "twentyone.naturals" in message and "681a.7(f)" in message and "allowed: true" in message
    assert "\n" not in message


def test_seat_order_is_kept(tmp_path):
    s = load_submission(write(tmp_path, '[submission]\ngame = "punto-banco"\nseats = [3, 1, 2, 12]\n'))
    assert s.seats == (3, 1, 2, 12)


def test_utf8_bom_and_crlf_are_accepted(tmp_path):
    s = load_submission(write(tmp_path, b'\xef\xbb\xbf[submission]\r\ngame = "ez-baccarat"\r\n'))
    assert s.game is Game.EZ_BACCARAT


EXAMPLE_WITH_LIMITS = Path(__file__).resolve().parents[2] / "docs" / "examples" / "minibaccarat-limits.toml"


def test_limits_load_round_trip_and_travel_in_to_dict(tmp_path):
    s = load_submission(EXAMPLE_WITH_LIMITS)
    assert s.limits.wagers[W.BANKER] == WagerLimit(2500, 500000) and s.limits.table_max == 750000
    assert list(s.limits.wagers) == [W.PLAYER, W.BANKER, W.TIE, W.PLAYER_PAIR, W.BANKER_PAIR]
    assert s.to_dict()["limits"]["tie"] == {"min": 500, "max": 50000}
    assert roundtrip(s) == s and hash(roundtrip(s)) == hash(s)
    partial = load_submission(write(tmp_path, PB + "[limits]\nbanker = { min = 1, max = 1 }\n"))
    assert partial.limits.table_max is None and set(partial.limits.wagers) == {W.BANKER}
    assert roundtrip(partial) == partial and "table_max" not in partial.to_dict()["limits"]
    assert all(not load_preset(name).limits and "limits" not in load_preset(name).to_dict() for name in PRESETS)
    assert load_submission(write(tmp_path, PB + "[limits]\n")) == load_submission(write(tmp_path, PB))
