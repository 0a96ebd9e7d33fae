"""Closed forms and invariances of the metrics and graph helpers (lingam convention: B[i, j] != 0 means j -> i)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.linear_crl import (
    check_adjacency,
    is_linear_extension,
    loc_r2,
    make_linear_crl_data,
    mcc,
    relabel,
    shd,
    surrounded_sets,
    topological_order,
)

CHAIN = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]])  # 0 -> 1 -> 2
TRIANGLE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0]])  # 0 -> 1, 0 -> 2, 1 -> 2


def test_surrounded_sets_by_hand():
    # chain: node 2 has no children, so sur(2) = pa(2); ch(1) = {2} is not inside ch(0) = {1}
    assert surrounded_sets(CHAIN) == [(), (), (1,)]
    # triangle: 0 points into 1's only child 2, so 0 surrounds 1
    assert surrounded_sets(TRIANGLE) == [(), (0,), (0, 1)]
    assert surrounded_sets(np.zeros((3, 3))) == [(), (), ()]
    # v-structure 0 -> 2 <- 1: childless 2 is surrounded by both parents, sources by nobody
    v = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 0]])
    assert surrounded_sets(v) == [(), (), (0, 1)]


def test_orders_and_validation():
    assert topological_order(TRIANGLE) == [0, 1, 2]
    assert is_linear_extension([0, 1, 2], TRIANGLE) and not is_linear_extension([1, 0, 2], TRIANGLE)
    assert not is_linear_extension([0, 1], TRIANGLE)
    with pytest.raises(ValueError, match="acyclic"):
        check_adjacency(np.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="square"):
        check_adjacency(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="diagonal"):
        check_adjacency(np.eye(2))


def test_shd_known_values():
    assert shd(TRIANGLE, TRIANGLE) == 0
    missing = TRIANGLE.copy()
    missing[2, 0] = 0
    assert shd(TRIANGLE, missing) == 1
    reversed_ = TRIANGLE.copy()
    reversed_[1, 0], reversed_[0, 1] = 0, 1
    assert shd(TRIANGLE, reversed_) == 1  # a reversal counts once
    assert shd(TRIANGLE, np.zeros((3, 3))) == 3
    assert shd(np.zeros((3, 3)), TRIANGLE) == 3
    # relabelled copy: estimated node t is true node perm[t]
    perm = np.array([2, 0, 1])
    est = TRIANGLE[np.ix_(perm, perm)]
    assert shd(TRIANGLE, est, perm) == 0 and np.array_equal(relabel(est, perm), TRIANGLE)
    with pytest.raises(ValueError, match="permutation"):
        shd(TRIANGLE, est, [0, 0, 1])


def test_mcc_known_values():
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(200_000, 2))
    assert mcc(Y, Y[:, ::-1] * [-3.0, 0.5]) == pytest.approx(1.0)
    rot = np.column_stack([Y[:, 0] + Y[:, 1], Y[:, 0] - Y[:, 1]]) / np.sqrt(2)
    assert mcc(Y, rot) == pytest.approx(1 / np.sqrt(2), abs=5e-3)
    assert mcc(Y, rng.normal(size=Y.shape)) < 0.01


def test_loc_r2_closed_forms():
    Xs, truth = make_linear_crl_data(n_latent=3, n_envs=3, n_samples=2000, seed=1)
    Y = np.vstack(truth.latents)
    assert loc_r2(Y, Y, truth.adjacency) == pytest.approx(1.0, abs=1e-12)
    # chain truth: y^_1 = y1 + y0 mixes in a parent that does NOT surround node 1 -> R^2 < 1
    rng = np.random.default_rng(0)
    Z = rng.laplace(size=(5000, 3))
    Yc = Z.copy()
    Yc[:, 1] += Yc[:, 0]
    Yc[:, 2] += Yc[:, 1]
    est = Yc.copy()
    est[:, 1] = Yc[:, 1] + 2.0 * Yc[:, 0]
    s, m, per = loc_r2(Yc, est, CHAIN, return_matching=True)
    assert s < 0.99 and list(m) == [0, 1, 2] and per[1] < 0.9
    # childless node 2 may absorb its parent 1 (sur(2) = {1}): still exactly 1
    est = Yc.copy()
    est[:, 2] = -Yc[:, 2] + 5.0 * Yc[:, 1] + 3.0
    assert loc_r2(Yc, est, CHAIN) == pytest.approx(1.0, abs=1e-12)


def test_metric_inputs_are_validated():
    Y = np.zeros((10, 3))
    with pytest.raises(ValueError, match="same shape"):
        loc_r2(Y, np.zeros((10, 2)), CHAIN)
    with pytest.raises(ValueError, match="2-D"):
        mcc(np.zeros(10), np.zeros(10))
    with pytest.raises(ValueError, match="finite"):
        mcc(np.full((10, 2), np.nan), np.zeros((10, 2)))
    with pytest.raises(ValueError, match="nodes"):
        loc_r2(np.ones((10, 2)), np.ones((10, 2)), CHAIN)


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 6), seed=st.integers(0, 10_000), shift=st.floats(-5, 5))
def test_loc_r2_invariant_within_the_sur_class(d, seed, shift):
    """Any y^_i = c_i y_i + sum_{j in sur(i)} a_ij y_j + const, permuted, gives LocR^2 = 1; MCC of a permuted,
    rescaled copy is 1; SHD of the relabelled truth is 0."""
    _, truth = make_linear_crl_data(n_latent=d, n_envs=2, n_samples=300, edge_prob=0.6, seed=seed)
    rng = np.random.default_rng(seed)
    Y = np.vstack(truth.latents)
    sur = surrounded_sets(truth.adjacency)
    est = np.column_stack(
        [
            rng.uniform(0.2, 5.0) * rng.choice([-1, 1]) * Y[:, i] + sum(rng.normal() * Y[:, j] for j in sur[i]) + shift
            for i in range(d)
        ]
    )
    perm = rng.permutation(d)
    assert loc_r2(Y, est[:, perm], truth.adjacency) == pytest.approx(1.0, abs=1e-9)
    assert mcc(Y, Y[:, perm] * rng.uniform(0.5, 2, d)) == pytest.approx(1.0, abs=1e-12)
    assert shd(truth.adjacency, truth.adjacency[np.ix_(perm, perm)], perm) == 0
