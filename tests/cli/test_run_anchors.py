"""When ``shoectl run`` anchors its journal beside the opening and the stop: at every shoe end, and
at a round's end once a minute has passed since the last anchor (a surveillance review: a first
shoe, an hour at a table, was checked against its opening anchor alone)."""
from __future__ import annotations

from types import SimpleNamespace

from controller.cli.run_table import ROUND_ANCHOR_S, _anchored
from controller.table.io import TableRecord


def test_a_rounds_end_is_anchored_a_minute_after_the_last_anchor_and_a_shoes_end_always() -> None:
    now = [0.0]
    anchored: list[float] = []
    shown: list[str] = []
    witness = SimpleNamespace(record=lambda anchor: anchored.append(now[0]))
    journal = SimpleNamespace(take_anchor=lambda: "head")
    record = _anchored(lambda r: shown.append(r.kind), witness, journal, clock=lambda: now[0])
    for at, kind in [(10, "discard_rack"), (ROUND_ANCHOR_S - 1, "discard_rack"), (ROUND_ANCHOR_S, "card"),
                     (ROUND_ANCHOR_S + 1, "discard_rack"), (ROUND_ANCHOR_S + 2, "discard_rack"),
                     (ROUND_ANCHOR_S + 3, "reconciliation"), (2 * ROUND_ANCHOR_S + 2, "discard_rack"),
                     (2 * ROUND_ANCHOR_S + 3, "discard_rack")]:
        now[0] = at
        record(TableRecord(kind, {}, "T1-S0001"))
    assert anchored == [ROUND_ANCHOR_S + 1, ROUND_ANCHOR_S + 3, 2 * ROUND_ANCHOR_S + 3]
    assert len(shown) == 8  # every record still reaches the display
