"""Baselines the paper compares the reliability score against.

* single-sample metrics: the average metric over ``K`` generated samples (the usual evaluation) and the
  worst of those ``K`` samples (:func:`sample_metrics`);
* other set constructions with the same optimizer: the PCP union of balls and the isotropic ball, both
  available as ``ConformalReliability(..., set_type="pcp" | "ball")``.
"""

from __future__ import annotations

import numpy as np
import torch

from ._reliability import ConformalReliability

__all__ = ["sample_metrics", "average_metric", "worst_of_k"]


def sample_metrics(rel: ConformalReliability, x, latent_samples=None) -> np.ndarray:
    """Metric values ``m(x, z_k)`` of ``K = rel.n_samples`` encoded generator samples for ``x``.

    The samples are ``rel.latent_samples(x)`` (the shared samples the set and the reliability of ``x`` use, by
    default) unless ``latent_samples`` (shape ``(K, d)``) are given.
    """
    Z = rel.latent_samples(x) if latent_samples is None else np.asarray(latent_samples, dtype=float)
    with torch.no_grad():
        v = rel.metric(x, torch.as_tensor(Z, dtype=torch.float64))
    if not isinstance(v, torch.Tensor):
        raise TypeError(f"metric must return a torch.Tensor of shape (n,), got {type(v).__name__}")
    return np.asarray(v.detach().cpu().numpy(), dtype=float).reshape(len(Z))


def average_metric(rel: ConformalReliability, X) -> np.ndarray:
    """Per condition, the mean single-sample metric ``(1/K) sum_k m(x, z_k)`` (average-case quality)."""
    return np.array([sample_metrics(rel, x).mean() for x in X])


def worst_of_k(rel: ConformalReliability, X) -> np.ndarray:
    """Per condition, ``min_k m(x, z_k)``: the worst of ``K`` generated samples (no coverage guarantee)."""
    return np.array([sample_metrics(rel, x).min() for x in X])
