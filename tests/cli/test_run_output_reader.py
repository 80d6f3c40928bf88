"""``shoectl run``'s standard output never holds the table (``controller.cli.run_output``): on a real
pipe whose reader pauses, reads again or goes away, and on a device that cannot be written."""
from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from controller.cli.run_output import JournalLines, StdoutLines
from controller.journal import Journal, JournalReader
from controller.table.io import Notice, TableRecord

HANG = 30  # seconds before a wait is declared hung (never a performance limit)
PIPE_BYTES = 4096  # the smallest pipe Linux makes (F_SETPIPE_SZ), so that a paused reader fills it at once


@pytest.fixture
def pipe() -> Iterator[tuple[int, object]]:
    """(read end, a text stream on the write end) of a real pipe of ``PIPE_BYTES``."""
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    stream = os.fdopen(w, "w", encoding="utf-8")
    yield r, stream
    for close in (lambda: os.close(r), stream.close):
        try:
            close()
        except OSError:
            pass


def read_all(fd: int) -> bytes:
    """What the pipe holds now (without waiting for more)."""
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def drain(fd: int, out: StdoutLines) -> bytes:
    """Read the pipe until ``out`` has nothing more waiting for it."""
    got, end = b"", time.monotonic() + HANG
    while out.pending:
        assert time.monotonic() < end, "timed out reading the pipe"
        got += read_all(fd)
        time.sleep(0.005)
    return got + read_all(fd)


def until(predicate, what: str) -> None:
    end = time.monotonic() + HANG
    while not predicate():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_lines_for_people_past_the_limit_are_not_shown_and_the_next_says_how_many(pipe) -> None:
    r, stream = pipe
    out = StdoutLines(stream=stream, limit=1000)
    for n in range(400):  # about 12 KB: the pipe holds 4 KiB, the queue 1,000 bytes
        out.line(f"round {n:3d}: player wins")
    assert out.not_shown > 0
    shown = out.not_shown
    lines = drain(r, out).decode().splitlines()
    assert lines == [f"round {n:3d}: player wins" for n in range(len(lines))]  # in order, none cut
    assert 0 < len(lines) == 400 - shown
    out.line("round 400: banker wins")
    assert out.finish()
    assert read_all(r).decode() == f"... {shown} lines not shown: standard output was not read\nround 400: banker wins\n"


def test_a_write_that_can_wait_is_refused_past_the_limit_and_taken_with_always(pipe) -> None:
    r, stream = pipe
    out = StdoutLines(stream=stream, limit=100)
    assert out.write("x" * 5000)  # fills the pipe; the writer blocks
    until(lambda: out.write("y" * 200) is False, "the limit to be reached")
    queued = out.pending
    assert out.write("z" * 10) is False and out.pending == queued  # refused: nothing queued
    assert out.write("last\n", always=True)
    got = b""
    end = time.monotonic() + HANG
    while not got.endswith(b"last\n"):
        assert time.monotonic() < end
        got += read_all(r)
    assert out.finish()
    assert got.startswith(b"x" * 5000) and b"z" not in got


def test_a_reader_gone_calls_on_gone_once_and_drops_what_follows(pipe) -> None:
    r, stream = pipe
    calls = []
    out = StdoutLines(lambda: calls.append(1), stream=stream)
    os.close(r)
    with capture_logs() as logs:
        out.line("first")
        until(lambda: out.gone, "the closed pipe to be found")
        out.line("second")
        assert out.write("third") is False
        assert out.finish() is False
    assert calls == [1]
    assert [e["log_level"] for e in logs] == ["info"]  # a reader leaving is no error


def test_an_output_that_cannot_be_written_is_one_error_and_the_run_goes_on() -> None:
    """A full disk under ``> file``: one error, ``write_failed`` says why, and the table is not
    stopped (``on_gone`` is for a reader that went away; a review found the table stopped and the
    run exiting 0 with 20 entries of its shoe)."""
    with open("/dev/full", "w", encoding="utf-8") as full, capture_logs() as logs:
        calls = []
        out = StdoutLines(lambda: calls.append(1), stream=full)
        out.line("round 1: player wins")
        until(lambda: out.gone, "the write to fail")
        assert out.finish() is False
    assert calls == [] and out.write_failed == "No space left on device"
    assert [(e["log_level"], e["problem"]) for e in logs] == [("error", "No space left on device")]


def test_the_last_line_reaches_a_reader_behind_with_the_count_of_lines_not_shown(pipe) -> None:
    """``--display lines`` whose reader reads only once the table has stopped: the lines past the
    limit are not shown, and the run's last line (``journal PATH: SEQ:HASH``) is written all the
    same, after how many were not (a review: both were lost)."""
    r, stream = pipe
    out = StdoutLines(stream=stream, limit=1000)
    for n in range(400):
        out.line(f"round {n:3d}: player wins")
    shown_not = out.not_shown
    assert shown_not > 0
    out.line("journal j.db: 3017:ab12", always=True)
    lines = drain(r, out).decode().splitlines()
    assert out.finish()
    assert lines[-2:] == [f"... {shown_not} lines not shown: standard output was not read", "journal j.db: 3017:ab12"]


def test_finish_gives_up_when_asked_and_leaves_the_writer_blocked(pipe) -> None:
    r, stream = pipe
    out = StdoutLines(stream=stream)
    out.write("x" * 20000)
    asked = []
    assert out.finish(lambda: asked.append(1) or len(asked) > 2) is False
    assert len(asked) == 3 and not out.gone
    assert len(drain(r, out)) == 20000 and out.finish()  # read after all: nothing was lost


def test_json_lines_behind_their_reader_read_the_journal_again_and_lose_nothing(pipe, tmp_path: Path) -> None:
    """``run --json`` with a paused reader: entries past the limit are not read from the journal
    until there is room; once the table has closed its journal, ``rest`` reads the remaining ones
    from the file as the reader takes them (the backlog was queued in memory at ``close()``: a
    review), each notice after the entries journaled before it, exactly as ``journal export``
    writes the entries."""
    r, stream = pipe
    limit = 2000
    out = StdoutLines(stream=stream, limit=limit)
    with Journal.open(tmp_path / "j.db", table_id="T1") as journal:
        lines = JournalLines(journal, out)
        notices_after = []
        for i in range(300):
            journal.append("card", {"card": "9S", "to": "player", "position": i, "n": 1}, shoe="S1", round=1)
            lines.record(TableRecord("card", {}, "S1"))
            if i % 100 == 50:
                notices_after.append(journal.last_seq)
                lines.notice(Notice("warning", f"notice after {journal.last_seq}"))
        assert lines.written_seq < journal.last_seq  # behind: the rest waits in the journal
        lines.close()
        longest = max(len(e.to_json_line()) for e in journal.entries())
        assert out.pending <= limit + longest  # not the backlog: it stays in the journal
    assert out.rest is not None
    done, got = _rest_read(r, out)  # the table has closed its journal: the rest comes from its file
    assert done == [True] and out.finish()
    with JournalReader.open(tmp_path / "j.db") as reader:
        entries = [e.to_json_line() for e in reader.entries()]
    text = got.decode()
    expected = list(entries)
    for seq in reversed(notices_after):
        expected.insert(seq, f'{{"notice":{{"level":"warning","text":"notice after {seq}"}}}}\n')
    assert text == "".join(expected)


def test_the_rest_of_json_lines_gives_up_on_a_reader_that_does_not_read_when_asked(pipe, tmp_path: Path) -> None:
    """After a stop signal ``output_read`` waits the stop grace, no longer, for a reader that does
    not read: ``rest`` asks ``give_up`` while it waits for room, and says it gave up."""
    r, stream = pipe
    out = StdoutLines(stream=stream, limit=2000)
    lines = _closed_behind(tmp_path / "j.db", out, 300)
    asked: list[int] = []
    assert out.rest is not None and out.rest(lambda: asked.append(1) or len(asked) > 2) is False
    assert len(asked) == 3 and lines.written_seq < 300
    drain(r, out)  # its writer is not left blocked: closed under it, it would point a reused descriptor at /dev/null
    assert out.finish()


def test_the_rest_of_json_lines_is_this_runs_and_a_journal_moved_first_is_said(pipe, tmp_path: Path) -> None:
    """A review of this change: read after the table closed its journal, the rest took in entries
    another run appended since (a service started again while a slow reader drains); and a journal
    moved away before the drain lost the rest with only a warning, exit 0. The rest stops at this
    run's last entry; a journal gone is the output's failure (``write_failed``: `run` exits 1)."""
    r, stream = pipe
    out = StdoutLines(stream=stream, limit=2000)
    _closed_behind(tmp_path / "j.db", out, 100)
    with Journal.open(tmp_path / "j.db", table_id="T1") as journal:  # the next run
        journal.append("card", {"card": "9S", "to": "player", "position": 100, "n": 1}, shoe="S1", round=1)
    done, got = _rest_read(r, out)
    seqs = [json.loads(line)["seq"] for line in got.splitlines()]
    assert done == [True] and seqs == list(range(1, 101)) and out.write_failed is None

    out = StdoutLines(stream=stream, limit=2000)
    _closed_behind(tmp_path / "k.db", out, 100)
    (tmp_path / "k.db").rename(tmp_path / "archived.db")
    assert out.rest(lambda: False) is True
    assert out.write_failed is not None and "could not be read" in out.write_failed
    drain(r, out)


def _closed_behind(path: Path, out: StdoutLines, cards: int) -> JournalLines:
    """A journal of ``cards`` card records, written and closed behind ``JournalLines`` on ``out``."""
    with Journal.open(path, table_id="T1") as journal:
        lines = JournalLines(journal, out)
        for i in range(cards):
            journal.append("card", {"card": "9S", "to": "player", "position": i, "n": 1}, shoe="S1", round=1)
        lines.close()
    return lines


def _rest_read(r: int, out: StdoutLines) -> tuple[list[bool], bytes]:
    """``out.rest`` run in a thread while the pipe is read: what it returned, and what was read."""
    done: list[bool] = []
    thread = threading.Thread(target=lambda: done.append(out.rest(lambda: False)))
    thread.start()
    got, end = b"", time.monotonic() + HANG
    while thread.is_alive() or out.pending:
        assert time.monotonic() < end, "timed out reading the pipe"
        got += read_all(r)
        time.sleep(0.005)
    thread.join(HANG)
    return done, got + drain(r, out)
