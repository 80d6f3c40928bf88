"""``shoectl run --json`` writes the journal's entries as ``shoectl journal export`` does (issue 12:
one format for both), each notice as a line of its own, ``{"notice": {"level": ..., "text": ...}}``.
Through the real CLI: the run in a process of its own (the built-in emulated table over ptys), the
export in-process, compared line for line, byte for byte."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def run_json(journal: Path) -> list[str]:
    proc = subprocess.run([*SHOECTL, "run", "--journal", str(journal), "--shoes", "1", "--speed", "max", "--seed", "9",
                           "--json"], capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.splitlines(keepends=True)


def export(capsys, journal: Path, since: int = 0) -> list[str]:
    code, out, err = run(capsys, "journal", "export", str(journal), "--since", str(since))
    assert code == 0, err
    return out.splitlines(keepends=True)


def is_notice(line: str) -> bool:
    return line.startswith('{"notice":')


@pytest.mark.slow
def test_run_json_is_the_journal_export_of_what_the_run_stored(capsys, tmp_path: Path) -> None:
    journal = tmp_path / "journal.db"
    first = run_json(journal)
    # a reader that kept up: the closed journal is not opened again, which left its -wal and -shm (a review)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("journal.db")) == ["journal.db",
                                                                                              "journal.db.anchors",
                                                                                              "journal.db.lock"]
    stored = export(capsys, journal)
    assert [line for line in first if not is_notice(line)] == stored
    assert json.loads(stored[0])["seq"] == 1 and list(json.loads(stored[0]))[:3] == ["seq", "ts", "kind"]

    # Resumed: only what this run stored, with the notices among the entries, each after the
    # entries of the input that made it (here the built-in emulator, a new device at every start:
    # "the shuffler came back as a new device", after its device_replaced entry).
    again = run_json(journal)
    assert [line for line in again if not is_notice(line)] == export(capsys, journal, since=len(stored))
    notices = [json.loads(line) for line in again if is_notice(line)]
    assert notices and all(set(n) == {"notice"} and set(n["notice"]) == {"level", "text"} for n in notices)
    replaced = told = 0
    for line in again:
        if not is_notice(line):
            replaced += json.loads(line)["kind"] == "device_replaced"
        elif "came back as a new device" in json.loads(line)["notice"]["text"]:
            told += 1
            assert told <= replaced, "a notice before the entry that made it"
    # Every device that came back as a new one is said, once, after its entry: both devices at
    # every start of the built-in emulator. The shoe given up with them is not a shoe done, so
    # --shoes 1 deals a whole new shoe after both.
    shown = [line[:160] for line in again if is_notice(line) or '"device_replaced"' in line]
    assert told == replaced == 2, shown
