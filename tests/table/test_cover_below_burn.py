"""The second cover card goes below the card(s) burned after the load: the table core and the rules
module (``controller.rules.shoe.check_second_cover``, which both call) refuse a cover card the burn
could not come before, and a refused cover changes nothing."""
from __future__ import annotations

import pytest
from bench import Bench

from controller.roles import Role
from controller.rules.cards import Composition
from controller.rules.shoe import CutError, prepare


@pytest.mark.reg("681a.5(d)", "681a.7(c)")
@pytest.mark.parametrize("from_bottom", [416, 500])
def test_a_cover_card_above_the_burn_card_is_refused_and_changes_nothing(from_bottom: int) -> None:
    """681a.5(d): "The dealer shall then insert the second cover card in a position at least ten
    cards above the bottom of the stack", and 681a.7(c): "After each full batch of cards is placed
    in the shoe, the dealer shall remove the first card and place it in the discard rack." A cover
    card on top of the stack (416 cards above the bottom of a 416-card stack) would come out
    before the card to burn: refused with the limit in words, the table still waiting for the cover
    card, its state as it was; a cover card just below the burn card is taken."""
    b = Bench()
    b.op("open")
    b.op("cut", Role.DEALER, position=100)
    before = b.core.snapshot()
    b.op("cover", Role.DEALER, from_bottom=from_bottom)
    reason = b.of("refused")[-1]["reason"]
    assert "below the card burned after the load (681a.7(c)), at most 415 cards above the bottom" in reason
    assert b.core.snapshot() == before and b.of("cover") == []
    b.op("cover", Role.DEALER, from_bottom=415)
    assert b.of("cover") == [{"from_bottom": 415}] and b.core.state == "ready_to_load"


@pytest.mark.reg("681a.5(d)", "681a.7(c)")
def test_the_rules_module_refuses_the_same_cover_with_the_same_words() -> None:
    """681a.5(d): "insert the second cover card in a position at least ten cards above the bottom of
    the stack"; 681a.7(c): "the dealer shall remove the first card and place it in the discard
    rack". ``prepare`` with two cards to burn refuses a cover card above either of them."""
    cards = Composition.standard(8).cards()
    with pytest.raises(CutError, match="below the 2 cards burned after the load .681a.7.c.., at most 414 cards"):
        prepare(cards, 100, 415, burn=2)
    shoe = prepare(cards, 100, 414, burn=2)
    assert shoe.cover_index == 2 and len(shoe.burned) == 2
