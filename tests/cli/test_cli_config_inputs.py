"""Configuration and input files through the real CLI, in a process: a number without bounds and
a FIFO given as a file must each end in one line and exit 2, never in a hang (issue 9, items 2
and 11). A hang on the old code shows as the subprocess timeout."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 60  # seconds before a run is declared hung (never a performance limit)

TINY_RATE = '[submission]\ngame = "punto-banco"\n[commission]\nrate = "1e-999999999"\n'


def shoectl(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SHOECTL, *argv], capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL)


def one_line_exit_2(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", [
    ("rules", "check", "{file}"),
    ("odds", "--decks", "1", "--submission", "{file}"),
    ("simulate", "--shoes", "1", "--submission", "{file}"),
    ("rules", "show", "{file}"),
    ("run", "--journal", "{dir}/j.db", "--rounds", "1", "--speed", "max", "--submission", "{file}"),
], ids=lambda c: c[0] + (" " + c[1] if c[1] in ("check", "show") else ""))
def test_a_rate_with_a_huge_exponent_is_refused_in_one_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    """``rate = "1e-999999999"`` passed ``rules check`` and then hung odds, simulate and run in
    ``Fraction()`` (10**999999999). Now every command refuses it, naming the file, the key and
    the reason."""
    path = tmp_path / "rules.toml"
    path.write_text(TINY_RATE, encoding="utf-8")
    argv = [a.format(file=path, dir=tmp_path) for a in command]
    one_line_exit_2(shoectl(*argv), f"{path}: commission.rate: too many decimal places")
    assert not (tmp_path / "j.db").exists()  # a refused input changes nothing


@pytest.mark.parametrize("command", [
    ("rules", "check", "{fifo}"),
    ("run", "--journal", "{dir}/j.db", "--rounds", "1", "--speed", "max", "--submission", "{fifo}"),
    ("operators", "list", "--file", "{fifo}"),
    ("run", "--journal", "{dir}/j.db", "--rounds", "1", "--speed", "max", "--operators", "{fifo}"),
    ("profiles", "check", "{fifo}"),
], ids=["rules check", "run --submission", "operators --file", "run --operators", "profiles check"])
def test_a_fifo_given_as_an_input_file_is_refused_without_blocking(tmp_path: Path, command: tuple[str, ...]) -> None:
    """A FIFO (nobody writing to it) blocked the reader forever. Now: one line, exit 2, at once."""
    fifo = tmp_path / "input.toml"
    os.mkfifo(fifo)
    argv = [a.format(fifo=fifo, dir=tmp_path) for a in command]
    proc = shoectl(*argv)
    if command[:2] == ("profiles", "check"):  # a report line per file, a bad one on stderr
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stdout == "" and proc.stderr == f"{fifo}: error: is a FIFO, not a regular file\n"
        return
    one_line_exit_2(proc, f"{fifo}: is a FIFO, not a regular file")


@pytest.mark.parametrize("command, said", [
    (("udev", "check", "{fifo}"), "{fifo}: is a FIFO, not a regular file"),
    (("run", "--journal", "{dir}/j.db", "--rounds", "1", "--dealt-log", "{fifo}"),
     "argument --dealt-log: {fifo} is a FIFO (a named pipe); give a regular file"),
    (("run", "--journal", "{dir}/j.db", "--rounds", "1", "--log-file", "{fifo}"),
     "argument --log-file: {fifo} is a FIFO (a named pipe); give a regular file"),
    (("emulate", "--table", "--dealt-log", "{fifo}"), "argument --dealt-log: {fifo} is a FIFO"),
    (("feed", "--journal", "{dir}/j.db", "--broker", "mqtt://127.0.0.1:1", "--log-file", "{fifo}"),
     "argument --log-file: {fifo} is a FIFO"),
    (("floor", "collect", "--log-file", "{fifo}"), "argument --log-file: {fifo} is a FIFO"),
    (("feed", "--journal", "{journal}", "--broker", "mqtt://127.0.0.1:1", "--cursor", "{fifo}"),
     "{fifo}: is a FIFO, not a regular file (a feed cursor is a file the feed writes)"),
    (("feed", "--journal", "{journal}", "--broker", "mqtt://127.0.0.1:1", "--username", "T1", "--password-file", "{fifo}"),
     "cannot read the password file {fifo}: is a FIFO, not a regular file"),
    (("feed", "--journal", "{journal}", "--broker", "mqtts://127.0.0.1:1", "--tls-ca", "{fifo}"),
     "cannot read the CA file {fifo}: is a FIFO, not a regular file"),
], ids=["udev check", "run --dealt-log", "run --log-file", "emulate --dealt-log", "feed --log-file", "floor --log-file",
        "feed --cursor", "feed --password-file", "feed --tls-ca"])
def test_a_fifo_given_as_a_file_to_read_or_to_write_is_refused_without_blocking(capsys, tmp_path: Path, command, said) -> None:
    """Opening a FIFO waits for the other end: a command given one to read with nobody writing, or
    to append its log to with nobody reading, waited without end (and a stop signal with it)."""
    from cli_run import run

    from controller.journal import Journal

    journal = tmp_path / "journal" / "j.db"
    if "{journal}" in command:
        journal.parent.mkdir()
        Journal.open(journal, table_id="T1").close()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    argv = [a.format(fifo=fifo, dir=tmp_path, journal=journal) for a in command]
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and said.format(fifo=fifo) in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal", "pipe"][("{journal}" not in command):]


@pytest.mark.parametrize("command", [
    ("run", "--journal", "{dir}/j.db", "--rounds", "1", "--speed", "max", "--dealt-log", "{file}"),
    ("run", "--journal", "{dir}/j.db", "--rounds", "1", "--speed", "max", "--log-file", "{file}"),
    ("emulate", "--table", "--dealt-log", "{file}"),
    ("feed", "--journal", "{dir}/j.db", "--broker", "mqtt://127.0.0.1:1", "--log-file", "{file}"),
    ("floor", "collect", "--log-file", "{file}"),
], ids=["run --dealt-log", "run --log-file", "emulate --dealt-log", "feed --log-file", "floor --log-file"])
def test_a_file_the_system_will_not_let_be_appended_to_is_refused_naming_it_before_anything_is_made(
        capsys, tmp_path: Path, command) -> None:
    """A review of bad inputs: `run --dealt-log /proc/version` said "error: Invalid argument" (of
    what?) once the journal, its anchors, lock and log had been made. The file is opened as it
    will be, at the argument, and named: nothing is made."""
    from cli_run import run

    unappendable = "/proc/version"  # a regular file by its mode, that no one can append to
    argv = [a.format(file=unappendable, dir=tmp_path) for a in command]
    code, _, err = run(capsys, *argv)
    option = command[-2]
    assert code == 2 and err.endswith(f"error: argument {option}: {unappendable} cannot be appended to: "
                                      "Invalid argument\n") and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("log_file", [None, "x.log"])
def test_a_dealt_log_that_is_the_tables_own_log_file_is_refused(capsys, tmp_path: Path, log_file) -> None:
    """A surveillance review: `run --journal d1.db --dealt-log d1.log` ran, the table's JSON log and
    the dealt cards interleaved in one file that neither reader could read."""
    from cli_run import run

    log = tmp_path / (log_file or "d1.log")
    argv = ["run", "--journal", str(tmp_path / "d1.db"), "--rounds", "1", "--speed", "max", "--dealt-log", str(log),
            *(["--log-file", str(log)] if log_file else [])]
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (2, "", f"shoectl run: error: --dealt-log {log}: that is the table's log file; give "
                                       "another file\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [("udev", "check"), ("rules", "check")])
def test_a_file_that_cannot_be_read_is_named_with_why(capsys, command) -> None:
    """A review of bad inputs: `udev check /proc/self/mem` said "error: Input/output error" (of what?);
    `rules check` named the file. Both do."""
    from cli_run import run

    code, out, err = run(capsys, *command, "/proc/self/mem")  # a file whose read fails (EIO)
    assert (code, out) == (2, "")
    assert err == f"shoectl {' '.join(command)}: error: /proc/self/mem: cannot read the file: Input/output error\n"
