"""Fixtures for the control-socket tests: a real table (``tests.control.running_table``).

``start_table(dir, *extra, manual=False, operators=True, ...)`` -> ``Table``, stopped at the end; its
automated dealer acts every ``DEALING_PACE_MS`` unless the test says otherwise (``pace_ms=None``: as
fast as it can);
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


# A table the tests watch deal (its rounds move on while its socket is attacked) needs no more than
# a round every tenth of a second or so; dealing flat out kept a CPU busy for each test's whole length.
DEALING_PACE_MS = 10


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
    control="c.sock", wait=True, pace_ms=DEALING_PACE_MS, **popen)`` -> ``Table``; every table
    started is stopped at the end."""
    started: list[Table] = []

    def start(d: Path, *extra: str, operators: bool = True, pace_ms: int | None = DEALING_PACE_MS, **kwargs: Any) -> Table:
        t = launch_table(d, operators_file if operators else None, *extra, pace_ms=pace_ms, **kwargs)
        started.append(t)
        return t

    yield start
    for t in started:
        t.stop()
