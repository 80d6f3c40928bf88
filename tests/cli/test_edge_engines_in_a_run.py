"""``shoectl run --edge-engine`` (or ``SHOECTL_EDGE_ENGINE``): the edge monitor's odds engine. The
tests' processes value edges with the reference engine (``python``, tests/conftest.py: it spares
every ``shoectl run`` they start numpy's import); here a run by each engine, on the same seed,
journals the same exact figures."""
from __future__ import annotations

from pathlib import Path

from cli_run import dealt_journal, run

from controller.journal import JournalReader


def edge_records(journal: Path) -> list[dict]:
    with JournalReader.open(journal) as reader:
        return [e.payload for e in reader.entries() if e.kind == "edge"]


def test_both_engines_journal_the_same_edges(tmp_path: Path) -> None:
    figures = {engine: edge_records(dealt_journal(tmp_path / f"{engine}.db", "--rounds", "12", "--seed", "5",
                                                  "--edge-engine", engine))
               for engine in ("python", "numpy")}
    assert len(figures["python"]) >= 11
    assert figures["python"] == figures["numpy"]


def test_an_engine_that_does_not_exist_is_one_line(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SHOECTL_EDGE_ENGINE", "fortran")
    code, out, err = run(capsys, "run", "--rounds", "1", "--journal", str(tmp_path / "j.db"))
    assert (code, out) == (2, "")
    assert err == "shoectl run: error: SHOECTL_EDGE_ENGINE 'fortran': choose one of auto, python, numpy\n"
    assert not (tmp_path / "j.db").exists()


def test_the_reference_engine_spares_a_run_numpy(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = ("import sys; from controller.cli.main import main; "
              f"code = main(['run', '--rounds', '3', '--speed', 'max', '--display', 'lines', '--journal', {str(tmp_path / 'j.db')!r}, "
              "'--edge-engine', sys.argv[1]]); print(code, 'numpy' in sys.modules)")
    said = {engine: subprocess.run([sys.executable, "-c", script, engine], capture_output=True, text=True, timeout=120,
                                   cwd=tmp_path).stdout.splitlines()[-1]
            for engine in ("python", "numpy")}
    assert said == {"python": "0 False", "numpy": "0 True"}
    assert len(edge_records(tmp_path / "j.db")) >= 5  # both runs valued their rounds
