"""Bad inputs through the real command line: each is refused on one line, exit 2, and the files it
names are left byte for byte as they were."""
from __future__ import annotations

import argparse
import io
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cli import main as cli_main
from controller.errors import (file_argument, journal_argument, journal_to_read_argument, new_file_argument,
                               output_path_argument, path_argument)
from controller.journal import Journal, Record
from controller.journal.anchors import AnchorFile, anchors_path, record_anchor
from cli_run import run
from round_records import round_records
from services.postgres import floor_db, postgres_cluster  # noqa: F401 (fixtures)
from tests.control.running_table import PINS, launch_table, make_operators_file, shoectl


@pytest.fixture
def one_shoe(tmp_path: Path) -> Path:
    """A journal of one shoe of one banker round, anchored in the anchors file beside it."""
    path = tmp_path / "table.db"
    with Journal.open(path, table_id="T1") as j:
        j.append_batch([Record("shoe_start", {"decks": 8, "shoe": "S1"}, shoe="S1"), *round_records("S1", 1, rack=False)])
        record_anchor(AnchorFile.beside(path), j)
    return path


@pytest.mark.parametrize("command", [["journal", "export"], ["roadmap"]])
@pytest.mark.parametrize("target", ["journal", "anchors"])
def test_output_over_the_journal_read_is_refused(capsys, one_shoe: Path, command: list[str], target: str) -> None:
    """`-o` naming the journal being read (or its anchors) replaced it with the output: the journal lost."""
    output = one_shoe if target == "journal" else anchors_path(one_shoe)
    before = {p: p.read_bytes() for p in (one_shoe, anchors_path(one_shoe))}
    assert run(capsys, *command, str(one_shoe))[0] == 0  # the journal reads well: the -o is what is refused
    code, out, err = run(capsys, *command, str(one_shoe), "-o", str(output))
    assert code == 2, err
    assert err.count("\n") == 1 and "-o" in err and "give another file" in err, err
    assert {p: p.read_bytes() for p in before} == before


def test_replay_of_an_empty_shoe_id_is_refused(capsys, one_shoe: Path) -> None:
    """`journal replay --shoe ""` (an unset variable) printed nothing and exited 0, as if replayed."""
    code, out, err = run(capsys, "journal", "replay", str(one_shoe), "--shoe", "")
    assert (code, out) == (2, "")
    assert err == "shoectl journal replay: error: no shoe '' in the journal\n"


@pytest.mark.parametrize("argv", [
    ["run", "--journal", ""],                                  # was a traceback (a path with no name)
    ["run", "--journal", "{tmp}/t.db", "--hmac-key", ""],      # was a run without the key asked for
    ["run", "--journal", "{tmp}/t.db", "--operators", ""],     # was a run without the operators file
    ["journal", "export", "{journal}", "-o", ""],              # was "Device or resource busy"
    ["journal", "verify", "{journal}", "--anchors", ""],
    ["roadmap", "{journal}", "-o", ""],                        # was written to standard output
    ["diagram", "-o", ""],
    ["simulate", "--shoes", "2", "--plot", ""],               # was a simulation without the chart
    ["feed", "{journal}", "--broker", "mqtts://localhost", "--password-file", ""],  # the broker's options
])
def test_an_empty_file_name_is_refused(capsys, one_shoe: Path, tmp_path: Path, argv: list[str]) -> None:
    """An empty file name (an unset shell variable) is refused before anything runs, never taken for
    "not given" nor for the current folder."""
    argv = [a.format(tmp=tmp_path, journal=one_shoe) for a in argv]
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.endswith(": an empty file name\n"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_run_with_the_root_folder_as_journal_is_refused(capsys) -> None:
    """`run --journal /` was a traceback: the control socket's name was made from the journal's first."""
    code, out, err = run(capsys, "run", "--journal", "/", "--rounds", "1")
    assert (code, out, err) == (2, "", "shoectl run: error: --journal /: is a directory; give a file name\n")


@pytest.mark.parametrize("argv", [
    ["run", "--journal", "{tmp}/table7/", "--rounds", "1"],
    ["journal", "backup", "{journal}", "{tmp}/copies/"],
    ["journal", "migrate", "{journal}", "{tmp}/new/"],
])
def test_a_journal_named_as_a_folder_that_is_not_there_is_refused(capsys, one_shoe: Path, tmp_path: Path,
                                                                 argv: list[str]) -> None:
    """A review of an integrator's install: `run --journal /srv/table7/` (a folder not made yet)
    made a journal file named `table7`, with its anchors, lock and log beside it; a later
    `--journal /srv/table7/journal.db` then failed. A name ending in `/` names a folder: refused
    before anything is made (one that exists is "a directory", as before)."""
    argv = [a.format(tmp=tmp_path, journal=one_shoe) for a in argv]
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    named = argv[2] if argv[0] == "run" else argv[-1]
    assert err.count("\n") == 1, err
    assert err.endswith(f"{named}: names a folder; give the journal's file name in it (e.g. {named}journal.db)\n"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_run_with_a_journal_in_a_folder_it_cannot_make_names_the_journal(capsys, tmp_path: Path) -> None:
    """The control socket beside the journal was named in the refusal ("give another --control
    path") though the user gave only --journal; a --control given is still the one named."""
    (tmp_path / "plain").write_text("a file, not a folder")
    journal = tmp_path / "plain" / "t.db"
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1")
    assert (code, out, err) == (2, "", f"shoectl run: error: --journal {journal}: cannot make files in its folder "
                                       f"{journal.parent} (it is not a folder); give another --journal path\n")
    code, out, err = run(capsys, "run", "--journal", str(tmp_path / "t.db"), "--control", str(tmp_path / "plain" / "t.sock"),
                       "--rounds", "1")
    assert (code, out) == (2, "") and err.endswith("(it is not a folder); give another --control path\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]  # nothing made: no journal, log or lock


@pytest.mark.parametrize("command", [["udev", "generate"], ["systemd-unit"]])
def test_output_onto_a_folder_names_the_folder(capsys, tmp_path: Path, command: list[str]) -> None:
    """`-o DIR` named the temporary file written beside it (".DIR.x8k2.tmp"), not the folder given."""
    folder = tmp_path / "out"
    folder.mkdir()
    code, out, err = run(capsys, *command, "-o", str(folder))
    assert (code, out) == (2, "")
    assert err == (f"shoectl {' '.join(command)}: error: argument -o/--output: {folder} is a directory, not a regular file; "
                   "give another file\n")
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and not any(folder.iterdir())


@pytest.mark.parametrize("arguments, said", [
    (["seat=1", "seat=2"], "argument 'seat=2': seat is given twice"),   # was the last one, silently
    (["seat=\udcff"], "argument seat=\\xff: not UTF-8 text"),         # was "not a JSON request: ..."
])
def test_ctl_arguments_refused_before_they_are_sent(capsys, monkeypatch, tmp_path: Path, arguments, said) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("1357\n"))
    code, out, err = run(capsys, "ctl", "--socket", str(tmp_path / "none.sock"), "--operator", "sup", "--pin-stdin",
                         "sit", *arguments)
    assert (code, out, err) == (2, "", f"shoectl ctl: error: {said}\n")


@pytest.mark.parametrize(("pin_stdin", "env", "said"), [
    ("\n", None, "--pin-stdin: no PIN on standard input"),
    ("  \n", None, "--pin-stdin: no PIN on standard input"),
    ("1" * 10_000 + "\n", None, "--pin-stdin: a PIN of 10000 characters: no PIN is longer than 256; nothing was sent"),
    (None, " ", "SHOECTL_PIN: no PIN; nothing was sent"),
])
def test_a_pin_that_cannot_be_right_is_not_sent(capsys, monkeypatch, tmp_path: Path, pin_stdin, env, said) -> None:
    """An empty PIN went to the table and used up one of the operator's five tries; a very long one
    came back in the protocol's words ("a command needs "pin": a string of at most 256 characters")."""
    sock = tmp_path / "t.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:  # a table that would get the PIN
        listener.bind(str(sock))
        listener.listen()
        listener.setblocking(False)
        monkeypatch.setattr(sys, "stdin", io.StringIO(pin_stdin or ""))
        if env is not None:
            monkeypatch.setenv("SHOECTL_PIN", env)
        options = ["--pin-stdin"] if pin_stdin is not None else []
        code, out, err = run(capsys, "ctl", "--socket", str(sock), "--operator", "d1", *options, "sit", "seat=1")
        assert (code, out, err) == (2, "", f"shoectl ctl: error: {said}\n")
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing came


def test_ctl_operator_that_is_not_utf8_is_refused_before_it_is_sent(capsys, monkeypatch, tmp_path: Path) -> None:
    """It went to the table and came back as "bad_request: not a JSON request: ... (a lone surrogate)"."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("1357\n"))
    code, out, err = run(capsys, "ctl", "--socket", str(tmp_path / "none.sock"), "--operator", "\udcff\udcfe",
                         "--pin-stdin", "open")
    assert (code, out, err) == (2, "", "shoectl ctl: error: --operator \\xff\\xfe: not UTF-8 text\n")


def test_operators_add_without_a_terminal_asks_for_pin_stdin(capsys, monkeypatch, tmp_path: Path) -> None:
    """getpass printed its GetPassWarning, with a line of its source, and read the PIN with echo."""
    import getpass

    def no_terminal(prompt: str = "") -> str:  # what getpass does when it cannot open /dev/tty
        import warnings
        warnings.warn("Can not control echo on the terminal.", getpass.GetPassWarning, stacklevel=2)
        return "4829"

    monkeypatch.setattr(getpass, "getpass", no_terminal)
    monkeypatch.setattr(sys, "stdin", io.StringIO("4829\n4829\n"))
    file = tmp_path / "ops.toml"
    code, out, err = run(capsys, "operators", "add", "d9", "--role", "dealer", "--file", str(file))
    assert (code, out) == (2, "") and not file.exists()
    assert err == ("shoectl operators add: error: no terminal to ask the PIN on: give it on standard input with "
                   "--pin-stdin\n")


def test_operators_add_says_what_it_did_and_takes_no_folder_for_its_file(capsys, monkeypatch, tmp_path: Path) -> None:
    """``--replace`` of an id not in the file added it and said "replaced"; ``--file x/`` wrote a
    file named ``x`` and said "in x/"."""
    file = tmp_path / "ops.toml"
    for pin, said in (("4829", "added"), ("5937", "replaced")):
        monkeypatch.setattr(sys, "stdin", io.StringIO(f"{pin}\n"))
        code, out, err = run(capsys, "operators", "add", "d9", "--role", "dealer", "--pin-stdin", "--replace",
                             "--file", str(file))
        assert (code, out, err) == (0, f"{said} operator d9 (dealer) in {file}\n", "")
    folder = f"{tmp_path / 'x'}/"
    monkeypatch.setattr(sys, "stdin", io.StringIO("4829\n"))
    code, out, err = run(capsys, "operators", "add", "d8", "--role", "dealer", "--pin-stdin", "--file", folder)
    assert (code, out) == (2, "") and not (tmp_path / "x").exists()
    assert err == f"shoectl operators add: error: argument --file: {folder} names a folder (it ends in /); give a file's name\n"


@pytest.fixture
def table_dir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="sb-", dir="/tmp"))  # short: a UNIX socket's path has at most 107 bytes
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_ctl_number_too_large_is_said_in_the_argument_words(table_dir: Path) -> None:
    """`sit seat=<30 digits>` was refused as "not a JSON request: 9999... is not a whole number of at
    most 20 digits", words about a request the user never wrote; now as any seat that is not one."""
    table = launch_table(table_dir, make_operators_file(table_dir / "ops.toml"), manual=True)
    try:
        done = shoectl("ctl", "--socket", str(table_dir / "c.sock"), "--operator", "sup", "--pin-stdin",
                       "sit", "seat=" + "9" * 30, pin=PINS["sup"])
    finally:
        table.stop()
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("shoectl ctl: sit: not understood: seat must be a seat number (a whole number "
                           f"from 1), not '{'9' * 30}'\n")


@pytest.mark.parametrize("argv, said", [
    (["emulate", "--profile", "emulated-shoe", "--transport", "tcp", "--port", "nan"],
     "shoectl emulate: error: argument --port: not a whole number: 'nan'"),            # was "invalid int value"
    (["audit", "shuffle", "{journal}", "--confidence", "x"],
     "shoectl audit shuffle: error: argument --confidence: invalid choice: 'x' (choose from '0.95', '0.99')"),
])
def test_numbers_refused_without_python_type_names(capsys, one_shoe: Path, argv: list[str], said: str) -> None:
    """A number option's refusal said "invalid int value" / "invalid float value": Python's words."""
    code, out, err = run(capsys, *(a.format(journal=one_shoe) for a in argv))
    assert (code, out, err) == (2, "", said + "\n")


def test_backfill_line_with_a_seq_that_is_text(capsys, tmp_path: Path, one_shoe: Path, floor_db: str) -> None:
    """A backfill line whose seq is not a number was refused with "from 0 to 2**63-1": Python's notation."""
    export = tmp_path / "export.jsonl"
    assert run(capsys, "journal", "export", str(one_shoe), "-o", str(export))[0] == 0
    export.write_text(export.read_text().replace('{"seq":1,', '{"seq":"one",', 1))
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(export))
    assert (code, out) == (2, "")
    assert err == (f"shoectl floor backfill: error: {export} line 1: seq is not a whole number from 0 to "
                   "9223372036854775807; nothing was stored\n")


@pytest.mark.parametrize("command", ["status", "watch"])
def test_ctl_status_and_watch_refuse_arguments(capsys, tmp_path: Path, command: str) -> None:
    """`ctl status seat=1` ignored the argument it could not use and answered as if it was not given."""
    code, out, err = run(capsys, "ctl", "--socket", str(tmp_path / "none.sock"), command, "seat=1")
    assert (code, out, err) == (2, "", f"shoectl ctl: error: {command} takes no arguments, not seat=1\n")


@pytest.mark.parametrize("command", [["add", "--role", "dealer", "--pin-stdin"], ["remove"]])
@pytest.mark.parametrize("given", ["", "BAD ID"])
def test_operator_id_refused_in_the_words_of_the_argument(capsys, monkeypatch, tmp_path: Path, command, given) -> None:
    """An id that cannot be one was refused as `FILE: operators.: ...`, a key of the file, as if
    the file was wrong; the file given is left as it was (here: not created)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("4829\n4829\n"))
    file = tmp_path / "ops.toml"
    code, out, err = run(capsys, "operators", command[0], given, *command[1:], "--file", str(file))
    assert (code, out) == (2, "")
    assert err.startswith(f"shoectl operators {command[0]}: error: argument ID: not a valid operator id: {given!r} (")
    assert err.count("\n") == 1 and not file.exists()


def test_emulate_table_dir_that_is_a_file(capsys, tmp_path: Path) -> None:
    """`emulate --table --dir FILE` said only "FILE: File exists"."""
    file = tmp_path / "links"
    file.write_text("mine\n")
    code, out, err = run(capsys, "emulate", "--table", "--dir", str(file))
    assert (code, out) == (2, "")
    assert err == f"shoectl emulate: error: --dir {file}: not a directory (the pty links are made in it)\n"
    assert file.read_text() == "mine\n"


@pytest.mark.parametrize("argv", [["--profile", "emulated-shoe", "--link", "{dir}/shoe"],
                                  ["--table", "--dir", "{dir}"]], ids=["--link", "--table --dir"])
@pytest.mark.parametrize("what", ["file", "folder"])
def test_emulate_leaves_a_file_or_folder_at_its_ports_name(capsys, tmp_path: Path, argv: list[str], what: str) -> None:
    """`emulate --link FILE` deleted the file (a journal, in a review) to put its pty link there."""
    port = tmp_path / "shoe"
    if what == "file":
        port.write_text("mine\n")
    else:
        (port / "inside").mkdir(parents=True)
    code, out, err = run(capsys, "emulate", *[a.format(dir=tmp_path) for a in argv])
    assert (code, out) == (2, "")
    assert err == (f"shoectl emulate: error: {port}: exists and is not a link an emulator made; left as it is "
                   "(give a free name for the port)\n")
    assert port.read_text() == "mine\n" if what == "file" else (port / "inside").is_dir()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary link left behind


@pytest.mark.parametrize("given", ["", ",,,", " , "])
def test_odds_removed_with_no_card_in_it_is_refused(capsys, given: str) -> None:
    """``--removed`` with nothing in it (an unset variable, stray commas) was the odds of the full
    shoe, exit 0, as if the cards asked for had been taken out."""
    code, out, err = run(capsys, "odds", "--removed", given)
    assert (code, out) == (2, "")
    assert err == f"shoectl odds: error: --removed {given!r}: no card in it (cards such as AS,10H,KD)\n"


@pytest.mark.parametrize("content, tail", [(b"", ""), (b"\xff\xfe junk \x00", ""),
                                           (b"[section]\nkey = 1\n", ": {file} line 1: not an anchor (not a line of JSON)")])
def test_verify_against_a_file_with_no_anchor_in_it_is_refused(capsys, one_shoe: Path, tmp_path: Path,
                                                               content: bytes, tail: str) -> None:
    """``--anchors FILE`` naming a file that holds no anchor at all is the wrong file given: exit 2
    naming it (it said "FAILED at the journal", exit 1, of a journal that verifies)."""
    given = tmp_path / "given.anchors"
    given.write_bytes(content)
    code, out, err = run(capsys, "journal", "verify", str(one_shoe), "--anchors", str(given))
    assert (code, out) == (2, "")
    assert err == f"shoectl journal verify: error: --anchors {given}: not an anchors file, no anchor in it" \
                  f"{tail.format(file=given)}\n"
    assert run(capsys, "journal", "verify", str(one_shoe), "--anchors", str(anchors_path(one_shoe)))[0] == 0


@pytest.mark.parametrize("argv, said", [
    (["odds", "--decks", "\udcff"], "shoectl odds: error: argument --decks: not a whole number: '\\xff'"),
    (["odds", "--removed", "\udcffS"], 'shoectl odds: error: unknown card "\\xffS": expected a rank'),
    (["run", "--speed", "\udcff"], "argument --speed: expected max or a finite positive number (times real time), "
                                   "not '\\xff'"),
    (["simulate", "--game", "\udcff"], "shoectl simulate: error: argument --game: invalid choice: '\\xff' (choose"),
    (["rules", "check", "x\udcff.toml"], "shoectl rules check: error: x\\xff.toml: file not found"),
    (["journal", "verify", "no\udcffsuch.db"], "shoectl journal verify: error: no\\xffsuch.db: no such journal"),
    (["\udcff"], "shoectl: error: argument COMMAND: invalid choice: '\\xff' (choose from"),
    (["odds", "\udcff"], "shoectl odds: error: unrecognized arguments: \\xff"),
    (["journal", "verify", "j.db", "--\udcff"], "shoectl journal verify: error: unrecognized arguments: --\\xff"),
])
def test_a_byte_that_is_not_utf8_is_shown_as_the_byte(capsys, argv: list[str], said: str) -> None:
    """A byte that is not UTF-8 (Python's surrogate escape '\\udcff') reads '\\xff' in every message,
    whether the message quoted it itself, through argparse, or named a file."""
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and said in err and err.count("\n") == 1, err
    assert "udc" not in err and "\udcff" not in err


def test_a_file_name_that_is_not_utf8_is_shown_as_its_bytes(tmp_path: Path) -> None:
    """The same through a real process: the name is the bytes the shell passed."""
    missing = tmp_path / "no\udcffsuch.db"
    done = shoectl("journal", "verify", str(missing))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"shoectl journal verify: error: {tmp_path}/no\\xffsuch.db: no such journal\n"


@pytest.mark.parametrize("command", [["run", "--rounds", "1"], ["emulate", "--profile", "emulated-shoe"]])
@pytest.mark.parametrize("speed", ["inf", "1e999", "Infinity", "nan", "\u0661\u0662\u0663", "\uff15", "1_0"])
def test_a_speed_that_is_not_a_finite_number_is_refused(capsys, monkeypatch, tmp_path: Path, command: list[str],
                                                        speed: str) -> None:
    """`--speed inf` (or 1e999, which reads as infinity) was taken for `max`; the speed is a finite
    positive number or the word max, in ASCII digits as every other option takes them (Arabic-Indic
    and full-width digits and `1_0` were taken: a configuration review)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *command, "--speed", speed)
    assert (code, out) == (2, "") and list(tmp_path.iterdir()) == []
    assert err.startswith(f"shoectl {command[0]}: error: ") and err.count("\n") == 1
    assert err.endswith(f"--speed: expected max or a finite positive number (times real time), not '{speed}'\n")


@pytest.mark.parametrize("command", [["run", "--rounds", "1"], ["emulate", "--profile", "emulated-shoe"]])
@pytest.mark.parametrize("speed", ["1e-300", "5e-324", "0.001"])
def test_a_speed_too_slow_to_see_is_refused(capsys, monkeypatch, tmp_path: Path, command: list[str],
                                             speed: str) -> None:
    """A review found `--speed 1e-300` taken: the emulator then waited for ever, seeming to hang."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *command, "--speed", speed)
    assert (code, out) == (2, "") and list(tmp_path.iterdir()) == [] and err.count("\n") == 1
    assert err.endswith(f"--speed: at least 0.01 (a hundred times slower than real time), not '{speed}'\n"), err


def test_an_anchors_file_given_is_read_once(capsys, monkeypatch, one_shoe: Path) -> None:
    """`--anchors FILE` was read twice: once to see it holds anchors, once to check them (a file
    that changed in between was checked as a file never looked at). Each read is counted."""
    reads: list[Path] = []
    real_read = AnchorFile.read

    def counted(self: AnchorFile):
        reads.append(self.path)
        return real_read(self)

    monkeypatch.setattr(AnchorFile, "read", counted)
    given = anchors_path(one_shoe)
    code, out, err = run(capsys, "journal", "verify", str(one_shoe), "--anchors", str(given), "--anchors", str(given))
    assert code == 0 and out.startswith(f"{one_shoe}: ok: 3 entries") and err == "", (out, err)
    assert reads == [given, given]  # each --anchors once
    reads.clear()
    assert run(capsys, "journal", "verify", str(one_shoe))[0] == 0
    assert reads == [given]  # the file beside the journal, by default, once too


def _every_action(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in {id(p): p for p in action.choices.values()}.values():
                yield from _every_action(child)
        else:
            yield parser.prog, action


def test_every_argument_that_names_a_file_refuses_an_empty_name() -> None:
    """Empty file names were refused by looking at the arguments' metavars after parsing; each such
    argument now says so itself (``type=path_argument``, or ``output_path_argument`` for a file
    appended to, ``new_file_argument`` for one written whole and ``journal_argument`` for a journal,
    which call it). This lint finds
    one that forgot."""
    file_like = {"FILE", "PATH", "DIR", "OLD", "NEW", "NAME|FILE", "FILE|PRESET", "FILE_OR_PRESET"}
    actions = list(_every_action(cli_main.build_parser()))
    named = [(prog, action.dest) for prog, action in actions if action.metavar in file_like]
    assert len(named) > 50  # every command's parser was walked (the broker's options among them)
    assert [(prog, action.dest) for prog, action in actions
            if action.metavar in file_like
            and action.type not in (path_argument, output_path_argument, new_file_argument, file_argument,
                                    journal_argument, journal_to_read_argument)] == []
    for checked in (output_path_argument, new_file_argument, file_argument, journal_argument, journal_to_read_argument):
        with pytest.raises(argparse.ArgumentTypeError, match="an empty file name"):
            checked("")


@pytest.mark.parametrize("answer", [b"[" * 5000 + b"]" * 5000 + b"\n", b"\xff\xfe\n", b"[1, 2]\n"],
                         ids=["nested-too-deep", "not-utf8", "not-an-object"])
def test_ctl_against_a_socket_that_is_not_a_table_says_so_in_one_line(capsys, tmp_path: Path, answer: bytes) -> None:
    """Whatever answers on the control socket's path (another program, a table of another version),
    ``ctl`` reads its reply as a table's or says in one line that it is not one: never a traceback,
    also for a line nested deeper than the JSON decoder goes."""
    import socket
    import threading

    path = tmp_path / "other.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def answer_once() -> None:
        conn, _ = server.accept()
        with conn:
            conn.makefile("rb").readline()
            conn.sendall(answer)

    thread = threading.Thread(target=answer_once, daemon=True)
    thread.start()
    try:
        code, out, err = run(capsys, "ctl", "--socket", str(path), "status")
    finally:
        thread.join(5)
        server.close()
    assert (code, out) == (2, "")
    assert err == f"shoectl ctl: error: {path}: what answers there is not a table (not a JSON reply)\n"


def test_an_empty_control_group_is_refused_not_taken_for_the_default(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "run", "--journal", str(tmp_path / "j.db"), "--rounds", "1", "--control-group", "")
    assert (code, out) == (2, "") and err == "shoectl run: error: argument --control-group: an empty group name\n"
    assert list(tmp_path.iterdir()) == []


def test_ctl_at_a_socket_path_too_long_says_the_limit_as_run_does(capsys) -> None:
    """It said "cannot connect (AF_UNIX path too long)", the system's words; `run --control` names the limit."""
    path = "/tmp/" + "x" * 200
    code, out, err = run(capsys, "ctl", "--socket", path, "status")
    assert (code, out) == (2, "")
    assert err == f"shoectl ctl: error: {path}: too long for a UNIX socket path (at most 107 bytes); no table listens there\n"


@pytest.mark.parametrize(("argv", "said"), [
    (["odds", "--game", "punto-banco", "--hmac-key", "k"], "--hmac-key: only with --journal PATH"),
    (["odds", "--game", "punto-banco", "--no-verify"], "--no-verify: only with --journal PATH"),
    (["odds", "--shoe", "T1-S0001", "--round", "3"], "--shoe, --round: only with --journal PATH"),
    (["run", "--rounds", "1", "--faults", "delay=1ms,delay=2ms"],
     "argument --faults: fault delay is given twice in 'delay=1ms,delay=2ms'"),
])
def test_an_option_that_would_be_ignored_or_overridden_is_refused(capsys, tmp_path: Path, argv: list[str],
                                                                   said: str) -> None:
    """A review found these accepted without a word: the odds of a shoe ignored --hmac-key and
    --no-verify without a journal, and the last of two values of a fault won."""
    code, out, err = run(capsys, *argv, *(["--journal", str(tmp_path / "j.db")] if argv[0] == "run" else []))
    assert (code, out) == (2, "") and err == f"shoectl {argv[0]}: error: {said}\n"
    assert not (tmp_path / "j.db").exists()


def test_a_journal_whose_name_is_not_utf8_is_read_like_any_other(capsys, one_shoe: Path, tmp_path: Path) -> None:
    """A review found every journal command end in a traceback for a file name with a byte that
    is not UTF-8 (the SQLite URI was built from the decoded name). The name is the file's."""
    odd = tmp_path / "j\udcff.db"  # the byte 0xFF, as Python holds a name it cannot decode
    shutil.copyfile(one_shoe, odd)
    for argv in (["journal", "verify", str(odd)], ["journal", "replay", str(odd)]):
        done = subprocess.run([sys.executable, "-m", "controller.cli.main", *argv], capture_output=True, timeout=120)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr


def test_a_device_port_that_is_not_printable_text_is_refused_before_anything_is_made(capsys,
                                                                                      tmp_path: Path) -> None:
    """A review found ``--device PROFILE@/dev/<0xFF>`` start the table, which then died on journaling
    the port in a notice (a traceback). It is refused first, in one line."""
    for port in ("/dev/\udcff", "/dev/a\nb", "/dev/\x1b[2Jx"):
        code, out, err = run(capsys, "run", "--journal", str(tmp_path / "j.db"), "--device",
                             f"acme-readershoe-s@{port}", "--rounds", "1")
        assert (code, err.count("\n")) == (2, 1) and "the port is not a printable UTF-8 path" in err, err
        assert not (tmp_path / "j.db").exists()


def test_a_pin_that_is_not_utf8_is_not_sent() -> None:
    from controller.cli.cmd_ctl import pin_problem

    assert pin_problem("\udcff\udcfe") == "the PIN is not UTF-8 text"
    assert pin_problem("2580") is None


def test_the_console_refuses_a_pin_on_standard_input_without_an_operator(capsys, monkeypatch,
                                                                         tmp_path: Path) -> None:
    """Without an operator the console only watches: the PIN line was read as a command and shown
    back (``unknown command '5937'``), on the screen and in any log of the session."""
    monkeypatch.delenv("SHOECTL_OPERATOR", raising=False)
    code, out, err = run(capsys, "console", "--socket", str(tmp_path / "t.sock"), "--pin-stdin")
    assert (code, out) == (2, "")
    assert err == ("shoectl console: error: --pin-stdin needs --operator (or SHOECTL_OPERATOR): without an "
                   "operator the console only watches\n")


@pytest.mark.parametrize("argv", [["odds", "--removed", "AS,,KD"], ["odds", "--removed", "AS,"],
                                  ["rules", "deal", "--cards", "AH,,2D,3S,4C"]])
def test_an_empty_item_between_cards_is_refused_not_dropped(capsys, argv: list[str]) -> None:
    """A gaming-lab review: ``--removed 'AS,,KD'`` took out AS and KD and said nothing of the card
    left out between the commas (a typo, a variable unset); so did ``rules deal``."""
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "an empty item in the card list" in err and "a card left out between commas?" in err, err


def test_ctrl_d_at_the_pin_prompt_is_one_line_and_nothing_sent(tmp_path: Path) -> None:
    """On a terminal, Ctrl-D where the PIN is asked: a traceback (EOFError) and exit 1 before (a
    review of terminals); `operators add` said it in one line. (The console asks through the same
    function, once connected to a table.)"""
    command = ["ctl"]
    import os

    import pexpect

    env = {k: v for k, v in os.environ.items() if k not in ("SHOECTL_PIN", "SHOECTL_OPERATOR")}
    argv = ["-m", "controller.cli.main", *command, "--socket", str(tmp_path / "none.sock"), "--operator", "fp1", "open"]
    child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", timeout=60)
    child.expect_exact("PIN for fp1: ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2 and "Traceback" not in child.before
    assert child.before.strip() == f"shoectl {command[0]}: error: no PIN entered; nothing was sent"


def test_run_says_a_journal_path_that_is_not_utf8_as_every_command_does(tmp_path: Path) -> None:
    """`run`'s last line wrote the byte raw (a `?` on the terminal, which is not the path: a review
    of terminals); it is `\\xe4`, as `journal verify` and every message say it."""
    from cli_run import run_captured

    folder = tmp_path / "dir\udce4"
    folder.mkdir()
    code, out, err = run_captured("run", "--journal", str(folder / "j.db"), "--rounds", "1", "--speed", "max",
                                  "--display", "lines", "--no-edge-monitor")
    assert code == 0, err
    assert out.splitlines()[-1].startswith(f"journal {tmp_path}/dir\\xe4/j.db: ")
