"""``python -m benchmarks --quick odds codec`` runs as ``make bench`` runs it and closes with the
summary table: each figure beside its repeats' lowest and highest, its floor and its goal (issue
15). No figure is asserted: the figures are the benchmark's, never a test's."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # about 10 s of benchmark on a shared machine
def test_quick_benchmarks_print_the_summary_table(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "odds", "codec", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = proc.stdout[proc.stdout.index("== summary"):].splitlines()
    assert table[1].split() == ["figure", "value", "min-max", "(repeats)", "floor", "value/floor", "goal", "met"]
    figures = json.loads(out.read_text(encoding="utf-8"))
    rows = figures["odds"]["summary"] + figures["codec"]["summary"]
    assert [r["figure"] for r in rows] == [line[:len(r["figure"])] for line, r in zip(table[2:], rows)]
    for row in rows:
        assert set(row) == {"figure", "value", "unit", "floor", "ratio", "goal", "met", "min", "max", "repeats"}
        assert row["value"] > 0 and row["floor"] > 0 and isinstance(row["met"], bool), row
    # The full shoe's odds (each engine) and the decode are medians of repeats: their lowest and highest
    # stand beside them, around the median; the per-round figure is over different shoes' rounds.
    # Each fast path's answers on the benchmark's own input were its reference path's.
    assert figures["codec"]["answers_checked"] == "20,000 CARD_READ frames decoded: equal"
    assert {figures["odds"][game]["answers_checked"] for game in ("punto-banco", "ez-baccarat", "21-baccarat")} == {
        "4 shoes, the engines against the reference path: equal"}
    repeated = [r for r in rows if "per round" not in r["figure"]]
    assert repeated and all(r["min"] <= r["value"] <= r["max"] and r["repeats"] >= 2 for r in repeated), repeated
    for line, row in zip(table[2:], rows):
        assert (f"({row['repeats']})" in line) == (row in repeated), line


@pytest.mark.slow  # a quick table run: a few seconds
def test_a_benchmark_that_runs_a_table_prints_its_figures_alone_on_standard_output(tmp_path: Path) -> None:
    """The table's own log lines (its links coming up, a warning) go to standard error, never among
    the figures: what stands between the header and the summary is one JSON document."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "table", "--json", str(tmp_path / "f.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    header, rest = proc.stdout.split("\n", 1)
    assert header == "== table (1 of 1)"
    figures = json.loads(rest[:rest.index("== summary")])
    assert figures["card_to_decision_us"]["n"] > 0
    assert "link state" not in proc.stdout


def test_every_test_helper_a_benchmark_imports_imports_as_make_bench_runs(tmp_path: Path) -> None:
    """``make bench`` stopped at the scoreboard's benchmark (2026-12-06): a test helper it imports
    (tests/scoreboard/serving.py) imported another by the path pytest gives the tests, which a
    benchmark run does not have; under pytest it imported. Each ``tests.`` module the benchmarks
    name is imported here as ``python -m benchmarks`` would: a process of its own, from the root."""
    names = sorted({m for path in (ROOT / "benchmarks").glob("*.py")
                    for m in re.findall(r"^\s*from (tests(?:\.\w+)+) import", path.read_text(encoding="utf-8"), re.M)})
    assert "tests.scoreboard.serving" in names, names
    proc = subprocess.run([sys.executable, "-c", "import importlib, sys\nfor n in sys.argv[1:]: importlib.import_module(n)",
                           *names], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_fast_path_answering_otherwise_stops_its_benchmark(mocker, capsys) -> None:
    """A decoder that gets one field wrong is timed no more: ``python -m benchmarks`` says which
    benchmark stopped and why, in one line, and exits 1 (a review: the benchmarks timed the fast
    paths without looking at their answers)."""
    from benchmarks import __main__ as bench_main, bench_codec
    from firmware_bridge.protocol.message_stream import MessageDecoder

    class OffByOne(MessageDecoder):
        def take_items(self):
            return [item._replace(seq=item.seq ^ 1) for item in super().take_items()]

    mocker.patch.object(bench_codec, "MessageDecoder", OffByOne)
    assert bench_main.main(["--quick", "codec", "--json", os.devnull]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["benchmark codec stopped: 20,000 CARD_READ frames decoded: the fast path's answer differs "
                   "from the reference path's"]
