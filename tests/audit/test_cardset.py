"""Card-set verification (the pure function the table calls at each reshuffle)."""
from __future__ import annotations

import random

import pytest

from controller.audit.cardset import UNREADABLE, Read, verify_cardset
from controller.audit.orders import fresh_order
from controller.rules.cards import Composition, parse_cards


def reads_of(order: list[int]) -> list[Read]:
    return [Read(i + 1, c // 4 + 1, c % 4) for i, c in enumerate(order)]


@pytest.fixture
def one_deck() -> list[Read]:
    order = fresh_order(1)
    random.Random(1).shuffle(order)
    return reads_of(order)


def test_a_complete_shoe_is_ok(one_deck: list[Read]) -> None:
    report = verify_cardset(one_deck, decks=1, loaded=52)
    assert report.ok and report.problems == []
    assert (report.expected, report.read, report.identified, report.unread) == (52, 52, 52, 0)
    doc = report.to_json()
    assert doc["ok"] and doc["missing"] == [] and doc["extra"] == []


def test_unread_cards_are_counted_not_named(one_deck: list[Read]) -> None:
    report = verify_cardset(one_deck[:40], decks=1, loaded=52, remaining=12)
    assert report.ok and report.unread == 12 and len(report.not_seen) == 12
    # remaining defaults to loaded - reads
    assert verify_cardset(one_deck[:40], decks=1, loaded=52).unread == 12


def test_a_missing_card_is_named_when_every_card_was_read(one_deck: list[Read]) -> None:
    gone = one_deck[10]
    reads = [r for r in one_deck if r is not gone]
    report = verify_cardset(reads, decks=1, loaded=51, remaining=0)
    assert not report.ok
    assert report.missing == [gone.text()] and report.missing_count == 1
    assert "loaded 51 cards, expected 52" in report.problems
    assert f"missing {gone.text()}" in report.problems


def test_a_missing_card_among_unread_ones_is_counted(one_deck: list[Read]) -> None:
    report = verify_cardset(one_deck[:40], decks=1, loaded=51, remaining=11)
    assert not report.ok and report.missing == [] and report.missing_count == 1
    assert len(report.not_seen) == 12  # the 11 unread plus the missing one: candidates


def test_extra_card_reported_with_its_position(one_deck: list[Read]) -> None:
    dup = one_deck[3]
    reads = [*one_deck[:20], Read(21, dup.rank, dup.suit), *[Read(r.position + 1, r.rank, r.suit) for r in one_deck[20:]]]
    report = verify_cardset(reads, decks=1, loaded=53)
    assert report.extra == [(dup.text(), 21)]
    assert report.surplus == 0 and report.missing_count == 0
    assert not report.ok and f"extra {dup.text()} at position 21" in report.problems


def test_foreign_and_unreadable_cards(one_deck: list[Read]) -> None:
    reads = [*one_deck[:30], Read(31, UNREADABLE, 0), Read(32, 14, 1), Read(33, 5, 7)]
    report = verify_cardset(reads, decks=1, loaded=52)
    assert report.unreadable == [31]
    assert report.foreign == [("rank 14 suit 1", 32), ("rank 5 suit 7", 33)]
    # 52 loaded: 30 identified, 1 unreadable, 2 foreign, 19 never read -> 2 genuine cards missing
    assert report.unread == 19 and report.missing_count == 2 and not report.ok


def test_a_card_outside_a_custom_composition_is_foreign() -> None:
    comp = Composition.standard(1).remove(parse_cards("KS"))
    report = verify_cardset([Read(1, 13, 3)], composition=comp, loaded=51)
    assert report.foreign == [("KS", 1)]


def test_reused_positions_and_unaccounted_cards(one_deck: list[Read]) -> None:
    reads = [*one_deck[:10], Read(10, one_deck[10].rank, one_deck[10].suit)]
    report = verify_cardset(reads, decks=1, loaded=52, remaining=40)
    assert report.reused_positions == [10]
    assert report.unaccounted == 1  # 52 loaded, 11 reads + 40 remaining
    assert any("read + 40 remaining" in p for p in report.problems)


def test_surplus_when_an_extra_card_hides_among_the_unread(one_deck: list[Read]) -> None:
    report = verify_cardset(one_deck[:30], decks=1, loaded=53)
    assert report.surplus == 1 and not report.ok


def test_eight_decks_and_bad_arguments() -> None:
    order = fresh_order(8)
    assert verify_cardset(reads_of(order), decks=8, loaded=416).ok
    with pytest.raises(ValueError, match="exactly one"):
        verify_cardset([], decks=1, composition=Composition.standard(1))
    with pytest.raises(ValueError, match="exactly one"):
        verify_cardset([])
    with pytest.raises(ValueError, match="remaining"):
        verify_cardset([], decks=1, remaining=-1)


def test_position_0_is_unknown_and_never_a_position_read_twice() -> None:
    """docs/protocol.md 9.18, CARD_READ: `position` is "1-based position of the card in the stack
    as loaded, 0 = unknown". A firmware vendor's shoe that does not sense positions (a review: a
    device written from the documents alone) failed every shoe with "position 0 read more than
    once", and the table's reconciliation faulted at every shoe's end."""
    order = fresh_order(1)
    report = verify_cardset([Read(0, c // 4 + 1, c % 4) for c in order], decks=1, loaded=52)
    assert report.reused_positions == [] and report.ok, report.problems
    twice = verify_cardset([Read(7, 1, 0), Read(7, 2, 0)], decks=1, loaded=52, remaining=50)
    assert twice.reused_positions == [7]  # a position the shoe knows, read twice, still is one
