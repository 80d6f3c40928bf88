"""Loading and dealing (681a.7): the burn, a round started on the cover card, a round dealt,
settled and discarded in order, and whole shoes played by the automated dealer, through the table
core's inputs and outputs (sans-I/O), with scripted devices (bench.py)."""
from __future__ import annotations

import pytest
from bench import Bench

from controller.roles import Role


# -- 681a.7 ----------------------------------------------------------------------------------------
@pytest.mark.reg("681a.7(a)", "681a.7(c)")
def test_load_then_the_first_card_is_burned_and_a_new_dealer_burns_one() -> None:
    """681a.7(a): "the stacked cards shall be placed in the dealing shoe" once the shuffle and cut
    are complete; 681a.7(c): "After each full batch of cards is placed in the shoe, the dealer shall
    remove the first card and place it in the discard rack. Each new dealer who comes to the table
    shall also remove one card". The load comes before the burn; a new dealer burns one more; the
    dealer already signed in is not a new dealer and burns none."""
    b = Bench("21-baccarat")
    b.open_and_cut()
    assert b.kinds().index("shoe_loaded") < b.kinds().index("burn")
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    assert len(b.of("burn")) == 2 and b.of("burn")[1]["dealer"] == "D2"
    assert b.core.state == "betting"
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")  # the same dealer again: not a new dealer, no burn
    assert b.of("refused")[-1]["reason"] == "D2 is the dealer signed in already" and len(b.of("burn")) == 2
    b.op("dealer_sign_in", Role.DEALER, dealer=" d2 ")  # nor spelt otherwise (an operator review: it burnt one)
    assert b.of("refused")[-1]["reason"] == "D2 is the dealer signed in already" and len(b.of("burn")) == 2
    assert [r["dealer"] for r in b.of("dealer")] == ["D2"]


@pytest.mark.reg("681a.7(c)")
def test_a_second_new_dealer_waits_for_the_first_ones_burn() -> None:
    """681a.7(c): "Each new dealer who comes to the table shall also remove one card and place it in
    the discard rack before dealing any cards to the players." A review of races: a dealer who
    signed in while the new dealer before was burning (the card already out of the shoe, its read
    on the way) was credited with that burn, and burned none. While a card is being burned, a
    sign-in is refused and changes nothing; the burn is the first new dealer's, and the second
    signs in after it and burns their own."""
    b = Bench("21-baccarat")
    b.open_and_cut()
    b.auto_deal = False
    b.op("dealer_sign_in", Role.DEALER, operator="d2", dealer="D2")
    assert b.core.state == "burning"
    state, records = b.core.snapshot(), len(b.records)
    b.op("dealer_sign_in", Role.DEALER, operator="d3", dealer="D3")
    assert b.of("refused")[-1]["reason"] == ("a new dealer signs in between rounds, not while the table is burning "
                                             "(the dealer who began a round or a burn completes it); the table waits "
                                             "for the burn card from the shoe")
    assert b.core.snapshot() == state and b.kinds(records) == ["refused"]
    b.draw()
    assert b.of("burn")[-1]["dealer"] == "D2" and b.core.state == "betting"
    b.auto_deal = True
    b.op("dealer_sign_in", Role.DEALER, operator="d3", dealer="D3")
    assert [burn["dealer"] for burn in b.of("burn")[-2:]] == ["D2", "D3"] and b.core.state == "betting"


@pytest.mark.reg("681a.7(c)", "681a.7(d)")
def test_a_new_dealers_burn_that_reaches_the_cover_card_ends_the_shoe() -> None:
    """681a.7(c): "Each new dealer who comes to the table shall also remove" the burn (here the
    Rules Submission's thirty cards); 681a.7(d): when the cover card "appears during play, the cover
    card shall be removed and placed to the side and the hand shall be completed", then "Collect and
    reshuffle the cards" (here no hand is in play: the burn is between rounds). A burn of more
    cards than were left above the cover card ran on through it to the
    shoe's end, and the table then waited in ``burning`` for cards that were not there, ``close``
    refused (a configuration review). At the cover card the cards still to burn are not owed, and
    the cards are reshuffled."""
    from dataclasses import replace

    from controller.rules.submission import load_preset

    b = Bench(submission=replace(load_preset("minibaccarat"), decks=1, burn_cards=30), seed=5)
    b.open_and_cut(cut=20, cover=10, seats=(1,))  # 30 burned, then 12 cards above the cover card
    assert b.core.state == "betting" and len(b.of("burn")) == 30
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")  # thirty more to burn: twelve are left above the cover card
    burned = b.of("burn")[30:]
    assert len(burned) == 12 and [c["due"] for c in burned] == list(range(29, 17, -1))
    assert b.of("cover_card") and b.core.burns_due == 0 and b.core.state not in ("burning", "betting")
    assert b.kinds().index("cover_card") < b.kinds().index("shoe_start", b.kinds().index("cover_card"))  # the next shoe
    assert any("the cover card came out during the burn (18 cards still to burn)" in n.text for n in b.notices)


def test_a_cover_card_out_first_in_the_burn_after_a_load_ends_the_shoe() -> None:
    """A cover card that comes out in the burn after a load (the first card out: the stack is not as
    it was cut and covered, 681a.5(d)) ends the shoe there, as in a new dealer's burn: the emulated
    dealer stops its burn at a cover card, and the table, waiting for the burn card, stalled (a
    review of the day's changes, `--faults cover-at=1`)."""
    b = Bench(seed=5)
    b.op("open")
    while b.core.shoe.cut_offeree is not None:
        b.op("cut_decline", Role.DEALER, seat=b.core.shoe.cut_offeree)
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.cover_index = 0  # the cover card is the first thing out of the shoe
    b.op("load", Role.DEALER)
    assert b.of("cover_card_early") and not b.of("burn") and b.core.burns_due == 0
    assert b.core.state not in ("burning", "betting") and b.kinds().count("shoe_start") == 2  # the next shoe
    assert any("the cover card came out during the burn" in n.text for n in b.notices)


@pytest.mark.reg("681a.7(c)")
def test_another_dealer_deals_only_once_signed_in_and_burning() -> None:
    """681a.7(c): "Each new dealer who comes to the table shall also remove one card and place it in
    the discard rack before dealing any cards to the players." A gaming lab's review: operator d2, a
    dealer, dealt a whole round after d1 without signing in, and no card was burned. The dealer at
    the table is the operator who signed in (or the first of the dealer's role to act); another
    dealer's commands are refused, changing nothing, until they sign in, which burns their card."""
    b = Bench("21-baccarat")
    b.open_and_cut()
    b.op("dealer_sign_in", Role.DEALER, operator="d1", dealer="D1")
    burns = len(b.of("burn"))
    b.op("wager", Role.DEALER, operator="d1", seat=1, kind="player", amount=100)
    state, records = b.core.snapshot(), len(b.records)
    b.op("no_more_bets", Role.DEALER, operator="d2")
    assert b.of("refused")[-1]["reason"] == ("d2 is not the dealer at this table (d1 is): a new dealer signs in first "
                                             "(dealer_sign_in), and burns a card before dealing (681a.7(c))")
    assert b.core.snapshot() == state and b.kinds(records) == ["refused"]
    b.op("no_more_bets", Role.DEALER, operator="d1")  # d1 completes the round
    assert b.core.state == "betting"
    b.op("dealer_sign_in", Role.DEALER, operator="d2", dealer="D2")
    assert len(b.of("burn")) == burns + 1 and b.of("burn")[-1]["dealer"] == "D2"
    b.op("wager", Role.DEALER, operator="d2", seat=1, kind="player", amount=100)
    assert [(w.seat, w.amount) for w in b.core.pending_wagers] == [(1, 100)]
    b.op("sit", Role.DEALER, operator="d1", seat=2)  # d1 has left the table: refused now
    assert b.of("refused")[-1]["reason"].startswith("d1 is not the dealer at this table (d2 is)")
    # status says whom the refusals name (a floorperson review: it said the name signed in, or nothing)
    assert (b.core.snapshot()["dealer"], b.core.snapshot()["dealer_operator"]) == ("D2", "d2")
    b.op("sit", Role.FLOORPERSON, operator="fp1", seat=2)  # a floorperson is not a dealer: not refused
    assert 2 in b.core.occupied


def test_no_other_dealer_signs_in_where_the_automated_dealer_deals() -> None:
    """At a table the automated dealer deals (``shoectl run`` without ``--manual``) a person's sign-in
    would leave it refused for every command: the table would stop. It is refused, in words."""
    b = Bench()
    b.open_and_cut()
    b.op("dealer_sign_in", Role.DEALER, operator="auto-dealer", dealer="auto")
    b.op("dealer_sign_in", Role.DEALER, operator="d1", dealer="Dana")
    assert b.of("refused")[-1]["reason"] == ("the automated dealer deals at this table (shoectl run without --manual): "
                                             "no other dealer signs in")
    assert b.core.dealer_operator == "auto-dealer"
    # and a person's dealer command is not told to sign in, which is refused there (a floorperson review)
    b.op("wager", Role.DEALER, operator="d1", seat=1, kind="player", amount=100)
    assert b.of("refused")[-1]["reason"] == ("d1 is not the dealer at this table: the automated dealer deals here "
                                             "(shoectl run without --manual); a dealer's commands are its")


@pytest.mark.reg("681a.7(d)")
def test_cover_card_as_first_card_of_a_round_the_round_is_still_dealt() -> None:
    """681a.7(d): "If the cover card appears as the first card in the dealing shoe at the beginning
    of a round of play ... the cover card shall be removed and placed to the side and the hand shall
    be completed", then the cards are collected and reshuffled."""
    b = Bench()
    b.open_and_cut(cut=100, cover=14)
    b.cover_index = b.drawn  # the cover card is next out
    recs = b.play_round([(1, "player", 10)])
    kinds = [r.kind for r in recs]
    assert kinds.index("cover_card") < kinds.index("card") < kinds.index("round_result")
    assert b.core.state == "cutting"  # then reshuffled


@pytest.mark.reg("681a.7(e)", "681a.7(h)", "681a.7(i)", "681a.7(j)", "681a.7(k)", "681a.7(l)")
def test_21_baccarat_round_dealt_settled_counterclockwise_and_discarded_in_order() -> None:
    """681a.7(e): the dealer deals "One card face up to the area ... designated for the Player's
    Hand", then the Banker's, "A second card face up to the area for the Player's Hand", then the
    Banker's; 681a.7(h): "Starting with the player farthest to the dealer's right and continuing
    around the table in a counterclockwise direction the dealer shall then settle all Player and
    Banker Wagers"; (i)(2)(i) and (j)(2)(ii): both hands 21 or less, "the Player's Hand is higher in
    total value than the Banker's Hand": the Player Wager is paid and "the dealer shall collect each
    player's losing wager on the Banker's Hand"; (k): "The dealer shall settle Tie and Bonus Wagers",
    collecting "the losing Tie Wager" and a Bonus Wager that "Does not contain a pair or better";
    681a.7(l): the cards go to the discard rack "in a manner that permits the reconstruction of each
    hand". This bench's stack deals the Player 15 and the Banker 10."""
    b = Bench("21-baccarat")
    b.open_and_cut()
    recs = b.play_round([(3, "player", 100), (1, "banker", 100), (2, "tie", 10), (1, "player_bonus", 5)])
    res = next(r.payload for r in recs if r.kind == "round_result")
    settlements = [r.payload for r in recs if r.kind == "settlement"]
    assert [r.payload["to"] for r in recs if r.kind == "card"][:4] == ["player", "banker", "player", "banker"]
    assert (res["player"]["total"], res["banker"]["total"], res["player"]["bonus_rank"]) == (15, 10, "none")
    assert {s["kind"]: s["result"] for s in settlements} == {
        "player": "win", "banker": "lose", "tie": "lose", "player_bonus": "lose"}
    assert [s["seat"] for s in settlements[:2]] == [1, 3]  # Player/Banker first, dealer's right first
    assert {s["kind"] for s in settlements[2:]} == {"tie", "player_bonus"}
    cards = [r.payload["card"] for r in recs if r.kind == "card"]
    assert next(r.payload for r in recs if r.kind == "discard_rack")["cards"] == cards
    assert [d["card"] for d in res["dealt"]] == cards


@pytest.mark.reg("681a.7(e)")
def test_21_baccarat_deals_no_card_before_the_wagers_are_placed_and_takes_none_after() -> None:
    """681a.7(e): "After all Player and Banker Wagers and optional Tie and Bonus Wagers have been
    placed, the dealer shall deal the cards". A card drawn while wagers are still being placed is
    dealt to no hand (it goes to the discard rack: 681a.7 has no clause for a card drawn in error,
    docs/irregularities.md); once the dealing has begun, a wager is refused and changes nothing."""
    b = Bench("21-baccarat")
    b.open_and_cut()
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.auto_deal = False
    b.draw()  # the dealer draws before "no more bets"
    assert b.of("card") == []
    assert b.of("discard")[-1]["position"] == 2  # the card after the burn
    b.auto_deal = True
    b.op("no_more_bets", Role.DEALER)
    assert [c["to"] for c in b.of("card")][:4] == ["player", "banker", "player", "banker"]
    b2 = Bench("21-baccarat")
    b2.open_and_cut()
    b2.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b2.auto_deal = False
    b2.op("no_more_bets", Role.DEALER)
    b2.draw()  # the first card of the round is out
    assert [c["to"] for c in b2.of("card")] == ["player"]
    b2.op("wager", Role.DEALER, seat=2, kind="banker", amount=50)
    assert b2.of("refused"), "a wager once the dealing has begun"
    assert [w["seat"] for w in b2.of("wager")] == [1]


def test_the_automated_dealer_gives_up_a_command_the_table_keeps_refusing() -> None:
    """Rules the automated dealer cannot follow (here a burn the submission's parser now refuses,
    given to the core directly: no place for the second cover card) once had it give the refused
    cover for ever, thousands of journal entries a second (a configuration review). The same
    command in the same state ``MAX_SAME_COMMAND`` times, the table unmoved, and it gives up,
    saying why, as when a count fault will not clear: a person must look."""
    from dataclasses import replace

    from controller.rules.submission import load_preset
    from controller.table.autodealer import MAX_SAME_COMMAND, AutoDealer

    told: list[str] = []
    b = Bench(submission=replace(load_preset("minibaccarat"), decks=1, burn_cards=43), seed=3)
    auto = AutoDealer(seed=3, on_give_up=told.append)
    for _ in range(5 * MAX_SAME_COMMAND):
        op = auto.next_input(b.core)
        if op is None:
            break
        b.feed(op)
    refused = [r for r in b.of("refused") if r["input"] == "cover"]
    assert len(refused) == MAX_SAME_COMMAND and b.core.state == "cutting"
    assert told == [auto.gave_up] and f"cover was given {MAX_SAME_COMMAND} times in a row while the table was cutting" in told[0]
    assert auto.next_input(b.core) is None and told == [auto.gave_up]  # said once; nothing more given


@pytest.mark.parametrize("preset", ["minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat"])
def test_the_automated_dealer_plays_whole_shoes(preset: str) -> None:
    from controller.table.autodealer import AutoDealer

    b = Bench(preset, seed=3)
    auto = AutoDealer(seed=3)
    for _ in range(20000):
        op = auto.next_input(b.core)
        if op is None:
            break
        b.feed(op)
        if len({r.shoe for r in b.records if r.kind == "round_result"}) >= 2:
            break
    results = b.of("round_result")
    assert len(results) > 50
    assert not b.of("refused"), b.of("refused")[:3]
    assert {r.payload["shoe"] for r in b.records if r.kind == "shoe_start"} >= {"T1-S0001", "T1-S0002"}
    staked = sum(w["amount"] for r in b.of("round_start") for w in r["wagers"])
    settled = sum(s["amount"] for s in b.of("settlement") if s["kind"] != "house_money")
    hm = sum(s["amount"] for s in b.of("settlement") if s["kind"] == "house_money")
    assert staked == settled + hm - sum(a["amount"] for a in b.of("house_money_added"))


def _auto_turns(b: Bench, auto, turns: int, until=lambda b: False) -> None:
    for _ in range(turns):
        if until(b):
            return
        op = auto.next_input(b.core)
        if op is None:
            return
        b.feed(op)


@pytest.mark.reg("681a.7(c)")
@pytest.mark.parametrize("preset", ["minibaccarat", "midibaccarat"])
def test_a_table_a_person_dealt_resumed_with_the_automated_dealer_is_signed_in_and_dealt_on(preset: str) -> None:
    """681a.7(c): "Each new dealer who comes to the table shall also remove one card and place it
    in the discard rack before dealing any cards to the players." A review of restarts: a table a person (d1) dealt, resumed with the automated dealer (`shoectl run
    --automated`), refused the automated dealer's every command ("auto-dealer is not the dealer at
    this table (d1 is)"), 500 times, and the run gave up. The automated dealer signs in as a new
    dealer does and burns; a round of d1's in progress is completed by the automated floorperson."""
    from controller.roles import AUTOMATED_DEALER
    from controller.table.autodealer import AutoDealer

    b = Bench(preset, seed=3)
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.op("wager", Role.DEALER, seat=2, kind="banker", amount=100)
    b.op("no_more_bets", Role.DEALER)
    for _ in range(4):
        b.draw()  # d1's round, its four cards out (at the squeeze at Midibaccarat)
    assert b.core.dealer_operator == "fp1"  # the person dealing (the bench's operator)
    b.core.restarted("automated")  # the controller started again, with the automated dealer
    b.auto_deal = True
    while b.core.state == "dealing":
        b.draw()  # the round's third cards, as the shoe prompts them
    auto = AutoDealer(seed=3)
    _auto_turns(b, auto, 3000, until=lambda b: b.kinds().count("round_result") >= 6)
    assert not [r for r in b.of("refused") if r.get("operator") == AUTOMATED_DEALER], b.of("refused")[:3]
    assert b.of("dealer")[-1] == {"dealer": "automated dealer"} and b.core.dealer_operator == AUTOMATED_DEALER
    assert b.kinds().count("round_result") >= 6 and auto.gave_up is None
    signed = b.kinds().index("dealer")
    assert "burn" in b.kinds()[signed:b.kinds().index("round_start", signed)]  # the new dealer's burn first


@pytest.mark.reg("681a.7(c)")
def test_a_table_the_automated_dealer_dealt_resumed_for_operators_takes_a_new_dealers_sign_in() -> None:
    """681a.7(c): "Each new dealer who comes to the table shall also remove one card and place it
    in the discard rack before dealing any cards". A review of restarts: resumed
    for operators, a table the automated dealer had dealt refused every person's dealer_sign_in
    ("the automated dealer deals at this table") with no automated dealer running: no person could
    deal. The start record says who drives from there (``driver``): a person signs in, then burns."""
    from controller.table.autodealer import AutoDealer

    b = Bench(seed=3)
    auto = AutoDealer(seed=3)
    _auto_turns(b, auto, 3000, until=lambda b: b.kinds().count("round_result") >= 2 and b.core.state == "betting"
                and b.core.prompt == "PLACE BETS" and not b.core.pending_wagers)
    b.op("dealer_sign_in", Role.DEALER, operator="d2", dealer="Ann")
    assert b.of("refused")[-1]["reason"].startswith("the automated dealer deals at this table")  # it still runs
    b.core.restarted("operators")
    b.op("wager", Role.DEALER, operator="d2", seat=1, kind="player", amount=100)
    assert b.of("refused")[-1]["reason"].startswith("d2 is not the dealer at this table (the automated dealer was, "
                                                    "which deals no more): a new dealer signs in first")
    b.op("dealer_sign_in", Role.DEALER, operator="d2", dealer="Ann")
    assert b.of("dealer")[-1] == {"dealer": "Ann"} and b.core.dealer_operator == "d2"
    assert b.kinds()[-2:] == ["dealer", "burn"]  # the new dealer's burn (the bench draws it at the prompt)


def test_a_table_a_person_dealt_resumed_with_the_automated_dealer_while_jammed_is_cleared_and_dealt_on() -> None:
    """A review of the day's changes: resumed with the automated dealer while a jam held a
    person's round, the automated floorperson did nothing (the run sat silent): it clears what it
    may whoever deals, then the round goes on and the automated dealer signs in between rounds."""
    from controller.roles import AUTOMATED_DEALER
    from controller.table.autodealer import AutoDealer
    from firmware_bridge.protocol import messages as m

    b = Bench(seed=3)
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.op("wager", Role.DEALER, seat=2, kind="banker", amount=100)
    b.op("no_more_bets", Role.DEALER)
    b.draw()
    b.event("shoe", m.Jam(m.JamLocation.SHOE_EXIT))
    assert b.core.state == "fault" and b.core.dealer_operator == "fp1"
    b.core.restarted("automated")
    b.auto_deal = True
    auto = AutoDealer(seed=3)
    _auto_turns(b, auto, 200, until=lambda b: b.core.state != "fault")
    assert b.of("fault_cleared")[-1]["by"] == "auto-floor" and b.core.state != "fault"
    while b.core.state == "dealing":
        b.draw()
    _auto_turns(b, auto, 3000, until=lambda b: b.kinds().count("round_result") >= 3)
    assert b.core.dealer_operator == AUTOMATED_DEALER and b.kinds().count("round_result") >= 3 and auto.gave_up is None
