"""Project-wide pytest setup: the ``reg`` marker, the order of the tests, their temporary directory.

``@pytest.mark.reg("681a.7(i)(3)")`` names the regulation clause a test checks (one or more
clauses per marker). At collection every named clause is checked against the clauses parsed from
docs/regulations/ (a typo is a collection error, so traceability cannot silently lose a test), and
``--reg-report FILE`` writes ``{clause: [test ids]}`` as JSON for tools/traceability.py. The same
mapping is kept for the session (the ``reg_report`` fixture), with whether the whole suite was
collected, so that tests/test_traceability.py need not collect the suite a second time. Each such
test must also quote, in its docstring or its class's, the words of every clause it names
(``tools/regulations.py``, ``unquoted``): the ``reg_unquoted`` fixture and ``--reg-unquoted FILE``
list the tests that do not.

Order and workers: the modules holding the most ``slow`` tests run first, each module's tests together and
in their own order, so that under ``pytest -n auto`` (``make test`` hands each worker whole modules,
``--dist loadscope``) the long tests are not the last ones started: a long test left to the end keeps
one worker busy while the others wait. ``-n auto`` starts two workers per CPU
(``pytest_xdist_auto_num_workers``).

The edge monitor's engine: ``SHOECTL_EDGE_ENGINE=python`` unless set (``pytest_configure``).

Temporary directory: when ``TMPDIR`` is not set and /dev/shm (memory) has room, tests' temporary
files (``tmp_path``, ``tempfile``, and every process a test starts) go there. A test still writes
a real SQLite file and the journal still calls fdatasync at each commit; on memory that call costs
nothing, where on this machine's disk it was half the time of dealing a shoe. What the tests check
of durability is a process killed, which leaves the page cache either way (tests/journal/
test_durability.py); like the PostgreSQL of tests/services/postgres.py (fsync=off), no test can
cut the power.
"""
from __future__ import annotations

import gc
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from regulations import clause_ids, clause_texts, unquoted  # noqa: E402

MEMORY_TMP = Path("/dev/shm")
MEMORY_TMP_ROOM = 2 * 1024**3  # bytes free: a whole run holds about 300 MB until its end (only failed tests keep theirs)
REG_REPORT = pytest.StashKey[dict[str, list[str]]]()
REG_UNQUOTED = pytest.StashKey[dict[str, list[str]]]()
WHOLE_SUITE = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--reg-report", metavar="FILE", help="write {clause: [test ids]} JSON after collection")
    parser.addoption("--reg-unquoted", metavar="FILE",
                     help="write {test id: [clauses its docstring does not quote]} JSON after collection")


MAX_WORKERS = 16


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: pytest without xdist runs the tests too
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers per CPU. A test spends about half its time waiting (on the processes,
    ptys, brokers and browsers it starts, on a device's timeout); a second worker per CPU runs
    meanwhile. At most ``MAX_WORKERS``: each worker's tests start tables, brokers and browsers of
    their own, and memory, not CPUs, bounds a big machine. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still
    decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return min(2 * len(os.sched_getaffinity(0)), MAX_WORKERS)


def _memory_has_room() -> bool:
    try:
        st = os.statvfs(MEMORY_TMP)
    except OSError:
        return False
    runs_programs = not st.f_flag & getattr(os, "ST_NOEXEC", 0)  # a test may start a script it wrote
    return runs_programs and os.access(MEMORY_TMP, os.W_OK | os.X_OK) and st.f_bavail * st.f_frsize >= MEMORY_TMP_ROOM


def pytest_configure(config: pytest.Config) -> None:
    # Every `shoectl run` the tests start values its edges with the reference engine: numpy's
    # import cost each of them 0.14 s of CPU (some 130 processes, about 10 s of `make test` on two
    # cores). The engines give the same figures (tests/rules; a run by each: test_edge_engines_in_a_run).
    os.environ.setdefault("SHOECTL_EDGE_ENGINE", "python")
    if "TMPDIR" not in os.environ and config.getoption("basetemp") is None and _memory_has_room():
        os.environ["TMPDIR"] = str(MEMORY_TMP)
        tempfile.tempdir = None  # computed again from TMPDIR at its next use


def _clauses_of(item: pytest.Item) -> list[str]:
    out: list[str] = []
    for mark in item.iter_markers("reg"):
        out.extend(str(a) for a in mark.args)
    return out


def _whole_suite(config: pytest.Config) -> bool:
    """Whether this session collects every test under tests/ (no narrower path, nothing ignored)."""
    if config.getoption("ignore") or config.getoption("ignore_glob"):
        return False
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        return True
    here = config.invocation_params.dir
    return bool(config.args) and all((here / arg).resolve() in (ROOT, ROOT / "tests") for arg in config.args)


@pytest.fixture(scope="session")
def reg_report(pytestconfig: pytest.Config) -> dict[str, list[str]] | None:
    """``{clause: [test ids]}`` of this session's collection if it was the whole suite, else None."""
    if not pytestconfig.stash.get(WHOLE_SUITE, False):
        return None
    return pytestconfig.stash.get(REG_REPORT, None)


@pytest.fixture(scope="session")
def reg_unquoted(pytestconfig: pytest.Config) -> dict[str, list[str]] | None:
    """``{test id: [clauses named in its reg marker that its docstring does not quote]}`` of this
    session's collection if it was the whole suite, else None."""
    if not pytestconfig.stash.get(WHOLE_SUITE, False):
        return None
    return pytestconfig.stash.get(REG_UNQUOTED, None)


def _slow_modules_first(items: list[pytest.Item]) -> None:
    """The modules with the most ``slow`` tests first; a stable sort, so each module keeps its order."""
    slow: Counter[Path] = Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[item.path])


def _docstrings(item: pytest.Item) -> str:
    """The test function's docstring and its class's: where a test states what its clauses say."""
    docs = [getattr(getattr(item, "obj", None), "__doc__", None), getattr(item.cls, "__doc__", None)]
    return "\n".join(doc for doc in docs if doc)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    known = clause_ids()
    texts = clause_texts()
    report: dict[str, list[str]] = {}
    not_quoted: dict[str, list[str]] = {}
    bad = []
    for item in items:
        named = _clauses_of(item)
        for clause in named:
            if clause not in known:
                bad.append(f"{item.nodeid}: reg({clause!r}) is not a clause of docs/regulations/")
            report.setdefault(clause, []).append(item.nodeid)
        if named and not bad:
            missing = unquoted(named, _docstrings(item), texts)
            if missing:
                not_quoted[item.nodeid] = missing
    if bad:
        raise pytest.UsageError("unknown regulation clause in a reg marker:\n" + "\n".join(bad))
    config.stash[REG_REPORT] = report
    config.stash[REG_UNQUOTED] = not_quoted
    config.stash[WHOLE_SUITE] = _whole_suite(config)
    for option, data in (("--reg-report", report), ("--reg-unquoted", not_quoted)):
        path = config.getoption(option)
        if path:
            Path(path).write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    _slow_modules_first(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (every test module, item and fixture definition: about a million
    objects in a worker) lives as long as the worker: kept out of the cyclic collector's full
    passes, as ``shoectl run`` keeps what its start-up built (``gc.freeze``)."""
    gc.freeze()

