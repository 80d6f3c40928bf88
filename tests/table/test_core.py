"""The table core through its inputs and outputs (sans-I/O), with scripted devices (bench.py)."""
from __future__ import annotations

import dataclasses
import json

import pytest
from bench import Bench, stack_with

from controller.rules.cards import Composition, parse_cards
from controller.rules.submission import load_preset
from controller.table.core import TableCore
from controller.roles import Role
from firmware_bridge.protocol import messages as m

P_WINS = parse_cards("3S,2H,4D,4C")  # Player 7, Banker 6: both stand


# -- 681a.5 ---------------------------------------------------------------------------------------
@pytest.mark.reg("681a.5(a)")
def test_open_shuffles_with_the_automated_shuffler_and_checks_the_count() -> None:
    b = Bench()
    b.op("open")
    assert isinstance(b.sent[0].message, m.Shuffle) and b.sent[0].message.decks == 8
    assert b.core.state == "cutting"


@pytest.mark.reg("681a.5(a)")
@pytest.mark.parametrize("delta, words", [(-2, "2 cards missing"), (1, "1 extra card")])
def test_wrong_card_count_keeps_the_table_closed(delta: int, words: str) -> None:
    b = Bench(count_delta=delta)
    b.op("open")
    assert b.core.state == "count_fault"
    assert words in b.of("count_fault")[0]["problem"]
    assert any(words in n.text and n.level == "fault" for n in b.notices)
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    assert b.of("refused")[-1]["input"] == "wager" and b.core.state == "count_fault"


@pytest.mark.reg("681a.5(b)")
def test_cut_offered_clockwise_from_the_highest_numbered_occupied_seat() -> None:
    b = Bench()
    for s in (2, 5, 7):
        b.op("sit", Role.DEALER, seat=s)
    b.op("open")
    assert b.of("cut_offer")[0]["order"] == [7, 5, 2]
    assert b.core.shoe.cut_offeree == 7
    b.op("cut", Role.DEALER, position=50, seat=5)  # not yet offered to seat 5
    assert "offered to seat 7" in b.of("refused")[-1]["reason"]
    b.op("cut_decline", Role.DEALER, seat=7)
    b.op("cut", Role.DEALER, position=50, seat=5)  # seat 5 accepts
    assert b.of("cut")[-1] == {"position": 50, "by": "seat 5", "stack": 416}


@pytest.mark.reg("681a.5(b)")
def test_dealer_cuts_when_every_player_declines() -> None:
    b = Bench()
    b.op("sit", Role.DEALER, seat=3)
    b.op("open")
    b.op("cut_decline", Role.DEALER, seat=3)
    assert b.core.prompt == "DEALER CUTS"
    b.op("cut", Role.DEALER, position=60)
    assert b.of("cut")[-1]["by"] == "dealer"


@pytest.mark.reg("681a.5(c)")
@pytest.mark.parametrize("position", [0, 9, 407, 416])
def test_cover_card_closer_than_ten_cards_to_either_end_is_refused(position: int) -> None:
    b = Bench()
    b.op("open")
    b.op("cut", Role.DEALER, position=position)
    assert "at least 10 cards" in b.of("refused")[-1]["reason"]
    assert b.core.shoe.cut_position is None and b.core.state == "cutting"


@pytest.mark.reg("681a.5(d)", "681a.7(c)")
def test_cut_moves_cards_above_the_cover_card_to_the_bottom_then_second_cover_and_burn() -> None:
    front = parse_cards("9H,9D,9C,9S")
    b = Bench(stack=stack_with(front))
    b.open_and_cut(cut=100, cover=14)
    burned = b.of("burn")[0]["card"]
    assert b.core.state == "betting"
    assert b.core.shoe.burned == [burned]
    b.op("cover", Role.DEALER, from_bottom=9)  # outside the cut: refused, nothing changes
    assert b.core.state == "betting"


@pytest.mark.reg("681a.5(d)")
def test_second_cover_card_must_be_at_least_ten_above_the_bottom() -> None:
    b = Bench()
    b.op("open")
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=9)
    assert "at least 10 cards above the bottom" in b.of("refused")[-1]["reason"]
    b.op("cover", Role.DEALER, from_bottom=10)
    assert b.core.state == "ready_to_load"


@pytest.mark.reg("681a.5(e)")
def test_floorperson_may_order_recut_or_reshuffle_before_loading_a_dealer_may_not() -> None:
    b = Bench()
    b.op("open")
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("order_recut", Role.DEALER, operator="d1")
    assert "needs a floorperson" in b.of("refused")[-1]["reason"] and b.core.state == "ready_to_load"
    b.op("order_recut")
    assert b.core.state == "cutting" and b.core.shoe.cut_position is None
    b.op("cut", Role.DEALER, position=120)
    b.op("cover", Role.DEALER, from_bottom=14)
    shuffles = sum(isinstance(s.message, m.Shuffle) for s in b.sent)
    b.op("order_reshuffle")
    assert sum(isinstance(s.message, m.Shuffle) for s in b.sent) == shuffles + 1
    assert b.core.state == "cutting"  # shuffled again, cut offered again


@pytest.mark.reg("681a.5(f)", "681a.7(d)", "681a.7(d)(1)", "681a.7(d)(2)")
def test_cover_card_reached_completes_the_round_then_reshuffles_with_reconciliation() -> None:
    b = Bench()
    b.open_and_cut(cut=100, cover=14)
    rounds = 0
    first_shoe = b.core.shoe.id
    while b.core.state == "betting" and rounds < 200:
        b.play_round([(1, "player", 100)])
        rounds += 1
    assert b.core.shoe.id != first_shoe and 60 < rounds < 100
    # The round during which the cover card came out was completed and settled.
    last = b.of("round_result")[-1]
    assert last["kind"] == "normal" and len(b.of("round_result")) == rounds
    assert b.core.state == "cutting"  # reshuffled (count checked) and offered for the cut
    rec = b.of("reconciliation")[-1]
    assert rec["ok"] and rec["total"] == 416 and rec["left_shoe"] + rec["remaining_in_shoe"] == 416
    assert b.kinds().index("reconciliation") > b.kinds().index("cover_card")


@pytest.mark.reg("681a.5(f)")
def test_floorperson_orders_a_reshuffle_after_any_round() -> None:
    b = Bench()
    b.open_and_cut()
    b.play_round([(1, "banker", 100)])
    b.op("order_reshuffle")
    assert b.core.state == "cutting"
    assert len([s for s in b.sent if isinstance(s.message, m.Shuffle)]) == 2


@pytest.mark.reg("681a.5(g)", "681a.5(g)(2)")
def test_idle_table_spreads_cards_for_inspection_then_reshuffles_in_the_automated_shuffler() -> None:
    b = Bench()
    b.open_and_cut()
    b.op("declare_idle")
    assert b.core.state == "inspection" and b.core.prompt == "SPREAD"
    b.op("inspection_done")
    assert b.core.state == "cutting"
    assert len([s for s in b.sent if isinstance(s.message, m.Shuffle)]) == 2


@pytest.mark.reg("681a.5(h)")
def test_automatic_reshuffling_shoe_skips_the_cut_and_inspection() -> None:
    b = Bench(automatic_shoe=True)
    b.op("open")
    assert "cut_skipped" in b.kinds() and "cut_offer" not in b.kinds()
    assert any(isinstance(s.message, m.Deliver) and s.message.target is m.DeliverTarget.SHOE for s in b.sent)
    assert b.core.state == "betting"
    b.op("declare_idle")
    assert "681a.5(h)" in b.of("refused")[-1]["reason"]


# -- 681a.7 ----------------------------------------------------------------------------------------
@pytest.mark.reg("681a.7(a)", "681a.7(c)")
def test_load_then_the_first_card_is_burned_and_a_new_dealer_burns_one() -> None:
    b = Bench()
    b.open_and_cut()
    assert b.kinds().index("shoe_loaded") < b.kinds().index("burn")
    b.op("dealer_sign_in", Role.DEALER, dealer="D2")
    assert len(b.of("burn")) == 2 and b.of("burn")[1]["dealer"] == "D2"
    assert b.core.state == "betting"


@pytest.mark.reg("681a.7(d)")
def test_cover_card_as_first_card_of_a_round_the_round_is_still_dealt() -> None:
    b = Bench()
    b.open_and_cut(cut=100, cover=14)
    b.cover_index = b.drawn  # the cover card is next out
    recs = b.play_round([(1, "player", 10)])
    kinds = [r.kind for r in recs]
    assert kinds.index("cover_card") < kinds.index("card") < kinds.index("round_result")
    assert b.core.state == "cutting"  # then reshuffled


@pytest.mark.reg("681a.7(e)", "681a.7(h)", "681a.7(i)", "681a.7(j)", "681a.7(k)", "681a.7(l)")
def test_21_baccarat_round_dealt_settled_counterclockwise_and_discarded_in_order() -> None:
    b = Bench("21-baccarat")
    b.open_and_cut()
    recs = b.play_round([(3, "player", 100), (1, "banker", 100), (2, "tie", 10), (1, "player_bonus", 5)])
    res = next(r.payload for r in recs if r.kind == "round_result")
    settlements = [r.payload for r in recs if r.kind == "settlement"]
    assert [s["seat"] for s in settlements[:2]] == [1, 3]  # Player/Banker first, dealer's right first
    assert {s["kind"] for s in settlements[2:]} == {"tie", "player_bonus"}
    cards = [r.payload["card"] for r in recs if r.kind == "card"]
    assert next(r.payload for r in recs if r.kind == "discard_rack")["cards"] == cards
    assert [d["card"] for d in res["dealt"]] == cards


# -- 629a.8 (Midibaccarat) -------------------------------------------------------------------------
def midi(front: list | None = None) -> Bench:
    b = Bench("midibaccarat", stack=stack_with(front, decks=6) if front else None)
    b.open_and_cut(seats=(1, 2, 3, 4))
    return b


@pytest.mark.reg("629a.8(b)")
def test_no_card_is_dealt_before_no_more_bets() -> None:
    b = midi()
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.draw()  # the dealer draws before "no more bets": a card drawn in error
    assert b.of("irregularity")[-1]["clause"] == "627a.13(a)"
    assert b.of("card") == []


@pytest.mark.reg("629a.8(c)", "629a.8(c)(1)", "629a.8(c)(2)", "629a.8(c)(6)")
def test_squeeze_goes_to_the_highest_wager_ties_to_the_player_closest_counterclockwise() -> None:
    b = midi()
    b.play_round([(3, "player", 200), (2, "player", 200), (4, "banker", 50), (1, "banker", 70)])
    assert b.core.state == "squeeze"
    assert b.of("squeeze")[-1] == {"hand": "player", "seat": 2}  # 2 and 3 tie; 2 is closer
    assert b.core.prompt == "SQUEEZE PLAYER SEAT 2"
    b.event("shoe", m.ButtonPress(m.ButtonId.REVEAL))
    assert b.of("squeeze")[-1] == {"hand": "banker", "seat": 1}
    b.op("reveal", Role.DEALER)
    assert b.core.state in ("squeeze", "betting")  # a third-card squeeze, or the round is over


@pytest.mark.reg("629a.8(c)(4)", "629a.8(c)(5)")
def test_third_cards_go_face_down_to_the_same_players() -> None:
    front = parse_cards("2S,3H,2D,3C,KS,KD")  # Player 4 draws, Banker 6 ... draws on 6? no: stands on K
    b = midi(front)
    b.play_round([(2, "player", 100), (3, "banker", 100)])
    b.op("reveal", Role.DEALER)  # player
    b.op("reveal", Role.DEALER)  # banker
    assert b.core.state == "squeeze" and b.of("squeeze")[-1] == {"hand": "player", "seat": 2}
    b.op("reveal", Role.DEALER)
    assert b.core.state == "betting"
    assert b.of("round_result")[-1]["player"]["cards"] == ["2S", "2D", "KS"]


@pytest.mark.reg("629a.8(d)")
def test_relinquished_squeeze_passes_right_then_to_the_dealer() -> None:
    b = midi()
    b.play_round([(2, "player", 100)])
    b.op("relinquish", Role.DEALER)
    assert b.of("relinquished")[-1] == {"seat": 2, "to": 3, "hand": "player"}
    b.op("relinquish", Role.DEALER)
    b.op("relinquish", Role.DEALER)
    b.op("relinquish", Role.DEALER)
    assert b.of("relinquished")[-1]["to"] is None
    assert b.of("revealed")[0]["by"].startswith("the dealer")


@pytest.mark.reg("629a.8(c)(3)", "629a.8(c)(3)(i)", "629a.8(c)(3)(i)(A)", "629a.8(c)(3)(ii)")
def test_house_money_settled_before_any_third_card_and_payout_added_to_the_wager() -> None:
    front = parse_cards("5S,KH,5D,2C,KD,KC")  # Player pair of 5s (0: draws), Banker 2 (draws)
    b = midi(front)
    b.play_round([(2, "player", 100), (2, "house_money", 10)])
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    assert b.core.state == "house_money"
    hm = [s for s in b.of("settlement") if s["kind"] == "house_money"]
    assert hm == [{"seat": 2, "kind": "house_money", "amount": 10, "result": "win", "win": 30, "commission": 0, "net": 30}]
    assert len(b.of("card")) == 4  # no third card yet
    b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=30)
    b.op("continue", Role.DEALER)
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    main = [s for s in b.of("settlement") if s["kind"] == "player"]
    assert main[0]["amount"] == 130


# -- 627a.13 -----------------------------------------------------------------------------------------
@pytest.mark.reg("627a.13(a)")
def test_undisclosed_card_drawn_in_error_is_the_first_card_of_the_next_hand() -> None:
    b = Bench()
    b.open_and_cut()
    b.draw()  # between rounds, face down
    held = b.of("irregularity")[-1]["card"]
    b.play_round([(1, "player", 100)])
    assert b.of("card")[0] == {"card": held, "to": "player", "position": 2, "n": 1}  # its place in the shoe


@pytest.mark.reg("627a.13(b)")
def test_unauthorised_player_third_card_when_banker_stands_is_next_hands_first_card() -> None:
    front = P_WINS + parse_cards("9S")
    b = Bench(stack=stack_with(front), auto_deal=True)
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    assert b.core.state == "betting" and b.of("round_result")[-1]["cards_used"] == 4
    b.auto_deal = False
    b.draw()  # the dealer wrongly draws a fifth card, face down
    d = b.of("irregularity")[-1]
    assert d["clause"] == "627a.13(b)" and d["action"] == "next-hand-first-card"
    assert b.core.held_card is not None


@pytest.mark.reg("627a.13(c)", "627a.13(c)(1)", "627a.13(c)(2)")
@pytest.mark.parametrize("option, action", [("discard", "discard-with-one-more"), ("simulated-round", "simulated-round")])
def test_disclosed_unauthorised_third_card_follows_the_rules_submission(option: str, action: str) -> None:
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


@pytest.mark.reg("627a.13(d)")
def test_face_up_card_found_in_the_shoe_opens_a_simulated_round_without_wagers() -> None:
    b = Bench()
    b.open_and_cut()
    b.face_up_at.add(b.drawn + 1)  # the next card out is face up
    recs = b.play_round([(1, "player", 100)])
    assert any(r.kind == "irregularity" and r.payload["clause"] == "627a.13(d)" for r in recs)
    res = [r.payload for r in recs if r.kind == "round_result"][0]
    assert res["kind"] == "simulated"
    returned = [r.payload for r in recs if r.kind == "settlement"]
    assert returned == [{"seat": 1, "kind": "player", "amount": 100, "result": "push", "win": 0, "commission": 0, "net": 0}]


@pytest.mark.reg("627a.13(e)")
def test_shoe_running_out_mid_round_voids_it_returns_wagers_and_reshuffles() -> None:
    b = Bench()
    b.open_and_cut()
    b.stack = b.stack[: b.drawn + 2]  # only two cards left
    b.cover_index = None
    recs = b.play_round([(1, "player", 100), (2, "tie", 5)])
    res = [r.payload for r in recs if r.kind == "round_result"][-1]
    assert res["kind"] == "void"
    assert all(s["result"] == "push" for s in (r.payload for r in recs if r.kind == "settlement"))
    assert b.core.state == "cutting"  # the entire set reshuffled


# -- faults, refusals, recovery ----------------------------------------------------------------------
def test_door_open_mid_round_holds_everything_and_resumes_exactly() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.op("no_more_bets", Role.DEALER)
    b.draw()
    b.draw()
    b.event("shoe", m.Door(True))
    assert b.core.state == "fault"
    b.draw()  # a card taken while the door was open is not lost
    assert b.of("card_deferred")
    b.auto_deal = True
    b.event("shoe", m.Door(False))
    assert b.core.state == "betting"
    assert len(b.of("round_result")) == 1 and len([s for s in b.of("settlement")]) == 1


def test_link_lost_and_back_reissues_the_prompt_and_settles_once() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "banker", 100)])
    b.draw()
    b.link("shoe", False)
    assert b.core.state == "fault"
    b.op("clear_fault")
    assert "clears when the device reconnects" in b.of("refused")[-1]["reason"] and b.core.state == "fault"
    before = len(b.sent)
    b.link("shoe", True)
    assert b.core.state == "dealing"
    assert [s.message for s in b.sent[before:before + 2]] == [m.GateUnlock(), m.Display(f"DRAW BANKER @{b.drawn + 1}")]
    b.auto_deal = True
    b.draw()
    assert len(b.of("settlement")) == 1


def test_misread_card_is_entered_by_the_floorperson() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    b.event("shoe", m.CardRead(0xFF, 0xFF, False, 1, 0))
    assert b.core.state == "fault" and "misread" in b.core.faults
    b.op("enter_card", Role.DEALER, card="9H")
    assert "needs a floorperson" in b.of("refused")[-1]["reason"]
    b.op("enter_card", card="9H")
    assert b.of("card")[-1]["card"] == "9H" and b.core.state == "dealing"


def test_unknown_commands_bad_arguments_and_wrong_states_are_refused_without_change() -> None:
    b = Bench()
    snap = b.core.snapshot()
    for cmd, args in [("fly", {}), ("wager", {"seat": 1}), ("no_more_bets", {}), ("load", {})]:
        outs = b.op(cmd, Role.SUPERVISOR, **args)
        assert [o.kind for o in outs if hasattr(o, "kind")] == ["refused"]
    assert b.core.snapshot() == snap


@pytest.mark.parametrize("cut_at", [5, 40, 97, 150])
def test_recovery_by_replaying_inputs_reaches_the_same_state(cut_at: int) -> None:
    a = Bench(seed=9)
    a.open_and_cut(seats=(1, 2))
    for i in range(12):
        a.play_round([(1, "player", 100 + i), (2, "banker", 50)])
    inputs = a.inputs
    k = min(cut_at, len(inputs) - 1)
    b = Bench(seed=9)
    b.core.recover(inputs[:k])
    replay = Bench(seed=9)
    for inp in inputs[k:]:
        b.core.handle(inp)
    full = Bench(seed=9)
    for inp in inputs:
        full.core.handle(inp)
    assert b.core.snapshot() == full.core.snapshot() == a.core.snapshot()
    assert replay is not None


@pytest.mark.parametrize("preset", ["minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat"])
def test_the_automated_dealer_plays_whole_shoes(preset: str) -> None:
    from controller.table.autodealer import AutoDealer

    b = Bench(preset, seed=3)
    auto = AutoDealer(b.sub, seed=3)
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


def test_restart_shoe_voids_the_round_returns_wagers_and_reshuffles() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.op("no_more_bets", Role.DEALER)
    b.draw()
    b.op("restart_shoe", Role.DEALER)
    assert "needs a floorperson" in b.of("refused")[-1]["reason"]
    b.op("restart_shoe", reason="emulator restarted")
    assert b.of("round_result")[-1]["kind"] == "void"
    assert b.of("settlement")[-1]["result"] == "push"
    assert b.core.state == "cutting" and b.core.shoe.id.endswith("S0002")


def test_state_machine_doc_is_current_and_lists_every_state() -> None:
    from pathlib import Path

    from controller.table.diagram import state_machine_doc
    from controller.table.machine import STATES

    doc = state_machine_doc()
    assert (Path(__file__).resolve().parents[2] / "docs" / "state-machine.md").read_text(encoding="utf-8") == doc
    for s in STATES:
        assert f'state "{s}"' in doc


def test_clearing_a_jam_resets_the_mechanism_then_resumes_with_the_gate_open() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    b.event("shoe", m.Jam(m.JamLocation.SHOE_EXIT))
    assert b.core.state == "fault"
    before = len(b.sent)
    b.op("clear_fault")
    msgs = [s.message for s in b.sent[before:]]
    assert msgs[0] == m.Reset(m.ResetKind.MECHANISM) and m.GateUnlock() in msgs
    assert b.core.state == "dealing" and isinstance(msgs[-1], m.Display) and msgs[-1].text.startswith("DRAW PLAYER")


@pytest.mark.reg("681a.5(g)", "681a.5(g)(1)", "681a.5(a)")
def test_without_a_shuffler_the_idle_table_is_washed_shuffled_by_hand_and_cut() -> None:
    b = Bench(shuffler=False)
    b.op("open")
    assert b.core.state == "shuffling" and b.core.prompt == "SHUFFLE BY HAND"
    b.stack = Composition.standard(8).cards()
    b.op("manual_shuffle_done", Role.DEALER)
    assert b.core.state == "cutting"
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("load", Role.DEALER)
    assert b.core.state == "betting"
    b.op("declare_idle")
    b.op("inspection_done")
    assert b.core.prompt == "WASH AND SHUFFLE"
    b.op("manual_shuffle_done", Role.DEALER)
    assert b.of("manual_shuffle")[-1]["washed"] is True and b.core.state == "cutting"
    assert not any(isinstance(s.message, m.Shuffle) for s in b.sent)


def test_floorperson_sets_the_rules_submission_at_opening_and_it_replays() -> None:
    from controller.table.journaling import inputs_from, operator_input_record

    b = Bench()
    mini = load_preset("midibaccarat").to_dict()
    mini.pop("source")
    b.op("set_submission", Role.DEALER, submission=mini)
    assert "needs a floorperson" in b.of("refused")[-1]["reason"]
    b.op("set_submission", submission=mini, source="preset:midibaccarat")
    assert b.core.sub.name == "Midibaccarat, 6 decks" and b.of("submission")[-1]["source"] == "preset:midibaccarat"
    b.open_and_cut()
    b.op("set_submission", submission=mini)
    assert "only while the table is closed" in b.of("refused")[-1]["reason"]
    # journaled as an input and replayed, the submission comes back whole (no file is read)
    from types import SimpleNamespace

    entries = []
    for inp in b.inputs:
        if hasattr(inp, "command"):
            rec = operator_input_record(inp, None, None)
            entries.append(SimpleNamespace(kind=rec.kind, payload=json.loads(json.dumps(rec.payload)), operator=rec.operator,
                                           device_counter=None))
    replayed = list(inputs_from(entries))
    again = TableCore(load_preset("minibaccarat"))
    again.handle(replayed[1])
    assert again.sub == b.core.sub


@pytest.mark.reg("681a.7(d)(1)")
def test_a_duplicated_card_found_at_the_reshuffle_keeps_the_table_closed() -> None:
    from controller.rules.cards import card

    stack = Composition.standard(8).cards()
    import random

    random.Random(5).shuffle(stack)
    i = next(k for k, c in enumerate(stack) if k >= 30 and c != card(1, "S"))
    # one card replaced by a ninth ace of spades, placed early in the shoe so it is read
    stack = stack[:]
    stack[i] = card(1, "S")
    b = Bench(stack=stack)
    b.open_and_cut(cut=10, cover=14)
    while b.core.state == "betting":
        b.play_round([(1, "player", 100)])
    assert b.core.state == "count_fault"
    cs = b.of("cardset")[-1]
    assert not cs["ok"] and any(e["card"] == "AS" for e in cs["extra"])
    assert "extra AS" in b.of("count_fault")[-1]["problem"]
    b.op("order_reshuffle")
    assert b.core.state in ("cutting", "count_fault")


@pytest.mark.reg("681a.7(d)(1)")
def test_a_restart_after_the_reconciliation_shows_unload_again_before_the_new_shoe() -> None:
    """681a.7(d)(1): "Collect and reshuffle the cards by removing the cards remaining in the shoe
    ..." A controller killed after the shoe's reconciliation was journaled but before the UNLOAD
    prompt reached the shoe must ask for it again: otherwise the last shoe's cards stay in the
    shoe and the dealer cannot load the next stack (found by the crash soak)."""
    b = Bench()
    b.open_and_cut()
    while b.core.shoe.id.endswith("S0001"):
        b.play_round()
    assert b.core.state in ("cutting", "shuffling") and b.of("reconciliation")[-1]["remaining_in_shoe"] > 0
    restarted = TableCore(b.sub)
    restarted.recover(b.inputs)
    shown = [o.message.text for o in restarted.resume_outputs() if isinstance(o.message, m.Display)]
    assert shown[0] == "UNLOAD" and shown[-1] == b.core.prompt
    b.open_and_cut()  # the next stack is cut and loaded: no more UNLOAD after that
    restarted = TableCore(b.sub)
    restarted.recover(b.inputs)
    assert "UNLOAD" not in [o.message.text for o in restarted.resume_outputs() if isinstance(o.message, m.Display)]
