"""58 Pa. Code 627a.13(a) and (d) (Minibaccarat irregularities): a card drawn in error, a card found
face up in the shoe, the held card and the simulated round: controller/rules/irregularities.py.

The shared hands (deal order P1 B1 P2 B2), Rules Submissions and STRAY are in
irregularity_hands.py.
"""
from __future__ import annotations

import pytest
from irregularity_hands import DISCARD, P5_B6, SIMULATED, STRAY

from controller.rules.cards import parse_card, parse_cards
from controller.rules.engine import deal
from controller.rules.errors import CardError
from controller.rules.irregularities import (
    MAX_ROUND_CARDS,
    Action,
    Decision,
    apply_to_next_round,
    card_drawn_in_error,
    face_up_card_in_shoe,
    simulated_round,
)


@pytest.mark.reg("627a.13(a)")
def test_a_undisclosed_card_drawn_in_error_is_next_hands_first_card() -> None:
    """627a.13(a): "a card drawn in error from the dealing shoe that is not disclosed shall be used as the first card of
    the next hand of play". The decision names the clause and says so; its sentence, shown to the
    table, does not name the undisclosed card (the decision's ``card`` does)."""
    d = card_drawn_in_error(STRAY, disclosed=False)
    assert d == Decision(Action.NEXT_HAND_FIRST_CARD, "627a.13(a)", STRAY, d.reason)
    assert "first card of the next hand" in d.reason and "9S" not in d.reason


@pytest.mark.reg("627a.13(a)")
def test_a_held_card_is_p1_of_the_next_round() -> None:
    """627a.13(a): the card drawn in error "shall be used as the first card of the next hand of play":
    held, it is the next round's first Player card (P1), and the shoe gives the rest."""
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
    """627a.13(d): "if a card is disclosed at the time it is dealt ..., the dealer shall use the
    disclosed card as the first card of a simulated round of play in which wagers may not be
    accepted"."""
    d = card_drawn_in_error("9s", disclosed=True)
    assert (d.action, d.clause, d.card) == (Action.SIMULATED_ROUND, "627a.13(d)", STRAY)
    assert "simulated round" in d.reason and "no wagers" in d.reason


@pytest.mark.reg("627a.13(d)")
def test_d_face_up_card_in_the_shoe_starts_a_simulated_round() -> None:
    """627a.13(d): if "a card is found face up in the dealing shoe, the dealer shall use the
    disclosed card as the first card of a simulated round of play"."""
    d = face_up_card_in_shoe(STRAY)
    assert (d.action, d.clause, d.card) == (Action.SIMULATED_ROUND, "627a.13(d)", STRAY)
    assert "face up" in d.reason


@pytest.mark.reg("627a.13(d)")
def test_d_face_up_authorised_player_third_card_is_not_c_but_d() -> None:
    """627a.13(d): "Except as provided in subsection (c), if a card is disclosed at the time it is
    dealt or a card is found face up in the dealing shoe", a simulated round. Player 5 was entitled
    to the third card, so (c) ("when a third card is not authorized") does not apply; the face-up
    card falls under (d) whatever the Rules Submission says."""
    for sub in (DISCARD, SIMULATED):
        d = face_up_card_in_shoe(STRAY, dealt_as_player_third_after=P5_B6, submission=sub)
        assert (d.action, d.clause) == (Action.SIMULATED_ROUND, "627a.13(d)")


@pytest.mark.reg("627a.13(d)")
def test_d_simulated_round_is_dealt_per_the_rules_from_the_disclosed_card() -> None:
    """627a.13(d): the disclosed card is "the first card of a simulated round of play"; "The cards
    shall be dealt in accordance with this chapter and placed in the discard rack upon completion of
    the dealing procedures": the third-card rules apply as in any round."""
    # 9S (P1), 2C (B1), 3D (P2), 4H (B2): Player 9+3 = 2 draws; Banker 2+4 = 6.
    # Player's third 6D (value 6): Banker 6 draws on a 6, takes KS: Banker 6, Player 2+6 = 8.
    shoe = iter(parse_cards("2C 3D 4H 6D KS AC"))
    result = simulated_round(STRAY, shoe)
    assert result.player == tuple(parse_cards("9S 3D 6D"))
    assert result.banker == tuple(parse_cards("2C 4H KS"))
    assert (result.player_total, result.banker_total, result.outcome.value) == (8, 6, "player")
    assert result.cards_used == MAX_ROUND_CARDS
    assert next(shoe) == parse_card("AC")
