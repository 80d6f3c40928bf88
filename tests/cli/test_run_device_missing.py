"""``shoectl run --device PROFILE@/dev/missing`` (issue 12): the link retries for ever, and the
people at the table read one line per outage state change with the cause in plain words, never
a nested errno repr, never two copies per retry."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.cli.outages import OutageLines
from firmware_bridge.errors import TransportError
from firmware_bridge.transport.serial import SerialTransport

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 60  # seconds before a wait is declared hung (never a performance limit)
OUTAGE_S = 3  # long enough for many retries (the backoff starts at 0.1 s)


@pytest.mark.slow
def test_a_missing_port_is_one_plain_line_per_device_not_one_per_retry(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    proc = subprocess.Popen(
        [*SHOECTL, "run", "--display", "lines", "--journal", str(tmp_path / "j.db"),
         "--device", f"emulated-shuffler@{missing}-shuffler", "--device", f"emulated-shoe@{missing}-shoe"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        time.sleep(OUTAGE_S)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    waiting = sorted(line for line in err.splitlines() if "waiting for" in line)
    assert waiting == [
        f"!! waiting for the shoe at {missing}-shoe: no such device; retrying every 5 s",
        f"!! waiting for the shuffler at {missing}-shuffler: no such device; retrying every 5 s",
    ], err
    assert "Errno" not in err + out and "link state" not in err and "FAULT: link" not in out
    assert "Traceback" not in err


def test_the_lines_follow_the_outage_not_the_retries() -> None:
    written: list[str] = []
    lines = OutageLines("shoe", "/dev/ttyUSB0", 5.0, written.append)
    lines.prefixes = ("cannot open serial port /dev/ttyUSB0: ",)
    seen: list[tuple[str, str | None]] = []
    report = lines.wrap(lambda state, reason: seen.append((state, reason)))
    steps = [("connecting", None), ("connected", None),                       # the first connect: no line
             ("disconnected", "HEARTBEAT got no reply after 4 attempt(s)"),   # the outage begins
             ("connecting", None),
             ("disconnected", "connect failed: cannot open serial port /dev/ttyUSB0: no such device"),  # new cause
             ("connecting", None),
             ("disconnected", "connect failed: cannot open serial port /dev/ttyUSB0: no such device"),  # a retry
             ("connecting", None), ("connected", None)]                       # back
    for state, reason in steps:
        report(state, reason)
    assert seen == steps  # the runner still hears every report
    assert written == [
        "!! waiting for the shoe at /dev/ttyUSB0: HEARTBEAT got no reply after 4 attempt(s); retrying every 5 s",
        "!! waiting for the shoe at /dev/ttyUSB0: no such device; retrying every 5 s",
        "   the shoe at /dev/ttyUSB0 answers again",
    ]


@pytest.mark.parametrize("port, cause", [("/nonexistent/ttyUSB9", "no such device"), ("/dev/null", "not a serial port")])
def test_a_port_that_does_not_open_says_why_in_plain_words(port: str, cause: str) -> None:
    with pytest.raises(TransportError) as caught:
        SerialTransport(port).open()
    assert str(caught.value) == f"cannot open serial port {port}: {cause}"


@pytest.mark.parametrize("what", ["folder", "file", "fifo", "null"])
def test_a_port_that_never_becomes_one_is_refused_not_waited_for(capsys, tmp_path: Path, what: str) -> None:
    """A review of an integrator's install: `--device P@em`, the emulator's folder instead of the
    link in it, was waited for ("not a serial port; retrying every 8 s") for ever: a folder, a
    regular file, a named pipe or a character device that is no terminal (/dev/null, another
    review) never becomes a port. It is one line, exit 2, nothing made; a port not there yet is
    still waited for (above)."""
    from cli_run import run

    port = Path("/dev/null") if what == "null" else tmp_path / "em"
    if what == "folder":
        port.mkdir()
    elif what == "file":
        port.write_text("not a port")
    elif what == "fifo":
        os.mkfifo(port)
    code, out, err = run(capsys, "run", "--display", "lines", "--journal", str(tmp_path / "j.db"),
                         "--device", f"emulated-shoe@{port}")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    said = {"folder": "a folder, not a port: name the port in it", "file": "a regular file, not a port",
            "fifo": "a pipe or a socket file, not a port",
            "null": "a character device that is no terminal, not a serial port"}[what]
    assert err.startswith(f"shoectl run: error: --device 'emulated-shoe@{port}': {port} is {said}"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if what == "null" else ["em"])


def test_a_terminal_is_taken_as_a_port(tmp_path: Path) -> None:
    """The check above never refuses a terminal: a pty's end is a port (and is opened and closed
    without becoming the checking process's controlling terminal)."""
    from controller.cli.run_devices import _never_a_port

    leader, follower = os.openpty()
    try:
        assert _never_a_port(os.ttyname(follower)) is None
        assert _never_a_port(str(tmp_path / "not-there-yet")) is None
        assert _never_a_port("socket://localhost:7000") is None
    finally:
        os.close(leader)
        os.close(follower)
