"""Checkpoints off the commit path (controller/journal/checkpoints.py): a writer that asked for
them checkpoints inside a commit only past ``HARD_FRAMES`` without a pause; the journal's thread
copies the WAL into the database when the writer is quiet and the WAL holds ``SOFT_FRAMES``, and
the WAL is then rewritten from its start instead of growing."""
from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from controller.journal import Journal, JournalReader
from controller.journal.errors import JournalError
from controller.journal.verification import verify

PAD = "x" * 20_000  # an entry of several pages, so that a few hundred commits pass 1000 WAL pages


def _wait_for(condition, seconds: float = 10.0) -> bool:  # noqa: ANN001 - a predicate
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _wal_frames(path: Path) -> int:
    """The frames in the WAL, not its size (the WAL is preallocated): SQLite's own count, the
    ``log`` of a PASSIVE checkpoint (which leaves that count as it is until the WAL restarts)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    finally:
        conn.close()


def test_no_commit_checkpoints_once_the_journal_does_it_in_the_background(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal._checkpointer.stop()  # type: ignore[union-attr]  # only the commits are looked at
        size = path.stat().st_size
        for i in range(200):  # well past SQLite's own threshold of 1000 pages, below HARD_FRAMES
            journal.append("k", {"i": i, "pad": PAD})
        assert path.stat().st_size == size  # nothing was copied into the database by a commit
        assert _wal_frames(path) > 1000
    assert verify(path).ok


def test_the_background_thread_checkpoints_when_the_writer_is_quiet(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    wal = Path(str(path) + "-wal")
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        size = path.stat().st_size
        for i in range(200):  # past SOFT_FRAMES
            journal.append("k", {"i": i, "pad": PAD})
        assert _wait_for(lambda: path.stat().st_size > size)  # copied into the database
        assert _wait_for(lambda: journal._checkpointer.checkpoints >= 1)  # type: ignore[union-attr]
        wal_size = wal.stat().st_size
        for i in range(20):
            journal.append("k", {"i": i, "pad": PAD})
        assert wal.stat().st_size <= wal_size  # rewritten from its start, not grown
        assert journal.last_seq == 220
    assert verify(path).ok


def test_a_wall_clock_stepped_back_does_not_hold_the_quiet_checkpoint_off(tmp_path: Path, monkeypatch) -> None:
    """A review of long shifts: the writer's quiet was the wall clock less the WAL's time of its
    last write; stepped back an hour (NTP, by hand) after a table's last commit, the checkpoint
    waited the hour. The checkpoint thread's looks see the WAL unchanged all the same."""
    import types

    from controller.journal import checkpoints

    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        for i in range(200):  # past SOFT_FRAMES
            journal.append("k", {"i": i, "pad": PAD})
        monkeypatch.setattr(checkpoints, "time", types.SimpleNamespace(  # the thread's clocks from now on
            time_ns=lambda: time.time_ns() - 3600 * 10**9, monotonic_ns=time.monotonic_ns))
        assert _wait_for(lambda: journal._checkpointer.checkpoints >= 1, 5.0)  # type: ignore[union-attr]
    assert verify(path).ok


def test_a_checkpoint_thread_that_fails_hands_checkpoints_back_to_the_commits(tmp_path: Path, mocker) -> None:
    """If the thread cannot work (its connection refused: an edge a test cannot reach otherwise),
    the WAL must not grow for ever: the writer's next commit turns SQLite's own checkpoints on."""
    import sqlite3

    from controller.journal import checkpoints

    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        mocker.patch.object(checkpoints.sqlite3, "connect", side_effect=sqlite3.OperationalError("unable to open"))
        journal.checkpoint_in_background()
        assert _wait_for(lambda: journal._checkpointer.failed)  # type: ignore[union-attr]
        journal.append("k", {})
        assert journal._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000


def test_a_quiet_writer_with_a_small_wal_is_not_checkpointed_at_every_pause(tmp_path: Path) -> None:
    """A table at real pace pauses after every card: a checkpoint at each pause would make the
    next commit start the WAL again, an fsync more on that card. Below SOFT_FRAMES nothing runs."""
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        for i in range(5):
            journal.append("card", {"i": i})
            time.sleep(0.15)  # quiet for three of the thread's looks
        assert journal._checkpointer.checkpoints == 0  # type: ignore[union-attr]


def test_a_writer_without_pauses_keeps_a_bounded_wal(tmp_path: Path) -> None:
    """A table dealing flat out (``--speed max``) never gives the thread a quiet moment: the WAL
    must still start again, not grow for ever (each commit would append to a longer file)."""
    from controller.journal.checkpoints import HARD_FRAMES

    path = tmp_path / "j.db"
    wal = Path(str(path) + "-wal")
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal._checkpointer.stop()  # type: ignore[union-attr]  # no quiet moment ever comes
        for i in range(1500):  # about 9,000 frames: twice past HARD_FRAMES
            journal.append("k", {"i": i, "pad": PAD})
        assert wal.stat().st_size <= (HARD_FRAMES + 200) * (4096 + 24)
    assert verify(path).ok


def test_a_writer_that_asked_for_background_checkpoints_rewrites_a_preallocated_wal(tmp_path: Path) -> None:
    """A commit that writes past the end of the WAL makes its fsync flush the file's size too:
    the WAL is filled with zeros up to SOFT_FRAMES first, and the commits write over them."""
    from controller.journal.checkpoints import SOFT_FRAMES

    path = tmp_path / "j.db"
    wal = Path(f"{path}-wal")
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal._checkpointer.stop()  # type: ignore[union-attr]  # only the commits are looked at
        size = wal.stat().st_size
        assert size == 32 + SOFT_FRAMES * (4096 + 24)
        for i in range(100):
            journal.append("card", {"i": i})
        assert 100 <= _wal_frames(path) < SOFT_FRAMES
        assert wal.stat().st_size == size
    assert verify(path).ok


def test_a_crash_with_a_preallocated_wal_keeps_every_commit_and_only_those(tmp_path: Path) -> None:
    """The files as a crash leaves them (the database and its WAL, zeros after the last frame,
    no wal-index): SQLite's recovery reads every committed entry and stops at the zeros; the
    journal verifies and takes the next entry."""
    path = tmp_path / "j.db"
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal._checkpointer.stop()  # type: ignore[union-attr]
        for i in range(30):
            journal.append("card", {"i": i})
        shutil.copyfile(path, crashed / "j.db")
        shutil.copyfile(f"{path}-wal", crashed / "j.db-wal")
    with Journal.open(crashed / "j.db", table_id="T1") as journal:
        assert [e.payload["i"] for e in journal.entries(kinds=("card",))] == list(range(30))
        journal.append("card", {"i": 30})
    assert verify(crashed / "j.db").ok


def test_a_crash_before_the_first_commit_leaves_a_wal_of_zeros_that_is_no_problem(tmp_path: Path) -> None:
    """A table killed between asking for background checkpoints and its first commit leaves a
    WAL of zeros only (no header yet): it holds nothing, so no reader warns that SQLite ignores
    it (it said "not a WAL file"), and the writer opens the journal and appends as before."""
    from controller.journal.walcheck import wal_problem

    path = tmp_path / "j.db"
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    with Journal.open(path, table_id="T1") as journal:
        journal.append("card", {"i": 0})
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal._checkpointer.stop()  # type: ignore[union-attr]
        shutil.copyfile(path, crashed / "j.db")
        shutil.copyfile(f"{path}-wal", crashed / "j.db-wal")
    wal = crashed / "j.db-wal"
    assert wal.stat().st_size > 32 and wal.read_bytes().count(0) == wal.stat().st_size
    assert wal_problem(crashed / "j.db") is None
    with Journal.open(crashed / "j.db", table_id="T1") as journal:
        journal.append("card", {"i": 1})
        assert [e.payload["i"] for e in journal.entries(kinds=("card",))] == [0, 1]
    assert verify(crashed / "j.db").ok


def test_a_wal_of_zeros_with_one_byte_set_is_still_reported(tmp_path: Path) -> None:
    from controller.journal.walcheck import wal_problem

    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.append("card", {"i": 0})
    wal = Path(f"{path}-wal")
    data = bytearray(100_000)
    data[70_000] = 1
    wal.write_bytes(bytes(data))
    assert str(wal_problem(path)) == (f"{wal}: not a WAL file (100000 bytes): SQLite ignores it, "
                                      "so whatever it held is not in the journal")


def test_an_idle_writers_wal_is_looked_at_less_and_less_often(tmp_path: Path) -> None:
    """An idle table (nothing written) must not wake the thread twenty times a second: the
    looks back off to one a second, and come back to every 50 ms once the WAL is written."""
    from controller.journal.checkpoints import CHECK_INTERVAL

    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        checkpointer = journal._checkpointer  # type: ignore[union-attr]
        time.sleep(2.0)
        idle_looks = checkpointer.looks
        assert idle_looks <= 8  # 50 ms, 100, 200, 400, 800, then each second: 6 in 2 s
        seen = checkpointer.looks
        end = time.monotonic() + 2.0
        i = 0
        while time.monotonic() < end:  # a table dealing: a commit every 20 ms
            journal.append("card", {"i": i})
            i += 1
            time.sleep(0.02)
        # The first look at the written WAL comes within IDLE_INTERVAL, then one every 50 ms:
        # at least (2.0 - 1.0) / 0.05 = 20 looks, against 2 had the back-off stayed.
        assert checkpointer.looks - seen >= 0.5 * (2.0 - 1.0) / CHECK_INTERVAL


def _journal_moved_without_its_wal(path: Path, moved: Path) -> bytes:
    """A table killed with its last entries still in the WAL, then its journal moved to ``moved``
    without the ``-wal`` file (``mv journal.db old/``): the WAL stays at ``path``'s name. Returns
    the WAL's bytes."""
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal._checkpointer.stop()  # type: ignore[union-attr]
        for i in range(5):
            journal.append("card", {"i": i})
        shutil.copyfile(path, moved)
        wal = Path(f"{path}-wal").read_bytes()
    path.unlink()
    Path(f"{path}-wal").write_bytes(wal)
    return wal


def test_a_new_journal_never_takes_the_wal_a_moved_journal_left_behind(tmp_path: Path) -> None:
    """SQLite reads a ``-wal`` file by its name alone: a new journal would take the moved one's
    last entries as its own, and the moved one verify without them. The writer refuses to start a
    journal beside such a file, naming it, and changes nothing; put back beside its journal, the
    entries are all there."""
    path, moved = tmp_path / "j.db", tmp_path / "old.db"
    wal = _journal_moved_without_its_wal(path, moved)
    with pytest.raises(JournalError) as refused:
        Journal.open(path, table_id="T1")
    assert str(refused.value).startswith(f"{path}-wal: a WAL file without its journal: it holds the last entries")
    assert not path.exists() and Path(f"{path}-wal").read_bytes() == wal
    shutil.move(f"{path}-wal", f"{moved}-wal")
    with Journal.open(moved, table_id="T1") as journal:
        assert [e.payload["i"] for e in journal.entries(kinds=("card",))] == list(range(5))
    assert verify(moved).ok
    with Journal.open(path, table_id="T1") as journal:
        assert list(journal.entries(kinds=("card",))) == []


def test_a_wal_of_zeros_beside_no_journal_is_no_reason_to_refuse_one(tmp_path: Path) -> None:
    """A preallocated WAL that no commit wrote holds nothing: a journal starts beside it."""
    path = tmp_path / "j.db"
    Path(f"{path}-wal").write_bytes(bytes(4096 * 4))
    with Journal.open(path, table_id="T1") as journal:
        journal.append("card", {"i": 0})
    assert verify(path).ok



def test_a_writer_closing_beside_a_reader_leaves_every_entry_in_the_journal_file(tmp_path: Path) -> None:
    """A long-run review: SQLite checkpoints at close only the last connection to the file; a
    table stopped cleanly while a feed (or a scoreboard, an export) had the journal open left its
    last entries in the -wal alone, and the journal file copied by itself after the stop ended
    short of them. The writer checkpoints the whole WAL as it closes."""
    path = tmp_path / "j.db"
    writer = Journal.open(path, table_id="T1")
    for i in range(50):
        writer.append("card", {"i": i})
    with JournalReader.open(path) as reader:  # open beside the writer, as a feed is
        assert reader.last_seq == 50
        writer.close()
        copy = tmp_path / "copy.db"
        shutil.copy(path, copy)  # the journal file alone, as a backup of it after the stop
    with JournalReader.open(copy) as alone:
        assert alone.last_seq == 50
    assert verify(copy).ok


def _frames_read_from_the_wal(path: Path) -> int | None:
    from controller.journal.checkpoints import wal_frames

    fd = os.open(f"{path}-wal", os.O_RDONLY)  # SQLite takes no lock on the WAL: closing this releases none
    try:
        return wal_frames(fd)
    finally:
        os.close(fd)


def test_the_frames_read_from_the_wal_are_sqlites_own_count_through_restarts(tmp_path: Path) -> None:
    """What the thread reads from the WAL file (the frames of its current generation) is the
    count SQLite keeps in the wal-index, on a preallocated WAL, as it grows, and after the WAL
    starts again over the longer generation before it (whose frames must not be counted)."""
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal._checkpointer.stop()  # type: ignore[union-attr]  # the checkpoints below are the test's
        seen = []
        for batch in (1, 7, 40, 3, 0):
            for i in range(batch):
                journal.append("k", {"i": i, "pad": PAD[: 300 * (i % 9)]})
            counted = _frames_read_from_the_wal(path)
            assert counted == _wal_frames(path)  # SQLite's count (it checkpoints all: the next commit restarts)
            seen.append(counted)
        assert seen[2] > seen[3] > 0  # a generation shorter than the one before it was counted alone


def test_frames_are_not_read_from_what_is_not_a_wal(tmp_path: Path) -> None:
    from controller.journal.checkpoints import wal_frames

    other = tmp_path / "other"
    for content, frames in ((b"", 0), (bytes(70_000), 0), (b"not a write-ahead log at all, " * 10, None)):
        other.write_bytes(content)
        fd = os.open(other, os.O_RDONLY)
        try:
            assert wal_frames(fd) == frames
        finally:
            os.close(fd)
    assert wal_frames(None) is None
