"""Durable file writes: ``atomic_writer`` (a temporary file in the same directory, fsynced, then
renamed over the target; on any failure the old file is left as it was) and ``fsync_dir``."""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make a rename or a new file in ``path`` durable (best effort where directories can't sync)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int = 0o644, binary: bool = False) -> Iterator[IO[Any]]:
    """Yield a file to write ``path``'s new contents into. The file has ``mode`` from the start
    (a secret is never readable by others, even briefly); when the block ends normally it is
    fsynced and renamed over ``path`` and the directory synced; otherwise it is removed."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:  # named by the file asked for, not by the temporary one
        raise OSError(exc.errno, exc.strerror, str(target)) from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.replace(tmp, target)
        except OSError as exc:  # e.g. a folder of that name: named by the file asked for
            raise OSError(exc.errno, exc.strerror, str(target)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(directory)
