"""The audit's false-alarm rate for a good (uniform) shuffler, over many independent seeded runs.

What to expect: Holm-Bonferroni keeps the family-wise error rate at or below alpha whatever the
dependence between the tests; with six nearly independent tests it is close to
1 - (1 - alpha/6)^6, a little under alpha, and lower still because two tests are discrete (the
positional collision count and the position maximum can only reject at jumps of their
distribution, so their own rate sits below alpha). Measured with these seeds at alpha 0.05: 0.0355
(2 decks, 5 shoes, 2000 runs) and 0.032 (8 decks, 4 shoes, 500 runs).

Tolerance: with R runs the observed rate has standard error sqrt(alpha (1 - alpha) / R). We accept
alpha / 2 <= rate <= alpha + 3 SE. The upper bound is the guarantee (a calibrated audit exceeds it
about once in 700 seeds); the lower bound catches an audit too conservative to be useful. Each
continuous test's own rate must lie within alpha +- 3 SE; the discrete ones only below the upper
bound. The runs are seeded, so the test is deterministic.
"""
from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from controller.audit.orders import fresh_order
from controller.audit.shuffle_audit import audit_orders

CONTINUOUS = ("adjacency", "rising_sequences", "runs", "serial_correlation")


def false_alarms(decks: int, shoes: int, runs: int, confidence: float, seed: int) -> tuple[float, dict[str, float]]:
    rng = random.Random(seed)
    pre = fresh_order(decks)
    alarms = 0
    per_test: Counter[str] = Counter()
    alpha = 1 - confidence
    for run in range(runs):
        orders = []
        for _ in range(shoes):
            order = list(pre)
            rng.shuffle(order)
            orders.append(order)
        result = audit_orders(orders, confidence=confidence, pre_orders=pre, seed=run)
        alarms += not result.passed
        for t in result.tests:
            per_test[t.name] += t.p_value < alpha
    return alarms / runs, {name: n / runs for name, n in per_test.items()}


def check(rate: float, per_test: dict[str, float], alpha: float, runs: int) -> None:
    se = math.sqrt(alpha * (1 - alpha) / runs)
    assert alpha / 2 <= rate <= alpha + 3 * se, f"audit false-alarm rate {rate:.4f} at alpha {alpha}"
    for name, r in per_test.items():
        assert r <= alpha + 3 * se, f"{name}: {r:.4f}"
        if name in CONTINUOUS:
            assert r >= alpha - 3 * se, f"{name}: {r:.4f}"


@pytest.mark.slow
def test_false_alarm_rate_two_decks_many_runs() -> None:
    rate, per_test = false_alarms(decks=2, shoes=5, runs=2000, confidence=0.95, seed=12345)
    check(rate, per_test, 0.05, 2000)


@pytest.mark.slow
def test_false_alarm_rate_eight_deck_shoes() -> None:
    rate, per_test = false_alarms(decks=8, shoes=4, runs=500, confidence=0.95, seed=777)
    check(rate, per_test, 0.05, 500)
