"""Helpers and fixtures of the feed's tests (``shoectl feed`` and ``shoectl run --feed``), one copy
of each: ``JOURNAL_TOPIC`` (table T1's journal topic), ``shoectl`` (the CLI as a process, to its
end), ``cli_out`` and ``export_lines`` (``shoectl journal export``'s lines, in-process),
``start_feed`` and ``stopped`` (a ``shoectl feed`` process and its end), ``has_entries`` (whether a
table's journal has its first entries). Fixtures, exposed through tests/floor/conftest.py:
``table_journal`` (a real ``shoectl run`` of 30 rounds, read-only), ``table_journal_copy`` (a copy
of it for one test) and ``five_entry_journal`` (a journal of 5 entries)."""
from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from cli_run import run
from controller.journal import Journal, JournalError, JournalReader
from floor.helpers import SHOECTL
from services.mosquitto import Mosquitto

JOURNAL_TOPIC = "shoectl/v1/tables/T1/journal"


def shoectl(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SHOECTL, *argv], capture_output=True, text=True, timeout=timeout)


def cli_out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """``shoectl ARGV``'s standard output (in-process: no interpreter to start)."""
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return out


def export_lines(capsys: pytest.CaptureFixture[str], journal: Path) -> list[bytes]:
    return [line.encode() for line in cli_out(capsys, "journal", "export", str(journal)).splitlines(keepends=True)]


def start_feed(broker: Mosquitto, journal: Path, *extra: str, user: str = "T1",
               broker_url: str | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([*SHOECTL, "feed", "--journal", str(journal), "--broker", broker_url or broker.url,
                             *broker.login(user),
                             "--log-level", "info", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def stopped(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> tuple[int, str]:
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.stderr is None or proc.stderr.closed:  # stopped before: its output was read then
        return code, ""
    with proc.stderr:
        return code, proc.stderr.read()


def has_entries(journal: Path) -> bool:
    """Whether the table's journal exists with its first entries committed (a feed follows it)."""
    try:
        with JournalReader.open(journal) as r:
            return r.last_seq > 0
    except JournalError:
        return False


@pytest.fixture(scope="module")
def table_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A journal written by a real ``shoectl run`` (read-only to the tests: each copies it)."""
    journal = tmp_path_factory.mktemp("table") / "t1.db"
    out = shoectl("run", "--speed", "max", "--rounds", "30", "--seed", "5", "--journal", str(journal), "--display",
                  "lines", "--no-edge-monitor")
    assert out.returncode == 0, out.stderr
    return journal


@pytest.fixture
def table_journal_copy(table_journal: Path, tmp_path: Path) -> Path:
    """A copy of ``table_journal`` (with its anchors) for one test."""
    copy = tmp_path / "t1.db"
    shutil.copy(table_journal, copy)
    shutil.copy(f"{table_journal}.anchors", f"{copy}.anchors")
    return copy


@pytest.fixture
def five_entry_journal(tmp_path: Path) -> Path:
    """A journal of table T1 holding 5 entries."""
    path = tmp_path / "t1.db"
    with Journal.open(path, table_id="T1") as j:
        for i in range(5):
            j.append("e", {"i": i})
    return path
