"""58 Pa. Code 627a.13 (Minibaccarat irregularities), properties over every first deal: the
decisions agree with the engine's drawing rules and never raise for valid inputs:
controller/rules/irregularities.py.

The shared hands (deal order P1 B1 P2 B2), Rules Submissions and STRAY are in
irregularity_hands.py.
"""
from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from irregularity_hands import DISCARD, EZ_SIMULATED, SIMULATED, STRAY

from controller.rules.cards import ALL_CARDS, Card
from controller.rules.engine import deal
from controller.rules.errors import InsufficientCardsError
from controller.rules.irregularities import (
    MAX_ROUND_CARDS,
    MIN_ROUND_CARDS,
    Action,
    NotAnIrregularityError,
    card_drawn_in_error,
    face_up_card_in_shoe,
    insufficient_cards,
    player_entitled_to_third_card,
    simulated_round,
    unauthorized_player_third_card,
    void_decision_for,
)
from controller.rules.submission import load_preset


# One card of each rank (values: ranks 10-13 all count 0, but pairs and reasons see the rank).
_RANK_CARDS = [Card(r, "S") for r in range(1, 14)]


@pytest.mark.reg("627a.13(b)")
def test_every_first_deal_by_rank_matches_the_engine() -> None:
    """627a.13(b): "A third card dealt to the Player's Hand that is not disclosed, when a third card
    is not authorized", "shall become the third card of the Banker's Hand if the Banker's Hand is
    required to draw"; "If the Banker's Hand is required to stay, the card dealt in error shall
    become the first card of the next hand of play". All 13^4 first deals: unentitled ->
    BANKER_THIRD_CARD exactly when the engine, dealt the four cards and then the stray card, gives it
    to the Banker, else the next hand's first card; entitled -> not an irregularity. (The disclosed
    card of 627a.13(c) is the property test below.)"""
    seen = {Action.BANKER_THIRD_CARD: 0, Action.NEXT_HAND_FIRST_CARD: 0, "entitled": 0}
    for four in itertools.product(_RANK_CARDS, repeat=4):
        result = deal([*four, STRAY, STRAY])  # six cards: enough whoever draws
        if len(result.player) == 3:  # the engine dealt the Player a third card: entitled
            with pytest.raises(NotAnIrregularityError):
                unauthorized_player_third_card(four, STRAY, disclosed=False, submission=DISCARD)
            seen["entitled"] += 1
            continue
        d = unauthorized_player_third_card(four, STRAY, disclosed=False, submission=DISCARD)
        banker_drew = len(result.banker) == 3
        assert (d.action is Action.BANKER_THIRD_CARD) == banker_drew
        if banker_drew:
            assert result.banker[2] == STRAY
        else:
            assert d.action is Action.NEXT_HAND_FIRST_CARD and result.cards_used == 4
        seen[d.action] += 1
    assert all(seen.values()) and sum(seen.values()) == 13**4


cards_st = st.sampled_from(ALL_CARDS)
first_four_st = st.lists(cards_st, min_size=4, max_size=4)
subs_st = st.sampled_from([DISCARD, SIMULATED, EZ_SIMULATED, load_preset("midibaccarat")])


@pytest.mark.reg("627a.13(b)")
@pytest.mark.reg("627a.13(c)")
@settings(max_examples=400, deadline=None)
@given(four=first_four_st, card=cards_st, disclosed=st.booleans(), sub=subs_st)
def test_property_banker_third_card_exactly_when_the_engine_draws(
    four: list[Card], card: Card, disclosed: bool, sub: object
) -> None:
    """627a.13(b) (not disclosed): the card "shall become the third card of the Banker's Hand if the
    Banker's Hand is required to draw", else "the first card of the next hand of play"; 627a.13(c)
    (disclosed): "the dealer shall use the disclosed card as the third card of the Banker's Hand if
    the Banker's Hand is required to draw", and if it must stay, the Rules Submission's procedure:
    (c)(1) "Place the disclosed card and one additional card" in the discard rack, or (c)(2) "Use the
    disclosed card as the first card of a simulated round". For random first deals and cards."""
    result = deal([*four, card, card])  # six cards: enough whoever draws
    entitled = len(result.player) == 3
    assert player_entitled_to_third_card(four) is entitled
    if entitled:
        with pytest.raises(NotAnIrregularityError):
            unauthorized_player_third_card(four, card, disclosed=disclosed, submission=sub)
        return
    d = unauthorized_player_third_card(four, card, disclosed=disclosed, submission=sub)
    assert d.card == card
    if len(result.banker) == 3:
        assert d.action is Action.BANKER_THIRD_CARD and result.banker[2] == card
        assert d.clause == ("627a.13(c)" if disclosed else "627a.13(b)")
    elif not disclosed:
        assert (d.action, d.clause) == (Action.NEXT_HAND_FIRST_CARD, "627a.13(b)")
    elif sub.unauthorized_third_card == "discard":  # type: ignore[attr-defined]
        assert (d.action, d.clause) == (Action.DISCARD_WITH_ONE_MORE, "627a.13(c)(1)")
    else:
        assert (d.action, d.clause) == (Action.SIMULATED_ROUND, "627a.13(c)(2)")


@pytest.mark.reg("627a.13(d)")
@settings(max_examples=300, deadline=None)
@given(
    card=cards_st,
    disclosed=st.booleans(),
    four=st.none() | first_four_st,
    sub=subs_st,
    remaining=st.integers(min_value=0, max_value=8 * 52),
    following=st.lists(cards_st, min_size=0, max_size=6),
)
def test_property_decisions_never_raise_for_valid_inputs(
    card: Card, disclosed: bool, four: list[Card] | None, sub: object, remaining: int, following: list[Card]
) -> None:
    """Every 627a.13 decision for valid inputs names its clause and its card and is journal-ready.
    627a.13(d): the disclosed card is "the first card of a simulated round of play"; "The cards shall
    be dealt in accordance with this chapter": the simulated round from the card completes on four to
    six cards with that card first, or runs out and is void."""
    decisions = [
        card_drawn_in_error(card, disclosed=disclosed),
        face_up_card_in_shoe(card, dealt_as_player_third_after=four, submission=sub),
    ]
    if four is not None and not player_entitled_to_third_card(four):
        decisions.append(unauthorized_player_third_card(four, card, disclosed=disclosed, submission=sub))
    void = insufficient_cards(remaining)
    assert (void is None) == (remaining >= MIN_ROUND_CARDS)
    if void is not None:
        decisions.append(void)
    for d in decisions:
        assert isinstance(d.action, Action) and d.clause.startswith("627a.13(")
        assert d.card == card or d.action is Action.VOID_ROUND
        assert json.loads(json.dumps(d.to_json()))["action"] == d.action.value
    # A simulated round from the card either completes on 4-6 cards or runs out (void).
    try:
        result = simulated_round(card, following)
    except InsufficientCardsError as exc:
        assert len(following) + 1 < MAX_ROUND_CARDS
        assert void_decision_for(exc).action is Action.VOID_ROUND
    else:
        assert result.player[0] == card
        assert MIN_ROUND_CARDS <= result.cards_used <= min(MAX_ROUND_CARDS, len(following) + 1)
