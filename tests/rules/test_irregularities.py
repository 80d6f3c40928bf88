"""58 Pa. Code 627a.13 (Minibaccarat irregularities): controller/rules/irregularities.py.

Hands are written in deal order P1 B1 P2 B2; each one's totals are worked out in its comment.
"""
from __future__ import annotations

import dataclasses
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules import punto_banco as pb
from controller.rules.cards import ALL_CARDS, Card, parse_card, parse_cards
from controller.rules.engine import RoundEngine, deal
from controller.rules.errors import CardError, InsufficientCardsError, RulesError
from controller.rules.irregularities import (
    MAX_ROUND_CARDS,
    MIN_ROUND_CARDS,
    Action,
    Decision,
    GameScopeError,
    NotAnIrregularityError,
    apply_to_next_round,
    banker_must_draw,
    can_complete_round,
    card_drawn_in_error,
    face_up_card_in_shoe,
    insufficient_cards,
    player_entitled_to_third_card,
    simulated_round,
    unauthorized_player_third_card,
    void_decision_for,
)
from controller.rules.model import Game, Target
from controller.rules.submission import load_preset, parse_submission

DISCARD = load_preset("minibaccarat")  # the default: unauthorized_third_card = "discard"
SIMULATED = parse_submission(
    {"submission": {"game": "punto-banco"}, "irregularities": {"unauthorized_third_card": "simulated-round"}},
    "test:simulated-round",
)
EZ_SIMULATED = parse_submission(
    {"submission": {"game": "ez-baccarat"}, "irregularities": {"unauthorized_third_card": "simulated-round"}},
    "test:ez-simulated-round",
)
TWENTYONE = load_preset("21-baccarat")

# Player 4H+3S = 7 stands; Banker 2D+2C = 4: the Player stood, so the Banker draws on 0-5.
P7_B4 = parse_cards("4H 2D 3S 2C")
# Player KH+6S = 6 stands; Banker 3D+3C = 6 stays.
P6_B6 = parse_cards("KH 3D 6S 3C")
# Player 5H+3S = 8, a Natural; Banker 2D+KC = 2 would draw on 0-5 but 627a.10(a) stops all draws.
P8_NATURAL_B2 = parse_cards("5H 2D 3S KC")
# Player AH+2S = 3 would draw; Banker 9D+KC = 9, a Natural: no more cards.
P3_B9_NATURAL = parse_cards("AH 9D 2S KC")
# Player 7H+KS = 7 stands; Banker 5D+QC = 5 draws.
P7_B5 = parse_cards("7H 5D KS QC")
# Player 6H+JS = 6 stands; Banker 4D+3C = 7 stays.
P6_B7 = parse_cards("6H 4D JS 3C")
# Player 2H+3S = 5: entitled to a third card (627a.10(b)); Banker 6D+KC = 6.
P5_B6 = parse_cards("2H 6D 3S KC")

STRAY = parse_card("9S")


# -- the hands above, checked against the engine -------------------------------------------------


def test_fixture_hands_are_what_the_comments_say() -> None:
    for four, (pt, bt) in [
        (P7_B4, (7, 4)), (P6_B6, (6, 6)), (P8_NATURAL_B2, (8, 2)), (P3_B9_NATURAL, (3, 9)),
        (P7_B5, (7, 5)), (P6_B7, (6, 7)), (P5_B6, (5, 6)),
    ]:
        assert (pb.point_count(four[0::2]), pb.point_count(four[1::2])) == (pt, bt)
    assert [player_entitled_to_third_card(f) for f in (P7_B4, P6_B6, P8_NATURAL_B2, P3_B9_NATURAL, P5_B6)] == [
        False, False, False, False, True,
    ]
    assert [banker_must_draw(f) for f in (P7_B4, P6_B6, P8_NATURAL_B2, P3_B9_NATURAL, P7_B5, P6_B7)] == [
        True, False, False, False, True, False,
    ]


# -- (a) and (d): a card drawn in error ----------------------------------------------------------


@pytest.mark.reg("627a.13(a)")
def test_a_undisclosed_card_drawn_in_error_is_next_hands_first_card() -> None:
    d = card_drawn_in_error(STRAY, disclosed=False)
    assert d == Decision(Action.NEXT_HAND_FIRST_CARD, "627a.13(a)", STRAY, d.reason)
    assert "first card of the next hand" in d.reason and "9S" in d.reason


@pytest.mark.reg("627a.13(a)")
def test_a_held_card_is_p1_of_the_next_round() -> None:
    # Next hand: held 9S is P1, then shoe 2C (B1), KD (P2), 5S (B2): Player 9+0 = 9, a Natural;
    # Banker 2+5 = 7. The round ends on four cards and the shoe iterator keeps the rest.
    shoe = iter(parse_cards("2C KD 5S 4H 4D"))
    result = deal(apply_to_next_round(STRAY, shoe))
    assert result.player == (STRAY, parse_card("KD"))
    assert result.banker == tuple(parse_cards("2C 5S"))
    assert result.player_total == 9 and result.player_natural
    assert next(shoe) == parse_card("4H")  # only the cards the round needed were taken


def test_apply_to_next_round_without_a_held_card_is_the_shoe_itself() -> None:
    cards = parse_cards("2C KD 5S 4H")
    assert list(apply_to_next_round(None, cards)) == cards
    assert list(apply_to_next_round("AS", cards)) == [parse_card("AS"), *cards]
    with pytest.raises(CardError):
        apply_to_next_round("ZZ", cards)


@pytest.mark.reg("627a.13(d)")
def test_d_disclosed_card_drawn_in_error_starts_a_simulated_round() -> None:
    d = card_drawn_in_error("9s", disclosed=True)
    assert (d.action, d.clause, d.card) == (Action.SIMULATED_ROUND, "627a.13(d)", STRAY)
    assert "simulated round" in d.reason and "no wagers" in d.reason


@pytest.mark.reg("627a.13(d)")
def test_d_face_up_card_in_the_shoe_starts_a_simulated_round() -> None:
    d = face_up_card_in_shoe(STRAY)
    assert (d.action, d.clause, d.card) == (Action.SIMULATED_ROUND, "627a.13(d)", STRAY)
    assert "face up" in d.reason


@pytest.mark.reg("627a.13(d)")
def test_d_face_up_authorised_player_third_card_is_not_c_but_d() -> None:
    # Player 5 was entitled to the third card, so (c) ("when a third card is not authorized")
    # does not apply; the face-up card falls under (d) whatever the Rules Submission says.
    for sub in (DISCARD, SIMULATED):
        d = face_up_card_in_shoe(STRAY, dealt_as_player_third_after=P5_B6, submission=sub)
        assert (d.action, d.clause) == (Action.SIMULATED_ROUND, "627a.13(d)")


@pytest.mark.reg("627a.13(d)")
def test_d_simulated_round_is_dealt_per_the_rules_from_the_disclosed_card() -> None:
    # 9S (P1), 2C (B1), 3D (P2), 4H (B2): Player 9+3 = 2 draws; Banker 2+4 = 6.
    # Player's third 6D (value 6): Banker 6 draws on a 6, takes KS: Banker 6, Player 2+6 = 8.
    shoe = iter(parse_cards("2C 3D 4H 6D KS AC"))
    result = simulated_round(STRAY, shoe)
    assert result.player == tuple(parse_cards("9S 3D 6D"))
    assert result.banker == tuple(parse_cards("2C 4H KS"))
    assert (result.player_total, result.banker_total, result.outcome.value) == (8, 6, "player")
    assert result.cards_used == MAX_ROUND_CARDS
    assert next(shoe) == parse_card("AC")


# -- (b): an undisclosed, unauthorised Player third card -----------------------------------------


@pytest.mark.reg("627a.13(b)")
@pytest.mark.parametrize("four", [P7_B4, P7_B5], ids=["player7-banker4", "player7-banker5"])
def test_b_banker_required_to_draw_takes_the_card(four: list[Card]) -> None:
    for sub in (DISCARD, SIMULATED):
        d = unauthorized_player_third_card(four, STRAY, disclosed=False, submission=sub)
        assert (d.action, d.clause, d.card) == (Action.BANKER_THIRD_CARD, "627a.13(b)", STRAY)
        assert "Banker's third card" in d.reason


@pytest.mark.reg("627a.13(b)")
def test_b_banker_third_card_is_where_the_engine_puts_the_next_card() -> None:
    # Player 7 stood, Banker 4 draws: feeding the card to the round makes it the Banker's third.
    # Banker 2+2+9 = 3, Player 7: Player wins.
    engine = RoundEngine(Game.PUNTO_BANCO)
    for c in P7_B4:
        engine.feed(c)
    assert engine.next_target() is Target.BANKER
    engine.feed(STRAY)
    result = engine.result()
    assert result.banker[2] == STRAY and len(result.player) == 2
    assert (result.player_total, result.banker_total, result.outcome.value) == (7, 3, "player")


@pytest.mark.reg("627a.13(b)")
@pytest.mark.parametrize(
    "four", [P6_B6, P6_B7, P8_NATURAL_B2, P3_B9_NATURAL],
    ids=["player6-banker6", "player6-banker7", "player-natural-banker2", "banker-natural"],
)
def test_b_banker_stays_card_is_next_hands_first_card(four: list[Card]) -> None:
    for sub in (DISCARD, SIMULATED):  # (b) does not depend on the Rules Submission
        d = unauthorized_player_third_card(four, STRAY, disclosed=False, submission=sub)
        assert (d.action, d.clause, d.card) == (Action.NEXT_HAND_FIRST_CARD, "627a.13(b)", STRAY)
        assert "next hand" in d.reason


@pytest.mark.reg("627a.13(b)")
def test_b_player_entitled_is_not_an_irregularity() -> None:
    with pytest.raises(NotAnIrregularityError, match="entitled to a third card"):
        unauthorized_player_third_card(P5_B6, STRAY, disclosed=False, submission=DISCARD)
    with pytest.raises(RulesError):  # NotAnIrregularityError is a RulesError
        unauthorized_player_third_card(P5_B6, STRAY, disclosed=True, submission=SIMULATED)


# -- (c): a disclosed (or found face-up) unauthorised Player third card --------------------------


@pytest.mark.reg("627a.13(c)")
@pytest.mark.parametrize("four", [P7_B4, P7_B5], ids=["player7-banker4", "player7-banker5"])
def test_c_banker_required_to_draw_takes_the_disclosed_card(four: list[Card]) -> None:
    for sub in (DISCARD, SIMULATED):
        d = unauthorized_player_third_card(four, STRAY, disclosed=True, submission=sub)
        assert (d.action, d.clause, d.card) == (Action.BANKER_THIRD_CARD, "627a.13(c)", STRAY)


@pytest.mark.reg("627a.13(c)")
def test_c_card_found_face_up_as_unauthorised_third_card_is_c_not_d() -> None:
    d = face_up_card_in_shoe(STRAY, dealt_as_player_third_after=P7_B4, submission=DISCARD)
    assert (d.action, d.clause) == (Action.BANKER_THIRD_CARD, "627a.13(c)")
    for four in (P6_B6, P8_NATURAL_B2):
        for sub in (DISCARD, SIMULATED):
            assert face_up_card_in_shoe(STRAY, dealt_as_player_third_after=four, submission=sub) == (
                unauthorized_player_third_card(four, STRAY, disclosed=True, submission=sub)
            )


@pytest.mark.reg("627a.13(c)")
def test_c_needs_the_rules_submission() -> None:
    with pytest.raises(RulesError, match="Rules Submission"):
        face_up_card_in_shoe(STRAY, dealt_as_player_third_after=P6_B6)
    with pytest.raises(RulesError, match="Rules Submission"):
        unauthorized_player_third_card(P6_B6, STRAY, disclosed=True, submission=None)
    bogus = dataclasses.replace(DISCARD, unauthorized_third_card="burn")
    with pytest.raises(RulesError, match="unauthorized_third_card"):
        unauthorized_player_third_card(P6_B6, STRAY, disclosed=True, submission=bogus)


@pytest.mark.reg("627a.13(c)(1)")
@pytest.mark.parametrize(
    "four", [P6_B6, P6_B7, P8_NATURAL_B2, P3_B9_NATURAL],
    ids=["player6-banker6", "player6-banker7", "player-natural-banker2", "banker-natural"],
)
def test_c1_discard_with_one_more(four: list[Card]) -> None:
    assert DISCARD.unauthorized_third_card == "discard"
    d = unauthorized_player_third_card(four, STRAY, disclosed=True, submission=DISCARD)
    assert (d.action, d.clause, d.card) == (Action.DISCARD_WITH_ONE_MORE, "627a.13(c)(1)", STRAY)
    assert "discard rack" in d.reason and "face down" in d.reason


@pytest.mark.reg("627a.13(c)(2)")
@pytest.mark.parametrize(
    "four", [P6_B6, P6_B7, P8_NATURAL_B2, P3_B9_NATURAL],
    ids=["player6-banker6", "player6-banker7", "player-natural-banker2", "banker-natural"],
)
def test_c2_simulated_round(four: list[Card]) -> None:
    for sub in (SIMULATED, EZ_SIMULATED):
        d = unauthorized_player_third_card(four, STRAY, disclosed=True, submission=sub)
        assert (d.action, d.clause, d.card) == (Action.SIMULATED_ROUND, "627a.13(c)(2)", STRAY)
        assert "simulated round" in d.reason


@pytest.mark.reg("627a.13(c)(2)")
def test_c2_simulated_round_starts_with_the_disclosed_card() -> None:
    d = unauthorized_player_third_card(P6_B6, STRAY, disclosed=True, submission=SIMULATED)
    # d.card (9S) is P1; 8C (B1), AD (P2), KH (B2): Player 9+1 = 0, Banker 8+0 = 8, a Natural.
    result = simulated_round(d.card, parse_cards("8C AD KH"), game=EZ_SIMULATED.game)
    assert result.player[0] == STRAY and result.banker_natural
    assert (result.player_total, result.banker_total, result.outcome.value) == (0, 8, "banker")
    assert result.game is Game.EZ_BACCARAT


# -- (e): insufficient cards ---------------------------------------------------------------------


@pytest.mark.reg("627a.13(e)")
@pytest.mark.parametrize("remaining", [0, 1, 2, 3])
def test_e_fewer_than_four_cards_voids_the_round(remaining: int) -> None:
    d = insufficient_cards(remaining)
    assert d is not None
    assert (d.action, d.clause, d.card) == (Action.VOID_ROUND, "627a.13(e)", None)
    assert "wagers are returned" in d.reason and "reshuffled" in d.reason
    assert not can_complete_round(remaining)


@pytest.mark.reg("627a.13(e)")
@pytest.mark.parametrize("remaining,certain", [(4, False), (5, False), (6, True), (7, True), (416, True)])
def test_e_four_or_more_cards_deal_on(remaining: int, certain: bool) -> None:
    assert insufficient_cards(remaining) is None
    assert can_complete_round(remaining) is certain


@pytest.mark.reg("627a.13(e)")
def test_e_five_cards_may_or_may_not_complete() -> None:
    # Five cards left: Player 7 / Banker 6 (no draw) completes on four ...
    assert deal(parse_cards("7H 6D KS KC 2H")).cards_used == 4
    # ... but Player 2 / Banker 3 needs six: the shoe runs out mid-round -> void.
    with pytest.raises(InsufficientCardsError) as info:
        deal(parse_cards("AH 3D AS KC 5H"))
    d = void_decision_for(info.value)
    assert (d.action, d.clause, d.card) == (Action.VOID_ROUND, "627a.13(e)", None)


@pytest.mark.reg("627a.13(e)")
def test_e_simulated_round_running_out_is_void() -> None:
    with pytest.raises(InsufficientCardsError):
        simulated_round(STRAY, parse_cards("2C 3D"))
    with pytest.raises(RulesError):
        void_decision_for(RulesError("not the shoe running out"))  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, 2.0, True, "5", None])
def test_bad_card_counts_are_rejected(bad: object) -> None:
    with pytest.raises(RulesError, match="whole number"):
        insufficient_cards(bad)  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="whole number"):
        can_complete_round(bad)  # type: ignore[arg-type]


# -- scope, inputs, the Decision ------------------------------------------------------------------


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


# -- properties over every first deal -------------------------------------------------------------

# One card of each rank (values: ranks 10-13 all count 0, but pairs and reasons see the rank).
_RANK_CARDS = [Card(r, "S") for r in range(1, 14)]


@pytest.mark.reg("627a.13(b)")
@pytest.mark.reg("627a.13(c)")
def test_every_first_deal_by_rank_matches_the_engine() -> None:
    """All 13^4 first deals: unentitled -> BANKER_THIRD_CARD exactly when the engine, dealt the
    four cards and then the stray card, gives it to the Banker; entitled -> an error."""
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
