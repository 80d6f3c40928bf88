"""Exponential backoff for reconnects and redelivery."""
from __future__ import annotations

__all__ = ["Backoff"]


class Backoff:
    """Delays ``minimum``, ``minimum * factor``, ... capped at ``maximum`` (seconds).

    ``next()`` returns the delay to wait now and advances; ``reset()`` starts again from
    ``minimum`` (after a success). Deterministic: no jitter (these are local devices, there is no
    thundering herd to spread).
    """

    def __init__(self, minimum: float, maximum: float, factor: float = 2.0) -> None:
        if minimum < 0 or maximum < minimum or factor < 1:
            raise ValueError(f"bad backoff: min {minimum}, max {maximum}, factor {factor}")
        self.minimum = minimum
        self.maximum = maximum
        self.factor = factor
        self._current = minimum

    def next(self) -> float:
        delay = self._current
        self._current = min(self.maximum, max(self._current * self.factor, self.minimum))
        return delay

    def peek(self) -> float:
        return self._current

    def reset(self) -> None:
        self._current = self.minimum
