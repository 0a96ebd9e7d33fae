"""Clamp, the robust stopping distribution (LP), the baselines and evaluate()."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from icml26.ski_rental import (
    BreakEven,
    ClampPolicy,
    CuiDinitz,
    KarlinRandomized,
    OptimalThreshold,
    PSKDeterministic,
    PSKRandomized,
    RobustStoppingDistribution,
    SkiRental,
    WaterFilling,
    bimodal,
    discretized_gaussian,
    evaluate,
    geometric,
    minimax_ratio,
    point_mass,
)

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


@st.composite
def instances_and_predictions(draw):
    """A small instance and an arbitrary (often spiky) predicted pmf."""
    b = draw(st.integers(2, 25))
    n = draw(st.integers(2 * b, 4 * b))
    weights = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
    w = np.asarray(weights) ** 4  # emphasise a few days
    if w.sum() == 0:
        w[draw(st.integers(0, n - 1))] = 1.0
    return SkiRental(b, n), w / w.sum()


# -- Clamp -------------------------------------------------------------------------------------------------
@SETTINGS
@given(instances_and_predictions(), st.floats(0.01, 1.0))
def test_clamp_worst_case_never_exceeds_one_plus_one_over_lambda(inst_p, lam):
    inst, P_hat = inst_p
    policy = ClampPolicy(lam)
    k = policy.buy_day(inst, P_hat)
    lo, hi = policy.safe_range(inst)
    assert lo <= k <= hi
    assert inst.worst_case_ratio(k) <= 1 + 1 / lam + 1e-12
    assert evaluate(policy, inst, P_hat, P_hat)["worst_case"] <= policy.robustness + 1e-12


@SETTINGS
@given(instances_and_predictions(), st.floats(0.05, 1.0))
def test_clamp_is_consistent_when_the_optimum_is_in_range(inst_p, lam):
    inst, P = inst_p
    policy = ClampPolicy(lam)
    k_hat, best = inst.optimal_threshold(P)
    lo, hi = policy.safe_range(inst)
    if lo <= k_hat <= hi:
        assert evaluate(policy, inst, P, P)["ecr"] == pytest.approx(best, rel=1e-12)
    else:
        assert policy.buy_day(inst, P) in (lo, hi)


def test_clamp_limits():
    inst = SkiRental(20, 200)
    rng = np.random.default_rng(1)
    for _ in range(10):
        P = rng.dirichlet(np.full(200, 0.2))
        assert ClampPolicy(1e-6).buy_day(inst, P) == inst.optimal_threshold(P)[0]  # lam -> 0: no clamp
        assert ClampPolicy(1.0).buy_day(inst, P) == 20  # lam = 1: break-even
    assert inst.worst_case_ratio(ClampPolicy(1.0).buy_day(inst, P)) == pytest.approx(2 - 1 / 20)
    assert ClampPolicy(0.3).safe_range(SkiRental(100, 1000)) == (30, 334)  # no float-noise off-by-one


@SETTINGS
@given(instances_and_predictions(), st.floats(0.01, 1.0))
def test_range_argmin_never_worse_than_clamp_under_the_prediction(inst_p, lam):
    inst, P_hat = inst_p
    clamp, rng_min = ClampPolicy(lam), ClampPolicy(lam, mode="range_argmin")
    e = inst.ecr_all(P_hat)
    k_c, k_r = clamp.buy_day(inst, P_hat), rng_min.buy_day(inst, P_hat)
    lo, hi = clamp.safe_range(inst)
    assert rng_min.safe_range(inst) == (lo, hi) and lo <= k_r <= hi
    assert e[k_r - 1] <= e[k_c - 1] + 1e-12
    assert e[k_r - 1] == pytest.approx(e[lo - 1 : hi].min(), abs=0.0)  # the in-range optimum
    if lo <= inst.optimal_threshold(P_hat)[0] <= hi:  # optimum inside the range: the two readings agree
        assert k_r == k_c


@SETTINGS
@given(instances_and_predictions(), st.floats(0.01, 1.0), st.sampled_from(["clamp", "range_argmin"]))
def test_both_modes_are_one_plus_one_over_lambda_robust(inst_p, lam, mode):
    inst, P_hat = inst_p
    policy = ClampPolicy(lam, mode=mode)
    k = policy.buy_day(inst, P_hat)
    # the worst case over every season length x in 1..N, computed by brute force from the cost matrix
    worst = float((inst.cost_matrix()[k - 1] / inst.opt).max())
    assert worst <= 1 + 1 / lam + 1e-12
    assert evaluate(policy, inst, P_hat, P_hat)["worst_case"] == pytest.approx(worst, rel=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_range_argmin_matches_brute_force_on_small_instances(seed):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(2, 9))
    n = int(rng.integers(2 * b, 3 * b + 1))
    inst = SkiRental(b, n)
    P = rng.dirichlet(np.full(n, rng.choice([0.1, 0.5, 2.0])))
    lam = float(rng.choice([0.2, 0.34, 0.5, 0.8, 1.0]))
    lo, hi = max(1, math.ceil(lam * b - 1e-9)), min(math.ceil(b / lam - 1e-9), n + 1)
    # ECR of every buy day in the range from the definition: E_x[ALG_k(x) / min(x, B)]
    ecr = {
        k: sum(P[x - 1] * (x if x < k else k - 1 + b) / min(x, b) for x in range(1, n + 1)) for k in range(lo, hi + 1)
    }
    best = min(ecr.values())
    expected = min(k for k, v in ecr.items() if v <= best + 1e-12)  # smallest k on (float) ties
    policy = ClampPolicy(lam, mode="range_argmin")
    assert policy.buy_day(inst, P) == expected
    assert evaluate(policy, inst, P, P)["ecr"] == pytest.approx(best, rel=1e-12)


def test_range_argmin_can_beat_the_clamp():
    """A season just longer than B: buying at once is the global optimum, so the clamp moves to the range's
    low end; renting to the high end (past the season) is the best safe day."""
    inst = SkiRental(10, 100)
    P = discretized_gaussian(11, 1, 100)
    clamp, rng_min = ClampPolicy(0.5), ClampPolicy(0.5, mode="range_argmin")
    assert clamp.safe_range(inst) == (5, 20) and inst.optimal_threshold(P)[0] == 1
    assert clamp.buy_day(inst, P) == 5 and rng_min.buy_day(inst, P) == 20
    assert evaluate(clamp, inst, P, P)["ecr"] == pytest.approx(1.41166, abs=1e-5)
    assert evaluate(rng_min, inst, P, P)["ecr"] == pytest.approx(1.10733, abs=1e-5)
    assert repr(rng_min) == "ClampPolicy(lam=0.5, mode='range_argmin')"


def test_missing_prediction_names_the_argument():
    inst = SkiRental(10, 20)
    for policy in (ClampPolicy(0.5), ClampPolicy(0.5, mode="range_argmin"), OptimalThreshold(), PSKDeterministic(0.5)):
        with pytest.raises(ValueError, match=r"P_hat is required, a pmf over season lengths 1\.\.20") as err:
            evaluate(policy, inst, point_mass(3, 20))
        assert "got None" in str(err.value) and "shape ()" not in str(err.value)
    with pytest.raises(ValueError, match="P_hat is required"):
        RobustStoppingDistribution(2.0).fit(inst, None)
    with pytest.raises(ValueError, match="P_true is required"):
        evaluate(BreakEven(), inst, None)


# -- PSK and the other baselines ---------------------------------------------------------------------------
def test_psk_deterministic_values_from_the_paper():
    inst = SkiRental(100, 1000)
    long_, short = point_mass(150, 1000), point_mass(60, 1000)
    psk = PSKDeterministic(0.5)
    assert psk.buy_day(inst, long_) == 50 and psk.buy_day(inst, short) == 200
    assert inst.worst_case_ratio(50) == pytest.approx(2.98)
    assert inst.worst_case_ratio(200) == pytest.approx(2.99)
    assert evaluate(psk, inst, long_, long_)["ecr"] == pytest.approx(1.49)  # consistency 1 + lam (at most)
    assert evaluate(psk, inst, short, short)["ecr"] == pytest.approx(1.0)


def test_psk_randomized_values_from_the_paper():
    b, lam = 100, 0.5
    inst = SkiRental(b, 1000)
    pi = PSKRandomized(lam).distribution(inst, point_mass(150, 1000))
    assert pi.sum() == pytest.approx(1.0, abs=1e-12) and np.all(pi[50:] == 0)
    worst = inst.worst_case_ratio(pi)
    assert worst == pytest.approx(2.5317, abs=1e-4) and worst <= 1 / (1 - math.exp(-(lam - 1 / b)))
    consistency = inst.ratio_profile(pi)[149]  # the prediction y = 150 was right
    assert consistency == pytest.approx(1.2658, abs=1e-4) and consistency <= lam / (1 - math.exp(-lam))
    # a short prediction spreads over days 1..ceil(B/lam) = 200
    pi_short = PSKRandomized(lam).distribution(inst, point_mass(60, 1000))
    assert pi_short.sum() == pytest.approx(1.0, abs=1e-12) and np.all(pi_short[200:] == 0)
    assert inst.worst_case_ratio(pi_short) <= 1 / (1 - math.exp(-(lam - 1 / b)))
    # days after the horizon count as "never buy"
    pi_cut = PSKRandomized(0.1).distribution(SkiRental(100, 300), point_mass(60, 300))
    assert pi_cut.shape == (301,) and pi_cut.sum() == pytest.approx(1.0, abs=1e-12) and pi_cut[300] > 0


def test_point_statistics():
    inst = SkiRental(100, 1000)
    P = bimodal(10, 3, 300, 40, 1000, weight=0.7)  # median and mode short, mean long
    assert PSKDeterministic(0.5, point="median").buy_day(inst, P) == 200
    assert PSKDeterministic(0.5, point="mode").buy_day(inst, P) == 200
    assert PSKDeterministic(0.5, point="mean").buy_day(inst, P) == 200  # mean ~ 97 < B
    P2 = bimodal(10, 3, 300, 40, 1000, weight=0.4)
    assert PSKDeterministic(0.5, point="median").buy_day(inst, P2) == 50


def test_cui_dinitz_hand_example():
    inst = SkiRental(100, 1000)
    # point mass at 5: K_hat = 5 (rent 5 days), U = 5, K* = 5 + floor(sqrt(100)) = 15 -> buy on day 16
    assert CuiDinitz().buy_day(inst, point_mass(5, 1000)) == 16
    # point mass at 500: buy immediately is optimal (K_hat = 0), U = 499 -> K* = 10 -> day 11
    assert CuiDinitz().buy_day(inst, point_mass(500, 1000)) == 11


def test_prediction_free_baselines():
    inst = SkiRental(10, 40)
    assert BreakEven().buy_day(inst) == 10 and inst.worst_case_ratio(10) == pytest.approx(1.9)
    assert evaluate(KarlinRandomized(), inst, point_mass(3, 40))["worst_case"] == pytest.approx(minimax_ratio(10))


# -- the robust stopping distribution (LP water-filling) ---------------------------------------------------
def _dense_lp(inst, P_hat, gamma):
    """The same LP written densely over pi, independently of the library's sparse formulation."""
    c = inst.ecr_all(P_hat)
    m = inst.horizon + 1
    res = linprog(
        c,
        A_ub=sp.csr_matrix(inst.ratio_matrix.T),
        b_ub=np.full(inst.horizon, gamma),
        A_eq=np.ones((1, m)),
        b_eq=[1.0],
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0
    return res.fun


def _random_case(seed):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(2, 20))
    n = int(rng.integers(2 * b, 5 * b))
    inst = SkiRental(b, n)
    P = rng.dirichlet(np.full(n, rng.choice([0.05, 0.3, 2.0])))
    gamma = minimax_ratio(b) + float(rng.choice([0.0, 0.01, 0.1, 0.4, 1.0, 3.0]))
    return inst, P, gamma


@pytest.mark.parametrize("seed", range(25))
def test_lp_matches_dense_lp_feasible_and_complementary(seed):
    inst, P, gamma = _random_case(seed)
    lp = RobustStoppingDistribution(gamma).fit(inst, P)
    pi, mu = lp.distribution_, lp.multipliers_
    assert pi.shape == (inst.horizon + 1,) and pi.min() >= 0 and pi.sum() == pytest.approx(1.0, abs=1e-12)
    assert lp.objective_ == pytest.approx(_dense_lp(inst, P, gamma), abs=1e-8)
    profile = inst.ratio_profile(pi)
    assert profile.max() <= gamma + 1e-9  # feasibility
    # strong duality and complementary slackness of the water-filling reading
    assert lp.dual_objective_ == pytest.approx(lp.objective_, abs=1e-7)
    assert mu.min() >= 0
    on = pi > 1e-9
    assert np.all(lp.effective_cost_[on] <= lp.water_level_ + 1e-7)  # mass only at the water level
    assert np.all(lp.effective_cost_ >= lp.water_level_ - 1e-12)
    assert np.all(np.abs(mu * (profile - gamma)) <= 1e-7)  # mu_x > 0 only where the constraint is tight


@pytest.mark.parametrize("b", [3, 10, 40])
def test_lp_at_c_B_returns_karlin_for_any_prediction(b):
    rng = np.random.default_rng(b)
    inst = SkiRental(b, 4 * b)
    karlin = KarlinRandomized().distribution(inst)
    for P in (rng.dirichlet(np.full(4 * b, 0.2)), point_mass(1, 4 * b), point_mass(4 * b, 4 * b)):
        lp = WaterFilling(minimax_ratio(b)).fit(inst, P)
        np.testing.assert_allclose(lp.distribution_, karlin, atol=1e-7)


def test_lp_with_huge_gamma_is_the_point_mass_at_argmin():
    inst = SkiRental(20, 200)
    for P in (bimodal(3, 1, 90, 10, 200), geometric(1 / 30, 200), discretized_gaussian(25, 6, 200)):
        lp = RobustStoppingDistribution(1e6).fit(inst, P)
        k, best = inst.optimal_threshold(P)
        assert lp.distribution_[k - 1] == 1.0 and lp.objective_ == pytest.approx(best)
        assert np.all(lp.multipliers_ == 0)


def test_lp_objective_is_monotone_in_gamma_and_beats_psk():
    inst = SkiRental(20, 200)
    P = bimodal(3, 1, 90, 10, 200, weight=0.5)
    gammas = minimax_ratio(20) + np.array([0.0, 0.02, 0.1, 0.3, 0.6, 1.0, 2.0, 5.0])
    objs = [RobustStoppingDistribution(g).fit(inst, P).objective_ for g in gammas]
    assert all(a >= b - 1e-10 for a, b in zip(objs, objs[1:]))
    assert objs[0] > objs[-1] + 0.1  # the bound bites at c_B for this bimodal prediction
    for lam in (0.25, 0.5, 0.75, 1.0):
        psk = evaluate(PSKRandomized(lam), inst, P, P)
        lp = RobustStoppingDistribution(psk["worst_case"]).fit(inst, P)
        assert lp.objective_ <= psk["ecr"] + 1e-9


def test_evaluate_deterministic_and_randomized():
    inst = SkiRental(10, 50)
    P = discretized_gaussian(12, 4, 50)
    P_hat = discretized_gaussian(30, 4, 50)
    r = evaluate(OptimalThreshold(), inst, P, P_hat)
    k = inst.optimal_threshold(P_hat)[0]
    assert r["buy_day"] == k and r["ecr"] == pytest.approx(inst.ecr(k, P))
    assert r["expected_cost"] == pytest.approx(inst.cost_matrix()[k - 1] @ P)
    pi = RobustStoppingDistribution(2.0).distribution(inst, P_hat)
    r = evaluate(pi, inst, P)
    assert r["buy_day"] is None and r["ecr"] == pytest.approx(pi @ inst.ratio_matrix @ P)
    assert r["expected_cost"] == pytest.approx(pi @ inst.cost_matrix() @ P)
    assert r["worst_case"] <= 2.0 + 1e-9
    assert evaluate(7, inst, P)["ecr"] == pytest.approx(inst.ecr(7, P))


@pytest.mark.parametrize(
    "call,exc,word",
    [
        (lambda: ClampPolicy(0.0), ValueError, "lam"),
        (lambda: ClampPolicy(1.5), ValueError, "lam"),
        (lambda: ClampPolicy("0.5"), TypeError, "lam"),
        (lambda: ClampPolicy(0.5, mode="argmin"), ValueError, "mode must be one of"),
        (lambda: ClampPolicy(0.5, mode=None), ValueError, "range_argmin"),
        (lambda: PSKDeterministic(-0.1), ValueError, "lam"),
        (lambda: PSKRandomized(2), ValueError, "lam"),
        (lambda: PSKDeterministic(0.5, point="p90"), ValueError, "point"),
        (
            lambda: RobustStoppingDistribution(1.2).fit(SkiRental(10, 20), point_mass(1, 20)),
            ValueError,
            "gamma",
        ),
        (lambda: RobustStoppingDistribution(0.5), ValueError, "gamma"),
        (lambda: RobustStoppingDistribution(float("inf")), TypeError, "gamma"),
        (
            lambda: RobustStoppingDistribution(2.0).fit(SkiRental(10, 20), np.ones(21) / 21),
            ValueError,
            "P_hat",
        ),
        (lambda: RobustStoppingDistribution(2.0).fit("inst", point_mass(1, 20)), TypeError, "inst"),
        (lambda: evaluate(BreakEven(), SkiRental(10, 20), np.ones(20)), ValueError, "P_true"),
        (
            lambda: evaluate(ClampPolicy(0.5), SkiRental(10, 20), point_mass(1, 20), np.ones(19) / 19),
            ValueError,
            "P_hat",
        ),
        (lambda: evaluate("clamp", SkiRental(10, 20), point_mass(1, 20)), TypeError, "policy"),
    ],
)
def test_bad_inputs_name_the_argument(call, exc, word):
    with pytest.raises(exc, match=word):
        call()
