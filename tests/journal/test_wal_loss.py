"""A ``-wal`` file whose committed transactions SQLite would ignore (a frame damaged at rest before
later commits): the journal has lost entries it once acknowledged. ``journal verify`` said "ok"
with a warning, and ``shoectl run`` went on from the shorter chain, appending new entries where
the lost ones had been (a bad-input review: 401 entries gone, the chain forked). Now verify and
every reader fail (exit 1) saying what is lost, and the writer refuses to open the journal,
changing nothing: restoring the file, or moving it aside to go on without what it held, is a
person's decision (docs/journal.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run
from controller.journal import Journal, JournalError, verify

from .wal_files import flip_page_byte, wal_at_rest


@pytest.fixture()
def lost_wal(tmp_path: Path) -> Path:
    """A journal copied at rest with six commits in its -wal, the second frame's page damaged."""
    journal, wal = wal_at_rest(tmp_path, "j.db")
    flip_page_byte(wal, 2)
    return journal


def _files(folder: Path) -> dict[str, bytes]:
    """The journal's files and their bytes, but for its lock file and its -shm (SQLite's index of
    the -wal, which a reader may create): what any opening leaves."""
    return {p.name: p.read_bytes() for p in sorted(folder.glob("j.db*"))
            if p.is_file() and p.suffix != ".lock" and not p.name.endswith("-shm")}


def test_verify_fails_naming_what_is_lost(lost_wal: Path) -> None:
    report = verify(lost_wal)
    assert not report.ok
    assert report.reason.startswith(f"{lost_wal}-wal: frame 2 is damaged: SQLite ignores it and everything after it, ")
    assert report.reason.endswith("committed transaction(s) that are not in the journal")


@pytest.mark.parametrize("reader", [("journal", "verify"), ("journal", "export"), ("journal", "replay")])
def test_every_reader_fails_in_one_line(lost_wal: Path, capsys, reader: tuple[str, ...]) -> None:
    code, out, err = run(capsys, *reader, str(lost_wal))
    assert code == 1, (out, err)
    said = (out + err).strip().splitlines()
    assert len(said) == 1 and "frame 2 is damaged" in said[0], said
    assert "Traceback" not in out + err


def test_the_writer_refuses_and_changes_nothing(lost_wal: Path) -> None:
    before = _files(lost_wal.parent)
    with pytest.raises(JournalError) as caught:
        Journal.open(lost_wal, table_id="T1")
    said = str(caught.value)
    assert "frame 2 is damaged" in said and "restore j.db-wal from a copy, or move it aside" in said
    assert _files(lost_wal.parent) == before


def test_run_refuses_in_one_line_exit_2(lost_wal: Path, capsys) -> None:
    before = _files(lost_wal.parent)
    code, out, err = run(capsys, "run", "--journal", str(lost_wal), "--shoes", "1", "--speed", "max",
                         "--display", "lines")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "frame 2 is damaged" in err and "Traceback" not in err
    assert _files(lost_wal.parent) == before
