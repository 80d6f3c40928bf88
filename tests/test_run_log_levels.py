"""A normal ``shoectl run`` logs nothing a person must act on (issue 12): a run to ``--shoes 1``, the
same journal resumed, and ``run --json | head -n 3`` (a reader that goes away) leave no ``warning``
or ``error`` line and no traceback, neither on standard error nor in the JSON log beside the
journal (``<journal>.log``); a stop by a signal is checked the same way in
tests/e2e/test_run_stop.py. Each goes through the real CLI in a process of its own, the built-in
emulated table over ptys, and a real pipe."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import JournalReader, verify
from run_logs import LogFile, loud

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 60  # seconds before a run is declared hung (never a performance limit)


def run(journal: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SHOECTL, "run", "--journal", str(journal), "--speed", "max", "--seed", "5", *extra],
                          capture_output=True, text=True, timeout=HANG * 3, stdin=subprocess.DEVNULL)


def kinds(journal: Path) -> list[str]:
    with JournalReader.open(journal) as r:
        return [e.kind for e in r.entries()]


@pytest.mark.slow
def test_a_run_to_one_shoe_and_its_resumption_log_nothing_to_act_on(tmp_path: Path) -> None:
    """Before: every resume warned "event epoch changed" (the built-in emulator is a new device at
    every start, yet its links were told the last events of the one before); a clean stop could
    log "[error] link error ... the table is stopping". The log still says what happened, at info,
    and every line names the table, from whichever thread it comes."""
    journal = tmp_path / "journal.db"
    log = LogFile(journal)
    first = run(journal, "--shoes", "1")
    assert first.returncode == 0, first.stderr[-3000:]
    lines = log.new_lines()
    assert loud(first.stderr, lines) == []
    assert "reconciliation" in kinds(journal)
    assert sum(d["event"] == "handshake done" for d in lines) == 2  # the log is there, at info
    assert {d["table"] for d in lines} == {"T1"}

    again = run(journal, "--shoes", "1")
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.startswith(f"resumed from {journal}: ")
    lines = log.new_lines()
    assert loud(again.stderr, lines) == []
    assert sum(d["event"] == "handshake done" for d in lines) == 2
    assert kinds(journal).count("reconciliation") == 2
    assert verify(journal).ok


def test_a_reader_that_goes_away_stops_the_run_cleanly(tmp_path: Path) -> None:
    """``shoectl run --json | head -n 3`` through a real pipe, with no --shoes or --rounds: once
    head has its three lines and leaves, the run stops the table as cleanly as after --shoes N
    and exits 0 (before: "[error] table stopped: [Errno 32] Broken pipe"). The three lines are
    the journal's first entries, as ``journal export`` writes them."""
    journal = tmp_path / "journal.db"
    table = subprocess.Popen([*SHOECTL, "run", "--journal", str(journal), "--speed", "max", "--seed", "5", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    head = subprocess.Popen(["head", "-n", "3"], stdin=table.stdout, stdout=subprocess.PIPE)
    assert table.stdout is not None
    table.stdout.close()  # head holds the only reading end
    try:
        shown, _ = head.communicate(timeout=HANG)
        _, stderr = table.communicate(timeout=HANG)
    finally:
        for proc in (table, head):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert table.returncode == 0, stderr.decode()[-3000:]
    lines = LogFile(journal).new_lines()
    assert loud(stderr.decode(), lines) == []
    assert stderr == b""
    assert "standard output closed by its reader" in [d["event"] for d in lines]
    with JournalReader.open(journal) as r:
        assert shown.decode().splitlines(keepends=True) == [e.to_json_line() for e in r.entries()][:3]
    assert verify(journal).ok
