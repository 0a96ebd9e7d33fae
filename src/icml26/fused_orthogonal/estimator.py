"""The adaptive fused orthogonal estimator (Algorithm 1) and the shared multitask-DML surface.

Every estimator here follows scikit-learn: hyperparameters in ``__init__``, data in ``fit(tasks)``, learned
attributes ending in ``_``.  After ``fit``:

* ``coef_`` (m,) -- the estimate of each task's target ``theta_j``;
* ``labels_`` (m,) -- the recovered cluster of each task (numbered by first appearance);
* ``cluster_coef_``, ``cluster_se_`` (K^,) -- one estimate and standard error per recovered cluster;
* ``se_`` (m,) -- the standard error attached to each task's estimate; ``confint(alpha)`` Wald intervals;
* ``scores_`` -- the cross-fitted :class:`~icml26.fused_orthogonal.scores.CrossFitScores`.

``fit_scores(scores)`` fits from already cross-fitted scores, so several estimators can share one set of
nuisance fits (the reproduction does this: identical nuisances for the method and every baseline).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from .data import TaskData
from .fusion import (
    ChainingWarning,
    FusedSolution,
    adaptive_fusion_weights,
    fused_pairwise_admm,
    merge_homogeneous_clusters,
    split_chained_clusters,
)
from .scores import CrossFitScores, cross_fit_scores, make_score

__all__ = ["AdaptiveFusedOrthogonal"]


def _check_choice(name: str, value, choices: tuple) -> None:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def _check_positive(name: str, value, allow_zero: bool = False) -> None:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    ok = ok and np.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise ValueError(f"{name} must be a finite number {'>= 0' if allow_zero else '> 0'}, got {value!r}")


def _first_appearance(labels: np.ndarray) -> np.ndarray:
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inv]


class MultitaskDMLBase(BaseEstimator):
    """Shared ``fit`` / inference surface.  Subclasses implement ``_fit_scores(scores)``."""

    def _check_common(self) -> None:
        _check_choice("model", self.model, ("plr", "irm"))
        n = self.n_folds
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
            raise ValueError(f"n_folds must be an integer >= 2, got {n!r}")
        r = getattr(self, "n_rep", 1)
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
            raise ValueError(f"n_rep must be an integer >= 1, got {r!r}")

    def fit(self, tasks: Sequence[TaskData]):
        """Cross-fit every task's nuisances (``n_folds`` folds, ``n_rep`` repeated splits, learners ``clone()``-d
        per fold), then fit."""
        self._check_common()
        score = make_score(self.model, self.ml_l, self.ml_m)
        scores = cross_fit_scores(
            tasks, score, n_folds=self.n_folds, random_state=self.random_state, n_rep=getattr(self, "n_rep", 1)
        )
        return self.fit_scores(scores)

    def fit_scores(self, scores: CrossFitScores):
        """Fit from already cross-fitted score elements (see :func:`cross_fit_scores`)."""
        self._check_common()
        if not isinstance(scores, CrossFitScores):
            raise TypeError(f"scores must be a CrossFitScores, got {type(scores).__name__}")
        if scores.model and scores.model != self.model:
            raise ValueError(f"scores were cross-fitted for model={scores.model!r} but model={self.model!r}")
        self.scores_ = scores
        self.n_tasks_ = scores.n_tasks
        self._fit_scores(scores)
        return self

    # -- helpers for subclasses -----------------------------------------------------------------------------
    def _set_pooled_clusters(self, scores: CrossFitScores, labels: np.ndarray) -> None:
        """Pooled orthogonal refit per cluster: ``theta_k = -sum psi_b / sum psi_a`` over its data."""
        labels = _first_appearance(np.asarray(labels))
        k = labels.max() + 1
        est = [scores.pooled(np.flatnonzero(labels == c)) for c in range(k)]
        self.labels_ = labels
        self.n_clusters_ = int(k)
        self.cluster_coef_ = np.array([e[0] for e in est])
        self.cluster_se_ = np.array([e[1] for e in est])
        self.coef_ = self.cluster_coef_[labels]
        self.se_ = self.cluster_se_[labels]

    def _set_task_coefs(
        self, scores: CrossFitScores, labels: np.ndarray, coef: np.ndarray, weights: np.ndarray
    ) -> None:
        """Keep per-task ``coef``; clusters get the ``weights``-weighted mean and the sandwich SE there."""
        labels = _first_appearance(np.asarray(labels))
        k = labels.max() + 1
        self.labels_ = labels
        self.n_clusters_ = int(k)
        self.coef_ = np.asarray(coef, dtype=float).copy()
        self.cluster_coef_ = np.array([np.average(coef[labels == c], weights=weights[labels == c]) for c in range(k)])
        self.cluster_se_ = np.array(
            [scores.se_at(np.flatnonzero(labels == c), self.cluster_coef_[c]) for c in range(k)]
        )
        self.se_ = np.array([scores.se_at(np.flatnonzero(labels == labels[j]), coef[j]) for j in range(len(coef))])

    # -- inference -----------------------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(tasks) first")

    def confint(self, alpha: float = 0.05) -> np.ndarray:
        """Wald intervals ``coef_ -/+ z_{1-alpha/2} se_`` per task, shape (m, 2)."""
        self._check_fitted()
        if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
            raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
        z = norm.ppf(1.0 - alpha / 2.0)
        return np.column_stack([self.coef_ - z * self.se_, self.coef_ + z * self.se_])

    def cluster_confint(self, alpha: float = 0.05) -> np.ndarray:
        """Wald intervals per recovered cluster, shape (K^, 2)."""
        self._check_fitted()
        if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
            raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
        z = norm.ppf(1.0 - alpha / 2.0)
        return np.column_stack([self.cluster_coef_ - z * self.cluster_se_, self.cluster_coef_ + z * self.cluster_se_])

    def summary(self, alpha: float = 0.05) -> str:
        """A per-cluster table (like DoubleML's ``summary``): coef, std err, z, P>|z|, CI and member tasks."""
        ci = self.cluster_confint(alpha)
        lo, hi = f"{alpha / 2:.1%}", f"{1 - alpha / 2:.1%}"
        head = f"{'cluster':>7} {'n_tasks':>7} {'coef':>9} {'std err':>9} {'z':>8} {'P>|z|':>8} {lo:>9} {hi:>9}  tasks"
        lines = [
            f"{type(self).__name__} (model={self.model!r}, {self.n_tasks_} tasks, {self.n_clusters_} clusters)",
            head,
        ]
        for c in range(self.n_clusters_):
            members = np.flatnonzero(self.labels_ == c)
            z = self.cluster_coef_[c] / self.cluster_se_[c]
            p = 2 * norm.sf(abs(z))
            shown = ",".join(map(str, members[:12])) + (",..." if len(members) > 12 else "")
            lines.append(
                f"{c:>7d} {len(members):>7d} {self.cluster_coef_[c]:>9.4f} {self.cluster_se_[c]:>9.4f} "
                f"{z:>8.2f} {p:>8.3g} {ci[c, 0]:>9.4f} {ci[c, 1]:>9.4f}  {shown}"
            )
        return "\n".join(lines)


class AdaptiveFusedOrthogonal(MultitaskDMLBase):
    """Adaptive fused orthogonal estimator for clustered multitask semiparametric models.

    Chen & Mukherjee, ICML 2026.

    Algorithm (our reading of the paper's Algorithm 1, with R-fold cross-fitting as in its Appendix J):

    1. cross-fit each task's nuisances and form its orthogonal loss ``f_j(theta) = a_j (theta - b_j)^2``;
    2. pilots ``theta_j^init`` (``pilot="dml"``: the per-task DML estimates ``b_j``) give adaptive weights
       ``lambda_{jj'} = w_{jj'} 1{w_{jj'} > tau} + eps_n 1{w_{jj'} <= tau}``,
       ``w_{jj'} = c_w |theta_j^init - theta_j'^init|^(-gamma)`` (:func:`adaptive_fusion_weights`);
    3. solve ``min sum_j s_j f_j(theta_j) + sum_{j<j'} lambda_{jj'} |theta_j - theta_j'|`` by ADMM
       (:func:`fused_pairwise_admm`; ``s_j = 1`` for ``loss_scale="mean"``, ``n_j`` for ``"sum"``);
       clusters are the connected components of the exactly fused pairs;
    3b. chaining guard (ours, issue 23; :func:`split_chained_clusters`): a cluster whose pilot range exceeds
       twice the fuse radius was joined by a chain of close pairs; ``chain_guard="split"`` splits it at its
       fewest homogeneous groups (exact 1-D k-means) when Cochran's test rejects at level ``guard_alpha``,
       then merges neighbouring clusters whose union the same test accepts (:func:`merge_homogeneous_clusters`),
       ``"warn"`` keeps it and raises a :class:`ChainingWarning`, ``"none"`` is the paper's rule;
    4. ``refit="pooled"``: re-solve the pooled orthogonal score in each cluster,
       ``theta_k = -sum psi_b / sum psi_a``, sandwich SE ``sqrt(sum psi^2)/|sum psi_a|`` (the oracle's form);
       ``refit="none"`` keeps the fused solution (the paper's Stage-2 estimate; it needs ``chain_guard="none"``
       or ``"warn"``: the guard changes labels, not the fused coefficients, so a split cluster would keep one
       coefficient).

    ``c_w="auto"`` (ours, not the paper's) sets a per-pair ``c_w`` so that the fuse radius is
    ``kappa * sqrt(se_j^2 + se_j'^2)`` from the pilots' standard errors; the paper's fixed ``c_w=0.1, tau=10``
    give a radius of 0.1, tuned to ``n_j`` in the thousands.

    Parameters
    ----------
    model : ``"plr"`` (partially linear, :class:`PLRScore`) or ``"irm"`` (ATE, :class:`IRMScore`).
    ml_l, ml_m : sklearn learners for the outcome and treatment nuisances (``None``: fast spline defaults).
    n_folds : cross-fitting folds per task (>= 2).
    gamma, c_w, tau, eps_n : adaptive-weight constants (paper defaults 2, 0.1, 10, 1e-12); ``c_w`` may be
        ``"auto"``.  kappa : fuse radius in pilot standard errors when ``c_w="auto"``.
    n_rep : repeated cross-fits (DoubleML's ``n_rep``); pilots, losses and pooled estimates aggregate them
        (median estimate, median upper bound for the SE, as DoubleML).
    pilot : ``"dml"`` or an array (m,) of user pilots.  refit : ``"pooled"`` or ``"none"``.
    chain_guard : ``"split"``, ``"warn"`` or ``"none"``; guard_alpha : level in (0, 1] of its homogeneity test
        (``1``: split every cluster wider than twice the radius).
    loss_scale : ``"mean"`` or ``"sum"`` (how each task's loss is scaled in step 3).
    fusion : ``"admm"`` (step 3, the method) or ``"none"`` (the control arm "pilots + merge, no fusion": step 3
        skipped, every task starts as its own cluster, so with ``chain_guard="split"`` the clusters are the
        pilots merged by Cochran's test alone, :func:`merge_homogeneous_clusters`) or ``"shuffled"`` (a control
        arm: ADMM with the adaptive weights permuted over the tasks, seeded by ``random_state``, so the fusion
        carries no information about which pilots are close; guard and refit as the method) or ``"one"`` (a
        control arm: step 3 replaced by "every task in one cluster", so the clusters are whatever the guard makes
        of a single all-task cluster).
    rho, tol, max_iter : ADMM settings.  random_state : seeds the fold splits.
    """

    def __init__(
        self,
        model: str = "plr",
        ml_l=None,
        ml_m=None,
        n_folds: int = 2,
        n_rep: int = 1,
        gamma: float = 2.0,
        c_w: float | str = 0.1,
        tau: float = 10.0,
        eps_n: float = 1e-12,
        kappa: float = 3.0,
        pilot: str | np.ndarray = "dml",
        refit: str = "pooled",
        chain_guard: str = "split",
        guard_alpha: float = 0.01,
        loss_scale: str = "mean",
        fusion: str = "admm",
        rho: float = 1.0,
        tol: float = 1e-8,
        max_iter: int = 20_000,
        random_state: int | None = None,
    ) -> None:
        self.model = model
        self.ml_l = ml_l
        self.ml_m = ml_m
        self.n_folds = n_folds
        self.n_rep = n_rep
        self.gamma = gamma
        self.c_w = c_w
        self.tau = tau
        self.eps_n = eps_n
        self.kappa = kappa
        self.pilot = pilot
        self.refit = refit
        self.chain_guard = chain_guard
        self.guard_alpha = guard_alpha
        self.loss_scale = loss_scale
        self.fusion = fusion
        self.rho = rho
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _check_params(self) -> None:
        _check_positive("gamma", self.gamma)
        _check_positive("tau", self.tau)
        _check_positive("eps_n", self.eps_n, allow_zero=True)
        if self.eps_n > self.tau:
            raise ValueError(f"eps_n must lie in [0, tau={self.tau}], got {self.eps_n!r}")
        if isinstance(self.c_w, str):
            _check_choice("c_w", self.c_w, ("auto",))
        else:
            _check_positive("c_w", self.c_w)
        _check_positive("kappa", self.kappa)
        _check_choice("refit", self.refit, ("pooled", "none"))
        _check_choice("chain_guard", self.chain_guard, ("split", "warn", "none"))
        ga = self.guard_alpha
        if isinstance(ga, bool) or not isinstance(ga, (int, float)) or not 0.0 < ga <= 1.0:
            raise ValueError(f"guard_alpha must lie in (0, 1], got {ga!r}")
        _check_choice("loss_scale", self.loss_scale, ("mean", "sum"))
        _check_choice("fusion", self.fusion, ("admm", "none", "shuffled", "one"))
        if self.refit == "none" and self.chain_guard == "split":
            raise ValueError(
                "refit='none' keeps the fused coefficients, which chain_guard='split' cannot change (it would split "
                "the labels of a cluster that keeps one coefficient): use chain_guard='none' (the paper's rule) or "
                "'warn' with refit='none', or refit='pooled'"
            )

    def _pilots(self, scores: CrossFitScores) -> np.ndarray:
        if isinstance(self.pilot, str):
            _check_choice("pilot", self.pilot, ("dml",))
            return scores.b
        p = np.asarray(self.pilot, dtype=float)
        if p.shape != (scores.n_tasks,) or not np.all(np.isfinite(p)):
            raise ValueError(f"pilot must be 'dml' or a finite array of shape ({scores.n_tasks},), got shape {p.shape}")
        return p

    def fuse_radius(self, scores: CrossFitScores) -> float | np.ndarray:
        """The fuse radius ``(c_w / tau)^(1/gamma)``: pilots closer than it get a large penalty (an (m, m) array
        of per-pair radii ``kappa sqrt(se_j^2 + se_j'^2)`` for ``c_w="auto"``)."""
        self._check_params()
        if isinstance(self.c_w, str):
            se = np.array([scores.pooled([j])[1] for j in range(scores.n_tasks)])
            return self.kappa * np.sqrt(se[:, None] ** 2 + se[None, :] ** 2)
        return float((self.c_w / self.tau) ** (1.0 / self.gamma))

    def fusion_problem(self, scores: CrossFitScores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(A, b, lambda)`` of the fusion problem this estimator solves on ``scores``."""
        self._check_params()
        pilots = self._pilots(scores)
        if isinstance(self.c_w, str):  # "auto": fuse radius kappa * sqrt(se_j^2 + se_j'^2)
            c_w = self.tau * self.fuse_radius(scores) ** self.gamma
        else:
            c_w = float(self.c_w)
        lam = adaptive_fusion_weights(pilots, c_w=c_w, gamma=self.gamma, tau=self.tau, eps_n=self.eps_n)
        if self.fusion == "shuffled":  # control arm: the same weights, given to randomly relabelled task pairs
            perm = np.random.default_rng(self.random_state).permutation(len(pilots))
            lam = lam[np.ix_(perm, perm)]
        A = scores.a * (scores.n if self.loss_scale == "sum" else 1.0)
        return A, scores.b, lam

    def _fit_scores(self, scores: CrossFitScores) -> None:
        A, b, lam = self.fusion_problem(scores)
        if self.fusion == "none":  # the control arm: no fusion step, every task its own cluster before the guard
            theta = np.array(self._pilots(scores), dtype=float)
            sol = FusedSolution(theta, np.arange(len(b)), n_iter=0, converged=True, objective=float("nan"))
        elif self.fusion == "one":  # the control arm "one cluster + guard": every task fused, before the guard
            theta = np.full(len(b), np.average(self._pilots(scores), weights=A))
            sol = FusedSolution(theta, np.zeros(len(b), dtype=int), n_iter=0, converged=True, objective=float("nan"))
        else:
            sol = fused_pairwise_admm(A, b, lam, rho=self.rho, tol=self.tol, max_iter=self.max_iter)
        if not sol.converged:
            warnings.warn(
                f"ADMM did not converge in max_iter={self.max_iter} iterations; increase max_iter or tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.pilot_ = self._pilots(scores)
        self.weights_ = lam
        self.fused_coef_ = sol.theta
        self.n_iter_ = sol.n_iter
        labels = sol.labels
        self.chained_clusters_ = []
        if self.chain_guard != "none" and np.ndim(self.pilot_) == 1:
            pilot_se = np.array([scores.pooled([j])[1] for j in range(scores.n_tasks)])
            split, _ = split_chained_clusters(
                labels, self.pilot_, pilot_se, self.fuse_radius(scores), alpha=self.guard_alpha
            )
            # the fused clusters the guard breaks up: wider than 2 x radius and not homogeneous
            self.chained_clusters_ = [
                np.flatnonzero(labels == c).tolist()
                for c in np.unique(labels)
                if np.unique(split[labels == c]).size > 1
            ]
            if self.chain_guard == "split":  # split chains, then merge back over-split homogeneous neighbours
                labels = merge_homogeneous_clusters(split, self.pilot_, pilot_se, alpha=self.guard_alpha)
            elif self.chained_clusters_:
                first = self.chained_clusters_[0]
                warnings.warn(
                    f"{len(self.chained_clusters_)} fused cluster(s) span more than twice the fuse radius and "
                    f"their tasks are not homogeneous (Cochran's Q at level {self.guard_alpha:g}): chaining "
                    f"(tasks {first[:10]}{'...' if len(first) > 10 else ''}); chain_guard='split' splits them",
                    ChainingWarning,
                    stacklevel=3,
                )
        self.n_chained_ = len(self.chained_clusters_)
        if self.refit == "pooled":
            self._set_pooled_clusters(scores, labels)
        else:
            labels = _first_appearance(labels)
            avg = np.array([np.average(sol.theta[labels == c], weights=A[labels == c]) for c in labels])
            self._set_task_coefs(scores, labels, avg, A)
