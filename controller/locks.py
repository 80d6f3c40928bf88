"""Lock files: ``exclusive_lock`` (a writer's ``flock`` on a file beside what it guards) and
``lock_held`` / ``lock_state`` (whether another holds it, looked at without taking it)."""
from __future__ import annotations

import os

from controller.fsutil import LOCK_FILE_MODE, refuse_foreign_symlink

__all__ = ["LOCK_GRACE_S", "exclusive_lock", "lock_held", "lock_state"]

# How long ``exclusive_lock`` tries again before it says another holds the lock: a ``lock_state``
# probe (the scoreboard's "is the table running", once a second) holds a shared lock for a moment,
# and a table starting in that moment was refused as if another shoectl wrote its journal (a review
# of the floor's threads: 59 of 300 starts beside a busy prober).
LOCK_GRACE_S = 0.25


def exclusive_lock(path: str | os.PathLike[str], *, mode: int = LOCK_FILE_MODE) -> int | None:
    """An exclusive ``flock`` on ``path`` (created if missing): its descriptor (closing it
    releases the lock), or None when another process still holds it after ``LOCK_GRACE_S``
    (a probe's moment is waited out; a holder is not waited for). OSError when the file cannot be
    opened. For a lock file beside the file it guards: a file replaced by rename (or one SQLite
    locks itself) cannot carry the lock."""
    import fcntl
    import time

    refuse_foreign_symlink(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, mode)
    deadline = None
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                now = time.monotonic()
                deadline = now + LOCK_GRACE_S if deadline is None else deadline
                if now >= deadline:
                    os.close(fd)
                    return None
                time.sleep(0.005)
    except BaseException:
        os.close(fd)
        raise


def lock_held(path: str | os.PathLike[str]) -> bool:
    """Whether another holds ``exclusive_lock(path)``, looked at without making the file. False
    when the file is not there or cannot be opened (taking the lock then says why). For a check
    before anything is created."""
    return lock_state(path) is True


def lock_state(path: str | os.PathLike[str]) -> bool | None:
    """Whether another holds ``exclusive_lock(path)`` now: True, False (also when the file is not
    there), or None when this process cannot tell (it may not open the file). A shared ``flock``
    tried and let go at once: it conflicts only with an exclusive one."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)  # lets the shared lock go
    return False
