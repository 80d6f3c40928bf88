"""A journal copied without its ``-wal`` (or whose ``-wal`` was lost while the table was stopped)
holds none of the entries the ``-wal`` held: a recovery drill started `shoectl run` on one, and the
table dealt on from entry 1 without a word, where `journal verify` warns that the file "holds no
entry: if it is a copy, copy its -wal file with it". `run` says what `verify` says
(docs/deployment.md, "Restoring a table from a copy")."""
from __future__ import annotations

import shutil
from pathlib import Path

from cli_run import run
from controller.journal import Journal


def test_run_on_a_journal_copied_without_its_wal_says_it_holds_no_entry(capsys, tmp_path: Path) -> None:
    table = tmp_path / "table"
    table.mkdir()
    writer = Journal.open(table / "t1.db", table_id="T1")
    try:
        for n in range(5):
            writer.append("note", {"n": n})
        copy = tmp_path / "t1.db"
        shutil.copyfile(table / "t1.db", copy)  # the file alone: its entries are in the -wal still
    finally:
        writer.close()
    code, _, err = run(capsys, "journal", "verify", str(copy))
    assert code == 0 and f"{copy}: holds no entry: if it is a copy, copy its -wal file with it" in err, err
    code, _, err = run(capsys, "run", "--journal", str(copy), "--rounds", "1", "--speed", "max",
                       "--display", "lines", "--no-edge-monitor")
    assert code == 0, err[-2000:]
    assert (f"shoectl run: warning: {copy}: holds no entry: if it is a copy, copy its -wal file with it "
            "(docs/journal.md, File and schema)\n") in err, err[-2000:]
