"""Linear causal representation learning under weak environment heterogeneity: CREATOR (reconstructed).

Chen, Liu & Wang (ICML 2026, arXiv 2509.22553) recover latent causal variables and their DAG from linear
mixtures observed in several environments.  Per-environment ICA gives, for every latent, one unmixing row per
environment; because soft interventions change the edge weights, the rows of a node whose parents are already
known line up across environments after projecting the known span out, which yields a causal order without
matching noise distributions (so noise laws may coincide within an environment), then rank drops give the
parents and subspace intersections disentangle each latent up to its surrounded parents (``~sur``).

Notation to names:

=============================================  ==============================================================
paper                                          here
=============================================  ==============================================================
environments ``k = 1..K``, data ``x^(k)``       ``Xs`` (list of ``(n_k, p)`` arrays)
latents ``y``, noise ``z``, mixing ``H``          :class:`LinearCRLData` ``latents``, ``noises``, ``mixing``
weights ``W^(k)`` (``W[j, i]``: ``j -> i``)      ``B_k = W^(k)T`` (lingam convention ``B[i, j]``: ``j -> i``)
number of latents ``d``                         ``n_latent``
topological order ``pi``                        ``causal_order_`` (latents numbered in discovery order)
DAG ``G``                                       ``adjacency_matrix_`` (lingam convention)
recovered features ``y^``                        ``transform(X)``, ``components_`` (d x p)
``sur(i)``                                      ``surrounded_sets_``, :func:`surrounded_sets`
LocR^2, SHD (the paper's metrics), MCC          :func:`loc_r2`, :func:`shd`, :func:`mcc`
=============================================  ==============================================================

Example::

    from icml26.linear_crl import CREATOR, make_linear_crl_data, loc_r2, shd
    Xs, truth = make_linear_crl_data(n_latent=5, n_obs=10, n_envs=10, n_samples=1000, noise="env", seed=0)
    m = CREATOR(n_latent=5, random_state=0).fit(Xs)
    score, match, _ = loc_r2(np.vstack(truth.latents), m.transform(np.vstack(Xs)), truth.adjacency,
                             return_matching=True)
    shd(truth.adjacency, m.adjacency_matrix_, match)
"""

from .baselines import (
    CREATORNoIntersection,
    CREATORNoPruning,
    CREATORRandomIntersection,
    LiNGCReLLike,
    PooledDirectLiNGAM,
    PooledICA,
    SingleEnvironmentICA,
    match_by_distribution,
)
from .creator import CREATOR, check_environments, per_env_ica
from .data import FAMILIES, LinearCRLData, make_linear_crl_data, sample_noise
from .graphs import check_adjacency, is_linear_extension, surrounded_sets, topological_order
from .metrics import loc_r2, loc_r2_matrix, mcc, relabel, shd, shd_best

__all__ = [
    "CREATOR",
    "LiNGCReLLike",
    "PooledICA",
    "PooledDirectLiNGAM",
    "CREATORNoIntersection",
    "CREATORNoPruning",
    "CREATORRandomIntersection",
    "SingleEnvironmentICA",
    "shd_best",
    "make_linear_crl_data",
    "LinearCRLData",
    "FAMILIES",
    "sample_noise",
    "loc_r2",
    "loc_r2_matrix",
    "mcc",
    "shd",
    "relabel",
    "surrounded_sets",
    "is_linear_extension",
    "topological_order",
    "check_adjacency",
    "per_env_ica",
    "check_environments",
    "match_by_distribution",
]
