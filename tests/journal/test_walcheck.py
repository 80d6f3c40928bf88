"""``wal_problem``: a WAL whose committed transactions SQLite would drop behind a damaged frame is
reported; one that only looked damaged while a writer wrote it is not (a second reading decides).
Real files: a journal's WAL copied at rest, then a byte of one frame flipped."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import walcheck

from .wal_files import flip_page_byte as _flip
from .wal_files import wal_at_rest as _wal_at_rest


@pytest.fixture()
def wal_at_rest(tmp_path: Path) -> tuple[Path, Path]:
    """(a journal whose -wal holds several commits, no checkpoint yet; its -wal file)."""
    return _wal_at_rest(tmp_path, "copy.db")


def test_a_damaged_frame_before_later_commits_is_reported(wal_at_rest) -> None:
    journal, wal = wal_at_rest
    assert walcheck.wal_problem(journal) is None
    _flip(wal, 2)
    found = walcheck.wal_problem(journal)
    assert found is not None and found.lost >= 1
    problem = found.text
    assert problem.startswith(f"{wal}: frame 2 is damaged: SQLite ignores it and everything after it, ")
    assert problem.endswith(f"{found.lost} committed transaction(s) that are not in the journal")


def test_a_wal_that_looked_damaged_while_it_was_written_is_not_reported(wal_at_rest, monkeypatch) -> None:
    """A running table's WAL read while a frame is being written (or after the WAL started again
    under the reader) looks damaged for that one reading: the surveillance review saw "1 committed
    transaction(s) that are not in the journal" once in 150 exports of a healthy live journal.
    Here the writer's progress between the two readings is the flipped byte written back."""
    journal, wal = wal_at_rest
    good = wal.read_bytes()
    _flip(wal, 2)
    monkeypatch.setattr(walcheck.time, "sleep", lambda s: wal.write_bytes(good))
    assert walcheck.wal_problem(journal) is None


def test_a_damaged_header_over_committed_frames_is_a_loss(wal_at_rest) -> None:
    """A bit flipped in the header of a WAL at rest (the header is written in one piece, within a
    disk sector: a crash does not tear it): SQLite ignores the whole file, every commit in it. It was
    "not a WAL file ... whatever it held", no loss counted, as a file that may have held nothing."""
    journal, wal = wal_at_rest
    data = bytearray(wal.read_bytes())
    data[12] ^= 0x01  # the checkpoint sequence: covered by the header's checksum
    wal.write_bytes(bytes(data))
    found = walcheck.wal_problem(journal)
    assert found is not None and found.lost >= 6, found
    assert found.text == (f"{wal}: its header is damaged: SQLite ignores the whole file, {found.lost} committed "
                          "transaction(s) that are not in the journal")
