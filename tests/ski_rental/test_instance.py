"""Exact ECR evaluation, worst cases, the minimax value c_B, distributions and input validation."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from icml26.ski_rental import (
    KarlinRandomized,
    SkiRental,
    bimodal,
    discretized_gaussian,
    geometric,
    minimax_ratio,
    point_mass,
    shift,
)


@pytest.mark.parametrize("b,n", [(2, 4), (10, 100), (37, 80)])
@pytest.mark.parametrize("objective", ["expected_ratio", "ratio_of_expectations"])
def test_ecr_all_equals_brute_force(b, n, objective):
    rng = np.random.default_rng(b + n)
    inst = SkiRental(b, n, objective=objective)
    cost = np.array([[x if x < k else k - 1 + b for x in range(1, n + 1)] for k in range(1, n + 2)], float)
    opt = np.minimum(np.arange(1, n + 1), b)
    for _ in range(5):
        P = rng.dirichlet(np.full(n, 0.3))
        if objective == "expected_ratio":
            brute = (cost / opt) @ P
        else:
            brute = (cost @ P) / (opt @ P)
        np.testing.assert_allclose(inst.ecr_all(P), brute, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(inst.expected_cost_all(P), cost @ P, rtol=1e-12)
        k = int(rng.integers(1, n + 2))
        assert inst.ecr(k, P) == pytest.approx(brute[k - 1], rel=1e-12)
    np.testing.assert_allclose(inst.ratio_matrix, cost / opt)


@pytest.mark.parametrize("x", [1, 5, 10, 11, 55, 100])
def test_point_mass_optimal_ecr_is_one(x):
    inst = SkiRental(10, 100)
    k, e = inst.optimal_threshold(point_mass(x, 100))
    assert e == pytest.approx(1.0, abs=1e-12)
    assert inst.ecr(k, point_mass(x, 100)) == pytest.approx(1.0, abs=1e-12)


def test_ratio_profile_and_worst_case_match_brute_force():
    rng = np.random.default_rng(3)
    inst = SkiRental(7, 30)
    R = inst.ratio_matrix
    for _ in range(5):
        pi = rng.dirichlet(np.ones(31))
        np.testing.assert_allclose(inst.ratio_profile(pi), pi @ R, rtol=1e-12)
        assert inst.worst_case_ratio(pi) == pytest.approx((pi @ R).max(), rel=1e-12)
    for k in range(1, 32):
        assert inst.worst_case_ratio(k) == pytest.approx(R[k - 1].max(), rel=1e-12)
    # a short distribution vector is padded with zeros (buy days never used)
    assert inst.worst_case_ratio([0.5, 0.5]) == pytest.approx(inst.worst_case_ratio(np.r_[0.5, 0.5, np.zeros(29)]))


def _minimax_lp(b, n, R=None):
    """min_pi max_x (pi @ R)[x] by a dense LP written independently of the library's sparse solver."""
    R = SkiRental(b, n).ratio_matrix if R is None else R
    m, n = R.shape
    c = np.r_[np.zeros(m), 1.0]
    a_ub = sp.csr_matrix(np.hstack([R.T, -np.ones((n, 1))]))
    a_eq = np.r_[np.ones(m), 0.0][None, :]
    res = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(n),
        A_eq=a_eq,
        b_eq=[1.0],
        bounds=[(0, None)] * m + [(None, None)],
        method="highs",
    )
    assert res.status == 0
    return res.fun, -res.ineqlin.marginals, res.x[:m]


@pytest.mark.parametrize("b,n,expected", [(10, 100, 1.5353399327876), (100, 300, 1.5773675300856)])
def test_minimax_value_is_c_B(b, n, expected):
    assert minimax_ratio(b) == pytest.approx(expected, abs=1e-12)
    value, dual, pi = _minimax_lp(b, n)
    assert value == pytest.approx(expected, abs=1e-9)
    # the dual is the adversary's worst-case pmf P*: against it no buy day beats c_B, and some day attains it
    assert dual.sum() == pytest.approx(1.0, abs=1e-9)
    inst = SkiRental(b, n)
    P_star = np.clip(dual, 0, None) / np.clip(dual, 0, None).sum()
    assert inst.optimal_threshold(P_star)[1] == pytest.approx(expected, abs=1e-8)
    assert inst.worst_case_ratio(pi / pi.sum()) == pytest.approx(expected, abs=1e-8)


def test_horizon_of_two_b_keeps_the_minimax_value():
    # why SkiRental asks for horizon >= 2B: from there on the finite season does not change c_B ...
    for b in (2, 3, 17):
        assert _minimax_lp(b, 2 * b)[0] == pytest.approx(minimax_ratio(b), abs=1e-9)
    # ... while a shorter one (seasons of at most 15 days, buy days 1..16) lowers it: never buying is cheap
    R15 = SkiRental(10, 20).ratio_matrix[:16, :15]
    assert _minimax_lp(10, 15, R15)[0] < minimax_ratio(10) - 0.1


def test_min_ecr_never_exceeds_c_B():
    rng = np.random.default_rng(0)
    for b, n in [(2, 4), (5, 20), (10, 100), (30, 90)]:
        inst = SkiRental(b, n)
        for alpha in (0.05, 0.5, 5.0):
            for _ in range(20):
                P = rng.dirichlet(np.full(n, alpha))
                assert inst.optimal_threshold(P)[1] <= minimax_ratio(b) + 1e-12


@pytest.mark.parametrize("b", [2, 3, 10, 100])
def test_karlin_is_c_B_competitive_with_tight_constraints(b):
    inst = SkiRental(b, 5 * b)
    pi = KarlinRandomized().distribution(inst)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(pi[b:] == 0)
    profile = inst.ratio_profile(pi)
    c_b = minimax_ratio(b)
    assert inst.worst_case_ratio(pi) == pytest.approx(c_b, rel=1e-12)
    np.testing.assert_allclose(profile[:b], c_b, rtol=1e-12)  # every x <= B is tight


def test_geometric_threshold_grows_like_b2q_and_is_monotone():
    b, n = 100, 1000
    inst = SkiRental(b, n)
    qs = [1 / 5000, 1 / 2000, 1 / 1000, 1 / 500, 1 / 300, 1 / 200, 1 / 150]
    ks = [inst.optimal_threshold(geometric(q, n))[0] for q in qs]
    assert ks == sorted(ks) and ks[0] < ks[-1]  # a shorter expected season waits longer before buying
    for q, k in zip(qs[:4], ks[:4]):  # Fujiwara-Iwama: buy after about B^2 q days when q is small
        assert 0.8 <= k / (b * b * q) <= 1.2
    assert inst.optimal_threshold(geometric(1 / 100, n))[0] == n + 1  # mean season B: never buy


def test_distribution_helpers():
    n = 200
    for P in (discretized_gaussian(50, 10, n), geometric(0.02, n), bimodal(10, 3, 150, 20, n, weight=0.3)):
        assert P.shape == (n,) and np.all(P >= 0) and P.sum() == pytest.approx(1.0, abs=1e-12)
    g = discretized_gaussian(50, 5, n)
    assert np.argmax(g) + 1 == 50 and g @ np.arange(1, n + 1) == pytest.approx(50, abs=1e-6)
    assert discretized_gaussian(-100, 1, n)[0] == pytest.approx(1.0)  # mass below day 1 lands on day 1
    geo = geometric(0.1, n)
    assert geo[0] == pytest.approx(0.1) and geo[-1] == pytest.approx(0.9 ** (n - 1))
    bi = bimodal(10, 2, 150, 5, n, weight=0.3)
    assert bi[:50].sum() == pytest.approx(0.3, abs=1e-9)
    s = shift(point_mass(5, n), 10)
    assert s[14] == 1.0
    assert shift(point_mass(5, n), -10)[0] == 1.0 and shift(point_mass(195, n), 10)[-1] == 1.0


@pytest.mark.parametrize(
    "call,exc,word",
    [
        (lambda: SkiRental(1, 10), ValueError, "buy_cost"),
        (lambda: SkiRental(2.5, 10), TypeError, "buy_cost"),
        (lambda: SkiRental(True, 10), TypeError, "buy_cost"),
        (lambda: SkiRental(10, 19), ValueError, "horizon"),
        (lambda: SkiRental(10, 50.0), TypeError, "horizon"),
        (lambda: SkiRental(10, 50, objective="mean"), ValueError, "objective"),
        (lambda: SkiRental(10, 50).ecr_all(np.ones(49) / 49), ValueError, "P"),
        (lambda: SkiRental(10, 50).ecr_all(np.ones(50)), ValueError, "sum to 1"),
        (lambda: SkiRental(10, 50).ecr_all(np.r_[-0.5, 1.5, np.zeros(48)]), ValueError, "non-negative"),
        (lambda: SkiRental(10, 50).ecr_all(np.full(50, np.nan)), ValueError, "finite"),
        (lambda: SkiRental(10, 50).ecr_all(np.ones((5, 10)) / 50), ValueError, "1-D"),
        (lambda: SkiRental(10, 50).ecr(0, point_mass(3, 50)), ValueError, "k"),
        (lambda: SkiRental(10, 50).ecr(52, point_mass(3, 50)), ValueError, "k"),
        (lambda: SkiRental(10, 50).worst_case_ratio("k"), TypeError, "policy_or_distribution"),
        (lambda: SkiRental(10, 50).worst_case_ratio(np.ones(60) / 60), ValueError, "policy_or_distribution"),
        (lambda: discretized_gaussian(5, 0, 50), ValueError, "sigma"),
        (lambda: geometric(1.5, 50), ValueError, "q"),
        (lambda: geometric(0.1, 1), ValueError, "horizon"),
        (lambda: bimodal(1, 1, 5, 1, 50, weight=1.5), ValueError, "weight"),
        (lambda: point_mass(51, 50), ValueError, "day"),
    ],
)
def test_bad_inputs_name_the_argument(call, exc, word):
    with pytest.raises(exc, match=word):
        call()
