"""58 Pa. Code 627a.13 (Minibaccarat irregularities): the scope (Punto Banco games only) and inputs
of the irregularity functions, and the ``Decision`` with its stable JSON form:
controller/rules/irregularities.py, irregularity_decisions.py.

The shared hands (deal order P1 B1 P2 B2), Rules Submissions and STRAY are in
irregularity_hands.py.
"""
from __future__ import annotations

import dataclasses
import json

import pytest
from irregularity_hands import DISCARD, P6_B6, STRAY

from controller.rules.cards import parse_cards
from controller.rules.errors import CardError, InsufficientCardsError, RulesError
from controller.rules.irregularities import (
    Action,
    Decision,
    GameScopeError,
    banker_must_draw,
    card_drawn_in_error,
    face_up_card_in_shoe,
    insufficient_cards,
    simulated_round,
    unauthorized_player_third_card,
    void_decision_for,
)
from controller.rules.model import Game
from controller.rules.submission import load_preset


TWENTYONE = load_preset("21-baccarat")


def test_21_baccarat_is_out_of_scope() -> None:
    calls = [
        lambda: card_drawn_in_error(STRAY, disclosed=False, game=Game.TWENTYONE),
        lambda: unauthorized_player_third_card(P6_B6, STRAY, disclosed=True, submission=TWENTYONE),
        lambda: face_up_card_in_shoe(STRAY, submission=TWENTYONE),
        lambda: face_up_card_in_shoe(STRAY, game="21-baccarat"),
        lambda: insufficient_cards(2, game=Game.TWENTYONE),
        lambda: void_decision_for(InsufficientCardsError("out"), game=Game.TWENTYONE),
        lambda: simulated_round(STRAY, parse_cards("2C 3D 4H"), game=Game.TWENTYONE),
    ]
    for call in calls:
        with pytest.raises(GameScopeError, match="Punto Banco games only"):
            call()


def test_game_mismatch_and_unknown_game_are_errors() -> None:
    with pytest.raises(RulesError, match="differs"):
        face_up_card_in_shoe(STRAY, submission=DISCARD, game=Game.EZ_BACCARAT)
    with pytest.raises(RulesError, match="unknown game"):
        card_drawn_in_error(STRAY, disclosed=True, game="chemin-de-fer")


def test_first_deal_must_be_four_cards_and_cards_must_parse() -> None:
    with pytest.raises(RulesError, match="first four cards"):
        unauthorized_player_third_card(P6_B6[:3], STRAY, disclosed=False, submission=DISCARD)
    with pytest.raises(RulesError, match="first four cards"):
        banker_must_draw([*P6_B6, STRAY])
    with pytest.raises(CardError):
        card_drawn_in_error("1X", disclosed=False)


def test_decision_is_immutable_and_has_a_stable_json_form() -> None:
    d = unauthorized_player_third_card(P6_B6, STRAY, disclosed=True, submission=DISCARD)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.action = Action.VOID_ROUND  # type: ignore[misc]
    j = d.to_json()
    assert j == {
        "action": "discard-with-one-more",
        "clause": "627a.13(c)(1)",
        "card": "9S",
        "reason": d.reason,
    }
    assert json.loads(json.dumps(j)) == j
    assert insufficient_cards(0).to_json()["card"] is None  # type: ignore[union-attr]
    assert Decision("void-round", "627a.13(e)", None, "x").action is Action.VOID_ROUND
    assert d.reason.endswith(".") and "\n" not in d.reason
