"""The owner's knowledge of which device events the journal holds (controller/table/stored_events.py):
an event above the highest counter stored for its device and epoch is new without a query; any
other is looked up in the journal (the crash backstop, docs/link.md section 6)."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import Journal, Record
from controller.table.stored_events import StoredEvents


@pytest.fixture()
def journal(tmp_path: Path):  # noqa: ANN201
    with Journal.open(tmp_path / "j.db", table_id="T1") as j:
        yield j


def _store(journal: Journal, serial: str, epoch: int, *counters: int) -> None:
    journal.append_batch([Record("input.device", {"n": c}, device_serial=serial, epoch=epoch, counter=c)
                          for c in counters])


def _counting_lookups(journal: Journal, mocker) -> list[tuple]:  # noqa: ANN001
    calls: list[tuple] = []
    real = journal.find_device_event

    def find(*key):  # noqa: ANN002, ANN202
        calls.append(key)
        return real(*key)
    mocker.patch.object(journal, "find_device_event", side_effect=find)
    return calls


def test_events_above_the_highest_stored_are_new_without_a_query(journal: Journal, mocker) -> None:
    _store(journal, "S1", 7, 1, 2, 3)
    lookups = _counting_lookups(journal, mocker)
    stored = StoredEvents(journal)
    assert not stored.contains("S1", 7, 4)
    stored.add("S1", 7, 4)
    _store(journal, "S1", 7, 4)
    stored.committed()
    assert not stored.contains("S1", 7, 5)
    assert lookups == []


def test_events_behind_a_gap_are_found_in_the_journal(journal: Journal, mocker) -> None:
    """A journal with a gap (3 missing, 4 and 5 stored): after a restart the device resends 3, 4
    and 5; 3 is new, 4 and 5 are found (looked up), 6 is new again without a query."""
    _store(journal, "S1", 7, 1, 2, 4, 5)
    lookups = _counting_lookups(journal, mocker)
    stored = StoredEvents(journal)
    assert [stored.contains("S1", 7, c) for c in (3, 4, 5)] == [False, True, True]
    assert len(lookups) == 3
    assert not stored.contains("S1", 7, 6) and len(lookups) == 3


def test_an_event_twice_in_one_transaction_counts_as_stored(journal: Journal) -> None:
    stored = StoredEvents(journal)
    assert not stored.contains("S1", 7, 1)
    stored.add("S1", 7, 1)
    assert stored.contains("S1", 7, 1)  # not committed yet, but in the batch being built
    stored.rolled_back()  # the commit failed: it is not stored after all
    assert not stored.contains("S1", 7, 1)


def test_another_epoch_or_device_is_asked_of_the_journal(journal: Journal) -> None:
    _store(journal, "S1", 7, 1, 2, 3)
    _store(journal, "S1", 9, 1)
    stored = StoredEvents(journal)
    assert stored.contains("S1", 7, 2)  # an older epoch: looked up
    assert not stored.contains("S1", 9, 2)
    assert not stored.contains("S2", 7, 1)
    stored.add("S1", 11, 1)  # a new epoch: what is stored is read again after the commit
    _store(journal, "S1", 11, 1)
    stored.committed()
    assert stored.contains("S1", 11, 1) and not stored.contains("S1", 11, 2)
