"""Project-wide pytest setup: the ``reg`` marker.

``@pytest.mark.reg("681a.7(i)(3)")`` names the regulation clause a test checks (one or more
clauses per marker). At collection every named clause is checked against the clauses parsed from
docs/regulations/ (a typo is a collection error, so traceability cannot silently lose a test), and
``--reg-report FILE`` writes ``{clause: [test ids]}`` as JSON for tools/traceability.py.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from regulations import clause_ids  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--reg-report", metavar="FILE", help="write {clause: [test ids]} JSON after collection")


def _clauses_of(item: pytest.Item) -> list[str]:
    out: list[str] = []
    for mark in item.iter_markers("reg"):
        out.extend(str(a) for a in mark.args)
    return out


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    known = clause_ids()
    report: dict[str, list[str]] = {}
    bad = []
    for item in items:
        for clause in _clauses_of(item):
            if clause not in known:
                bad.append(f"{item.nodeid}: reg({clause!r}) is not a clause of docs/regulations/")
            report.setdefault(clause, []).append(item.nodeid)
    if bad:
        raise pytest.UsageError("unknown regulation clause in a reg marker:\n" + "\n".join(bad))
    path = config.getoption("--reg-report")
    if path:
        Path(path).write_text(json.dumps(report, indent=1, sort_keys=True), encoding="utf-8")

