"""A journal's file deleted or moved while its writer runs (a review of operations: a table dealt
1,494 entries, each acknowledged to the devices, into a deleted file, then said
``journal PATH: 1494:...`` of a path holding nothing and exited 0)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.journal import Journal, JournalReader, verify
from controller.journal.errors import JournalFileGone


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize("how", ["deleted", "moved"])
def test_the_commit_that_finds_the_file_gone_raises_and_the_writer_appends_nothing_more(tmp_path: Path,
                                                                                       how: str) -> None:
    path = tmp_path / "j.db"
    journal = Journal.open(path, table_id="T1")
    journal.append("note", {"text": "before"})
    if how == "deleted":
        _remove(path)
    else:
        (tmp_path / "old").mkdir()
        for suffix in ("", "-wal", "-shm"):
            os.rename(f"{path}{suffix}", tmp_path / "old" / f"j.db{suffix}")
    with pytest.raises(JournalFileGone, match="deleted or moved while the table ran: the table stops"):
        journal.append("note", {"text": "after"})
    with pytest.raises(JournalFileGone):  # and every append after it: nothing is written into nowhere
        journal.append("note", {"text": "later"})
    journal.close()
    assert not path.exists()
    if how == "moved":  # what was committed is in the moved file, whole; nothing after the refusal
        with JournalReader.open(tmp_path / "old" / "j.db") as reader:
            assert [e.payload.get("text") for e in reader.entries(kinds=("note",))] == ["before", "after"]


def test_a_wal_deleted_under_the_writer_stops_it_at_the_next_commit_and_its_close_keeps_every_entry(
        tmp_path: Path) -> None:
    """A review of disk faults: the -wal, which holds the entries since the last checkpoint, deleted
    while the table dealt (a script tidying the folder) was not noticed: the table dealt on into it,
    and a crash later lost every round since while `verify` said ok. The next commit stops the
    writer, saying so; SQLite still holds the deleted -wal open, and the close copies it into the
    journal's file: nothing is lost."""
    path = tmp_path / "j.db"
    journal = Journal.open(path, table_id="T1")
    journal.append("note", {"text": "before"})
    Path(f"{path}-wal").unlink()
    with pytest.raises(JournalFileGone, match=r"the journal's -wal file was deleted or moved while the table ran: "
                                              r"the table stops \(entry 2 and those since the last checkpoint"):
        journal.append("note", {"text": "after"})
    with pytest.raises(JournalFileGone):
        journal.append("note", {"text": "later"})
    journal.close()
    with JournalReader.open(path) as reader:
        assert [e.payload.get("text") for e in reader.entries(kinds=("note",))] == ["before", "after"]
    assert verify(path).ok


def test_a_file_in_its_place_is_written_as_ever(tmp_path: Path) -> None:
    """The check is of the file itself: a journal left where it is goes on (a control for the above)."""
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        for i in range(3):
            journal.append("note", {"text": str(i)})
        assert journal.gone is None
    with JournalReader.open(path) as reader:
        assert len(list(reader.entries(kinds=("note",)))) == 3


@pytest.mark.slow
def test_a_table_whose_journal_is_deleted_stops_says_so_and_writes_no_anchor_for_it(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli.main", "run", "--journal", str(path), "--shoes", "20",
                             "--speed", "max", "--display", "lines"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (path.exists() and os.path.getsize(f"{path}-wal") > 200_000
                                                  if Path(f"{path}-wal").exists() else False):
            time.sleep(0.02)
        anchors_before = Path(f"{path}.anchors").read_text()
        _remove(path)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 2, err
    assert err.strip().splitlines()[-1].startswith(f"shoectl run: error: {path}: the journal's file was deleted or "
                                                   "moved while the table ran: the table stops"), err
    assert "Traceback" not in err and f"journal {path}:" not in out  # no closing line claiming a journal
    assert Path(f"{path}.anchors").read_text() == anchors_before  # no anchor of a journal that is not there
