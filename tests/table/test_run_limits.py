"""``--rounds N`` and ``--shoes N`` stop a run between rounds, never with one on the layout."""
from __future__ import annotations

from controller.journal import kinds
from controller.table.io import TableRecord
from controller.table.run_limits import RunLimits


def _record(record_kind: str, **payload: object) -> TableRecord:
    return TableRecord(record_kind, dict(payload), "T1-S0001", None)


def test_a_simulated_round_begun_with_the_last_rounds_result_is_finished_before_the_run_stops() -> None:
    """627a.13(d): "the dealer shall use the disclosed card as the first card of a simulated round
    of play [...] The cards shall be dealt in accordance with this chapter and placed in the
    discard rack upon completion of the dealing procedures." A card found face up in the shoe
    during round 8 begins that simulated round as round 8 ends: ``--rounds 8`` stopped with it on
    the layout, started and never dealt to completion (the fault soak, paced, with a dealer
    exposing a card)."""
    limits = RunLimits(rounds=8)
    for n in range(1, 9):
        limits.count(_record(kinds.ROUND_START, round=n, kind="normal", wagers=[]))
        assert not limits.reached
        limits.count(_record(kinds.ROUND_RESULT, round=n))
    assert limits.reached
    limits.count(_record(kinds.ROUND_START, round=9, kind="simulated", wagers=[]))
    assert not limits.reached
    limits.count(_record(kinds.ROUND_RESULT, round=9))
    assert limits.reached and limits.rounds_done == 9


def test_a_shoe_limit_waits_for_the_round_in_progress_too() -> None:
    limits = RunLimits(shoes=1)
    limits.count(_record(kinds.ROUND_START, round=1, kind="normal", wagers=[]))
    limits.count(_record(kinds.RECONCILIATION))
    assert not limits.reached and limits.shoes_done == 1
    limits.count(_record(kinds.ROUND_RESULT, round=1))
    assert limits.reached


def test_a_round_ended_by_the_automated_dealers_reveal_ends_a_run_of_that_many_rounds(tmp_path) -> None:
    """A money review: at Midibaccarat a round ends on the automated dealer's `reveal`, not on a
    card; the runner looked at the limit only after a device's or a console's input, so `shoectl run
    --rounds 5` dealt 35 rounds, and could end with a wager on the layout in no round. The run stops
    at its fifth round's end, every wager settled or returned."""
    from cli_run import dealt_journal

    from controller.journal import JournalReader

    journal = dealt_journal(tmp_path / "midi.db", "--submission", "midibaccarat", "--rounds", "5", "--seed", "1",
                            "--no-edge-monitor")
    with JournalReader.open(journal) as r:
        entries = list(r.entries())
    results = [e for e in entries if e.kind == kinds.ROUND_RESULT]
    assert len(results) == 5 and any(e.kind == kinds.REVEALED for e in entries)
    placed = sum(1 for e in entries if e.kind == kinds.WAGER)
    in_rounds = sum(len(e.payload["wagers"]) for e in entries if e.kind == kinds.ROUND_START)
    decided = sum(1 for e in entries if e.kind in (kinds.SETTLEMENT, kinds.WAGER_RETURNED))
    assert placed == in_rounds == decided > 0, (placed, in_rounds, decided)
