"""Tests for the Rules Submission (controller/rules/submission.py) and its shipped presets."""
from __future__ import annotations

import json
import os
import string
import subprocess
import sys
import types
from dataclasses import FrozenInstanceError
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.rules import submission as sub_mod
from controller.rules import submission_parser as sub_parser
from shoectl_config import files as config_files
from controller.rules.errors import RulesError, SubmissionError, WagerError
from controller.rules.model import BonusRank, Dealing, Game, Payout, WagerKind
from controller.rules.submission_data import WagerLimit
from controller.rules.submission import (
    DEFAULT_PRESET,
    HouseMoneyOptions,
    Submission,
    TwentyOneOptions,
    default_submission,
    load_preset,
    load_submission,
    parse_submission,
    preset_names,
    resolve_submission,
)

W = WagerKind
PRESETS = ("minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat")
PRESET_DIR = Path(sub_mod.__file__).parent / "presets"


def write(tmp_path: Path, text: str | bytes, name: str = "rules.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def roundtrip(s: Submission) -> Submission:
    d = json.loads(json.dumps(s.to_dict()))
    source = d.pop("source")
    return parse_submission(d, source)


def no_floats(value: object) -> bool:
    if isinstance(value, float):
        return False
    if isinstance(value, dict):
        return all(no_floats(v) for v in value.values())
    if isinstance(value, list):
        return all(no_floats(v) for v in value)
    return True


# Presets ------------------------------------------------------------------------------------


def test_preset_names_are_the_shipped_files():
    assert preset_names() == sorted(PRESETS)
    assert sorted(p.stem for p in PRESET_DIR.glob("*.toml")) == sorted(PRESETS)
    assert DEFAULT_PRESET == "minibaccarat" and DEFAULT_PRESET in preset_names()


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_loads_round_trips_and_matches_its_file(name):
    s = load_preset(name)
    assert s.source == f"preset:{name}"
    assert roundtrip(s) == s
    # the preset loaded as a plain file gives the same rules
    from_file = load_submission(PRESET_DIR / f"{name}.toml")
    assert from_file == Submission(**{**{f: getattr(s, f) for f in Submission.__slots__}, "source": from_file.source})
    assert isinstance(s.paytable, types.MappingProxyType)
    assert isinstance(s.bonus_paytable, types.MappingProxyType)
    assert isinstance(s.commission, Decimal) and isinstance(s.house_money.portion, Decimal)
    assert no_floats(s.to_dict())
    # every preset file is commented
    assert (PRESET_DIR / f"{name}.toml").read_text(encoding="utf-8").lstrip().startswith("#")


def test_minibaccarat_preset_values():
    s = load_preset("minibaccarat")
    assert s.name == "Minibaccarat, 8 decks"
    assert (s.game, s.decks, s.dealing) == (Game.PUNTO_BANCO, 8, Dealing.FACE_UP)
    assert (s.burn_cards, s.min_cover_depth) == (1, 10)
    assert s.seats == (1, 2, 3, 4, 5, 6, 7)
    assert s.wagers == {W.PLAYER, W.BANKER, W.TIE, W.PLAYER_PAIR, W.BANKER_PAIR}
    assert dict(s.paytable) == {
        W.PLAYER: Payout(1), W.BANKER: Payout(1), W.TIE: Payout(8),
        W.PLAYER_PAIR: Payout(11), W.BANKER_PAIR: Payout(11),
    }
    assert s.commission == Decimal("0.05") and s.commission_rounding == "down"
    assert s.unauthorized_third_card == "discard"
    assert s.house_money == HouseMoneyOptions() and s.twentyone == TwentyOneOptions()


def test_midibaccarat_preset_values():
    s = load_preset("midibaccarat")
    assert (s.game, s.decks, s.dealing) == (Game.PUNTO_BANCO, 6, Dealing.FACE_DOWN)
    assert s.seats == tuple(range(1, 10))
    assert W.HOUSE_MONEY in s.wagers
    assert W.HOUSE_MONEY not in s.paytable
    assert s.house_money == HouseMoneyOptions(Payout(3, 1), Payout(15, 1), Decimal(1))
    assert s.commission == Decimal("0.05")


def test_ez_baccarat_preset_values():
    s = load_preset("ez-baccarat")
    assert (s.game, s.decks, s.dealing) == (Game.EZ_BACCARAT, 8, Dealing.FACE_UP)
    assert s.commission == 0
    assert {W.DRAGON7, W.PANDA8} <= s.wagers
    assert s.payout(W.DRAGON7) == Payout(40) and s.payout(W.PANDA8) == Payout(25)


def test_21_baccarat_preset_values():
    s = load_preset("21-baccarat")
    assert (s.game, s.decks, s.dealing) == (Game.TWENTYONE, 6, Dealing.FACE_UP)
    assert s.wagers == {W.PLAYER, W.BANKER, W.TIE, W.PLAYER_BONUS, W.BANKER_BONUS}
    assert dict(s.paytable) == {W.PLAYER: Payout(1), W.BANKER: Payout(1), W.TIE: Payout(10)}
    assert s.commission == 0
    assert s.twentyone == TwentyOneOptions(True, True, "each", 17)
    assert BonusRank.NONE not in s.bonus_paytable
    assert dict(s.bonus_paytable) == {
        BonusRank.PAIR: Payout(2), BonusRank.FLUSH: Payout(4), BonusRank.STRAIGHT: Payout(7),
        BonusRank.THREE_OF_A_KIND: Payout(25), BonusRank.STRAIGHT_FLUSH: Payout(40),
        BonusRank.SUITED_THREE_OF_A_KIND: Payout(100),
    }
    assert s.bonus_payout("flush") == Payout(4)


def test_default_submission_is_the_default_preset():
    assert default_submission() == load_preset(DEFAULT_PRESET)
    assert resolve_submission(None) == default_submission()


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
        '[submission]\ngame = "21-baccarat"\n[twentyone]\nnaturals = false\nbonus_only_card = false\n'
        'draw_rule = "first-only"\ndraw_threshold = 16\n'
    )
    s = load_submission(write(tmp_path, text))
    assert s.twentyone == TwentyOneOptions(False, False, "first-only", 16)
    assert roundtrip(s) == s


def test_seat_order_is_kept(tmp_path):
    s = load_submission(write(tmp_path, '[submission]\ngame = "punto-banco"\nseats = [3, 1, 2, 12]\n'))
    assert s.seats == (3, 1, 2, 12)


def test_utf8_bom_and_crlf_are_accepted(tmp_path):
    s = load_submission(write(tmp_path, b'\xef\xbb\xbf[submission]\r\ngame = "ez-baccarat"\r\n'))
    assert s.game is Game.EZ_BACCARAT


# Regulation options ---------------------------------------------------------------------------


@pytest.mark.reg("627a.13(c)")
@pytest.mark.parametrize("option", ["discard", "simulated-round"])
def test_unauthorized_third_card_procedure_is_designated(tmp_path, option):
    s = load_submission(write(
        tmp_path, f'[submission]\ngame = "punto-banco"\n[irregularities]\nunauthorized_third_card = "{option}"\n'
    ))
    assert s.unauthorized_third_card == option
    assert default_submission().unauthorized_third_card == "discard"
    with pytest.raises(SubmissionError, match=r"irregularities\.unauthorized_third_card: .*allowed: discard, simulated-round"):
        load_submission(write(
            tmp_path, '[submission]\ngame = "punto-banco"\n[irregularities]\nunauthorized_third_card = "keep"\n'
        ))


@pytest.mark.reg("629a.8(c)(3)(i)(A)")
@pytest.mark.parametrize("portion, ok", [('"1"', True), ('"0.5"', True), ("0.25", True), ("1", True),
                                         ('"0"', False), ('"1.01"', False), ('"-0.5"', False)])
def test_house_money_portion(tmp_path, portion, ok):
    text = (
        '[submission]\ngame = "punto-banco"\n[wagers]\noffered = ["player", "banker", "house_money"]\n'
        f"[house_money]\nportion = {portion}\n"
    )
    path = write(tmp_path, text)
    if ok:
        s = load_submission(path)
        assert s.house_money.portion == Decimal(portion.strip('"'))
        assert isinstance(s.house_money.portion, Decimal)
        assert roundtrip(s) == s
    else:
        with pytest.raises(SubmissionError, match=r"house_money\.portion: out of range"):
            load_submission(path)


@pytest.mark.reg("681a.5(c)")
@pytest.mark.reg("681a.5(d)")
def test_min_cover_depth_may_be_raised_never_lowered(tmp_path):
    base = '[submission]\ngame = "21-baccarat"\n'
    assert load_submission(write(tmp_path, base)).min_cover_depth == 10
    assert load_submission(write(tmp_path, base + "min_cover_depth = 26\n")).min_cover_depth == 26
    for bad in (9, 0, -10):
        with pytest.raises(SubmissionError, match=r"submission\.min_cover_depth: out of range.*never lowered"):
            load_submission(write(tmp_path, base + f"min_cover_depth = {bad}\n"))


@pytest.mark.reg("681a.7(c)")
def test_burn_card_count(tmp_path):
    """681a.7(c): "After each full batch of cards is placed in the shoe, the dealer shall remove
    the first card and place it in the discard rack. Each new dealer ... shall also remove one
    card": one card at 21 Baccarat, so any other count is refused there; the Punto Banco games
    (whose burn section was not found) may set more, and the table and ``simulate`` burn it."""
    base = '[submission]\ngame = "21-baccarat"\n'
    assert load_submission(write(tmp_path, base)).burn_cards == 1
    assert load_preset("21-baccarat").burn_cards == 1
    assert load_submission(write(tmp_path, base + "burn_cards = 1\n")).burn_cards == 1
    with pytest.raises(SubmissionError, match=r"submission\.burn_cards: .*681a\.7\(c\)"):
        load_submission(write(tmp_path, base + "burn_cards = 3\n"))
    assert load_submission(write(tmp_path, PB + "burn_cards = 3\n")).burn_cards == 3
    with pytest.raises(SubmissionError, match=r"submission\.burn_cards: out of range"):
        load_submission(write(tmp_path, base + "burn_cards = 0\n"))


@pytest.mark.reg("681a.7(e)")
def test_21_baccarat_is_dealt_face_up(tmp_path):
    assert load_preset("21-baccarat").dealing is Dealing.FACE_UP
    with pytest.raises(SubmissionError, match=r"submission\.dealing: .*face up \(681a\.7\(e\)\)"):
        load_submission(write(tmp_path, '[submission]\ngame = "21-baccarat"\ndealing = "face-down"\n'))


# Errors ---------------------------------------------------------------------------------------

PB = '[submission]\ngame = "punto-banco"\n'
EZ = '[submission]\ngame = "ez-baccarat"\n'
TO = '[submission]\ngame = "21-baccarat"\n'
HM = PB + '[wagers]\noffered = ["player", "banker", "house_money"]\n'

BAD = [
    # (id, file text, key, fragment of the reason)
    ("unknown-section", PB + "[paytabel]\ntie = '8:1'\n", "paytabel", "unknown section; known sections: submission, wagers"),
    ("top-level-key", 'game = "punto-banco"\n', "game", "unknown section"),
    ("unknown-key", PB + '[paytable]\ntiee = "8:1"\n', "paytable.tiee", "unknown key; known keys: player, banker, tie"),
    ("unknown-submission-key", PB + "deck = 8\n", "submission.deck", "known keys: name, game, decks"),
    ("quoted-odd-key", PB + '[paytable]\n"a\\nb" = "1:1"\n', 'paytable."a\\nb"', "unknown key"),
    ("section-not-table", "submission = 5\n", "submission", "expected a table ([submission]), got an integer"),
    ("missing-game", "[submission]\ndecks = 8\n", "submission.game", "required key is missing; allowed: punto-banco, ez-baccarat, 21-baccarat"),
    ("no-submission", "", "submission.game", "required"),
    ("bad-game", '[submission]\ngame = "blackjack"\n', "submission.game", "unknown value 'blackjack'; allowed: punto-banco, ez-baccarat, 21-baccarat"),
    ("game-not-string", "[submission]\ngame = 1\n", "submission.game", "expected a string, got an integer"),
    ("decks-bool", PB + "decks = true\n", "submission.decks", "expected an integer, got a boolean"),
    ("decks-string", PB + 'decks = "8"\n', "submission.decks", "expected an integer, got a string"),
    ("decks-float", PB + "decks = 8.0\n", "submission.decks", "expected an integer, got a float"),
    ("decks-high", PB + "decks = 9\n", "submission.decks", "out of range: 9 (allowed 1..8)"),
    ("decks-zero", PB + "decks = 0\n", "submission.decks", "out of range: 0"),
    ("decks-date", PB + "decks = 2024-01-01\n", "submission.decks", "got a date"),
    ("name-empty", '[submission]\ngame = "punto-banco"\nname = "  "\n', "submission.name", "must not be empty"),
    ("name-multiline", '[submission]\ngame = "punto-banco"\nname = "a\\nb"\n', "submission.name", "one printable line"),
    ("dealing-enum", PB + 'dealing = "sideways"\n', "submission.dealing", "allowed: face-up, face-down"),
    ("21-face-down", TO + 'dealing = "face-down"\n', "submission.dealing", "681a.7(e)"),
    ("burn-zero", PB + "burn_cards = 0\n", "submission.burn_cards", "out of range: 0 (allowed 1..52)"),
    ("burn-bool", PB + "burn_cards = true\n", "submission.burn_cards", "expected an integer, got a boolean"),
    ("cover-low", PB + "min_cover_depth = 9\n", "submission.min_cover_depth", "never lowered"),
    ("cover-high", PB + "decks = 1\nmin_cover_depth = 27\n", "submission.min_cover_depth", "out of range: 27 (allowed 10..26 for 1 decks)"),
    ("cover-bool", PB + "min_cover_depth = true\n", "submission.min_cover_depth", "got a boolean"),
    ("seats-dup", PB + "seats = [1, 2, 2]\n", "submission.seats", "duplicate seat 2"),
    ("seats-zero", PB + "seats = [1, 0]\n", "submission.seats[1]", "out of range: 0"),
    ("seats-bool", PB + "seats = [1, true]\n", "submission.seats[1]", "got a boolean"),
    ("seats-empty", PB + "seats = []\n", "submission.seats", "at least one seat"),
    ("seats-string", PB + 'seats = "1-7"\n', "submission.seats", "expected an array"),
    ("wager-unknown", PB + '[wagers]\noffered = ["player", "banker", "bogus"]\n', "wagers.offered[2]", "unknown value 'bogus'; allowed: player, banker"),
    ("wager-dragon-pb", PB + '[wagers]\noffered = ["player", "banker", "dragon7"]\n', "wagers.offered[2]", "dragon7 is not a punto-banco wager; allowed: player, banker, tie, player_pair, banker_pair, house_money"),
    ("wager-bonus-ez", EZ + '[wagers]\noffered = ["player", "banker", "player_bonus"]\n', "wagers.offered[2]", "not a ez-baccarat wager"),
    ("wager-hm-ez", EZ + '[wagers]\noffered = ["player", "banker", "house_money"]\n', "wagers.offered[2]", "house_money is not a ez-baccarat wager"),
    ("wager-pair-21", TO + '[wagers]\noffered = ["player", "banker", "player_pair"]\n', "wagers.offered[2]", "player_pair is not a 21-baccarat wager"),
    ("wager-dup", PB + '[wagers]\noffered = ["player", "banker", "tie", "tie"]\n', "wagers.offered[3]", "duplicate wager tie"),
    ("wager-no-banker", PB + '[wagers]\noffered = ["player", "tie"]\n', "wagers.offered", "must include banker"),
    ("wager-not-list", PB + '[wagers]\noffered = "player"\n', "wagers.offered", "expected an array"),
    ("wager-int", PB + "[wagers]\noffered = [1]\n", "wagers.offered[0]", "expected a string, got an integer"),
    ("pay-int", PB + "[paytable]\ntie = 8\n", "paytable.tie", "expected a string, got an integer"),
    ("pay-format", PB + '[paytable]\ntie = "8-1"\n', "paytable.tie", "payout odds must look like '8:1' or '8 to 1', not '8-1'"),
    ("pay-zero-win", PB + '[paytable]\ntie = "0:1"\n', "paytable.tie", "out of range"),
    ("pay-zero-stake", PB + '[paytable]\ntie = "8:0"\n', "paytable.tie", "payout odds must look like"),
    ("pay-huge", PB + f'[paytable]\ntie = "{"9" * 5000}:1"\n', "paytable.tie", "payout odds must look like"),
    ("pay-not-offered", PB + '[paytable]\ndragon7 = "40:1"\n', "paytable.dragon7", "wager not offered at this table"),
    ("pay-house-money", HM + '[paytable]\nhouse_money = "3:1"\n', "paytable.house_money", "House Money odds go in [house_money]"),
    ("pay-bonus", TO + '[paytable]\nplayer_bonus = "3:1"\n', "paytable.player_bonus", "[bonus_paytable]"),
    ("ez-commission", EZ + '[commission]\nrate = "0.05"\n', "commission.rate", "must be 0 for ez-baccarat (commission-free, 627c.2)"),
    ("commission-one", PB + '[commission]\nrate = "1"\n', "commission.rate", "out of range: 1 (allowed 0 <= rate < 1)"),
    ("commission-negative", PB + '[commission]\nrate = "-0.01"\n', "commission.rate", "out of range"),
    ("commission-text", PB + '[commission]\nrate = "five percent"\n', "commission.rate", "not a decimal number: 'five percent'"),
    ("commission-nan-text", PB + '[commission]\nrate = "NaN"\n', "commission.rate", "expected a finite number"),
    ("commission-nan", PB + "[commission]\nrate = nan\n", "commission.rate", "expected a finite number"),
    ("commission-inf", PB + "[commission]\nrate = inf\n", "commission.rate", "expected a finite number"),
    ("commission-bool", PB + "[commission]\nrate = true\n", "commission.rate", "got a boolean"),
    ("commission-array", PB + "[commission]\nrate = [0.05]\n", "commission.rate", "got an array"),
    # Bounds checked before any arithmetic: Fraction("1e-999999999") would compute 10**999999999.
    ("commission-tiny-exponent", PB + '[commission]\nrate = "1e-999999999"\n', "commission.rate", "too many decimal places: '1e-999999999' (at most 6)"),
    ("commission-huge-exponent", PB + '[commission]\nrate = "1e999999999"\n', "commission.rate", "out of range: 1E+999999999 (allowed 0 <= rate < 1)"),
    ("commission-float-tiny", PB + "[commission]\nrate = 1e-300\n", "commission.rate", "too many decimal places"),
    ("commission-seven-places", PB + '[commission]\nrate = "0.0500001"\n', "commission.rate", "too many decimal places"),
    ("commission-long-text", PB + f'[commission]\nrate = "0.{"0" * 60}5"\n', "commission.rate", "not a decimal number of at most 40 characters"),
    ("commission-huge-int", PB + f"[commission]\nrate = {'9' * 4000}\n", "commission.rate", "out of range: a very large integer"),
    ("hm-portion-tiny-exponent", HM + '[house_money]\nportion = "1e-999999999"\n', "house_money.portion", "too many decimal places"),
    ("pay-long", PB + f'[paytable]\ntie = "{"0" * 40}8:1"\n', "paytable.tie", "payout odds must look like"),
    ("rounding-enum", PB + '[commission]\nrounding = "nearest"\n', "commission.rounding", "allowed: down, half-up, half-even, up"),
    ("hm-not-offered", PB + '[house_money]\nportion = "1"\n', "house_money", "'house_money' is not in wagers.offered"),
    ("hm-in-ez", EZ + '[house_money]\nportion = "1"\n', "house_money", "not offered in ez-baccarat"),
    ("hm-portion-zero", HM + '[house_money]\nportion = "0"\n', "house_money.portion", "out of range: 0 (allowed 0 < portion <= 1)"),
    ("hm-portion-big", HM + "[house_money]\nportion = 2\n", "house_money.portion", "out of range: 2"),
    ("hm-odds", HM + '[house_money]\neither_pair = "three to one"\n', "house_money.either_pair", "payout odds must look like"),
    ("hm-unknown", HM + '[house_money]\nboth_pair = "15:1"\n', "house_money.both_pair", "known keys: either_pair, both_pairs, portion"),
    ("irr-enum", PB + '[irregularities]\nunauthorized_third_card = "burn"\n', "irregularities.unauthorized_third_card", "allowed: discard, simulated-round"),
    ("irr-21", TO + '[irregularities]\nunauthorized_third_card = "discard"\n', "irregularities", "627a.13(c)"),
    ("21-section-pb", PB + "[twentyone]\nnaturals = true\n", "twentyone", "applies to 21-baccarat only, not punto-banco"),
    ("bonus-section-ez", EZ + '[bonus_paytable]\npair = "1:1"\n', "bonus_paytable", "applies to 21-baccarat only, not ez-baccarat"),
    ("naturals-int", TO + "[twentyone]\nnaturals = 1\n", "twentyone.naturals", "expected a boolean (true or false), got an integer"),
    ("bonus-only-str", TO + '[twentyone]\nbonus_only_card = "yes"\n', "twentyone.bonus_only_card", "got a string"),
    ("draw-rule", TO + '[twentyone]\ndraw_rule = "all"\n', "twentyone.draw_rule", "allowed: each, first-only"),
    ("threshold-high", TO + "[twentyone]\ndraw_threshold = 22\n", "twentyone.draw_threshold", "out of range: 22 (allowed 12..21)"),
    ("threshold-low", TO + "[twentyone]\ndraw_threshold = 11\n", "twentyone.draw_threshold", "out of range: 11"),
    ("threshold-bool", TO + "[twentyone]\ndraw_threshold = true\n", "twentyone.draw_threshold", "got a boolean"),
    ("both-over-is-not-an-option", TO + '[twentyone]\nboth_over = "push"\n', "twentyone.both_over", "unknown key"),
    ("21-unknown", TO + "[twentyone]\nsoft17 = true\n", "twentyone.soft17", "unknown key; known keys: naturals"),
    ("bonus-none", TO + '[bonus_paytable]\nnone = "0:1"\n', "bonus_paytable.none", "unknown key"),
    ("bonus-odds", TO + '[bonus_paytable]\npair = "0:1"\n', "bonus_paytable.pair", "out of range"),
    ("bonus-not-offered", TO + '[wagers]\noffered = ["player", "banker"]\n[bonus_paytable]\npair = "1:1"\n', "bonus_paytable", "no Bonus Wager is in wagers.offered"),
    ("limits-unknown-key", PB + "[limits]\nbankr = { min = 1, max = 2 }\n", "limits.bankr", "unknown key; known keys: player, banker"),
    ("limits-not-offered", PB + "[limits]\ndragon7 = { min = 1, max = 2 }\n", "limits.dragon7", "wager not offered at this table; offered: player, banker"),
    ("limits-not-table", PB + "[limits]\nbanker = 2500\n", "limits.banker", "expected a table ([limits.banker]), got an integer"),
    ("limits-unknown-bound", PB + "[limits]\nbanker = { min = 1, max = 2, maximum = 3 }\n", "limits.banker.maximum", "unknown key; known keys: min, max"),
    ("limits-no-max", PB + "[limits]\nbanker = { min = 2500 }\n", "limits.banker.max", "required key is missing"),
    ("limits-min-zero", PB + "[limits]\nbanker = { min = 0, max = 2 }\n", "limits.banker.min", "out of range: 0 (allowed 1..100000000000)"),
    ("limits-max-huge", PB + "[limits]\nbanker = { min = 1, max = 100000000001 }\n", "limits.banker.max", "out of range"),
    ("limits-float", PB + "[limits]\nbanker = { min = 25.0, max = 5000 }\n", "limits.banker.min", "expected an integer, got a float"),
    ("limits-string", PB + '[limits]\nbanker = { min = "25.00", max = 5000 }\n', "limits.banker.min", "expected an integer, got a string"),
    ("limits-bool", PB + "[limits]\nbanker = { min = true, max = 5000 }\n", "limits.banker.min", "got a boolean"),
    ("limits-min-above-max", PB + "[limits]\nbanker = { min = 5000, max = 2500 }\n", "limits.banker", "min 5000 is above max 2500"),
    ("limits-table-max-low", PB + "[limits]\nbanker = { min = 5000, max = 9000 }\ntable_max = 4000\n", "limits.table_max", "4000 is below the banker minimum 5000"),
    ("limits-table-max-zero", PB + "[limits]\ntable_max = 0\n", "limits.table_max", "out of range: 0"),
    ("limits-section-not-table", "limits = 5\n" + PB, "limits", "expected a table ([limits]), got an integer"),
    ("toml-syntax", PB + "decks = = 8\n", "", "TOML syntax error: Invalid value (at line 3, column 9)"),
    ("toml-unclosed", '[submission\ngame = "punto-banco"\n', "", "TOML syntax error"),
    ("toml-dup-key", PB + "decks = 8\ndecks = 6\n", "", "TOML syntax error"),
    ("toml-huge-int", PB + "decks = " + "9" * 5000 + "\n", "", "TOML value error"),
    ("toml-deep", "a = " + "[" * 5000 + "]" * 5000 + "\n", "", "TOML syntax error"),
]


@pytest.mark.parametrize("text, key, reason", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_file_names_file_key_and_reason(tmp_path, text, key, reason):
    path = write(tmp_path, text, "casino-rules.toml")
    with pytest.raises(SubmissionError) as info:
        load_submission(path)
    err = info.value
    message = str(err)
    assert isinstance(err, RulesError) and isinstance(err, ValueError)
    assert err.source == str(path) and message.startswith(str(path) + ": ")
    assert err.key == key
    if key:
        assert f": {key}: " in message
    assert reason in err.reason and reason in message
    assert "\n" not in message and "\r" not in message


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


def test_bad_file_ids_are_unique():
    assert len({b[0] for b in BAD}) == len(BAD)


def test_missing_file(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(SubmissionError, match=r"nope\.toml: file not found$"):
        load_submission(path)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(SubmissionError, match="is a directory"):
        load_submission(tmp_path)


def test_unreadable_file(tmp_path, monkeypatch):
    path = write(tmp_path, PB)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(config_files, "open", refuse, raising=False)
    with pytest.raises(SubmissionError, match=r"rules\.toml: cannot read the file: permission denied"):
        load_submission(path)


def test_io_error_while_reading(tmp_path, monkeypatch):
    path = write(tmp_path, PB)

    def broken(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(config_files, "open", broken, raising=False)
    with pytest.raises(SubmissionError, match=r"rules\.toml: cannot read the file: Input/output error"):
        load_submission(path)


def test_non_utf8_file(tmp_path):
    path = write(tmp_path, PB.encode() + b'# caf\xe9\n')
    offset = len(PB.encode()) + len(b"# caf")
    with pytest.raises(SubmissionError, match=rf"rules\.toml: not UTF-8 text \(bad byte at offset {offset}\)"):
        load_submission(path)


def test_oversized_file(tmp_path):
    path = write(tmp_path, PB + "#" * (sub_mod.MAX_FILE_BYTES + 1) + "\n")
    with pytest.raises(SubmissionError, match="larger than"):
        load_submission(path)


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.from_regex(r"[-+]?[0-9]{0,12}(\.[0-9]{0,12})?([eE][-+]?[0-9]{1,12})?", fullmatch=True),
                      st.text(alphabet="0123456789.eE+-_ naNIinf", max_size=50)))
def test_every_accepted_rate_is_cheap_exact_arithmetic(text):
    """Whatever the rate text, it is refused or it is a Decimal with at most six decimal places:
    settlement's Fraction and quantize stay small (no 10**999999999)."""
    try:
        s = parse_submission({"submission": {"game": "punto-banco"}, "commission": {"rate": text}}, "fuzz")
    except SubmissionError as exc:
        assert exc.key == "commission.rate" and "\n" not in str(exc)
        return
    assert 0 <= s.commission < 1
    assert Fraction(s.commission).denominator <= 10**sub_parser.RATE_PLACES


def test_parse_submission_rejects_non_mapping_and_non_string_keys():
    with pytest.raises(SubmissionError, match=r"^here: expected a table of sections, got an array$"):
        parse_submission([1, 2], "here")  # type: ignore[arg-type]
    with pytest.raises(SubmissionError, match=r"^here: 1: unknown section"):
        parse_submission({1: {}}, "here")  # type: ignore[dict-item]
    with pytest.raises(SubmissionError, match=r"^here: submission\.3: unknown key"):
        parse_submission({"submission": {"game": "punto-banco", 3: 1}}, "here")


def test_parse_submission_accepts_tuples_and_decimals_are_rejected_as_strings_only():
    s = parse_submission({"submission": {"game": "punto-banco", "seats": (2, 1)}}, "dict")
    assert s.seats == (2, 1) and s.source == "dict"
    s = parse_submission({"submission": {"game": "punto-banco"}, "commission": {"rate": 0.1}}, "dict")
    assert s.commission == Decimal("0.1") and type(s.commission) is Decimal


# Resolution ---------------------------------------------------------------------------------


def test_resolve_submission(tmp_path):
    path = write(tmp_path, EZ)
    assert resolve_submission(str(path)).game is Game.EZ_BACCARAT
    assert resolve_submission(path).source == str(path)
    for name in PRESETS:
        assert resolve_submission(name) == load_preset(name)
        assert resolve_submission(f"preset:{name}") == load_preset(name)
    with pytest.raises(SubmissionError, match=r"^blackjack: neither an existing file nor a preset; presets: 21-baccarat"):
        resolve_submission("blackjack")
    with pytest.raises(SubmissionError, match=r"^preset:blackjack: unknown preset"):
        resolve_submission("preset:blackjack")
    with pytest.raises(SubmissionError, match=r"missing\.toml: file not found"):
        resolve_submission(str(tmp_path / "missing.toml"))
    with pytest.raises(SubmissionError, match=r"^other\.toml: file not found"):
        resolve_submission("other.toml")
    with pytest.raises(SubmissionError, match=r'^"": empty; give a file or a preset'):
        resolve_submission("")


def test_load_preset_unknown():
    with pytest.raises(SubmissionError, match=r"^preset:nope: unknown preset; presets: 21-baccarat, ez-baccarat, midibaccarat, minibaccarat$"):
        load_preset("nope")
    with pytest.raises(SubmissionError, match="unknown preset"):
        load_preset("../submission")


def test_a_file_beats_a_preset_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, EZ, "minibaccarat")
    assert resolve_submission("minibaccarat").game is Game.EZ_BACCARAT


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


# Fuzzing ------------------------------------------------------------------------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

_KEYS = sorted({k for keys in sub_parser._SECTIONS.values() for k in keys} | {"x", "none", "house_money"})
_SECTION_NAMES = sorted(sub_parser._SECTIONS) + ["extra"]
_LITERALS = st.sampled_from([
    '"punto-banco"', '"ez-baccarat"', '"21-baccarat"', '"face-down"', '"face-up"', '"8:1"', '"0:1"', '"1 to 1"',
    '"0.05"', '"0"', '"1"', '"NaN"', "0.05", "1e400", "-0.0", "nan", "inf", "true", "false", "0", "1", "8", "17",
    "-1", "99999999999999999999", "[1, 2, 3]", "[1, 1]", "[]", '["player", "banker"]',
    '["player", "banker", "house_money"]', '["player", "banker", "player_bonus"]', "{}", "{ a = 1 }",
    "1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", '"discard"', '"each"', '"push"', '""',
])


@st.composite
def toml_documents(draw):
    """Mostly well-formed documents: real sections and keys with plausible or wrong values."""
    game = draw(st.sampled_from(['"punto-banco"', '"ez-baccarat"', '"21-baccarat"']) | _LITERALS)
    lines = ["[submission]", f"game = {game}"]
    sections = draw(st.lists(st.sampled_from(_SECTION_NAMES), max_size=4, unique=True))
    for section in sections:
        if section != "submission":
            lines.append(f"[{section}]")
        known = sorted(sub_parser._SECTIONS.get(section, ()))
        keys = draw(st.lists(st.sampled_from(known or _KEYS) | st.sampled_from(_KEYS), max_size=3, unique=True))
        for key in keys:
            if section == "submission" and key == "game":
                continue
            lines.append(f"{key} = {draw(_LITERALS)}")
    return "\n".join(lines) + "\n"


@FUZZ
@given(data=st.binary(max_size=400))
def test_fuzz_bytes_only_raise_submission_error(tmp_path, data):
    path = write(tmp_path, data, "fuzz.toml")
    try:
        s = load_submission(path)
    except SubmissionError as err:
        assert str(err).startswith(str(path)) and "\n" not in str(err)
    else:
        assert roundtrip(s) == s


@FUZZ
@given(text=st.text(alphabet=string.printable + "é\u2028\x00\x7f[]=\"'", max_size=300))
def test_fuzz_text_only_raises_submission_error(tmp_path, text):
    path = write(tmp_path, text, "fuzz.toml")
    try:
        load_submission(path)
    except SubmissionError as err:
        assert "\n" not in str(err)


@FUZZ
@given(doc=toml_documents())
def test_fuzz_toml_documents_only_raise_submission_error(tmp_path, doc):
    path = write(tmp_path, doc, "fuzz.toml")
    try:
        s = load_submission(path)
    except SubmissionError as err:
        assert str(err).startswith(str(path) + ": ") and "\n" not in str(err)
    else:
        assert roundtrip(s) == s and no_floats(s.to_dict())


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
    | st.sampled_from(["8:1", "0.05", "player", "face-down", "push", "first-only", "simulated-round"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(preset=st.sampled_from(PRESETS), data=st.data())
def test_fuzz_mutated_presets_only_raise_submission_error(preset, data):
    d = load_preset(preset).to_dict()
    d.pop("source")
    section = data.draw(st.sampled_from(sorted(d) + ["extra"]))
    if section in d and d[section] and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(d[section]) + ["extra"]))
        d[section][key] = data.draw(_json_values)
    else:
        d[section] = data.draw(_json_values)
    try:
        s = parse_submission(d, "mutant")
    except SubmissionError as err:
        assert str(err).startswith("mutant") and "\n" not in str(err)
    else:
        assert roundtrip(s) == s and no_floats(s.to_dict())
