"""The shuffle audit: every randomness test over the same shoes, and one verdict.

``audit_orders(orders, *, confidence=0.99, pre_orders=None, seed=0, tests=None) -> AuditResult``

- ``orders``: complete card orders, one per shoe (``orders.py``), all with the same deck count.
- ``confidence``: 0 < confidence < 1 (the CLI offers 0.95 and 0.99); alpha = 1 - confidence.
- ``pre_orders``: the pre-shuffle order (one for all shoes, or one per shoe with ``None`` for
  unknown). Without it the adjacency and rising-sequence tests are not run.
- ``seed``: the runs test's tie-breaking seed (the result is reproducible for a given seed).
- ``tests``: names to run (default: all that apply): ``positional``, ``position_max``, ``adjacency``,
  ``rising_sequences``, ``runs``, ``serial_correlation``.

Each test passes on its own when its p-value is at least alpha. The overall verdict accounts for
running several tests on the same shoes with the Holm-Bonferroni step-down method: the audit fails
when any test is rejected at family-wise level alpha (adjusted p-value <= alpha). With m tests the
smallest p-value must be below alpha/m, the next below alpha/(m-1), and so on. So a good shuffler
fails a whole audit with probability at most alpha (about alpha when the tests are nearly
independent, as here). A test that no shoes could make reject at alpha with this many (its
``smallest_p`` at alpha or above: ``positional`` with one shoe, ``position_max`` with a few) tests
nothing: it is left out of Holm's count, shown as no test, and never rejected.

Raises ``ValueError`` for bad orders or arguments (naming the problem).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .randomness import (
    Order,
    TestResult,
    adjacency_test,
    position_max_test,
    positional_test,
    rising_sequences_test,
    runs_test,
    serial_correlation_test,
    validate_orders,
)
from .stats import holm

__all__ = ["ALL_TESTS", "AuditResult", "MULTIPLE_TESTING_METHOD", "audit_orders"]

ALL_TESTS = ("positional", "position_max", "adjacency", "rising_sequences", "runs", "serial_correlation")
NEEDS_PRE_ORDER = frozenset({"adjacency", "rising_sequences"})
MULTIPLE_TESTING_METHOD = "Holm-Bonferroni"


def alpha_of(confidence: float) -> float:
    """The family-wise error rate of a ``confidence`` (0.99: 0.01), rounded past float noise."""
    return round(1.0 - confidence, 12)


@dataclass(frozen=True)
class AuditResult:
    """The tests' results with Holm-adjusted p-values; ``passed`` is the overall verdict."""

    confidence: float
    tests: tuple[TestResult, ...]
    adjusted: tuple[float, ...]
    rejected: tuple[bool, ...]
    shoes: int
    decks: int

    @property
    def alpha(self) -> float:
        return alpha_of(self.confidence)

    @property
    def passed(self) -> bool:
        return not any(self.rejected)

    def testable(self, t: TestResult) -> bool:
        """Whether ``t`` could reject anything at this audit's alpha with these shoes."""
        return t.can_reject(self.alpha)

    def to_json(self) -> dict[str, Any]:
        tests = []
        for t, adj, rej in zip(self.tests, self.adjusted, self.rejected):
            doc = t.to_json()
            doc.update(p_adjusted=adj, passed=t.p_value >= self.alpha, rejected=rej, testable=self.testable(t))
            tests.append(doc)
        return {"verdict": "pass" if self.passed else "fail", "confidence": self.confidence, "alpha": self.alpha,
                "multiple_testing": MULTIPLE_TESTING_METHOD, "shoes": self.shoes, "decks": self.decks, "tests": tests}


def audit_orders(orders: Sequence[Order], *, confidence: float = 0.99,
                 pre_orders: Order | Sequence[Order | None] | None = None, seed: int = 0,
                 tests: Sequence[str] | None = None) -> AuditResult:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence!r}")
    decks = validate_orders(orders)
    wanted = list(ALL_TESTS if tests is None else tests)
    unknown = [t for t in wanted if t not in ALL_TESTS]
    if unknown:
        raise ValueError(f"unknown test {unknown[0]!r} (known: {', '.join(ALL_TESTS)})")
    has_pre = pre_orders is not None and (len(pre_orders) == 0 or isinstance(pre_orders[0], int)
                                          or any(p is not None for p in pre_orders))
    if not has_pre:
        if tests is not None and NEEDS_PRE_ORDER & set(wanted):
            raise ValueError("the adjacency and rising-sequence tests need a pre-shuffle order")
        wanted = [t for t in wanted if t not in NEEDS_PRE_ORDER]
    if not wanted:
        raise ValueError("no test to run")
    runners: dict[str, Callable[[], TestResult]] = {
        "positional": lambda: positional_test(orders),
        "position_max": lambda: position_max_test(orders),
        "adjacency": lambda: adjacency_test(orders, pre_orders),
        "rising_sequences": lambda: rising_sequences_test(orders, pre_orders),
        "runs": lambda: runs_test(orders, seed=seed),
        "serial_correlation": lambda: serial_correlation_test(orders),
    }
    results = tuple(runners[name]() for name in wanted)
    alpha = alpha_of(confidence)
    real = [i for i, r in enumerate(results) if r.can_reject(alpha)]
    adjusted, rejected = [1.0] * len(results), [False] * len(results)
    if real:
        for i, adj, rej in zip(real, *holm([results[i].p_value for i in real], alpha)):
            adjusted[i], rejected[i] = adj, rej
    return AuditResult(confidence, results, tuple(adjusted), tuple(rejected), len(orders), decks)
