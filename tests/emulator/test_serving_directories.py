"""A table's links directory (``firmware_bridge.emulator.serving``): removed on close; one left by a
process killed before it could (SIGKILL, a power cut) is removed by the next table that starts,
and nothing else is touched."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from firmware_bridge.emulator import EmulatedTable
from firmware_bridge.emulator.serving import TableServer, remove_stale_directories

_SERVE_AND_WAIT = """
import sys, time
from firmware_bridge.emulator import EmulatedTable
from firmware_bridge.emulator.serving import TableServer
server = TableServer(EmulatedTable(speed=float("inf"), seed=1)).start()
print(server.directory, flush=True)
time.sleep(600)
"""


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def _links_dir(parent: Path, pid: int, name: str = "abc") -> Path:
    path = parent / f"shoectl-table-{pid}-{name}"
    path.mkdir()
    for role in ("shuffler", "shoe"):
        (path / role).symlink_to("/dev/pts/999999")
    return path


def test_a_killed_table_s_directory_is_removed_by_the_next_table_and_only_it(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    killed = subprocess.Popen([sys.executable, "-c", _SERVE_AND_WAIT], stdout=subprocess.PIPE, text=True, env=env)
    try:
        left = Path(killed.stdout.readline().strip())
        assert left.parent == tmp_path and sorted(p.name for p in left.iterdir()) == [".owner", "shoe", "shuffler"]
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait(30)
        killed.stdout.close()
    assert left.exists()  # killed: it could not remove its links
    dead = _dead_pid()
    holding_more = _links_dir(tmp_path, dead, "more")
    (holding_more / "notes.txt").write_text("not ours to remove\n")
    living = _links_dir(tmp_path, os.getpid(), "alive")
    unrelated = tmp_path / "shoectl-table-notapid-x"
    unrelated.mkdir()

    server = TableServer(EmulatedTable(speed=float("inf"), seed=2)).start()
    try:
        assert not left.exists()
        assert holding_more.exists() and living.exists() and unrelated.exists()
        assert server.directory.exists() and server.directory.name.startswith(f"shoectl-table-{os.getpid()}-")
    finally:
        server.close()
    assert not server.directory.exists()


def test_the_sweep_removes_a_dead_process_s_links_and_says_which(tmp_path: Path) -> None:
    dead = _links_dir(tmp_path, _dead_pid())
    assert remove_stale_directories(str(tmp_path)) == [dead] and not dead.exists()
    assert remove_stale_directories(str(tmp_path)) == []


def test_a_directory_whose_owner_lock_is_held_is_kept_whatever_its_pid_says(tmp_path: Path) -> None:
    """A review: a table in another PID namespace sharing the folder has a pid this process cannot
    see, and its live links were removed. The lock its process holds on ``.owner`` says it lives."""
    import fcntl

    path = _links_dir(tmp_path, _dead_pid(), "elsewhere")
    owner = os.open(path / ".owner", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(owner, fcntl.LOCK_EX)  # as the live table elsewhere holds it
    try:
        assert remove_stale_directories(str(tmp_path)) == [] and path.exists()
    finally:
        os.close(owner)  # its process gone: the lock with it
    assert remove_stale_directories(str(tmp_path)) == [path] and not path.exists()



def test_a_directory_being_made_is_not_swept(monkeypatch, tmp_path: Path) -> None:
    """A benchmark of 64 tables started at once: one table's sweep found another's new directory
    between the creation of its `.owner` and the lock on it, took the lock, and removed the
    directory; the new table then failed on its links (`.../shuffler: No such file or directory`).
    The lock file is made and locked under another name, which no sweep takes, then named. The
    other process's sweep is run here at that very moment: just before the lock is taken."""
    import fcntl

    from firmware_bridge.emulator import serving

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    real_flock, swept = fcntl.flock, []

    def sweep_first(fd: int, operation: int) -> None:
        if operation == fcntl.LOCK_EX and not swept:  # the new table's own lock, about to be taken
            swept.append(serving.remove_stale_directories(str(tmp_path)))
        real_flock(fd, operation)

    monkeypatch.setattr(serving.fcntl, "flock", sweep_first)
    server = TableServer(EmulatedTable(speed=float("inf"), seed=3)).start()
    try:
        assert swept == [[]]
        assert sorted(p.name for p in server.directory.iterdir()) == [".owner", "shoe", "shuffler"]
    finally:
        server.close()


def test_a_directory_left_before_its_lock_was_named_is_swept_once_that_file_is_old(tmp_path: Path) -> None:
    """A table killed between making its lock file (``.owner.new``) and naming it left a directory
    no sweep ever took. Such a file is locked microseconds after it is made: one a minute old whose
    lock is free was its dead process's; a new one, or one whose lock is held, is a table starting."""
    import fcntl

    from firmware_bridge.emulator.serving import MAKING_STALE_S

    old = time.time() - MAKING_STALE_S - 5
    left = tmp_path / f"shoectl-table-{_dead_pid()}-left"
    left.mkdir()
    (left / ".owner.new").touch()
    os.utime(left / ".owner.new", (old, old))
    starting = tmp_path / f"shoectl-table-{_dead_pid()}-new"  # made just now: its lock comes next
    starting.mkdir()
    (starting / ".owner.new").touch()
    held = _links_dir(tmp_path, _dead_pid(), "held")  # old, but locked: alive in another PID namespace
    (held / ".owner.new").touch()
    os.utime(held / ".owner.new", (old, old))
    lock = os.open(held / ".owner.new", os.O_RDONLY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        assert remove_stale_directories(str(tmp_path)) == [left] and not left.exists()
        assert starting.exists() and held.exists()
    finally:
        os.close(lock)
    assert remove_stale_directories(str(tmp_path)) == [held] and starting.exists()
