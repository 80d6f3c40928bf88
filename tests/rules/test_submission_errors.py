"""Tests for the Rules Submission's refusals (controller/rules/submission.py): every bad file names
the file, the key and the reason on one line; missing, unreadable and oversized files; rates that
would make arithmetic expensive; bad input to parse_submission."""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from submission_helpers import EZ, PB, write

from controller.rules import submission as sub_mod
from controller.rules import submission_parser as sub_parser
from controller.rules.errors import RulesError, SubmissionError
from controller.rules.submission import load_submission, parse_submission
from shoectl_config import files as config_files

# Errors ---------------------------------------------------------------------------------------

TO = '[submission]\ngame = "21-baccarat"\n'
HM = PB + '[wagers]\noffered = ["player", "banker", "house_money"]\n'

BAD = [
    # (id, file text, key, fragment of the reason)
    ("unknown-section", PB + "[paytabel]\ntie = '8:1'\n", "paytabel", "unknown section; known sections: submission, wagers"),
    ("top-level-key", 'game = "punto-banco"\n', "game", "a key before any [section]; it belongs in [submission]"),
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
    ("odds-fullwidth", PB + '[paytable]\ntie = "\uff18:\uff11"\n', "paytable.tie", "payout odds must look like"),
    ("hm-unknown", HM + '[house_money]\nboth_pair = "15:1"\n', "house_money.both_pair", "known keys: either_pair, both_pairs, portion"),
    ("irr-enum", PB + '[irregularities]\nunauthorized_third_card = "burn"\n', "irregularities.unauthorized_third_card", "allowed: discard, simulated-round"),
    ("irr-21", TO + '[irregularities]\nunauthorized_third_card = "discard"\n', "irregularities", "627a.13(c)"),
    ("21-section-pb", PB + "[twentyone]\nnaturals = true\n", "twentyone", "applies to 21-baccarat only, not punto-banco"),
    ("bonus-section-ez", EZ + '[bonus_paytable]\npair = "1:1"\n', "bonus_paytable", "applies to 21-baccarat only, not ez-baccarat"),
    ("naturals-int", TO + "[twentyone]\nnaturals = 1\n", "twentyone.naturals", "expected a boolean (true or false), got an integer"),
    ("bonus-only-str", TO + '[twentyone]\nbonus_only_card = "yes"\n', "twentyone.bonus_only_card", "got a string"),
    ("draw-rule", TO + '[twentyone]\ndraw_rule = "all"\n', "twentyone.draw_rule", "allowed: each, first-only"),
    ("threshold-high", TO + "[twentyone]\ndraw_threshold = 22\n", "twentyone.draw_threshold", "(681a.7(f)(2), (g)), not 22; allowed: 17"),
    ("threshold-low", TO + "[twentyone]\ndraw_threshold = 16\n", "twentyone.draw_threshold", "not 16; allowed: 17"),
    ("no-bonus-only-card", TO + "[twentyone]\nbonus_only_card = false\n", "twentyone.bonus_only_card", "681a.7(f)(2) requires it"),
    ("no-naturals", TO + "[twentyone]\nnaturals = false\n", "twentyone.naturals", "681a.7(f) applies"),
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
