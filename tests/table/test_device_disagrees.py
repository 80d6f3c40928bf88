"""The table core when a device disagrees with what the controller knows (sans-I/O, scripted
devices from bench.py): a device that comes back as another device (a new event epoch), a shoe
that passes the cover card's position without a cover card, a shoe that loads another number of
cards than the stack. The controller never goes on as if nothing happened."""
from __future__ import annotations

import pytest
from bench import Bench

from controller.table.autodealer import AutoDealer
from controller.table.core import TableCore
from controller.table.io import DeviceStatus
from controller.roles import Role
from firmware_bridge.protocol import messages as m


def dealing(b: Bench) -> Bench:
    """Connect both devices, open, cut, load; one round with a wager, two cards out."""
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "player", 100), (3, "banker", 500)])
    b.draw()
    b.draw()
    assert b.core.state == "dealing" and len(b.core.round.cards) == 2
    return b


@pytest.mark.reg("627a.13(e)", "681a.7(d)(1)")
def test_a_shoe_back_with_a_new_event_epoch_voids_the_round_and_the_cards_are_reshuffled() -> None:
    """627a.13(e): "If there are insufficient cards remaining in the dealing shoe to complete a
    round of play, that round shall be void and all wagers shall be returned. A new round shall
    commence after the entire set of cards are reshuffled and placed in the dealing shoe."
    681a.7(d)(1): "Collect and reshuffle the cards by removing the cards remaining in the shoe and
    placing them in the discard rack to ensure that no cards are missing."
    A shoe whose event counter restarted has lost its memory and its cards: it once resumed
    "dealing" and prompted DRAW to an empty shoe forever."""
    b = dealing(Bench())
    b.link("shoe", False)
    b.link("shuffler", False)
    b.auto_deal = True
    b.link("shoe", True, serial="SO-1", epoch=99)      # a new device behind the same port
    assert b.core.state == "fault"                     # the shuffler's link still holds the table
    assert b.of("device_replaced")[-1] == {"device_role": "shoe", "serial": "SO-1", "epoch": 99, "state": "dealing",
                                           "shoe_lost": True, "reason": b.of("device_replaced")[-1]["reason"]}
    assert "epoch 99, was 2" in b.of("device_replaced")[-1]["reason"]
    assert not b.of("round_result")
    b.link("shuffler", True, serial="SH-1", epoch=1)   # the same shuffler: a plain reconnect
    void = b.of("round_result")[-1]
    assert void["kind"] == "void" and "new device" in void["reason"] and len(void["cards"]) == 2
    assert sorted((s["seat"], s["result"], s["amount"]) for s in b.of("settlement")) == [
        (1, "push", 100), (3, "push", 500)]
    assert b.of("reconciliation")[-1]["left_shoe"] == 3   # the burn and two cards
    assert not b.of("resumed")
    assert b.core.shoe.id.endswith("S0002") and b.core.state == "cutting" and not b.core.faults


def test_the_same_device_reconnecting_resumes_exactly_where_it_stopped() -> None:
    b = dealing(Bench())
    b.link("shoe", False)
    b.link("shoe", True, serial="SO-1", epoch=2)
    assert b.core.state == "dealing" and b.of("resumed")[-1] == {"state": "dealing"}
    assert not b.of("device_replaced") and not b.of("round_result")


def test_another_unit_found_when_the_controller_restarts_gives_the_shoe_up() -> None:
    """No link was seen going down (the controller itself was restarted): the journal's inputs
    rebuild the core, and the device that answers now is another unit."""
    b = dealing(Bench())
    again = TableCore(b.sub)
    again.recover(b.inputs)
    assert again.state == "dealing" and again.devices == {"shuffler": ("SH-1", 1), "shoe": ("SO-1", 2)}
    b.core = again
    b.link("shoe", True, serial="SO-2", epoch=5)
    assert "another unit answers (serial SO-2, was SO-1)" in b.of("device_replaced")[-1]["reason"]
    assert b.of("round_result")[-1]["kind"] == "void"
    assert b.core.state == "cutting" and b.core.shoe.id.endswith("S0002")


def test_a_shuffler_replaced_while_the_round_is_dealt_loses_no_cards() -> None:
    """The shuffler holds nothing of the shoe in play while the shoe deals: the change is
    journaled and said, and the round goes on."""
    b = dealing(Bench())
    b.link("shuffler", False)
    b.link("shuffler", True, serial="SH-1", epoch=7)
    assert b.of("device_replaced")[-1]["shoe_lost"] is False
    assert b.core.state == "dealing" and not b.of("round_result")
    assert any("shuffler came back as a new device" in n.text for n in b.notices)


def test_the_lost_shoe_waits_for_a_misread_no_longer() -> None:
    """A misread card of the lost shoe is not waited for: the shoe it belongs to is given up."""
    b = dealing(Bench())
    b.event("shoe", m.CardRead(0xFF, 0xFF, False, 5, 5000))
    assert "misread" in b.core.faults
    b.link("shoe", False)
    b.link("shoe", True, serial="SO-1", epoch=3)
    assert not b.core.faults and b.core.state == "cutting" and b.of("round_result")[-1]["kind"] == "void"


@pytest.mark.reg("681a.7(d)(1)", "681a.7(l)")
def test_the_cards_drawn_while_the_lost_shoe_was_held_are_collected_on_record() -> None:
    """681a.7(d)(1): "Collect and reshuffle the cards by removing the cards remaining in the shoe
    and placing them in the discard rack to ensure that no cards are missing"; 681a.7(l): the
    cards go to "the discard rack in a manner that permits the reconstruction of each hand". A card
    drawn while a fault held the table, and a misread one, are out of the shoe: when the shoe is
    given up they are collected on record (a ``discard`` each, by position), not forgotten."""
    b = dealing(Bench())
    b.event("shoe", m.Door(True))
    b.event("shoe", m.CardRead(0xFF, 0xFF, False, 4, 5000))  # misread while the door is open
    b.event("shoe", m.CardRead(6, 2, False, 5, 5001))         # then one more card: deferred
    assert [d["position"] for d in b.of("card_deferred")] == [5]
    b.link("shoe", False)
    b.link("shoe", True, serial="SO-1", epoch=3)             # its memory lost: the shoe is given up
    b.event("shoe", m.Door(False))
    assert b.of("round_result")[-1]["kind"] == "void" and b.core.state == "cutting"
    discards = {d["position"]: d["card"] for d in b.of("discard")}
    assert discards == {4: None, 5: "6H"}
    out = [r.payload["position"] for r in b.records if r.kind in ("card", "burn", "discard")
           and r.shoe.endswith("S0001")]
    assert sorted(out) == [1, 2, 3, 4, 5] and b.of("reconciliation")[-1]["left_shoe"] == 5


@pytest.mark.reg("681a.7(d)(1)")
@pytest.mark.parametrize("ended_by", ["order_reshuffle", "close"])
def test_a_card_out_of_the_shoe_after_it_ended_is_collected_with_its_cards(ended_by: str) -> None:
    """681a.7(d)(1): when a shoe ends, "Collect and reshuffle the cards by removing the cards
    remaining in the shoe and placing them in the discard rack to ensure that no cards are
    missing". A card that comes out of the shoe after it ended (its cards not yet taken out) is
    one of those cards: it goes to the discard rack on record under the ended shoe. It is not
    counted in the next stack, nor held as the first card of that stack's first hand (627a.13(a)
    is about the shoe in play)."""
    b = Bench()
    b.open_and_cut()
    assert b.core.state == "betting"
    b.op(ended_by)
    assert b.of("reconciliation")[-1]["left_shoe"] == 1  # the burn
    b.event("shoe", m.CardRead(6, 2, False, 2, 9000))
    b.event("shoe", m.CardRead(0xFF, 0xFF, False, 3, 9001))  # unread: no fault for it either
    ended = [(r.shoe, r.payload["card"], r.payload["position"]) for r in b.records if r.kind == "discard"]
    assert ended == [("T1-S0001", "6H", 2), ("T1-S0001", None, 3)]
    assert b.core.aside.held is None and not b.of("irregularity") and not b.core.faults
    if ended_by == "order_reshuffle":  # the next stack, being prepared, has no card out
        assert b.core.shoe.id == "T1-S0002" and b.core.shoe.dealt == 0 and not b.core.shoe.reads


# -- the cover card -------------------------------------------------------------------------------
@pytest.mark.reg("681a.5(d)", "681a.7(d)")
def test_a_shoe_that_passes_the_cover_position_without_a_cover_card_stops_dealing() -> None:
    """681a.5(d): "The dealer shall then insert the second cover card in a position at least ten
    cards above the bottom of the stack." 681a.7(d): "If the cover card appears as the first card
    in the dealing shoe at the beginning of a round of play or appears during play, the cover card
    shall be removed and placed to the side and the hand shall be completed." Then (d)(1): "Collect
    and reshuffle the cards".
    The controller knows where the second cover card is (14 cards above the bottom: after 402
    cards). A card read beyond it with no cover card is a fault that stops dealing until a
    floorperson acts; the round is then completed and the cards are reshuffled."""
    b = Bench()
    b.open_and_cut(cut=100, cover=14)
    b.cover_index = None                      # the stack in the shoe has no second cover card
    while b.core.state == "betting":
        b.play_round([(1, "player", 100)])
    assert b.core.state == "fault" and "cover:shoe" in b.core.faults
    missing = b.of("cover_card_missing")[-1]
    assert missing["expected_after"] == 402 and missing["cards_out"] == 403
    assert b.of("card_deferred")[-1]["position"] == 403   # the card is kept, not dealt yet
    rounds = len(b.of("round_result"))
    b.op("clear_fault", Role.DEALER)
    assert "needs a floorperson" in b.of("refused")[-1]["reason"] and b.core.state == "fault"
    b.op("clear_fault", key="cover:shoe")
    assert len(b.of("round_result")) == rounds + 1 and b.of("round_result")[-1]["kind"] == "normal"
    assert b.of("reconciliation")[-1]["left_shoe"] <= 409
    assert b.core.state == "cutting" and b.core.shoe.id.endswith("S0002")


@pytest.mark.reg("681a.5(d)", "681a.7(d)")
def test_a_cover_card_above_its_recorded_place_ends_the_shoe_and_is_journaled_for_surveillance() -> None:
    """681a.5(d): "The dealer shall then insert the second cover card in a position at least ten
    cards above the bottom of the stack" -- recorded here 14 above the bottom, to come out after
    402 cards. A cover card that comes out after 30 says the stack in the shoe is not the one cut
    and covered on record. 681a.7(d) still decides the round: "the cover card shall be removed and
    placed to the side and the hand shall be completed", then the cards are reshuffled."""
    b = Bench()
    b.open_and_cut(cut=100, cover=14)
    b.cover_index = 30                        # a cover card 30 cards down, not 402
    while b.core.state == "betting":
        b.play_round([(1, "player", 100)])
    [early] = b.of("cover_card_early")
    assert early == {"expected_after": 402, "cards_out": 30, "clause": "681a.5(d)"}
    assert any(n.level == "warning" and "after 30 cards" in n.text and "after 402" in n.text for n in b.notices)
    assert b.of("round_result")[-1]["kind"] == "normal" and not b.of("fault")
    assert b.core.state == "cutting" and b.core.shoe.id.endswith("S0002")


def test_a_shoe_with_its_cover_card_raises_no_cover_fault() -> None:
    b = Bench()
    b.open_and_cut(cut=100, cover=14)
    while b.core.state == "betting":
        b.play_round([(1, "player", 100)])
    assert b.core.state == "cutting" and not b.of("cover_card_missing") and not b.of("fault")
    assert b.of("cover_card") and not b.of("cover_card_early")  # it came out where it was put


def test_the_automated_floorperson_clears_a_missing_cover_card_and_the_shoe_is_reshuffled() -> None:
    b = Bench()
    auto = AutoDealer(seed=4)
    for _ in range(20000):
        if b.core.state == "ready_to_load" and b.core.shoe.id.endswith("S0001"):
            b.cover_index = None              # the first shoe is loaded without its second cover card
        op = auto.next_input(b.core)
        if op is None or len({r.shoe for r in b.records if r.kind == "round_result"}) >= 2:
            break
        b.feed(op)
    assert b.of("cover_card_missing") and {"faults": ["cover:shoe"], "by": "auto-floor"} in b.of("fault_cleared")
    assert {r.shoe for r in b.records if r.kind == "round_result"} == {"T1-S0001", "T1-S0002"}


# -- the load ---------------------------------------------------------------------------------
@pytest.mark.reg("681a.7(a)", "681a.7(d)(1)")
def test_a_shoe_that_loads_another_number_of_cards_keeps_the_table_closed() -> None:
    """681a.7(a): "Once the procedures under § 681a.5 (relating to shuffle and cut of the cards)
    have been completed, the stacked cards shall be placed in the dealing shoe". 681a.7(d)(1):
    "... to ensure that no cards are missing." A shoe that reports 415 cards for the 416 the
    shuffler counted once let the whole shoe be dealt; the table now stays closed."""
    b = Bench()
    b.auto_deal = False
    b.open_and_cut()
    b.event("shoe", m.ShoeLoaded(415))
    assert b.core.state == "count_fault"
    fault = b.of("count_fault")[-1]
    assert fault == {"loaded": 415, "expected": 416, "problem": "1 card missing"}
    assert b.core.prompt == "UNLOAD T1-S0001" and b.of("reconciliation")  # the shoe just loaded
    reconciled = b.of("reconciliation")[-1]
    assert (reconciled["total"], reconciled["expected"], reconciled["ok"]) == (415, 416, False)  # a card is missing
    b.op("no_more_bets", Role.DEALER)
    assert b.of("refused")[-1]["input"] == "no_more_bets"
    b.auto_deal = True
    b.op("order_reshuffle")
    assert b.core.state == "cutting" and b.core.shoe.id.endswith("S0002")


# -- the end of the cards -------------------------------------------------------------------------
@pytest.mark.reg("627a.13(e)")
def test_a_shoe_that_runs_empty_between_rounds_is_reshuffled_before_the_next_round() -> None:
    """627a.13(e): "A new round shall commence after the entire set of cards are reshuffled and
    placed in the dealing shoe." A shoe that reported empty between rounds once left the table
    betting, and the next round prompted for a card from an empty shoe for ever. The wagers on the
    layout were for a round that cannot be dealt: they are returned."""
    b = Bench()
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    b.op("wager", Role.DEALER, seat=2, kind="banker", amount=500)
    counted = 416 - b.core.shoe.dealt
    b.event("shoe", m.ShoeEmpty())
    assert b.of("shoe_empty")[-1] == {"cards_counted_in_shoe": counted}
    assert any(n.level == "fault" and f"{counted} cards counted in it never came out" in n.text for n in b.notices)
    assert b.core.state == "cutting" and b.core.shoe.id.endswith("S0002")
    assert b.of("wager_returned")[-1]["seat"] == 2 and not b.core.pending_wagers


def test_the_automated_floorperson_never_gives_up_events_that_never_came() -> None:
    """Clearing ``events:shoe`` gives up the events the shoe never sent again, and the cards among
    them with it: the automated floorperson stops and says why, for a person to check the shoe."""
    b = Bench()
    auto = AutoDealer(seed=4)
    b.open_and_cut()
    b.feed(DeviceStatus("shoe", True, "events 9 never arrived although the device was asked 8 times to resend them",
                        stalled=True))
    assert b.core.state == "fault"
    assert auto.next_input(b.core) is None
    assert auto.gave_up is not None and auto.gave_up.endswith("; a person must check the shoe first")
    assert "events:shoe" in b.core.faults


@pytest.mark.reg("627a.13(e)")
@pytest.mark.parametrize("house_money", [False, True])
def test_a_shoe_back_with_a_new_event_epoch_at_the_squeeze_or_house_money_voids_the_round(house_money: bool) -> None:
    """627a.13(e): "that round shall be void and all wagers shall be returned. A new round shall
    commence after the entire set of cards are reshuffled". A mutation review: a shoe that lost its
    memory while a Midibaccarat round's four cards waited at the squeeze (or for House Money) was
    tested only while dealing; it takes the shoe in play with it there too."""
    b = Bench("midibaccarat")
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.open_and_cut(seats=(1, 2))
    b.auto_deal = False
    b.play_round([(1, "player", 100), (2, "house_money", 100)] if house_money else [(1, "player", 100)])
    for _ in range(4):
        b.draw()
    if house_money:
        while b.core.state == "squeeze":
            b.op("reveal", Role.DEALER)
    held_in = b.core.state
    assert held_in == ("house_money" if house_money else "squeeze")  # seat 2's House Money Wager won
    shoe = b.core.shoe.id
    b.link("shoe", False)
    b.link("shoe", True, serial="SO-1", epoch=99)  # a new device behind the same port
    assert b.of("device_replaced")[-1]["state"] == held_in and b.of("device_replaced")[-1]["shoe_lost"] is True
    void = b.of("round_result")[-1]
    assert void["kind"] == "void" and len(void["cards"]) == 4
    assert b.core.shoe.id != shoe and b.of("reconciliation")
