"""Baselines the paper compares against, with the same ``fit`` / ``coef_`` / ``labels_`` / ``se_`` surface.

* :class:`PersonalizedDML` -- per-task DML, no pooling (DoubleMLPLR / DoubleMLIRM run task by task).
* :class:`OracleClusterDML` -- pooled DML within the *true* clusters (infeasible; the efficiency target).
* :class:`ARMULLike` -- a K-given clustered multitask learner in the spirit of ARMUL (Duan & Wang 2023):
  alternating minimisation of ``sum_j n_j f_j(beta_{z_j})`` over assignments ``z`` and cluster targets
  ``beta``, started from weighted k-means (scikit-learn ``KMeans``, ``n_init`` restarts) on the per-task
  estimates, then a pooled orthogonal refit.  A 1-D reduction (ARMUL has no PyPI implementation).
* :class:`UniformFusion` -- MeTaG-style fusion with one penalty ``lam`` on every pair (no adaptivity, no
  refit); solved by the same ADMM.
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

from .estimator import MultitaskDMLBase, _check_choice, _check_positive
from .fusion import fused_pairwise_admm
from .scores import CrossFitScores

__all__ = ["PersonalizedDML", "OracleClusterDML", "ARMULLike", "UniformFusion"]


class PersonalizedDML(MultitaskDMLBase):
    """Per-task cross-fitted DML: ``coef_[j] = -sum psi_b / sum psi_a`` over task ``j``; ``labels_ = 0..m-1``.

    No pooling: the baseline every multitask method must beat.
    """

    def __init__(
        self,
        model: str = "plr",
        ml_l=None,
        ml_m=None,
        n_folds: int = 2,
        n_rep: int = 1,
        random_state: int | None = None,
    ):
        self.model = model
        self.ml_l = ml_l
        self.ml_m = ml_m
        self.n_folds = n_folds
        self.n_rep = n_rep
        self.random_state = random_state

    def _fit_scores(self, scores: CrossFitScores) -> None:
        self._set_pooled_clusters(scores, np.arange(scores.n_tasks))


class OracleClusterDML(MultitaskDMLBase):
    """Pooled DML within known clusters ``labels`` (length m): the oracle of the paper's Section 4."""

    def __init__(
        self,
        labels,
        model: str = "plr",
        ml_l=None,
        ml_m=None,
        n_folds: int = 2,
        n_rep: int = 1,
        random_state: int | None = None,
    ):
        self.labels = labels
        self.model = model
        self.ml_l = ml_l
        self.ml_m = ml_m
        self.n_folds = n_folds
        self.n_rep = n_rep
        self.random_state = random_state

    def _fit_scores(self, scores: CrossFitScores) -> None:
        lab = np.asarray(self.labels)
        if lab.shape != (scores.n_tasks,):
            raise ValueError(f"labels must have shape ({scores.n_tasks},) (one per task), got {lab.shape}")
        self._set_pooled_clusters(scores, lab)


class ARMULLike(MultitaskDMLBase):
    """Clustered multitask DML with a given number of clusters ``n_clusters`` (ARMUL-like, 1-D reduction).

    Minimises ``sum_j n_j a_j (beta_{z_j} - b_j)^2`` (the per-task orthogonal losses summed over samples) by
    weighted k-means on ``b_j`` with weights ``n_j a_j`` (``n_init`` restarts), then alternates
    ``beta_k <- pooled DML of cluster k`` and ``z_j <- argmin_k f_j(beta_k)`` until the assignment is stable,
    and reports the pooled orthogonal refit per cluster.
    """

    def __init__(
        self,
        n_clusters: int,
        model: str = "plr",
        ml_l=None,
        ml_m=None,
        n_folds: int = 2,
        n_rep: int = 1,
        n_init: int = 10,
        max_alternations: int = 50,
        random_state: int | None = None,
    ):
        self.n_clusters = n_clusters
        self.model = model
        self.ml_l = ml_l
        self.ml_m = ml_m
        self.n_folds = n_folds
        self.n_rep = n_rep
        self.n_init = n_init
        self.max_alternations = max_alternations
        self.random_state = random_state

    def _fit_scores(self, scores: CrossFitScores) -> None:
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= scores.n_tasks:
            raise ValueError(f"n_clusters must be an integer in [1, m={scores.n_tasks}], got {k!r}")
        b, w = scores.b, scores.a * scores.n
        km = KMeans(n_clusters=int(k), n_init=self.n_init, random_state=self.random_state)
        z = km.fit_predict(b[:, None], sample_weight=w)
        for _ in range(self.max_alternations):
            used = np.unique(z)
            beta = np.array([scores.pooled(np.flatnonzero(z == c))[0] for c in used])
            z_new = used[np.argmin(np.abs(b[:, None] - beta[None, :]), axis=1)]
            if np.array_equal(z_new, z):
                break
            z = z_new
        self._set_pooled_clusters(scores, z)


class UniformFusion(MultitaskDMLBase):
    """Non-adaptive fusion (MeTaG-like): ``min sum_j s_j f_j(theta_j) + lam sum_{j<j'} |theta_j - theta_j'|``.

    The fused solution is reported as is (no refit); ``labels_`` are the exactly fused groups.
    """

    def __init__(
        self,
        lam: float = 0.01,
        model: str = "plr",
        ml_l=None,
        ml_m=None,
        n_folds: int = 2,
        n_rep: int = 1,
        loss_scale: str = "mean",
        random_state: int | None = None,
    ):
        self.lam = lam
        self.model = model
        self.ml_l = ml_l
        self.ml_m = ml_m
        self.n_folds = n_folds
        self.n_rep = n_rep
        self.loss_scale = loss_scale
        self.random_state = random_state

    def _fit_scores(self, scores: CrossFitScores) -> None:
        _check_positive("lam", self.lam, allow_zero=True)
        _check_choice("loss_scale", self.loss_scale, ("mean", "sum"))
        A = scores.a * (scores.n if self.loss_scale == "sum" else 1.0)
        sol = fused_pairwise_admm(A, scores.b, float(self.lam))
        self.fused_coef_ = sol.theta
        self._set_task_coefs(scores, sol.labels, sol.theta, A)
