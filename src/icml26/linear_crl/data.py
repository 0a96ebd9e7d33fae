"""Synthetic multi-environment linear latent causal models (the spec's data generator, §5).

Environment ``k = 0..K-1`` shares a latent DAG ``G`` on ``d`` nodes and a mixing ``H`` (``p x d``)::

    y^(k) = B_k y^(k) + Omega_k z^(k),     x^(k) = H y^(k)

``B_k`` has the support of ``G`` (lingam convention: ``B_k[i, j] != 0`` means ``j -> i``) with weights re-drawn
per environment (soft interventions), ``Omega_k`` is a positive diagonal, and ``z^(k)`` are independent,
standardised, non-Gaussian noises.  Two noise regimes:

* ``noise="env"`` (weak heterogeneity, the paper's setting): environment ``k`` draws ALL its components from one
  family ``f_k``; components of one environment are identically distributed, so ICA components cannot be matched
  across environments by their distributions;
* ``noise="node"`` (LiNGCReL-friendly): component ``i`` uses family ``f_i`` in every environment and the ``d``
  families are distinct, so distribution matching works.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .graphs import surrounded_sets, topological_order

__all__ = ["FAMILIES", "LinearCRLData", "make_linear_crl_data", "sample_noise"]

#: Standardised (mean 0, variance 1) non-Gaussian noise families.
FAMILIES: tuple[str, ...] = (
    "laplace",
    "uniform",
    "exponential",
    "student_t5",
    "gumbel",
    "lognormal",
    "arcsine",
    "bimodal",
)


def sample_noise(family: str, size, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of the standardised ``family`` (one of :data:`FAMILIES`)."""
    if family == "laplace":
        return rng.laplace(0.0, 1.0 / np.sqrt(2.0), size)
    if family == "uniform":
        return rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size)
    if family == "exponential":
        return rng.exponential(1.0, size) - 1.0
    if family == "student_t5":
        return rng.standard_t(5, size) / np.sqrt(5.0 / 3.0)
    if family == "gumbel":
        return (rng.gumbel(0.0, 1.0, size) - np.euler_gamma) / (np.pi / np.sqrt(6.0))
    if family == "lognormal":
        s2 = 0.25
        m, v = np.exp(s2 / 2), (np.exp(s2) - 1) * np.exp(s2)
        return (rng.lognormal(0.0, 0.5, size) - m) / np.sqrt(v)
    if family == "arcsine":
        return (rng.beta(0.5, 0.5, size) - 0.5) / np.sqrt(1.0 / 8.0)
    if family == "bimodal":
        return (rng.choice([-1.0, 1.0], size) + rng.normal(0.0, 0.5, size)) / np.sqrt(1.25)
    raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")


@dataclass(frozen=True)
class LinearCRLData:
    """The ground truth of :func:`make_linear_crl_data` (everything but the observations ``Xs``)."""

    adjacency: np.ndarray  # (d, d) binary, B[i, j] = 1 iff j -> i
    weights: np.ndarray  # (K, d, d) B_k
    scales: np.ndarray  # (K, d) diagonal of Omega_k
    mixing: np.ndarray  # (p, d) H
    latents: list[np.ndarray] = field(repr=False)  # K arrays (n_k, d): y^(k)
    noises: list[np.ndarray] = field(repr=False)  # K arrays (n_k, d): z^(k)
    families: list[list[str]] = field(default_factory=list)  # [k][i] noise family of component i in env k

    @property
    def n_latent(self) -> int:
        return int(self.adjacency.shape[0])

    @property
    def causal_order(self) -> list[int]:
        return topological_order(self.adjacency)

    @property
    def surrounded_sets(self) -> list[tuple[int, ...]]:
        return surrounded_sets(self.adjacency)

    def oracle_unmixing(self) -> list[np.ndarray]:
        """The exact ICA unmixing of each environment in observed coordinates:
        ``U_k = Omega_k^{-1} (I - B_k) H^+`` (``d x p``), so that ``z^(k) = U_k x^(k)``."""
        Hp = np.linalg.pinv(self.mixing)
        eye = np.eye(self.n_latent)
        return [(eye - Bk) @ Hp / s[:, None] for Bk, s in zip(self.weights, self.scales)]


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _check_range(name: str, value, positive: bool = True) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high), got {value!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi and (lo > 0 if positive else True)):
        raise ValueError(f"{name} must satisfy 0 < low <= high, got {value!r}")
    return lo, hi


def make_linear_crl_data(
    n_latent: int = 5,
    n_obs: int = 10,
    n_envs: int = 10,
    n_samples: int = 1000,
    noise: str = "env",
    edge_prob: float = 0.5,
    weight_range=(0.5, 1.5),
    scale_range=(0.5, 2.0),
    min_edges: int = 0,
    heterogeneous_weights: bool = True,
    seed: int | np.random.Generator | None = None,
) -> tuple[list[np.ndarray], LinearCRLData]:
    """Draw ``Xs`` (``n_envs`` arrays of shape ``(n_samples, n_obs)``) and the :class:`LinearCRLData` truth.

    The DAG has each edge of a hidden random order with probability ``edge_prob``, redrawn until it has at least
    ``min_edges`` edges (rejection sampling; ``min_edges <= d (d - 1) / 2``); ``H ~ N(0, 1)^{p x d}``;
    ``B_k = A .* U(weight_range) .* random signs`` re-drawn per environment (with
    ``heterogeneous_weights=False`` one ``B`` is shared and only ``Omega_k`` changes: the order is then NOT
    identifiable); ``Omega_k = diag U(scale_range)``; noise regime ``"env"`` or ``"node"`` (module docstring).
    """
    d = _check_int("n_latent", n_latent, 1)
    p = _check_int("n_obs", n_obs, d)
    K = _check_int("n_envs", n_envs, 1)
    n = _check_int("n_samples", n_samples, 2)
    if noise not in ("env", "node"):
        raise ValueError(
            f"noise must be 'env' (one family per environment) or 'node' (one family per component), got {noise!r}"
        )
    if noise == "node" and d > len(FAMILIES):
        raise ValueError(f"noise='node' needs n_latent <= {len(FAMILIES)} distinct families, got n_latent={d}")
    if not (isinstance(edge_prob, (int, float)) and 0.0 <= edge_prob <= 1.0):
        raise ValueError(f"edge_prob must lie in [0, 1], got {edge_prob!r}")
    w_lo, w_hi = _check_range("weight_range", weight_range)
    s_lo, s_hi = _check_range("scale_range", scale_range)
    m = _check_int("min_edges", min_edges, 0)
    if m > d * (d - 1) // 2 or (m > 0 and edge_prob == 0):
        raise ValueError(
            f"min_edges must be <= d (d - 1) / 2 = {d * (d - 1) // 2} (and edge_prob > 0 if min_edges "
            f"> 0), got min_edges={min_edges!r} with edge_prob={edge_prob!r}"
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    perm = rng.permutation(d)  # hidden causal order: perm[a] precedes perm[b] for a < b
    while True:
        A = np.zeros((d, d), dtype=int)
        for a in range(d):
            for b in range(a + 1, d):
                if rng.random() < edge_prob:
                    A[perm[b], perm[a]] = 1
        if A.sum() >= m:
            break
    H = rng.normal(size=(p, d))
    node_families = [FAMILIES[j] for j in rng.permutation(len(FAMILIES))[:d]]

    def draw_weights() -> np.ndarray:
        return A * rng.uniform(w_lo, w_hi, (d, d)) * rng.choice([-1.0, 1.0], (d, d))

    shared = draw_weights()
    env_family = rng.permutation(len(FAMILIES))
    Xs, Ys, Zs, Ws, Ss, fams = [], [], [], [], [], []
    eye = np.eye(d)
    for k in range(K):
        Bk = draw_weights() if heterogeneous_weights else shared
        s = rng.uniform(s_lo, s_hi, d)
        f = [FAMILIES[env_family[k % len(FAMILIES)]]] * d if noise == "env" else list(node_families)
        z = np.column_stack([sample_noise(f[i], n, rng) for i in range(d)])
        y = np.linalg.solve(eye - Bk, (z * s).T).T  # y = (I - B_k)^{-1} Omega_k z
        Xs.append(y @ H.T)
        Ys.append(y)
        Zs.append(z)
        Ws.append(Bk)
        Ss.append(s)
        fams.append(f)
    truth = LinearCRLData(
        adjacency=A, weights=np.array(Ws), scales=np.array(Ss), mixing=H, latents=Ys, noises=Zs, families=fams
    )
    return Xs, truth
