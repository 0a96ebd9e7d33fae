"""Baselines on ``log(X + 0.5)`` pooled over sequences and times (``(n T, K)`` rows): FastICA, Picard, PCA, and
random mixing directions (chance).  Each returns a ``(K, d)`` mixing estimate."""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["fastica_log", "picard_log", "pca_log", "random_mixing", "log_rows"]


def log_rows(X) -> np.ndarray:
    """``log(X + 0.5)`` as ``(n T, K)`` rows (the paper's baseline input)."""
    X = np.asarray(X, dtype=float)
    return np.log(X + 0.5).reshape(-1, X.shape[-1])


def fastica_log(X, n_components: int, *, max_iter: int = 1000, random_state: int | None = 0) -> np.ndarray:
    """scikit-learn ``FastICA(whiten="unit-variance")`` on ``log(X + 0.5)``; returns ``mixing_`` ``(K, d)``."""
    from sklearn.decomposition import FastICA

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ica = FastICA(
            n_components=n_components, whiten="unit-variance", max_iter=max_iter, random_state=random_state
        ).fit(log_rows(X))
    return ica.mixing_


def picard_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("picard") is not None


def picard_log(X, n_components: int, *, max_iter: int = 1000, random_state: int | None = 0) -> np.ndarray:
    """python-picard ``Picard(ortho=True)`` (FastICA's fixed point, faster solver) on ``log(X + 0.5)``."""
    from picard import Picard

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ica = Picard(n_components=n_components, max_iter=max_iter, random_state=random_state).fit(log_rows(X))
    return ica.mixing_


def pca_log(X, n_components: int) -> np.ndarray:
    """The top ``d`` principal directions of ``log(X + 0.5)`` (orthonormal columns)."""
    from sklearn.decomposition import PCA

    return PCA(n_components=n_components).fit(log_rows(X)).components_.T


def random_mixing(n_features: int, n_components: int, seed: int | None = 0) -> np.ndarray:
    """Random Gaussian directions: the chance level of the aligned ``|cos|``."""
    return np.random.default_rng(seed).standard_normal((n_features, n_components))
