"""Bad input to `profiles check`, `run`, `operators add` and `systemd-unit`: said in one line in the
user's words, on standard error, naming what was given (an option, not the file it would go in)."""
from __future__ import annotations

import argparse
import io
import os
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from cli_run import run
from controller.cli import main as cli_main
from firmware_bridge.profiles import builtin_profile_dir


def test_profiles_check_says_a_bad_file_on_standard_error(capsys, tmp_path: Path) -> None:
    """`profiles check` wrote its error lines to standard output, where a script reading the "ok"
    lines took them for a report; `rules check` says its errors on standard error."""
    good = tmp_path / "good.toml"
    good.write_text((builtin_profile_dir() / "emulated-shoe.toml").read_text(encoding="utf-8"), encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text('[device]\nvendor = "v"\n', encoding="utf-8")
    code, out, err = run(capsys, "profiles", "check", str(good), str(bad))
    assert code == 2
    assert out == f"{good}: ok (good: shoe, serial 115200 8N1)\n"
    assert err == f"{bad}: error: transport: required section [transport] is missing\n"


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in {id(p): p for p in action.choices.values()}.values():
                yield from _parsers(child)


@pytest.mark.parametrize("value", ["-1e-3", "-1.5E-2", "-5e-1"])
def test_a_negative_number_with_an_exponent_is_a_value(capsys, value: str) -> None:
    """`run --edge-threshold -1e-3` said "expected one argument": argparse took -1e-3 for an
    option, as it knows only -1 and -.5 for negative numbers."""
    args = cli_main.build_parser(["run"]).parse_args(["run", "--edge-threshold", value])
    assert args.edge_threshold == Decimal(value)
    assert capsys.readouterr().err == ""


def test_every_parser_takes_a_negative_number_with_an_exponent() -> None:
    """Every command's and subcommand's parser (``parser_class=_Parser``, passed on) reads
    ``-1e-3`` as a number, not only the top one."""
    parsers = list(_parsers(cli_main.build_parser()))
    assert len(parsers) > 20
    assert all(p._negative_number_matcher.match("-1e-3") for p in parsers)
    assert all(not p._negative_number_matcher.match(word) for p in parsers for word in ("-e", "-1e", "-x1", "--1"))


@pytest.mark.parametrize("errors", ["surrogateescape", "strict"])
def test_operators_add_says_a_pin_that_is_not_utf8_is_not_utf8(capsys, monkeypatch, tmp_path: Path,
                                                               errors: str) -> None:
    """Bytes that are not UTF-8 on standard input were "no PIN on standard input" (or a PIN that is
    not digits, or, read strictly, a traceback); `ctl` says "the PIN is not UTF-8 text"."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe12345\n"), encoding="utf-8", errors=errors))
    file = tmp_path / "operators.toml"
    code, out, err = run(capsys, "operators", "add", "n1", "--role", "dealer", "--pin-stdin", "--file", str(file))
    assert (code, out) == (2, "")
    assert err == "shoectl operators add: error: --pin-stdin: the PIN is not UTF-8 text; nothing was changed\n"
    assert not file.exists()


@pytest.mark.parametrize(("name", "said"), [
    ("\x1b[31mred", "'\\x1b[31mred': a name is one printable line of at most 64 characters"),
    ("x" * 65, f"'{'x' * 40}'...: a name is one printable line of at most 64 characters"),
    (" ", "' ': an empty name"),
])
def test_operators_add_blames_the_name_option_not_the_file(capsys, monkeypatch, tmp_path: Path, name: str,
                                                           said: str) -> None:
    """A bad `--name` was "F: operators.n2.name: ...", blaming the operators file for a value of the
    command line (and said only after the PIN was read)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("13579\n"))
    file = tmp_path / "operators.toml"
    code, out, err = run(capsys, "operators", "add", "n2", "--role", "dealer", "--name", name, "--pin-stdin",
                         "--file", str(file))
    assert (code, out) == (2, "")
    assert err == f"shoectl operators add: error: argument --name: {said}\n"
    assert not file.exists()


@pytest.mark.skipif(not os.path.isfile("/proc/version"), reason="needs Linux's /proc")
def test_systemd_unit_into_a_folder_that_takes_no_file_says_so(capsys) -> None:
    """`systemd-unit -o /proc/version` said "/proc/version: No such file or directory" of a file
    that is there: the unit is written beside it and renamed, and /proc takes no new file."""
    code, out, err = run(capsys, "systemd-unit", "--executable", "/bin/sh", "-o", "/proc/version")  # (a program here: no warning)
    assert (code, out) == (2, "")
    assert err == ("shoectl systemd-unit: error: argument -o/--output: /proc/version: not a file that can be replaced "
                   "here (its folder /proc takes no new files); it was left as it is\n")


@pytest.mark.parametrize(("option", "value"), [("--lockout", "9223372036854775807"), ("--lockout", "86401"),
                                               ("--remember-pin", "86401"), ("--remember-pin", "9223372036854775807")])
def test_lockout_and_remember_pin_are_at_most_a_day(capsys, tmp_path: Path, option: str, value: str) -> None:
    """`--lockout 9223372036854775807` was taken, and a lockout then printed as "locked out for
    153722867280912930 min"; both are refused at once above a day, before anything is made."""
    # one round at full speed: taken, as it was, the run ends (and the test fails) instead of dealing on
    code, out, err = run(capsys, "run", "--journal", str(tmp_path / "t.db"), "--rounds", "1", "--speed", "max",
                         option, value)
    assert (code, out) == (2, "")
    assert err == f"shoectl run: error: argument {option}: must be at most 86400, not {value}\n"
    assert list(tmp_path.iterdir()) == []


def test_lockout_and_remember_pin_of_a_day_are_taken() -> None:
    """The bound itself is allowed."""
    args = cli_main.build_parser(["run"]).parse_args(["run", "--lockout", "86400", "--remember-pin", "86400"])
    assert (args.lockout, args.remember_pin) == (86400, 86400)


@pytest.mark.parametrize("argv", [
    ("run", "--journal", "{long}", "--rounds", "1", "--speed", "max", "--display", "lines"),
    ("journal", "backup", "{short}", "{long}"),
    ("journal", "migrate", "{short}", "{long}"),
    ("feed", "--journal", "{long}", "--broker", "mqtt://127.0.0.1:1"),
    ("journal", "verify", "{long}"),
    ("journal", "export", "{long}"),
    ("odds", "--journal", "{long}"),
])
def test_a_journal_name_with_no_room_for_the_files_beside_it_is_refused_as_given(capsys, tmp_path: Path,
                                                                               argv: tuple[str, ...]) -> None:
    """A review of bad inputs: a 250-character journal name was refused as its anchors file's (a name
    the user never gave: `...db.anchors: File name too long`), and `run` by its log's. The name given
    is refused, in words, before anything is made."""
    short = tmp_path / "j.db"
    long = tmp_path / ("a" * 252 + ".db")
    writes = argv[:2] in (("run", "--journal"), ("feed", "--journal")) or argv[1] in ("backup", "migrate")
    beside, made = (32, "its .anchors, the temporary one it is created as") if writes else (8, "its .anchors, SQLite's -wal and -shm")
    most = os.pathconf(tmp_path, "PC_NAME_MAX") - beside
    before = sorted(tmp_path.iterdir())
    code, out, err = run(capsys, *(a.format(long=long, short=short) for a in argv))
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert err.endswith(f"{long}: a journal's name may have at most {most} bytes, not 255: the files made beside it "
                        f"({made}) add up to {beside} to it; give a shorter one\n"), err
    assert sorted(tmp_path.iterdir()) == before


def test_a_journal_under_a_name_longer_than_run_takes_is_read_all_same(capsys, tmp_path: Path) -> None:
    """A review of the names' check: a journal another program named (moved aside under a long,
    dated name) was refused by every command that only reads it, for the room `run` keeps for the
    files it makes beside a journal. Read, it needs only its anchors' name and SQLite's -wal and -shm."""
    short = tmp_path / "j.db"
    code, _, err = run(capsys, "run", "--journal", str(short), "--control", str(tmp_path / "c.sock"), "--rounds",
                       "1", "--speed", "max", "--display", "lines", "--no-edge-monitor")
    assert code == 0, err
    most = os.pathconf(tmp_path, "PC_NAME_MAX") - 8
    long = tmp_path / ("a" * (most - 3) + ".db")
    short.rename(long)
    Path(f"{short}.anchors").rename(f"{long}.anchors")
    code, out, err = run(capsys, "journal", "verify", str(long))
    assert (code, err) == (0, "") and out.startswith(f"{long}: ok: "), err
    code, out, err = run(capsys, "journal", "export", str(long), "--format", "jsonl")
    assert code == 0 and out.count("\n") > 10, err


def test_the_longest_journal_name_taken_is_one_a_table_can_be_started_and_backed_up_under(capsys, tmp_path: Path) -> None:
    """A review of this change: 247 bytes were taken (only the anchors' 8 kept in reserve), and `run`
    failed "File name too long" on the temporary file it creates a journal under, after making its
    lock and log; `journal backup` blamed the folder. The longest name taken works."""
    most = os.pathconf(tmp_path, "PC_NAME_MAX") - 32
    longest = tmp_path / ("a" * (most - 3) + ".db")
    code, _, err = run(capsys, "run", "--journal", str(longest), "--control", str(tmp_path / "c.sock"), "--rounds",
                       "1", "--speed", "max", "--display", "lines", "--no-edge-monitor")
    assert code == 0, err
    copy = tmp_path / ("b" * (most - 3) + ".db")
    code, _, err = run(capsys, "journal", "backup", str(longest), str(copy))
    assert code == 0 and copy.exists(), err
