"""The feed's position: only the highest contiguous acknowledged entry, whatever order the PUBACKs
come in; the cursor file replaced whole and refused when it is another journal's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.floor.cursor import AckWindow, CursorError, FeedCursor


def test_out_of_order_acknowledgements_advance_only_through_a_contiguous_run() -> None:
    w = AckWindow(10)
    for mid, seq in ((101, 11), (102, 12), (103, 13), (104, 14)):
        w.published(mid, seq)
    assert w.outstanding == 4
    assert not w.acknowledged(103) and w.acked_through == 10  # 11 and 12 not yet: no step over a gap
    assert not w.acknowledged(999)  # a status message's PUBACK: not an entry
    assert w.acknowledged(101) and w.acked_through == 11
    assert w.acknowledged(102) and w.acked_through == 13
    assert w.outstanding == 1
    assert w.acknowledged(104) and w.acked_through == 14 and w.outstanding == 0
    with pytest.raises(ValueError):
        w.published(105, 16)  # an entry skipped is a bug


def test_the_cursor_round_trips_and_refuses_another_journals(tmp_path: Path) -> None:
    path = tmp_path / "c"
    cursor = FeedCursor(path, "T1", "2026-01-01T00:00:00.000000Z")
    assert cursor.load() == 0
    cursor.save(42)
    assert cursor.load() == 42
    assert json.loads(path.read_text())["seq"] == 42
    assert [p.name for p in tmp_path.iterdir()] == ["c"]  # no temporary file left
    with pytest.raises(CursorError, match="the cursor of another journal"):
        FeedCursor(path, "T1", "2026-02-02T00:00:00.000000Z").load()
    with pytest.raises(CursorError, match="the cursor of another journal"):
        FeedCursor(path, "T2", "2026-01-01T00:00:00.000000Z").load()
    for bad in ('{"format": "shoectl-feed-cursor/1", "table_id": "T1", "seq": -1}', "[]", "x" * 10000):
        path.write_text(bad)
        with pytest.raises(CursorError, match="not a feed cursor"):
            cursor.load()
