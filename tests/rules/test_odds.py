"""Exact odds by enumeration (controller.rules.odds) and ``shoectl odds``.

The enumeration is checked three ways: against the published 8-deck Punto Banco counts and
figures, against small shoes worked out by hand, and (tests/rules/test_odds_engine.py) against a
brute force that deals every ordered card sequence of small shoes through ``engine.deal`` and
values every wager with ``wagers.net_multiplier`` over the full facts.
"""
from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from itertools import product

import pytest
from odds_brute_force import shoe, with_options

from controller.cli.main import main
from controller.rules import twentyone as t21
from controller.rules.cards import ALL_CARDS, SUITS, Composition, card, parse_cards
from controller.rules.errors import CompositionError
from controller.rules.model import BonusRank, Game, WagerKind
from controller.rules.odds import exact_odds, falling
from controller.rules.submission import load_preset

# --------------------------------------------------------------------------------------------
# published 8-deck figures
# --------------------------------------------------------------------------------------------

TOTAL_8 = 4_998_398_275_503_360


def test_eight_deck_punto_banco_exact_counts() -> None:
    r = exact_odds(load_preset("minibaccarat"))
    assert r.total_sequences == TOTAL_8 == falling(416, 6)
    assert r.counts["banker"] == 2_292_252_566_437_888
    assert r.counts["player"] == 2_230_518_282_592_256
    assert r.counts["tie"] == 475_627_426_473_216
    assert r.outcomes["banker"] == Fraction(2_292_252_566_437_888, TOTAL_8)
    assert sum(r.outcomes[k] for k in ("player", "banker", "tie")) == 1


def test_eight_deck_punto_banco_published_figures() -> None:
    r = exact_odds(load_preset("minibaccarat"))
    assert round(float(r.outcomes["banker"]), 6) == 0.458597
    assert round(float(r.outcomes["player"]), 6) == 0.446247
    assert round(float(r.outcomes["tie"]), 6) == 0.095156
    edge = {k: round(float(w["house_edge"]) * 100, 4) for k, w in r.wagers.items()}
    assert edge["banker"] == 1.0579  # 5% commission
    assert edge["player"] == 1.2351
    assert edge["tie"] == 14.3596  # 8:1
    assert edge["player_pair"] == edge["banker_pair"] == 10.3614  # 11:1
    # Pairs in closed form: 8 copies of each of 13 ranks among 416 cards.
    assert r.outcomes["player_pair"] == Fraction(13 * 32 * 31, 416 * 415)
    assert set(r.wagers) == {"player", "banker", "tie", "player_pair", "banker_pair"}


def test_eight_deck_ez_baccarat_figures() -> None:
    r = exact_odds(load_preset("ez-baccarat"))
    edge = {k: round(float(w["house_edge"]) * 100, 2) for k, w in r.wagers.items()}
    assert edge["banker"] == 1.02  # a winning three-card Banker 7 pushes (627c.2)
    assert edge["player"] == 1.24
    assert edge["dragon7"] == 7.61  # 40:1
    assert edge["panda8"] == 10.19  # 25:1
    b = r.wagers["banker"]
    assert b["push"] == r.outcomes["tie"] + r.outcomes["dragon7"]
    assert b["win"] == r.outcomes["banker"] - r.outcomes["dragon7"]
    # Player/Banker/Tie are the same game as Punto Banco.
    pb = exact_odds(load_preset("minibaccarat"))
    assert all(r.counts[k] == pb.counts[k] for k in ("player", "banker", "tie", "player_pair"))


def test_wagers_are_only_the_offered_ones_and_stats_sum_to_one() -> None:
    for preset in ("minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat"):
        sub = load_preset(preset)
        r = exact_odds(sub)
        assert set(r.wagers) == {k.value for k in sub.wagers}
        for w in r.wagers.values():
            assert w["win"] + w["push"] + w["lose"] == 1


# --------------------------------------------------------------------------------------------
# the Bonus enumeration's suit classes
# --------------------------------------------------------------------------------------------


def test_bonus_rank_depends_on_suits_only_through_a_flush() -> None:
    """The Bonus enumeration classifies suits as "all one suit" or not: that must be all
    ``twentyone.bonus_rank`` looks at (checked on every rank triple and suit triple)."""
    for r1, r2 in product(range(1, 14), repeat=2):
        two = {t21.bonus_rank([card(r1, a), card(r2, b)]) for a, b in product(SUITS, repeat=2) if a != b}
        assert len(two) == 1
        assert {t21.bonus_rank([card(r1, a), card(r2, a)]) for a in SUITS} <= two | {BonusRank.PAIR}
        for r3 in range(1, 14):
            flush, other = set(), set()
            for s in product(SUITS, repeat=3):
                rank = t21.bonus_rank([card(r1, s[0]), card(r2, s[1]), card(r3, s[2])])
                (flush if len(set(s)) == 1 else other).add(rank)
            assert len(flush) == 1 and len(other) == 1, (r1, r2, r3)


# --------------------------------------------------------------------------------------------
# 21 Baccarat by hand, and regulation clauses
# --------------------------------------------------------------------------------------------


@pytest.mark.reg("681a.7(i)(4)", "681a.7(j)(4)", "681a.7(k)(1)(i)")
def test_21_equal_totals_push_the_wagers_and_win_the_tie() -> None:
    """681a.7(i)(4) and (j)(4): when the two hands "are equal in total value, the dealer shall return the
    player's Player Wager", and likewise "the dealer shall return the player's Banker Wager"; 681a.7(k)(1)(i): if they
    "Have the same total value, the dealer shall pay the winning Tie Wager". A shoe of eights only deals 16 v 16, both
    draw an eight, 24 v 24 every round: every Player and Banker wager pushes and every Tie wager wins."""
    # Only eights: 16 v 16, both draw an eight, 24 v 24 every round.
    sub = load_preset("21-baccarat")
    r = exact_odds(sub, shoe(2, "8S,8S,8H,8H,8D,8D,8C"))
    assert r.outcomes["tie"] == 1
    assert r.wagers["player"]["push"] == r.wagers["banker"]["push"] == 1
    assert r.wagers["tie"]["win"] == 1 and r.wagers["tie"]["house_edge"] == -sub.payout(WagerKind.TIE).ratio
    assert r.outcomes["player_bonus:three_of_a_kind"] == 1  # three eights, two suits at least


@pytest.mark.reg("681a.7(i)(3)", "681a.7(j)(3)", "681a.7(k)(1)(ii)")
def test_21_both_hands_over_21_are_decided_not_pushed() -> None:
    """681a.7(i)(3) and (j)(3): both hands over 21, the lower total wins: (i)(3)(i) "the Player's Hand is
    lower in total value than the Banker's Hand, the dealer shall pay each player who wagered on the Player's Hand",
    (j)(3)(i) "the Banker's Hand is lower in total value than the Player's Hand, the dealer shall pay each player who
    wagered on the Banker's Hand"; 681a.7(k)(1)(ii): if the hands "Do not have the same total value, the dealer shall
    collect the losing Tie Wager".

    Four eights, a nine and a ten (N = 6: the six positions are a uniform arrangement).
    By hand, over the 30 equally likely places of the 9 and the 10: the Player wins 15
    (2 with 9+10 v a bust 24, 4 with the higher of 17/18, 8 standing on 17/18 v a bust Banker, and
    1 with 25 v 26 where both are over 21: the lower total wins), the Banker the mirror 15, and
    no round ties (a push of both-over rounds would make 2/30 ties)."""
    r = exact_odds(load_preset("21-baccarat"), shoe(1, "8S,8H,8D,8C,9S,10S"))
    assert r.outcomes["player"] == r.outcomes["banker"] == Fraction(1, 2)
    assert r.outcomes["tie"] == 0
    assert r.wagers["tie"]["lose"] == 1


@pytest.mark.reg("681a.7(f)(2)")
def test_21_bonus_only_card_counts_for_the_bonus_and_not_for_the_wagers() -> None:
    """681a.7(f)(2): with a natural and a Bonus Wager placed, a hand below 17 gets "one additional card"
    that "shall count only for purposes of the Bonus Wager but may not count for purposes of the player's Player or
    Banker Wager". Over the preset's whole shoe, the Bonus in play leaves the Player, Banker and Tie counts as they
    are and lifts some Bonus hands out of no rank."""
    sub = load_preset("21-baccarat")
    with_bonus = exact_odds(sub, bonus_in_play=True)
    without = exact_odds(sub, bonus_in_play=False)
    for k in ("player", "banker", "tie"):
        assert with_bonus.counts[k] == without.counts[k]
    # The extra card can only lift a hand to a better rank: fewer hands rank NONE.
    assert with_bonus.counts["player_bonus:none"] < without.counts["player_bonus:none"]
    assert with_bonus.bonus_in_play is True and without.bonus_in_play is False
    assert "player_bonus" in with_bonus.wagers and "player_bonus" not in without.wagers


@pytest.mark.reg("681a.7(f)(2)")
def test_21_bonus_only_card_by_hand() -> None:
    """681a.7(f)(2): the Bonus-only card "shall count only for purposes of the Bonus Wager but may not count
    for purposes of the player's Player or Banker Wager".

    Shoe AS KS 5H 5D 9C 9D. Only A+K is a natural. The Bonus in play changes a Bonus rank only
    when one hand is A+K and the other 5+9 (14, below 17): that hand then gets a card for the
    Bonus only, the 5 or the 9 left, and makes a pair. The Player holds 5+9 and the Banker A+K in
    (2 fives x 2 nines x 2 orders) x 2 orders = 16 of the 6*5*4*3 = 360 equally likely ordered
    first four cards: 2/45 (the same for the Banker). The Player and Banker wagers do not change."""
    sub = load_preset("21-baccarat")
    comp = shoe(1, "AS,KS,5H,5D,9C,9D")
    r_in = exact_odds(sub, comp, bonus_in_play=True)
    r_out = exact_odds(sub, comp, bonus_in_play=False)
    for side in ("player", "banker"):
        assert r_in.outcomes[f"{side}_bonus:pair"] - r_out.outcomes[f"{side}_bonus:pair"] == Fraction(2, 45)
        assert r_out.outcomes[f"{side}_bonus:none"] - r_in.outcomes[f"{side}_bonus:none"] == Fraction(2, 45)
    for k in ("player", "banker", "tie"):
        assert r_in.outcomes[k] == r_out.outcomes[k]


def test_21_each_draw_rule_makes_player_and_banker_symmetric() -> None:
    r = exact_odds(load_preset("21-baccarat"))
    assert r.counts["player"] == r.counts["banker"]
    for rank in BonusRank:
        assert r.counts[f"player_bonus:{rank.value}"] == r.counts[f"banker_bonus:{rank.value}"]
    fo = exact_odds(with_options(load_preset("21-baccarat"), draw_rule="first-only"))
    assert fo.counts["player"] > fo.counts["banker"]


# --------------------------------------------------------------------------------------------
# removed cards
# --------------------------------------------------------------------------------------------


def test_removing_cards_changes_the_odds_and_probabilities_still_sum_to_one() -> None:
    sub = load_preset("minibaccarat")
    full = exact_odds(sub)
    removed = parse_cards("5S,5H,5D,5C,6S,6H,6D,6C,7S,7H")
    less = exact_odds(sub, Composition.standard(8).remove(removed))
    assert less.cards == 406 and less.total_sequences == falling(406, 6)
    assert Counter(less.removed) == Counter(removed)
    assert sum(less.outcomes[k] for k in ("player", "banker", "tie")) == 1
    assert less.outcomes["banker"] != full.outcomes["banker"]
    # Without these fives, sixes and sevens the Player's disadvantage shrinks.
    assert less.wagers["player"]["house_edge"] < full.wagers["player"]["house_edge"]
    # Pairs, in closed form over the rank counts (ranks 5 and 6 hold 28, rank 7 holds 30).
    counts = [32] * 13
    counts[4] = counts[5] = 28
    counts[6] = 30
    assert less.outcomes["player_pair"] == Fraction(sum(n * (n - 1) for n in counts), 406 * 405)
    assert less.outcomes["player_pair"] > full.outcomes["player_pair"]  # uneven ranks pair more often


@pytest.mark.parametrize("preset", ["midibaccarat", "ez-baccarat", "21-baccarat"])
def test_every_distribution_sums_to_one_after_removal(preset: str) -> None:
    sub = load_preset(preset)
    r = exact_odds(sub, Composition.standard(sub.decks).remove(parse_cards("AS,KD,KD,10H,5C,9S")))
    assert sum(r.outcomes[k] for k in ("player", "banker", "tie")) == 1
    if sub.game is Game.TWENTYONE:
        for side in ("player", "banker"):
            assert sum(r.outcomes[f"{side}_bonus:{x.value}"] for x in BonusRank) == 1
    else:
        assert r.outcomes["player_pair"] == r.outcomes["banker_pair"]
    if sub.game is Game.EZ_BACCARAT:
        assert r.outcomes["dragon7"] < r.outcomes["banker"] and r.outcomes["panda8"] < r.outcomes["player"]


def test_a_shoe_needs_six_cards() -> None:
    with pytest.raises(CompositionError):
        exact_odds(load_preset("minibaccarat"), shoe(1, "AS,2S,3S,4S,5S"))


def test_to_json_shape() -> None:
    r = exact_odds(load_preset("minibaccarat"), Composition.standard(8).remove(parse_cards("AS")))
    d = r.to_json()
    json.dumps(d)
    assert d["game"] == "punto-banco" and d["decks"] == 8 and d["cards"] == 415 and d["removed"] == ["AS"]
    assert isinstance(d["total_sequences"], int)
    assert set(d["outcomes"]) == {"player", "banker", "tie", "player_pair", "banker_pair"}
    assert set(d["wagers"]["banker"]) >= {"house_edge", "win", "push", "lose"}
    num, den = map(int, d["exact"]["outcomes"]["tie"].split("/"))
    assert Fraction(num, den) == r.outcomes["tie"]
    assert d["exact"]["counts"]["tie"] == r.counts["tie"]
    assert "removed" not in exact_odds(load_preset("minibaccarat")).to_json()


# --------------------------------------------------------------------------------------------
# shoectl odds
# --------------------------------------------------------------------------------------------


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["odds", *argv])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_punto_banco(capsys) -> None:
    code, out, err = cli(capsys, "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert (d["game"], d["decks"], d["cards"], d["total_sequences"]) == ("punto-banco", 8, 416, TOTAL_8)
    assert d["exact"]["counts"]["banker"] == 2_292_252_566_437_888
    assert round(d["wagers"]["banker"]["house_edge"] * 100, 4) == 1.0579
    assert "removed" not in d


def test_cli_json_21_baccarat_with_decks_and_removed(capsys) -> None:
    code, out, err = cli(capsys, "--game", "21-baccarat", "--decks", "8", "--removed", "AS,KD", "--removed", "10H", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["game"] == "21-baccarat" and d["decks"] == 8 and d["cards"] == 413
    assert d["removed"] == ["AS", "10H", "KD"]
    assert d["bonus_in_play"] is True
    assert {"player_bonus", "banker_bonus", "tie"} <= set(d["wagers"])
    assert "player_bonus:suited_three_of_a_kind" in d["outcomes"]


def test_cli_submission_and_matching_game(capsys) -> None:
    code, out, _ = cli(capsys, "--submission", "ez-baccarat", "--game", "ez-baccarat", "--json")
    assert code == 0 and json.loads(out)["game"] == "ez-baccarat" and "dragon7" in json.loads(out)["wagers"]


def test_cli_text(capsys) -> None:
    code, out, err = cli(capsys, "--game", "punto-banco")
    assert code == 0 and err == ""
    assert "4,998,398,275,503,360" in out
    assert "1.0579%" in out and "1.2351%" in out and "14.3596%" in out
    lines = out.splitlines()
    assert any(line.startswith("banker") and "45.8597%" in line for line in lines)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--removed", "AS,ZZ"], "unknown card 'ZZ'"),
        (["--decks", "1", "--removed", "AS,AS"], "holds 1"),
        (["--game", "baccarat-royale"], "unknown game"),
        (["--decks", "9"], "--decks"),
        (["--decks", "six"], "--decks"),
        (["--submission", "/nonexistent/sub.toml"], "/nonexistent/sub.toml"),
        (["--submission", "ez-baccarat", "--game", "21-baccarat"], "does not match"),
        (["--decks", "1", "--removed", ",".join(str(c) for c in ALL_CARDS[:47])], "at least 6 cards"),
    ],
)
def test_cli_input_errors_are_one_line_exit_2(capsys, argv: list[str], needle: str) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert needle in err and err.strip().count("\n") == 0 and "Traceback" not in err


@pytest.mark.parametrize("decks, said", [
    ("\uff18", "not a whole number: '\uff18'"),  # a full-width 8: int() took it for 8
    (" 8", "not a whole number: ' 8'"),
    ("8 ", "not a whole number: '8 '"),
    ("9", "must be at most 8, not 9"),
])
def test_decks_is_a_whole_number_as_every_number_option_takes_one(capsys, decks: str, said: str) -> None:
    """A reviewer's finding: ``--decks`` was read with ``int(text.strip())``, which takes other
    scripts' digits and spaces that every other number option refuses."""
    assert cli(capsys, "--decks", decks) == (2, "", f"shoectl odds: error: argument --decks: {said}\n")


def test_cli_bad_submission_file(capsys, tmp_path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text('[submission]\ngame = "punto-banco"\n[paytable]\ntiee = "8:1"\n')
    code, out, err = cli(capsys, "--submission", str(f))
    assert code == 2 and out == "" and str(f) in err and err.count("\n") == 1
