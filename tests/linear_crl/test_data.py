"""The data generator: shapes, the two noise regimes, nesting over environments, bad inputs."""

import numpy as np
import pytest

from icml26.linear_crl import FAMILIES, make_linear_crl_data, sample_noise


def test_shapes_and_model_identity():
    Xs, truth = make_linear_crl_data(n_latent=4, n_obs=7, n_envs=5, n_samples=300, seed=0)
    assert len(Xs) == 5 and all(X.shape == (300, 7) for X in Xs)
    for X, Y, Z, Bk, s in zip(Xs, truth.latents, truth.noises, truth.weights, truth.scales):
        np.testing.assert_allclose(X, Y @ truth.mixing.T, atol=1e-10)
        np.testing.assert_allclose(Y, Y @ Bk.T + Z * s, atol=1e-10)  # y = B_k y + Omega_k z
        assert np.all((Bk != 0) <= (truth.adjacency != 0))
    for U, Z, X in zip(truth.oracle_unmixing(), truth.noises, Xs):
        np.testing.assert_allclose(X @ U.T, Z, atol=1e-8)


def test_noise_regimes():
    _, env = make_linear_crl_data(n_latent=3, n_envs=4, n_samples=50, noise="env", seed=0)
    assert all(len(set(f)) == 1 for f in env.families)  # one family per environment
    _, node = make_linear_crl_data(n_latent=3, n_envs=4, n_samples=50, noise="node", seed=0)
    assert all(f == node.families[0] for f in node.families) and len(set(node.families[0])) == 3


def test_environments_are_nested_and_min_edges():
    Xa, ta = make_linear_crl_data(n_latent=3, n_envs=3, n_samples=100, seed=5, min_edges=2)
    Xb, tb = make_linear_crl_data(n_latent=3, n_envs=6, n_samples=100, seed=5, min_edges=2)
    for a, b in zip(Xa, Xb):
        np.testing.assert_array_equal(a, b)
    assert ta.adjacency.sum() >= 2 and np.array_equal(ta.adjacency, tb.adjacency)


@pytest.mark.parametrize("family", FAMILIES)
def test_families_are_standardised(family):
    z = sample_noise(family, 400_000, np.random.default_rng(0))
    assert abs(z.mean()) < 0.01 and abs(z.var() - 1) < 0.02


def test_bad_inputs():
    with pytest.raises(ValueError, match="n_obs"):
        make_linear_crl_data(n_latent=5, n_obs=3)
    with pytest.raises(ValueError, match="noise"):
        make_linear_crl_data(noise="gauss")
    with pytest.raises(ValueError, match="edge_prob"):
        make_linear_crl_data(edge_prob=1.5)
    with pytest.raises(ValueError, match="weight_range"):
        make_linear_crl_data(weight_range=(2.0, 1.0))
    with pytest.raises(ValueError, match="min_edges"):
        make_linear_crl_data(n_latent=3, min_edges=4)
    with pytest.raises(ValueError, match="family"):
        sample_noise("cauchy", 3, np.random.default_rng(0))
