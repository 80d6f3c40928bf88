"""Clocks for the emulator: device models read time only through an injected clock.

A clock is any zero-argument callable returning seconds as a float that never goes backwards
(``time.monotonic`` in production). ``ManualClock`` is the test clock: it moves only when told, so
tests of shuffle times, dealer delays and host-loss timeouts run without sleeping.
"""
from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock", "ManualClock", "monotonic", "tick_period"]

Clock = Callable[[], float]
monotonic: Clock = time.monotonic


def tick_period(speed: float) -> float:
    """How often a waiting server or loopback ticks a device whose mechanisms run ``speed`` times
    real time: every 20 ms at real time (nothing a device does is finer, and an idle table then
    costs next to no CPU), more often as they run faster, every 2 ms at ``max``."""
    return min(0.02, max(0.002, 0.02 / speed))


class ManualClock:
    """A clock that starts at ``start`` seconds and advances only by ``advance()`` / ``set()``."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` (>= 0); return the new time."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        self._now += seconds
        return self._now

    def set(self, now: float) -> None:
        """Jump to ``now`` (not earlier than the current time)."""
        if now < self._now:
            raise ValueError("a clock does not go backwards")
        self._now = float(now)
