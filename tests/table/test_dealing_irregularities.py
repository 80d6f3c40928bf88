"""Irregularities in the deal (627a.13): a card drawn in error, an unauthorised third card (undisclosed
or disclosed, per the Rules Submission), a face-up card found in the shoe, a shoe that runs out
mid-round, through the table core's inputs and outputs (sans-I/O), with scripted devices
(bench.py)."""
from __future__ import annotations

import dataclasses

import pytest
from bench import P_WINS, SUIT_CODE, Bench, after_a_four_card_round, stack_with

from controller.rules.cards import parse_cards
from controller.rules.submission import load_preset
from controller.roles import Role
from firmware_bridge.protocol import CardRead, CoverCard, Door


# -- 627a.13 -----------------------------------------------------------------------------------------
@pytest.mark.reg("627a.13(a)")
def test_undisclosed_card_drawn_in_error_is_the_first_card_of_the_next_hand() -> None:
    """627a.13(a): "a card drawn in error from the dealing shoe that is not disclosed shall be used as
    the first card of the next hand of play": drawn face down between rounds, it is held and is the
    next round's first card, journaled at its place in the shoe."""
    b = Bench()
    b.open_and_cut()
    b.draw()  # between rounds, face down
    held = b.of("irregularity")[-1]["card"]
    b.play_round([(1, "player", 100)])
    assert b.of("card")[0] == {"card": held, "to": "player", "position": 2, "n": 1}  # its place in the shoe


@pytest.mark.reg("627a.13(b)")
def test_unauthorised_player_third_card_when_banker_stands_is_next_hands_first_card() -> None:
    """627a.13(b): an undisclosed third card dealt to the Player's Hand when none is authorized: "If the
    Banker's Hand is required to stay, the card dealt in error shall become the first card of the next
    hand of play". The round ended on four cards; the fifth card drawn face down is held."""
    front = P_WINS + parse_cards("9S")
    b = Bench(stack=stack_with(front), auto_deal=True)
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    assert b.core.state == "betting" and b.of("round_result")[-1]["cards_used"] == 4
    b.auto_deal = False
    b.draw()  # the dealer wrongly draws a fifth card, face down
    d = b.of("irregularity")[-1]
    assert d["clause"] == "627a.13(b)" and d["action"] == "next-hand-first-card"
    assert b.core.aside.held is not None


@pytest.mark.reg("627a.13(c)", "627a.13(c)(1)", "627a.13(c)(2)")
@pytest.mark.parametrize("option, action", [("discard", "discard-with-one-more"), ("simulated-round", "simulated-round")])
def test_disclosed_unauthorised_third_card_follows_the_rules_submission(option: str, action: str) -> None:
    """627a.13(c): the Banker stays, so the dealer follows "one of the following procedures designated in
    the certificate holder's Rules Submission": (c)(1) "Place the disclosed card and one additional
    card, drawn face down from the dealing shoe, into the discard rack" (two discards, then betting),
    or (c)(2) "Use the disclosed card as the first card of a simulated round of play"."""
    sub = dataclasses.replace(load_preset("minibaccarat"), unauthorized_third_card=option)
    b = Bench(stack=stack_with(P_WINS + parse_cards("9S,AS,2S,3S,4S,5S,6S")), submission=sub)
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    b.draw(face_up=True)
    assert b.of("irregularity")[-1]["action"] == action
    if option == "discard":
        assert [d["reason"] for d in b.of("discard")] == ["627a.13(c)(1)", "627a.13(c)(1)"]
        assert b.core.state == "betting"
    else:
        assert b.of("round_result")[-1]["kind"] == "simulated"
        assert b.of("round_result")[-1]["dealt"][0]["card"] == "9S"


@pytest.mark.reg("627a.13(c)", "627a.13(c)(1)", "627a.13(d)")
@pytest.mark.parametrize("wagers", ["return", "stay"])
def test_a_simulated_round_s_unauthorised_third_card_follows_c_not_d(wagers: str) -> None:
    """627a.13(c): "If a third card dealt to the Player's Hand, when a third card is not authorized
    under § 627a.10, is disclosed at the time it is dealt or is found face up in the dealing shoe",
    with the Banker staying, the dealer follows the Rules Submission's procedure; (d) applies
    "Except as provided in subsection (c)". A simulated round's cards "shall be dealt in accordance
    with this chapter", 627a.10 included: a disclosed fifth card after a simulated round that ended
    on four cards is its Player's unauthorised third card, and (c)(1) has the dealer "Place the
    disclosed card and one additional card, drawn face down from the dealing shoe, into the
    discard rack".
    It opened another simulated round under (d) (a regulation review). Wagers kept on the layout
    through the simulated round were placed before it; one placed since makes the card one drawn
    in error before the next hand, (d)."""
    sub = dataclasses.replace(load_preset("minibaccarat"), unauthorized_third_card="discard",
                              simulated_round_wagers=wagers)
    b = Bench(stack=stack_with(P_WINS + parse_cards("9S,AS,2S,3S,4S,5S,6S,7S,8S,9D,AD,2D")), submission=sub)
    b.open_and_cut()
    b.face_up_at.add(b.drawn + 1)  # the first card of the round is found face up: a simulated round, (d)
    b.play_round([(1, "player", 100)])
    b.auto_deal = False
    assert b.of("round_result")[-1]["kind"] == "simulated" and b.of("round_result")[-1]["cards_used"] == 4
    assert len(b.core.pending_wagers) == (1 if wagers == "stay" else 0)
    b.draw(face_up=True)  # a fifth card, disclosed: the Player was not entitled, the Banker stays
    decision = b.of("irregularity")[-1]
    assert (decision["clause"], decision["action"]) == ("627a.13(c)(1)", "discard-with-one-more")
    b.draw()  # the additional card, face down
    assert [d["reason"] for d in b.of("discard")] == ["627a.13(c)(1)", "627a.13(c)(1)"]
    assert b.core.state == "betting" and b.core.prompt == "PLACE BETS"


def test_after_a_simulated_round_a_card_drawn_once_a_wager_is_placed_is_one_drawn_in_error() -> None:
    """The other side of the test above: a wager for the next round placed after the simulated
    round ended, then a disclosed card: a card drawn in error before the next hand, (d)."""
    sub = dataclasses.replace(load_preset("minibaccarat"), unauthorized_third_card="discard",
                              simulated_round_wagers="stay")
    b = Bench(stack=stack_with(P_WINS + parse_cards("9S,AS,2S,3S,4S,5S,6S,7S,8S,9D,AD,2D")), submission=sub)
    b.open_and_cut()
    b.face_up_at.add(b.drawn + 1)
    b.play_round([(1, "player", 100)])
    b.auto_deal = False
    b.op("wager", Role.DEALER, seat=3, kind="banker", amount=50)
    b.draw(face_up=True)
    assert b.of("irregularity")[-1]["clause"] == "627a.13(d)"


@pytest.mark.reg("627a.13(c)(1)", "627a.13(d)")
def test_the_additional_card_of_c1_is_drawn_face_down_one_found_face_up_opens_a_simulated_round() -> None:
    """627a.13(c)(1): "Place the disclosed card and one additional card, drawn face down from the
    dealing shoe, into the discard rack without disclosing the additional card." A card that comes
    out face up instead is disclosed: it is a card found face up in the shoe, (d), and opens a
    simulated round; the face-down card is still owed, and only it goes with the first to the rack.
    627a.13(d): "if a card is disclosed at the time it is dealt", "the dealer shall use the disclosed
    card as the first card of a simulated round of play in which wagers may not be accepted"."""
    b = after_a_four_card_round()
    b.draw(face_up=True)  # the unauthorised third card, disclosed: (c)(1)
    b.draw(face_up=True)  # the additional card comes out face up
    assert b.core.prompt == "BURN @8" and b.core.aside.discards_owed == 1
    b.draw()  # the face-down additional card
    assert [(d["card"], d["reason"]) for d in b.of("discard")] == [("9S", "627a.13(c)(1)"), ("2S", "627a.13(c)(1)")]
    assert [(i["card"], i["clause"]) for i in b.of("irregularity")] == [("9S", "627a.13(c)(1)"), ("AS", "627a.13(d)")]
    assert b.of("round_start")[-1] == {"round": 2, "kind": "simulated", "wagers": []}
    assert b.of("held_card_used")[-1] == {"card": "AS", "clause": "627a.13(d)"}


@pytest.mark.reg("627a.13(c)(1)")
def test_after_the_c1_discard_the_dealer_is_asked_for_wagers_again() -> None:
    """627a.13(c)(1): "Place the disclosed card and one additional card, drawn face down from the dealing
    shoe, into the discard rack": the shoe prompts for that one card, and once it is in the rack the
    table asks for wagers again."""
    b = after_a_four_card_round()
    b.draw(face_up=True)
    assert b.core.prompt == "BURN @7"
    b.draw()
    assert b.core.prompt == "PLACE BETS" and b.core.state == "betting" and b.core.aside.discards_owed == 0


@pytest.mark.reg("627a.13(c)", "627a.13(d)")
@pytest.mark.parametrize("wager_meanwhile, clause, action", [(False, "627a.13(c)(1)", "discard-with-one-more"),
                                                            (True, "627a.13(d)", "simulated-round")])
def test_a_disclosed_card_after_a_four_card_round_is_its_players_third_card_until_the_next_wager(
        wager_meanwhile: bool, clause: str, action: str) -> None:
    """(d) applies "Except as provided in subsection (c)", and (c) to "a third card dealt to the
    Player's Hand". The shoe does not say which hand a card went to: the card right after a
    four-card round is that round's Player's third card until a wager for the next round is placed
    (docs/irregularities.md, "What the regulation leaves open"); after one, it is a card drawn in
    error before the next hand, disclosed: (d)."""
    b = after_a_four_card_round()
    if wager_meanwhile:
        b.op("wager", Role.DEALER, seat=2, kind="banker", amount=100)
    b.draw(face_up=True)
    assert [(i["clause"], i["action"]) for i in b.of("irregularity")] == [(clause, action)]


@pytest.mark.reg("627a.13(d)")
def test_face_up_card_found_in_the_shoe_opens_a_simulated_round_without_wagers() -> None:
    """627a.13(d): "if ... a card is found face up in the dealing shoe, the dealer shall use the
    disclosed card as the first card of a simulated round of play in which wagers may not be
    accepted": the round becomes a simulated one and the wager placed for it is returned."""
    b = Bench()
    b.open_and_cut()
    b.face_up_at.add(b.drawn + 1)  # the next card out is face up
    recs = b.play_round([(1, "player", 100)])
    assert any(r.kind == "irregularity" and r.payload["clause"] == "627a.13(d)" for r in recs)
    res = [r.payload for r in recs if r.kind == "round_result"][0]
    assert res["kind"] == "simulated"
    returned = [r.payload for r in recs if r.kind == "settlement"]
    assert returned == [{"seat": 1, "kind": "player", "amount": 100, "result": "push", "win": 0, "commission": 0, "net": 0}]


@pytest.mark.reg("627a.13(d)")
@pytest.mark.parametrize("new_dealer", [False, True], ids=["burn-after-the-load", "new-dealers-burn"])
def test_a_burn_card_found_face_up_opens_a_simulated_round_and_the_burn_is_still_owed(new_dealer: bool) -> None:
    """627a.13(d): "if ... a card is found face up in the dealing shoe, the dealer shall use the
    disclosed card as the first card of a simulated round of play in which wagers may not be
    accepted", whatever the dealer drew it for: a card that comes out face up as the burn card
    (after the load, or a new dealer's) opens one, and the next card, face down, is the burn.
    Before, it was burned as if face down, with nothing on record."""
    b = Bench()
    if new_dealer:
        b.open_and_cut()
        b.face_up_at.add(b.drawn + 1)
        b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    else:
        b.face_up_at.add(1)
        b.open_and_cut()
    [found] = b.of("irregularity")
    assert (found["clause"], found["action"]) == ("627a.13(d)", "simulated-round")
    burn = b.of("burn")[-1]
    assert burn["position"] == found["position"] + 1 and burn["card"] != found["card"]
    [start] = b.of("round_start")
    assert start == {"round": 1, "kind": "simulated", "wagers": []}
    assert b.of("held_card_used") == [{"card": found["card"], "clause": "627a.13(d)"}]
    assert b.of("round_result")[0]["dealt"][0] == {"card": found["card"], "to": "player"}


@pytest.mark.reg("627a.13(c)", "627a.13(d)")
def test_a_card_after_a_new_dealers_burn_is_not_the_last_rounds_third_card() -> None:
    """(c) is about "a third card dealt to the Player's Hand"; (d) applies "Except as provided in
    subsection (c)". A round ended on four cards, then a new dealer burned a card: the round is
    over, and a card then drawn face up, before any wager, is a card drawn in error and disclosed,
    (d), not that round's Player's third card. Before, it was taken for (c)(1) and a second card
    went to the discard rack with it."""
    sub = dataclasses.replace(load_preset("minibaccarat"), unauthorized_third_card="discard")
    b = Bench(stack=stack_with(P_WINS + parse_cards("AC,9S,AS,2S,3S,4S,5S,6S")), submission=sub)
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    b.auto_deal = False
    b.draw(face_up=True)
    assert [(i["clause"], i["action"]) for i in b.of("irregularity")] == [("627a.13(d)", "simulated-round")]
    assert b.of("discard") == []


@pytest.mark.reg("627a.13(a)")
def test_a_second_undisclosed_card_drawn_in_error_opens_the_hand_after_the_next() -> None:
    """627a.13(a): "a card drawn in error from the dealing shoe that is not disclosed shall be used
    as the first card of the next hand of play". The next hand has one first card: the first such
    card opens it; a second one opens the hand after it (an examiner's review: it went to the
    discard rack, which nothing in the clause allows). Both decisions are on record, in order."""
    b = Bench()
    b.open_and_cut()
    b.cards_drawn_in_error(2)
    first, second = b.of("irregularity")
    assert (first["clause"], first["action"], first["position"]) == ("627a.13(a)", "next-hand-first-card", 2)
    assert (second["clause"], second["action"], second["position"]) == ("627a.13(a)", "next-hand-first-card", 3)
    assert not b.of("discard")
    b.auto_deal = True
    b.play_round([])  # the wager placed before the cards drawn in error is on the layout
    b.play_round([(1, "banker", 100)])
    used = b.of("held_card_used")
    assert [u["card"] for u in used] == [first["card"], second["card"]]
    rounds = [r for r in b.records if r.kind in ("round_start", "held_card_used")]
    assert [r.kind for r in rounds] == ["round_start", "held_card_used"] * 2  # one first card a hand


@pytest.mark.reg("627a.13(e)")
def test_shoe_running_out_mid_round_voids_it_returns_wagers_and_reshuffles() -> None:
    """627a.13(e): "If there are insufficient cards remaining in the dealing shoe to complete a round of
    play, that round shall be void and all wagers shall be returned. A new round shall commence after
    the entire set of cards are reshuffled and placed in the dealing shoe."
    """
    b = Bench()
    b.open_and_cut()
    b.stack = b.stack[: b.drawn + 2]  # only two cards left
    b.cover_index = None
    recs = b.play_round([(1, "player", 100), (2, "tie", 5)])
    res = [r.payload for r in recs if r.kind == "round_result"][-1]
    assert res["kind"] == "void"
    assert all(s["result"] == "push" for s in (r.payload for r in recs if r.kind == "settlement"))
    assert b.core.state == "cutting"  # the entire set reshuffled


# -- a card disclosed as it was dealt, said by the floorperson (627a.13(c)-(d)) -----------------------
@pytest.mark.reg("627a.13(c)", "627a.13(c)(1)", "627a.13(c)(2)")
@pytest.mark.parametrize("option", ["discard", "simulated-round"])
def test_a_players_third_card_said_disclosed_as_it_was_dealt_follows_c(option: str) -> None:
    """627a.13(c): "If a third card dealt to the Player's Hand, when a third card is not authorized
    under § 627a.10, is disclosed at the time it is dealt or is found face up in the dealing shoe",
    the Banker staying, the dealer follows the Rules Submission's procedure: (c)(1) "Place the
    disclosed card and one additional card, drawn face down from the dealing shoe, into the discard
    rack", or (c)(2) "Use the disclosed card as the first card of a simulated round of play". The
    shoe reads a card face down: only a person sees that it was disclosed as it was dealt. Held under (b) as the next
    hand's first card, the floorperson's ``card_disclosed`` decides it again under (c): it never
    opens the next hand (the shoe alone had no way to record the disclosure: a regulation review)."""
    b = after_a_four_card_round(option)
    b.draw()  # the fifth card, face down: (b), held for the next hand
    assert b.of("irregularity")[-1]["clause"] == "627a.13(b)" and b.core.aside.held is not None
    b.op("card_disclosed")
    decision = b.of("irregularity")[-1]
    assert decision["clause"] == ("627a.13(c)(1)" if option == "discard" else "627a.13(c)(2)")
    assert decision["card"] == "9S" and b.core.aside.held is None
    if option == "discard":
        assert b.of("discard")[-1] == {"card": "9S", "position": 6, "reason": "627a.13(c)(1)"}
        assert b.core.prompt == "BURN @7"  # the one additional card, face down
        b.draw()
        assert [d["reason"] for d in b.of("discard")] == ["627a.13(c)(1)", "627a.13(c)(1)"]
        assert b.core.prompt == "PLACE BETS"
    else:
        assert b.of("round_start")[-1] == {"round": 2, "kind": "simulated", "wagers": []}
        assert b.of("held_card_used")[-1] == {"card": "9S", "clause": "627a.13(c)(2)"}


@pytest.mark.reg("627a.13(d)")
def test_a_card_drawn_in_error_said_disclosed_as_it_was_dealt_opens_a_simulated_round() -> None:
    """627a.13(d): "if a card is disclosed at the time it is dealt ..., the dealer shall use the
    disclosed card as the first card of a simulated round of play in which wagers may not be
    accepted". A card drawn in error before the next hand, face down, is held under (a); said
    disclosed by the floorperson, it opens a simulated round instead, and the next real round's
    first card is the next card out of the shoe."""
    b = Bench()
    b.open_and_cut()
    b.draw()  # between rounds, face down: (a)
    held = b.of("irregularity")[-1]
    assert held["clause"] == "627a.13(a)"
    b.op("card_disclosed")
    assert b.of("irregularity")[-1]["clause"] == "627a.13(d)" and b.core.aside.held is None
    assert b.of("round_start")[-1]["kind"] == "simulated"
    assert b.of("held_card_used")[-1]["clause"] == "627a.13(d)"


def test_only_the_held_card_that_is_the_last_out_can_be_said_disclosed_and_a_refusal_changes_nothing() -> None:
    """Nothing held, a card out of the shoe after the held one, or a dealer saying it: refused,
    the table as it was."""
    b = after_a_four_card_round()
    b.op("card_disclosed")
    assert b.of("refused")[-1]["reason"] == ("no card drawn in error waits for the next hand as the last card out "
                                             "of the shoe (burns aside)")
    b.draw()  # (b): held
    before = b.core.snapshot()
    b.op("card_disclosed", Role.DEALER, operator="d1")
    assert "needs a floorperson or above" in b.of("refused")[-1]["reason"]
    assert b.core.snapshot() == before and b.core.aside.held is not None
    b.draw()  # another card drawn in error: held for the hand after it; the first is not the last out
    first = b.core.aside.held
    b.op("card_disclosed")  # the second, the last out, is the one said disclosed: (d)
    assert b.core.aside.held is first and b.core.aside.held_later == []
    assert b.of("round_start")[-1]["kind"] == "simulated"


@pytest.mark.reg("627a.13(c)", "627a.13(c)(1)")
@pytest.mark.parametrize("door_open_for_the_burn", [False, True])
def test_a_held_card_said_disclosed_after_a_new_dealers_burn_still_follows_c(door_open_for_the_burn: bool) -> None:
    """A floorperson review: the card held under (b) as the next hand's first card, then a new
    dealer's burn (681a.7(c)): `card_disclosed` was refused as if the burn had taken the held
    card's place, though the table still dealt it as the next hand's first card, with wagers on
    it. A burn takes no hand's place: the held card is decided again under (c) ("Place the
    disclosed card and one additional card, drawn face down from the dealing shoe, into the
    discard rack"), and the next hand opens with the next card."""
    b = after_a_four_card_round("discard")
    b.draw()  # the fifth card, face down: (b), held
    assert b.of("irregularity")[-1]["clause"] == "627a.13(b)"
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    assert b.core.prompt.startswith("BURN")
    if door_open_for_the_burn:  # the burn taken while a fault held the table, applied when it clears (a review)
        b.event("shoe", Door(True))
        b.draw()
        b.event("shoe", Door(False))
    else:
        b.draw()  # the new dealer's burn
    assert b.of("burn")[-1]["dealer"] == "D2" and b.core.aside.held is not None
    b.op("card_disclosed")
    decision = b.of("irregularity")[-1]
    assert decision["clause"] == "627a.13(c)(1)" and decision["card"] == "9S" and b.core.aside.held is None
    b.draw()  # the one additional card, face down
    assert [d["reason"] for d in b.of("discard")] == ["627a.13(c)(1)", "627a.13(c)(1)"]
    b.play_round([(1, "player", 100)])
    assert "9S" not in [c["card"] for c in b.of("card")[-6:]]  # the disclosed card opened no hand


@pytest.mark.reg("627a.13(e)")
def test_a_card_on_its_way_when_the_round_is_voided_is_on_record_with_the_ended_shoe() -> None:
    """627a.13(e): "that round shall be void and all wagers shall be returned. A new round shall
    commence after the entire set of cards are reshuffled" (the floorperson's void). A review
    of races: a card drawn for the Player, its read still on the line when the floorperson voided
    the round, came after the void, and the warning said "not dealt" (read as never drawn). The
    void's round_result has the cards read before it; the late card is a discard of the ended shoe,
    collected with its cards, and the people are told it may have been on its way."""
    b = Bench(seed=3)
    b.open_and_cut()
    b.cards_into_a_round(2)
    shoe = b.core.shoe.id
    b.op("void_round", Role.FLOORPERSON, reason="a race")
    void = b.of("round_result")[-1]
    assert void["kind"] == "void" and len(void["cards"]) == 2
    b.draw()  # the third card, drawn before the void, read after it
    late = [r for r in b.records if r.kind == "discard"][-1]
    assert late.shoe == shoe and "which has ended: collected with its cards" in late.payload["reason"]
    assert late.payload["position"] == b.drawn
    said = b.notices[-1].text
    assert said.startswith(f"card {late.payload['card']} read after shoe {shoe} ended (on its way when it ended, at "
                           "a void") and said.endswith("to the discard rack with its cards, in no hand")


@pytest.mark.reg("627a.13(c)(1)", "681a.7(d)")
def test_the_cover_card_out_in_place_of_the_c1_additional_card_ends_the_shoe() -> None:
    """627a.13(c)(1): "one additional card, drawn face down from the dealing shoe, into the discard
    rack"; 681a.7(d): when the cover card appears, "Collect and reshuffle the cards". An examiner's
    review: the cover card came out where the additional card was drawn, between rounds; the
    dealer stops at a cover card, and the table kept prompting BURN and waited for ever, no fault.
    No round comes before the reshuffle: the additional card is not owed any more, and the shoe
    ends as it does in a new dealer's burn."""
    b = after_a_four_card_round()
    b.draw(face_up=True)  # the unauthorised third card, disclosed: (c)(1), one more card owed
    assert b.core.aside.discards_owed == 1 and b.core.prompt.startswith("BURN")
    shoe = b.core.shoe.id
    b.event("shoe", CoverCard(b.drawn + 1))  # the cover card is next out; the dealer stops there
    assert b.of("cover_card")[-1]["during_round"] is False
    assert b.core.aside.discards_owed == 0 and b.core.state not in ("betting", "burning")
    assert b.of("reconciliation") and b.kinds().count("shoe_start") == 2 and b.core.shoe.id != shoe
    assert any("the cover card came out during the burn (1 cards still to burn)" in n.text for n in b.notices)
    assert [d["reason"] for d in b.of("discard")] == ["627a.13(c)(1)"]  # the disclosed card alone


@pytest.mark.reg("627a.13(d)", "681a.7(d)")
@pytest.mark.parametrize("face_up", [True, False])
def test_a_card_drawn_after_the_cover_cards_round_is_on_record_disclosed_or_not(face_up: bool) -> None:
    """627a.13(d): "if a card is disclosed at the time it is dealt or a card is found face up in the
    dealing shoe, the dealer shall use the disclosed card as the first card of a simulated round";
    681a.7(d): "the cover card shall be removed and placed to the side and the hand shall be
    completed", then the cards are collected and reshuffled, so no round of the ended shoe can take
    the card. A review: the shoe's next card,
    drawn in error after the cover card's round ended on four cards, went to the discard rack with
    no word of whether it was disclosed. Its discard says so, and the warning names it face up."""
    b = Bench(stack=stack_with(P_WINS + parse_cards("9S,AS")))
    b.open_and_cut()
    shoe = b.core.shoe.id
    b.event("shoe", CoverCard(b.drawn + 1))  # the cover card out before the round: it is completed, then the shoe ends
    b.play_round([(1, "player", 100)])
    assert b.of("reconciliation") and b.core.shoe.id != shoe and b.core.shoe.loaded_count is None  # the next one shuffling
    nine = parse_cards("9S")[0]  # the ended shoe's next card, drawn in error (the bench has the next stack already)
    b.event("shoe", CardRead(nine.rank, SUIT_CODE[nine.suit], face_up, 7, 7000))
    late = [r for r in b.records if r.kind == "discard"][-1]
    assert late.shoe == shoe and late.payload["card"] == "9S" and late.payload["disclosed"] is face_up
    assert b.notices[-1].text.startswith(f"card 9S{', face up,' if face_up else ''} read after shoe {shoe} ended")
