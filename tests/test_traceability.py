"""docs/traceability.md is generated from the reg markers and must be current; the vendored
regulation texts must equal the shared originals."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "regulations"

sys.path.insert(0, str(ROOT / "tools"))
from regulations import all_clauses  # noqa: E402
from traceability import OUT, render  # noqa: E402


def test_traceability_document_is_current(reg_report: dict[str, list[str]] | None) -> None:
    """When this session collected the whole suite, its reg markers are the ones
    ``tools/traceability.py`` would collect in a process of its own: the document is rendered from
    them (the same ``render``); otherwise that tool's own ``--check`` collects the suite."""
    if reg_report is None:
        proc = subprocess.run([sys.executable, "tools/traceability.py", "--check"], cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return
    assert OUT.read_text(encoding="utf-8") == render(reg_report), f"{OUT.relative_to(ROOT)} is out of date: run `make traceability`"


def test_every_section_parses_into_its_clauses() -> None:
    sections = all_clauses()
    assert set(sections) == {"627a.13", "629a.8", "681a.5", "681a.7"}
    ids = {c.id for cs in sections.values() for c in cs}
    for expected in ("627a.13(c)(2)", "629a.8(c)(3)(i)(B)", "681a.5(g)(2)", "681a.7(f)(2)", "681a.7(i)(3)(ii)", "681a.7(m)"):
        assert expected in ids
    assert "681a.7(h)(2)" not in ids  # "(h)-(j)" in running text is a cross reference


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/regulations is not beside this checkout")
def test_vendored_regulations_equal_the_shared_originals() -> None:
    for f in SHARED.glob("*.txt"):
        assert (ROOT / "docs" / "regulations" / f.name).read_bytes() == f.read_bytes(), f.name
