"""Midibaccarat's squeeze and House Money (629a.8): no card before "no more bets", the squeeze to the
highest wager and when relinquished, third cards face down, the House Money Wager settled before
any third card, through the table core's inputs and outputs (sans-I/O), with scripted devices
(bench.py)."""
from __future__ import annotations

import pytest
from bench import Bench, stack_with

from controller.rules.cards import parse_cards
from controller.roles import Role
from firmware_bridge.protocol import messages as m


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
