"""``shoectl run`` stops on SIGTERM and SIGINT, in a process, through the real path (issue 9
item 2): after a clean stop it exits 143 or 130 and the journal verifies; when the table's thread
is stuck it still exits, after a bounded grace period, and loses nothing committed."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.journal import JournalReader, verify
from run_logs import LogFile, loud

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 60  # seconds before a wait is declared hung (never a performance limit)


def last_seq(journal: Path) -> int:
    if not journal.exists():
        return 0
    try:
        with JournalReader.open(journal) as reader:
            return max((e.seq for e in reader.entries()), default=0)
    except Exception:  # noqa: BLE001 - the file is being created: not yet readable
        return 0


def start(tmp_path: Path, stdout: int | object, *extra: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
    journal, err = tmp_path / "journal.db", tmp_path / "stderr.txt"
    with err.open("wb") as err_file:  # the child writes its own copy
        proc = subprocess.Popen([*SHOECTL, "run", "--journal", str(journal), "--seed", "8", "--speed", "max",
                                 "--json", *extra],
                                stdout=stdout, stderr=err_file, stdin=subprocess.DEVNULL)  # type: ignore[arg-type]
    return proc, journal, err


def wait_for(predicate, what: str) -> None:
    end = time.monotonic() + HANG
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_stops_the_table_cleanly(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    proc, journal, err = start(tmp_path, subprocess.DEVNULL)
    try:
        wait_for(lambda: last_seq(journal) > 200, "a table dealing")
        proc.send_signal(sig)
        assert proc.wait(timeout=HANG) == code, err.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err.read_text() and "exiting now" not in err.read_text()
    assert verify(journal).ok
    # a stop asked for is expected: logged at info (issue 12: it was a warning), nothing above
    lines = LogFile(journal).new_lines()
    assert loud(err.read_text(), lines) == []
    assert [d["signal"] for d in lines if d["event"] == "stopping"] == [sig.name]


def test_sighup_reopens_the_log_file_after_logrotate_renamed_it_and_stops_nothing(tmp_path: Path) -> None:
    """logrotate: rename the log, then `kill -HUP`. SIGHUP's default action ended the table at once
    (no clean stop, socket and WAL left), and systemd counts that as a clean exit, so the unit did
    not restart it (a review of operations); a renamed log got every later line. Now the table
    deals on, the new file at the path gets the lines, and a stop is as clean as ever."""
    proc, journal, err = start(tmp_path, subprocess.DEVNULL, "--shoes", "50")
    log = journal.with_suffix(".log")
    try:
        wait_for(lambda: last_seq(journal) > 200, "a table dealing")
        log.rename(tmp_path / "journal.log.1")
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: log.exists() and "log file reopened" in log.read_text(), "the log reopened")
        dealt = last_seq(journal)
        wait_for(lambda: last_seq(journal) > dealt + 100, "the table dealing on")
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=HANG) == 143, err.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [d["event"] for d in lines][0] == "log file reopened (SIGHUP)"
    assert any(d["event"] == "stopping" for d in lines)  # the stop's lines went to the new file
    assert "stopping" not in (tmp_path / "journal.log.1").read_text()
    assert "Traceback" not in err.read_text() and verify(journal).ok


def test_a_table_whose_output_is_not_read_deals_on_and_a_stop_still_ends_it(tmp_path: Path) -> None:
    """Nobody reads the table's output. Before, the table's own thread wrote it and stopped at the
    first full pipe, the dealer and the devices waiting on a pager; now the table deals on (its
    journal grows far past what the pipe and the output's memory hold), and SIGTERM still ends
    the process within the grace period, with one line saying so, the journal whole."""
    proc, journal, err = start(tmp_path, subprocess.PIPE, "--stop-grace", "1")  # stdout never read
    try:
        # about 350 bytes an entry: 64 KiB of pipe and 1 MiB waiting in memory hold about 3,200
        wait_for(lambda: last_seq(journal) > 4500, "the table to deal on while its output waits")
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    text = err.read_text()
    assert code == 143, text
    assert text.splitlines()[-1] == ("shoectl run: stopped by SIGTERM: its output was not read within 1 s; exiting now "
                                     "(every committed input is in the journal)")
    assert "Traceback" not in text
    assert verify(journal).ok


def test_a_reader_that_pauses_gets_every_entry_when_it_reads_again(tmp_path: Path) -> None:
    """``shoectl run --json | less``, the pager paused for the whole run: the table deals its shoe
    meanwhile (about 1 MB of output: far more than the pipe holds), and the reader then gets every entry of the journal, in order, as
    ``journal export`` writes them (the journal is the buffer), and the run exits 0."""
    proc, journal, err = start(tmp_path, subprocess.PIPE, "--shoes", "1")
    try:
        def dealt() -> bool:
            with JournalReader.open(journal) as reader:  # a shoe's end is its reconciliation
                return any(e.kind == "reconciliation" for e in reader.entries())
        wait_for(lambda: last_seq(journal) > 0 and dealt(), "the shoe dealt while nobody reads")
        assert proc.poll() is None  # still holding the output the reader has not read
        out, _ = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.read_text()
    entries = [line for line in out.decode().splitlines() if not line.startswith('{"notice":')]
    with JournalReader.open(journal) as reader:
        assert entries == [e.to_json_line().rstrip("\n") for e in reader.entries()]


def test_a_journal_locked_by_another_program_past_the_busy_timeout_is_a_temporary_failure(tmp_path: Path) -> None:
    """A review of signals: a tool writing the live journal (a ``sqlite3`` shell in a write
    transaction) for 2 s or more ended the table with exit 2, which the unit's
    ``RestartPreventExitStatus=2`` keeps down until someone starts it, for a lock that clears by
    itself. It is a temporary failure now: exit 75 (EX_TEMPFAIL), restarted; the journal whole."""
    import sqlite3

    proc, journal, err = start(tmp_path, subprocess.DEVNULL, "--pace", "20")
    other = None
    try:
        wait_for(lambda: last_seq(journal) > 20, "a table dealing")
        other = sqlite3.connect(journal, timeout=10, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        code = proc.wait(timeout=HANG)
    finally:
        if other is not None:
            other.rollback()
            other.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.read_text()
    assert code == 75, text
    assert "the database is locked by another connection" in text.splitlines()[-1] and "Traceback" not in text
    assert verify(journal).ok
