"""The table's checks, its shoe reconciliation, its stored-event backstop and the journal decided
again, at their edges: a mutation review found each of these changes of the code surviving the
tests before (an event resent from behind a gap lowered the highest known, and events stored
above it were taken for new)."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import Journal, Record
from controller.table.checks import cards_lost_with, load_count_problem
from controller.table.shoe import Shoe
from controller.table.stored_events import StoredEvents
from test_redecision import KIND, decided, forged, table_journal  # noqa: F401 - the fixture


def test_the_shuffler_holds_the_cards_while_its_delivery_for_the_cut_is_under_way() -> None:
    """checks: "the shuffler while its delivery for the cut may still be under way, and while it
    loads an automatic shoe" holds the cards of the shoe in play."""
    assert cards_lost_with("shuffler", "cutting")
    assert cards_lost_with("shuffler", "loading", automatic_shoe=True)
    assert not cards_lost_with("shuffler", "loading") and not cards_lost_with("shuffler", "shuffling")


@pytest.mark.reg("681a.7(a)")
def test_a_shoe_reporting_more_cards_loaded_than_the_stack_is_a_problem() -> None:
    """681a.7(a): "the stacked cards shall be placed in the dealing shoe"; checks: "the shoe reports
    another number of cards loaded than the stack the core prepared": one more is a problem too."""
    shoe = Shoe("T1-S0001", decks=1, stack_size=52)
    assert load_count_problem(shoe, 52) is None
    assert load_count_problem(shoe, 53) == "the shoe reports 53 cards loaded, the stack holds 52: 1 extra card"
    assert "1 card missing" in load_count_problem(shoe, 51)


@pytest.mark.reg("681a.7(d)(1)")
def test_the_reconciliation_is_not_ok_when_a_card_was_read_twice() -> None:
    """681a.7(d)(1): "to ensure that no cards are missing"; Shoe.reconciliation: "``ok``: what can be
    checked now holds (the load count, and no card read extra, foreign or twice)"."""
    shoe = Shoe("T1-S0001", decks=1, stack_size=52, loaded_count=52)
    for position in range(1, 41):
        shoe.card_left(position, 1 + (position - 1) % 13, (position - 1) // 13)
    shoe.card_left(41, 1, 0)  # the ace of clubs again
    rec = shoe.reconciliation("shuffler")
    assert rec["total"] == 52 and not shoe.cardset().ok
    assert rec["ok"] is False


def test_an_event_resent_from_behind_a_gap_does_not_lower_the_highest_known(tmp_path: Path) -> None:
    """stored_events: "an event above the highest counter stored for its device and epoch cannot be
    in the journal: only the others are looked up" - the events stored above a gap stay found after
    the missing one comes in."""
    with Journal.open(tmp_path / "j.db", table_id="T1") as journal:
        journal.append_batch([Record("input.device", {"n": c}, device_serial="S1", epoch=7, counter=c)
                              for c in (1, 2, 4, 5)])
        stored = StoredEvents(journal)
        assert not stored.contains("S1", 7, 3)
        stored.add("S1", 7, 3)
        journal.append_batch([Record("input.device", {"n": 3}, device_serial="S1", epoch=7, counter=3)])
        stored.committed()
        assert stored.contains("S1", 7, 4) and stored.contains("S1", 7, 5)
        assert not stored.contains("S1", 7, 6)


def test_records_an_input_makes_cut_off_the_journals_end_are_found(table_journal: Path, tmp_path: Path) -> None:  # noqa: F811
    """docs/audit.md, decisions decided again: "the first record that differs, is missing, or follows
    no input ends the audit (exit 1)": a journal cut short after an input, its records gone."""
    def cut_short(rs: list) -> list:
        last = max(i for i, r in enumerate(rs[:-1])
                   if r[KIND].startswith("input.") and not rs[i + 1][KIND].startswith("input."))
        return rs[:last + 1]

    result = decided(forged(table_journal, tmp_path, cut_short))
    assert result.difference is not None and result.difference.seq is None
    assert "after the last entry" in result.difference.why
