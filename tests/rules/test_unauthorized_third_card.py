"""58 Pa. Code 627a.13(b) and (c) (Minibaccarat irregularities): an unauthorised Player third card,
undisclosed or disclosed, and the third-card rules it is judged by (the fixture hands checked
against the engine): controller/rules/irregularities.py.

The shared hands (deal order P1 B1 P2 B2), Rules Submissions and STRAY are in
irregularity_hands.py.
"""
from __future__ import annotations

import dataclasses

import pytest
from irregularity_hands import (
    DISCARD,
    EZ_SIMULATED,
    P3_B9_NATURAL,
    P5_B6,
    P6_B6,
    P6_B7,
    P7_B4,
    P7_B5,
    P8_NATURAL_B2,
    SIMULATED,
    STRAY,
)

from controller.rules import punto_banco as pb
from controller.rules.cards import Card, parse_cards
from controller.rules.engine import RoundEngine
from controller.rules.errors import RulesError
from controller.rules.irregularities import (
    Action,
    NotAnIrregularityError,
    banker_must_draw,
    face_up_card_in_shoe,
    player_entitled_to_third_card,
    simulated_round,
    unauthorized_player_third_card,
)
from controller.rules.model import Game, Target


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


@pytest.mark.reg("627a.13(b)")
@pytest.mark.parametrize("four", [P7_B4, P7_B5], ids=["player7-banker4", "player7-banker5"])
def test_b_banker_required_to_draw_takes_the_card(four: list[Card]) -> None:
    """627a.13(b): an undisclosed, unauthorized Player third card "shall become the third card of the
    Banker's Hand if the Banker's Hand is required to draw", whatever the Rules Submission says."""
    for sub in (DISCARD, SIMULATED):
        d = unauthorized_player_third_card(four, STRAY, disclosed=False, submission=sub)
        assert (d.action, d.clause, d.card) == (Action.BANKER_THIRD_CARD, "627a.13(b)", STRAY)
        assert "Banker's third card" in d.reason


@pytest.mark.reg("627a.13(b)")
def test_b_banker_third_card_is_where_the_engine_puts_the_next_card() -> None:
    """627a.13(b): the card "shall become the third card of the Banker's Hand": fed to the round after
    a first deal on which the Player stands and the Banker draws, it is the Banker's third card."""
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
    """627a.13(b): "If the Banker's Hand is required to stay, the card dealt in error shall become the
    first card of the next hand of play"."""
    for sub in (DISCARD, SIMULATED):  # (b) does not depend on the Rules Submission
        d = unauthorized_player_third_card(four, STRAY, disclosed=False, submission=sub)
        assert (d.action, d.clause, d.card) == (Action.NEXT_HAND_FIRST_CARD, "627a.13(b)", STRAY)
        assert "next hand" in d.reason


@pytest.mark.reg("627a.13(b)")
def test_b_player_entitled_is_not_an_irregularity() -> None:
    """627a.13(b) is about a third card "when a third card is not authorized under § 627a.10": a Player
    entitled to a third card is dealt it, which is no irregularity (disclosed or not)."""
    with pytest.raises(NotAnIrregularityError, match="entitled to a third card"):
        unauthorized_player_third_card(P5_B6, STRAY, disclosed=False, submission=DISCARD)
    with pytest.raises(RulesError):  # NotAnIrregularityError is a RulesError
        unauthorized_player_third_card(P5_B6, STRAY, disclosed=True, submission=SIMULATED)


@pytest.mark.reg("627a.13(c)")
@pytest.mark.parametrize("four", [P7_B4, P7_B5], ids=["player7-banker4", "player7-banker5"])
def test_c_banker_required_to_draw_takes_the_disclosed_card(four: list[Card]) -> None:
    """627a.13(c): a disclosed unauthorized Player third card: "the dealer shall use the disclosed card
    as the third card of the Banker's Hand if the Banker's Hand is required to draw"."""
    for sub in (DISCARD, SIMULATED):
        d = unauthorized_player_third_card(four, STRAY, disclosed=True, submission=sub)
        assert (d.action, d.clause, d.card) == (Action.BANKER_THIRD_CARD, "627a.13(c)", STRAY)


@pytest.mark.reg("627a.13(c)")
def test_c_card_found_face_up_as_unauthorised_third_card_is_c_not_d() -> None:
    """627a.13(c) governs a third card not authorized that "is disclosed at the time it is dealt or is
    found face up in the dealing shoe"; (d) applies "Except as provided in subsection (c)". A face-up
    card that would be the unauthorized Player third card is decided as (c), not (d)."""
    d = face_up_card_in_shoe(STRAY, dealt_as_player_third_after=P7_B4, submission=DISCARD)
    assert (d.action, d.clause) == (Action.BANKER_THIRD_CARD, "627a.13(c)")
    for four in (P6_B6, P8_NATURAL_B2):
        for sub in (DISCARD, SIMULATED):
            assert face_up_card_in_shoe(STRAY, dealt_as_player_third_after=four, submission=sub) == (
                unauthorized_player_third_card(four, STRAY, disclosed=True, submission=sub)
            )


@pytest.mark.reg("627a.13(c)")
def test_c_needs_the_rules_submission() -> None:
    """627a.13(c): if the Banker stays, the procedure is "one of the following procedures designated in
    the certificate holder's Rules Submission": without a Rules Submission, or with a procedure not
    among them, there is no decision to make."""
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
    """627a.13(c)(1): "Place the disclosed card and one additional card, drawn face down from the dealing
    shoe, into the discard rack without disclosing the additional card"."""
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
    """627a.13(c)(2): "Use the disclosed card as the first card of a simulated round of play in which
    wagers may not be accepted", in Minibaccarat and EZ Baccarat alike."""
    for sub in (SIMULATED, EZ_SIMULATED):
        d = unauthorized_player_third_card(four, STRAY, disclosed=True, submission=sub)
        assert (d.action, d.clause, d.card) == (Action.SIMULATED_ROUND, "627a.13(c)(2)", STRAY)
        assert "simulated round" in d.reason


@pytest.mark.reg("627a.13(c)(2)")
def test_c2_simulated_round_starts_with_the_disclosed_card() -> None:
    """627a.13(c)(2): the disclosed card is "the first card of a simulated round of play", and "The cards
    shall be dealt in accordance with this chapter": the simulated round is dealt by its game's rules."""
    d = unauthorized_player_third_card(P6_B6, STRAY, disclosed=True, submission=SIMULATED)
    # d.card (9S) is P1; 8C (B1), AD (P2), KH (B2): Player 9+1 = 0, Banker 8+0 = 8, a Natural.
    result = simulated_round(d.card, parse_cards("8C AD KH"), game=EZ_SIMULATED.game)
    assert result.player[0] == STRAY and result.banker_natural
    assert (result.player_total, result.banker_total, result.outcome.value) == (0, 8, "banker")
    assert result.game is Game.EZ_BACCARAT
