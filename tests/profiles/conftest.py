"""The device-profile tests see the shipped profiles only, unless a test sets the search path
itself: a profile installed on the machine running them must not change what they load."""
from __future__ import annotations

import pytest

from firmware_bridge.profiles import PROFILE_PATH_ENV


@pytest.fixture(autouse=True)
def _no_site_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROFILE_PATH_ENV, raising=False)
