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
