"""A file's name in what the commands say (a review of environments): printed on one line, as
`journal verify` and `run` print it (``shoectl_config.text.safe``: a newline as ``\\n``, a byte that
was not UTF-8 as ``\\xe9``); kept as it is otherwise (two spaces are two); quoted where a message
suggests a command to paste; and a current folder deleted under the shell said as that."""
from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from cli_run import dealt_journal, run


@pytest.mark.parametrize("name", ["nl\ndir", os.fsdecode(b"caf\xe9")])
def test_the_success_lines_name_their_files_on_one_line(capsys, tmp_path: Path, name: str) -> None:
    """`journal backup` said "/w/nl" on one line and "dir/c.db: a copy of /w/nl" on the next;
    `journal export -o`, `journal migrate`'s kin, `udev generate -o` and the audits printed the
    name as it was, and a byte that was not UTF-8 went to the terminal raw."""
    folder = tmp_path / name
    folder.mkdir()
    journal = dealt_journal(folder / "j.db", "--rounds", "1", "--no-edge-monitor")
    escaped = "nl\\ndir" if "\n" in name else "caf\\xe9"
    for argv in (["journal", "verify", str(journal)],
                 ["journal", "backup", str(journal), str(folder / "copy.db")],
                 ["journal", "export", str(journal), "-o", str(folder / "e.jsonl")],
                 ["audit", "cards", str(journal)],
                 ["audit", "decisions", str(journal)],
                 ["udev", "generate", "-o", str(folder / "u.rules")],
                 ["udev", "check", str(folder / "u.rules")]):
        code, out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
        said = out + err
        assert name not in said and escaped in said, (argv, said)
        assert all(line.isprintable() for line in said.splitlines()), (argv, said)


def test_an_error_line_keeps_the_spaces_of_the_name_it_names(capsys, tmp_path: Path) -> None:
    """Every error line had its runs of spaces made one: `journal verify "two  spaces.db"` said
    "two spaces.db: no such journal", another file's name."""
    missing = tmp_path / "two  spaces.db"
    code, out, err = run(capsys, "journal", "verify", str(missing))
    assert (code, out) == (2, "")
    assert err == f"shoectl journal verify: error: {missing}: no such journal\n"


def test_a_suggested_command_can_be_pasted_with_a_space_in_the_path(capsys, tmp_path: Path) -> None:
    ops = tmp_path / "table two" / "operators.toml"
    ops.parent.mkdir()
    code, _, err = run(capsys, "operators", "list", "--file", str(ops))
    assert code == 2
    suggested = err.split("`")[1]
    assert shlex.split(suggested) == ["shoectl", "operators", "add", "ID", "--role", "supervisor", "--file", str(ops)]
    rules = tmp_path / "rules here" / "99-shoectl.rules"
    code, out, _ = run(capsys, "udev", "check", str(rules))
    assert code == 1
    assert shlex.split(out.split("run: ", 1)[1]) == ["shoectl", "udev", "generate", "-o", str(rules)]


def test_a_run_from_a_deleted_current_folder_says_so(capsys, tmp_path: Path, monkeypatch) -> None:
    """`shoectl run` (its journal var/journal.db by default) from a folder deleted under the shell
    said only "shoectl run: error: No such file or directory": no file, no folder, no reason."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    code, out, err = run(capsys, "run", "--rounds", "1", "--speed", "max", "--display", "lines")
    assert (code, out) == (2, "")
    assert err == ("shoectl run: error: the current folder no longer exists (deleted or moved away): change to one "
                   "that does and start again\n")


# -- the mends re-reviewed (the same day) ---------------------------------------------------------

@pytest.mark.parametrize("name", ["two\nlines.db", "sep\x1cx.db", "end \n.db"])
def test_an_error_line_names_a_file_with_a_line_break_escaped(capsys, tmp_path: Path, name: str) -> None:
    """The first mend split an error at its line breaks (\\x1c and \\x85 are ones to Python) and
    joined the pieces with a space: "two\\nlines.db" was named "two lines.db", another file."""
    from shoectl_config.text import safe

    missing = tmp_path / name
    code, out, err = run(capsys, "journal", "verify", str(missing))
    assert (code, out) == (2, "")
    assert err == f"shoectl journal verify: error: {safe(str(missing))}: no such journal\n"


def test_the_success_lines_of_rules_operators_and_systemd_unit_name_their_files_on_one_line(
        capsys, tmp_path: Path, monkeypatch) -> None:
    import io

    folder = tmp_path / "nl\ndir"
    folder.mkdir()
    sub = folder / "sub.toml"
    code, text, _ = run(capsys, "rules", "show")
    sub.write_text(text)
    monkeypatch.setattr("sys.stdin", io.StringIO("8264\n"))
    for argv in (["rules", "check", str(sub)],
                 ["operators", "add", "bob", "--role", "supervisor", "--file", str(folder / "o.toml"), "--pin-stdin"],
                 ["operators", "remove", "bob", "--file", str(folder / "o.toml")],
                 ["systemd-unit", "-o", str(folder / "u.service")]):
        code, out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
        said = (out + err).splitlines()
        assert any("nl\\ndir" in line for line in said), (argv, said)
        assert not any(line.startswith("dir/") for line in said), (argv, said)


def test_a_damaged_journal_is_named_on_one_line(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "nl\ndir"
    folder.mkdir()
    journal = dealt_journal(folder / "j.db", "--rounds", "1", "--no-edge-monitor")
    data = bytearray(journal.read_bytes())
    data[8192:16384] = b"\x55" * 8192
    journal.write_bytes(data)
    code, out, err = run(capsys, "audit", "cards", str(journal))
    assert code == 1
    assert len(err.splitlines()) == 1 and "nl\\ndir" in err, err


@pytest.mark.parametrize("name", ["nl\ndir", os.fsdecode(b"caf\xe9"), "it's here"])
def test_a_suggested_command_names_the_very_path_when_pasted(capsys, tmp_path: Path, name: str) -> None:
    """Quoted, then escaped, a path with a line break was `'nl\\ndir/...'`: pasted, a backslash and an
    n, another file. In bash's $'...' the escapes name the very bytes."""
    import subprocess

    ops = tmp_path / name / "operators.toml"
    ops.parent.mkdir()
    code, _, err = run(capsys, "operators", "list", "--file", str(ops))
    assert code == 2 and len(err.splitlines()) == 1, err
    word = err.split("`")[1].rsplit(" --file ", 1)[1]
    pasted = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout
    assert pasted == os.fsencode(str(ops)), (word, pasted)


def test_the_progress_bar_sizes_itself_by_its_terminal_not_columns(tmp_path: Path) -> None:
    """The live screen's mend, not made for the bar at first: on an 80-column terminal with
    COLUMNS=120 left in the environment, `audit cards` drew its bar 120 columns wide (wrapped)."""
    import fcntl
    import pty
    import re
    import select
    import struct
    import sys
    import termios

    journal = dealt_journal(tmp_path / "j.db", "--rounds", "1", "--no-edge-monitor")
    journal = journal.rename(tmp_path / "journal_of_table_seven_main_floor_evening_session_2026_12_07.db")
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(COLUMNS="120", LINES="50", TERM="xterm", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        os.execv(sys.executable, [sys.executable, "-m", "controller.cli.main", "audit", "cards", str(journal)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    said = b""
    while select.select([fd], [], [], 60)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        said += chunk
    os.waitpid(pid, 0)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", said.decode("utf-8", "replace"))
    bars = [s for s in re.split(r"[\r\n]", plain) if "reading" in s]
    assert bars and max(len(s) for s in bars) <= 80, bars
