"""A process that has the journal open through SQLite keeps SQLite's locks on it, and one journal
has one set of side files (its ``-wal`` and ``-shm``, its writer's lock) whoever else has it open.

POSIX advisory locks belong to the process and the file: closing *any* descriptor of the file
releases all of them (sqlite.org/howtocorrupt.html, 2.2). A descriptor of our own on the journal
or its ``-shm`` (the first bytes read to tell a journal from another file; the wal-index header
read by the checkpoint thread), closed while the table's writer is open, took the writer's locks
away: the next process to close its last connection to the journal (a console, ``journal
verify``, the scoreboard) then believed itself the last one, checkpointed and deleted the WAL
under the running writer, whose later commits went to a deleted file (no reader saw them; a
crash lost them), and a writer touching its mapped ``-shm`` after the other process truncated it
died of SIGBUS (``shoectl run --json`` with its output unread, once in a ``make test``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.fsutil import sqlite_head
from controller.journal import Journal, JournalReader
from controller.journal.errors import JournalBusyError, JournalError
from controller.journal.files import sqlite_files_undone, writer_running

_OTHER_PROCESS = """
import sqlite3, sys
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode={sys.argv[2]}", uri=True)
print(conn.execute("SELECT count(*) FROM entries").fetchone()[0])
conn.close()
"""


def _count_in_another_process(path: Path, mode: str = "ro") -> int:
    """The entries another process sees, opening the journal and closing its connection (the
    moment SQLite decides whether it was the last one; one that may write, ``mode="rw"``, then
    checkpoints and deletes the WAL)."""
    done = subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(path), mode], capture_output=True, text=True,
                          timeout=60, check=True)
    return int(done.stdout)


def _locked_by_us(path: Path) -> bool:
    """Whether this process holds a POSIX lock on the file at ``path`` (/proc/locks)."""
    inode = path.stat().st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if fields[1] == "POSIX" and fields[4] == str(os.getpid()) and int(fields[5].split(":")[2]) == inode:
            return True
    return False


def _side_files(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir() if p.name.startswith(path.name + "-")}


def test_a_reader_opened_beside_the_writer_leaves_the_writer_its_locks(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.append("note", {"text": "one"})
        with JournalReader.open(path) as reader:  # the table's own reader (run --json, the feed, ctl)
            assert reader.last_seq >= 1
        assert sqlite_head(path) is not None  # what a command checks before it writes beside a journal
        assert _locked_by_us(path) and _locked_by_us(Path(f"{path}-shm"))
        seen = _count_in_another_process(path, "rw")  # an operator's sqlite3 shell, a backup tool
        assert {"j.db-wal", "j.db-shm"} <= _side_files(path)  # the other process was not the last
        journal.append("note", {"text": "two"})
        assert _count_in_another_process(path) == seen + 1  # the next commit is where readers look


def test_the_checkpoint_thread_stopping_leaves_the_writer_its_locks(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal.append("note", {"text": "one"})
        journal._checkpointer.stop()  # type: ignore[union-attr]  # as the table's stop does, before the writer closes
        assert _locked_by_us(path) and _locked_by_us(Path(f"{path}-shm"))  # -shm: the wal-index's "in use" lock
        seen = _count_in_another_process(path)
        assert {"j.db-wal", "j.db-shm"} <= _side_files(path)
        journal.append("note", {"text": "two"})
        assert _count_in_another_process(path) == seen + 1


_FOLLOWER = """
import sys
from controller.journal.tail import JournalTail
tail = JournalTail.open(sys.argv[1])
print(len(tail.poll(1000)), flush=True)
sys.stdin.readline()
print(len(tail.poll(1000)), flush=True)
"""


def test_a_refused_check_leaves_the_wal_and_shm_a_follower_opened_meanwhile(tmp_path: Path) -> None:
    """``run`` verifies a journal before it resumes, and a refusal (or Ctrl-C) removes the -wal and
    -shm its reading made. A feed or scoreboard that opened the journal meanwhile (a long verify)
    uses them: removed, it never saw another entry and said nothing (a review of the files'
    durability). They stay while anyone has the journal open."""
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        for i in range(3):
            journal.append("note", {"i": i})
    assert not _side_files(path)
    follower = subprocess.Popen([sys.executable, "-c", _FOLLOWER, str(path)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    try:
        with pytest.raises(JournalError), sqlite_files_undone(path):
            assert follower.stdout is not None and int(follower.stdout.readline()) == 3  # the follower has it open
            raise JournalError(f"{path}: does not verify")  # the check's refusal
        assert {"j.db-wal", "j.db-shm"} <= _side_files(path)
        with Journal.open(path, table_id="T1") as journal:  # the table started again
            for i in range(5):
                journal.append("note", {"i": 10 + i})
            out, _ = follower.communicate("\n", timeout=60)
        assert int(out) == 5  # the follower sees what was written after
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


def test_a_refused_check_read_alone_leaves_nothing_beside_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    Journal.open(path, table_id="T1").close()
    with pytest.raises(JournalError), sqlite_files_undone(path):
        with JournalReader.open(path):
            assert {"j.db-wal", "j.db-shm"} <= _side_files(path)  # made by this reading
        raise JournalError(f"{path}: does not verify")
    assert not _side_files(path) - {"j.db.lock"}


def test_one_journal_under_two_paths_has_one_writer(tmp_path: Path) -> None:
    """Started as ``/srv/t.db`` (a symbolic link) and as ``/data/t.db``, the journal took a lock
    beside each name and two tables wrote it (one died at its first card). One lock, beside the
    real file."""
    (tmp_path / "data").mkdir()
    (tmp_path / "srv").mkdir()
    real, link = tmp_path / "data" / "t.db", tmp_path / "srv" / "t.db"
    Journal.open(real, table_id="T1").close()
    link.symlink_to(real)
    with Journal.open(link, table_id="T1"):
        assert writer_running(real) and writer_running(link)
        with pytest.raises(JournalBusyError, match="already open for writing"):
            Journal.open(real, table_id="T1")


def test_a_reading_command_given_a_locked_journal_keeps_exit_2(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """A journal another program holds locked is a temporary failure, exit 75, for the services a
    manager restarts (`run`, `feed`: tests/e2e/test_run_stop.py); a reading command keeps its
    documented exit 2 (a review of this change)."""
    import sqlite3

    from cli_run import run

    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.append("note", {"text": "one"})
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("PRAGMA locking_mode = EXCLUSIVE")
        other.execute("BEGIN EXCLUSIVE")
        code, out, err = run(capsys, "journal", "verify", str(path))
    finally:
        other.rollback()
        other.close()
    assert code == 2 and out == "" and "locked by another connection" in err, (code, err)
