"""Metrics: mixing recovery up to permutation and sign, sliced Wasserstein, regime accuracy."""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["align_mixing", "mcc", "sliced_wasserstein", "regime_accuracy", "standardized_log_counts"]


def align_mixing(estimated, true) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Align estimated mixing columns to the true ones: ``perm`` maximises ``sum_i |cos(G_true[:, i],
    G_est[:, perm[i]])|`` (Hungarian), ``sign[i] = sign(cos)``.

    Returns ``(G_aligned, perm, sign, cos)`` with ``G_aligned[:, i] = sign[i] * G_est[:, perm[i]] /
    ||G_est[:, perm[i]]||`` and ``cos[i] = |cos|`` of the pair (one per true component).
    """
    E, G = np.asarray(estimated, dtype=float), np.asarray(true, dtype=float)
    if E.ndim != 2 or G.ndim != 2 or E.shape[0] != G.shape[0]:
        raise ValueError(f"estimated and true must be (K, d) matrices with the same K, got {E.shape} and {G.shape}")
    if E.shape[1] < G.shape[1]:
        raise ValueError(f"estimated must have at least as many columns as true ({G.shape[1]}), got {E.shape[1]}")
    _finite_nonzero_columns(estimated=E, true=G)
    En = E / np.maximum(np.linalg.norm(E, axis=0, keepdims=True), 1e-300)
    Gn = G / np.maximum(np.linalg.norm(G, axis=0, keepdims=True), 1e-300)
    C = Gn.T @ En  # (d_true, d_est)
    rows, cols = linear_sum_assignment(-np.abs(C))
    perm = cols[np.argsort(rows)]
    c = C[np.arange(G.shape[1]), perm]
    sign = np.where(c < 0, -1.0, 1.0)
    return En[:, perm] * sign, perm, sign, np.abs(c)


def mcc(true_sources, estimated_sources) -> np.ndarray:
    """Mean correlation coefficient's terms: ``|corr(s_i, s_hat_perm[i])|`` per true source ``i`` (rows are samples,
    ``(N, d_true)`` and ``(N, d_est)``), ``perm`` maximising their sum (Hungarian).  The MCC is their mean.  It is not
    inflated by all-positive loadings as the ``|cos|`` of mixing columns is, but its chance level is far from 0: with
    5 correlated log-count sources and the best of 5! matchings, random Gaussian directions score about 0.50 and the
    data-free rule about 0.48 in count_ica's setting (the second referee's probe)."""
    S, E = np.asarray(true_sources, dtype=float), np.asarray(estimated_sources, dtype=float)
    if S.ndim != 2 or E.ndim != 2 or S.shape[0] != E.shape[0]:
        raise ValueError(
            f"true_sources and estimated_sources must be (N, d) arrays with the same N, got {S.shape} and {E.shape}"
        )
    if E.shape[1] < S.shape[1]:
        raise ValueError(f"estimated_sources must have at least {S.shape[1]} columns, got {E.shape[1]}")
    Sc, Ec = S - S.mean(0), E - E.mean(0)
    _finite_nonzero_columns("constant", true_sources=Sc, estimated_sources=Ec)
    Sc /= np.maximum(np.linalg.norm(Sc, axis=0), 1e-300)
    Ec /= np.maximum(np.linalg.norm(Ec, axis=0), 1e-300)
    C = np.abs(Sc.T @ Ec)
    rows, cols = linear_sum_assignment(-C)
    return C[rows, cols][np.argsort(rows)]


def _finite_nonzero_columns(what: str = "zero", **arrays) -> None:
    """Refuse NaN / inf entries and zero (or, centred, constant) columns: their cosine or correlation is undefined,
    and a silent 0 / 1e-300 would score as a perfect or a null match."""
    for name, A in arrays.items():
        if not np.all(np.isfinite(A)):
            raise ValueError(f"{name} must be finite (no NaN or inf)")
        bad = np.flatnonzero(np.linalg.norm(A, axis=0) <= 1e-12 * max(1.0, float(np.abs(A).max(initial=0.0))))
        if bad.size:
            raise ValueError(f"{name} has {what} column(s) {bad.tolist()}: the cosine / correlation is undefined")


def standardized_log_counts(X, ref=None) -> np.ndarray:
    """``log(1 + X)`` flattened to ``(n, T K)`` and standardised with the mean/sd of ``ref`` (default ``X``)."""
    Z = np.log1p(np.asarray(X, dtype=float)).reshape(len(X), -1)
    R = Z if ref is None else np.log1p(np.asarray(ref, dtype=float)).reshape(len(ref), -1)
    return (Z - R.mean(0)) / np.maximum(R.std(0), 1e-8)


def sliced_wasserstein(A, B, n_projections: int = 1000, seed: int = 0) -> float:
    """Sliced 2-Wasserstein distance ``(E_theta W_2^2(theta.A, theta.B))^(1/2)`` over uniform directions on the
    sphere (same estimator as POT's ``sliced_wasserstein_distance`` with ``p = 2`` and uniform weights); 1-D
    distances between empirical quantile functions, so unequal sizes are allowed."""
    if isinstance(n_projections, bool) or not isinstance(n_projections, (int, np.integer)) or n_projections < 1:
        raise ValueError(f"n_projections must be an integer >= 1, got {n_projections!r}")
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"A and B must be (n, p) arrays with the same p, got {A.shape} and {B.shape}")
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((A.shape[1], n_projections))
    P /= np.linalg.norm(P, axis=0, keepdims=True)
    pa, pb = np.sort(A @ P, axis=0), np.sort(B @ P, axis=0)
    qs = np.linspace(0.0, 1.0, max(len(A), len(B)) * 2 + 1)[1::2]
    qa = pa[np.minimum((qs * len(A)).astype(int), len(A) - 1)]
    qb = pb[np.minimum((qs * len(B)).astype(int), len(B) - 1)]
    return float(np.sqrt(np.mean((qa - qb) ** 2)))


def regime_accuracy(true_paths, est_paths) -> np.ndarray:
    """Per-component accuracy of decoded regime paths ``(n, T, d)``, maximised over relabelings of the regimes
    (regimes are identified up to permutation)."""
    U, V = np.asarray(true_paths), np.asarray(est_paths)
    if U.shape != V.shape or U.ndim != 3:
        raise ValueError(f"true_paths and est_paths must have the same (n, T, d) shape, got {U.shape}, {V.shape}")
    C = int(max(U.max(), V.max())) + 1
    out = np.zeros(U.shape[-1])
    for i in range(U.shape[-1]):
        out[i] = max(np.mean(np.asarray(p)[V[..., i]] == U[..., i]) for p in itertools.permutations(range(C)))
    return out
