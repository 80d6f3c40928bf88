"""The pure-Python distribution functions against published critical values, identities and exact
sums. Reference values: chi-square table quantiles (e.g. 3.8415 for df 1 at 95%), cross-checked
once against scipy 1.x (not a dependency)."""
from __future__ import annotations

import math

import pytest

from controller.audit.stats import (
    betainc,
    chi2_sf,
    count_sf,
    gamma_sf_moments,
    gammainc_upper,
    holm,
    normal_cdf,
    normal_sf,
)

CHI2_CRITICAL = [  # (confidence, df, critical value): P(X >= value) = 1 - confidence
    (0.95, 1, 3.841458820694124), (0.95, 2, 5.991464547107979), (0.95, 10, 18.307038053275146),
    (0.95, 51, 68.66929391228578), (0.95, 100, 124.34211340400407), (0.95, 357, 402.0590919816152),
    (0.95, 21216, 21555.957090335618),
    (0.99, 1, 6.6348966010212145), (0.99, 2, 9.21034037197618), (0.99, 10, 23.209251158954356),
    (0.99, 51, 77.38596201613736), (0.99, 100, 135.80672317102676), (0.99, 357, 422.08626682566563),
    (0.99, 21216, 21698.14432035473),
]


@pytest.mark.parametrize("confidence, df, x", CHI2_CRITICAL)
def test_chi2_sf_at_table_critical_values(confidence: float, df: int, x: float) -> None:
    assert chi2_sf(x, df) == pytest.approx(1 - confidence, rel=1e-9)


def test_chi2_sf_closed_forms() -> None:
    for x in (0.1, 1.0, 4.0, 30.0):
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-13)  # df 2 is exponential
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-12)
    assert chi2_sf(0.0, 5) == 1.0 and chi2_sf(-1.0, 5) == 1.0
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)


@pytest.mark.parametrize("a, x, q", [
    (2.5, 1.7, 0.6385699231037951), (300, 330, 0.04489022387001295), (150000, 151000, 0.004981172711218163),
])
def test_gammainc_upper_reference_values(a: float, x: float, q: float) -> None:
    # the last one is past the Wilson-Hilferty switch (a > 1e5)
    assert gammainc_upper(a, x) == pytest.approx(q, rel=1e-9 if a < 1e5 else 1e-5)


def test_gammainc_upper_is_the_poisson_cdf() -> None:
    # Q(k, lam) = P(Poisson(lam) <= k - 1), an exact finite sum for whole k
    for k, lam in ((1, 0.3), (5, 4.2), (30, 25.0), (200, 230.0)):
        cdf = sum(math.exp(-lam + i * math.log(lam) - math.lgamma(i + 1)) for i in range(k))
        assert gammainc_upper(k, lam) == pytest.approx(cdf, rel=1e-11)
    with pytest.raises(ValueError):
        gammainc_upper(0, 1.0)
    with pytest.raises(ValueError):
        gammainc_upper(1.0, -1.0)


def test_normal_tails() -> None:
    assert normal_sf(1.959963984540054) == pytest.approx(0.025, rel=1e-12)
    assert normal_cdf(-1.959963984540054) == pytest.approx(0.025, rel=1e-12)
    assert normal_sf(6.0) == pytest.approx(9.865876450376946e-10, rel=1e-10)  # erfc keeps far tails
    assert normal_sf(0.0) == 0.5


def test_betainc_identities_and_reference_values() -> None:
    assert betainc(2.5, 7.5, 0.3) == pytest.approx(0.6789434858661821, rel=1e-12)
    assert betainc(40, 60, 0.45) == pytest.approx(0.8462247976813987, rel=1e-12)
    for a, b, x in ((0.5, 3.0, 0.2), (7.0, 2.0, 0.9), (30.0, 40.0, 0.5)):
        assert betainc(a, b, x) == pytest.approx(1 - betainc(b, a, 1 - x), abs=1e-13)
    assert betainc(1, 1, 0.37) == pytest.approx(0.37, rel=1e-14)  # the uniform distribution
    # binomial tail: P(Bin(n, p) >= k) = I_p(k, n - k + 1), against the exact sum
    n, p = 40, 0.13
    for k in (1, 5, 12):
        exact = sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1))
        assert betainc(k, n - k + 1, p) == pytest.approx(exact, rel=1e-11)


def test_count_sf_poisson_binomial_negative_binomial() -> None:
    assert count_sf(15, 8.0, 8.0) == pytest.approx(0.017256990397966385, rel=1e-10)       # Poisson(8)
    assert count_sf(10, 416 / 52, 416 / 52 * 51 / 52) == pytest.approx(0.2821613121073333, rel=1e-9)  # Bin(416, 1/52)
    assert count_sf(20, 8.0, 12.0) == pytest.approx(0.0032186994390033113, rel=1e-9)    # NegBin(16, 2/3)
    assert count_sf(0, 8.0, 8.0) == 1.0
    with pytest.raises(ValueError):
        count_sf(3, 0.0, 1.0)


def test_gamma_sf_moments_is_a_scaled_chi_square() -> None:
    p, shape = gamma_sf_moments(20.0, 10.0, 20.0)  # mean 10, var 20: chi-square with 5 df, doubled
    assert shape == pytest.approx(5.0)
    assert p == pytest.approx(chi2_sf(20.0, 10), rel=1e-12)


def test_holm_bonferroni() -> None:
    adjusted, rejected = holm([0.01, 0.04, 0.03, 0.005], 0.05)
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert rejected == [True, False, False, True]
    assert holm([], 0.05) == ([], [])
    assert holm([0.9, 0.2], 0.05)[0] == pytest.approx([0.9, 0.4])
    assert holm([0.9, 0.8], 0.05)[0] == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError):
        holm([0.5], 1.5)
    with pytest.raises(ValueError):
        holm([1.5], 0.05)
