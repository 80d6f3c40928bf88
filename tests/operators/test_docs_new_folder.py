"""An integrator review: docs/operators.md said `operators add` creates the file "and its
directory" if missing, but a missing folder other than the default's `var/` is refused (on
purpose: a mistyped folder would put the operators where no table reads them). The docs quote the
refusal the command gives."""
from __future__ import annotations

import io
from pathlib import Path

from cli_run import run_captured

DOC = Path(__file__).resolve().parents[2] / "docs" / "operators.md"


def test_the_docs_say_what_add_does_with_a_missing_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("3141\n"))
    code, out, err = run_captured("operators", "add", "d2", "--role", "dealer",
                                  "--file", "newdir/operators.toml", "--pin-stdin")
    assert (code, out) == (2, "")
    assert err.endswith(": no such folder newdir (create it first)\n"), err
    assert not (tmp_path / "newdir").exists()
    doc = " ".join(DOC.read_text(encoding="utf-8").split())
    assert "`no such folder newdir (create it first)`" in doc
    assert "only the default's `var/` is created when missing" in doc
    assert "its directory are created" not in doc
