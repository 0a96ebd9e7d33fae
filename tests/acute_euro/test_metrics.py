"""EURO, auc-EURO, smooth ECE and binned ECE: closed forms, invariants and bad inputs (spec section 7)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.acute_euro import auc_euro, base_rate_euro_curve, binned_ece, euro, euro_curve, smooth_ece


def _brute_euro(p, y, u):
    trust = p > u
    n_tp = np.sum(trust & (y == 1))
    n_tn = np.sum(~trust & (y == 0))
    n1, n0 = np.sum(y == 1), np.sum(y == 0)
    den = (1 - u) * n1 + u * n0
    return 1.0 if den == 0 else ((1 - u) * n_tp + u * n_tn) / den


def test_euro_matches_brute_force_utility_ratio():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(1, 60))
        p = np.round(rng.uniform(size=n), 2)  # ties with the grid happen
        y = (rng.uniform(size=n) < 0.6).astype(int)
        u, e = euro_curve(p, y)
        assert np.allclose(e, [_brute_euro(p, y, x) for x in u], atol=1e-12)
        x = float(rng.uniform())
        assert euro(p, y, x) == pytest.approx(_brute_euro(p, y, x), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=40),
    st.floats(0, 1),
)
def test_euro_in_unit_interval(pairs, u):
    p = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    v = euro(p, y, u)
    assert 0.0 <= v <= 1.0
    assert 0.0 <= auc_euro(p, y) <= 1.0


def test_oracle_is_one_and_anti_oracle_is_zero_below_one():
    rng = np.random.default_rng(1)
    y = (rng.uniform(size=200) < 0.4).astype(float)
    u, e = euro_curve(y, y)
    assert np.all(e == 1.0)
    assert auc_euro(y, y) == 1.0
    u, e = euro_curve(1 - y, y)
    assert np.all(e[:-1] == 0.0) and e[-1] == 1.0  # at u = 1 everyone rejects everything, like the oracle
    assert auc_euro(1 - y, y) == pytest.approx(0.5 / 100)


def test_threshold_is_strict_ties_are_rejected():
    p, y = np.array([0.5]), np.array([1])
    assert euro(p, y, 0.5) == 0.0  # p == u: rejected, the correct output is lost (u_ct = 0.5 > 0)
    assert euro(p, y, 0.4999) == 1.0
    p, y = np.array([0.5]), np.array([0])
    assert euro(p, y, 0.5) == 1.0  # rejecting the wrong output is right


def test_denominator_zero_convention():
    assert euro(np.array([0.3, 0.9]), np.array([0, 0]), 0.0) == 1.0  # n1 = 0 at u = 0
    assert euro(np.array([0.3, 0.9]), np.array([1, 1]), 1.0) == 1.0  # n0 = 0 at u = 1
    assert euro(np.array([0.3, 0.9]), np.array([1, 1]), 0.5) == pytest.approx(0.5)


def test_base_rate_closed_form_and_zero_ece():
    rng = np.random.default_rng(2)
    y = (rng.uniform(size=500) < 0.7).astype(float)
    a = y.mean()
    p = np.full(y.size, a)
    n1, n0 = int(y.sum()), int(y.size - y.sum())
    u, e = euro_curve(p, y)
    _, closed = base_rate_euro_curve(n1, n0, a)
    assert np.allclose(e, closed, atol=1e-12)
    assert binned_ece(p, y) == pytest.approx(0.0, abs=1e-12)
    assert smooth_ece(p, y) == pytest.approx(0.0, abs=1e-9)
    auc = auc_euro(p, y)
    assert auc < 1.0
    # the analytic integral of the closed form, against the 101-point trapezoid rule
    from scipy.integrate import quad

    f = lambda x: ((1 - x) * n1 if a > x else x * n0) / ((1 - x) * n1 + x * n0)  # noqa: E731
    exact = quad(f, 0, a, limit=200)[0] + quad(f, a, 1, limit=200)[0]
    assert auc == pytest.approx(exact, abs=5e-3)


def test_auc_of_constant_curve_equals_constant_and_subrange():
    # 3 correct and 1 wrong, all trusted below u = 1: EURO(u) = 3(1-u) / (3(1-u) + u) is not constant; use the
    # oracle (constant 1) and a rejected-everything estimator on all-wrong data (constant 1) instead
    y = np.array([0, 0, 0])
    assert auc_euro(np.zeros(3), y) == 1.0
    assert auc_euro(np.array([1, 1, 0, 1.0]), np.array([1, 1, 0, 1]), u_range=(0.5, 1.0)) == 1.0
    # trapezoid average of a linear curve on a sub-range equals its midpoint value
    p = np.linspace(0, 1, 1001)[1:]
    y = np.ones_like(p)  # EURO(u) = share of p > u = 1 - u (approximately linear)
    assert auc_euro(p, y, u_range=(0.2, 0.6), n_grid=401) == pytest.approx(0.6, abs=2e-3)


def test_euro_is_not_invariant_to_monotone_rescaling_unlike_auroc():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    p = rng.uniform(size=400)
    y = (rng.uniform(size=400) < p).astype(float)
    q = p**3  # monotone: same ranking, same AUROC
    assert roc_auc_score(y, p) == pytest.approx(roc_auc_score(y, q))
    assert abs(auc_euro(p, y) - auc_euro(q, y)) > 0.02


def test_informative_calibrated_beats_uninformative_calibrated():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=5000)
    y = (rng.uniform(size=5000) < p).astype(float)
    base = np.full_like(p, y.mean())
    assert smooth_ece(base, y) < 1e-9 and smooth_ece(p, y) < 0.03  # both calibrated
    assert auc_euro(p, y) > auc_euro(base, y) + 0.05


def test_smooth_ece_small_when_calibrated_and_large_when_anti():
    rng = np.random.default_rng(5)
    p = rng.uniform(size=20_000)
    y = (rng.uniform(size=20_000) < p).astype(float)
    assert smooth_ece(p, y) < 0.02
    assert smooth_ece(1 - p, y) > 0.3


def test_smooth_ece_matches_relplot():
    relplot = pytest.importorskip("relplot")
    rng = np.random.default_rng(6)
    for n, shape in [(300, 1.0), (2000, 2.0), (1000, 0.5)]:
        p = rng.uniform(size=n)
        y = (rng.uniform(size=n) < p**shape).astype(float)
        assert smooth_ece(p, y) == pytest.approx(float(relplot.smECE(p, y)), abs=1.5e-3)
        assert smooth_ece(p, y, sigma=0.05) == pytest.approx(float(relplot.smECE_sigma(p, y, 0.05)), abs=1e-3)


def test_binned_ece_hand_computed():
    p = np.array([0.05, 0.15, 0.95, 1.0])
    y = np.array([0, 1, 1, 0])
    # bins: [0, .1): {0.05 | 0}, [.1, .2): {0.15 | 1}, [.9, 1]: {0.95, 1.0 | 1, 0}
    expected = (1 * 0.05 + 1 * 0.85 + 2 * abs(0.975 - 0.5)) / 4
    assert binned_ece(p, y) == pytest.approx(expected)


@pytest.mark.parametrize(
    "p, y, match",
    [
        ([0.2, 1.2], [0, 1], "p_hat must lie in"),
        ([0.2, -0.1], [0, 1], "p_hat must lie in"),
        ([0.2, np.nan], [0, 1], "p_hat must be finite"),
        ([0.2, 0.3], [0, 2], "correct must be binary"),
        ([0.2, 0.3], [0, 1, 1], "correct must have the same length"),
        ([[0.2, 0.3]], [0, 1], "p_hat must be 1-D"),
        ([], [], "p_hat must hold at least one"),
    ],
)
def test_bad_inputs_raise(p, y, match):
    for f in (lambda: euro(p, y, 0.5), lambda: auc_euro(p, y), lambda: smooth_ece(p, y), lambda: binned_ece(p, y)):
        with pytest.raises(ValueError, match=match):
            f()


def test_bad_levels_raise():
    p, y = [0.2, 0.9], [0, 1]
    with pytest.raises(ValueError, match="u_ca must lie in"):
        euro(p, y, 1.5)
    with pytest.raises(ValueError, match="u_ca must be a scalar"):
        euro(p, y, [0.1, 0.2])
    with pytest.raises(ValueError, match="u_range must satisfy"):
        auc_euro(p, y, u_range=(0.6, 0.5))
    with pytest.raises(ValueError, match="n_grid must be"):
        auc_euro(p, y, n_grid=1)
    with pytest.raises(ValueError, match="grid must lie in"):
        euro_curve(p, y, grid=[-0.1, 0.5])
    with pytest.raises(ValueError, match="sigma must be"):
        smooth_ece(p, y, sigma=0.0)
    with pytest.raises(ValueError, match="n_bins must be"):
        binned_ece(p, y, n_bins=0)
