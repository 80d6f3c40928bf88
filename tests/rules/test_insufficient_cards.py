"""58 Pa. Code 627a.13(e) (Minibaccarat irregularities): a round the shoe has too few cards left to
complete is void: controller/rules/irregularity_dealing.py.

The shared hands (deal order P1 B1 P2 B2), Rules Submissions and STRAY are in
irregularity_hands.py.
"""
from __future__ import annotations

import pytest
from irregularity_hands import STRAY

from controller.rules.cards import parse_cards
from controller.rules.engine import deal
from controller.rules.errors import InsufficientCardsError, RulesError
from controller.rules.irregularities import (
    Action,
    can_complete_round,
    insufficient_cards,
    simulated_round,
    void_decision_for,
)


@pytest.mark.reg("627a.13(e)")
@pytest.mark.parametrize("remaining", [0, 1, 2, 3])
def test_e_fewer_than_four_cards_voids_the_round(remaining: int) -> None:
    """627a.13(e): "If there are insufficient cards remaining in the dealing shoe to complete a round of play, that
    round shall be void and all wagers shall be returned"; "A new round shall commence after the entire set of cards are
    reshuffled". Fewer than four cards can never complete a round: void, wagers returned, reshuffle."""
    d = insufficient_cards(remaining)
    assert d is not None
    assert (d.action, d.clause, d.card) == (Action.VOID_ROUND, "627a.13(e)", None)
    assert "wagers are returned" in d.reason and "reshuffled" in d.reason
    assert not can_complete_round(remaining)


@pytest.mark.reg("627a.13(e)")
@pytest.mark.parametrize("remaining,certain", [(4, False), (5, False), (6, True), (7, True), (416, True)])
def test_e_four_or_more_cards_deal_on(remaining: int, certain: bool) -> None:
    """627a.13(e) voids a round only when there "are insufficient cards remaining in the dealing shoe
    to complete a round of play": four or more cards may complete one, so the round is dealt (six
    always do; four or five depend on the draws)."""
    assert insufficient_cards(remaining) is None
    assert can_complete_round(remaining) is certain


@pytest.mark.reg("627a.13(e)")
def test_e_five_cards_may_or_may_not_complete() -> None:
    """627a.13(e): whether the cards are "insufficient ... to complete a round of play" depends on the
    round: five cards complete a round that needs four, and a round that needs six is void."""
    # Five cards left: Player 7 / Banker 6 (no draw) completes on four ...
    assert deal(parse_cards("7H 6D KS KC 2H")).cards_used == 4
    # ... but Player 2 / Banker 3 needs six: the shoe runs out mid-round -> void.
    with pytest.raises(InsufficientCardsError) as info:
        deal(parse_cards("AH 3D AS KC 5H"))
    d = void_decision_for(info.value)
    assert (d.action, d.clause, d.card) == (Action.VOID_ROUND, "627a.13(e)", None)


@pytest.mark.reg("627a.13(e)")
def test_e_simulated_round_running_out_is_void() -> None:
    """627a.13(e): "that round shall be void" holds for a simulated round too: one the shoe cannot
    complete ends as the shoe running out, and only that is decided as a void round."""
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
