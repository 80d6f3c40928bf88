"""A journal's ``-wal`` at rest, for the tests of what SQLite ignores in one (test_walcheck.py,
test_wal_loss.py): ``wal_at_rest(folder, name)`` copies a journal whose WAL holds six commits
(no checkpoint yet) to ``folder/name`` with its ``-wal``; ``flip_page_byte(wal, frame)`` damages
a byte of that frame's page, as bit rot at rest would."""
from __future__ import annotations

import shutil
from pathlib import Path

from controller.journal import Journal

PAGE = 4096
FRAME = 24 + PAGE


def wal_at_rest(folder: Path, name: str, commits: int = 6) -> tuple[Path, Path]:
    """(the copied journal, its -wal file)."""
    src = folder / f"live-{name}"
    with Journal.open(src, table_id="T1") as journal:
        journal.checkpoint_in_background()
        journal._checkpointer.stop()  # type: ignore[union-attr]
        for i in range(commits):
            journal.append("card", {"i": i})
        copy = folder / name
        shutil.copyfile(src, copy)
        shutil.copyfile(f"{src}-wal", f"{copy}-wal")
    return copy, Path(f"{copy}-wal")


def flip_page_byte(wal: Path, frame: int) -> bytes:
    """Flip a byte of frame ``frame``'s page (1 is the first); the file's new bytes."""
    data = bytearray(wal.read_bytes())
    data[32 + (frame - 1) * FRAME + 24 + 100] ^= 0xFF
    wal.write_bytes(bytes(data))
    return bytes(data)
