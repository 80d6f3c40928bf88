"""``Inspection`` (681a.5(g)) alone: what follows an idle table's inspection, and a refusal that
leaves the inspection as it was (the table's tests walk the same rules through the core)."""
from __future__ import annotations

import dataclasses
import itertools

import pytest

from controller.table.errors import Refused
from controller.table.inspection import AfterInspection, Inspection


def _done(i: Inspection, reshuffle_batch: bool = False, has_shuffler: bool = True,
          keeps_one_batch: bool = True) -> AfterInspection:
    return i.done(reshuffle_batch=reshuffle_batch, has_shuffler=has_shuffler, keeps_one_batch=keeps_one_batch)


@pytest.mark.reg("681a.5(g)")
def test_nothing_follows_until_a_player_arrives_after_the_spread() -> None:
    """"After the first player arriving at the table is afforded an opportunity to visually
    inspect the cards": a player seated before the spread is not one arriving."""
    i = Inspection()
    i.player_sat(2)
    i.spread(face_up=False)
    with pytest.raises(Refused, match="no player has sat down since they were spread"):
        _done(i)
    i.player_sat(5)
    i.player_sat(1)
    assert i.first_seat == 5 and _done(i) is AfterInspection.SHUFFLE


@pytest.mark.reg("681a.5(g)(2)")
def test_the_batch_is_spread_when_a_player_asks_or_the_shuffler_may_hold_more_than_one() -> None:
    """"Unless a player requests otherwise, the batch of cards removed from the shuffler does not
    need to be spread for inspection and reshuffled prior to being dealt provided that the
    automated card shuffling device stores a single batch of shuffled cards"."""
    for reshuffle_batch, keeps_one in ((True, True), (False, False)):
        i = Inspection()
        i.spread(face_up=True)
        i.player_sat(3)
        assert _done(i, reshuffle_batch, keeps_one_batch=keeps_one) is AfterInspection.SPREAD_BATCH
        assert i.batch_spread and i.prompt() == "SPREAD FACE UP THE SHUFFLER'S BATCH"
        assert i.record() == {"clause": "681a.5(g)(2)", "face_up": True}
        assert _done(i) is AfterInspection.SHUFFLE and not i.batch_spread


@pytest.mark.reg("681a.5(g)(1)")
def test_without_a_shuffler_the_inspected_cards_are_washed() -> None:
    """"Mixed thoroughly by a washing of the cards, stacked, then shuffled and cut"."""
    i = Inspection()
    i.spread(face_up=False)
    i.player_sat(4)
    assert _done(i, has_shuffler=False) is AfterInspection.WASH and i.washing
    i.stack_replaced()
    assert not i.washing and not i.face_up


def test_every_refusal_leaves_the_inspection_as_it_was() -> None:
    """A refused input changes nothing: each refusal of ``done`` and ``turn_face_up``, from every
    state the fields can take."""
    refusals = 0
    for face_up, batch, seat, washing in itertools.product((False, True), (False, True), (None, 3), (False, True)):
        for call in (lambda i: i.turn_face_up(), *(
                (lambda i, r=r, s=s: _done(i, r, has_shuffler=s)) for r in (False, True) for s in (False, True))):
            i = Inspection(face_up, batch, seat, washing)
            before = dataclasses.replace(i)
            try:
                call(i)
            except Refused:
                refusals += 1
                assert i == before
    assert refusals >= 20
