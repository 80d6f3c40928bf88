"""The randomness tests of the shuffle audit, over complete card orders of many shoes.

Every test takes ``orders`` (a sequence of complete orders, ``orders.py``: one list of card codes
per shoe, top of the stack first, all of the same ``decks``) and returns a ``TestResult``. The
null hypothesis of every test: each order is an independent, uniformly random arrangement of the
complete multiset. Null means and variances are exact (``moments.py``); the p-value comes from the
approximation named in ``TestResult.method``. Bad input (an incomplete order, mixed deck counts,
no orders) raises ``ValueError`` naming the shoe.

Tests (k = 52 codes, M = 52 x decks places, S shoes):

- ``positional_test``: where each card lands. Pearson X^2 of the k x M table "code c at place p,
  counted over the shoes" against k equal cells per place; nominal df = M (k - 1). The table is
  sparse unless S is large, so the p-value comes from the collision count Y (the pairs of shoes
  holding the same code at the same place; X^2 = 2k/S Y + M (k - S)) through the count law
  matched to Y's exact null mean and variance (``stats.count_sf``: binomial-type, as Y sums
  many nearly independent rare coincidences). One-sided: too much agreement between shoes (a
  stuck slot, a weak mix). One shoe alone cannot be tested (X^2 is then fixed): p = 1.
- ``position_max_test``: the most shoes that hold one card at one place (a stuck slot puts the
  same card at its place in every shoe). p = min(1, M k P(Binomial(S, 1/k) >= max)), a
  Bonferroni bound over places and codes: valid under any dependence, nearly exact in the tail.
  One-sided. It complements the chi-square, which spreads a single stuck card over M (k - 1)
  degrees of freedom.
- ``adjacency_test(orders, pre_orders)``: how many neighbouring pairs of the pre-shuffle order
  (as ordered pairs of codes) are still neighbours, summed over shoes; one-
  sided (too many kept); p from the count law matched to the exact null mean and variance.
- ``rising_sequences_test(orders, pre_orders)``: the number of rising sequences of each order
  relative to its pre-shuffle order (Bayer-Diaconis: k riffles leave at most 2^k), copies of a
  code matched in order; normal, one-sided (too few).
- ``runs_test``: runs up and down of the card codes (rank, then suit C D H S), ties between
  copies of one card broken by a seeded random order so that the null distribution is exactly
  that of distinct values; normal, two-sided.
- ``serial_correlation_test``: the circular lag-1 sum of card ranks (1-13) per shoe, summed over
  shoes (Wald-Wolfowitz); normal, two-sided. ``detail["r"]`` is the mean lag-1 correlation.

``pre_orders`` is one complete order for every shoe or one per shoe (``None`` for a shoe whose
pre-shuffle order is unknown: it is left out of that test). The pre-shuffle order must be known or
stated: any fixed order gives a valid test (under the null the shuffled order does not depend on
it), but the test only has power when the stated order is the real one.
"""
from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .moments import adjacency_moments, positional_moments, rising_moments, runs_moments, serial_moments
from .orders import CARDS_PER_DECK, check_complete, rank_of
from .stats import betainc, count_sf, normal_cdf, normal_sf

__all__ = ["TestResult", "adjacency_test", "kept_adjacencies", "position_max_test", "positional_test", "rising_sequences", "rising_sequences_test",
           "runs_test", "runs_up_down", "serial_correlation_test", "validate_orders"]

K = CARDS_PER_DECK
Order = Sequence[int]


@dataclass(frozen=True)
class TestResult:
    """One test's outcome. ``df`` is None for a normal (z) test; ``expected`` is the statistic's
    null mean (None where it has none in closed form: ``position_max``'s); ``alternative`` is
    "greater", "less" or "two-sided"."""

    __test__ = False  # not a pytest test class

    name: str
    statistic: float
    df: float | None
    expected: float | None
    p_value: float
    alternative: str
    method: str
    shoes: int
    detail: dict[str, Any] = field(default_factory=dict)
    smallest_p: float = 0.0  # the least p-value any shoes could give it: at alpha or above, it tests nothing

    def can_reject(self, alpha: float) -> bool:
        """Whether any shoes could make this test reject at ``alpha`` (else it tests nothing)."""
        return self.smallest_p < alpha

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def validate_orders(orders: Sequence[Order]) -> int:
    """The common deck count of ``orders``; ``ValueError`` if empty, mixed or incomplete."""
    if not orders:
        raise ValueError("no card orders to test")
    first = len(orders[0])
    if first == 0 or first % K:
        raise ValueError(f"shoe 1: {first} cards is not a whole number of decks")
    decks = first // K
    for i, order in enumerate(orders):
        check_complete(order, decks, what=f"shoe {i + 1}")
    return decks


def _pre_for(pre_orders: Order | Sequence[Order | None] | None, shoes: int, decks: int) -> list[Order | None]:
    if pre_orders is None:
        return [None] * shoes
    if len(pre_orders) > 0 and isinstance(pre_orders[0], int):
        single = list(pre_orders)  # type: ignore[arg-type]
        check_complete(single, decks, what="pre-shuffle order")
        return [single] * shoes
    out = list(pre_orders)  # type: ignore[arg-type]
    if len(out) != shoes:
        raise ValueError(f"{len(out)} pre-shuffle orders for {shoes} shoes")
    for i, pre in enumerate(out):
        if pre is not None:
            check_complete(pre, decks, what=f"pre-shuffle order of shoe {i + 1}")
    return out


# --- positional ----------------------------------------------------------------------------------

def _place_counts(orders: Sequence[Order], m: int) -> list[int]:
    """``counts[p * k + c]``: the shoes holding code c at place p."""
    counts = [0] * (m * K)
    for order in orders:
        base = 0
        for c in order:
            counts[base + c] += 1
            base += K
    return counts


def positional_test(orders: Sequence[Order]) -> TestResult:
    decks = validate_orders(orders)
    m, s = decks * K, len(orders)
    counts = _place_counts(orders, m)
    collisions = sum(n * (n - 1) // 2 for n in counts if n > 1)
    chi2 = 2 * K / s * collisions + m * (K - s)
    mean_y, var_y = positional_moments(m, s, decks)
    df = m * (K - 1)
    if var_y > 0:
        p = count_sf(collisions, mean_y, var_y)
        method = "Pearson X2; p from the collision count's exact null mean and variance (binomial-type count law)"
    else:  # one shoe: X2 is fixed by the composition, nothing to test
        p = 1.0
        method = "one shoe: the positional table is fixed by the composition (no test)"
    return TestResult("positional", chi2, float(df), float(df), p, "greater", method, s,
                      {"collisions": collisions, "collisions_expected": mean_y, "collisions_sd": math.sqrt(var_y)},
                      smallest_p=0.0 if var_y > 0 else 1.0)


def position_max_test(orders: Sequence[Order]) -> TestResult:
    decks = validate_orders(orders)
    m, s = decks * K, len(orders)
    counts = _place_counts(orders, m)
    top = max(counts)
    where = counts.index(top)
    place, c = divmod(where, K)
    # The null mean of a maximum over M x 52 cells has no closed form; S/52, one cell's mean, read
    # as it, made a uniform shoe's maximum look 13 times too high (a lab's review): none is given.
    expected = None
    if s < 2:
        p = 1.0
    else:
        p = min(1.0, m * K * betainc(top, s - top + 1, 1.0 / K))  # P(Binomial(s, 1/k) >= top)
    # every shoe with one card at one place is the most these shoes can say: M k (1/k)^S (a lab's
    # review: with up to 3 shoes of 8 decks it can reject nothing, at 95 % as at 99 %)
    smallest = 1.0 if s < 2 else min(1.0, m * K * (1.0 / K) ** s)
    return TestResult("position_max", float(top), None, expected, p, "greater",
                      "largest count of one card at one place; Bonferroni bound over places and cards (binomial tail)",
                      s, {"place": place + 1, "card_code": c, "shoes": s}, smallest_p=smallest)


# --- adjacency -----------------------------------------------------------------------------------

def _adjacent_pairs(pre: Order) -> bytearray:
    flags = bytearray(K * K)
    for i in range(len(pre) - 1):
        flags[pre[i] * K + pre[i + 1]] = 1
    return flags


def kept_adjacencies(order: Order, pre: Order) -> int:
    """Places j where (order[j], order[j+1]) is a neighbouring pair of ``pre``."""
    flags = _adjacent_pairs(pre)
    return sum(flags[order[j] * K + order[j + 1]] for j in range(len(order) - 1))


def adjacency_test(orders: Sequence[Order], pre_orders: Order | Sequence[Order | None] | None) -> TestResult:
    decks = validate_orders(orders)
    pres = _pre_for(pre_orders, len(orders), decks)
    kept = 0
    mean = var = 0.0
    used = 0
    flag_cache: dict[int, bytearray] = {}
    for order, pre in zip(orders, pres):
        if pre is None:
            continue
        flags = flag_cache.get(id(pre))
        if flags is None:
            flags = flag_cache[id(pre)] = _adjacent_pairs(pre)
        kept += sum(flags[order[j] * K + order[j + 1]] for j in range(len(order) - 1))
        mu, v = adjacency_moments(pre, decks)
        mean += mu
        var += v
        used += 1
    if not used:
        raise ValueError("no shoe has a known pre-shuffle order")
    p = count_sf(kept, mean, var)
    z = (kept - mean) / math.sqrt(var)
    return TestResult("adjacency", float(kept), None, mean, p, "greater",
                      "count of kept neighbouring pairs; p from its exact null mean and variance (binomial-type count law)",
                      used, {"z": z, "sd": math.sqrt(var)})


# --- rising sequences ----------------------------------------------------------------------------

def rising_sequences(order: Order, pre: Order) -> int:
    """Rising sequences of ``order`` relative to ``pre``: 1 + the number of labels t of ``pre``
    whose successor t+1 lies before t in ``order`` (the r-th copy of a code in ``pre`` is the r-th
    copy met in ``order``)."""
    places: dict[int, list[int]] = {}
    for pos, c in enumerate(order):
        places.setdefault(c, []).append(pos)
    seen: dict[int, int] = {}
    where = []
    for c in pre:
        r = seen.get(c, 0)
        where.append(places[c][r])
        seen[c] = r + 1
    return 1 + sum(1 for t in range(len(where) - 1) if where[t + 1] < where[t])


def rising_sequences_test(orders: Sequence[Order], pre_orders: Order | Sequence[Order | None] | None) -> TestResult:
    decks = validate_orders(orders)
    pres = _pre_for(pre_orders, len(orders), decks)
    total = 0
    mean = var = 0.0
    used = 0
    for order, pre in zip(orders, pres):
        if pre is None:
            continue
        total += rising_sequences(order, pre)
        mu, v = rising_moments(pre, decks)
        mean += mu
        var += v
        used += 1
    if not used:
        raise ValueError("no shoe has a known pre-shuffle order")
    z = (total + 0.5 - mean) / math.sqrt(var)
    return TestResult("rising_sequences", float(total), None, mean, normal_cdf(z), "less",
                      "sum of rising sequences, normal with exact null mean and variance (continuity-corrected)",
                      used, {"z": z, "sd": math.sqrt(var), "per_shoe": total / used})


# --- runs up and down ----------------------------------------------------------------------------

def runs_up_down(values: Sequence[float]) -> int:
    """The number of maximal monotone runs of distinct ``values``."""
    if len(values) < 2:
        return len(values)
    runs = 1
    up = values[1] > values[0]
    for i in range(1, len(values) - 1):
        now = values[i + 1] > values[i]
        if now != up:
            runs += 1
            up = now
    return runs


def runs_test(orders: Sequence[Order], *, seed: int = 0) -> TestResult:
    validate_orders(orders)
    rng = random.Random(seed)
    total = 0
    mean = var = 0.0
    for order in orders:
        rand = rng.random
        total += runs_up_down([c + rand() for c in order])
        mu, v = runs_moments(len(order))
        mean += mu
        var += v
    z = (total - mean) / math.sqrt(var)
    return TestResult("runs", float(total), None, mean, min(1.0, 2 * normal_sf(abs(z))), "two-sided",
                      "runs up and down of card codes (copies ordered at random, seeded), normal with exact null moments",
                      len(orders), {"z": z, "sd": math.sqrt(var), "seed": seed})


# --- serial correlation --------------------------------------------------------------------------

def serial_correlation_test(orders: Sequence[Order]) -> TestResult:
    decks = validate_orders(orders)
    ranks = [rank_of(c) for c in range(K)] * decks  # every complete order holds these values
    n = len(ranks)
    mu, v = serial_moments(ranks)
    xbar = sum(ranks) / n
    ss = sum((x - xbar) ** 2 for x in ranks)
    total = 0
    for order in orders:
        x = [rank_of(c) for c in order]
        total += sum(x[i] * x[i - 1] for i in range(n))  # circular: x[-1] pairs with x[0]
    s = len(orders)
    mean, var = mu * s, v * s
    r = (total / (s * n) - xbar * xbar) / (ss / n)
    z = (total - mean) / math.sqrt(var)
    return TestResult("serial_correlation", float(total), None, mean, min(1.0, 2 * normal_sf(abs(z))), "two-sided",
                      "circular lag-1 sum of card ranks, normal with exact permutation moments (Wald-Wolfowitz)",
                      s, {"z": z, "sd": math.sqrt(var), "r": r})
