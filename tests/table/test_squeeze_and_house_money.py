"""Midibaccarat's squeeze and House Money (629a.8): no card before "no more bets", the squeeze to the
highest wager and when relinquished, third cards face down, the House Money Wager settled before
any third card, through the table core's inputs and outputs (sans-I/O), with scripted devices
(bench.py)."""
from __future__ import annotations

import dataclasses

import pytest
from bench import P_WINS, Bench, stack_with

from controller.rules.cards import parse_cards
from controller.rules.submission import load_preset
from controller.roles import Role
from firmware_bridge.protocol import messages as m


# -- 629a.8 (Midibaccarat) -------------------------------------------------------------------------
def midi(front: list | None = None) -> Bench:
    b = Bench("midibaccarat", stack=stack_with(front, decks=6) if front else None)
    b.open_and_cut(seats=(1, 2, 3, 4))
    return b


@pytest.mark.reg("629a.8(b)")
def test_no_card_is_dealt_before_no_more_bets() -> None:
    """629a.8(b): "Prior to dealing any cards, the dealer shall announce" "no more bets". A card drawn
    while betting is still open is not a card of the round: it is a card drawn in error (627a.13(a)),
    and no card is dealt to a hand."""
    b = midi()
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.draw()  # the dealer draws before "no more bets": a card drawn in error
    assert b.of("irregularity")[-1]["clause"] == "627a.13(a)"
    assert b.of("card") == []
    # and over rounds played on: every card of a hand comes after that round's "no more bets" (an
    # examiner's review: nothing checked it beyond the first card)
    for n in range(12):
        b.play_round([(1 + n % 4, "player" if n % 2 else "banker", 100)])
        if b.core.state == "squeeze":
            while b.core.state == "squeeze":
                b.op("reveal", Role.DEALER)
    announced = None
    for r in b.records:
        if r.kind == "operator" and r.payload["command"] == "no_more_bets":
            announced = True
        elif r.kind == "round_start":
            assert announced or r.payload["kind"] == "simulated", r.payload
            announced = True  # a simulated round takes no wagers: nothing to announce
        elif r.kind == "card":
            assert announced is not False
        elif r.kind == "round_result":
            announced = False  # the next round's cards need its own announcement
    assert len(b.of("round_result")) >= 10


@pytest.mark.reg("629a.8(c)", "629a.8(c)(1)", "629a.8(c)(2)", "629a.8(c)(6)")
def test_squeeze_goes_to_the_highest_wager_ties_to_the_player_closest_counterclockwise() -> None:
    """629a.8(c): "deal an initial four cards from the dealing shoe", face down; (c)(1): the dealer
    "shall then hand the two cards of the Player's Hand, face down, to the player with the highest
    wager on the Player's Hand"; (c)(2): "the two cards of the Banker's Hand, face down, to the player
    with the highest wager on the Banker's Hand", after the Player's Hand is returned; (c)(6): of
    equally high wagers, "the player making the wager who is closest to the dealer, moving
    counterclockwise around the table". Seats 2 and 3 tie at 200 on the Player's Hand: seat 2 is
    closer and is handed it; seat 1's 70 is the highest Banker wager."""
    b = midi()
    b.play_round([(3, "player", 200), (2, "player", 200), (4, "banker", 50), (1, "banker", 70)])
    assert b.core.state == "squeeze"
    assert b.of("squeeze")[-1] == {"hand": "player", "seat": 2}  # 2 and 3 tie; 2 is closer
    assert b.core.prompt == "SQUEEZE PLAYER SEAT 2"
    b.event("shoe", m.ButtonPress(m.ButtonId.REVEAL))
    assert b.of("squeeze")[-1] == {"hand": "banker", "seat": 1}
    b.op("reveal", Role.DEALER)
    assert b.core.state in ("squeeze", "betting")  # a third-card squeeze, or the round is over


@pytest.mark.reg("629a.8(c)(2)", "629a.8(d)")
def test_a_squeeze_command_for_a_hand_no_longer_squeezed_is_refused() -> None:
    """629a.8(c)(2): the Banker's Hand goes "to the player with the highest wager on the Banker's
    Hand"; 629a.8(d): "The dealer or floorperson assigned to the table may require any player to
    relinquish the right to turn over the cards". A review of
    races: a dealer and a floorperson both sent `reveal` for the Player's Hand; the second turned
    the Banker's Hand over before seat 1 was handed it, and a `relinquish` meant for the Player's
    squeezer took the Banker's from its holder. Named (``hand``, and for a relinquishment the
    ``seat`` holding the cards, as the console showed them), a command the table has moved past is
    refused and changes nothing."""
    b = midi()
    b.play_round([(2, "player", 200), (3, "player", 100), (1, "banker", 70)])
    assert b.of("squeeze")[-1] == {"hand": "player", "seat": 2}
    b.op("relinquish", Role.FLOORPERSON, hand="player", seat=3)  # seat 3 does not hold it: nothing changes
    assert b.of("refused")[-1]["reason"] == "seat 3 does not hold the player hand: seat 2 does"
    b.op("reveal", Role.DEALER, hand="player")  # the dealer
    assert b.of("squeeze")[-1] == {"hand": "banker", "seat": 1}
    state, records = b.core.snapshot(), len(b.records)
    b.op("reveal", Role.FLOORPERSON, operator="fp2", hand="player")  # the same hand, a moment late
    b.op("relinquish", Role.FLOORPERSON, operator="fp2", hand="player", seat=2)
    assert [r["reason"] for r in b.of("refused")[-2:]] == [
        "the player hand is not being squeezed: the banker hand is, held by seat 1"] * 2
    assert b.core.snapshot() == state and b.kinds(records) == ["refused", "refused"]
    assert b.core.prompt == "SQUEEZE BANKER SEAT 1" and not b.of("relinquished")
    b.op("relinquish", Role.FLOORPERSON, hand="banker", seat=1)  # as shown: seat 1 delays the game
    assert b.of("relinquished") == [{"seat": 1, "to": b.of("relinquished")[0]["to"], "hand": "banker"}]
    b.op("reveal", Role.DEALER, hand="banker")
    assert b.of("revealed")[-1]["hand"] == "banker"


@pytest.mark.reg("629a.8(c)(4)", "629a.8(c)(5)", "629a.8(d)")
def test_third_cards_go_face_down_to_the_players_who_returned_the_hands() -> None:
    """629a.8(c)(4): "Any third card required to be dealt to the Player's Hand shall be placed face
    down" and handed "face down, to the player who was handed and returned the Player's Hand"; (c)(5)
    the same for "the player who was handed and returned the Banker's Hand"; 629a.8(d): a
    relinquished right is offered "to the player immediately to the right of the previous player".
    Seat 2 (the highest Player wager) gives the Player's Hand up and seat 3 returns it: the Player's
    third card goes to seat 3, not to the highest wager, and the Banker's third card to seat 4, who
    returned the Banker's Hand."""
    # Player 2+2 = 4 draws the 5; Banker 3+K = 3 draws on a Player's third card of 5: both draw.
    b = midi(parse_cards("2S,3C,2D,KD,5H,KC"))
    b.play_round([(2, "player", 200), (3, "player", 100), (4, "banker", 100), (1, "banker", 50)])
    assert b.of("squeeze") == [{"hand": "player", "seat": 2}]
    b.op("relinquish", Role.DEALER)
    assert b.of("relinquished") == [{"seat": 2, "to": 3, "hand": "player"}]
    b.op("reveal", Role.DEALER)  # seat 3 returns the Player's Hand
    b.op("reveal", Role.DEALER)  # seat 4 returns the Banker's Hand
    assert b.core.state == "squeeze" and len(b.of("card")) == 5
    assert b.of("squeeze")[-1] == {"hand": "player", "seat": 3} and b.core.prompt == "SQUEEZE PLAYER SEAT 3"
    b.op("reveal", Role.DEALER)
    assert b.core.state == "squeeze" and len(b.of("card")) == 6
    assert b.of("squeeze")[-1] == {"hand": "banker", "seat": 4} and b.core.prompt == "SQUEEZE BANKER SEAT 4"
    b.op("reveal", Role.DEALER)
    assert b.core.state == "betting"
    assert b.of("squeeze") == [{"hand": "player", "seat": 2}, {"hand": "banker", "seat": 4},
                               {"hand": "player", "seat": 3}, {"hand": "banker", "seat": 4}]
    result = b.of("round_result")[-1]
    assert (result["player"]["cards"], result["banker"]["cards"]) == (["2S", "2D", "5H"], ["3C", "KD", "KC"])


@pytest.mark.reg("629a.8(d)")
def test_a_player_who_gave_the_cards_up_is_not_handed_the_bankers_hand_in_that_round() -> None:
    """629a.8(d): after a relinquishment the right passes on "for the remainder of that round of
    play": seat 2, highest on both hands, gives up the Player's Hand, so the Banker's Hand goes to
    the player to its right (seat 3), not back to seat 2."""
    b = midi()
    b.play_round([(2, "player", 200), (2, "banker", 200), (3, "banker", 100)])
    b.op("relinquish", Role.FLOORPERSON)  # required of seat 2, who delays the game
    b.op("reveal", Role.DEALER)  # seat 3 returns the Player's Hand
    assert b.of("squeeze") == [{"hand": "player", "seat": 2}, {"hand": "banker", "seat": 3}]


@pytest.mark.reg("629a.8(c)(2)", "629a.8(d)")
def test_a_player_who_declined_the_player_hand_offered_keeps_the_right_to_the_bankers_hand() -> None:
    """629a.8(c)(2): the dealer "shall then hand the two cards of the Banker's Hand, face down, to
    the player with the highest wager on the Banker's Hand"; (d): "If the player does not accept
    it", the offer moves on. Seat 2 gives up the Player's Hand; it is offered to seat 3, who holds
    the only Banker wager and declines it, and then to seat 4. Declining a hand offered is not
    giving up one's own right: the Banker's Hand goes to seat 3 (a gaming lab's review: it went to
    seat 4, who has no Banker wager)."""
    b = midi()
    b.play_round([(2, "player", 200), (3, "banker", 300), (4, "player", 50)])
    b.op("relinquish", Role.FLOORPERSON)  # seat 2, required to
    assert b.of("relinquished")[-1] == {"seat": 2, "to": 3, "hand": "player"}
    b.op("relinquish", Role.DEALER)  # seat 3 does not accept it
    assert b.of("relinquished")[-1] == {"seat": 3, "to": 4, "hand": "player"}
    b.op("reveal", Role.DEALER)  # seat 4 returns the Player's Hand
    assert b.of("squeeze")[-1] == {"hand": "banker", "seat": 3}


@pytest.mark.reg("629a.8(c)(2)", "629a.8(d)")
def test_when_no_one_accepts_the_player_hand_the_bankers_hand_still_goes_to_its_highest_wager() -> None:
    """629a.8(d): "If no player accepts the cards, the dealer shall turn the cards over" (the
    Player's Hand's); the Banker's Hand is then handed as (c)(2) says, to "the player with the
    highest wager on the Banker's Hand", who declined only the Player's Hand offered (it was
    turned over by the dealer instead)."""
    b = midi()
    b.play_round([(1, "player", 100), (4, "banker", 300)])
    for _ in range(4):  # seat 1 gives it up; seats 2, 3 and 4 do not accept it
        b.op("relinquish", Role.DEALER)
    assert b.of("relinquished")[-1]["to"] is None
    revealed = b.of("revealed")[0]
    assert {k: v for k, v in revealed.items() if k != "point_count"} == {"hand": "player",
                                                                          "by": "the dealer (no player accepted)"}
    assert b.of("squeeze")[-1] == {"hand": "banker", "seat": 4}


@pytest.mark.reg("629a.8(c)(6)")
def test_a_tie_for_the_highest_wager_goes_by_the_tables_counterclockwise_order_not_by_seat_number() -> None:
    """629a.8(c)(6): of equally high wagers, "the player making the wager who is closest to the
    dealer, moving counterclockwise around the table". The Rules Submission lists the seats in
    that order (``seats``); here seat 5 is the dealer's right, so it is closer than seat 2."""
    sub = dataclasses.replace(load_preset("midibaccarat"), seats=(5, 4, 3, 2, 1))
    b = Bench(submission=sub)
    b.open_and_cut(seats=(1, 2, 3, 4, 5))
    b.play_round([(2, "player", 200), (5, "player", 200), (1, "banker", 50), (3, "banker", 50)])
    assert b.of("squeeze")[-1] == {"hand": "player", "seat": 5}
    b.op("reveal", Role.DEALER)
    assert b.of("squeeze")[-1] == {"hand": "banker", "seat": 3}


@pytest.mark.reg("629a.8(d)")
def test_relinquished_squeeze_passes_right_then_to_the_dealer() -> None:
    """629a.8(d): "the dealer shall offer it to the player immediately to the right of the previous
    player" and, "If no player accepts the cards, the dealer shall turn the cards over". Seat 2
    relinquishes to seat 3; when every seat has given the right up, the dealer reveals the hand."""
    b = midi()
    b.play_round([(2, "player", 100)])
    b.op("relinquish", Role.DEALER)
    assert b.of("relinquished")[-1] == {"seat": 2, "to": 3, "hand": "player"}
    b.op("relinquish", Role.DEALER)
    b.op("relinquish", Role.DEALER)
    b.op("relinquish", Role.DEALER)
    assert b.of("relinquished")[-1]["to"] is None
    assert b.of("revealed")[0]["by"].startswith("the dealer")


@pytest.mark.reg("629a.8(d)")
def test_a_player_who_gave_up_the_right_is_not_handed_a_third_card_of_the_round() -> None:
    """629a.8(d): once the right is relinquished "the dealer shall offer it to the player immediately
    to the right of the previous player ... for the remainder of that round of play". Seat 2 holds
    both hands, returns the Player's and is made to give the Banker's up: the Player's third card is
    not handed to seat 2 (an examiner's review: it was, `SQUEEZE PLAYER SEAT 2`), but to the right."""
    b = Bench("midibaccarat", stack=stack_with(parse_cards("2S,3C,2D,KD,5H,KC"), decks=6))
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(2, "player", 200), (2, "banker", 200), (3, "banker", 100)])
    b.op("reveal", Role.DEALER)  # seat 2 returns the Player's Hand, then is handed the Banker's
    assert b.of("squeeze")[-1] == {"hand": "banker", "seat": 2}
    b.op("relinquish", Role.FLOORPERSON)  # seat 2 delays the game: required to give the right up
    passed_to = b.of("relinquished")[-1]["to"]
    assert passed_to not in (None, 2)
    b.op("reveal", Role.DEALER)
    third = b.of("squeeze")[2:]
    assert third and third[0]["hand"] == "player" and third[0]["seat"] != 2, third


@pytest.mark.reg("629a.8(c)(3)", "629a.8(c)(3)(i)", "629a.8(c)(3)(i)(A)", "629a.8(c)(3)(ii)")
def test_house_money_settled_before_any_third_card_and_payout_added_to_the_wager() -> None:
    """629a.8(c)(3): "Prior to dealing a third card to the Player's or Banker's Hand, the dealer shall
    settle all House Money Wagers"; (c)(3)(i): "after the initial two cards of the Player's Hand and
    Banker's Hand have been turned face up on the layout"; (c)(3)(i)(A): "All of the winning House
    Money payout ... shall be added to the area designated for the placement of the player's original
    wager", and the two "shall then be settled based on the outcome of the player's wager";
    (c)(3)(ii): "After settling the House Money Wagers, the game shall resume by dealing any third
    cards". The 30 won is added to the 100 on the Player's Hand, which is settled as 130."""
    front = parse_cards("5S,KH,5D,2C,KD,KC")  # Player pair of 5s (0: draws), Banker 2 (draws)
    b = midi(front)
    b.play_round([(2, "player", 100), (2, "house_money", 10)])
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    assert b.core.state == "house_money"
    # "after the initial two cards dealt to both the Player's Hand and the Banker's Hand have been
    # turned face up": both hands revealed, then the House Money settlement
    kinds_in_order = [r.kind for r in b.records if r.kind in ("revealed", "settlement")]
    assert kinds_in_order == ["revealed", "revealed", "settlement"]
    hm = [s for s in b.of("settlement") if s["kind"] == "house_money"]
    assert hm == [{"seat": 2, "kind": "house_money", "amount": 10, "result": "win", "win": 30, "commission": 0, "net": 30}]
    assert len(b.of("card")) == 4  # no third card yet
    b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=30)
    b.op("continue", Role.DEALER)
    # what the layout holds now, as status says it: the settled House Money Wager is off it (a
    # floorperson review: status listed it, collected or paid, through the third card's squeeze)
    assert b.core.snapshot()["wagers"] == [{"seat": 2, "kind": "player", "amount": 130}]
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    main = [s for s in b.of("settlement") if s["kind"] == "player"]
    assert main[0]["amount"] == 130


@pytest.mark.reg("629a.8(c)(3)(i)")
def test_house_money_wagers_are_settled_counterclockwise_from_the_dealers_right() -> None:
    """629a.8(c)(3)(i): "the dealer shall settle all House Money Wagers ... beginning from the
    dealer's right and moving counterclockwise": the Rules Submission's seat order, whatever the
    order the wagers were placed in."""
    sub = dataclasses.replace(load_preset("midibaccarat"), seats=(3, 1, 4, 2))
    b = Bench(submission=sub, stack=stack_with(parse_cards("5S,KH,5D,2C,KD,KC"), decks=6))
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(4, "house_money", 10), (1, "house_money", 10), (2, "house_money", 10), (3, "player", 100)])
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    assert [x["seat"] for x in b.of("settlement") if x["kind"] == "house_money"] == [1, 4, 2]


@pytest.mark.reg("627a.13(e)", "629a.8(c)(3)")
@pytest.mark.parametrize("front, house_money", [("5S,KH,5D,2C", "win"), ("5S,KH,6D,2C", "lose")])
def test_a_round_voided_after_house_money_returns_every_wager_still_on_the_layout(front: str, house_money: str) -> None:
    """627a.13(e): "that round shall be void and all wagers shall be returned"; 629a.8(c)(3):
    House Money is settled "prior to dealing a third card". The shoe says it is empty only when the
    Player's third card is due, after the House Money settlement made on the first four cards: that
    settlement stands, and every wager still on the layout is returned, the original wager with the
    House Money payout placed on it. The two clauses do not say which wins here: this is the
    project's reading (a wager is resolved exactly once), recorded in docs/assumptions.md pending a
    ruling by the Board. (A shoe that says so before that settlement: the next test.)"""
    b = midi(parse_cards(front + ",KD,KC"))
    b.play_round([(2, "player", 100), (2, "house_money", 10)])
    assert b.core.state == "squeeze"
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    added = 30 if house_money == "win" else 0
    if added:
        b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=added)
    b.auto_deal = False
    b.op("continue", Role.DEALER)
    b.event("shoe", m.ShoeEmpty())  # no card for the Player's third: the round cannot be completed
    assert b.of("round_result")[-1]["kind"] == "void"
    settled = [(s["kind"], s["amount"], s["result"]) for s in b.of("settlement")]
    assert settled == [("house_money", 10, house_money), ("player", 100 + added, "push")]
    assert b.of("settlement")[-1]["net"] == 0
    # said as it is: not "all wagers returned" while the House Money settlement stands
    said = [n.text for n in b.notices if n.text.startswith("round void")]
    assert said and all("(the House Money settled before it stands)" in text for text in said)


@pytest.mark.reg("627a.13(e)")
@pytest.mark.parametrize("front", ["5S,KH,5D,2C", "5S,KH,6D,2C"])
def test_a_shoe_empty_before_house_money_is_settled_voids_the_round_and_returns_every_wager(front: str) -> None:
    """627a.13(e): "If there are insufficient cards remaining in the dealing shoe to complete a round
    of play, that round shall be void and all wagers shall be returned." The shoe says it is empty
    with the fourth card (as the emulated shoe does), a third card is due: the round is void at once,
    in the squeeze, and every wager is returned, the House Money Wager with the rest. Before, the
    squeeze went on, House Money was settled on the four cards and stood after the void (two
    examiners' reviews: the text makes no exception for it)."""
    b = midi(parse_cards(front + ",KD,KC"))
    b.play_round([(2, "player", 100), (2, "house_money", 10)])
    assert b.core.state == "squeeze"
    b.event("shoe", m.ShoeEmpty())
    assert b.of("round_result")[-1]["kind"] == "void" and b.core.state != "squeeze"
    settled = sorted((s["kind"], s["amount"], s["result"], s["net"]) for s in b.of("settlement"))
    assert settled == [("house_money", 10, "push", 0), ("player", 100, "push", 0)]
    said = [n.text for n in b.notices if n.text.startswith("round void")]
    assert said and not any("stands" in text for text in said)


@pytest.mark.reg("629a.8(c)(1)", "629a.8(c)(4)", "629a.8(c)(5)")
def test_a_card_dealt_face_down_is_not_shown_before_its_hand_is_turned_over() -> None:
    """629a.8(c)(1): the dealer hands "the two cards of the Player's Hand, face down" and the player
    turns them over ("the player shall return the two cards, face up"); (c)(4) and (c)(5): a third
    card "shall be placed face down" and handed "face down, to the player who was handed and
    returned" the hand. A
    floorperson's review read the Player's natural in the table's status, with no PIN, while the
    player still squeezed. The journal holds every card; the status and the event stream show a
    card dealt face down only once its hand is turned over."""
    b = midi(parse_cards("2S,3C,2D,KD,5H,KC"))
    b.play_round([(2, "player", 200), (4, "banker", 100)])
    assert b.core.state == "squeeze"
    snap = b.core.snapshot()
    assert (snap["player"], snap["banker"]) == (["??", "??"], ["??", "??"])
    cards = [r for r in b.records if r.kind == "card"]
    assert [r.payload["card"] for r in cards] == ["2S", "3C", "2D", "KD"]  # journaled as they are
    assert all(r.shown == dict(r.payload, card="??") for r in cards)  # streamed face down
    b.op("reveal", Role.DEALER)  # seat 2 turns the Player's Hand over
    snap = b.core.snapshot()
    assert (snap["player"], snap["banker"]) == (["2S", "2D"], ["??", "??"])
    b.op("reveal", Role.DEALER)  # then the Banker's; the Player's third card goes to seat 2, face down
    snap = b.core.snapshot()
    assert b.core.state == "squeeze" and (snap["player"], snap["banker"]) == (["2S", "2D", "??"], ["3C", "KD"])
    b.op("reveal", Role.DEALER)
    assert b.core.snapshot()["player"] == ["2S", "2D", "5H"]


def test_a_round_dealt_face_up_shows_every_card_at_once() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    b.draw()
    [card] = [r for r in b.records if r.kind == "card"]
    assert card.shown is None and b.core.snapshot()["player"] == [card.payload["card"]]


@pytest.mark.reg("629a.8(c)(1)", "629a.8(c)(2)")
def test_each_hand_turned_over_is_journaled_with_the_point_count_the_dealer_announces() -> None:
    """629a.8(c)(1): the dealer "shall place the cards face up on the area designated" for the
    Player's Hand "and announce the Point Count"; (c)(2) the same for the Banker's Hand, "who shall
    place the cards face up on the area designated" for it. An examiner's review: the `revealed` record
    had no Point Count, so the journal could not show what was to be announced. Player 2+2, Banker
    3+K; then the Player's third card, 5: a Point Count of 9."""
    b = Bench("midibaccarat", stack=stack_with(parse_cards("2S,3C,2D,KD,5H,KC"), decks=6))
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(2, "player", 200), (3, "banker", 100)])
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    assert [(r["hand"], r["point_count"]) for r in b.of("revealed")] == [("player", 4), ("banker", 3)]
    b.op("reveal", Role.DEALER)  # the Player's third card, squeezed by seat 2
    assert (b.of("revealed")[2]["hand"], b.of("revealed")[2]["point_count"]) == ("player", 9)


def _four_cards_at_the_squeeze(option: str = "discard") -> Bench:
    """A Midibaccarat round whose four cards (Player 7, Banker 6: no third card) wait at the Player's
    squeeze, seat 1 holding it; ``option``: the submission's 627a.13(c) procedure."""
    sub = dataclasses.replace(load_preset("midibaccarat"), unauthorized_third_card=option)
    b = Bench("midibaccarat", stack=stack_with(P_WINS + parse_cards("9S,AS,2S,3S,4S,5S,6S"), decks=6), submission=sub)
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    for _ in range(4):
        b.draw()
    assert b.core.state == "squeeze" and b.core.prompt == "SQUEEZE PLAYER SEAT 1"
    return b


def _banker_took_the_3h_under_c(b: Bench) -> None:
    """The hands turned over: the 3H decided under 627a.13(c), dealt as the Banker's third card."""
    _squeeze_through(b)
    assert b.of("irregularity")[-1]["clause"] == "627a.13(c)"
    assert b.of("round_result")[-1]["dealt"][4] == {"card": "3H", "to": "banker"}


def _squeeze_through(b: Bench) -> None:
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)


@pytest.mark.reg("627a.13(b)")
def test_a_card_drawn_at_the_squeeze_of_a_round_needing_no_third_card_is_the_players_unauthorised_third() -> None:
    """627a.13(b): "A third card dealt to the Player's Hand that is not disclosed, when a third card
    is not authorized under § 627a.10 ... If the Banker's Hand is required to stay, the card dealt in
    error shall become the first card of the next hand of play." A review: drawn while the round's
    four cards waited at the squeeze, it was decided as a card drawn in error before the next hand
    (627a.13(a)). The round completes on its four cards; the card opens the next hand."""
    b = _four_cards_at_the_squeeze()
    round_number = b.of("round_start")[-1]["round"]
    b.draw()  # the 9S, face down: a third card for the Player, who stands on 7
    decision = b.of("irregularity")[-1]
    assert decision["clause"] == "627a.13(b)" and decision["action"] == "next-hand-first-card"
    assert [r.payload["round"] for r in b.records if r.kind == "round_start"][-1] == round_number
    _squeeze_through(b)
    result = b.of("round_result")[-1]
    assert result["round"] == round_number and result["cards_used"] == 4 and result["outcome"] == "player"
    b.auto_deal = True
    b.play_round([(1, "banker", 100)])
    _squeeze_through(b)
    assert b.of("held_card_used")[-1]["clause"] == "627a.13(b)"
    assert b.of("round_result")[-1]["dealt"][0] == {"card": "9S", "to": "player"}


@pytest.mark.reg("627a.13(c)(1)")
def test_a_disclosed_card_at_the_squeeze_of_a_round_needing_no_third_card_goes_to_the_discard_rack_with_one_more() -> None:
    """627a.13(c): a third card dealt to the Player's Hand when not authorized, "disclosed at the time
    it is dealt", the Banker's Hand required to stay, (1): "Place the disclosed card and one
    additional card, drawn face down from the dealing shoe, into the discard rack without disclosing
    the additional card." The squeeze goes on once the additional card is drawn, and the round
    completes on its four cards."""
    b = _four_cards_at_the_squeeze("discard")
    b.draw(face_up=True)  # the 9S, disclosed
    assert b.of("irregularity")[-1]["clause"] == "627a.13(c)(1)" and b.core.prompt.startswith("BURN")
    b.draw()  # the one additional card, face down
    assert [d["reason"] for d in b.of("discard")] == ["627a.13(c)(1)", "627a.13(c)(1)"]
    assert b.core.aside.discards_owed == 0 and b.core.prompt == "SQUEEZE PLAYER SEAT 1"
    _squeeze_through(b)
    assert b.of("round_result")[-1]["cards_used"] == 4 and b.core.state == "betting"


def _four_cards_waiting(first_four: str, *, house_money: bool = False, option: str = "discard") -> Bench:
    """A Midibaccarat round of ``first_four`` (P1 B1 P2 B2) waiting at the Player's squeeze (seat 1),
    or, with ``house_money``, for the House Money settlement (seat 2's wager won)."""
    sub = dataclasses.replace(load_preset("midibaccarat"), unauthorized_third_card=option)
    b = Bench("midibaccarat", stack=stack_with(parse_cards(first_four + ",3H,KD,2S,3S,4S,5S,6S"), decks=6), submission=sub)
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.play_round([(1, "player", 100), (2, "banker", 100), (3, "tie", 100)]
                 + ([(2, "house_money", 100)] if house_money else []))
    for _ in range(4):
        b.draw()
    if house_money:
        while b.core.state == "squeeze":
            b.op("reveal", Role.DEALER)
    assert b.core.state == ("house_money" if house_money else "squeeze")
    return b


@pytest.mark.reg("627a.13(b)")
@pytest.mark.parametrize("house_money", [False, True])
def test_a_card_drawn_while_the_hands_wait_is_the_banker_third_card_when_the_banker_draws(house_money: bool) -> None:
    """627a.13(b): an unauthorised Player third card "shall become the third card of the Banker's
    Hand if the Banker's Hand is required to draw under § 627a.10(c)". A regulation review: with the
    Player on 7 and the Banker on 4, a card drawn at the squeeze (or for House Money) was held for
    the next hand (627a.13(a)) and the Banker given another. It is the round's next card, the
    Banker's third: dealt once the hands are turned over (629a.8(c)), and the round decided on it."""
    b = _four_cards_waiting("3S,2H,4D,2C", house_money=house_money)  # Player 7 stands, Banker 4 draws
    b.draw()  # the 3H, drawn before the squeeze or House Money is done
    assert not b.of("irregularity") and [d.card for d in b.core.aside.deferred] == parse_cards("3H")
    while b.core.state in ("squeeze", "house_money"):
        b.op("continue" if b.core.state == "house_money" else "reveal", Role.DEALER)
    result = b.of("round_result")[-1]
    assert result["dealt"][4] == {"card": "3H", "to": "banker"} and result["cards_used"] == 5
    assert (result["player"]["total"], result["banker"]["total"], result["outcome"]) == (7, 7, "tie")
    assert not b.core.aside.deferred and not b.core.aside.held


def test_a_card_drawn_at_the_squeeze_is_the_players_third_card_when_the_player_draws() -> None:
    """The same card with the Player entitled to draw (Player 5): it is the Player's third card,
    dealt once the hands are turned over (it was held for the next hand, and the Player given
    another)."""
    b = _four_cards_waiting("3S,2H,2D,2C")  # Player 5 draws
    b.draw()
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    fifth = b.of("card")[4]
    assert (fifth["card"], fifth["to"], fifth["n"]) == ("3H", "player", 5) and not b.of("irregularity")


@pytest.mark.reg("627a.13(c)(1)")
def test_the_house_money_prompt_comes_back_once_the_c1_additional_card_is_drawn() -> None:
    """627a.13(c)(1): "Place the disclosed card and one additional card, drawn face down from the
    dealing shoe, into the discard rack". A review: at House Money, once the additional card was
    drawn, the display still said BURN (a card more would have been drawn in error)."""
    b = _four_cards_waiting("3S,2H,4D,4C", house_money=True)  # Player 7, Banker 6: no third card
    assert b.core.prompt == "HOUSE MONEY"
    b.draw(face_up=True)  # disclosed: (c)(1), one more card owed
    assert b.of("irregularity")[-1]["clause"] == "627a.13(c)(1)" and b.core.prompt.startswith("BURN")
    b.draw()
    assert b.core.aside.discards_owed == 0 and b.core.prompt == "HOUSE MONEY"


@pytest.mark.reg("627a.13(c)")
@pytest.mark.parametrize("house_money", [False, True])
def test_a_disclosed_card_drawn_while_the_hands_wait_is_the_banker_third_card_when_the_banker_draws(house_money: bool) -> None:
    """627a.13(c): a third card dealt to the Player's Hand when not authorized, "disclosed at the
    time it is dealt or is found face up in the dealing shoe, the dealer shall use the disclosed card
    as the third card of the Banker's Hand if the Banker's Hand is required to draw". A review of the
    change: the face-up card drawn at the squeeze (or House Money) opened a simulated round (627a.13(d))
    and the Banker was given another card."""
    b = _four_cards_waiting("3S,2H,4D,2C", house_money=house_money)  # Player 7 stands, Banker 4 draws
    b.draw(face_up=True)  # the 3H, disclosed: decided when it is dealt, in order
    while b.core.state in ("squeeze", "house_money"):
        b.op("continue" if b.core.state == "house_money" else "reveal", Role.DEALER)
    decision = b.of("irregularity")[-1]
    assert (decision["clause"], decision["action"], decision["card"]) == ("627a.13(c)", "banker-third-card", "3H")
    result = b.of("round_result")[-1]
    assert result["dealt"][4] == {"card": "3H", "to": "banker"} and result["outcome"] == "tie"
    assert result["kind"] == "normal" and not b.core.aside.simulated


@pytest.mark.reg("627a.13(e)")
def test_a_shoe_empty_after_the_rounds_next_card_came_out_early_does_not_void_it() -> None:
    """627a.13(e) voids a round only "If there are insufficient cards remaining in the dealing shoe to
    complete a round of play". A review of the change: the round's next card drawn at the squeeze,
    then the shoe's report that it is empty, voided the round and sent the card to the discard
    rack. The card out completes it."""
    b = _four_cards_waiting("3S,2H,4D,2C")  # the Banker draws one card: the round's last
    b.draw()  # the 3H, early
    b.event("shoe", m.ShoeEmpty())
    assert not [r for r in b.of("round_result") if r["kind"] == "void"]
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    result = b.of("round_result")[-1]
    assert result["kind"] == "normal" and result["dealt"][4] == {"card": "3H", "to": "banker"}


def test_no_draw_prompt_is_shown_for_a_card_that_came_out_early() -> None:
    """A review of the change: once the hands were turned over, the shoe was told "DRAW BANKER @6",
    the card already out early, and a dealer following the prompt drew one card too many. The
    card out is dealt first; the prompt that follows is for the card after it (here the Banker's
    third card is squeezed: no DRAW at all)."""
    b = _four_cards_waiting("3S,2H,4D,2C")
    b.draw()
    shown = len(b.sent)
    while b.core.state == "squeeze" and b.core.round.squeeze_phase in ("player", "banker") and len(b.core.round.cards) == 4:
        b.op("reveal", Role.DEALER)
    prompts = [s.message.text for s in b.sent[shown:] if isinstance(s.message, m.Display)]
    assert not [p for p in prompts if p.startswith("DRAW")], prompts


def test_a_card_out_early_collected_by_a_void_says_so() -> None:
    """The card out early, then a floorperson's void: collected with the shoe's cards, its reason
    no more "drawn while the table was held" alone (no fault held it)."""
    b = _four_cards_waiting("3S,2H,4D,2C")
    b.draw()
    b.op("void_round", Role.FLOORPERSON, reason="a test")
    late = [d for d in b.of("discard") if d["card"] == "3H"]
    assert late and late[-1]["reason"].startswith("drawn while the table was held, or before the round's hands were "
                                                  "turned over")


def test_only_the_first_card_out_early_is_the_banker_third_card() -> None:
    """Two cards out while the hands wait, the Banker drawing: the first is the Banker's third card,
    the second, face up, is no third card of this round (627a.13(d): a simulated round after it)."""
    b = _four_cards_waiting("3S,2H,4D,2C")
    b.draw()  # the 3H: the Banker's third card
    b.draw(face_up=True)  # the KD, found face up
    assert [d["clause"] for d in b.of("irregularity")] == []  # decided when dealt, in order
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    result = b.of("round_result")[0]
    assert result["dealt"][4] == {"card": "3H", "to": "banker"} and result["cards_used"] == 5
    assert b.of("irregularity")[-1]["clause"] == "627a.13(d)" and b.of("irregularity")[-1]["card"] == "KD"



@pytest.mark.reg("627a.13(c)")
@pytest.mark.parametrize("how", ["unread", "door"])
def test_a_disclosed_card_out_early_is_the_banker_third_card_however_it_came_out(how: str) -> None:
    """627a.13(c): "the dealer shall use the disclosed card as the third card of the Banker's Hand if
    the Banker's Hand is required to draw". A review: read cleanly, the face-up card out at the
    squeeze was the Banker's third card; the same card unread (then entered by the floorperson) or
    out while the door was open was set aside under (d), and the Banker given another."""
    b = _four_cards_waiting("3S,2H,4D,2C")
    if how == "unread":
        b.misread_at.add(b.drawn + 1)
        b.draw(face_up=True)
        b.op("enter_card", Role.FLOORPERSON, card="3H")
    else:
        b.event("shoe", m.Door(True))
        b.draw(face_up=True)
        b.event("shoe", m.Door(False))
    _banker_took_the_3h_under_c(b)


@pytest.mark.reg("627a.13(e)")
def test_a_round_the_cards_out_early_cannot_complete_is_void_at_once_house_money_with_the_rest() -> None:
    """627a.13(e): "that round shall be void and all wagers shall be returned". A review: with the
    Player's third card out early and the shoe then empty, the Banker still drawing, the void waited
    for the hands, House Money was settled meanwhile and lost. The card out does not complete the
    round: void at once, the House Money Wager returned with the rest."""
    b = Bench("midibaccarat", stack=stack_with(parse_cards("3S,2H,2D,AC,3H,KD"), decks=6))
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.play_round([(1, "player", 100), (2, "house_money", 100)])
    for _ in range(4):
        b.draw()  # Player 5 draws, then the Banker (3): at the Player's squeeze, House Money not settled
    assert b.core.state == "squeeze" and not b.core.round.house_money_settled
    b.draw()  # the 3H: the Player's third card, out early
    b.event("shoe", m.ShoeEmpty())
    void = b.of("round_result")[-1]
    assert void["kind"] == "void" and {(s["kind"], s["result"]) for s in b.of("settlement")} == {
        ("player", "push"), ("house_money", "push")}


@pytest.mark.reg("627a.13(c)(1)")
def test_the_c1_card_owed_at_the_squeeze_is_owed_no_more_once_the_shoe_is_empty() -> None:
    """627a.13(c)(1): "one additional card, drawn face down from the dealing shoe": with the shoe
    empty there is none. A review: the table prompted BURN for ever, the round (decided on its four
    cards) never settled. It is owed no more, and the round is completed."""
    b = _four_cards_waiting("3S,2H,4D,4C")  # Player 7, Banker 6: no card needed
    b.draw(face_up=True)  # disclosed: (c)(1), one more owed
    assert b.core.aside.discards_owed == 1
    b.event("shoe", m.ShoeEmpty())
    assert b.core.aside.discards_owed == 0 and b.core.prompt == "SQUEEZE PLAYER SEAT 1"
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    assert b.of("round_result")[-1]["kind"] == "normal" and b.of("round_result")[-1]["cards_used"] == 4


@pytest.mark.reg("627a.13(a)", "627a.13(b)")
def test_a_second_card_at_the_squeeze_of_a_round_needing_none_is_drawn_in_error_before_the_next_hand() -> None:
    """627a.13(b) is about "A third card dealt to the Player's Hand": one. A review: a second card
    at the squeeze was decided (b) again, a second third card; it is a card drawn in error, (a):
    "a card drawn in error from the dealing shoe that is not disclosed shall be used as the first
    card of the next hand of play" (after the one (b) holds, the hand after it)."""
    b = _four_cards_waiting("3S,2H,4D,4C")  # Player 7, Banker 6
    b.draw()
    b.draw()
    assert [d["clause"] for d in b.of("irregularity")] == ["627a.13(b)", "627a.13(a)"]


@pytest.mark.reg("627a.13(e)")
def test_a_face_up_card_out_early_that_goes_to_no_hand_does_not_hold_off_the_void() -> None:
    """627a.13(e): "that round shall be void and all wagers shall be returned". A review: a face-up
    card out early that no hand takes (the Player's own third card, found face up: set aside under
    (d)) was counted as completing the round, so an empty shoe did not void it at once; House Money
    was settled, and lost, before the void."""
    b = Bench("midibaccarat", stack=stack_with(parse_cards("3S,4H,2D,3C,3H,KD"), decks=6))
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.play_round([(1, "player", 100), (2, "house_money", 100)])
    for _ in range(4):
        b.draw()  # Player 5 draws, Banker 7 stands: at the Player's squeeze
    b.draw(face_up=True)  # the 3H, face up: no card of the round
    b.event("shoe", m.ShoeEmpty())
    assert b.of("round_result")[-1]["kind"] == "void"
    assert {(s["kind"], s["result"]) for s in b.of("settlement")} == {("player", "push"), ("house_money", "push")}


@pytest.mark.reg("627a.13(a)", "627a.13(b)")
def test_a_card_after_a_round_whose_third_card_in_error_came_at_the_squeeze_is_drawn_in_error() -> None:
    """627a.13(b) is about "A third card dealt to the Player's Hand": one per round. A review: one at
    the squeeze, then another after the round ended, was decided (b) twice; the second is "a card
    drawn in error" (627a.13(a))."""
    b = _four_cards_waiting("3S,2H,4D,4C")  # Player 7, Banker 6
    b.draw()  # (b) at the squeeze
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    b.draw()  # after the round, before any wager
    assert [d["clause"] for d in b.of("irregularity")] == ["627a.13(b)", "627a.13(a)"]


@pytest.mark.reg("627a.13(c)")
def test_a_face_up_card_drawn_during_a_fault_behind_the_squeeze_is_decided_as_at_the_squeeze() -> None:
    """627a.13(c): the disclosed card "as the third card of the Banker's Hand if the Banker's Hand is
    required to draw". A review: the fourth and fifth cards drawn while the door was open (the fifth
    face up) were ruled (d) where the same cards drawn without the door open were ruled (c)."""
    sub = dataclasses.replace(load_preset("midibaccarat"), unauthorized_third_card="discard")
    b = Bench("midibaccarat", stack=stack_with(parse_cards("3S,2H,4D,2C,3H,KD,2S,3S"), decks=6), submission=sub)
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    for _ in range(3):
        b.draw()
    b.event("shoe", m.Door(True))
    b.draw()
    b.draw(face_up=True)  # the 3H
    b.event("shoe", m.Door(False))
    _banker_took_the_3h_under_c(b)


@pytest.mark.reg("627a.13(e)")
def test_a_shoe_empty_while_a_fault_holds_the_round_voids_it_when_it_needs_a_card() -> None:
    """627a.13(e): "If there are insufficient cards remaining in the dealing shoe to complete a round
    of play, that round shall be void". A review: the shoe's report that it was empty, while the door
    was open, was dropped; the table later prompted for a card that was not there."""
    b = _four_cards_waiting("3S,4H,2D,3C")  # Player 5 draws, Banker 7 stands
    b.draw()  # the Player's third card, early
    b.event("shoe", m.Door(True))
    b.event("shoe", m.ShoeEmpty())
    b.event("shoe", m.Door(False))
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    result = b.of("round_result")[-1]
    assert result["kind"] == "normal" and result["dealt"][4] == {"card": "3H", "to": "player"}  # it needed one card
    b2 = _four_cards_waiting("3S,2H,2D,AC")  # Player 5 draws, then the Banker (3): two cards needed
    b2.draw()
    b2.event("shoe", m.Door(True))
    b2.event("shoe", m.ShoeEmpty())
    b2.event("shoe", m.Door(False))
    while b2.core.state == "squeeze":
        b2.op("reveal", Role.DEALER)
    assert b2.of("round_result")[-1]["kind"] == "void" and not b2.core.prompt.startswith("DRAW")
