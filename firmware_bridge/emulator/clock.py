"""Clocks for the emulator: device models read time only through an injected clock.

A clock is any zero-argument callable returning seconds as a float that never goes backwards
(``time.monotonic`` in production). ``ManualClock`` is the test clock: it moves only when told, so
tests of shuffle times, dealer delays and host-loss timeouts run without sleeping.
"""
from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["IDLE_WAIT_S", "Clock", "ManualClock", "monotonic", "tick_period", "tick_wait"]

Clock = Callable[[], float]
monotonic: Clock = time.monotonic


IDLE_WAIT_S = 1.0  # the longest a pump sleeps between two ticks of a device with nothing due


def tick_period(speed: float) -> float:
    """How often a server or loopback ticks a device whose mechanisms run ``speed`` times real
    time while it waits on a condition rather than a time (``tick_wait``): every 20 ms at real
    time (nothing a device does is finer), more often as they run faster, every 2 ms at ``max``."""
    return min(0.02, max(0.002, 0.02 / speed))


def tick_wait(due: float | None, now: float, poll_s: float, *, frame_due: float | None = None,
              on_the_clock: bool = False) -> float:
    """How long a pump (a server's thread, a waiting loopback or USB read) may sleep, unless bytes
    or an event wake it, before it ticks a device whose ``next_due`` is ``due``: until then, at
    most ``IDLE_WAIT_S``; ``poll_s`` when ``due`` is past (the device waits on a condition: a
    prompt for a stack still on its way), or when the line is unplugged and replugged on the
    clock (``on_the_clock``: the fault unplug-every); never past ``frame_due``, when the first
    frame the line's delay holds back is due. An idle device is so ticked about once a second
    instead of fifty times."""
    if on_the_clock or (due is not None and due <= now):
        wait = poll_s
    else:
        wait = IDLE_WAIT_S if due is None else min(due - now, IDLE_WAIT_S)
    return wait if frame_due is None else max(0.0, min(wait, frame_due - now))


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
