"""``shoectl emulate``: as a subprocess (JSON line, a pyserial client, SIGTERM -> exit 0) and
in-process for its usage errors (exit 2, one line on stderr)."""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serial

from cli_run import run
from controller.cli import main as cli_main
from firmware_bridge.emulator import read_dealt_log
from firmware_bridge.protocol import (
    CardRead,
    Deliver,
    DeliverTarget,
    Display,
    GateUnlock,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
)

from .host_support import Host, SerialWire

ROOT = Path(__file__).resolve().parents[2]
MODULE = "controller.cli.cmd_emulate"
# Runs shoectl with the emulate command registered, whether or not main.py lists it yet.
LAUNCHER = (
    "import sys\n"
    "from controller.cli import main as m\n"
    f"if {MODULE!r} not in m.COMMAND_MODULES:\n"
    f"    m.COMMAND_MODULES = (*m.COMMAND_MODULES, {MODULE!r})\n"
    "sys.exit(m.main(sys.argv[1:]))\n"
)


@pytest.fixture
def with_emulate(monkeypatch):
    if MODULE not in cli_main.COMMAND_MODULES:
        monkeypatch.setattr(cli_main, "COMMAND_MODULES", (*cli_main.COMMAND_MODULES, MODULE))


_STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _close_pipes():
    """Close the pipes of each emulator a test started (its assertions read its stderr first)."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:  # pragma: no cover - a test that failed before its stop
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()


def start(*args: str) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, "emulate", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _STARTED.append(proc)
    ready, _, _ = select.select([proc.stdout], [], [], 15)
    if not ready:
        proc.kill()
        pytest.fail("shoectl emulate printed nothing within 15 s")
    line = proc.stdout.readline()
    if not line:
        proc.wait(5)
        pytest.fail(f"shoectl emulate exited {proc.returncode}: {proc.stderr.read()}")
    return proc, json.loads(line)


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(10)
    finally:
        if proc.poll() is None:  # pragma: no cover
            proc.kill()


def test_a_pack_of_more_decks_than_a_shoe_holds_is_refused(with_emulate, capsys) -> None:
    """``--decks 1000000`` was taken: the emulator grew past a gigabyte when the table connected
    and stopped answering. A shoe holds 1 to 12 decks (the profiles' ``deck_capacity`` bound)."""
    with pytest.raises(SystemExit) as info:
        cli_main.main(["emulate", "--table", "--no-shuffler", "--decks", "13"])
    assert info.value.code == 2
    assert capsys.readouterr().err.endswith("error: argument --decks: must be at most 12, not 13\n")


def test_a_tcp_port_in_use_is_one_line_naming_it(with_emulate, capsys) -> None:
    """``--port`` in use said only the system's "Address already in use" (a review of bad inputs),
    naming neither the port nor the option."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli_main.main(["emulate", "--profile", "emulated-shoe", "--transport", "tcp", "--port", str(port)]) == 2
    assert capsys.readouterr().err == (f"shoectl emulate: error: --port {port}: the port is in use (another emulator "
                                       "or program listens there); give another, or none for a free one\n")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_emulate_a_profile_on_a_pty(sig) -> None:
    proc, info = start("--profile", "emulated-shuffler", "--speed", "max", "--seed", "1")
    try:
        assert info["profile"] == "emulated-shuffler" and os.path.islink(info["port"])
        with serial.Serial(info["port"], timeout=0.02) as port:
            host = Host(SerialWire(port))
            assert host.handshake().model == "Emulated batch shuffler"
            host.ok(Shuffle(8))
            assert host.wait_for(ShuffleDone).card_count == 416
    finally:
        code = stop(proc, sig)
    assert code == 0, proc.stderr.read()
    assert not os.path.lexists(info["port"])  # cleaned up


def test_a_unit_answers_with_the_serial_and_firmware_given() -> None:
    """A lab swaps a unit under a table, or checks that a firmware version reaches the journal:
    the emulated device's IDENTITY says what --serial and --firmware give (a review of the
    emulator: every emulated unit of a profile had one serial)."""
    proc, info = start("--profile", "emulated-shoe", "--serial", "LAB-0007", "--firmware", "2.3.1-lab")
    try:
        with serial.Serial(info["port"], timeout=0.02) as port:
            identity = Host(SerialWire(port)).handshake()
        assert (identity.serial, identity.firmware, identity.model) == ("LAB-0007", "2.3.1-lab",
                                                                       "Emulated card-reading shoe")
    finally:
        assert stop(proc) == 0


def test_emulate_over_tcp_with_faults() -> None:
    proc, info = start("--profile", "emulated-shoe", "--transport", "tcp",
                       "--faults", "delay=5ms,seed=2")
    try:
        assert info["port"].startswith("socket://127.0.0.1:")
        with serial.serial_for_url(info["port"], timeout=0.02) as port:
            assert Host(SerialWire(port)).handshake().model == "Emulated card-reading shoe"
    finally:
        assert stop(proc) == 0


def test_emulate_a_table_with_a_dealt_log(tmp_path) -> None:
    log = tmp_path / "dealt.log"
    proc, info = start("--table", "--seed", "9", "--speed", "max", "--dealt-log", str(log))
    try:
        devices = info["devices"]
        assert [d["profile"] for d in devices] == ["emulated-shuffler", "emulated-shoe"]
        with serial.Serial(devices[0]["port"], timeout=0.02) as sp, \
                serial.Serial(devices[1]["port"], timeout=0.02) as hp:
            shuffler, shoe = Host(SerialWire(sp)), Host(SerialWire(hp))
            shuffler.handshake()
            shoe.handshake()
            shuffler.ok(Shuffle(8))
            shuffler.wait_for(ShuffleDone)
            shuffler.ok(Deliver(DeliverTarget.DEALER))
            for prompt in ("CUT 20", "COVER 15", "LOAD"):
                shoe.ok(Display(prompt))
            shoe.wait_for(ShoeLoaded)
            shoe.ok(GateUnlock())
            for prompt in ("BURN", "DRAW PLAYER", "DRAW BANKER"):
                shoe.ok(Display(prompt))
            deadline = time.monotonic() + 30  # a hang detector, never a performance limit
            while len(shoe.of(CardRead)) < 3 and time.monotonic() < deadline:
                shoe.pump(0.02)
            reads = shoe.of(CardRead)
            assert [(r.rank, r.suit) for r in reads] == [
                (c.card.rank, c.card.suit) for c in read_dealt_log(log)]  # flushed per line
    finally:
        assert stop(proc) == 0
    assert len(read_dealt_log(log)) == 3


@pytest.mark.parametrize("args, message", [
    (["--profile", "no-such-profile"], "no-such-profile"),
    (["--profile", "emulated-shoe", "--faults", "bogus=1"], "unknown fault 'bogus'"),
    (["--profile", "emulated-shoe", "--faults", "drop=2"], "drop"),
    (["--table", "--faults", "misread-at=-1"], "misread-at='-1': expected a stack position from 1 to"),
    (["--table", "--faults", "misread-at=99999999999999999999999"], "expected a stack position from 1 to 1000000000"),
    (["--table", "--faults", "face-up-at=\u0661"], "expected a stack position"),
    (["--table", "--faults", ",,,,"], "an empty item between commas"),
    (["--table", "--faults", "jam-at=3,"], "an empty item between commas"),
    (["--table", "--faults", "unplug-every=0s"], "unplug-every='0s': expected a duration above 0"),
    (["--table", "--faults", "reset-at=-2"], "expected a whole number from 0 to"),
    (["--table", "--faults", "both-ways=2"], "both-ways='2': expected 0 or 1"),
    (["--table", "--faults", "refuse-display=unload"], "refuse-display='unload': expected a prompt's first word in"),
    (["--table", "--faults", "refuse-display="], "refuse-display='': expected a prompt's first word in capitals"),
    (["--table", "--faults", "dealer-miss=DRAW PLAYER"], "dealer-miss='DRAW PLAYER': expected a prompt's first word"),
    (["--table", "--faults", "refuse-command=HELLO"], "refuse-command='HELLO': expected one of SHUFFLE, DELIVER,"),
    (["--profile", "emulated-shoe", "--speed", "0"], "--speed"),
    (["--profile", "emulated-shoe", "--port", "5"], "--port"),
    (["--profile", "emulated-shoe", "--dealt-log", "x"], "--dealt-log"),
    (["--table", "--transport", "tcp"], "--transport"),
    (["--table", "--shoe-profile", "emulated-autoshoe", "--shuffler-profile", "emulated-shuffler"],
     "the shoe emulated-autoshoe has its shuffler built in"),
    (["--table", "--shoe-profile", "emulated-shuffler"], "--shoe-profile emulated-shuffler: a shuffler, not a shoe"),
    (["--table", "--shuffler-profile", "emulated-shoe"], "--shuffler-profile emulated-shoe: a shoe, not a shuffler"),
    (["--table", "--no-shuffler", "--shuffler-profile", "emulated-shuffler"], "--shuffler-profile: not with --no-shuffler"),
    (["--table", "--no-shuffler", "--shoe-profile", "emulated-autoshoe"],
     "--no-shuffler: the shoe emulated-autoshoe has its shuffler built in"),
    (["--table", "--decks", "6"], "--decks: only with --no-shuffler"),
    # a folder that takes no link named a pty the user never gave (a review of bad inputs)
    (["--table", "--dir", "/proc"], "/proc/shuffler: the link cannot be made there"),
    (["--profile", "emulated-shoe", "--no-shuffler"], "--no-shuffler: only with --table"),
    # ignored once: a shoe served alone has no packs to open, nor a table's other profiles
    (["--profile", "emulated-shoe", "--decks", "3"], "--decks: only with --table"),
    (["--profile", "emulated-shoe", "--shoe-profile", "emulated-autoshoe"], "--shoe-profile: only with --table"),
    (["--profile", "emulated-shoe", "--shuffler-profile", "emulated-shuffler"], "--shuffler-profile: only with --table"),
    (["--table", "--serial", "LAB-1", "--firmware", "2.0"], "--serial, --firmware: only with --profile"),
    (["--profile", "emulated-shoe", "--serial", "S" * 33], "is 33 bytes of UTF-8; the protocol carries at most 32"),
    (["--profile", "emulated-shoe", "--firmware", "2.0\x1b[2J"], "must be printable text"),
    (["--profile", "emulated-shoe", "--serial", ""], "must be printable text, not empty"),
    # faults a device served alone never shows, taken without a word (a review of the emulator)
    (["--profile", "emulated-shoe", "--faults", "misread-at=12,corrupt=0.001,seed=3"],
     "--faults misread-at: a device served alone deals no card (no dealer draws from it); give them with --table"),
    (["--profile", "emulated-shuffler", "--faults", "jam-at=1,dealer-miss=UNLOAD"], "--faults dealer-miss, jam-at: a device"),
    (["--profile", "emulated-shoe", "--faults", "missing-card=2"],
     "--faults missing-card: act on a shuffler; emulated-shoe is a shoe"),
])
def test_usage_errors_exit_2_with_one_line(with_emulate, capsys, args, message) -> None:
    code, _, err = run(capsys, "emulate", *args)  # argparse's own refusals exit as the process would
    assert code == 2
    assert err.count("\n") == 1 and message in err and err.startswith("shoectl emulate: error:")


def test_profile_or_table_is_required(with_emulate, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli_main.main(["emulate"])
    assert info.value.code == 2
    assert "--profile" in capsys.readouterr().err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_sent_as_soon_as_the_ready_line_is_read_is_a_clean_stop(sig) -> None:
    """The ready line is the promise that the emulator is serving and stops cleanly on a signal:
    a supervisor that stops it at once gets exit 0 and the port removed, never a kill."""
    proc, info = start("--profile", "emulated-shoe", "--speed", "max")
    assert stop(proc, sig) == 0, proc.stderr.read()
    assert not os.path.lexists(info["port"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_second_stop_while_the_emulator_closes_is_still_a_clean_stop(sig) -> None:
    """``timeout`` signals the emulator and its whole group: two signals a few milliseconds apart
    killed it 7 times in 8 (exit 143) while it closed its servers (a review). The stop handler
    stays until they are closed: exit 0, the link removed, every time."""
    for _ in range(3):
        proc, info = start("--table", "--speed", "max")
        proc.send_signal(sig)
        time.sleep(0.003)
        assert stop(proc, sig) == 0, proc.stderr.read()
        assert not any(os.path.lexists(d["port"]) for d in info["devices"])


def test_a_link_in_use_or_not_an_emulators_is_left_as_it_is(tmp_path: Path) -> None:
    """A review: ``--link`` replaced any symlink (a user's own, or a running emulator's port),
    then removed it on exit. Only a stale emulator link (to a pty that is gone) is replaced."""
    mine = tmp_path / "mine"
    mine.symlink_to(tmp_path / "notes.txt")
    first, info = start("--profile", "emulated-shoe", "--link", str(tmp_path / "shoe"))
    try:
        for link, target in ((mine, tmp_path / "notes.txt"), (tmp_path / "shoe", Path(os.readlink(info["port"])))):
            proc = subprocess.run([sys.executable, "-c", LAUNCHER, "emulate", "--profile", "emulated-shoe", "--link",
                                   str(link)], cwd=ROOT, capture_output=True, text=True, timeout=30)
            assert proc.returncode == 2 and proc.stdout == ""
            assert proc.stderr == (f"shoectl emulate: error: {link}: is a link to {target}, which is in use (a running "
                                   "emulator's port) or not an emulator's pty; left as it is (stop that emulator, or "
                                   "give a free name for the port)\n")
            assert Path(os.readlink(link)) == target
    finally:
        assert stop(first) == 0
    stale = tmp_path / "stale"
    stale.symlink_to("/dev/pts/999999")  # its emulator killed: the pty is gone
    proc, info = start("--profile", "emulated-shoe", "--link", str(stale))
    assert os.readlink(stale).startswith("/dev/pts/") and os.path.exists(os.readlink(stale))
    assert stop(proc) == 0 and not os.path.lexists(stale)


def test_the_help_says_what_the_ready_line_is_and_that_a_device_alone_deals_no_card(with_emulate, capsys) -> None:
    with pytest.raises(SystemExit):
        cli_main.main(["emulate", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert '{"profile": NAME, "port": PORT}' in said and "deals no card" in said and "exits 0" in said
