"""docs/traceability.md is generated from the reg markers and must be current; every marked test
quotes the clauses it names; the vendored regulation texts must equal the shared originals."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "regulations"

sys.path.insert(0, str(ROOT / "tools"))
from regulations import all_clauses, clause_texts, quoted_passages, unquoted  # noqa: E402
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


def _unquoted_by_collecting(tmp_path: Path) -> dict[str, list[str]]:
    out = tmp_path / "unquoted.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "--reg-unquoted", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(out.read_text(encoding="utf-8"))


def test_every_regulation_test_quotes_the_clauses_it_names(reg_unquoted: dict[str, list[str]] | None,
                                                          tmp_path: Path) -> None:
    """The project's standard: "a clause's test states what the text requires (quote it)". Every
    test with a reg marker quotes, in its docstring (or its class's), at least four words in a row
    of each clause it names, or of a clause below it, as docs/regulations/ has them. The suite is
    collected by this session when it was the whole suite, else in a process of its own."""
    found = reg_unquoted if reg_unquoted is not None else _unquoted_by_collecting(tmp_path)
    lines = [f"{test}: no quote of {', '.join(clauses)}" for test, clauses in sorted(found.items())]
    assert not lines, "tests that do not quote the clauses they name:\n" + "\n".join(lines)


def test_a_quote_is_the_clause_s_own_words() -> None:
    """What counts as quoting: a passage between double quotes, curly or straight, cut at "..."
    into pieces of four words or more, each found in the clause or a clause below it."""
    texts = clause_texts()
    doc = '''681a.5(c): "at least ten cards in from the top or the bottom" ... '''
    assert unquoted(["681a.5(c)"], doc, texts) == []
    assert unquoted(["681a.5(c)", "681a.7(a)"], doc, texts) == ["681a.7(a)"]
    assert unquoted(["681a.5(c)"], "681a.5(c): at least ten cards in from the top", texts) == ["681a.5(c)"]
    assert unquoted(["681a.5(c)"], '681a.5(c): "ten cards in"', texts) == ["681a.5(c)"]  # too short to be a quote
    assert unquoted(["681a.5(c)"], '681a.5(c): "at least eleven cards in from the top"', texts) == ["681a.5(c)"]
    assert unquoted(["629a.8(c)(3)"], '"the dealer shall announce the results"', texts) == ["629a.8(c)(3)"]
    # a parent clause may be quoted by the words of a clause below it; a sub-clause not by its parent's
    sub = '''"Place the disclosed card and one additional card"'''
    assert unquoted(["627a.13(c)", "627a.13(c)(1)"], sub, texts) == []
    assert unquoted(["627a.13(c)(2)"], sub, texts) == ["627a.13(c)(2)"]
    assert quoted_passages('''“no more bets” and "a b c d ... e f g h [and] i j k l"''') == [
        "a b c d", "e f g h", "i j k l"]


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
