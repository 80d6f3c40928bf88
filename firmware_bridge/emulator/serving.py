"""Convenience entry points to serve devices and tables (what ``shoectl emulate`` uses).

- ``serve_device(device, transport="pty"|"tcp", ...)`` -> a started ``PtyServer`` / ``TcpServer``.
- ``serve_table(table, directory=None, faults=None)`` -> a started ``TableServer``: one
  ``PtyServer`` per device of the table, with stable links ``DIR/shuffler`` and ``DIR/shoe``
  (only ``DIR/shoe`` for a shoe with the shuffler built in or a table without a shuffler; ``DIR`` a new temporary directory
  unless given, removed on close; one given is made if missing, but never its parents). A new
  temporary directory's name carries the process's pid, and making one first removes those of
  processes that are gone (``remove_stale_directories``: killed, they could not).

``TableServer.devices()`` is the JSON-ready list ``[{"profile": NAME, "port": PATH}, ...]``
(shuffler first; one entry for a shoe with the shuffler built in) that ``shoectl emulate
--table`` prints. Closing a ``TableServer`` stops its
servers and closes the table (and so its dealt log).
"""
from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from .device import EmulatedDevice
from .faults import FaultSpec
from .pty_server import PtyServer
from .server import DeviceServer
from .table import EmulatedTable
from .tcp_server import TcpServer

__all__ = ["TRANSPORTS", "TableServer", "serve_device", "serve_table"]

TRANSPORTS = ("pty", "tcp")


def serve_device(device: EmulatedDevice, transport: str = "pty", *, port: int = 0,
                 link: str | os.PathLike[str] | None = None, faults: FaultSpec | None = None,
                 **kwargs: Any) -> DeviceServer:
    """Start serving ``device``: ``pty`` (``link``: the symlink path) or ``tcp`` (``port``, 0 for
    a free one, loopback only). ``faults`` defaults to the device's own."""
    faults = faults if faults is not None else device.faults
    server: DeviceServer
    if transport == "pty":
        server = PtyServer(device, link=link, faults=faults, **kwargs)
    elif transport == "tcp":
        server = TcpServer(device, port=port, faults=faults, **kwargs)
    else:
        raise ValueError(f"unknown transport {transport!r} (use one of {', '.join(TRANSPORTS)})")
    return server.start()


_PREFIX = "shoectl-table-"  # then the pid of the process that made it, "-", and mkdtemp's letters
_OWNER = ".owner"  # in a directory made here: its process holds an flock on it while it lives
_MAKING = f"{_OWNER}.new"  # the lock file before it is locked and named (TableServer)
# A lock file under its first name is locked microseconds after it is made: one older than this
# whose lock is free was left by a process killed in between, wherever its pid lives.
MAKING_STALE_S = 60.0


def remove_stale_directories(parent: str | None = None) -> list[Path]:
    """Remove the directories of links this module made in ``parent`` (default: the temporary
    directory) for a process that is gone (killed: it could not remove them) and return them.
    Only this user's, only a gone process's (its ``.owner`` lock free; a pid alone is not proof
    across PID namespaces sharing a folder: a review saw a live table's links removed), and only
    holding nothing but the links: anything else is left alone. A directory whose lock file still
    has its first name (``.owner.new``: its process was killed before it named it) is removed once
    that file is ``MAKING_STALE_S`` old and its lock free."""
    removed = []
    for path in Path(parent or tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = path.name[len(_PREFIX):].split("-", 1)[0]
        try:
            if not pid.isdigit() or path.lstat().st_uid != os.getuid():
                continue
            entries = list(path.iterdir())
            if not all((entry.name in ("shoe", "shuffler") and entry.is_symlink())
                       or (entry.name in (_OWNER, _MAKING) and stat.S_ISREG(entry.lstat().st_mode))  # a file, no link
                       for entry in entries):
                continue
            names = {entry.name for entry in entries}  # listed already: no second look
            if _OWNER in names:
                lock = _free_lock(path / _OWNER)
            elif _MAKING in names:
                making = path / _MAKING
                young = time.time() - making.lstat().st_mtime < MAKING_STALE_S
                lock = None if young else _free_lock(making)
            else:
                lock = None if _alive(int(pid)) else -1
            if lock is None:
                continue  # its process holds it: alive, wherever its pid lives
            try:
                for entry in entries:
                    entry.unlink()
                path.rmdir()
            finally:
                if lock >= 0:
                    os.close(lock)
        except OSError:  # another process's sweep took it first, or it is not ours to touch
            continue
        removed.append(path)
    return removed


def _free_lock(path: Path) -> int | None:
    """A descriptor holding ``path``'s flock, taken at once; None when another process holds it."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


class TableServer:
    """A table served over ptys. ``servers`` maps ``"shuffler"`` / ``"shoe"`` (``"shoe"`` alone for
    a shoe with the shuffler built in) to their servers."""

    def __init__(self, table: EmulatedTable, *, directory: str | os.PathLike[str] | None = None,
                 faults: FaultSpec | None = None, **kwargs: Any) -> None:
        self.table = table
        self._made_dir = directory is None
        if directory is None:
            remove_stale_directories()
        self.directory = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-") if directory is None
                              else directory)
        self.directory.mkdir(exist_ok=True)  # the servers' links never make a folder
        self._owner: int | None = None
        if self._made_dir:  # held while this process lives: the sweep of another never takes it for gone
            # Locked under another name, then named: a sweep between the file's creation and its lock
            # found it free and removed this new directory (64 tables started at once: one lost its
            # links). A directory holding another name is never swept.
            making = self.directory / _MAKING
            self._owner = os.open(making, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            fcntl.flock(self._owner, fcntl.LOCK_EX)
            os.rename(making, self.directory / _OWNER)
        faults = faults if faults is not None else table.faults
        roles = (("shoe", table.shoe),) if table.shuffler in (None, table.shoe) else (
            ("shuffler", table.shuffler), ("shoe", table.shoe))
        self.servers: dict[str, DeviceServer] = {
            role: PtyServer(device, link=self.directory / role, faults=faults, **kwargs) for role, device in roles
        }

    def start(self) -> TableServer:
        try:
            for server in self.servers.values():
                server.start()
        except BaseException:
            self.close()
            raise
        return self

    def devices(self) -> list[dict[str, str]]:
        return [{"profile": server.device.name, "port": server.port}
                for server in self.servers.values()]

    def close(self) -> None:
        for server in self.servers.values():
            server.close()
        self.table.close()
        if self._made_dir:
            shutil.rmtree(self.directory, ignore_errors=True)
        if self._owner is not None:
            os.close(self._owner)
            self._owner = None

    def __enter__(self) -> TableServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve_table(table: EmulatedTable, *, directory: str | os.PathLike[str] | None = None,
                faults: FaultSpec | None = None, **kwargs: Any) -> TableServer:
    """Start serving ``table`` over ptys (see the module docstring)."""
    return TableServer(table, directory=directory, faults=faults, **kwargs).start()
