"""Tools the tests need from the machine: ``require_command(name)``."""
from __future__ import annotations

import pytest


def require_command(name: str, why: str = "") -> str:
    """The path of the program ``name``; without it the test is skipped — except in CI
    (``CI=true``), where a missing tool the tests need is a failure, never a skip (.ci/run installs
    them)."""
    import os
    import shutil

    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed{': ' + why if why else ''}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI must install it: .ci/run)")
        pytest.skip(message)
    return path
