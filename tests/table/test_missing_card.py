"""A card that goes missing from the shoe unseen (681a.7(d)(1)): the shoe reads every card that
leaves it by the dealing slot, not the cards left in it when it ends. Those are counted with the
whole set at its next count, which names the shoe whose cards are short; through the table core's
inputs and outputs (sans-I/O), with scripted devices (bench.py)."""
from __future__ import annotations

import pytest
from bench import Bench

from controller.roles import Role
from controller.rules.cards import Composition


def new_stack(b: Bench, cards: int = 416) -> None:
    """The dealer's stack of ``cards`` at a table without a shuffler (the bench's shuffler would
    set it on SHUFFLE)."""
    b.stack, b.drawn, b.cover_index, b.cut_made = Composition.standard(8).cards()[416 - cards:], 0, None, False


def hand_shuffled_shoe(b: Bench, cards: int = 416) -> None:
    """At a table without a shuffler: the dealer's stack of ``cards`` shuffled by hand, cut, loaded."""
    new_stack(b, cards)
    b.op("manual_shuffle_done", Role.DEALER)
    cut_and_load(b)


def cut_and_load(b: Bench) -> None:
    while b.core.shoe.cut_offeree is not None:
        b.op("cut_decline", Role.DEALER, seat=b.core.shoe.cut_offeree)
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("load", Role.DEALER)


@pytest.mark.reg("681a.7(d)(1)")
def test_a_card_missing_from_the_shoe_is_found_by_the_shuffler_and_the_shoe_named() -> None:
    """681a.7(d)(1): "Collect and reshuffle the cards by removing the cards remaining in the shoe
    and placing them in the discard rack to ensure that no cards are missing". The cards left in the
    shoe were never read: the reconciliation says who counts them (the shuffler), and its count
    after the reshuffle, one short, keeps the table closed naming the shoe the card went missing from."""
    b = Bench()
    b.open_and_cut()
    first = b.core.shoe.id
    b.count_delta = -1  # a card taken out of the shoe unseen: the whole set counts one short
    rounds = 0
    while b.core.state == "betting" and rounds < 200:
        b.play_round([(1, "player", 100)])
        rounds += 1
    reconciliation = b.of("reconciliation")[-1]
    assert reconciliation["remaining_counted_by"] == "shuffler"
    assert b.core.state == "count_fault" and b.core.shoe.id != first
    fault = b.of("count_fault")[-1]
    assert (fault["counted"], fault["problem"], fault["collected_from"]) == (415, "1 card missing", first)
    assert f"collected from shoe {first}" in b.notices[-1].text
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    assert b.of("refused")[-1]["input"] == "wager" and b.core.state == "count_fault"


@pytest.mark.reg("681a.7(d)(1)", "681a.7(a)")
def test_without_a_shuffler_the_shoe_counts_the_collected_cards_at_the_next_load() -> None:
    """681a.7(d)(1): the cards are collected "to ensure that no cards are missing"; 681a.7(a): the
    cards "shall be placed in the dealing shoe". At a table shuffling by hand the collected cards are
    first counted by the shoe when they are loaded again: one short keeps the table closed, naming
    the shoe they were collected from."""
    b = Bench(shuffler=False)
    b.op("open")
    hand_shuffled_shoe(b)
    first = b.core.shoe.id
    b.op("close")
    assert b.of("reconciliation")[-1]["remaining_counted_by"] == "shoe"
    b.op("open")
    hand_shuffled_shoe(b, cards=415)
    fault = b.of("count_fault")[-1]
    assert (fault["loaded"], fault["problem"], fault["collected_from"]) == (415, "1 card missing", first)
    assert b.core.state == "count_fault" and f"collected from shoe {first}" in b.notices[-1].text


@pytest.mark.reg("681a.7(d)(1)", "681a.5(a)")
def test_preshuffled_decks_in_place_of_collected_cards_say_those_are_not_counted() -> None:
    """681a.7(d)(1): the cards are collected "to ensure that no cards are missing"; 681a.5(a): the
    dealer shuffles "unless the cards were preshuffled". A preshuffled pack put in play in place of
    the cards collected from the last shoe leaves those cards uncounted by the table: the floorperson
    is told to count them as they are removed from use. The pack itself is counted at loading."""
    b = Bench(shuffler=False)
    b.op("open")
    b.op("preshuffled_decks", Role.DEALER, decks=8)  # the first shoe: nothing collected before it
    assert not [n for n in b.notices if "out of play" in n.text]
    new_stack(b)
    cut_and_load(b)
    first = b.core.shoe.id
    b.op("close")
    b.op("open")
    b.op("preshuffled_decks", Role.DEALER, decks=8)
    warning = b.notices[-1]
    assert warning.level == "warning" and f"shoe {first} go out of play" in warning.text
    new_stack(b)
    cut_and_load(b)
    assert b.core.state == "betting" and not b.of("count_fault")
