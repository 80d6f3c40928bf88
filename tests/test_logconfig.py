"""Logging as configured once for a process (controller/logconfig.py): the ids on every line, and
tracebacks that never print a frame's local variables."""
from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
import structlog

from controller.logconfig import configure_logging, file_only_logger


@pytest.fixture()
def root_handlers():
    """The root logger's handlers and level as they were, put back after the test."""
    root = logging.getLogger()
    kept = (list(root.handlers), root.level)
    yield
    for h in list(root.handlers):
        if h not in kept[0]:
            root.removeHandler(h)
            h.close()
    root.setLevel(kept[1])


def test_a_failure_logged_has_a_plain_traceback_without_local_values(root_handlers, capsys) -> None:
    configure_logging("info", table="T7")
    log = structlog.get_logger()

    def take(pin: str) -> None:
        raise ValueError("the device answered nonsense")

    secret = "".join(("80", "42"))  # not in the source, which a traceback quotes
    try:
        take(pin=secret)
    except ValueError:
        log.exception("reader failed", device="shoe")
    err = capsys.readouterr().err
    assert "reader failed" in err and "table=T7" in err and "device=shoe" in err
    assert "Traceback (most recent call last)" in err and "ValueError: the device answered nonsense" in err
    assert "8042" not in err  # a local's value (rich's traceback, structlog's default, shows them all)


def test_the_log_file_holds_the_failure_and_its_traceback_without_local_values(root_handlers, tmp_path) -> None:
    log_file = tmp_path / "run.log"
    configure_logging("info", file=str(log_file), table="T7")
    secret = "".join(("80", "42"))

    def take(pin: str) -> None:
        raise ValueError("the device answered nonsense")

    try:
        take(pin=secret)
    except ValueError:
        structlog.get_logger().exception("reader failed", device="shoe")
    for h in logging.getLogger().handlers:
        h.flush()
    line = json.loads(log_file.read_text(encoding="utf-8").splitlines()[-1])
    assert line["event"] == "reader failed" and line["table"] == "T7" and line["level"] == "error"
    assert "Traceback (most recent call last)" in line["exception"] and "ValueError: the device answered nonsense" in line["exception"]
    assert secret not in log_file.read_text(encoding="utf-8")


def test_a_file_only_line_reaches_the_log_file_and_never_standard_error(root_handlers, capsys, tmp_path) -> None:
    """What the program said on standard error in its own words (the collector's unreachable broker
    at start) is in the log file all the same, and not said twice on the terminal."""
    log_file = tmp_path / "collector.log"
    configure_logging("info", file=str(log_file))
    file_only_logger().warning("broker unavailable; retrying", reason="nothing listens")
    structlog.get_logger().warning("broker reachable again")
    for h in logging.getLogger().handlers:
        h.flush()
    err = capsys.readouterr().err
    assert "broker reachable again" in err and "unavailable" not in err
    assert [json.loads(line)["event"] for line in log_file.read_text(encoding="utf-8").splitlines()] == [
        "broker unavailable; retrying", "broker reachable again"]


def test_an_id_without_a_value_is_left_out(root_handlers, capsys) -> None:
    configure_logging("info", table="T7")
    structlog.get_logger().info("link up", shoe=None)
    err = capsys.readouterr().err
    assert "link up" in err and "table=T7" in err and "shoe" not in err


def test_the_commands_that_log_start_without_rich_and_rich_still_works() -> None:
    """``shoectl run`` (and feed, floor, scoreboard) import structlog with rich hidden from it:
    its optional rich tracebacks cost every start about 50 ms. The display still imports rich."""
    code = ("import sys\n"
            "from controller.cli import main\n"
            "assert 'run' in main.LOGGING_COMMANDS and 'ctl' not in main.LOGGING_COMMANDS\n"
            "main._import_structlog_without_rich()\n"
            "import structlog.dev, structlog.tracebacks\n"
            "assert structlog.dev.rich is None and structlog.tracebacks.rich is None\n"
            "from rich.console import Console\n"
            "assert 'rich' in sys.modules and sys.modules['rich'] is not None\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_malformed_requests_to_the_scoreboard_log_nothing(root_handlers, capsys, tmp_path) -> None:
    """uvicorn logged a warning for every malformed request: any client that reached the port
    could flood the table's logs and rotate their history away. Each is answered 400, and that is
    all."""
    import socket
    from urllib.parse import urlsplit

    from tests.scoreboard.serving import dealt_journal, serving

    journal = dealt_journal(tmp_path / "journal.db", rounds=1)
    configure_logging("info", table="T1")
    with serving(journal) as server:
        url = urlsplit(server.url)
        for request in (b"NONSENSE\r\n\r\n", b"GET / HTTP/9\r\n\r\n", b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n"):
            with socket.create_connection((url.hostname, url.port), timeout=5) as s:
                s.sendall(request)
                assert s.recv(100).startswith(b"HTTP/1.1 400 ")
    err = capsys.readouterr().err
    assert "Invalid HTTP request" not in err and "warning" not in err, err


def test_a_command_whose_modules_log_writes_its_log_lines_to_stderr_not_its_output() -> None:
    """``shoectl emulate`` printed its devices' log lines (an internal error answering a command)
    to standard output, unconfigured structlog's default, beside the ``{"devices": ...}`` JSON a
    script reads (a developer's review). A command that does not configure logging itself, once its
    modules are imported, has warnings and errors on standard error; one whose modules do not log
    does not import structlog for it."""
    code = ("import sys\n"
            "from controller.cli import main\n"
            "main.build_parser(['emulate'])\n"
            "main.configure_command_logging('emulate')\n"
            "from firmware_bridge.emulator import refusals\n"
            "refusals.log.error('emulated device: internal error answering a command', command='STATUS')\n"
            "refusals.log.info('not shown at the default level')\n"
            "main.build_parser(['journal'])\n"
            "sys.modules.pop('structlog', None)\n"
            "main.configure_command_logging('journal')\n"
            "assert 'structlog' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", done.stdout
    assert "emulated device: internal error answering a command" in done.stderr and "command=STATUS" in done.stderr
    assert "not shown" not in done.stderr


def test_a_paused_reader_of_standard_error_never_holds_the_thread_that_logs(root_handlers) -> None:
    """``shoectl run 2>&1 | less``, the pager paused: the lines for standard error go through a
    ``QueuedOutput``, so a thread that logs (the table's) never waits for the reader; past the
    limit lines are counted, and the first written after says how many were not. Before, the
    handler wrote itself and the table stopped at the first full pipe."""
    import fcntl
    import os
    import threading
    import time

    from controller.queued_output import QueuedOutput

    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    with os.fdopen(w, "w") as stream:
        err = QueuedOutput(stream, name="test-stderr", limit=2000)
        configure_logging("info", table="T7", stderr=err)
        log = structlog.get_logger()
        done = threading.Event()

        def table() -> None:
            for n in range(300):  # about 30 KB: far more than the pipe and the queue hold
                log.warning("player edge above the threshold", round=n)
            done.set()

        threading.Thread(target=table, daemon=True).start()
        assert done.wait(30), "the thread that logs waited for the reader"
        os.set_blocking(r, False)
        got, end = b"", time.monotonic() + 30

        def read() -> bytes:
            try:
                return os.read(r, 65536)
            except BlockingIOError:
                time.sleep(0.005)
                return b""

        while err.pending:  # the reader reads again: everything queued comes out
            assert time.monotonic() < end
            got += read()
        log.warning("the last line")
        while b"the last line" not in got:
            assert time.monotonic() < end, got[-300:]
            got += read()
        assert err.finish()
    os.close(r)
    lines = got.decode().splitlines()
    assert "the last line" in lines[-1]
    # Every line is written, or counted in the "not written" line that comes next, in order.
    expected, skipped = 0, 0
    for line in lines[:-1]:
        if line.endswith("log lines not written: standard error was not read"):
            skipped = int(line.split()[1])
            continue
        assert f"round={expected + skipped}" in line.split(), (line, expected, skipped)
        expected, skipped = expected + skipped + 1, 0
    assert expected + skipped == 300
    assert sum("not written" in line for line in lines) >= 1


def test_a_log_file_that_cannot_be_written_is_said_once_in_one_line(root_handlers, capsys) -> None:
    """A full disk under the log file (an integrator review): every log line put logging's own
    20-line traceback on standard error ("--- Logging error ---"). It is said once, in one line,
    and the run goes on."""
    configure_logging("warning", file="/dev/full", table="T7")
    log = structlog.get_logger()
    for n in range(5):
        log.warning("player edge above the threshold", round=n)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Logging error" not in err
    said = [line for line in err.splitlines() if "log file" in line]
    assert said == ["shoectl: the log file /dev/full cannot be written: No space left on device; "
                    "its lines are lost until it can be"]
    assert sum("player edge" in line for line in err.splitlines()) == 5  # standard error still has them


def _log_deleted_after_a_line(tmp_path):
    """Logging to ``t.log`` in ``tmp_path``, one line written, then the file deleted: (its path, the logger)."""
    path = tmp_path / "t.log"
    configure_logging("info", file=str(path), table="T7")
    log = structlog.get_logger()
    log.info("before")
    path.unlink()
    return path, log


def test_a_log_file_deleted_under_the_table_is_made_again_and_said(root_handlers, capsys, tmp_path) -> None:
    """A review of logs: the log deleted under a running table (a cleanup, a logrotate without
    SIGHUP) took every later line to a file no longer there, unseen until a SIGHUP. The next line
    makes it again at its path, and standard error says so."""
    path, log = _log_deleted_after_a_line(tmp_path)
    log.info("after")
    assert [json.loads(line)["event"] for line in path.read_text().splitlines()] == ["after"]
    said = [line for line in capsys.readouterr().err.splitlines() if "log file" in line]
    assert said == [f"shoectl: the log file {path} was deleted or moved while the table ran: made again at its path"]


def test_a_rotation_its_folder_refuses_keeps_the_lines_in_the_file(root_handlers, capsys, tmp_path, monkeypatch) -> None:
    """A review of logs: at its size limit, in a folder that takes no rename, the log tried the
    rotation again for every line and lost each one. The lines go on to the file, said once. (The
    refusal is a mock: as root no folder refuses a rename here.)"""
    import os

    path = tmp_path / "t.log"
    configure_logging("info", file=str(path), table="T7", max_bytes=300)

    def refused(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    real_rename = os.rename
    monkeypatch.setattr(os, "rename", refused)
    log = structlog.get_logger()
    for n in range(10):
        log.info("line", n=n)
    assert [json.loads(line)["n"] for line in path.read_text().splitlines()] == list(range(10))
    said = [line for line in capsys.readouterr().err.splitlines() if "log file" in line]
    assert said == [f"shoectl: the log file {path} cannot be rotated (Operation not permitted): its lines go on to "
                    "it; tried again as it grows"]
    # the cause gone, the rotation is tried again as the file grows (one failure turned it off for good:
    # a review of the day's changes)
    monkeypatch.setattr(os, "rename", real_rename)
    for n in range(10, 30):
        log.info("line", n=n)
    assert (tmp_path / "t.log.1").exists() and path.stat().st_size < 1200


def test_a_log_given_through_a_link_is_never_rotated(root_handlers, tmp_path) -> None:
    """A review of the day's changes: `--log-file /dev/stderr` with standard error a file renamed
    the link /dev/stderr itself at the size limit (the lines went to files in /dev). A path given
    through a link is written, never rotated: the link and its file stay where they are."""
    import os

    target, link = tmp_path / "real.log", tmp_path / "through.log"
    target.write_text("")
    link.symlink_to(target)
    configure_logging("info", file=str(link), table="T7", max_bytes=300)
    log = structlog.get_logger()
    for n in range(20):
        log.info("line", n=n)
    assert os.path.islink(link) and sorted(p.name for p in tmp_path.iterdir()) == ["real.log", "through.log"]
    assert [json.loads(line)["n"] for line in target.read_text().splitlines()] == list(range(20))


def test_a_log_file_replaced_by_one_it_may_not_write_is_said_once(root_handlers, capsys, tmp_path, monkeypatch) -> None:
    """A review of the day's changes: a log deleted and replaced by a file this account may not
    append to (another's) was neither made again nor said: the lines went on to the deleted file
    unseen. It is said, once."""
    from controller import fsutil

    path, log = _log_deleted_after_a_line(tmp_path)
    path.write_text("")
    monkeypatch.setattr(fsutil, "foreign_append_target", lambda p: "a file another account made")
    for n in range(3):
        log.info("after", n=n)
    said = [line for line in capsys.readouterr().err.splitlines() if "log file" in line]
    assert said == [f"shoectl: the log file {path} was deleted or moved while the table ran: not made again (a file "
                    "another account made): its lines go on to the one gone"]
