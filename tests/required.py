"""Tools the tests need from the machine: ``require_command(name)``, and ``missing_tool(message)``
for a tool found some other way than on PATH (e.g. PostgreSQL's binaries)."""
from __future__ import annotations

from typing import NoReturn

import pytest


def require_command(name: str, why: str = "") -> str:
    """The path of the program ``name``; without it the test is skipped — except in CI
    (``CI=true``), where a missing tool the tests need is a failure, never a skip (.ci/run installs
    them)."""
    import shutil

    path = shutil.which(name)
    if path is None:
        missing_tool(f"{name} is not installed{': ' + why if why else ''}")
    return path


def missing_tool(message: str) -> NoReturn:
    """Skip the test saying ``message`` — or, in CI (``CI=true``), fail it."""
    import os

    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI must install it: .ci/run)")
    pytest.skip(message)
