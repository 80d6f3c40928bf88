"""The counting unit of the exact odds: ordered six-card sequences (pure; no I/O).

Contract:
- ``ROUND_CARDS`` (6) is the most cards a round uses in every supported game, so every figure of
  ``controller.rules.odds`` counts ordered sequences of that many cards; a round that uses fewer
  leaves the trailing cards free.
- ``falling(n, k)`` is the number of ordered ways to draw ``k`` cards from ``n``: the falling
  factorial ``n (n-1) ... (n-k+1)``, 0 when ``n < k`` (1 when ``k == 0``).
"""
from __future__ import annotations

__all__ = ["ROUND_CARDS", "falling"]

ROUND_CARDS = 6  # the most cards a round uses in every supported game (4 + two more)


def falling(n: int, k: int) -> int:
    """``n (n-1) ... (n-k+1)``: ordered ways to draw ``k`` cards from ``n`` (0 when ``n < k``)."""
    if n < k:
        return 0
    out = 1
    for i in range(k):
        out *= n - i
    return out
