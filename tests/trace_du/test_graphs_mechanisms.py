"""Gossip matrices, node removal, Gaussian calibration, metrics."""

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.trace_du import (
    analytic_gaussian_sigma,
    auc,
    erdos_renyi,
    gaussian_delta,
    gaussian_sigma,
    is_connected,
    metropolis_weights,
    mia_auc,
    remove_nodes,
    ring,
    sensitivity_threshold,
)


def _doubly_stochastic(W):
    assert np.allclose(W, W.T) and (W >= 0).all()
    assert np.allclose(W.sum(0), 1) and np.allclose(W.sum(1), 1)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(3, 12), p=st.floats(0.3, 1.0), seed=st.integers(0, 1000), data=st.data())
def test_metropolis_and_removal_stay_doubly_stochastic(n, p, seed, data):
    W = metropolis_weights(erdos_renyi(n, p, seed=seed))
    _doubly_stochastic(W)
    U = data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        Wk = remove_nodes(W, U)
    _doubly_stochastic(Wk)
    keep = [i for i in range(n) if i not in U]
    off = ~np.eye(len(keep), dtype=bool)
    assert np.array_equal(Wk[off], W[np.ix_(keep, keep)][off])  # off-diagonal weights unchanged


def test_ring_chords_and_metropolis_values():
    A = ring(8, chords=2)
    assert A.sum() == 2 * (8 + 2) and is_connected(A) and (np.diag(A) == 0).all()
    W = metropolis_weights(ring(4))
    assert np.allclose(W[0], [1 / 3, 1 / 3, 0, 1 / 3])


def test_removal_warns_when_disconnected_and_refuses_everything():
    W = metropolis_weights(ring(6))
    with pytest.warns(RuntimeWarning, match="disconnects"):
        remove_nodes(W, [0, 3])
    with pytest.raises(ValueError, match="every node"):
        remove_nodes(W, range(6))
    with pytest.raises(ValueError, match="nodes must be"):
        remove_nodes(W, [7])


def test_bad_graph_inputs():
    with pytest.raises(ValueError, match="n must"):
        ring(1)
    with pytest.raises(ValueError, match="chords"):
        ring(6, chords=4)
    with pytest.raises(ValueError, match="p must"):
        erdos_renyi(5, 0.0)
    with pytest.raises(ValueError, match="symmetric"):
        metropolis_weights(np.array([[0, 1], [0, 0]]))


def test_gaussian_calibration_closed_form_and_analytic():
    s = gaussian_sigma(1.0, 1e-4, 2.0)
    assert math.isclose(s, 2.0 * math.sqrt(2 * math.log(1.25e4)))
    assert math.isclose(sensitivity_threshold(1.0, 1e-4, s), 2.0)
    for eps, delta in ((0.5, 1e-5), (1.0, 1e-4), (3.0, 1e-3)):
        sa = analytic_gaussian_sigma(eps, delta, 1.0)
        assert abs(gaussian_delta(eps, sa, 1.0) - delta) < 1e-6
        if eps <= 1:
            assert sa <= gaussian_sigma(eps, delta, 1.0)  # analytic is never looser
    assert math.isclose(
        analytic_gaussian_sigma(1.0, 1e-4, 3.0), 3 * analytic_gaussian_sigma(1.0, 1e-4, 1.0), rel_tol=1e-9
    )


@pytest.mark.parametrize(
    "eps,delta,match",
    [(0.0, 1e-4, "epsilon"), (1.5, 1e-4, "epsilon"), (-1, 1e-4, "epsilon"), (1.0, 0.0, "delta"), (1.0, 1.0, "delta")],
)
def test_privacy_parameters_out_of_range(eps, delta, match):
    with pytest.raises(ValueError, match=match):
        gaussian_sigma(eps, delta, 1.0)


def test_auc_closed_forms_and_mia():
    assert auc([1, 2, 3], [1, 2, 3]) == 0.5
    assert auc([4, 5], [1, 2]) == 1.0 and auc([1, 2], [4, 5]) == 0.0

    class Fixed:  # losses = the first feature
        def losses(self, w, X, y):
            return X[:, 0].expand(w.shape[0], -1)

    X = torch.arange(10.0).reshape(10, 1)
    y = torch.zeros(10, dtype=torch.long)
    w = torch.zeros(2, 1)
    assert np.allclose(mia_auc(Fixed(), w, (X[:5], y[:5]), (X[5:], y[5:]), stratify=False), 1.0)  # members lower loss
    assert np.allclose(mia_auc(Fixed(), w, (X, y), (X, y)), 0.5)
