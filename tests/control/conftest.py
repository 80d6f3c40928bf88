"""Fixtures for the control-socket tests: a real table (``tests.control.running_table``).

``start_table(dir, *extra, manual=False, operators=True, ...)`` -> ``Table``, stopped at the end;
``operators_file`` is made once per session; ``workdir`` is a short directory (``/tmp/shoectl-*``,
or in the temporary directory when its name is as short: a UNIX socket path has at most 107 bytes).
"""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.control.running_table import Table, launch_table, make_operators_file


@pytest.fixture(scope="session")
def operators_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_operators_file(tmp_path_factory.mktemp("operators") / "operators.toml")


@pytest.fixture()
def workdir() -> Iterator[Path]:
    base = tempfile.gettempdir()  # /dev/shm under tests/conftest.py, unless TMPDIR says otherwise
    d = Path(tempfile.mkdtemp(prefix="shoectl-", dir=base if len(base) <= len("/dev/shm") else "/tmp"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture()
def start_table(operators_file: Path) -> Iterator[Any]:
    """``start_table(dir, *extra, manual=False, operators=True, journal="journal.db",
    control="c.sock", wait=True, **popen)`` -> ``Table``; every table started is stopped at the end."""
    started: list[Table] = []

    def start(d: Path, *extra: str, operators: bool = True, **kwargs: Any) -> Table:
        t = launch_table(d, operators_file if operators else None, *extra, **kwargs)
        started.append(t)
        return t

    yield start
    for t in started:
        t.stop()
