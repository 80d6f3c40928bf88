"""Distribution functions and multiple-testing corrections, in pure Python (no numpy/scipy).

Contracts (all functions are pure; bad arguments raise ``ValueError``):

- ``gammainc_upper(a, x)``: the regularized upper incomplete gamma function Q(a, x) =
  Gamma(a, x) / Gamma(a), ``a > 0``, ``x >= 0``. Series for x < a + 1 and a continued fraction
  otherwise (Numerical Recipes 6.2), both to about 1e-14 relative; for a > 1e5 the Wilson-Hilferty
  normal approximation (relative error well under 1e-3 there).
- ``chi2_sf(x, df)``: P(X >= x) for X ~ chi-square(df), ``df > 0`` (need not be whole).
- ``normal_sf(z)`` / ``normal_cdf(z)``: standard normal tails via ``math.erfc`` (accurate far out).
- ``gamma_sf_moments(x, mean, var)``: P(X >= x) for X ~ Gamma with that mean and variance (a
  scaled chi-square): the moment-matched approximation used for non-negative, right-skewed
  statistics such as counts; returns ``(p, shape)``.
- ``betainc(a, b, x)``: the regularized incomplete beta function I_x(a, b), ``a, b > 0``,
  ``0 <= x <= 1`` (continued fraction, Numerical Recipes 6.4).
- ``count_sf(k, mean, var)``: P(X >= k) for a count X approximated by the two-parameter law that
  matches its mean and variance: binomial (n = mean^2/(mean - var), real n) when var < mean,
  Poisson when they are equal, negative binomial when var > mean. For sums of many weakly
  dependent rare events (kept adjacencies, coincidences between shoes) this keeps the skewness of
  a count, which a normal or gamma approximation gets wrong when the count is small.
- ``holm(pvalues, alpha)``: Holm-Bonferroni step-down: ``(adjusted, rejected)`` in input order.
  Adjusted p-values are ``max_{j<=i} min(1, (m - j + 1) p_(j))``; a hypothesis is rejected when its
  adjusted p-value is <= alpha. This controls the family-wise error rate at alpha under any
  dependence between the tests.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["betainc", "chi2_sf", "count_sf", "gamma_sf_moments", "gammainc_upper", "holm", "normal_cdf", "normal_sf"]

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 100_000
_WH_SHAPE = 1e5


def normal_sf(z: float) -> float:
    """P(Z >= z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def normal_cdf(z: float) -> float:
    """P(Z <= z) for a standard normal Z."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def gammainc_upper(a: float, x: float) -> float:
    """Regularized upper incomplete gamma Q(a, x)."""
    if not (a > 0) or math.isinf(a):
        raise ValueError(f"gammainc_upper: a must be positive and finite, got {a!r}")
    if x != x or x < 0:
        raise ValueError(f"gammainc_upper: x must be >= 0, got {x!r}")
    if x == 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    if a > _WH_SHAPE:
        return _wilson_hilferty_sf(a, x)
    if x < a + 1.0:
        return max(0.0, 1.0 - _lower_series(a, x))
    return _upper_continued_fraction(a, x)


def _log_prefactor(a: float, x: float) -> float:
    return -x + a * math.log(x) - math.lgamma(a)


def _lower_series(a: float, x: float) -> float:
    """P(a, x) by its series; converges for any x, quickly when x < a + 1."""
    term = 1.0 / a
    total = term
    ap = a
    for _ in range(_MAX_ITER):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(_log_prefactor(a, x))


def _upper_continued_fraction(a: float, x: float) -> float:
    """Q(a, x) by the Legendre continued fraction (modified Lentz), for x >= a + 1."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(_log_prefactor(a, x)) * h


def _wilson_hilferty_sf(a: float, x: float) -> float:
    """Q(a, x) for large a: (x/a)^(1/3) is nearly normal with mean 1 - 1/(9a), variance 1/(9a)."""
    z = ((x / a) ** (1.0 / 3.0) - (1.0 - 1.0 / (9.0 * a))) / math.sqrt(1.0 / (9.0 * a))
    return normal_sf(z)


def chi2_sf(x: float, df: float) -> float:
    """P(X >= x), X ~ chi-square with ``df`` degrees of freedom."""
    if not (df > 0):
        raise ValueError(f"chi2_sf: df must be positive, got {df!r}")
    if x <= 0:
        return 1.0
    return gammainc_upper(df / 2.0, x / 2.0)


def gamma_sf_moments(x: float, mean: float, var: float) -> tuple[float, float]:
    """P(X >= x) for X ~ Gamma(shape = mean^2/var, scale = var/mean); returns (p, shape).

    ``mean`` and ``var`` must be positive. Equivalent to a chi-square with ``2 * shape`` degrees
    of freedom applied to ``2 x / scale``.
    """
    if not (mean > 0 and var > 0):
        raise ValueError(f"gamma_sf_moments: mean and variance must be positive, got {mean!r}, {var!r}")
    shape = mean * mean / var
    scale = var / mean
    if x <= 0:
        return 1.0, shape
    return gammainc_upper(shape, x / scale), shape


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if not (a > 0 and b > 0) or math.isinf(a) or math.isinf(b):
        raise ValueError(f"betainc: a and b must be positive and finite, got {a!r}, {b!r}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"betainc: x must be in [0, 1], got {x!r}")
    if x == 0.0 or x == 1.0:
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_cf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_cf(b, a, 1.0 - x) / b


def _beta_cf(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < _TINY:
        d = _TINY
    d = 1.0 / d
    h = d
    for m in range(1, _MAX_ITER):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1.0 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1.0 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


_POISSON_TOLERANCE = 1e-9


def count_sf(k: int, mean: float, var: float) -> float:
    """P(X >= k) for a count with this mean and variance (see the module docstring)."""
    if not (mean > 0 and var > 0):
        raise ValueError(f"count_sf: mean and variance must be positive, got {mean!r}, {var!r}")
    if k <= 0:
        return 1.0
    ratio = var / mean
    if abs(ratio - 1.0) < _POISSON_TOLERANCE:
        return 1.0 - gammainc_upper(k, mean)  # P(Poisson(mean) >= k) = P(k, mean)
    if ratio < 1.0:
        p = 1.0 - ratio
        n = mean / p
        if k > n:
            return 0.0
        if k > n - 1.0:  # the last, fractional, step of a real-n binomial: use the continuous form
            return betainc(k, max(n - k + 1.0, 1e-12), p)
        return betainc(k, n - k + 1.0, p)
    r = mean * mean / (var - mean)
    p = mean / var
    return betainc(k, r, 1.0 - p)  # P(NegBin(r, p) >= k) = I_{1-p}(k, r)


def holm(pvalues: Sequence[float], alpha: float) -> tuple[list[float], list[bool]]:
    """Holm-Bonferroni: adjusted p-values and rejections, in the order given."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        p = pvalues[i]
        if not 0 <= p <= 1:
            raise ValueError(f"not a p-value: {p!r}")
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted, [adj <= alpha for adj in adjusted]
