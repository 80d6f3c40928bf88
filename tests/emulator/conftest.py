"""Fixtures the emulator tests share."""
from __future__ import annotations

import pytest

from firmware_bridge.emulator import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    """A clock the test moves by hand."""
    return ManualClock()
