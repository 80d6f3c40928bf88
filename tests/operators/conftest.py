"""Fixtures for the operators tests: a clock the test moves by hand (the emulator's ``ManualClock``)."""
from __future__ import annotations

import pytest

from firmware_bridge.emulator import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()
