"""The operators file written whole, under its lock (``controller.operators.store``'s ``add`` and
``remove``; docs/operators.md, "Writes are atomic").

- ``locked(path, mode, fail)``: an exclusive ``flock`` on ``.NAME.lock`` beside ``path`` (the file
  a symbolic link names: the one written), held for the block; made with ``mode`` and given the
  file's owner where the process may. The lock file itself is never followed through a link.
  ``fail(reason)`` makes the exception for what stops it, in the writer's words: a lock that is a
  link, a missing or closed folder, another shoectl holding it past ``LOCK_TIMEOUT_S``.
- ``write_whole(path, data, mode)``: ``path`` replaced by ``data`` atomically, with ``mode`` and
  the old file's owner and group where the process may give them; on failure the old file is intact.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from controller.fsutil import atomic_writer, not_replaceable_here
from shoectl_config.text import safe

__all__ = ["LOCK_TIMEOUT_S", "locked", "write_whole"]

LOCK_TIMEOUT_S = 10.0


def _owner(path: Path) -> tuple[int, int] | None:
    """The (uid, gid) of the file at ``path`` (a symbolic link followed), None when none is there."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_uid, st.st_gid


def _give_owner(fd: int, owner: tuple[int, int] | None) -> None:
    """Give the file open on ``fd`` the ``owner`` (uid, gid) when there is one and the process may
    (root may; others only their own). Not allowed is not an error: the file stays the writer's."""
    if owner is None:
        return
    with contextlib.suppress(OSError):
        os.fchown(fd, *owner)


def write_whole(path: Path, data: bytes, mode: int) -> None:
    """See the module docstring."""
    # `shoectl operators` run as root would otherwise leave a root-owned file that the table's
    # own account cannot read at its next start.
    owner = _owner(path)
    with atomic_writer(path, mode=mode, binary=True) as fh:
        _give_owner(fh.fileno(), owner)
        fh.write(data)


@contextlib.contextmanager
def locked(path: Path, mode: int, fail: Callable[[str], Exception]) -> Iterator[None]:
    """See the module docstring."""
    import fcntl

    # the file a symbolic link names is the one written (os.replace over it): its lock is beside it,
    # or a change through the link and one through the name never waited for each other (a review)
    path = Path(os.path.realpath(path))
    lock_path = path.parent / f".{path.name}.lock"
    try:
        # Never through a symbolic link: the folder may be the table account's, and root, running
        # this, would otherwise hand that account whatever file the link names (a review).
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise fail(f"{lock_path.name} is a symbolic link, not a lock file: refused (remove it)") from None
        # the folder of the file a symbolic link names: said as the writer would say it (a review: a
        # bare "No such file or directory" or "Permission denied" took the place of its words)
        folder = safe(str(lock_path.parent))
        if exc.errno == errno.ENOENT:
            raise fail(f"cannot write the file: no such folder {folder}") from None
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise fail(not_replaceable_here(folder)) from None
        raise
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:  # a file of its own, not another's hard link
            _give_owner(fd, _owner(path))  # else one made by root shuts the file's owner out of changes
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise fail("busy: another shoectl is changing the file") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock
