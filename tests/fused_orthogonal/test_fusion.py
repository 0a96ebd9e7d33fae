"""ADMM solver and adaptive weights: closed forms, a cvxpy reference, invariants (spec section 7)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score

from icml26.fused_orthogonal import adaptive_fusion_weights, fused_objective, fused_pairwise_admm, fusion_path


def _random_problem(seed, m=7, d=1):
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.5, 2.0, m)
    b = rng.normal(size=(m, d)) if d > 1 else rng.normal(size=m)
    lam = rng.uniform(0.0, 1.0, (m, m))
    lam = (lam + lam.T) / 2
    np.fill_diagonal(lam, 0.0)
    return A, b, lam


def test_zero_penalty_returns_per_task_minimisers():
    A, b, _ = _random_problem(0)
    sol = fused_pairwise_admm(A, b, 0.0)
    np.testing.assert_allclose(sol.theta, b)
    assert len(np.unique(sol.labels)) == len(b)


def test_huge_penalty_gives_the_pooled_weighted_mean():
    A, b, _ = _random_problem(1)
    sol = fused_pairwise_admm(A, b, 1e4)
    np.testing.assert_allclose(sol.theta, np.sum(A * b) / np.sum(A), atol=1e-7)
    assert np.all(sol.labels == 0)


def test_infinite_weights_force_exact_fusion_of_a_pair():
    A = np.ones(3)
    b = np.array([0.0, 1.0, 5.0])
    lam = np.zeros((3, 3))
    lam[0, 1] = lam[1, 0] = np.inf
    sol = fused_pairwise_admm(A, b, lam)
    np.testing.assert_allclose(sol.theta, [0.5, 0.5, 5.0], atol=1e-7)
    assert sol.labels.tolist() == [0, 0, 1]


def test_two_task_closed_form():
    # min A(t1-b1)^2 + A(t2-b2)^2 + lam|t1-t2|: fused iff lam >= A|b1-b2|, else each moves lam/(2A) inwards.
    A, b = np.array([1.0, 1.0]), np.array([0.0, 1.0])
    sol = fused_pairwise_admm(A, b, 0.4)
    np.testing.assert_allclose(sol.theta, [0.2, 0.8], atol=1e-7)
    sol = fused_pairwise_admm(A, b, 1.0)
    np.testing.assert_allclose(sol.theta, [0.5, 0.5], atol=1e-7)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_cvxpy(seed, d):
    cp = pytest.importorskip("cvxpy")
    A, b, lam = _random_problem(seed, m=6, d=d)
    sol = fused_pairwise_admm(A, b, lam, tol=1e-10)
    bb = np.asarray(b).reshape(len(A), -1)
    th = cp.Variable(bb.shape)
    obj = sum(A[j] * cp.sum_squares(th[j] - bb[j]) for j in range(len(A)))
    obj += sum(lam[i, j] * cp.norm(th[i] - th[j], 2) for i in range(len(A)) for j in range(i + 1, len(A)))
    prob = cp.Problem(cp.Minimize(obj))
    # tight interior-point tolerances: at fused pairs the norm is non-smooth and defaults stop near 1e-5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cvxpy may flag 'inaccurate' at these tolerances; we check the values
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert sol.converged
    np.testing.assert_allclose(np.asarray(sol.theta).reshape(bb.shape), th.value, atol=1e-6)
    assert sol.objective <= prob.value + 1e-7


@given(seed=st.integers(0, 10_000), d=st.sampled_from([1, 2]))
@settings(max_examples=25, deadline=None)
def test_solution_is_optimal_against_perturbations(seed, d):
    # ADMM is not a descent method, so instead of "objective non-increasing" we check optimality: no random
    # perturbation of the solution has a lower objective.
    A, b, lam = _random_problem(seed, m=5, d=d)
    sol = fused_pairwise_admm(A, b, lam, tol=1e-10)
    rng = np.random.default_rng(seed)
    f0 = fused_objective(A, b, lam, sol.theta)
    for _ in range(20):
        pert = np.asarray(sol.theta) + 1e-3 * rng.normal(size=np.shape(sol.theta))
        assert fused_objective(A, b, lam, pert) >= f0 - 1e-9


def test_vector_block_prox_fuses_whole_vectors():
    # d=2: the group penalty fuses both coordinates at once; the solution keeps the pooled mean.
    A = np.array([1.0, 1.0])
    b = np.array([[0.0, 0.0], [0.3, 0.4]])  # distance 0.5
    sol = fused_pairwise_admm(A, b, 0.6)  # fused iff lam >= A * ||b1 - b2|| = 0.5
    np.testing.assert_allclose(sol.theta, [[0.15, 0.2], [0.15, 0.2]], atol=1e-7)
    sol = fused_pairwise_admm(A, b, 0.2)  # each moves lam/(2A) = 0.1 along the unit direction (0.6, 0.8)
    np.testing.assert_allclose(sol.theta, [[0.06, 0.08], [0.24, 0.32]], atol=1e-7)


def test_fusion_path_merges_monotonically_for_uniform_weights():
    A, b, _ = _random_problem(3)
    scales = np.logspace(-3, 1, 8)
    path = fusion_path(A, b, np.ones((7, 7)) - np.eye(7), scales)
    spread = path.max(axis=1) - path.min(axis=1)
    assert np.all(np.diff(spread) <= 1e-7)
    assert spread[-1] < 1e-6


# -- adaptive weights ----------


def test_weights_values_and_symmetry():
    pilots = np.array([0.0, 0.05, 0.3, 1.0])
    lam = adaptive_fusion_weights(pilots, c_w=0.1, gamma=2.0, tau=10.0, eps_n=1e-12)
    assert np.allclose(lam, lam.T)
    assert np.all(np.diag(lam) == 0)
    off = lam[~np.eye(4, dtype=bool)]
    assert np.all((off == 1e-12) | (off > 10.0))
    np.testing.assert_allclose(lam[0, 1], 0.1 / 0.05**2)  # inside the 0.1 fuse radius
    assert lam[0, 2] == 1e-12 and lam[2, 3] == 1e-12


@given(gap1=st.floats(1e-3, 10.0), factor=st.floats(1.01, 10.0))
@settings(max_examples=50, deadline=None)
def test_unthresholded_weight_decreases_in_the_gap(gap1, factor):
    lam = adaptive_fusion_weights(np.array([0.0, gap1, -gap1 * factor]), c_w=1.0, gamma=2.0, tau=1e-30, eps_n=0)
    assert lam[0, 1] > lam[0, 2]


@given(seed=st.integers(0, 10_000), c=st.floats(0.1, 10.0))
@settings(max_examples=40, deadline=None)
def test_clustering_is_scale_invariant(seed, c):
    # theta -> c * theta with c_w -> c^gamma * c_w leaves every weight unchanged.
    rng = np.random.default_rng(seed)
    pilots = rng.normal(size=8) * 0.3
    lam1 = adaptive_fusion_weights(pilots, c_w=0.1, gamma=2.0)
    lam2 = adaptive_fusion_weights(c * pilots, c_w=0.1 * c**2, gamma=2.0)
    np.testing.assert_allclose(lam1, lam2, rtol=1e-9)


def test_identical_pilots_get_infinite_weight():
    lam = adaptive_fusion_weights(np.array([1.0, 1.0, 2.0]))
    assert np.isinf(lam[0, 1])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(c_w=0.0), "c_w"),
        (dict(c_w=-1.0), "c_w"),
        (dict(gamma=0.0), "gamma"),
        (dict(tau=-1.0), "tau"),
        (dict(eps_n=100.0), "eps_n"),
        (dict(c_w=np.ones((2, 2))), "c_w"),
    ],
)
def test_weight_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        adaptive_fusion_weights(np.array([0.0, 1.0, 2.0]), **kwargs)


def test_weight_pilots_must_be_finite():
    with pytest.raises(ValueError, match="pilots"):
        adaptive_fusion_weights(np.array([0.0, np.nan]))


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((np.ones(3), np.zeros(2), 0.1), {}, "A must have shape"),
        ((-np.ones(2), np.zeros(2), 0.1), {}, "A must contain"),
        ((np.ones(2), np.zeros(2), -0.1), {}, "lam"),
        ((np.ones(2), np.zeros(2), np.array([[0, 1.0], [2.0, 0]])), {}, "lam"),
        ((np.ones(2), np.array([0.0, np.inf]), 0.1), {}, "b must"),
        ((np.ones(2), np.zeros(2), 0.1), {"rho": 0.0}, "rho"),
        ((np.ones(2), np.zeros(2), 0.1), {"tol": -1.0}, "tol"),
        ((np.ones(2), np.zeros(2), 0.1), {"max_iter": 0}, "max_iter"),
    ],
)
def test_admm_argument_errors(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fused_pairwise_admm(*args, **kwargs)


def test_chain_guard_splits_a_chain_and_keeps_a_wide_homogeneous_cluster():
    from icml26.fused_orthogonal import split_chained_clusters

    rng = np.random.default_rng(0)
    se = np.full(40, 0.05)
    # two groups 10 SE apart that one fused component joined (a chain), and one wide but homogeneous group
    pilots = np.concatenate([rng.normal(0.0, 0.05, 20), rng.normal(0.5, 0.05, 20)])
    labels, flagged = split_chained_clusters(np.zeros(40, int), pilots, se, radius=0.1)
    assert adjusted_rand_score(np.repeat([0, 1], 20), labels) == 1.0 and len(flagged) == 1
    homog = rng.normal(0.0, 0.05, 40)  # range ~0.4 > 2 x radius, but pure noise
    labels, flagged = split_chained_clusters(np.zeros(40, int), homog, se, radius=0.1)
    assert np.all(labels == 0) and len(flagged) == 1
    # the range rule alone (alpha = 1) splits the homogeneous group too: why the test is needed
    labels, _ = split_chained_clusters(np.zeros(40, int), homog, se, radius=0.1, alpha=1.0)
    assert labels.max() >= 1 and np.ptp(homog[labels == 0]) <= 0.2
    # narrow components are never flagged
    labels, flagged = split_chained_clusters(np.arange(40) // 20, pilots, se, radius=0.5)
    assert flagged == [] and np.array_equal(labels, np.arange(40) // 20)


def test_chain_guard_splits_three_chained_groups_into_three():
    from icml26.fused_orthogonal import split_chained_clusters

    rng = np.random.default_rng(1)
    truth = np.repeat([0, 1, 2], 30)
    pilots = np.array([-1 / 3, 0, 1 / 3])[truth] + rng.normal(0, 0.03, 90)
    labels, _ = split_chained_clusters(np.zeros(90, int), pilots, np.full(90, 0.03), radius=0.1)
    assert adjusted_rand_score(truth, labels) == 1.0


def test_merge_homogeneous_clusters_undoes_over_splitting_only():
    from icml26.fused_orthogonal import merge_homogeneous_clusters

    rng = np.random.default_rng(2)
    truth = np.repeat([0, 1], 10)
    pilots = np.array([0.0, 1.0])[truth] + rng.normal(0, 0.05, 20)
    over = np.arange(20)  # every task alone
    merged = merge_homogeneous_clusters(over, pilots, np.full(20, 0.05))
    assert adjusted_rand_score(truth, merged) == 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(pilot_se=np.zeros(4)), "pilot_se"),
        (dict(alpha=0.0), "alpha"),
        (dict(radius=-1.0), "radius"),
        (dict(pilots=np.zeros(3)), "pilots"),
    ],
)
def test_chain_guard_argument_errors(kwargs, match):
    from icml26.fused_orthogonal import split_chained_clusters

    args = dict(labels=np.zeros(4, int), pilots=np.zeros(4), pilot_se=np.ones(4), radius=0.1) | kwargs
    with pytest.raises(ValueError, match=match):
        split_chained_clusters(**args)
