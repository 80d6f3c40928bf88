"""``CardsAside`` alone: cards out of the shoe waiting for their place keep their order and
position, an entered card takes the earliest unread one's place, and when the shoe ends every one
still waiting is collected (the table's tests walk the same paths through the core)."""
from __future__ import annotations

import copy

import pytest

from controller.rules.cards import parse_card
from controller.table.aside import CardsAside, Deferred
from controller.table.errors import Refused
from controller.table.round import SetAside


def test_an_entered_card_takes_the_earliest_unread_place_and_keeps_its_face() -> None:
    a = CardsAside()
    a.defer(parse_card("9H"), face_up=False, position=7)
    a.defer(None, face_up=True, position=8)
    a.defer(None, face_up=False, position=9)
    assert a.enter(parse_card("KS")) == 1  # one more still unread
    assert a.deferred[1] == Deferred(parse_card("KS"), True, 8) and a.deferred[2].card is None
    assert a.enter(parse_card("2C")) == 0
    assert [d.position for d in iter(a.next_deferred, None)] == [7, 8, 9] and not a.deferred


def test_entering_a_card_when_none_is_unread_is_refused_and_changes_nothing() -> None:
    a = CardsAside()
    a.defer(parse_card("9H"), face_up=False, position=7)
    before = copy.deepcopy(a)
    with pytest.raises(Refused, match="no misread card is waiting"):
        a.enter(parse_card("KS"))
    assert a == before


@pytest.mark.reg("681a.7(d)(1)")
def test_the_shoe_ending_collects_every_card_still_waiting_in_order() -> None:
    """The cards are collected "to ensure that no cards are missing": a held card, the simulated
    rounds' first cards and the deferred ones (an unread one without its name) all come back."""
    a = CardsAside()
    a.hold(SetAside(parse_card("AS"), 3, "627a.13(a)"))
    a.simulate(SetAside(parse_card("5D"), 5, "627a.13(d)"))
    a.defer(parse_card("9H"), face_up=False, position=7)
    a.defer(None, face_up=False, position=8)
    a.owe_discard(4)
    waiting = a.collect()
    assert [(str(c) if c else None, p) for c, p, _ in waiting] == [("AS", 3), ("5D", 5), ("9H", 7), (None, 8)]
    assert waiting[1][2] == "627a.13(d)" and "never read" in waiting[3][2]
    assert a == CardsAside()


def test_an_owed_discard_names_the_round_that_owed_it_once() -> None:
    a = CardsAside()
    a.owe_discard(12)
    assert a.discards_owed == 1 and a.pay_discard() == 12 and a.discards_owed == 0
