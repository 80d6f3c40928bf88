"""21 Baccarat's Player and Banker wagers: their payout (odds and commission) is a Rules Submission
setting, settled as set and priced exactly; the preset's 1:1 without commission has no house edge
under the documented reading (docs/assumptions.md)."""
from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

import pytest

from cli_run import run
from controller.rules.cards import parse_cards
from controller.rules.engine import deal
from controller.rules.errors import SubmissionError
from controller.rules.model import WagerKind as K
from controller.rules.odds import exact_odds
from controller.rules.submission import load_preset, load_submission, parse_submission
from controller.rules.wagers import Result, Wager, settle

PLAYER_19_BANKER_17 = parse_cards("KS,9H,9D,8C")  # no natural, both stand: the Player wins
PLAYER_17_BANKER_19 = parse_cards("9H,KS,8C,9D")  # the Banker wins


def commissioned(rate: str = "0.05", player_rate: str = "0.05", **paytable: str):
    data = {"submission": {"game": "21-baccarat"}, "commission": {"rate": rate, "player_rate": player_rate}}
    if paytable:
        data["paytable"] = paytable
    return parse_submission(data, "test")


@pytest.mark.reg("681a.7(i)", "681a.7(j)")
@pytest.mark.parametrize("cards, side", [(PLAYER_19_BANKER_17, K.PLAYER), (PLAYER_17_BANKER_19, K.BANKER)])
def test_a_winning_player_or_banker_wager_pays_as_the_submission_sets_it(cards, side) -> None:
    """681a.7(i)-(j): the dealer "shall pay each player who wagered on the Player's [Banker's] Hand in
    accordance with § 681a.8(a)". 681a.8(a) was not available: the payout of both wagers is the
    Rules Submission's, odds and commission alike."""
    sub = commissioned(rate="0.05", player_rate="0.04", player="2:1", banker="3:2")
    [s] = settle(deal(cards, sub.game, sub.twentyone), [Wager(1, side, 1000)], sub)
    gross, rate = (2000, 80) if side is K.PLAYER else (1500, 75)
    assert (s.result, s.win, s.commission) == (Result.WIN, gross - rate, rate)
    assert sub.commission_on(side) == (Decimal("0.04") if side is K.PLAYER else Decimal("0.05"))


@pytest.mark.parametrize("decks", [1, 6, 8])  # a consequence of the reading, not a settlement test: no reg marker
def test_the_preset_player_and_banker_wagers_have_no_house_edge_under_the_documented_reading(decks) -> None:
    """681a.7(i) and (j) settle the two wagers as mirror images, e.g. "the Player's Hand is higher in total
    value than the Banker's Hand, the dealer shall pay each player who wagered on the Player's Hand" and "the
    Banker's Hand is higher in total value than the Player's Hand, the dealer shall pay each player who wagered on
    the Banker's Hand".
    Under the reading of 681a.7(g)-(j) documented in docs/assumptions.md the game is symmetric,
    so the preset's 1:1 without commission holds exactly 0 on both wagers, at every deck count."""
    sub = parse_submission({"submission": {"game": "21-baccarat", "decks": decks}}, "test")
    report = exact_odds(sub)
    assert report.wagers["player"]["house_edge"] == report.wagers["banker"]["house_edge"] == 0
    assert report.outcomes["player"] == report.outcomes["banker"]


def test_a_commission_on_both_gives_each_wager_the_rate_times_its_chance_to_win() -> None:
    report = exact_odds(commissioned())
    for side in ("player", "banker"):
        assert report.wagers[side]["house_edge"] == Fraction(5, 100) * report.outcomes[side]
        assert report.payouts[side] == "1:1 less 5% commission"


def test_player_rate_is_read_checked_and_written_back(tmp_path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text('[submission]\ngame = "21-baccarat"\n[commission]\nplayer_rate = "0.025"\n')
    sub = load_submission(path)
    assert sub.player_commission == Decimal("0.025") and sub.commission == 0
    d = sub.to_dict()
    assert d["commission"]["player_rate"] == "0.025"
    d.pop("source")
    assert parse_submission(d, str(path)) == sub
    assert load_preset("21-baccarat").player_commission == 0


@pytest.mark.parametrize("game, value, words", [
    ("punto-banco", '"0.05"', "applies to 21-baccarat only"),
    ("ez-baccarat", '"0"', "applies to 21-baccarat only"),
    ("21-baccarat", '"1"', "out of range"),
    ("21-baccarat", '"-0.01"', "out of range"),
    ("21-baccarat", '"1e-9"', "too many decimal places"),
])
def test_a_player_rate_that_cannot_apply_is_refused_by_key(tmp_path, game, value, words) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(f'[submission]\ngame = "{game}"\n[commission]\nplayer_rate = {value}\n')
    with pytest.raises(SubmissionError) as ei:
        load_submission(path)
    assert ei.value.key == "commission.player_rate" and words in str(ei.value)


def test_rules_show_prints_every_wagers_edge_and_names_a_wager_without_one(capsys, tmp_path) -> None:
    code, out, err = run(capsys, "rules", "show", "21-baccarat")
    assert code == 0 and err == ""
    edges = dict(line.split()[1::2] for line in out.splitlines()
                 if line.startswith("#   ") and line.split()[1] in ("player", "banker", "tie"))
    assert edges == {"player": "0.0000%", "banker": "0.0000%", "tie": "4.8096%"}
    assert "note: the house has no edge on player, banker" in out
    path = tmp_path / "rules.toml"
    path.write_text('[submission]\ngame = "21-baccarat"\n[commission]\nrate = "0.05"\nplayer_rate = "0.05"\n')
    code, out, _ = run(capsys, "rules", "show", str(path), "--json")

    d = json.loads(out)
    assert code == 0 and set(d["house_edge"]) == {"player", "banker", "tie", "player_bonus", "banker_bonus"}
    assert d["house_edge"]["player"] == d["house_edge"]["banker"] == pytest.approx(0.022836581)
    code, out, _ = run(capsys, "rules", "show", str(path))
    assert "note:" not in out
