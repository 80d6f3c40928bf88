"""Exact null means and variances of the audit's statistics under a uniform shuffle.

The null hypothesis: the stack that reached the shoe is a uniformly random arrangement of the
complete ``decks``-deck multiset (every one of the 52 codes ``decks`` times). All functions are
pure and exact (integer arithmetic, converted to float at the end); inputs must be complete orders
(``orders.check_complete``), else the figures are meaningless.

- ``positional_moments(positions, shoes, decks, codes=52)`` -> ``(mean, var)`` of the collision count ``Y``:
  the number of (pair of shoes, position) where both shoes hold the same code. Pearson's X^2 of the
  codes x positions table is ``2k/S * Y + M (k - S)`` (k = 52 codes, M positions, S shoes).
- ``adjacency_moments(pre_order, decks)`` -> ``(mean, var)`` of the number of places j where
  ``(w[j], w[j+1])`` is an ordered pair of codes adjacent somewhere in ``pre_order``.
- ``rising_moments(pre_order, decks)`` -> ``(mean, var)`` of the number of rising sequences of
  the arrangement relative to ``pre_order``, copies of a code matched in order (the r-th copy of a
  code in the pre-shuffle order is the r-th copy met in the shuffled order; ``rising.py``).
- ``runs_moments(n)``: runs up and down of n distinct values: ``((2n-1)/3, (16n-29)/90)``.
- ``serial_moments(values)``: the circular lag-1 sum ``sum x[i] x[i+1 mod n]`` over a random
  permutation of ``values`` (Wald and Wolfowitz, 1943).

Results that depend only on the pre-shuffle order are cached (bounded LRU caches).
"""
from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from math import comb, factorial

from .orders import CARDS_PER_DECK

__all__ = ["adjacency_moments", "positional_moments", "rising_moments", "runs_moments", "serial_moments"]

K = CARDS_PER_DECK


# --- positional ----------------------------------------------------------------------------------

def positional_moments(positions: int, shoes: int, decks: int, codes: int = K) -> tuple[float, float]:
    """Mean and variance of the collision count over ``positions`` places of ``shoes`` shoes, each
    a uniform arrangement of ``codes`` codes x ``decks`` copies (``codes`` is 52 but for tests)."""
    k, n, m, s = codes, decks, decks * codes, shoes
    pairs = comb(s, 2)
    mean = Fraction(positions * pairs, k)
    # Var(Y_p): C(S,2) pair indicators, each Bernoulli(1/k), pairwise uncorrelated.
    var = positions * pairs * Fraction(k - 1, k * k)
    # Cov(Y_p, Y_q), p != q: only the same pair of shoes at both places is correlated (within a shoe
    # the two places are drawn without replacement).
    both = Fraction(k * (n * (n - 1)) ** 2 + k * (k - 1) * n ** 4, (m * (m - 1)) ** 2)
    var += positions * (positions - 1) * pairs * (both - Fraction(1, k * k))
    return float(mean), float(var)


# --- adjacency -----------------------------------------------------------------------------------

def _falling(codes: Sequence[int], n: int) -> int:
    """Ways to place the given codes at distinct fixed places when each code has n copies."""
    seen: dict[int, int] = {}
    out = 1
    for c in codes:
        k = seen.get(c, 0)
        out *= n - k
        seen[c] = k + 1
    return out


@lru_cache(maxsize=64)
def _adjacency_moments(pre: tuple[int, ...], n: int) -> tuple[float, float]:
    m = len(pre)
    pairs = sorted({(pre[i], pre[i + 1]) for i in range(m - 1)})
    if m < 4 or not pairs:
        raise ValueError("adjacency needs a stack of at least 4 cards")
    touching: dict[int, list[int]] = {}
    for idx, (a, b) in enumerate(pairs):
        touching.setdefault(a, []).append(idx)
        if b != a:
            touching.setdefault(b, []).append(idx)
    succ: dict[int, list[int]] = {}
    for a, b in pairs:
        succ.setdefault(a, []).append(b)
    h = [_falling((a, b), n) for a, b in pairs]
    total_h = sum(h)
    m2, m3, m4 = m * (m - 1), m * (m - 1) * (m - 2), m * (m - 1) * (m - 2) * (m - 3)
    p1 = Fraction(total_h, m2)
    p2 = Fraction(sum(_falling((a, b, c), n) for a, b in pairs for c in succ.get(b, ())), m3)
    joint = 0
    for idx, (a, b) in enumerate(pairs):
        near = set(touching[a]) | set(touching.get(b, ()))
        near_h = 0
        for jdx in near:
            c, d = pairs[jdx]
            joint += _falling((a, b, c, d), n)
            near_h += h[jdx]
        joint += h[idx] * (total_h - near_h)
    p3 = Fraction(joint, m4)
    places = m - 1
    overlapping = m - 2
    disjoint = comb(places, 2) - overlapping
    mean = places * p1
    var = places * p1 * (1 - p1) + 2 * overlapping * (p2 - p1 * p1) + 2 * disjoint * (p3 - p1 * p1)
    return float(mean), float(var)


def adjacency_moments(pre_order: Sequence[int], decks: int) -> tuple[float, float]:
    """Mean and variance of the kept-adjacency count against ``pre_order`` (a complete order)."""
    return _adjacency_moments(tuple(pre_order), decks)


# --- rising sequences ----------------------------------------------------------------------------

def _occurrences(pre: Sequence[int]) -> list[int]:
    seen: dict[int, int] = {}
    occ = []
    for c in pre:
        seen[c] = seen.get(c, 0) + 1
        occ.append(seen[c])
    return occ


@lru_cache(maxsize=16)
def _pair_tables(n: int) -> tuple[list[list[float]], list[list[list[list[float]]]]]:
    """For two codes x, y with n copies each: ``single[k][i]`` = P(i copies of y before the k-th
    x); ``pair[k1][k2][i][j]`` = P(i y's before the k1-th x and j before the k2-th x), k1 <= k2."""
    total = comb(2 * n, n)
    single = [[0.0] * (n + 1) for _ in range(n + 1)]
    for k in range(1, n + 1):
        for i in range(n + 1):
            single[k][i] = comb(i + k - 1, i) * comb(n - i + n - k, n - i) / total
    pair = [[[[0.0] * (n + 1) for _ in range(n + 1)] for _ in range(n + 1)] for _ in range(n + 1)]
    for k1 in range(1, n + 1):
        for i in range(n + 1):
            pair[k1][k1][i][i] = single[k1][i]
        for k2 in range(k1 + 1, n + 1):
            for i in range(n + 1):
                for j in range(i, n + 1):
                    ways = comb(i + k1 - 1, i) * comb(j - i + k2 - k1 - 1, j - i) * comb(n - j + n - k2, n - j)
                    pair[k1][k2][i][j] = ways / total
    return single, pair


@lru_cache(maxsize=8192)
def _words(p: int, q: int, r: int) -> int:
    """Arrangements of p x's, q y's and r z's."""
    return factorial(p + q + r) // (factorial(p) * factorial(q) * factorial(r))


@lru_cache(maxsize=16)
def _triple_tables(n: int) -> list[list[list[list[float]]]]:
    """For codes x, y, z with n copies each: ``cum[k][m]`` is the 2-D cumulative table of
    P(Y_k = i, Z_m = j), Y_k = y's before the k-th x and Z_m = z's before the m-th x (k <= m),
    as ``cum[k][m][i + 1][j + 1] = P(Y_k <= i, Z_m <= j)``."""
    total = _words(n, n, n)
    cum: list[list[list[list[float]]]] = [[[] for _ in range(n + 1)] for _ in range(n + 1)]
    for k in range(1, n + 1):
        for m in range(k, n + 1):
            pmf = [[0] * (n + 1) for _ in range(n + 1)]
            for i in range(n + 1):
                for j in range(n + 1):
                    if k == m:
                        ways = _words(k - 1, i, j) * _words(n - k, n - i, n - j)
                    else:
                        ways = 0
                        for j1 in range(j + 1):
                            head = _words(k - 1, i, j1)
                            for i2 in range(n - i + 1):
                                ways += head * _words(m - k - 1, i2, j - j1) * _words(n - m, n - i - i2, n - j)
                    pmf[i][j] = ways
            table = [[0.0] * (n + 2) for _ in range(n + 2)]
            for i in range(n + 1):
                run = 0
                for j in range(n + 1):
                    run += pmf[i][j]
                    table[i + 1][j + 1] = table[i][j + 1] + run / total
            cum[k][m] = table
    return cum


def _rect(table: list[list[float]], lo1: int, hi1: int, lo2: int, hi2: int) -> float:
    return table[hi1 + 1][hi2 + 1] - table[lo1][hi2 + 1] - table[hi1 + 1][lo2] + table[lo1][lo2]


@lru_cache(maxsize=64)
def _rising_moments(pre: tuple[int, ...], n: int) -> tuple[float, float]:
    occ = _occurrences(pre)
    single, pair = _pair_tables(n)
    cum = _triple_tables(n)
    # Indicator t: the label after t comes first (a descent of the inverse). Label t is copy r of
    # code a, label t+1 copy s of code b (a != b): D = [copy s of b before copy r of a]
    # = [fewer than r a's before the s-th b] = [at least s b's before the r-th a].
    inds: list[tuple[int, int, int, int, float]] = []
    for t in range(len(pre) - 1):
        a, b = pre[t], pre[t + 1]
        if a == b:
            continue  # copies of one code keep their order under the matching: never a descent
        r, s = occ[t], occ[t + 1]
        p = sum(single[s][:r])
        inds.append((a, r, b, s, p))

    def interval(ind: tuple[int, int, int, int, float], x: int) -> tuple[int, int, int, int]:
        """(other code, k, lo, hi): the indicator as [lo <= #other before the k-th x <= hi]."""
        a, r, b, s, _ = ind
        if x == b:
            return a, s, 0, r - 1
        return b, r, s, n

    by_code: dict[int, list[int]] = {}
    for idx, (a, _, b, _, _) in enumerate(inds):
        by_code.setdefault(a, []).append(idx)
        by_code.setdefault(b, []).append(idx)
    mean = 1.0 + sum(ind[4] for ind in inds)
    var = sum(ind[4] * (1.0 - ind[4]) for ind in inds)
    cov = 0.0
    for x, members in by_code.items():
        for u in range(len(members)):
            iu = inds[members[u]]
            yu, ku, lo_u, hi_u = interval(iu, x)
            for v in range(u + 1, len(members)):
                iv = inds[members[v]]
                yv, kv, lo_v, hi_v = interval(iv, x)
                if yu == yv:
                    if x > yu:
                        continue  # the same two codes: counted once, from the smaller code
                    (k1, l1, h1), (k2, l2, h2) = sorted(((ku, lo_u, hi_u), (kv, lo_v, hi_v)))
                    table = pair[k1][k2]
                    both = sum(table[i][j] for i in range(l1, h1 + 1) for j in range(max(i, l2), h2 + 1))
                else:
                    if ku <= kv:
                        both = _rect(cum[ku][kv], lo_u, hi_u, lo_v, hi_v)
                    else:
                        both = _rect(cum[kv][ku], lo_v, hi_v, lo_u, hi_u)
                cov += both - iu[4] * iv[4]
    var += 2.0 * cov
    return mean, var


def rising_moments(pre_order: Sequence[int], decks: int) -> tuple[float, float]:
    """Mean and variance of the rising-sequence count against ``pre_order`` (a complete order)."""
    return _rising_moments(tuple(pre_order), decks)


# --- runs up and down, serial correlation --------------------------------------------------------

def runs_moments(n: int) -> tuple[float, float]:
    """Runs up and down in a random permutation of ``n >= 3`` distinct values."""
    if n < 3:
        raise ValueError("runs up and down need at least 3 values")
    return (2 * n - 1) / 3, (16 * n - 29) / 90


def serial_moments(values: Sequence[int]) -> tuple[float, float]:
    """Mean and variance of ``sum x[i] * x[(i+1) % n]`` over random permutations of ``values``."""
    n = len(values)
    if n < 4:
        raise ValueError("serial correlation needs at least 4 values")
    s1 = sum(values)
    s2 = sum(v * v for v in values)
    s3 = sum(v ** 3 for v in values)
    s4 = sum(v ** 4 for v in values)
    mean = Fraction(s1 * s1 - s2, n - 1)
    var = (Fraction(s2 * s2 - s4, n - 1)
           + Fraction(s1 ** 4 - 4 * s1 * s1 * s2 + 4 * s1 * s3 + s2 * s2 - 2 * s4, (n - 1) * (n - 2))
           - mean * mean)
    return float(mean), float(var)
