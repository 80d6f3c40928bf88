"""``benchmarks.bench_table``: a table that stops dealing fails the run with one line instead of
hanging ``make bench`` (a run on 2026-12-01 waited three hours after a segment's round_start).
No figure is asserted: the figures are the benchmark's, never a test's."""
from __future__ import annotations

import pytest

from benchmarks import bench_table


def test_a_segment_that_does_not_finish_fails_the_run_and_stops_the_emulated_table(monkeypatch) -> None:
    monkeypatch.setattr(bench_table, "SEGMENT_TIMEOUT_S", 0.0, raising=False)  # no segment finishes in no time
    with pytest.raises(RuntimeError, match=r"the table stopped dealing: \d+ of 10 rounds in 0 s "
                                           r"\(the journal's last entry: \d+ [a-z_.]+\)"):
        bench_table.run(quick=True)
