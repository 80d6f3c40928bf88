"""A command started with a standard stream closed (``>&-``, ``<&-``: a service manager, a script)
takes it as ``/dev/null``: no traceback, and a table goes on dealing. Before, Python left
``sys.stdout`` None and the first print raised (``shoectl run >&-`` stopped its table partway
through a shoe; ``journal export >&-`` exited 1 with a traceback), and with no descriptor 1 the
first file opened would have taken it (a review of bad inputs)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import JournalReader, verify

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def closed(stream: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``shoectl ARGS`` with standard output (``stream="out"``) or input (``"in"``) closed."""
    redirect = ">&-" if stream == "out" else "<&-"
    command = " ".join(f"'{a}'" for a in [*SHOECTL, *args])
    return subprocess.run(["sh", "-c", f"exec {command} {redirect}"], cwd=cwd, stderr=subprocess.PIPE,
                          stdout=subprocess.PIPE if stream == "in" else None, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})


def test_a_table_run_with_its_output_closed_deals_on_and_its_journal_verifies(tmp_path: Path) -> None:
    proc = closed("out", "run", "--rounds", "3", "--speed", "max", "--display", "lines", "--journal", "j.db",
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "NoneType" not in proc.stderr
    verify = subprocess.run([*SHOECTL, "journal", "verify", str(tmp_path / "j.db")], capture_output=True, text=True)
    assert verify.returncode == 0 and ": ok: " in verify.stdout, verify.stdout + verify.stderr
    export = closed("out", "journal", "export", "j.db", cwd=tmp_path)
    assert (export.returncode, export.stderr) == (0, "")


def test_a_table_whose_output_cannot_be_written_deals_on_and_says_so(tmp_path: Path) -> None:
    """``shoectl run > /dev/full`` (a full disk under the output's file): the table deals its shoe
    all the same, its journal has every entry, and the run ends with one line saying the output
    lacks lines, exit 1. Before this session it ended in an error, exit 2; a first fix stopped the
    table at once and exited 0 (a review)."""
    proc = subprocess.run(["sh", "-c", f"exec {' '.join(SHOECTL)} run --shoes 1 --speed max --display lines "
                                       f"--journal j.db > /dev/full"], cwd=tmp_path, stderr=subprocess.PIPE,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[-1] == ("shoectl run: standard output could not be written (No space left on "
                                            "device): lines are missing from it; the journal j.db holds every entry")
    with JournalReader.open(tmp_path / "j.db") as reader:
        assert any(e.kind == "reconciliation" for e in reader.entries())  # the whole shoe was dealt
    assert verify(tmp_path / "j.db").ok


def test_a_pin_asked_of_a_closed_input_is_one_line(tmp_path: Path) -> None:
    proc = closed("in", "operators", "add", "d9", "--role", "dealer", "--file", "ops.toml", "--pin-stdin",
                  cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "shoectl operators add: error: --pin-stdin: no PIN on standard input\n"
    assert not (tmp_path / "ops.toml").exists()


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_a_check_whose_reader_went_away_never_exits_as_a_success(tmp_path: Path, buffered: bool) -> None:
    """``shoectl profiles check GOOD BAD | true`` (or ``journal verify ... | head -c 1``): the
    reader of standard output is gone before the verdict. The command exits 141, as a Unix tool
    stopped by SIGPIPE does, without a line (nobody reads it): a pipeline with ``pipefail`` fails.
    Before, every command took it as a success and exited 0 (an integrator review: a bad profile,
    a stale udev file, a tampered journal "passed" behind ``| true``), and with its output
    buffered (no PYTHONUNBUFFERED: a shell, a service) 120 with Python's "Exception ignored" lines."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    good = Path(__file__).resolve().parents[2] / "device_profiles" / "acme-autoshoe-r.toml"
    bad = tmp_path / "bad.toml"
    bad.write_text("this is not a profile\n", encoding="utf-8")
    check = [*SHOECTL, "profiles", "check", str(good), str(bad)]
    alone = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert alone.returncode == 2 and ": ok (" in alone.stdout, alone.stderr
    r, w = os.pipe()
    os.close(r)  # the reader went away before the first line (the good profile's "ok")
    try:
        proc = subprocess.run(check, stdout=w, stderr=subprocess.PIPE, text=True, timeout=60, env=env)
    finally:
        os.close(w)
    assert proc.returncode == 141, proc.stderr
    # (the bad file's own line may be on standard error: written there before the buffered "ok" was)
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr
