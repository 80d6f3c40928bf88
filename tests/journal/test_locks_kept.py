"""A process that has the journal open through SQLite keeps SQLite's locks on it.

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

from controller.fsutil import sqlite_head
from controller.journal import Journal, JournalReader

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
