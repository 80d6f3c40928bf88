"""A card nobody at the table may know yet is journaled, and never shown: not on the control
socket's event stream (``TableRecord.shown``), not in a notice. Cards held undisclosed for the next
hand and the face-down card of 627a.13(c)(1) (627a.13(a)-(c)), and a held card opening a face-down
hand (629a.8(c)); through the table core's inputs and outputs (sans-I/O), with scripted devices
(bench.py)."""
from __future__ import annotations

from typing import Any

import pytest
from bench import P_WINS, Bench, after_a_four_card_round, stack_with

from controller.roles import Role
from controller.rules.cards import parse_cards
from controller.table.round import HIDDEN_CARD


def streamed(b: Bench, kind: str) -> list[dict[str, Any]]:
    """The records of ``kind`` as the event stream shows them (runner.py publishes ``shown``)."""
    return [r.payload if r.shown is None else r.shown for r in b.records if r.kind == kind]


def told(b: Bench) -> str:
    return "\n".join(n.text for n in b.notices)


@pytest.mark.reg("627a.13(a)")
def test_a_card_held_undisclosed_is_journaled_and_neither_streamed_nor_told() -> None:
    """627a.13(a): "a card drawn in error from the dealing shoe that is not disclosed shall be used as
    the first card of the next hand of play". Not disclosed: while wagers can still be placed, the
    stream and the notices say a card is held, not which; the journal names it. A second such card,
    held for the hand after the next, is not disclosed either."""
    b = Bench()
    b.open_and_cut()
    b.cards_drawn_in_error(2)
    held, second = b.of("irregularity")
    assert held["card"] == str(b.core.aside.held.card) and held["card"] != HIDDEN_CARD
    assert second["card"] == str(b.core.aside.held_later[0].card)
    assert streamed(b, "irregularity") == [dict(held, card=HIDDEN_CARD), dict(second, card=HIDDEN_CARD)]
    assert held["card"] not in told(b) and second["card"] not in told(b) and "627a.13(a)" in told(b)
    assert held["card"] not in held["reason"]


@pytest.mark.reg("627a.13(b)")
def test_an_undisclosed_unauthorised_third_card_is_not_streamed() -> None:
    """627a.13(b): "A third card dealt to the Player's Hand that is not disclosed, when a third card is
    not authorized": held for the next hand, it is not shown to the table before that hand."""
    b = Bench(stack=stack_with(P_WINS + parse_cards("9S")))
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    b.auto_deal = False
    b.draw()  # a fifth card, face down
    [held] = b.of("irregularity")
    assert held["card"] == "9S" and streamed(b, "irregularity")[0]["card"] == HIDDEN_CARD
    assert "9S" not in told(b) and "9S" not in held["reason"]


@pytest.mark.reg("627a.13(c)(1)")
def test_the_additional_card_of_c1_is_not_disclosed() -> None:
    """627a.13(c)(1): "Place the disclosed card and one additional card, drawn face down from the
    dealing shoe, into the discard rack without disclosing the additional card": the disclosed card
    is shown, the additional one only journaled."""
    b = after_a_four_card_round()
    b.draw(face_up=True)
    b.draw()
    assert [d["card"] for d in b.of("discard")] == ["9S", "AS"]
    assert [d["card"] for d in streamed(b, "discard")] == ["9S", HIDDEN_CARD]
    assert "AS" not in told(b)


@pytest.mark.reg("629a.8(c)", "627a.13(a)")
def test_a_held_card_opening_a_face_down_hand_is_not_shown_before_its_squeeze() -> None:
    """629a.8(c): "The dealer shall then deal an initial four cards from the dealing shoe" face down;
    627a.13(a): the held card "shall be used as the first card of the next hand of play". At
    Midibaccarat that first card is the Player's, face down: the record that it was used does not
    show it either, until the hand is turned over."""
    b = Bench("midibaccarat")
    b.open_and_cut(seats=(1,))
    assert b.core.state == "betting"
    b.auto_deal = False
    b.draw()  # between rounds, face down: held
    held = b.of("irregularity")[-1]["card"]
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.op("no_more_bets", Role.DEALER)
    assert b.of("held_card_used") == [{"card": held, "clause": "627a.13(a)"}]
    assert streamed(b, "held_card_used") == [{"card": HIDDEN_CARD, "clause": "627a.13(a)"}]
    assert held not in told(b)
