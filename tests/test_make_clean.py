"""``make clean`` removes what a build and the tests leave and keeps every journal, and says so
(issue 12): run against a scratch directory that holds a table's var/ beside a venv and caches."""
from __future__ import annotations

import subprocess
from pathlib import Path

from required import require_command

MAKEFILE = Path(__file__).resolve().parent.parent / "Makefile"


def test_make_clean_keeps_the_journals_and_says_what_it_kept(tmp_path: Path) -> None:
    make = require_command("make")
    kept = [tmp_path / "var" / name for name in ("journal.db", "journal.db.anchors", "journal.log", "operators.toml")]
    removed = [tmp_path / ".venv" / "bin" / "python", tmp_path / "build" / "lib" / "x.py",
               tmp_path / "shoectl.egg-info" / "PKG-INFO", tmp_path / ".pytest_cache" / "README.md",
               tmp_path / ".hypothesis" / "examples" / "x"]
    for path in kept + removed:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")
    done = subprocess.run([make, "-s", "-f", str(MAKEFILE), "clean"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert all(p.is_file() for p in kept)
    assert not any(p.exists() for p in removed)
    assert "make clean kept: var/ (journals" in done.stdout and "never deletes a journal" in done.stdout
    assert "Starting a table afresh" in done.stdout
