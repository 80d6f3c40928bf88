"""The files this process has open through SQLite, and reading their first bytes without taking
SQLite's locks away.

POSIX advisory locks belong to a process and a file: closing *any* descriptor of the file releases
every lock the process holds on it, SQLite's included (sqlite.org/howtocorrupt.html, section 2.2;
SQLite guards only its own descriptors). A table's writer whose locks were released this way (by
the first bytes of its journal read to tell a journal from another file, in the same process) is
believed gone by the next process that closes a read-write connection to the journal: that process
checkpoints and deletes the WAL under the running writer, whose later commits go to a deleted file
that no reader sees and a crash loses; and a process that opens the journal while the writer's
lock on the ``-shm`` file is gone rebuilds that file under the writer's memory map (a writer that
touched it at that moment died of SIGBUS). ``tests/journal/test_locks_kept.py`` shows both.

So:

- ``opening()`` is held while SQLite opens a journal and takes its first locks, and the
  connection is then noted (``hold``) with the files it locks (the database and its ``-shm``)
  until it closes;
- ``head(path, size)`` reads a file SQLite holds here through a descriptor of its own that stays
  open until SQLite lets go of the file (the last connection noted on it closes), and any other
  file through a descriptor opened and closed at once; both under the same lock, so that no
  connection takes its first locks on a file between that descriptor's opening and its closing.

The WAL file needs none of this: SQLite takes no locks on it.
"""
from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["head", "opening"]

_lock = threading.RLock()
# (device, inode) of a file SQLite holds here -> [connections noted on it, our descriptors of it]
_held: dict[tuple[int, int], tuple[list[int], list[int]]] = {}


def _key(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


@contextlib.contextmanager
def opening() -> Iterator[Callable[[object, Path], None]]:
    """Hold this while a connection to the journal at a path is made and runs its first statement;
    call what it gives (``hold(connection, path)``) once the connection is open, before leaving.
    The connection's files are then held until ``connection.close()`` (if the connection calls
    the release it was given: ``connection.release_files``) or until it is collected."""
    with _lock:
        yield _hold


def _hold(connection: object, path: Path) -> None:
    keys = []
    for file in (path, Path(f"{path}-shm")):
        try:
            key = _key(os.stat(file))
        except OSError:
            continue  # no -shm: not in WAL mode yet, or read as an immutable file
        _held.setdefault(key, ([0], []))[0][0] += 1
        keys.append(key)
    release = weakref.finalize(connection, _release, keys)
    with contextlib.suppress(AttributeError):  # a connection class that takes no attributes: collected only
        connection.release_files = release  # type: ignore[attr-defined]


def _release(keys: list[tuple[int, int]]) -> None:
    with _lock:
        for key in keys:
            count, fds = _held[key]
            count[0] -= 1
            if count[0]:
                continue
            del _held[key]
            for fd in fds:  # SQLite has let go of the file here: nothing of it is released by these
                with contextlib.suppress(OSError):
                    os.close(fd)


def head(path: str | os.PathLike[str], size: int) -> bytes | None:
    """The first ``size`` bytes of ``path`` (fewer for a shorter file); None when it cannot be read
    (no such file, no permission, not a file that can be read from a position, no descriptor
    left). Never releases a lock SQLite holds in this process (see the module docstring)."""
    with _lock:
        try:
            entry = _held.get(_key(os.stat(path)))
            if entry is not None and entry[1]:
                return os.pread(entry[1][0], size, 0)
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO is not waited on
        except (OSError, ValueError):
            return None
        try:
            entry = _held.get(_key(os.fstat(fd)))  # the file opened, which may have replaced the one looked at
            return os.pread(fd, size, 0)
        except OSError:
            return None
        finally:
            if entry is None:
                os.close(fd)
            else:
                entry[1].append(fd)  # closed when SQLite lets go of the file
