"""Every command that reads a journal (`journal verify|export|replay`, `audit cards|shuffle`,
`roadmap`), on a journal written by a real `shoectl run`: read-only copies, FIFOs, damaged and
tampered files, a garbage `-wal` file."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from unprivileged import read_only_copy, run_unprivileged

READERS = {
    "verify": ["journal", "verify"],
    "export": ["journal", "export"],
    "replay": ["journal", "replay"],
    "audit cards": ["audit", "cards"],
    "audit shuffle": ["audit", "shuffle"],
    "roadmap": ["roadmap"],
}


@pytest.fixture(scope="module")
def table_journal(tmp_path_factory) -> Path:
    """A journal of one whole shoe dealt by `shoectl run` on the built-in emulator."""
    path = tmp_path_factory.mktemp("readers") / "table.db"
    subprocess.run([sys.executable, "-m", "controller.cli.main", "run", "--journal", str(path), "--shoes", "1",
                    "--speed", "max", "--seed", "1", "--display", "lines"], check=True, capture_output=True,
                   timeout=120)
    return path


@pytest.fixture
def journal(table_journal: Path, tmp_path: Path) -> Path:
    """A private copy of the table's journal (and of the files beside it that belong to it)."""
    for side in table_journal.parent.glob(table_journal.name + "*"):
        if not side.name.endswith(".lock"):
            shutil.copy(side, tmp_path / side.name)
    return tmp_path / table_journal.name


@pytest.mark.parametrize("reader", READERS)
def test_a_read_only_copy_is_read_by_an_unprivileged_user(reader: str, table_journal: Path) -> None:
    """docs/journal.md: a read-only copy (e.g. on write-protected media) without a -wal file is
    opened immutable. A 0444 file in a 0555 directory, read as `nobody`: SQLite cannot create the
    -shm file beside it and says "attempt to write a readonly database"."""
    with read_only_copy(table_journal) as ro:
        code, out, err = run_unprivileged(*READERS[reader], str(ro / table_journal.name))
        assert sorted(p.name for p in ro.iterdir()) == [table_journal.name]  # nothing created beside it
    assert "readonly" not in err and "read-only" not in err
    assert code == 0, err
    assert out
