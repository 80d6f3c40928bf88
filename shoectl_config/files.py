"""Opening input files safely: an input must be a regular file before it is opened for reading
(a FIFO or a device would block forever or never end)."""
from __future__ import annotations

import os
import stat


class NotARegularFile(ValueError):
    """``path`` exists but is not a regular file (a FIFO, a directory, a device, a socket)."""


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def require_regular_file(path: str | os.PathLike[str]) -> None:
    """Raise ``NotARegularFile`` (one line, in the user's words) unless ``path`` is a regular file
    (symbolic links are followed). A missing file raises ``FileNotFoundError`` as ``open`` would."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise NotARegularFile(f"{os.fspath(path)}: is {kind}, not a regular file")
