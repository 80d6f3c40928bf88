"""The shoe's preparation: cut and cover cards (681a.5(c)-(d)), burn (681a.7(c)), cover reached."""
from __future__ import annotations

import pytest

from controller.rules.cards import Composition
from controller.rules.shoe import CutError, check_cut, cut, prepare, round_may_start

STACK = Composition.standard(8).cards()  # 416 cards in a known order
N = len(STACK)


@pytest.mark.reg("681a.5(c)")
@pytest.mark.parametrize("position, ok", [(9, False), (10, True), (200, True), (N - 10, True), (N - 9, False), (0, False)])
def test_cover_card_at_least_ten_cards_from_top_and_bottom(position: int, ok: bool) -> None:
    """681a.5(c): "The cards shall be cut by placing a cover card in the stack at least ten cards in from
    the top or the bottom of the stack", read as within neither ten cards of the top nor of the
    bottom (docs/assumptions.md)."""
    if ok:
        check_cut(N, position)
    else:
        with pytest.raises(CutError, match="at least 10 cards in from the top and from the bottom"):
            check_cut(N, position)


@pytest.mark.reg("681a.5(c)")
def test_minimum_depth_can_be_raised_never_lowered() -> None:
    """681a.5(c): "at least ten cards in from the top or the bottom of the stack": a Rules Submission may
    ask for more than ten, never fewer."""
    with pytest.raises(CutError):
        check_cut(N, 12, min_depth=14)
    with pytest.raises(CutError, match="681a.5"):
        check_cut(N, 100, min_depth=9)


@pytest.mark.reg("681a.5(d)")
def test_cards_above_the_cover_card_go_to_the_bottom() -> None:
    """681a.5(d): "the dealer shall take all cards above the cover card and the cover card and place them
    on the bottom of the stack"; no card is lost or added."""
    out = cut(STACK, 50)
    assert out[:N - 50] == STACK[50:] and out[N - 50:] == STACK[:50]
    assert sorted(out) == sorted(STACK)


@pytest.mark.reg("681a.5(d)", "681a.7(c)")
def test_prepare_places_second_cover_card_and_burns_the_first_card() -> None:
    """681a.5(d): "The dealer shall then insert the second cover card in a position at least ten cards
    above the bottom of the stack"; 681a.7(c): "After each full batch of cards is placed in the shoe,
    the dealer shall remove the first card and place it in the discard rack" (the first card after
    the cut)."""
    shoe = prepare(STACK, 50, cover_from_bottom=14, burn=1)
    assert shoe.burned == (STACK[50],)  # the first card after the cut
    assert shoe.first_live == 1 and shoe.cover_index == N - 14
    with pytest.raises(CutError, match="at least 10 cards above the bottom"):
        prepare(STACK, 50, cover_from_bottom=9)


@pytest.mark.reg("681a.7(d)", "681a.5(f)")
def test_rounds_continue_until_the_cover_card_and_the_round_in_progress_completes() -> None:
    """681a.7(d): "If the cover card appears as the first card in the dealing shoe at the beginning of a
    round of play or appears during play, the cover card shall be removed and placed to the side and
    the hand shall be completed"; 681a.5(f): "A reshuffle of the cards in the shoe shall take place
    after the cover card is reached in the shoe and the round of play is completed"."""
    cover = 400
    assert round_may_start(399, cover)
    assert round_may_start(400, cover)  # cover card first at the start of a round: this hand is completed
    assert not round_may_start(401, cover)  # it came out during the last round: reshuffle now
