"""The regulated procedure where the table once deviated from the text (issue 11, "Deviations"),
clause by clause, through the table core's inputs and outputs with scripted devices (bench.py)."""
from __future__ import annotations

import dataclasses
import random
from collections import Counter
from decimal import Decimal

import pytest
from bench import Bench, stack_with

from controller.roles import Role
from controller.rules.cards import parse_cards
from controller.rules.shoe import prepare
from controller.rules.submission import load_preset
from controller.simulation import shuffle_and_prepare
from firmware_bridge.protocol import messages as m

P_WINS = parse_cards("3S,2H,4D,4C")  # Player 7, Banker 6: both stand, four cards


def with_options(preset: str, **options) -> object:
    return dataclasses.replace(load_preset(preset), **options)


def resolutions(b: Bench) -> Counter:
    """How many times each (seat, kind) was settled, pushed or returned."""
    return Counter((p["seat"], p["kind"]) for r in b.records if r.kind in ("settlement", "wager_returned")
                   for p in [r.payload])


# -- 1. 681a.7(c): a new dealer's burn ----------------------------------------------------------------
@pytest.mark.reg("681a.7(c)")
@pytest.mark.parametrize("preset, round_state", [("minibaccarat", "dealing"), ("midibaccarat", "squeeze")])
def test_a_new_dealer_signs_in_between_rounds_and_burns_before_dealing_any_card(preset: str, round_state: str) -> None:
    """681a.7(c): "Each new dealer who comes to the table shall also remove one card and place it
    in the discard rack before dealing any cards to the players." A sign-in while a round is dealt
    is refused (the dealer who began the round completes it); between rounds the new dealer burns
    one card before the next round's first card."""
    b = Bench(preset)
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    b.draw()
    while b.core.state != round_state:
        b.draw()
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    assert b.of("refused")[-1]["input"] == "dealer_sign_in" and "between rounds" in b.of("refused")[-1]["reason"]
    assert b.core.dealer is None and not b.of("dealer")
    b.auto_deal = True
    if b.core.state == "dealing":
        b.draw()
    while b.core.state != "betting":
        b.op("reveal", Role.DEALER) if b.core.state == "squeeze" else b.op("continue", Role.DEALER)
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    since = len(b.records)
    b.play_round([(1, "banker", 100)])
    kinds = b.kinds(since)
    assert b.of("burn")[-1]["dealer"] == "D2"
    assert kinds.index("round_start") < kinds.index("card")
    burn_index = max(i for i, r in enumerate(b.records) if r.kind == "burn")
    first_card = next(i for i, r in enumerate(b.records) if r.kind == "card" and i > burn_index)
    assert burn_index < first_card


@pytest.mark.reg("681a.7(c)", "627a.13(c)(1)")
def test_a_new_dealers_burn_is_still_asked_for_after_a_card_owed_to_the_discard_rack() -> None:
    """681a.7(c): the new dealer removes one card "before dealing any cards to the players";
    627a.13(c)(1): the disclosed card goes to the discard rack with "one additional card, drawn
    face down". A new dealer who signs in while that card is owed draws it first, then burns."""
    sub = with_options("minibaccarat", unauthorized_third_card="discard")
    b = Bench(submission=sub, stack=stack_with(P_WINS + parse_cards("9S,AS,2S,3S,4S,5S,6S")))
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    b.auto_deal = False
    b.draw(face_up=True)  # an unauthorised Player third card, disclosed: (c)(1)
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    b.auto_deal = True
    b.draw()  # the card owed to the discard rack
    assert [d["reason"] for d in b.of("discard")] == ["627a.13(c)(1)", "627a.13(c)(1)"]
    assert b.of("burn")[-1]["dealer"] == "D2" and b.core.state == "betting"


@pytest.mark.reg("681a.7(c)")
def test_a_new_dealer_cannot_sign_in_while_a_fault_holds_the_table() -> None:
    """681a.7(c): "Each new dealer who comes to the table shall also remove one card ... before
    dealing any cards to the players." While a fault holds the table no burn can be dealt, so the
    sign-in waits until the fault is cleared (it is refused, and changes nothing)."""
    b = Bench()
    b.open_and_cut()
    b.event("shoe", m.Door(True))
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    assert b.of("refused")[-1]["input"] == "dealer_sign_in" and b.core.dealer is None
    b.event("shoe", m.Door(False))
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    assert b.of("burn")[-1]["dealer"] == "D2" and b.core.state == "betting"


# -- 2. 629a.8(c)(3)(i)(A): House Money added once ------------------------------------------------------
def house_money_round(portion: str = "1") -> Bench:
    """A Midibaccarat round at House Money: seat 2 won 300 on a House Money wager of 100."""
    sub = dataclasses.replace(load_preset("midibaccarat"),
                              house_money=dataclasses.replace(load_preset("midibaccarat").house_money,
                                                              portion=Decimal(portion)))
    b = Bench(submission=sub, stack=stack_with(parse_cards("5S,KH,5D,2C,KD,KC"), decks=6))
    b.open_and_cut(seats=(1, 2, 3))
    b.play_round([(2, "player", 100), (2, "banker", 50), (2, "house_money", 100)])
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    assert b.core.state == "house_money"
    return b


@pytest.mark.reg("629a.8(c)(3)(i)(A)")
@pytest.mark.parametrize("portion, adds, accepted", [
    ("1", [300, 300, 300], [300]),
    ("1", [100, 200, 300], [300]),
    ("0.5", [100, 50, 150, 150], [150]),
])
def test_a_house_money_payout_is_added_all_or_the_portion_once(portion: str, adds: list[int], accepted: list[int]) -> None:
    """629a.8(c)(3)(i)(A): "All of the winning House Money payout or, if specified in the
    certificate holder's Rules Submission ..., only a specified portion of the winning House Money
    payout shall be added to the area designated for the placement of the player's original
    wager." That amount, once: a part of it, or a second placement, is refused and changes nothing."""
    b = house_money_round(portion)
    for amount in adds:
        b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=amount)
    assert [a["amount"] for a in b.of("house_money_added")] == accepted
    assert len(b.of("refused")) == len(adds) - len(accepted)
    b.op("continue", Role.DEALER)
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    player = next(s for s in b.of("settlement") if s["kind"] == "player")
    assert player["amount"] == 100 + sum(accepted)


@pytest.mark.reg("629a.8(c)(3)(i)(A)", "629a.8(c)(3)(i)(B)")
def test_a_house_money_payout_goes_onto_one_original_wager() -> None:
    """629a.8(c)(3)(i)(A): the payout "shall be added to the area designated for the placement of
    the player's original wager on the Player's or Banker's Hand"; (B): the dealer shall "place all
    or a portion thereof, as authorized by the certificate holder, on the area designated for the
    placement of the player's wager": one wager, so the payout is not split between the player's
    Player and Banker wagers."""
    b = house_money_round("1")
    b.op("house_money_add", Role.DEALER, seat=2, side="banker", amount=300)
    b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=300)
    assert [(a["side"], a["amount"]) for a in b.of("house_money_added")] == [("banker", 300)]
    assert "already on its banker wager" in b.of("refused")[-1]["reason"]


@pytest.mark.reg("629a.8(c)(3)(i)(A)")
def test_a_seat_with_two_house_money_wagers_adds_their_whole_payout_once() -> None:
    """629a.8(c)(3)(i)(A): "All of the winning House Money payout ... shall be added to the area
    designated for the placement of the player's original wager". A seat that placed House Money
    twice (100, then 50) has one payout, 300 + 150: the first wager's 300 alone is refused, the
    whole 450 is placed once, and the Player wager is settled as 550. (The payout of the second
    wager could not be added at all before.)"""
    b = Bench("midibaccarat", stack=stack_with(parse_cards("5S,KH,5D,2C,KD,KC"), decks=6))
    b.open_and_cut(seats=(1, 2, 3))
    b.play_round([(2, "player", 100), (2, "house_money", 100), (2, "house_money", 50)])
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    assert [(x["amount"], x["win"]) for x in b.of("settlement") if x["kind"] == "house_money"] == [(100, 300), (50, 150)]
    b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=300)
    assert b.of("refused")[-1]["reason"].endswith("4.50 (amount=450), not 3.00") and not b.of("house_money_added")
    b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=450)
    assert b.of("house_money_added") == [{"seat": 2, "side": "player", "amount": 450}]
    b.op("continue", Role.DEALER)
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    [main] = [x for x in b.of("settlement") if x["kind"] == "player"]
    assert main["amount"] == 550


# -- 3. 627a.13(d): no wager is lost to a simulated round --------------------------------------------------
@pytest.mark.reg("627a.13(d)")
@pytest.mark.parametrize("option", ["return", "stay"])
def test_wagers_on_the_layout_are_never_taken_into_a_simulated_round(option: str) -> None:
    """627a.13(d): "the dealer shall use the disclosed card as the first card of a simulated round
    of play in which wagers may not be accepted." The wagers already on the layout are returned
    (the default) or stay for the next real round (Rules Submission), never lost."""
    b = Bench(submission=with_options("minibaccarat", simulated_round_wagers=option))
    b.open_and_cut()
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.op("wager", Role.DEALER, seat=2, kind="tie", amount=10)
    b.draw(face_up=True)  # a card drawn in error and disclosed while wagers are on the layout
    assert b.of("irregularity")[-1]["clause"] == "627a.13(d)"
    simulated = b.of("round_start")[-1]
    assert simulated["kind"] == "simulated" and simulated["wagers"] == []
    assert b.of("round_result")[-1]["kind"] == "simulated" and b.core.state == "betting"
    if option == "return":
        assert [(w["seat"], w["amount"], w["result"]) for w in b.of("wager_returned")] == [(1, 100, "push"), (2, 10, "push")]
        assert b.core.pending_wagers == []
    else:
        assert not b.of("wager_returned") and len(b.core.pending_wagers) == 2
        b.play_round()
        assert b.of("round_start")[-1]["wagers"] == [{"seat": 1, "kind": "player", "amount": 100},
                                                     {"seat": 2, "kind": "tie", "amount": 10}]
    assert resolutions(b) == Counter({(1, "player"): 1, (2, "tie"): 1})


@pytest.mark.reg("627a.13(d)")
@pytest.mark.parametrize("option", ["return", "stay"])
def test_the_wagers_of_a_round_that_becomes_simulated_are_returned_or_kept(option: str) -> None:
    """627a.13(d): "if ... a card is found face up in the dealing shoe, the dealer shall use the
    disclosed card as the first card of a simulated round of play in which wagers may not be
    accepted." The round's first card is found face up: its wagers are returned, or put back on
    the layout for the next real round."""
    b = Bench(submission=with_options("minibaccarat", simulated_round_wagers=option))
    b.open_and_cut()
    b.face_up_at.add(b.drawn + 1)
    b.play_round([(1, "player", 100)])
    assert b.of("round_result")[-1]["kind"] == "simulated"
    if option == "stay":
        assert b.of("round_kind")[-1]["wagers_kept"] == [{"seat": 1, "kind": "player", "amount": 100}]
        assert not b.of("settlement")
        b.play_round()
    assert resolutions(b) == Counter({(1, "player"): 1})


# -- 4. 627a.13(d): a face-up card the shoe could not read -------------------------------------------------
@pytest.mark.reg("627a.13(d)")
def test_a_face_up_card_that_could_not_be_read_is_still_a_card_found_face_up() -> None:
    """627a.13(d): "if a card is disclosed at the time it is dealt or a card is found face up in
    the dealing shoe, the dealer shall use the disclosed card as the first card of a simulated
    round." The floorperson's entry of an unreadable face-up card keeps it face up."""
    b = Bench()
    b.open_and_cut()
    b.misread_at.add(b.drawn + 1)
    b.face_up_at.add(b.drawn + 1)
    b.play_round([(1, "player", 100)])
    assert b.core.state == "fault" and "misread" in b.core.faults
    position, card = next(iter(b.misread.items()))
    b.op("enter_card", card=str(card))
    assert b.of("irregularity")[-1]["clause"] == "627a.13(d)"
    assert b.of("round_result")[-1]["kind"] == "simulated"
    assert b.of("card")[0] == {"card": str(card), "to": "player", "position": position, "n": 1}


def test_an_entered_card_keeps_its_place_before_cards_drawn_after_it() -> None:
    """The card the shoe could not read came out before the cards drawn while the table waited
    for it: entered, it is dealt first, with its own position in the shoe."""
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.misread_at.add(b.drawn + 1)
    b.play_round([(1, "player", 100)])
    b.draw()
    b.draw()  # drawn while the misread held the table: deferred
    assert b.core.state == "fault" and len(b.of("card_deferred")) == 1
    position, card = next(iter(b.misread.items()))
    b.auto_deal = True
    b.op("enter_card", card=str(card))
    assert [(c["card"], c["position"]) for c in b.of("card")][:2] == [(str(card), position), (str(b.stack[position]), position + 1)]


# -- 5. 681a.5(e): the recut window ------------------------------------------------------------------------
@pytest.mark.reg("681a.5(e)")
def test_a_recut_may_be_ordered_from_the_cut_until_the_cards_are_in_the_shoe() -> None:
    """681a.5(e): "After the cards have been cut and before the cards have been placed in the
    dealing shoe, a floorperson or above may require the cards to be reshuffled or recut." Between
    the cut and the second cover card as well as after it; not before the cut."""
    b = Bench()
    b.op("open")
    b.op("order_recut")
    assert "not cut yet" in b.of("refused")[-1]["reason"] and b.core.state == "cutting"
    b.op("cut", Role.DEALER, position=100)
    b.op("order_recut")
    assert b.core.state == "cutting" and b.core.shoe.cut_position is None and b.of("cut_offer")[-1]
    assert not b.of("refused")[1:]
    b.op("cut", Role.DEALER, position=120)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("order_recut")
    assert b.core.state == "cutting" and b.core.shoe.cut_position is None


# -- 6. 681a.7(c): the burn count, one meaning everywhere ---------------------------------------------------
@pytest.mark.reg("681a.7(c)")
def test_the_burn_count_is_honoured_by_the_table_as_by_the_simulation() -> None:
    """681a.7(c): "After each full batch of cards is placed in the shoe, the dealer shall remove
    the first card and place it in the discard rack." Where the Rules Submission may set more
    (the Punto Banco games), the table burns what ``simulate`` burns, after each load and for
    each new dealer; 21 Baccarat refuses any other count (tests/rules/test_submission_regulation.py)."""
    sub = with_options("minibaccarat", burn_cards=3)
    front = P_WINS
    b = Bench(submission=sub, stack=stack_with(front, burn=3))
    b.open_and_cut(cut=100, cover=14)
    assert len(b.of("burn")) == 3 and b.core.state == "betting"
    b.play_round([(1, "player", 100)])
    assert [c["card"] for c in b.of("card")] == [str(c) for c in front]
    prepared = prepare(list(b.base), 100, 14, sub.burn_cards, sub.min_cover_depth)
    assert [str(c) for c in prepared.burned] == [p["card"] for p in b.of("burn")]
    assert len(shuffle_and_prepare(sub, random.Random(1), list(b.base)).burned) == 3
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    assert [p["dealer"] for p in b.of("burn")][3:] == ["D2"] * 3


# -- 7. 681a.5(f): a refused order changes nothing ---------------------------------------------------------
@pytest.mark.reg("681a.5(f)")
def test_a_refused_reshuffle_order_does_not_act_and_an_accepted_one_is_journaled() -> None:
    """681a.5(f): "a floorperson may determine that the cards should be reshuffled after any
    round of play." An order refused (wagers on the layout) changes nothing: the shoe is not
    reshuffled after the next round. An order accepted is journaled as accepted and acted on."""
    b = Bench()
    b.open_and_cut()
    shoe = b.core.shoe.id
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.op("order_reshuffle")
    assert b.of("refused")[-1]["input"] == "order_reshuffle" and not b.of("reshuffle_ordered")
    b.op("no_more_bets", Role.DEALER)
    assert b.core.state == "betting" and b.core.shoe.id == shoe
    b.auto_deal = False
    b.play_round([(1, "banker", 100)])
    assert not b.core.snapshot()["reshuffle_ordered"]
    b.op("order_reshuffle")
    assert b.of("reshuffle_ordered") == [{"by": "fp1"}]
    assert [r.payload["command"] for r in b.records if r.kind == "operator"][-1] == "order_reshuffle"
    assert b.core.snapshot()["reshuffle_ordered"]  # the status says what is pending
    b.op("order_reshuffle")  # once is enough: a second order was taken and journaled again (an operator review)
    assert b.of("refused")[-1] == {"input": "order_reshuffle", "reason": "a reshuffle is already ordered: it "
                                   "follows this round", "state": b.core.state, "operator": "fp1"}
    assert b.of("reshuffle_ordered") == [{"by": "fp1"}]
    b.auto_deal = True
    b.draw()
    assert b.core.shoe.id != shoe and b.core.state == "cutting"
    # before the cut the reshuffle is at once: the operator record says who ordered it (a
    # reshuffle_ordered record there would fail `audit decisions` on every journal written before)
    second = b.core.shoe.id
    b.op("order_reshuffle", operator="fp2")
    assert b.of("reshuffle_ordered") == [{"by": "fp1"}]
    assert [(r.payload["command"], r.payload["operator"]) for r in b.records if r.kind == "operator"][-1] == (
        "order_reshuffle", "fp2")
    assert b.core.shoe.id not in (shoe, second)


# -- 8. every card out is recorded with where it went ---------------------------------------------------
@pytest.mark.reg("681a.7(c)", "681a.7(l)")
@pytest.mark.parametrize("face_up", [False, True])
def test_a_card_drawn_between_rounds_at_21_baccarat_goes_to_the_discard_rack_on_record(face_up: bool) -> None:
    """681a.7(l): the cards are placed "in the discard rack in a manner that permits the
    reconstruction of each hand". A card drawn between rounds at a 21 Baccarat table (no
    irregularity section applies: 627a.13 is Minibaccarat's) goes to the discard rack like a burn
    card (681a.7(c): "remove one card and place it in the discard rack"), on record; it is never
    refused."""
    b = Bench("21-baccarat")
    b.open_and_cut()
    b.draw(face_up=face_up)
    assert not b.of("refused")
    assert b.of("discard")[-1]["position"] == b.drawn and b.of("discard")[-1]["card"] == str(b.stack[b.drawn - 1])
    b.play_round([(1, "player", 100)])
    assert b.of("card")[0]["position"] == b.drawn - len(b.of("card")) + 1


@pytest.mark.reg("681a.7(e)")
def test_a_face_up_card_in_a_21_baccarat_round_is_dealt_on_record() -> None:
    """681a.7(e): the dealer deals "One card face up ..." to each hand: every 21 Baccarat card is
    dealt face up, so one that comes out face up is dealt to its hand, never refused."""
    b = Bench("21-baccarat")
    b.open_and_cut()
    b.face_up_at.update({b.drawn + 1, b.drawn + 3})
    b.play_round([(1, "player", 100)])
    assert not b.of("refused") and b.of("round_result")[-1]["kind"] == "normal"
    assert len(b.of("card")) == b.of("round_result")[-1]["cards_used"]


def test_cards_drawn_while_the_door_was_open_are_each_applied_once_it_closes() -> None:
    """Every card out of the shoe is on record where it went. Cards drawn while a fault held the
    table are applied one at a time once it resumes: the squeeze the first one starts (629a.8(c))
    does not swallow the next, which this round still needs (the Player draws): it waits until the
    hands are turned over, then is the Player's third card (it was held for the next hand,
    627a.13(a), and the Player given another: a regulation review)."""
    b = Bench("midibaccarat")
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    b.draw()
    b.draw()
    b.draw()
    b.event("shoe", m.Door(True))
    b.draw()  # the fourth card
    b.draw()  # one more, drawn in error while the Player's Hand waits to be squeezed
    b.event("shoe", m.Door(False))
    assert not b.of("refused")
    assert b.of("card")[-1]["n"] == 4 and b.core.state == "squeeze"
    assert [d.position for d in b.core.aside.deferred] == [b.drawn] and not b.of("irregularity")
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    fifth = b.of("card")[4]
    assert (fifth["n"], fifth["to"], fifth["position"]) == (5, "player", b.drawn) and not b.core.aside.deferred
    assert b.of("round_result")[-1]["cards_used"] == len(b.of("card"))


# -- 9. the clause on a held card's record -------------------------------------------------------------
@pytest.mark.reg("627a.13(a)", "627a.13(d)")
@pytest.mark.parametrize("face_up, clause", [(False, "627a.13(a)"), (True, "627a.13(d)")])
def test_the_held_card_record_names_the_clause_that_placed_it(face_up: bool, clause: str) -> None:
    """627a.13(a): a card drawn in error that is not disclosed "shall be used as the first card of
    the next hand of play"; 627a.13(d): a disclosed card is "the first card of a simulated round
    of play". The held card's record names the clause that applies."""
    b = Bench()
    b.open_and_cut()
    b.draw(face_up=face_up)
    b.play_round([(1, "player", 100)])
    used = b.of("held_card_used")
    assert used and {u["clause"] for u in used} == {clause}


def test_a_wager_placed_by_mistake_is_taken_back_before_no_more_bets_and_returned_on_record() -> None:
    """A floorperson's review: a wager typed wrong (99,999,999,999 instead of 1,000) could not be
    taken back: the round had to be dealt. The seat's latest wager of that kind goes back to the
    player before "no more bets", journaled as returned, and is in no round; after "no more bets"
    nothing is taken back."""
    b = Bench()
    b.open_and_cut()
    b.op("wager", Role.DEALER, seat=3, kind="banker", amount=1_000)
    b.op("wager", Role.DEALER, seat=3, kind="banker", amount=99_999_999_999)
    b.op("wager", Role.DEALER, seat=5, kind="player", amount=500)
    b.op("take_back", Role.DEALER, seat=3, kind="banker")
    assert b.of("wager_returned") == [{"seat": 3, "kind": "banker", "amount": 99_999_999_999, "result": "push",
                                       "win": 0, "commission": 0, "net": 0}]
    assert [(w.seat, w.amount) for w in b.core.pending_wagers] == [(3, 1_000), (5, 500)]
    b.op("take_back", Role.DEALER, seat=4, kind="banker")
    assert b.of("refused")[-1]["reason"] == "seat 4 has no banker wager on the layout"
    b.auto_deal = False
    b.op("no_more_bets", Role.DEALER)
    b.op("take_back", Role.DEALER, seat=5, kind="player")
    assert b.of("refused")[-1]["reason"].startswith("a wager is taken back only while betting is open")
    assert sorted((w["seat"], w["amount"]) for w in b.of("round_start")[-1]["wagers"]) == [(3, 1_000), (5, 500)]
