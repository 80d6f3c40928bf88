"""A journal's meta names it with its table id and its creation time (anchors and the feed's
cursor say which journal they belong to by both). A journal whose ``created`` was deleted or
edited with sqlite3, copied without its anchors file: ``run`` and ``feed`` ended in a Python
traceback, exit 1 (a service restarting into it for ever), and ``journal verify`` called it ok
(a review of bad inputs). Every command now refuses it in one line, exit 2, the file unchanged."""
from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from cli_run import dealt_journal, run


@pytest.fixture(scope="module")
def dealt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return dealt_journal(tmp_path_factory.mktemp("dealt") / "j.db", "--rounds", "2", "--seed", "5")


def _edited(dealt: Path, tmp_path: Path, created: str | None) -> Path:
    path = tmp_path / "j.db"
    shutil.copyfile(dealt, path)  # the journal alone, not its .anchors
    with sqlite3.connect(path) as conn:
        if created is None:
            conn.execute("DELETE FROM meta WHERE key = 'created'")
        else:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'created'", (created,))
    conn.close()
    return path


@pytest.mark.parametrize("created, said", [(None, "missing"), ("garbage", "'garbage'"),
                                           ("9999-99-99T00:00:00.000000Z", "'9999-99-99T00:00:00.000000Z'")])
@pytest.mark.parametrize("argv", [
    ("run", "--rounds", "1", "--speed", "max", "--display", "lines", "--journal"),
    ("feed", "--broker", "mqtt://127.0.0.1:1", "--journal"),
    ("journal", "verify"),
    ("journal", "replay"),
])
def test_a_journal_whose_creation_time_was_deleted_or_edited_is_refused_in_one_line(
        capsys, dealt: Path, tmp_path: Path, argv: tuple[str, ...], created: str | None, said: str) -> None:
    path = _edited(dealt, tmp_path, created)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    code, out, err = run(capsys, *argv, str(path))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"not a journal: its meta table's creation time is {said}, not a journal timestamp" in err, err
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
