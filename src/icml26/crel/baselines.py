"""Baselines the paper compares the reliability score against.

* single-sample metrics: the average metric over ``K`` generated samples (the usual evaluation) and the
  worst of those ``K`` samples (:func:`sample_metrics`);
* other set constructions with the same optimizer: the PCP union of balls and the isotropic ball, both
  available as ``ConformalReliability(..., set_type="pcp" | "ball")``, and the MAPIE-style ellipse with one
  covariance for every condition (:class:`GlobalCovarianceReliability`);
* the alpha-quantile of the ``K`` sample metrics (``numpy.quantile(sample_metrics(rel, x), alpha)``): the
  non-conformal "how bad can a likely output be".
"""

from __future__ import annotations

import numpy as np
import torch

from ._reliability import ConformalReliability

__all__ = ["sample_metrics", "average_metric", "worst_of_k", "GlobalCovarianceReliability"]


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


class GlobalCovarianceReliability(ConformalReliability):
    r"""The MAPIE-style standardized-residual ellipse: CReL's ellipsoid with **one covariance for every condition**.

    The set is ``{mu(x) + L_g u : ||u|| <= qhat}`` with ``mu(x)`` the mean of the ``K`` latent samples of ``x`` (as
    in CReL) but ``L_g = chol(Sigma_g)`` fixed: ``Sigma_g = (1 - lam) S_bar + lam (tr S_bar / d) I + eps I`` with
    ``S_bar`` the mean of the per-condition sample covariances over ``shape_conditions`` (the same shrinkage and
    ridge as the ellipsoid).  It is the ellipsoid minus exactly its per-condition shape, which is what CReL adds to
    an x-independent covariance score.  Use conditions disjoint from the calibration and test pairs (e.g. training
    conditions): the shape then does not depend on any calibration or test point, and split-conformal coverage
    holds as for the other set types.

    Parameters are those of :class:`ConformalReliability` (``set_type`` is always ``"ellipsoid"``) plus
    ``shape_conditions``: a non-empty sequence of conditions whose generator samples fix ``Sigma_g``, drawn when
    :meth:`conformalize` is called (from a stream separate from the calibration draws).

    Attributes (after :meth:`conformalize`): ``chol_`` (``L_g``); the attributes of :class:`ConformalReliability`.
    """

    def __init__(
        self,
        generator,
        encoder,
        metric,
        shape_conditions,
        confidence_level: float = 0.9,
        n_samples: int = 32,
        shrinkage: float = 0.1,
        eps: float = 1e-6,
        random_state: int | None = 0,
        **kwargs,
    ) -> None:
        if "set_type" in kwargs:
            raise TypeError("set_type is fixed to 'ellipsoid' for GlobalCovarianceReliability")
        super().__init__(
            generator, encoder, metric, confidence_level, n_samples, "ellipsoid", shrinkage, eps, random_state, **kwargs
        )
        if isinstance(shape_conditions, (str, bytes)) or not hasattr(shape_conditions, "__len__"):
            raise TypeError("shape_conditions must be a sequence or array of conditions")
        if len(shape_conditions) == 0:
            raise ValueError("shape_conditions must hold at least one condition")
        self.shape_conditions = shape_conditions

    def conformalize(self, X_cal, Y_cal) -> GlobalCovarianceReliability:
        self.__dict__.pop("latent_dim_", None)
        self.__dict__.pop("chol_", None)
        base = 0 if self.random_state is None else int(self.random_state)
        rng = np.random.default_rng([base % 2**32, 7919])  # separate from the calibration / test stream
        covs = []
        for x in self.shape_conditions:
            out = self.generator.sample(x, self.n_samples, rng)
            Z = self._encode(out, self.n_samples, f"generator samples of shape_conditions (n_samples={self.n_samples})")
            covs.append(np.cov(Z, rowvar=False, ddof=1).reshape(Z.shape[1], Z.shape[1]))
        S = np.mean(covs, axis=0)
        d = S.shape[0]
        Sigma = (1 - self.shrinkage) * S + self.shrinkage * (np.trace(S) / d) * np.eye(d) + self.eps * np.eye(d)
        self.chol_ = np.linalg.cholesky(Sigma)
        self.__dict__.pop("latent_dim_", None)
        super().conformalize(X_cal, Y_cal)
        return self

    def _shape(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        L = getattr(self, "chol_", None)
        if L is None:
            raise RuntimeError("call conformalize(X_cal, Y_cal) before building sets")
        if Z.shape[1] != L.shape[0]:
            raise ValueError(
                f"latent samples have d = {Z.shape[1]} but the global covariance from shape_conditions has "
                f"d = {L.shape[0]}"
            )
        return Z.mean(axis=0), L
