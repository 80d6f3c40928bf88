"""Opening input files safely: an input must be a regular file before it is opened for reading
(a FIFO or a device would block forever or never end), and it is read up to a size cap.

- ``require_regular_file(path)`` raises ``NotARegularFile`` (one line with the path) otherwise;
- ``read_regular_file(path, max_bytes, error)`` returns ``(shown path, bytes, st_mode)`` and
  reports every problem as ``error(shown path, "", reason)`` (a loader's ``ConfigError``
  subclass): not a path, not found, not a regular file, permission denied, too large.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from collections.abc import Callable

from .text import quoted, safe

__all__ = ["ErrorFactory", "NotARegularFile", "permission_hint", "read_regular_file", "regular_file_problem",
           "require_regular_file"]

ErrorFactory = Callable[[str, str, str], Exception]  # (source, key, reason) -> the loader's error


class NotARegularFile(ValueError):
    """``path`` exists but is not a regular file (a FIFO, a directory, a device, a socket)."""


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def user_name(uid: int) -> str:
    """The account name of ``uid``, or the number when the system has none for it."""
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def another_owner(uid: int) -> str | None:
    """The name of the account ``uid`` when it is neither this process's nor root's, else None."""
    return None if uid in (os.geteuid(), 0) else user_name(uid)


def group_name(gid: int) -> str:
    """The name of group ``gid``, or the number when the system has none for it."""
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def permission_hint(path: str | os.PathLike[str]) -> str:
    """What to do about a file this process may not read: whom it runs as, and what keeps it out: a
    folder on the way it may not enter, or else the file's own permissions (an integrator review
    was told "permission denied" of a key root had made)."""
    user = user_name(os.geteuid())
    where = Path(os.path.abspath(path))
    for folder in reversed(where.parents):  # from the root down: the first one that keeps it out
        if not os.access(folder, os.X_OK):
            return f"this program runs as {user}, who may not enter the folder {quoted(str(folder))}"
    return f"this program runs as {user}: let it read the file (its owner or group, e.g. chown {user} {quoted(str(where))})"


def regular_file_problem(mode: int) -> str | None:
    """``None`` for a regular file's ``st_mode``, else the reason in words
    (``"is a FIFO, not a regular file"``)."""
    if stat.S_ISREG(mode):
        return None
    return f"is {_KINDS.get(stat.S_IFMT(mode), 'not a regular file')}, not a regular file"


def require_regular_file(path: str | os.PathLike[str]) -> None:
    """Raise ``NotARegularFile`` (one line, in the user's words) unless ``path`` is a regular file
    (symbolic links are followed). A missing file raises ``FileNotFoundError`` as ``open`` would."""
    problem = regular_file_problem(os.stat(path).st_mode)
    if problem is not None:
        raise NotARegularFile(f"{os.fspath(path)}: {problem}")


def _nonblocking(path: str, flags: int) -> int:
    # Should the path be swapped for a FIFO between the check and the open, the open still
    # returns at once (and the second check refuses it) instead of waiting for a writer.
    return os.open(path, flags | os.O_NONBLOCK)


def read_regular_file(path: str | os.PathLike[str], max_bytes: int, error: ErrorFactory, *,
                      owner_problem: Callable[[int], str | None] | None = None) -> tuple[str, bytes, int]:
    """Read the regular file ``path`` (at most ``max_bytes``): ``(shown path, bytes, st_mode)``.

    The file is checked before it is opened (a FIFO is never opened, a device never touched) and
    again on the open descriptor, there with ``owner_problem(its owner's uid)`` when given (the
    file read, not one looked at before it). Every problem raises ``error(shown, "", reason)``;
    ``shown`` is the path made printable."""
    try:
        source = os.fspath(path)
    except TypeError:
        raise error(safe(repr(path)), "", "not a file path") from None
    if isinstance(source, bytes):
        source = os.fsdecode(source)
    shown = safe(source)
    problem: str | None = None
    raw = b""
    mode = 0
    try:
        problem = regular_file_problem(os.stat(source).st_mode)
        if problem is None:
            with open(source, "rb", opener=_nonblocking) as fh:
                st = os.fstat(fh.fileno())
                mode = st.st_mode
                problem = regular_file_problem(mode) or (owner_problem(st.st_uid) if owner_problem else None)
                if problem is None:
                    raw = fh.read(max_bytes + 1)
    except FileNotFoundError:
        problem = "file not found"
    except PermissionError:
        problem = f"cannot read the file: permission denied ({permission_hint(source)})"
    except (OSError, ValueError) as exc:  # ValueError: an embedded NUL in the path
        problem = f"cannot read the file: {safe(getattr(exc, 'strerror', None) or str(exc))}"
    if problem is None and len(raw) > max_bytes:
        problem = f"file is larger than {max_bytes} bytes"
    if problem is not None:
        raise error(shown, "", problem)
    return shown, raw, mode
