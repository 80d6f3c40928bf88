"""Fixtures for the operators tests: a clock the test moves by hand."""
from __future__ import annotations

import pytest


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
