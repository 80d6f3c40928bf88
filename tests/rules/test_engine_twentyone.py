"""21 Baccarat (681a.7(e)-(k)) through the round engine, with the documented assumptions."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.rules import twentyone as t21
from controller.rules.cards import ALL_CARDS, parse_cards
from controller.rules.engine import RoundEngine, deal, twentyone_outcome
from controller.rules.model import BonusRank, Game, Outcome, Target
from controller.rules.submission import TwentyOneOptions

G = Game.TWENTYONE


def d(cards: str, **kw):
    return deal(parse_cards(cards), G, **kw)


@pytest.mark.parametrize(
    "cards, total, soft",
    [("AS,KD", 21, True), ("AS,AD", 12, True), ("AS,5D,KC", 16, False), ("AS,6D", 17, True),
     ("9S,7D", 16, False), ("KS,QD,2C", 22, False), ("AS,AD,9C", 21, True)],
)
def test_hand_totals_count_one_ace_as_11_when_it_fits(cards: str, total: int, soft: bool) -> None:
    assert t21.hand_total(parse_cards(cards)) == (total, soft)


@pytest.mark.reg("681a.7(e)", "681a.7(e)(1)", "681a.7(e)(2)", "681a.7(e)(3)", "681a.7(e)(4)")
def test_first_four_cards_player_banker_player_banker() -> None:
    """681a.7(e): the dealer deals "One card face up to the area in front of the table inventory container
    designated for the Player's Hand", then "One card face up to the area ... designated for the Banker's Hand", then
    "A second card face up to the area for the Player's Hand" and "A second card face up to the area for the Banker's
    Hand": the first four cards go Player, Banker, Player, Banker."""
    engine = RoundEngine(G)
    assert [engine.feed(c) for c in parse_cards("2S,3S,4S,5S")] == [Target.PLAYER, Target.BANKER, Target.PLAYER, Target.BANKER]


@pytest.mark.reg("681a.7(f)", "681a.7(f)(1)")
def test_a_natural_without_bonus_wagers_ends_the_round() -> None:
    """681a.7(f): "If either the Player's Hand or Banker's Hand is a natural" and (f)(1) "There were no Bonus
    Wagers placed, no additional cards may be dealt to either hand": the Player's A-K ends the round on four cards,
    the Banker's 11 draws nothing, and the natural wins; the same with the Banker's natural and the Player's 11."""
    r = d("AS,5H,KD,6C,9D,9C")
    assert r.player_natural and r.cards_used == 4 and r.outcome is Outcome.PLAYER
    assert r.banker_total == 11  # the Banker below 17 draws nothing
    r = d("5H,AS,6C,KD,9D,9C")  # the Banker's natural: the Player's 11 draws nothing either
    assert r.banker_natural and not r.player_natural and r.cards_used == 4 and r.outcome is Outcome.BANKER
    assert r.player_total == 11 and len(r.player) == 2


@pytest.mark.reg("681a.7(f)(2)")
def test_a_natural_with_a_bonus_wager_draws_a_bonus_only_card() -> None:
    """681a.7(f)(2): with a natural, if "Any player placed a Bonus Wager, one additional card shall be drawn face
    up to the Player's Hand or Banker's Hand if the Player's Hand or Banker's Hand has a total value of less than a
    soft or hard 17", and "The additional card shall count only for purposes of the Bonus Wager but may not count for
    purposes of the player's Player or Banker Wager": the Banker's 11 gets a fifth card for its Bonus hand only,
    stays 11 for the wagers, and the Player's natural wins."""
    r = d("AS,5H,KD,6C,9D,9C", bonus_in_play=True)
    assert r.cards_used == 5
    assert r.dealt[4][1] is Target.BANKER_BONUS
    assert r.banker_total == 11 and len(r.banker) == 2  # the card does not count for the wager
    assert [str(c) for c in r.banker_bonus_cards] == ["5H", "6C", "9D"]
    assert r.outcome is Outcome.PLAYER


@pytest.mark.reg("681a.7(f)(2)")
def test_bonus_only_card_goes_to_the_player_first_when_the_banker_has_the_natural() -> None:
    """681a.7(f)(2): "one additional card shall be drawn face up to the Player's Hand or Banker's Hand if the
    Player's Hand or Banker's Hand has a total value of less than a soft or hard 17": when the Banker holds the
    natural, the Player's 11 gets the card (for its Bonus hand only) and the Banker's natural wins."""
    r = d("5H,AS,6C,KD,9D", bonus_in_play=True)
    assert [t for _, t in r.dealt][4] is Target.PLAYER_BONUS and r.cards_used == 5
    assert r.outcome is Outcome.BANKER


@pytest.mark.reg("681a.7(g)")
def test_each_hand_below_17_gets_one_card_player_first() -> None:
    """681a.7(g): "If neither the Player's Hand nor Banker's Hand is a natural, the dealer shall draw one
    additional card face up to the Player's or Banker's Hand if either the Player's Hand or Banker's Hand has a total
    value of less than a soft or hard 17". Read literally (docs/assumptions.md), each hand below 17 gets one card,
    the Player's first: Player 14 and Banker 14 both draw, to 16 and 22."""
    r = d("9S,10H,5D,4C,2S,8H")  # Player 14, Banker 14 -> each draws
    assert [t.value for _, t in r.dealt] == ["player", "banker", "player", "banker", "player", "banker"]
    assert (r.player_total, r.banker_total) == (16, 22)


@pytest.mark.reg("681a.7(g)")
def test_soft_17_and_hard_17_stand() -> None:
    """681a.7(g): a card is drawn only to a hand with "a total value of less than a soft or hard 17": the
    Player's soft 17 (A-6) and the Banker's hard 17 (9-8) both stand, and the round ends on four cards."""
    r = d("AS,9H,6D,8C")  # Player soft 17, Banker hard 17
    assert r.cards_used == 4 and r.outcome is Outcome.TIE


def test_first_only_draw_rule_option() -> None:
    """Not a test of 681a.7(g) (its reading, each hand below 17 draws, is ``draw_rule = "each"``, the
    presets' and the tests above): the other reading of its words, one card in all to the first hand
    below 17 (docs/assumptions.md), is a Rules Submission's ``draw_rule = "first-only"``, for a lab
    to rule on. With Player 14 and Banker 14 only the Player draws."""
    opts = dataclasses.replace(TwentyOneOptions(), draw_rule="first-only")
    r = deal(parse_cards("9S,10H,5D,4C,2S,8H"), G, opts)
    assert r.cards_used == 5 and len(r.banker) == 2


def test_naturals_option_off_means_21_just_stands() -> None:
    opts = dataclasses.replace(TwentyOneOptions(), naturals=False)
    r = deal(parse_cards("AS,5H,KD,6C,9D"), G, opts)
    assert not r.natural and r.cards_used == 5 and r.banker_total == 20 and r.outcome is Outcome.PLAYER


@pytest.mark.reg("681a.7(h)", "681a.7(i)(1)", "681a.7(j)(1)")
def test_one_hand_over_21_loses_to_a_hand_of_21_or_less() -> None:
    """681a.7(h): "the dealer shall compare the total value of the Player's Hand to the total value of the
    Banker's Hand"; 681a.7(i)(1): if the Player's Hand "Is 21 or less and the total value of the Banker's Hand is
    over 21, the dealer shall pay each player who wagered on the Player's Hand"; 681a.7(j)(1), the mirror: if the
    Banker's Hand "Is 21 or less and the total value of the Player's Hand is over 21, the dealer shall pay each
    player who wagered on the Banker's Hand". So 18 beats 22 and 12 beats 25."""
    assert twentyone_outcome(18, 22) is Outcome.PLAYER
    assert twentyone_outcome(25, 12) is Outcome.BANKER


@pytest.mark.reg("681a.7(i)(2)", "681a.7(i)(2)(i)", "681a.7(i)(2)(ii)", "681a.7(j)(2)", "681a.7(j)(2)(i)", "681a.7(j)(2)(ii)")
def test_both_21_or_less_the_higher_wins() -> None:
    """681a.7(i)(2) and (j)(2): both hands 21 or less, the higher total wins. (i)(2)(i): "the Player's Hand is
    higher in total value than the Banker's Hand, the dealer shall pay each player who wagered on the Player's Hand";
    (i)(2)(ii): "the Player's Hand is lower in total value than the Banker's Hand, the dealer shall collect each
    player's losing wager on the Player's Hand"; (j)(2)(i): "the Banker's Hand is higher in total value than the
    Player's Hand, the dealer shall pay each player who wagered on the Banker's Hand"; (j)(2)(ii): "the Banker's Hand
    is lower in total value than the Player's Hand, the dealer shall collect each player's losing wager on the
    Banker's Hand". So 20 beats 19 and 21 beats 17."""
    assert twentyone_outcome(20, 19) is Outcome.PLAYER
    assert twentyone_outcome(17, 21) is Outcome.BANKER


@pytest.mark.reg("681a.7(i)(3)", "681a.7(i)(3)(i)", "681a.7(i)(3)(ii)", "681a.7(j)(3)", "681a.7(j)(3)(i)", "681a.7(j)(3)(ii)")
def test_both_over_21_the_lower_total_wins() -> None:
    """681a.7(i)(3) and (j)(3): both hands over 21, the lower total wins. (i)(3)(i): "the Player's Hand is lower
    in total value than the Banker's Hand, the dealer shall pay each player who wagered on the Player's Hand";
    (i)(3)(ii): "the Player's Hand is higher in total value than the Banker's Hand, the dealer shall collect each
    player's losing wager on the Player's Hand"; (j)(3)(i): "the Banker's Hand is lower in total value than the
    Player's Hand, the dealer shall pay each player who wagered on the Banker's Hand"; (j)(3)(ii): "the Banker's Hand
    is higher in total value than the Player's Hand, the dealer shall collect each player's losing wager on the
    Banker's Hand". So 22 beats 25 and 23 beats 26, by totals and through the engine."""
    assert twentyone_outcome(22, 25) is Outcome.PLAYER
    assert twentyone_outcome(26, 23) is Outcome.BANKER
    r = d("KS,QH,6D,6C,KD,KC")  # Player 16 -> 26, Banker 16 -> 26: equal, a tie
    assert r.outcome is Outcome.TIE
    r = d("KS,QH,6D,5C,KD,9C")  # Player 26, Banker 24 -> Banker (lower) wins
    assert (r.player_total, r.banker_total, r.outcome) == (26, 24, Outcome.BANKER)


@pytest.mark.reg("681a.7(i)(4)", "681a.7(j)(4)", "681a.7(k)(1)(i)")
def test_equal_totals_tie() -> None:
    """681a.7(i)(4): if the Player's Hand "And the Banker's Hand are equal in total value, the dealer shall
    return the player's Player Wager"; (j)(4): likewise "the dealer shall return the player's Banker Wager";
    (k)(1)(i): if the hands "Have the same total value, the dealer shall pay the winning Tie Wager". Equal totals
    are a tie, 21 or less and over 21 alike."""
    assert twentyone_outcome(19, 19) is Outcome.TIE
    assert twentyone_outcome(23, 23) is Outcome.TIE


@pytest.mark.parametrize(
    "cards, rank",
    [("5S,5H", BonusRank.PAIR), ("5S,6H", BonusRank.NONE), ("5S,5H,9C", BonusRank.PAIR),
     ("2H,7H,KH", BonusRank.FLUSH), ("4S,5H,6C", BonusRank.STRAIGHT), ("QS,KH,AC", BonusRank.STRAIGHT),
     ("AS,2H,3C", BonusRank.STRAIGHT), ("KS,AH,2C", BonusRank.NONE), ("7S,7H,7C", BonusRank.THREE_OF_A_KIND),
     ("9D,10D,JD", BonusRank.STRAIGHT_FLUSH), ("8C,8C,8C", BonusRank.SUITED_THREE_OF_A_KIND),
     ("8C,8C,2C", BonusRank.FLUSH)],
)
@pytest.mark.reg("681a.7(k)(2)")
def test_bonus_ranking(cards: str, rank: BonusRank) -> None:
    """681a.7(k)(2): the Bonus Wager on the Player's Hand wins if the hand "Contains a pair or better as
    described in" 681a.3(e) and loses if it "Does not contain a pair or better". 681a.3(e) was not available: pair or
    better is read as the poker ranking of docs/assumptions.md (pair < flush < straight < three of a kind < straight
    flush < suited three of a kind); two cards can only pair."""
    assert t21.bonus_rank(parse_cards(cards)) is rank


@pytest.mark.reg("681a.7(k)(2)(i)", "681a.7(k)(3)(i)")
def test_bonus_hand_includes_the_bonus_only_card() -> None:
    """681a.7(k)(2)(i) and (k)(3)(i): a Bonus Wager on either hand wins if the hand "Contains a pair or
    better"; by 681a.7(f)(2) the Bonus-only card "shall count only for purposes of the Bonus Wager", so it is part of
    the hand ranked: the Banker's 5-5 and its Bonus-only 5 are three of a kind, the Player's A-K is no pair."""
    r = d("AS,5H,KD,5C,5D", bonus_in_play=True)  # Banker 5,5 + bonus-only 5: three of a kind
    assert r.banker_bonus_rank is BonusRank.THREE_OF_A_KIND
    assert r.player_bonus_rank is BonusRank.NONE


@given(st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6), st.booleans())
def test_incremental_equals_batch(cards: list, bonus: bool) -> None:
    batch = deal(cards, G, bonus_in_play=bonus)
    engine = RoundEngine(G, bonus_in_play=bonus)
    for c in cards[: batch.cards_used]:
        engine.feed(c)
    assert engine.complete and engine.result() == batch
    assert 4 <= batch.cards_used <= 6
