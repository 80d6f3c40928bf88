"""A table on the built-in emulator resumed with the same command (``--seed`` included) deals new
shoes: the emulator restarted from the same seed dealt the shoe it dealt first again, card for
card, so that the journal's shuffle audit failed for a reason that was no shuffler's (a
surveillance review), and the automated dealer placed the same wagers again (a lab's review).
The same journal resumed alike still deals alike."""
from __future__ import annotations

from pathlib import Path

from cli_run import dealt_journal
from controller.cli.run_table import resumed_seed
from controller.journal import JournalReader


def _shoes(journal: Path) -> dict[str, list[str]]:
    with JournalReader.open(journal) as reader:
        shoes: dict[str, list[str]] = {}
        for e in reader.entries():
            if e.kind in ("card", "burn") and e.shoe_id is not None:
                shoes.setdefault(e.shoe_id, []).append(e.payload["card"])
    return shoes


def _wagers(journal: Path) -> dict[str, list[tuple[int, str, int]]]:
    with JournalReader.open(journal) as reader:
        wagers: dict[str, list[tuple[int, str, int]]] = {}
        for e in reader.entries(kinds="wager"):
            wagers.setdefault(e.shoe_id, []).append((e.payload["seat"], e.payload["kind"], e.payload["amount"]))
    return wagers


def test_a_table_resumed_with_the_same_seed_deals_another_shoe_and_other_wagers(tmp_path: Path) -> None:
    journal = tmp_path / "j.db"
    for _ in range(2):
        dealt_journal(journal, "--rounds", "3", "--seed", "21")
    first, second = _shoes(journal).values()
    assert len(first) >= 12 and len(second) >= 12
    assert first[:12] != second[:12]
    first_wagers, second_wagers = _wagers(journal).values()
    assert len(first_wagers) >= 6 and len(second_wagers) >= 6
    assert first_wagers[:6] != second_wagers[:6]


def test_the_emulators_seed_is_the_runs_for_a_new_journal_and_drawn_from_it_and_the_journals_length_after() -> None:
    assert resumed_seed(21, 0) == 21 and resumed_seed(None, 500) is None
    assert resumed_seed(21, 500) == resumed_seed(21, 500) != resumed_seed(21, 501)
    assert resumed_seed(21, 500) != resumed_seed(22, 500) and resumed_seed(21, 500) != 21
