"""Baselines: LiNGCReL-style matching works exactly where its assumption holds; pooled ICA; DirectLiNGAM."""

import numpy as np
import pytest

from icml26.linear_crl import LiNGCReLLike, PooledDirectLiNGAM, PooledICA, loc_r2, make_linear_crl_data, shd
from icml26.linear_crl.experiment import _true_row_nodes


def _purity(model, truth):
    nodes = _true_row_nodes(model, truth)
    K = model.n_envs_
    return np.mean(
        [len({int(nodes[k, model.row_assignment_[t, k]]) for k in range(K)}) == 1 for t in range(model.n_latent)]
    )


def test_distribution_matching_needs_distinct_noise_laws():
    for noise, expect in (("node", 1.0), ("env", 0.5)):
        Xs, truth = make_linear_crl_data(n_latent=4, n_envs=8, n_samples=2000, noise=noise, seed=0)
        m = LiNGCReLLike(4, random_state=0).fit(Xs)
        p = _purity(m, truth)
        assert (p == 1.0) if noise == "node" else (p < expect), (noise, p)


def test_pooled_ica_surface_and_empty_graph():
    Xs, truth = make_linear_crl_data(n_latent=3, n_envs=2, n_samples=500, seed=0)
    m = PooledICA(3, random_state=0).fit(Xs)  # no K >= d condition: it ignores environments
    assert m.components_.shape == (3, 10) and m.adjacency_matrix_.sum() == 0
    assert m.surrounded_sets_ == [(), (), ()]
    assert 0.0 <= loc_r2(np.vstack(truth.latents), m.transform(np.vstack(Xs)), truth.adjacency) <= 1.0
    with pytest.raises(ValueError, match="ica_restarts"):
        PooledICA(3, ica_restarts=0).fit(Xs)


def test_pooled_directlingam_on_observed_latents():
    pytest.importorskip("lingam")
    Xs, truth = make_linear_crl_data(
        n_latent=3, n_envs=1, n_samples=3000, noise="node", edge_prob=1.0, seed=0, weight_range=(0.8, 1.2)
    )
    m = PooledDirectLiNGAM(random_state=0).fit(truth.latents)
    assert shd(truth.adjacency, m.adjacency_matrix_) == 0  # one environment: LiNGAM's own model holds
    assert m.transform(truth.latents[0]).shape == (3000, 3)
    with pytest.raises(ValueError, match="n_latent"):
        PooledDirectLiNGAM(n_latent=2).fit(truth.latents)
