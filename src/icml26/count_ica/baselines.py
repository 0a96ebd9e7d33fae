"""Baselines on ``log(X + 0.5)`` pooled over sequences and times (``(n T, K)`` rows): FastICA, Picard, AMUSE, PCA;
and two data-free rules: random non-negative columns (the chance level of a mostly positive mixing) and random
Gaussian directions (the weak chance level).  Each returns a ``(K, d)`` mixing estimate."""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "fastica_log",
    "fastica_restarts",
    "picard_log",
    "amuse_log",
    "pca_log",
    "random_mixing",
    "random_nonneg_mixing",
    "log_rows",
]


def log_rows(X) -> np.ndarray:
    """``log(X + 0.5)`` as ``(n T, K)`` rows (the paper's baseline input)."""
    X = np.asarray(X, dtype=float)
    return np.log(X + 0.5).reshape(-1, X.shape[-1])


def fastica_log(
    X, n_components: int, *, max_iter: int = 1000, random_state: int | None = 0, fun: str = "logcosh"
) -> np.ndarray:
    """scikit-learn ``FastICA(whiten="unit-variance", fun=fun)`` on ``log(X + 0.5)``; returns ``mixing_`` ``(K, d)``."""
    from sklearn.decomposition import FastICA

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ica = FastICA(
            n_components=n_components, whiten="unit-variance", max_iter=max_iter, random_state=random_state, fun=fun
        ).fit(log_rows(X))
    return ica.mixing_


def negentropy(X, mixing: np.ndarray) -> float:
    """FastICA's own contrast, label-free: ``sum_i (E log cosh y_i - E log cosh nu)^2`` over the standardised
    unmixed sources ``y = pinv(mixing) (z - mean)`` of ``z = log(X + 0.5)`` (``nu`` standard normal: 0.3746)."""
    Z = log_rows(X)
    Y = (Z - Z.mean(0)) @ np.linalg.pinv(mixing).T
    Y = Y / np.maximum(Y.std(0), 1e-12)
    return float(((np.log(np.cosh(Y)).mean(0) - 0.374567) ** 2).sum())


def fastica_restarts(
    X, n_components: int, *, fun: str = "logcosh", restarts: int = 10, max_iter: int = 1000, random_state: int = 0
) -> np.ndarray:
    """The best of ``restarts`` FastICA runs (seeds ``random_state * 1000 + r``) by :func:`negentropy` (no labels)."""
    if isinstance(restarts, bool) or not isinstance(restarts, int) or restarts < 1:
        raise ValueError(f"restarts must be an integer >= 1, got {restarts!r}")
    fits = [
        fastica_log(X, n_components, max_iter=max_iter, random_state=random_state * 1000 + r, fun=fun)
        for r in range(restarts)
    ]
    return max(fits, key=lambda A: negentropy(X, A))


def amuse_log(X, n_components: int, *, lag: int = 1) -> np.ndarray:
    """AMUSE (Tong et al. 1991), second-order temporal ICA on ``log(X + 0.5)``: whiten the pooled rows to the top
    ``d`` principal directions, then rotate by the eigenvectors of the symmetrised lag-``lag`` covariance of the
    whitened sequences (time lags within each sequence only).  Returns the mixing ``(K, d)``."""
    if isinstance(lag, bool) or not isinstance(lag, (int, np.integer)) or lag < 1:
        raise ValueError(f"lag must be an integer >= 1 (a time lag within each sequence), got {lag!r}")
    Z = np.log(np.asarray(X, dtype=float) + 0.5)  # (n, T, K)
    if Z.ndim != 3 or Z.shape[1] <= lag:
        raise ValueError(f"X must be (n, T, K) with T > lag = {lag}, got shape {Z.shape}")
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise TypeError(f"n_components must be an integer, got {type(n_components).__name__}")
    if not 1 <= n_components <= Z.shape[-1]:
        raise ValueError(f"n_components must be in [1, n_features = {Z.shape[-1]}], got {n_components}")
    Z = Z - Z.reshape(-1, Z.shape[-1]).mean(0)
    evals, evecs = np.linalg.eigh(np.cov(Z.reshape(-1, Z.shape[-1]).T))
    top = np.argsort(evals)[::-1][:n_components]
    Wh = evecs[:, top] / np.sqrt(np.maximum(evals[top], 1e-12))  # (K, d): y = Z Wh is white
    Y = Z @ Wh
    C1 = np.einsum("ntk,ntl->kl", Y[:, lag:], Y[:, :-lag]) / (Y.shape[0] * (Y.shape[1] - lag))
    _, R = np.linalg.eigh((C1 + C1.T) / 2)
    return evecs[:, top] * np.sqrt(np.maximum(evals[top], 1e-12)) @ R


def picard_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("picard") is not None


def picard_log(X, n_components: int, *, max_iter: int = 1000, random_state: int | None = 0) -> np.ndarray:
    """python-picard ``Picard(ortho=True)`` (its default: FastICA's fixed point, faster solver) on ``log(X + 0.5)``."""
    from picard import Picard

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ica = Picard(n_components=n_components, ortho=True, max_iter=max_iter, random_state=random_state)
        ica = ica.fit(log_rows(X))
    return ica.mixing_


def pca_log(X, n_components: int) -> np.ndarray:
    """The top ``d`` principal directions of ``log(X + 0.5)`` (orthonormal columns)."""
    from sklearn.decomposition import PCA

    return PCA(n_components=n_components).fit(log_rows(X)).components_.T


def _check_sizes(n_features, n_components) -> None:
    for name, v in (("n_features", n_features), ("n_components", n_components)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")


def random_mixing(n_features: int, n_components: int, seed: int | None = 0) -> np.ndarray:
    """Random Gaussian directions: the chance level of the aligned ``|cos|``."""
    _check_sizes(n_features, n_components)
    return np.random.default_rng(seed).standard_normal((n_features, n_components))


def random_nonneg_mixing(n_features: int, n_components: int, seed=0) -> np.ndarray:
    """The data-free rule: random non-negative columns ``|N(0, 1)|`` ``(K, d)``.  It looks at no data, yet its aligned
    ``|cos|`` to a mostly positive mixing is high (about .69 at moderate and .76 at high coherence here): the chance
    level a mixing-recovery claim must clear (the referee's finding, issue 56)."""
    _check_sizes(n_features, n_components)
    return np.abs(np.random.default_rng(seed).standard_normal((n_features, n_components)))
