"""The files of a journal: the SQLite file and those kept beside it (SQLite's ``-wal`` and
``-shm``, the writer's ``.lock``, the anchors).

``journal_files(journal)`` lists them; ``is_journal_file(path, journal)`` says whether writing to
``path`` would write into one of them, however ``path`` is spelled (resolved, or the same file
under another name). Commands that write a file of the user's choosing refuse such a path.
"""
from __future__ import annotations

import os
from pathlib import Path

from controller.fsutil import JOURNAL_SIDE_SUFFIXES


def lock_path(journal: str | os.PathLike[str]) -> Path:
    """``<journal>.lock``: the writer's lock file."""
    return Path(os.fspath(journal) + ".lock")


def journal_files(journal: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The journal and the files beside it (``fsutil.JOURNAL_SIDE_SUFFIXES``: among them its
    ``lock_path`` and ``anchors_path``), whether they exist or not."""
    base = os.fspath(journal)
    return (Path(base), *(Path(base + suffix) for suffix in JOURNAL_SIDE_SUFFIXES))


def is_journal_file(path: str | os.PathLike[str], journal: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is the journal or one of the files beside it."""
    target = Path(path).resolve()
    for kept in journal_files(Path(journal).resolve()):
        if target == kept or (target.exists() and kept.exists() and os.path.samefile(target, kept)):
            return True
    return False
