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
