"""A real table for the control-socket tests and benchmarks: ``shoectl run`` as a subprocess on
the built-in emulator, its journal, its UNIX socket, and raw clients that write exactly the bytes
they are given.

``launch_table(dir, operators_file, *extra, manual=False, speed="max", pace=PACE_MS, edge_monitor=False, ...)``
starts one (the automated dealer unless ``manual``, at ``pace``; None: flat out; the edge monitor, which these tests do not
look at, only if asked: its start-up counts a whole shoe's odds) and waits for its socket;
``Table`` talks to it and stops it.
``make_operators_file(path)`` writes fp1 (floorperson, 2580), d1 (dealer, 4826) and sup
(supervisor, 1357). Keep work directories short: a UNIX socket path has at most 107 bytes.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.journal import JournalReader
from tests.cli_run import run_captured

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
# The automated dealer's wait between its actions (``run --pace``, ms): a round about every 150 ms,
# for a test that needs the table dealing while it does something else. ``--speed`` times only the
# emulator's mechanisms (the shuffle): without a pace the dealer deals flat out, 50 rounds a second
# and more, and the table takes a whole core from the rest of the suite for as long as the test runs.
PACE_MS = "20"
PINS = {"fp1": "2580", "d1": "4826", "sup": "1357"}
ROLES = {"fp1": "floorperson", "d1": "dealer", "sup": "supervisor"}


def shoectl(*args: str, pin: str | None = None, check: bool = False) -> subprocess.CompletedProcess:
    proc = subprocess.run([*SHOECTL, *args], input=(pin + "\n") if pin is not None else None,
                          capture_output=True, text=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def command_line(operator: str, command: str, pin: str | None = None, rid: Any = 1, **args: Any) -> bytes:
    """A command request line for ``operator`` (with their PIN unless ``pin`` is given)."""
    req = {"id": rid, "op": "command", "operator": operator, "pin": PINS.get(operator, "0000") if pin is None else pin,
           "command": command, "args": args}
    return json.dumps(req).encode() + b"\n"


@dataclass
class Table:
    dir: Path
    journal: Path
    sock: Path
    proc: subprocess.Popen
    stderr_path: Path
    argv: list[str] = field(default_factory=list)

    def connect(self, timeout: float = 10.0) -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(timeout)
            s.connect(str(self.sock))
        except BaseException:
            s.close()
            raise
        return s

    def ask(self, line: bytes | dict[str, Any], timeout: float = 10.0) -> dict[str, Any] | None:
        """Send one request line on a fresh connection; its reply (None if the table closed the
        connection without one)."""
        with self.connect(timeout) as s:
            return send_and_read(s, line)

    def ok(self, line: bytes | dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """``ask``, asserting that the table accepted the request; when it did not, the assertion
        says what it answered instead, the state the table is in and its last faults journaled."""
        reply = self.ask(line, timeout)
        if reply is None or not reply["ok"]:
            state = self.status()["state"] if self.alive() else f"stopped: {self.stderr()[-2000:]}"
            raise AssertionError(f"{line!r} answered {reply}; the table is {state}; its last faults: "
                                 f"{self.journaled('fault')[-3:]}")
        return reply

    def status(self, busy_for: float = 10.0) -> dict[str, Any]:
        """The table's status. A table told ``busy`` is asked again for up to ``busy_for``
        seconds: the connections a test just closed hold their slots until the table's threads
        see them closed, a moment later."""
        deadline = time.monotonic() + busy_for
        reply = self.ask({"id": "st", "op": "status"})
        while reply is not None and reply.get("code") == "busy" and time.monotonic() < deadline:
            time.sleep(0.05)
            reply = self.ask({"id": "st", "op": "status"})
        assert reply is not None and reply["ok"], reply
        return reply["status"]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def progress(self) -> tuple[str | None, int]:
        st = self.status()
        return st["shoe"], st["round"]

    def assert_dealing(self, timeout: float = 20.0) -> None:
        """The table runs, answers and deals: its rounds move on."""
        assert self.alive(), self.stderr()
        before = self.progress()
        deadline = time.monotonic() + timeout
        while self.progress() == before:
            assert time.monotonic() < deadline, f"the table stopped dealing at {before}"
            time.sleep(0.05)

    def wait_state(self, want: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        state = self.status()["state"]
        while state != want and time.monotonic() < deadline:
            time.sleep(0.05)
            state = self.status()["state"]
        return state

    def refusals(self, code: str) -> tuple[int, int]:
        """(journaled one by one, counted in refusals_summary records) for refusals with ``code``."""
        single = [r for r in self.journaled("auth_refused", "bad_request", "connection_refused") if r["code"] == code]
        counted = sum(r["by_code"].get(code, 0) for r in self.journaled("refusals_summary"))
        return len(single), counted

    def wait_refusals_counted(self, totals: dict[str, int], timeout: float = 15.0) -> None:
        """Wait until the journal holds ``totals[code]`` refusals of each code, one by one or in a
        ``refusals_summary`` (those beyond the one-by-one window are counted within a second), or
        ``timeout`` passes; the caller's assertions then say what is missing."""
        deadline = time.monotonic() + timeout
        while any(sum(self.refusals(code)) < n for code, n in totals.items()) and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=30)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def journaled(self, *kinds: str) -> list[dict[str, Any]]:
        with JournalReader.open(self.journal) as r:
            return [dict(e.payload, _kind=e.kind, _operator=e.operator) for e in r.entries(kinds=kinds)]

    def assert_stopped_cleanly(self) -> None:
        """Stopped by SIGTERM: the exit of a stop (143, 128 + SIGTERM; 0 before that was the
        convention), no traceback, and the journal verifies."""
        code = self.stop()
        err = self.stderr()
        assert code in (0, 128 + signal.SIGTERM) and "Traceback" not in err, f"exit {code}: {err}"
        code, said = journal_verify(self.journal)
        assert code == 0, said


def journal_verify(journal: Path) -> tuple[int, str]:
    """``shoectl journal verify JOURNAL`` (the chain and the anchors file beside it) through the
    CLI in this process: its exit code and what it printed."""
    code, out, err = run_captured("journal", "verify", str(journal))
    return code, out + err


def send_and_read(s: socket.socket, line: bytes | dict[str, Any]) -> dict[str, Any] | None:
    data = line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n"
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the table closed the connection (too busy): its reply, if any, is still to be read
    return read_reply(s)


def read_reply(s: socket.socket) -> dict[str, Any] | None:
    buf = b""
    while b"\n" not in buf:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        buf += chunk
    return json.loads(buf.split(b"\n", 1)[0])


def make_operators_file(path: Path) -> Path:
    for op_id, pin in PINS.items():
        shoectl("operators", "add", op_id, "--role", ROLES[op_id], "--file", str(path), "--pin-stdin", pin=pin, check=True)
    return path


def launch_table(d: Path, operators_file: Path | None, *extra: str, manual: bool = False, journal: str = "journal.db",
                 control: str | None = "c.sock", wait: bool = True, speed: str = "max", pace: str | None = PACE_MS,
                 edge_monitor: bool = False, **popen: Any) -> Table:
    """``shoectl run`` in ``d`` (with ``operators_file`` if given); waits for its socket unless
    ``wait`` is false. ``popen``: more arguments for ``subprocess.Popen``."""
    argv = [*SHOECTL, "run", "--display", "lines", "--journal", str(d / journal)]
    argv += [] if "--speed" in extra else ["--speed", speed]  # an option is given once (shoectl refuses a second)
    argv += [] if "--seed" in extra else ["--seed", "7"]
    argv += ["--control", str(d / control)] if control else []
    argv += ["--operators", str(operators_file)] if operators_file else []
    manual = manual or "--manual" in extra
    argv += ["--manual"] if manual else ["--pace", pace] if pace else []
    argv += [] if edge_monitor else ["--no-edge-monitor"]
    argv += list(extra)
    sock = d / control if control else (d / journal).with_suffix(".sock")
    err_path = d / f"{Path(journal).stem}.stderr"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, **popen)
    t = Table(d, d / journal, sock, proc, err_path, argv)
    if wait:
        deadline = time.monotonic() + 30
        while not _answers(sock):
            if proc.poll() is not None or time.monotonic() > deadline:
                t.stop()
                raise AssertionError(f"the table's control socket never answered: {t.stderr()}")
            time.sleep(0.05)
    return t


def _answers(path: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(path))
            return send_and_read(s, {"op": "status"}) is not None
    except OSError:
        return False


def proc_number(pid: int, file: str, line_start: str, word: int) -> int:
    """A number from /proc/PID/FILE: word ``word`` of the line that starts with ``line_start``."""
    for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
        if line.startswith(line_start):
            return int(line.split()[word])
    raise AssertionError(f"no {line_start} in /proc/{pid}/{file}")


def low_descriptor_limit(extra: int) -> Callable[[], None]:
    """A ``preexec_fn`` that limits the process to ``extra`` more descriptors than it holds."""
    def limit() -> None:
        fds = len(os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (fds + extra, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    return limit


def descriptor_limit(pid: int) -> int:
    """Process ``pid``'s limit of open files (soft)."""
    return proc_number(pid, "limits", "Max open files", 3)


def rss_kib(pid: int) -> int:
    """The resident memory of process ``pid``, in KiB."""
    return proc_number(pid, "status", "VmRSS:", 1)
