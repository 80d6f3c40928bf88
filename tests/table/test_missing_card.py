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


@pytest.mark.reg("681a.7(d)(1)", "681a.7(d)(2)", "681a.5(a)")
def test_the_collected_cards_are_shuffled_by_hand_not_replaced_by_preshuffled_decks() -> None:
    """681a.5(a): "Immediately prior to commencement of play, unless the cards were preshuffled in
    accordance with § 603a.16(u) or (v) ..., after each shoe of cards is dealt or when directed by
    a floorperson or above, the dealer shall shuffle the cards"; 681a.7(d): the dealer shall (1)
    "Collect and reshuffle the cards by removing the cards remaining in the shoe and placing them in
    the discard rack to ensure that no cards are missing"; (2) "Shuffle the cards so that they are
    randomly intermixed". A pack of preshuffled decks is put in play before play commences; after a
    shoe the dealer is prompted to shuffle its collected cards by hand, and a pack in their place
    is refused (a gaming-lab review: it was taken, and the cards left in the last shoe were never
    counted), unless their count failed: they are then removed from use, and said to be uncounted."""
    b = Bench(shuffler=False)
    b.op("open")
    assert b.core.prompt == "SHUFFLE BY HAND"
    b.op("preshuffled_decks", Role.DEALER, decks=8)  # the first shoe: nothing collected before it
    assert not [n for n in b.notices if "out of play" in n.text]
    new_stack(b)
    cut_and_load(b)
    first = b.core.shoe.id
    b.op("close")
    b.op("open")
    assert b.core.prompt == "SHUFFLE COLLECTED"
    before = b.core.snapshot()
    b.op("preshuffled_decks", Role.DEALER, decks=8)
    assert b.of("refused")[-1]["reason"] == (
        f"681a.5(a), 681a.7(d)(1)-(2): the cards of shoe {first} are collected and shuffled by hand "
        "(manual_shuffle_done), so that their count at the load finds a card missing; preshuffled decks are put in "
        "play before play commences, or in place of cards whose count failed")
    assert b.core.snapshot() == before
    hand_shuffled_shoe(b, cards=415)  # shuffled by hand, and counted at the load: one card short
    assert b.core.state == "count_fault" and b.of("count_fault")[-1]["collected_from"] == first
    b.op("order_reshuffle")
    assert b.core.prompt == "SHUFFLE BY HAND"  # cards short are removed from use: a new pack may replace them
    b.op("preshuffled_decks", Role.DEALER, decks=8)
    warning = b.notices[-1]
    assert warning.level == "warning" and "go out of play (their count failed)" in warning.text
    new_stack(b)
    cut_and_load(b)
    assert b.core.state == "betting"


def collected_and_cut() -> tuple[Bench, str]:
    """A table without a shuffler after its first shoe: that shoe's collected cards shuffled by
    hand and cut, not yet loaded (their first count since they were collected is still to come)."""
    b = Bench(shuffler=False)
    b.op("open")
    b.op("preshuffled_decks", Role.DEALER, decks=8)
    new_stack(b)
    cut_and_load(b)
    first = b.core.shoe.id
    b.play_round([(1, "player", 100)])
    b.op("order_reshuffle")
    assert b.core.prompt == "SHUFFLE COLLECTED" and b.core.shoe.made_of == first
    new_stack(b)
    b.op("manual_shuffle_done", Role.DEALER)
    while b.core.shoe.cut_offeree is not None:
        b.op("cut_decline", Role.DEALER, seat=b.core.shoe.cut_offeree)
    b.op("cut", Role.DEALER, position=100)
    return b, first


@pytest.mark.reg("681a.7(d)(1)", "681a.7(d)(2)", "681a.5(a)")
@pytest.mark.parametrize("before_the_load", [["order_reshuffle"], ["restart_shoe"], ["cover", "close", "open"]])
def test_collected_cards_reshuffled_or_closed_before_their_load_are_still_shuffled_by_hand(
        before_the_load: list[str]) -> None:
    """681a.7(d)(1): "Collect and reshuffle the cards ... to ensure that no cards are missing";
    (2): "Shuffle the cards so that they are randomly intermixed"; 681a.5(a): only the shuffle
    "immediately prior to commencement of play" may be replaced by preshuffled cards. The stack of a dealt shoe's collected cards, reshuffled (681a.5(f): "a
    floorperson may determine that the cards should be reshuffled"), restarted or left cut when the
    table closed before it was loaded, is still those cards, never counted since they were
    collected: the table asked only "SHUFFLE BY HAND" and took a pack of preshuffled decks in
    their place, and the cards left in the first shoe were never counted (a gaming lab's review of
    a table without a shuffler). Now it asks again to shuffle the collected cards, refuses the
    pack, and their count at the load names the shoe they came from."""
    b, first = collected_and_cut()
    for command in before_the_load:
        if command == "cover":
            b.op("cover", Role.DEALER, from_bottom=14)
        else:
            b.op(command, **({"reason": "recut"} if command == "restart_shoe" else {}))
    assert b.core.state == "shuffling" and b.core.prompt == "SHUFFLE COLLECTED"
    before = b.core.snapshot()
    b.op("preshuffled_decks", Role.DEALER, decks=8)
    assert b.of("refused")[-1]["reason"].startswith(f"681a.5(a), 681a.7(d)(1)-(2): the cards of shoe {first} are "
                                                   "collected and shuffled by hand")
    assert b.core.snapshot() == before
    hand_shuffled_shoe(b, cards=415)  # shuffled by hand, counted at the load: one card short
    assert b.core.state == "count_fault" and b.of("count_fault")[-1]["collected_from"] == first
