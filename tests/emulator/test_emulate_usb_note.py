"""``shoectl emulate`` serving a USB profile says, in one line on standard error, how ``shoectl
run`` reaches it at its port: ``run`` takes a USB profile only by VID/PID, so a dry run names a
serial profile of the same kind (docs/emulator.md). The JSON line on standard output is unchanged."""
from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run

from controller.cli import cmd_emulate
from firmware_bridge.profiles import resolve_profile

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = "import sys\nfrom controller.cli import main as m\nsys.exit(m.main(sys.argv[1:]))\n"


@pytest.mark.parametrize("name, serial", [
    ("acme-batchshuffler-x", "emulated-shuffler"), ("emulated-usb-shuffler", "emulated-shuffler"),
    ("acme-autoshoe-r", None),  # no cover card sensor, which emulated-autoshoe declares: that link refuses it
])
def test_a_usb_profile_gets_a_note_naming_a_serial_profile(capsys, name: str, serial: str | None) -> None:
    cmd_emulate._usb_note(resolve_profile(name), "/tmp/t/shuffler")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    shipped = f"--device {serial}@/tmp/t/shuffler, or " if serial else ""
    assert captured.err == (f"shoectl emulate: note: {name} is a USB profile, which shoectl run finds by VID/PID only; "
                            f"to drive it at this port: {shipped}a copy of {name} with a serial [transport] "
                            "(docs/emulator.md)\n")


def test_a_serial_profile_gets_no_note(capsys) -> None:
    cmd_emulate._usb_note(resolve_profile("emulated-shoe"), "/tmp/t/shoe")
    assert capsys.readouterr() == ("", "")


def test_the_serial_profile_named_in_the_note_is_taken_at_a_port_where_the_usb_one_is_not(capsys) -> None:
    """What the note says is so: run refuses the USB profile at a port, and the profile it names
    passes the same check (it fails only later, on the missing port itself)."""
    code, out, err = run(capsys, "run", "--rounds", "1", "--device", "acme-batchshuffler-x@/nonexistent/pty")
    assert (code, out) == (2, "") and "is a USB device, found by VID/PID: give no port" in err
    code, out, err = run(capsys, "run", "--rounds", "1", "--device", "emulated-shuffler@/nonexistent/pty")
    assert "found by VID/PID" not in err


@pytest.mark.timeout(60)
def test_emulate_prints_the_note_on_stderr_and_the_same_json_line(tmp_path: Path) -> None:
    link = tmp_path / "usbx"
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, "emulate", "--profile", "acme-batchshuffler-x",
                             "--link", str(link)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()
        assert json.loads(line) == {"profile": "acme-batchshuffler-x", "port": str(link)}
        assert select.select([proc.stderr], [], [], 10)[0], "no note on standard error"
        note = proc.stderr.readline()
        assert note == (f"shoectl emulate: note: acme-batchshuffler-x is a USB profile, which shoectl run finds by "
                        f"VID/PID only; to drive it at this port: --device emulated-shuffler@{link}, or a copy of "
                        "acme-batchshuffler-x with a serial [transport] (docs/emulator.md)\n")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and out == "" and err == ""
