"""``shoectl run`` as a systemd service (issue 12, "A table computer's conventions"): the
notifications it sends to ``$NOTIFY_SOCKET`` (a real datagram socket standing in for systemd), the
watchdog that only a turning owner feeds, and the unit ``shoectl systemd-unit`` prints, which
``packaging/shoectl.service`` is and ``systemd-analyze verify`` accepts."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from required import require_command

from cli_run import run
from controller.cli.cmd_systemd import status_line, unit_text
from controller.sdnotify import Notifier, ServiceWatch, watchdog_interval

ROOT = Path(__file__).resolve().parents[2]
SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 120  # seconds before a wait is declared hung (never a performance limit)


class FakeSystemd:
    """A datagram socket where a service's notifications arrive, read as they come (as systemd
    does: the kernel queues only a few datagrams for a socket nobody reads)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind("\0" + address[1:] if address.startswith("@") else address)
        self.sock.settimeout(0.05)
        self._received: list[list[str]] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._closed.is_set():
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            with self._lock:
                self._received.append(data.decode().split("\n"))

    def messages(self) -> list[list[str]]:
        """Every datagram received since the last call, each as its lines."""
        time.sleep(0.1)  # let the reader take what is in flight
        with self._lock:
            out, self._received = self._received, []
        return out

    def close(self) -> None:
        self._closed.set()
        self._reader.join()
        self.sock.close()


@pytest.fixture
def systemd(tmp_path: Path):
    fake = FakeSystemd(str(tmp_path / "notify.sock"))
    yield fake
    fake.close()


def _keys(messages: list[list[str]]) -> list[str]:
    return [line for message in messages for line in message if not line.startswith("STATUS=")]


def test_run_tells_systemd_ready_then_watchdog_then_stopping(tmp_path: Path, systemd: FakeSystemd) -> None:
    env = {**os.environ, "NOTIFY_SOCKET": systemd.address, "WATCHDOG_USEC": "200000"}
    env.pop("WATCHDOG_PID", None)
    # At the default pace (20 times real time) a shoe takes seconds: STATUS= is refreshed at most once a
    # second, and at --speed max a fast machine deals the whole shoe before the first refresh.
    done = subprocess.run([*SHOECTL, "run", "--shoes", "1", "--speed", "20", "--journal", str(tmp_path / "j.db")],
                          env=env, capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    messages = systemd.messages()
    keys = _keys(messages)
    assert keys[0] == "READY=1" and keys[-1] == "STOPPING=1", keys
    assert keys.count("READY=1") == 1 and keys.count("STOPPING=1") == 1
    assert "WATCHDOG=1" in keys[1:-1]
    statuses = [line for m in messages for line in m if line.startswith("STATUS=")]
    assert any(s.startswith("STATUS=table T1: ") and "shoe T1-S0001" in s for s in statuses), statuses
    assert statuses[-1] == "STATUS=stopping"


@pytest.mark.slow
def test_a_service_manager_that_stops_reading_does_not_hold_the_table(tmp_path: Path) -> None:
    """Its socket's queue fills up (a few datagrams); the table still runs to its end and stops."""
    unread = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    unread.bind(str(tmp_path / "notify.sock"))
    try:
        env = {**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify.sock"), "WATCHDOG_USEC": "100000"}
        done = subprocess.run([*SHOECTL, "run", "--shoes", "1", "--speed", "max", "--journal", str(tmp_path / "j.db")],
                              env=env, capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL)
    finally:
        unread.close()
    assert done.returncode == 0, done.stderr


def test_without_notify_socket_nothing_is_sent_and_nothing_fails(tmp_path: Path) -> None:
    assert Notifier.from_environment({}).send("READY=1") is False
    # A service manager that went away: the send fails quietly, the table goes on.
    assert Notifier(str(tmp_path / "gone.sock")).send("READY=1") is False


def test_an_abstract_notify_socket_is_reached() -> None:
    systemd = FakeSystemd(f"@shoectl-test-{uuid.uuid4().hex}")
    try:
        assert Notifier(systemd.address).send("READY=1", "STATUS=multi\nline") is True
        assert systemd.messages() == [["READY=1", "STATUS=multi line"]]
    finally:
        systemd.close()


def test_watchdog_interval_from_the_environment() -> None:
    me = str(os.getpid())
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 30.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": me}) == 30.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None  # for another process
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "soon"}) is None
    assert watchdog_interval({}) is None


def test_a_stuck_owner_stops_the_watchdog_pings(systemd: FakeSystemd) -> None:
    """The pings come from the owner's turns: when it stops turning, systemd hears nothing and
    its watchdog restarts the service; when it turns again, the pings resume."""
    turns = [0]
    moving = threading.Event()
    moving.set()
    stop = threading.Event()

    def owner() -> None:
        while not stop.is_set():
            if moving.is_set():
                turns[0] += 1
            time.sleep(0.01)

    thread = threading.Thread(target=owner, daemon=True)
    thread.start()
    watch = ServiceWatch(Notifier(systemd.address), lambda: turns[0], lambda: "table T1: idle", watchdog_s=0.2).start()
    try:
        _wait_for_key(systemd, "WATCHDOG=1")
        moving.clear()
        time.sleep(0.15)   # a ping already decided may still arrive
        systemd.messages()
        time.sleep(0.6)    # three ping intervals with the owner stuck
        assert "WATCHDOG=1" not in _keys(systemd.messages())
        moving.set()
        _wait_for_key(systemd, "WATCHDOG=1")
    finally:
        watch.stopping()
        stop.set()
        thread.join()
    assert _keys(systemd.messages())[-1:] == ["STOPPING=1"]


def _wait_for_key(systemd: FakeSystemd, key: str) -> None:
    end = time.monotonic() + HANG
    while key not in _keys(systemd.messages()):
        assert time.monotonic() < end, f"no {key}"


def test_status_line_says_what_the_table_does() -> None:
    snap = {"table": "T1", "state": "count_fault", "shoe": "T1-S0002", "round": 7, "cards_remaining": 301,
            "faults": {"link:shoe": "link to the shoe lost: no such device"}}
    assert status_line(snap) == ("table T1: count fault, shoe T1-S0002 round 7, 301 cards left, "
                                 "faults: link to the shoe lost: no such device")
    assert status_line({"table": "T1", "state": "closed", "shoe": None, "faults": {}}) == "table T1: closed"


# -- the unit ---------------------------------------------------------------------------------------


def test_packaging_unit_is_the_generated_one(capsys) -> None:
    code, out, err = run(capsys, "systemd-unit")
    # (where /opt/shoectl/bin/shoectl is not installed, a warning says so: the next test)
    assert code == 0 and err in ("", _NOT_HERE)
    assert out == (ROOT / "packaging" / "shoectl.service").read_text(encoding="utf-8"), (
        "packaging/shoectl.service is stale: run `shoectl systemd-unit -o packaging/shoectl.service`")


def _settings(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            out.setdefault(key, []).append(value)
    return out


def test_unit_runs_the_table_as_a_notify_service_under_its_own_user() -> None:
    s = _settings(unit_text())
    assert s["Type"] == ["notify"] and s["User"] == ["shoectl"] and s["Group"] == ["shoectl"]
    assert s["Restart"] == ["on-failure"] and s["WatchdogSec"] == ["30s"]
    assert s["StateDirectory"] == ["shoectl"] and s["RuntimeDirectory"] == ["shoectl"]
    [exec_start] = s["ExecStart"]
    assert exec_start.startswith("/opt/shoectl/bin/shoectl run --journal /var/lib/shoectl/journal.db "
                                 "--control /run/shoectl/control.sock ")
    # An env file without --device is refused (exit 2, not restarted), never the built-in emulated
    # table dealt into the service's journal (an integrator review).
    assert "--require-device" in exec_start.split() and "2" in s["RestartPreventExitStatus"][0].split()
    assert "143" in s["SuccessExitStatus"][0].split()  # a systemctl stop is a clean stop, not a failure
    # systemctl reload (logrotate's postrotate) is SIGHUP, which opens the log again and stops nothing
    assert s["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
    for key, value in [("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("PrivateTmp", "yes"),
                       ("CapabilityBoundingSet", "")]:
        assert s[key] == [value], key
    # Devices by their udev permissions, not a device cgroup fixed when the service starts.
    assert "DevicePolicy" not in s and "PrivateDevices" not in s


def test_the_unit_gives_the_control_socket_to_the_operators_group_not_the_devices_group() -> None:
    """The operators who use ``ctl`` reach the control socket and nothing else (an integrator
    review): they were in group shoectl, which the udev rules give the shoe's and the shuffler's
    ports, so that any of them could send the devices commands outside PINs, roles and the
    journal, or hold a port so that the table could not open it."""
    s = _settings(unit_text())
    [exec_start] = s["ExecStart"]
    words = exec_start.split()
    assert words[words.index("--control-group") + 1] == "shoectl-operators"
    assert s["SupplementaryGroups"] == ["shoectl-operators"]  # to give the socket to that group, a member
    assert s["Group"] == ["shoectl"]  # the devices' and the journal's
    assert s["RuntimeDirectoryMode"] == ["0755"]  # the socket's own 0660 guards it; 0750 kept other groups out
    # the group not made yet (a review of this session's diff): systemd's status 216, not restarted every 5 s
    assert "216" in s["RestartPreventExitStatus"][0].split()


_NOT_HERE = ("shoectl systemd-unit: warning: '/opt/shoectl/bin/shoectl' is not a program on this computer: the unit "
             "names the shoectl program the table computer runs (--executable; e.g. the output of: command -v "
             "shoectl)\n")


def test_a_unit_naming_a_program_this_computer_lacks_is_made_with_a_warning(tmp_path: Path, capsys) -> None:
    """A unit for another computer may be made here; one for this computer that names nothing
    would fail to start (a packaging review: systemd-analyze failed on it, and nothing said why)."""
    elsewhere = tmp_path / "not-installed" / "bin" / "shoectl"
    code, out, err = run(capsys, "systemd-unit", "--executable", str(elsewhere))
    assert code == 0 and f"ExecStart={elsewhere} run " in out
    assert err == _NOT_HERE.replace("/opt/shoectl/bin/shoectl", str(elsewhere))


@pytest.mark.parametrize("hidden", ["/home/alice/venv/bin/shoectl", "/root/.venv/bin/shoectl", "/tmp/v/bin/shoectl",
                                    "/var/tmp/v/bin/shoectl", "/run/user/1000/shoectl"])
def test_unit_refuses_an_executable_its_own_sandbox_hides(capsys, hidden: str) -> None:
    """The unit's ProtectHome=yes and PrivateTmp=yes hide these folders from the service: a unit
    naming a program there could never start it (a packaging review)."""
    code, out, err = run(capsys, "systemd-unit", "--executable", hidden)
    assert code == 2 and out == "" and err.count("\n") == 1 and "the service cannot see it" in err


def test_unit_refuses_an_executable_that_leads_into_a_hidden_folder(capsys, tmp_path: Path) -> None:
    """By a symlink or a `..`, the program the service would run lies where it cannot see it."""
    link = tmp_path / "shoectl"
    link.symlink_to("/tmp/venv/bin/shoectl")
    for path in (str(link), "/opt/../tmp/venv/bin/shoectl"):
        code, out, err = run(capsys, "systemd-unit", "--executable", path)
        assert code == 2 and out == "" and "the service cannot see it" in err, path


def test_the_unit_starts_the_table_once_the_clock_is_set() -> None:
    """Every journal entry is stamped with the wall clock: a computer without a battery-backed
    clock would deal in 1970 until NTP set it (a review of clocks)."""
    s = _settings(unit_text())
    assert s["Wants"] == ["time-sync.target"] and s["After"] == ["time-sync.target"]


def test_unit_refuses_a_relative_executable(capsys) -> None:
    code, out, err = run(capsys, "systemd-unit", "--executable", "shoectl")
    assert code == 2 and out == "" and err.count("\n") == 1 and "absolute path" in err


@pytest.mark.parametrize("refused", ["/opt/shoe ctl", "/opt/\"shoectl\"", "/opt/it's", "/opt/a\x1bb", "/opt/$HOME/shoectl",
                                     "/opt/a\\x/shoectl"])
def test_unit_refuses_an_executable_that_is_not_one_word(capsys, refused: str) -> None:
    code, out, err = run(capsys, "systemd-unit", "--executable", refused)
    assert code == 2 and out == "" and err.count("\n") == 1 and "without spaces, quotes, $ or backslashes" in err


def test_an_executable_with_a_percent_is_started_as_named(tmp_path: Path, capsys) -> None:
    """systemd reads ``%`` as a specifier in ``ExecStart=``: the unit named another program
    (``/opt/v%i/shoectl`` ran ``/opt/v/shoectl``, ``%i`` being the empty instance name). systemd's
    own check finds the program the unit names (it fails on one that does not exist)."""
    folder = tmp_path / "v%i"
    folder.mkdir()
    program = folder / "shoectl"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    code, out, _ = run(capsys, "systemd-unit", "--executable", str(program))
    assert code == 0 and _verify(out, tmp_path) == ""
    assert "Command " in _verify(unit_text(str(program)), tmp_path)  # the same path unescaped: not found


def _verify(text: str, tmp_path: Path) -> str:
    analyze = require_command("systemd-analyze", "Debian's systemd package")
    path = tmp_path / "shoectl.service"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([analyze, "verify", "--man=no", str(path)], capture_output=True, text=True, timeout=HANG)
    return "\n".join(line for line in (done.stdout + done.stderr).splitlines()
                     if str(path) in line or line.startswith(f"{path.name}: Command "))  # its program not found


def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    # verify checks that the program exists: point the unit at the installed one.
    executable = shutil.which("shoectl", path=str(Path(sys.executable).parent)) or sys.executable
    assert _verify(unit_text(executable), tmp_path) == ""


def test_systemd_analyze_verify_would_catch_a_bad_unit(tmp_path: Path) -> None:
    """The check above is only worth something if verify reports a mistake in our file."""
    executable = shutil.which("shoectl", path=str(Path(sys.executable).parent)) or sys.executable
    bad = unit_text(executable).replace("Restart=on-failure", "Restart=sometimes")
    assert "Restart" in _verify(bad, tmp_path) or "restart" in _verify(bad, tmp_path)
