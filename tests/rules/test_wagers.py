"""Wagers and settlement: every kind, commission rounding, order, House Money, void rounds."""
from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.rules.cards import ALL_CARDS, parse_cards
from controller.rules.engine import RoundFacts, deal
from controller.rules.errors import WagerError
from controller.rules.model import BonusRank, Game, Outcome, Payout, WagerKind as K
from controller.rules.submission import load_preset
from controller.rules.wagers import (
    Result, Wager, add_house_money, house_money_to_add, net_multiplier, settle, settle_house_money, void,
)

MINI = load_preset("minibaccarat")
MIDI = load_preset("midibaccarat")
EZ = load_preset("ez-baccarat")
T21 = load_preset("21-baccarat")

BANKER_WINS = parse_cards("2S,3H,4D,4C")  # Player 6, Banker 7, both stand
PLAYER_WINS = parse_cards("3S,2H,4D,4C")  # Player 7, Banker 6
TIE = parse_cards("3S,3H,4D,4C")          # 7 - 7


def one(round_cards, kind, amount=100, sub=MINI, seat=1, **kw):
    r = deal(round_cards, sub.game, getattr(sub, "twentyone", None), **kw)
    [s] = settle(r, [Wager(seat, kind, amount)], sub)
    return s


def test_player_wins_even_money_and_banker_loses() -> None:
    s = one(PLAYER_WINS, K.PLAYER)
    assert (s.result, s.win, s.net, s.returned) == (Result.WIN, 100, 100, 200)
    s = one(PLAYER_WINS, K.BANKER)
    assert (s.result, s.net, s.returned) == (Result.LOSE, -100, 0)


def test_banker_pays_less_five_percent_commission() -> None:
    s = one(BANKER_WINS, K.BANKER, 100)
    assert (s.result, s.win, s.commission) == (Result.WIN, 95, 5)


@pytest.mark.parametrize("mode, win", [("down", 28), ("up", 29), ("half-up", 29), ("half-even", 28)])
def test_commission_rounding_is_explicit(mode: str, win: int) -> None:
    # 30 units at 1:1 less 5% = 28.5 units: the rounding rule decides.
    sub = dataclasses.replace(MINI, commission_rounding=mode)
    s = one(BANKER_WINS, K.BANKER, 30, sub)
    assert s.win == win and s.win + s.commission == 30


@pytest.mark.parametrize("mode", ["down", "up", "half-up", "half-even"])
def test_the_commission_rounding_is_not_a_payout_s_rounding(mode: str) -> None:
    """A gaming-lab review: with the Player paid 3:2 and the Tie 17:2 and `rounding = "up"`, a 1-unit
    Player win was paid 2 and a Tie 9: the commission's rounding decided payouts that carry no
    commission, and the house paid a minor unit it did not owe. Those are rounded down."""
    sub = dataclasses.replace(MINI, commission_rounding=mode,
                              paytable={**MINI.paytable, K.PLAYER: Payout(3, 2), K.TIE: Payout(17, 2)})
    assert one(PLAYER_WINS, K.PLAYER, 1, sub).win == 1 and one(PLAYER_WINS, K.PLAYER, 3, sub).win == 4
    assert one(TIE, K.TIE, 1, sub).win == 8
    assert one(BANKER_WINS, K.BANKER, 30, sub).win == {"down": 28, "up": 29, "half-up": 29, "half-even": 28}[mode]


@pytest.mark.parametrize("mode", ["down", "up", "half-up", "half-even"])
@pytest.mark.parametrize("odds", [Payout(3, 2), Payout(19, 20), Payout(7, 5), Payout(1, 1), Payout(2, 1)])
def test_a_commissioned_win_is_never_more_than_the_same_win_without_commission(mode: str, odds: Payout) -> None:
    """A gaming lab's review: the Banker at 3:2 with 5 % commission and `rounding = "up"` paid 2 on
    1 (the net 1.425 rounded up) where the same win without commission pays 1 (1.5 rounded down,
    as every payout): the commission paid the player a minor unit, recorded as none. The win never
    passes the gross, and win and commission add up to it, for every amount."""
    with_commission = dataclasses.replace(MINI, commission_rounding=mode, paytable={**MINI.paytable, K.BANKER: odds})
    without = dataclasses.replace(with_commission, commission=Decimal(0))
    for amount in range(1, 400):
        s = one(BANKER_WINS, K.BANKER, amount, with_commission)
        gross = one(BANKER_WINS, K.BANKER, amount, without).win
        assert gross == amount * odds.ratio.numerator // odds.ratio.denominator
        assert s.win <= gross and s.win + s.commission == gross and s.commission >= 0, (amount, s)


@pytest.mark.parametrize("mode", ["down", "up", "half-up", "half-even"])
def test_a_settlement_is_exact_at_any_size(mode: str) -> None:
    """A money review: rounding went through a Decimal quotient of 28 digits, and 10,000 x 10**12
    + 1 on the Banker at 597983:483239 less 0.179849 was paid 10148976637853584 where the exact
    net, 10148976637853583.99999999999..., rounds down to ...583: one minor unit more, and one less
    commission (here one seat's wagers, summed as a seat's wagers of one kind are). Each rounding
    is checked against the exact fraction, in integers."""
    from fractions import Fraction

    odds = Payout(597983, 483239)
    sub = dataclasses.replace(MINI, commission_rounding=mode, commission=Decimal("0.179849"),
                              paytable={**MINI.paytable, K.BANKER: odds})
    amount = 9_999_552_988_268_903  # its exact net is a whole number less 1/483239000000: 10148486201498150.99999...
    exact = amount * odds.ratio * (1 - Fraction("0.179849"))
    floor, rest = divmod(exact.numerator, exact.denominator)
    expected = {"down": floor, "up": floor + 1, "half-up": floor + (2 * rest >= exact.denominator),
                "half-even": floor + (2 * rest > exact.denominator or (2 * rest == exact.denominator and floor % 2))}
    s = one(BANKER_WINS, K.BANKER, amount, sub)
    assert s.win == expected[mode] and s.win + s.commission == amount * odds.ratio.numerator // odds.ratio.denominator


def test_ties_push_player_and_banker_and_pay_the_tie_8_to_1() -> None:
    assert one(TIE, K.PLAYER).result is Result.PUSH
    assert one(TIE, K.BANKER).result is Result.PUSH
    assert one(TIE, K.TIE).win == 800
    assert one(PLAYER_WINS, K.TIE).result is Result.LOSE


def test_pairs_pay_11_to_1() -> None:
    cards = parse_cards("5S,2H,5D,4C")  # Player 5-5 pair (0, draws)
    r = deal(cards + parse_cards("KD,KC"))
    assert r.player_pair and not r.banker_pair
    out = {s.kind: s for s in settle(r, [Wager(1, K.PLAYER_PAIR, 10), Wager(1, K.BANKER_PAIR, 10)], MINI)}
    assert out[K.PLAYER_PAIR].win == 110 and out[K.BANKER_PAIR].result is Result.LOSE


def test_ten_and_king_are_not_a_pair() -> None:
    assert not deal(parse_cards("10S,2H,KD,4C,KS,KC")).player_pair


def test_ez_banker_pushes_on_winning_three_card_seven_and_dragon_pays() -> None:
    cards = parse_cards("3S,AH,3D,AC,5S")  # Player 6, Banker 2 draws 5 -> 7 on three cards
    r = deal(cards, Game.EZ_BACCARAT)
    assert r.dragon7
    out = {s.kind: s for s in settle(r, [Wager(2, K.BANKER, 100), Wager(2, K.DRAGON7, 10), Wager(3, K.PANDA8, 10)], EZ)}
    assert out[K.BANKER].result is Result.PUSH
    assert out[K.DRAGON7].win == 400
    assert out[K.PANDA8].result is Result.LOSE
    # Any other Banker win pays 1:1 with no commission (627c.2).
    assert one(BANKER_WINS, K.BANKER, 100, EZ).win == 100


@pytest.mark.reg("681a.7(h)")
def test_settlement_order_is_counterclockwise_from_the_dealers_right_main_wagers_first() -> None:
    """681a.7(h): "Starting with the player farthest to the dealer's right and continuing around the table in a
    counterclockwise direction the dealer shall then settle all Player and Banker Wagers"; the Tie and Bonus Wagers
    come after (681a.7(k)). The order is the Rules Submission's seat order, whatever the seat numbers, in 21 Baccarat
    as in the Punto Banco games."""
    sub = dataclasses.replace(MINI, seats=(7, 6, 5, 4, 3, 2, 1))  # a table numbered the other way
    r = deal(PLAYER_WINS)
    wagers = [Wager(1, K.TIE, 5), Wager(3, K.PLAYER, 10), Wager(7, K.BANKER, 10), Wager(5, K.TIE, 5), Wager(1, K.PLAYER, 10)]
    order = [(s.seat, s.kind) for s in settle(r, wagers, sub)]
    assert order == [(7, K.BANKER), (3, K.PLAYER), (1, K.PLAYER), (5, K.TIE), (1, K.TIE)]
    t21 = dataclasses.replace(T21, seats=(7, 6, 5, 4, 3, 2, 1))
    r21 = deal(parse_cards("KS,9H,9D,8C"), Game.TWENTYONE)  # 21 Baccarat: Player 19, Banker 17
    assert [(s.seat, s.kind) for s in settle(r21, wagers, t21)] == order


@pytest.mark.reg("681a.7(i)(1)", "681a.7(j)(1)", "681a.7(k)(1)(ii)")
def test_21_baccarat_settlement_over_21() -> None:
    """681a.7(j)(1): if the Banker's Hand "Is 21 or less and the total value of the Player's Hand is over 21,
    the dealer shall pay each player who wagered on the Banker's Hand"; 681a.7(i)(1), the mirror: if the Player's Hand
    "Is 21 or less and the total value of the Banker's Hand is over 21, the dealer shall pay each player who wagered on
    the Player's Hand"; 681a.7(k)(1)(ii): if the hands "Do not have the same total value, the dealer shall collect the
    losing Tie Wager"."""
    cards = parse_cards("KS,9H,6D,8C,KD")  # Player 16 draws K -> 26; Banker 17 stands
    s = {x.kind: x for x in settle(deal(cards, Game.TWENTYONE), [Wager(1, K.PLAYER, 10), Wager(2, K.BANKER, 10), Wager(3, K.TIE, 10)], T21)}
    assert s[K.PLAYER].result is Result.LOSE and s[K.BANKER].result is Result.WIN and s[K.TIE].result is Result.LOSE
    cards = parse_cards("9H,KS,8C,6D,KD")  # the mirror: Player 17 stands; Banker 16 draws K -> 26
    wagers = [Wager(1, K.PLAYER, 10), Wager(2, K.BANKER, 10), Wager(3, K.TIE, 10)]
    s = {x.kind: x for x in settle(deal(cards, Game.TWENTYONE), wagers, T21)}
    assert s[K.PLAYER].result is Result.WIN and s[K.BANKER].result is Result.LOSE and s[K.TIE].result is Result.LOSE


@pytest.mark.reg("681a.7(i)(4)", "681a.7(j)(4)", "681a.7(k)(1)", "681a.7(k)(1)(i)")
def test_21_baccarat_equal_totals_return_player_and_banker_and_pay_tie() -> None:
    """681a.7(i)(4): if the Player's Hand "And the Banker's Hand are equal in total value, the dealer shall
    return the player's Player Wager"; (j)(4): likewise "the dealer shall return the player's Banker Wager";
    681a.7(k)(1)(i): for the Tie Wager, if the hands "Have the same total value, the dealer shall pay the winning Tie
    Wager" (at the Rules Submission's Tie payout)."""
    r = deal(parse_cards("KS,9H,9D,KC"), Game.TWENTYONE)
    s = {x.kind: x for x in settle(r, [Wager(1, K.PLAYER, 10), Wager(2, K.BANKER, 10), Wager(3, K.TIE, 10)], T21)}
    assert s[K.PLAYER].result is Result.PUSH and s[K.BANKER].result is Result.PUSH
    assert s[K.PLAYER].returned == s[K.BANKER].returned == 10
    assert s[K.TIE].win == 10 * T21.payout(K.TIE).win


@pytest.mark.reg("681a.7(k)(2)", "681a.7(k)(2)(i)", "681a.7(k)(2)(ii)", "681a.7(k)(3)", "681a.7(k)(3)(i)", "681a.7(k)(3)(ii)")
def test_21_baccarat_bonus_pays_by_rank_and_loses_without_pair_or_better() -> None:
    """681a.7(k)(2) and (k)(3): for the Bonus Wager on the Player's Hand (on the Banker's Hand), if that hand
    "Contains a pair or better as described in" 681a.3(e), "the dealer shall pay the winning Bonus Wager" (at the
    rank's payout, 681a.8(c)), and if it "Does not contain a pair or better as described in" 681a.3(e), "the dealer
    shall collect the losing Bonus Wager". Checked both ways round: a Player pair against a Banker without one, then
    a Banker pair against a Player without one."""
    r = deal(parse_cards("5S,9H,5D,KC,7C"), Game.TWENTYONE, bonus_in_play=True)
    assert r.player_bonus_rank is BonusRank.PAIR and r.banker_bonus_rank is BonusRank.NONE
    s = {x.kind: x for x in settle(r, [Wager(1, K.PLAYER_BONUS, 10), Wager(2, K.BANKER_BONUS, 10)], T21)}
    assert s[K.PLAYER_BONUS].win == 10 * T21.bonus_paytable[BonusRank.PAIR].win // T21.bonus_paytable[BonusRank.PAIR].stake
    assert s[K.BANKER_BONUS].result is Result.LOSE
    r = deal(parse_cards("9H,5S,KC,5D,7C"), Game.TWENTYONE, bonus_in_play=True)  # the mirror: Banker 5-5 draws 7
    assert r.player_bonus_rank is BonusRank.NONE and r.banker_bonus_rank is BonusRank.PAIR
    s = {x.kind: x for x in settle(r, [Wager(1, K.PLAYER_BONUS, 10), Wager(2, K.BANKER_BONUS, 10)], T21)}
    pair = T21.bonus_paytable[BonusRank.PAIR]
    assert s[K.BANKER_BONUS].win == 10 * pair.win // pair.stake
    assert s[K.PLAYER_BONUS].result is Result.LOSE


def test_bonus_wager_on_a_round_dealt_without_the_bonus_is_refused() -> None:
    r = deal(parse_cards("5S,9H,5D,KC,7C"), Game.TWENTYONE)
    with pytest.raises(WagerError, match="without the Bonus"):
        settle(r, [Wager(1, K.PLAYER_BONUS, 10)], T21)


@pytest.mark.reg("629a.8(c)(3)", "629a.8(c)(3)(i)")
def test_house_money_is_settled_on_the_first_four_cards() -> None:
    """629a.8(c)(3): "Prior to dealing a third card to the Player's or Banker's Hand, the dealer shall settle all
    House Money Wagers"; 629a.8(c)(3)(i): "after the initial two cards of the Player's Hand and Banker's Hand have
    been turned face up on the layout", "the dealer shall collect all losing House Money wagers and pay all winning
    wagers" (629a.12(h) was not available: the paytable of docs/assumptions.md). The first four cards alone settle
    it: a Player pair pays 3:1, both pairs 15:1, no pair loses."""
    first_four = parse_cards("5S,KH,5D,2C")  # Player pair only
    [s] = settle_house_money(first_four, [Wager(2, K.HOUSE_MONEY, 10), Wager(2, K.PLAYER, 10)], MIDI)
    assert s.kind is K.HOUSE_MONEY and s.win == 30
    [s] = settle_house_money(parse_cards("5S,KH,5D,KC"), [Wager(2, K.HOUSE_MONEY, 10)], MIDI)
    assert s.win == 150
    [s] = settle_house_money(parse_cards("5S,KH,6D,QC"), [Wager(2, K.HOUSE_MONEY, 10)], MIDI)
    assert s.result is Result.LOSE


@pytest.mark.reg("629a.8(c)(3)(i)(A)", "629a.8(c)(3)(i)(B)")
def test_house_money_payout_added_to_the_original_wager_all_or_the_portion() -> None:
    """629a.8(c)(3)(i)(A): "All of the winning House Money payout or, if specified in the ...
    Rules Submission ..., only a specified portion of the winning House Money payout shall be
    added": that amount, neither more nor less. 629a.8(c)(3)(i)(B): "The dealer shall either hand the entire
    winning House Money payout to the player or place all or a portion thereof, as authorized by the certificate
    holder", on the player's wager: only the authorized amount is placed there."""
    first_four = parse_cards("5S,KH,5D,2C")
    wagers = [Wager(2, K.PLAYER, 10), Wager(2, K.HOUSE_MONEY, 10)]
    [hm] = settle_house_money(first_four, wagers, MIDI)
    assert house_money_to_add(hm, MIDI) == 30
    grown = add_house_money(wagers, hm, K.PLAYER, 30, MIDI)
    assert grown[0] == Wager(2, K.PLAYER, 40)
    for amount in (1, 29, 31):
        with pytest.raises(WagerError, match=f"all of the House Money payout is placed on the wager .*: 0\\.30 \\(amount=30\\), not {amount / 100:.2f}"):
            add_house_money(wagers, hm, K.PLAYER, amount, MIDI)
    half = dataclasses.replace(MIDI, house_money=dataclasses.replace(MIDI.house_money, portion=Decimal("0.5")))
    assert house_money_to_add(hm, half) == 15
    assert add_house_money(wagers, hm, K.PLAYER, 15, half)[0] == Wager(2, K.PLAYER, 25)
    for amount in (14, 16, 30):
        with pytest.raises(WagerError, match=f"the Rules Submission's portion .*: 0\\.15 \\(amount=15\\), not {amount / 100:.2f}"):
            add_house_money(wagers, hm, K.PLAYER, amount, half)
    with pytest.raises(WagerError, match="no original banker wager"):
        add_house_money(wagers, hm, K.BANKER, 30, MIDI)
    # The player's own wager, never another seat's (a mutation review: one that took the first
    # Player wager of any seat passed): seat 1's stays as it was, and a seat with none is refused.
    others = [Wager(1, K.PLAYER, 50), *wagers]
    assert add_house_money(others, hm, K.PLAYER, 30, MIDI) == [Wager(1, K.PLAYER, 50), Wager(2, K.PLAYER, 40),
                                                                 Wager(2, K.HOUSE_MONEY, 10)]
    with pytest.raises(WagerError, match="seat 2 has no original player wager"):
        add_house_money([Wager(1, K.PLAYER, 50), Wager(2, K.HOUSE_MONEY, 10)], hm, K.PLAYER, 30, MIDI)
    # The added payout is then settled with the wager on the round's outcome.
    r = deal(first_four + parse_cards("KD,KS"))  # Player 0 draws K -> 0; Banker 2 draws -> 2: Banker
    [main] = [s for s in settle(r, grown, MIDI) if s.kind is K.PLAYER]
    assert main.amount == 40 and main.result is Result.LOSE


@pytest.mark.reg("627a.13(e)")
def test_void_round_returns_every_wager() -> None:
    """627a.13(e): a round the shoe has too few cards to complete "shall be void and all wagers shall be
    returned": every wager of a void round is a push that returns its whole amount."""
    out = void([Wager(1, K.PLAYER, 10), Wager(2, K.TIE, 5)])
    assert all(s.result is Result.PUSH and s.returned == s.amount for s in out)


@pytest.mark.parametrize(
    "wager, sub, message",
    [(Wager(9, K.PLAYER, 10), MINI, "seat 9 is not at this table"),
     (Wager(1, K.DRAGON7, 10), MINI, "not offered"),
     (Wager(1, K.PLAYER_BONUS, 10), MINI, "not offered")],
)
def test_bad_wagers_are_refused(wager: Wager, sub, message: str) -> None:
    with pytest.raises(WagerError, match=message):
        settle(deal(PLAYER_WINS), [wager], sub)


@pytest.mark.parametrize("amount", [0, -5, 1.5, True, "10"])
def test_amounts_are_positive_whole_minor_units(amount: object) -> None:
    with pytest.raises(WagerError):
        Wager(1, K.PLAYER, amount)  # type: ignore[arg-type]


def test_net_multiplier_for_each_kind() -> None:
    f = RoundFacts(Outcome.BANKER, player_pair=True, dragon7=True)
    assert net_multiplier(K.BANKER, f, MINI) == Decimal("0.95")
    assert net_multiplier(K.BANKER, f, EZ) == 0
    assert net_multiplier(K.PLAYER, f, MINI) == -1
    assert net_multiplier(K.PLAYER_PAIR, f, MINI) == 11
    assert net_multiplier(K.DRAGON7, f, EZ) == 40


kinds_mini = st.sampled_from([K.PLAYER, K.BANKER, K.TIE, K.PLAYER_PAIR, K.BANKER_PAIR])


@given(
    st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6),
    st.lists(st.tuples(st.sampled_from(MINI.seats), kinds_mini, st.integers(1, 10**9)), min_size=1, max_size=20),
)
def test_settlement_conserves_money(cards: list, raw: list) -> None:
    wagers = [Wager(s, k, a) for s, k, a in raw]
    out = settle(deal(cards), wagers, MINI)
    assert sorted((w.seat, w.kind, w.amount) for w in wagers) == sorted((s.seat, s.kind, s.amount) for s in out)
    staked = sum(w.amount for w in wagers)
    returned = sum(s.returned for s in out)
    house = sum(s.amount - s.returned for s in out)
    assert staked - returned == house  # what the house keeps is exactly what players did not get back
    for s in out:
        assert isinstance(s.win, int) and isinstance(s.commission, int)
        assert s.returned >= 0
        if s.kind is K.BANKER and s.result is Result.WIN:
            assert s.win + s.commission == s.amount  # 1:1 gross, split between player and house


def test_a_seats_banker_wagers_are_paid_as_one_wager_of_their_total() -> None:
    """Two Banker wagers of 1.10 at one seat: 2.20 at 1:1 less 5% (rounded down, to the house)
    pays 2.09. Settled one by one they paid 1.04 each (1.045 rounded down twice): a seat's pay
    would depend on how it stacked its chips. Now they are paid as the 2.20 they are together,
    each still settled once, its share of the win and the commission adding up to its gross."""
    banker_wins = RoundFacts(Outcome.BANKER)
    [alone] = settle(banker_wins, [Wager(3, K.BANKER, 220)], MINI)
    assert (alone.win, alone.commission) == (209, 11)
    out = settle(banker_wins, [Wager(3, K.BANKER, 110), Wager(3, K.BANKER, 110)], MINI)
    # 11 of commission shared: 5.5 each, the unit left over to the earlier wager.
    assert [(s.amount, s.win, s.commission) for s in out] == [(110, 104, 6), (110, 105, 5)]
    assert sum(s.win for s in out) == 209 and all(s.win + s.commission == s.amount for s in out)
    # Another seat's wager of the same kind is its own: 1.10 alone pays 1.04.
    out = settle(banker_wins, [Wager(3, K.BANKER, 110), Wager(5, K.BANKER, 110)], MINI)
    assert sorted((s.seat, s.win, s.commission) for s in out) == [(3, 104, 6), (5, 104, 6)]


@given(
    st.sampled_from([RoundFacts(Outcome.BANKER), RoundFacts(Outcome.PLAYER), RoundFacts(Outcome.TIE),
                     RoundFacts(Outcome.BANKER, dragon7=True), RoundFacts(Outcome.PLAYER, panda8=True)]),
    st.sampled_from([K.PLAYER, K.BANKER, K.TIE, K.DRAGON7, K.PANDA8]),
    st.lists(st.integers(1, 10**7), min_size=1, max_size=6),
    st.sampled_from(["down", "up", "half-up", "half-even"]),
)
def test_a_seats_same_kind_wagers_settle_as_their_total(facts: RoundFacts, kind: K, amounts: list[int],
                                                        rounding: str) -> None:
    """However a seat splits an amount among wagers of one kind, it is paid what one wager of the
    total is paid (EZ Baccarat's Dragon 7 and Panda 8; Minibaccarat's commissioned Banker), every
    wager is settled exactly once, and each wager's share of the win is its proportion of it,
    give or take less than two minor units (one from sharing the gross, one the commission)."""
    sub = dataclasses.replace(EZ if kind in (K.DRAGON7, K.PANDA8) else MINI, commission_rounding=rounding)
    total = sum(amounts)
    [alone] = settle(facts, [Wager(2, kind, total)], sub)
    out = settle(facts, [Wager(2, kind, a) for a in amounts], sub)
    assert [s.amount for s in out] == amounts
    assert {s.result for s in out} == {alone.result}
    assert sum(s.win for s in out) == alone.win and sum(s.commission for s in out) == alone.commission
    for s in out:
        assert s.win >= 0 and s.commission >= 0
        assert abs(s.win * total - alone.win * s.amount) < 2 * total


def test_a_wager_of_no_amount_is_refused_in_the_wagers_own_words() -> None:
    """The kind was shown as Python names it (``a WagerKind.TIE wager``)."""
    with pytest.raises(WagerError) as refused:
        Wager(seat=1, kind=K.TIE, amount=0)
    assert str(refused.value) == "seat 1: a tie wager must be a positive whole number of minor units, not 0"


def test_settle_puts_house_money_first_and_refuses_a_round_of_another_game() -> None:
    """``settle``'s contract (a mutation review found both unchecked): House Money first, "settled
    before any third card" (629a.8(c)(3)), then Player and Banker, then the rest, each group from
    the first seat; and a round dealt under another game than the table's is refused, not settled
    by the wrong table of payouts."""
    r = deal(parse_cards("5S,KH,5D,2C,KD,KS"))  # Player 0 draws K -> 0; Banker 2 draws -> 2: Banker
    wagers = [Wager(1, K.TIE, 10), Wager(3, K.PLAYER, 10), Wager(2, K.HOUSE_MONEY, 10), Wager(1, K.BANKER, 10)]
    assert [(s.seat, s.kind) for s in settle(r, wagers, MIDI)] == [
        (2, K.HOUSE_MONEY), (1, K.BANKER), (3, K.PLAYER), (1, K.TIE)]
    with pytest.raises(WagerError, match="the round was dealt as punto-banco but the table plays 21-baccarat"):
        settle(r, [Wager(1, K.PLAYER, 10)], T21)


@pytest.mark.reg("681a.7(i)(2)", "681a.7(i)(2)(i)", "681a.7(i)(2)(ii)", "681a.7(i)(3)", "681a.7(i)(3)(i)",
                 "681a.7(i)(3)(ii)", "681a.7(j)(2)", "681a.7(j)(2)(i)", "681a.7(j)(2)(ii)", "681a.7(j)(3)",
                 "681a.7(j)(3)(i)", "681a.7(j)(3)(ii)")
@pytest.mark.parametrize("cards, totals, player_wins", [
    ("KS,9H,KD,KC", (20, 19), True), ("9H,KS,KC,KD", (19, 20), False),                  # both 21 or less
    ("6H,KS,KC,6D,8S,KD", (24, 26), True), ("KS,6H,6D,KC,KD,8S", (26, 24), False),      # both over 21
])
def test_21_baccarat_settles_both_hands_within_or_both_over_21(cards: str, totals: tuple, player_wins: bool) -> None:
    """681a.7(i)(2): if the Player's Hand "And the Banker's Hand are 21 or less": (i) "And the Player's
    Hand is higher in total value than the Banker's Hand, the dealer shall pay each player who wagered
    on the Player's Hand in accordance with § 681a.8(a)"; (ii) "And the Player's Hand is lower in total
    value than the Banker's Hand, the dealer shall collect each player's losing wager on the Player's
    Hand". (i)(3): "And the Banker's Hand are over 21": (i) "And the Player's Hand is lower in total
    value than the Banker's Hand, the dealer shall pay each player who wagered on the Player's Hand";
    (ii) "And the Player's Hand is higher in total value than the Banker's Hand, the dealer shall
    collect each player's losing wager". 681a.7(j)(2)-(3) the same for the Banker's Hand: (j)(2)(i)
    "And the Banker's Hand is higher in total value than the Player's Hand, the dealer shall pay each
    player who wagered on the Banker's Hand", (j)(2)(ii) "the dealer shall collect each player's losing
    wager on the Banker's Hand", (j)(3)(i) "And the Banker's Hand is lower in total value than the
    Player's Hand, the dealer shall pay", (j)(3)(ii) "And the Banker's Hand is higher in total value
    than the Player's Hand, the dealer shall collect". A review: these were tested as the outcome
    only, never as what each wager is paid."""
    r = deal(parse_cards(cards), Game.TWENTYONE)
    assert (r.to_json()["player"]["total"], r.to_json()["banker"]["total"]) == totals
    s = {x.kind: x for x in settle(r, [Wager(1, K.PLAYER, 10), Wager(2, K.BANKER, 10), Wager(3, K.TIE, 10)], T21)}
    winner, loser = (K.PLAYER, K.BANKER) if player_wins else (K.BANKER, K.PLAYER)
    assert s[winner].result is Result.WIN and s[winner].win == 10 * T21.payout(winner).win
    assert s[loser].result is Result.LOSE and s[loser].win == 0 and s[loser].returned == 0
    assert s[K.TIE].result is Result.LOSE  # 681a.7(k)(1)(ii): not the same total
