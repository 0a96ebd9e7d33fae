"""Exact DP against brute force; occupancy invariants; optimal policy dominates random policies."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.opo_cmdp import evaluate_policy, occupancy, optimal_policy


def _tiny(seed=0, H=3, S=2, A=2):
    rng = np.random.default_rng(seed)
    f = rng.random((H, S, A))
    P = rng.dirichlet(np.ones(S), size=(H, S, A))
    pi = rng.dirichlet(np.ones(A), size=(H, S))
    return pi, f, P


def _brute_value(pi, f, P, s0=0):
    """Sum over every state-action path of its probability times its loss."""
    H, S, A = f.shape
    total = 0.0
    for path in itertools.product(range(S), range(A), repeat=H):
        states, actions = path[0::2], path[1::2]
        if states[0] != s0:
            continue
        prob, loss = 1.0, 0.0
        for h in range(H):
            prob *= pi[h, states[h], actions[h]]
            loss += f[h, states[h], actions[h]]
            if h + 1 < H:
                prob *= P[h, states[h], actions[h], states[h + 1]]
        total += prob * loss
    return total


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_evaluate_policy_matches_brute_force(seed):
    pi, f, P = _tiny(seed)
    V, Q = evaluate_policy(pi, f, P)
    assert V[0, 0] == pytest.approx(_brute_value(pi, f, P), abs=1e-12)
    q = occupancy(pi, P)
    assert np.sum(q * f) == pytest.approx(V[0, 0], abs=1e-12)  # value = <occupancy, loss>


def test_optimal_policy_brute_force_over_deterministic_policies():
    pi, f, P = _tiny(3, H=2, S=2, A=2)
    _, Vstar, _ = optimal_policy(f, P)
    best = np.inf
    for choice in itertools.product(range(2), repeat=4):
        det = np.zeros((2, 2, 2))
        for (h, s), a in zip(itertools.product(range(2), range(2)), choice):
            det[h, s, a] = 1.0
        best = min(best, evaluate_policy(det, f, P)[0][0, 0])
    assert Vstar[0, 0] == pytest.approx(best, abs=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(100):
        rand = rng.dirichlet(np.ones(2), size=(2, 2))
        assert evaluate_policy(rand, f, P)[0][0, 0] >= Vstar[0, 0] - 1e-12


def test_occupancy_sums_to_one_per_layer_batched():
    rng = np.random.default_rng(1)
    pi = rng.dirichlet(np.ones(3), size=(5, 4, 3))
    P = rng.dirichlet(np.ones(3), size=(5, 4, 3, 3))
    q = occupancy(pi, P, s0=2)
    np.testing.assert_allclose(q.sum(axis=(-1, -2)), 1.0, atol=1e-12)
    assert np.all(q[:, 0, [0, 1]] == 0)


def test_shape_errors_name_the_argument():
    pi, f, P = _tiny()
    with pytest.raises(ValueError, match="P"):
        evaluate_policy(pi, f, P[..., :1])
    with pytest.raises(ValueError, match="f"):
        evaluate_policy(pi, f[:, :, :1], P)
    with pytest.raises(ValueError, match="s0"):
        occupancy(pi, P, s0=5)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_dp_identities_on_random_mdps(H, S, A, seed):
    """For any layered MDP and policy: each occupancy layer sums to 1, the value equals the occupancy-weighted
    loss, and the optimal policy's value is a lower bound on every policy's."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(S), size=(H, S, A))
    f = rng.uniform(0, 1, size=(H, S, A))
    pi = rng.dirichlet(np.ones(A), size=(H, S))
    q = occupancy(pi, P)
    assert np.allclose(q.sum(axis=(-2, -1)), 1.0)
    V, _ = evaluate_policy(pi, f, P)
    assert V[0, 0] == pytest.approx(float((q * f).sum()), abs=1e-12)
    _, V_star, _ = optimal_policy(f, P)
    assert V_star[0, 0] <= V[0, 0] + 1e-12


def test_policies_and_dynamics_must_be_distributions():
    """Referee pass 4: evaluate_policy with pi rows summing to 2.7 and occupancy with P rows summing to 2 returned
    numbers; both now raise ValueError naming the argument (the last layer's P rows are unused and not checked)."""
    pi, f, P = _tiny(1)
    with pytest.raises(ValueError, match="pi rows must sum to 1"):
        evaluate_policy(2.7 * pi, f, P)
    with pytest.raises(ValueError, match="pi must hold non-negative"):
        occupancy(pi - 0.5, P)
    with pytest.raises(ValueError, match="P rows must sum to 1"):
        occupancy(pi, 2.0 * P)
    with pytest.raises(ValueError, match="P rows must sum to 1"):
        evaluate_policy(pi, f, 2.0 * P)
    P_last = P.copy()
    P_last[-1] = 0.0  # the last layer's rows are never used
    np.testing.assert_array_equal(occupancy(pi, P_last), occupancy(pi, P))
