"""Baselines with CREATOR's surface: LiNGCReL-style matching, pooled FastICA, DirectLiNGAM on pooled data.

* :class:`LiNGCReLLike` -- LiNGCReL (Jin & Syrgkanis, NeurIPS 2024) assumes that each latent's noise law is the
  same in every environment and differs between latents, and uses it to match ICA components across
  environments.  We match each environment's components to environment 0's by a sign-invariant quantile
  distance (Hungarian), then run the SAME ordering / pruning / disentanglement steps as CREATOR on the matched
  groups, so the comparison isolates the one assumption the paper relaxes (how rows are matched).  LiNGCReL's
  own effect-cancellation ordering is not reimplemented (no public package; our reading of it).
* :class:`PooledICA` -- FastICA on the pooled, environment-centred data: ignores environments.  Its components
  estimate independent sources, not causally related latents, so its graph is empty.
* :class:`CREATORNoIntersection` -- CREATOR without its disentanglement step: each latent's feature is the unit
  vector of its own row span (node plus parents) with the largest component outside the earlier nodes' span, never
  intersected with its children's spans.  The ablation that isolates what the intersection step contributes.
* :class:`CREATORRandomIntersection` -- step 3 intersects with the spans of random later non-children (as many
  as the children): the control of the disentanglement claim.
* :class:`CREATORNoPruning` -- step 2 skipped (every earlier node a parent: the complete DAG in CREATOR's order):
  the control of the SHD claims.
* :class:`SingleEnvironmentICA` -- FastICA fitted on ONE environment (``environment``, default 0) and applied to
  all: the strongest simple alternative to using many environments (no matching, no graph: empty adjacency).
* :class:`PooledDirectLiNGAM` -- ``lingam.DirectLiNGAM`` on pooled variables (LiNGAM assumes the causal
  variables are observed; the reproduction gives it the true latents as a graph-only reference).  Needs
  ``lingam`` (``pip install 'icml26[causal]'``).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from ._linalg import collinearity, top_direction, unit_rows
from .creator import (
    CREATOR,
    LinearCRLBase,
    _check_float,
    _check_int,
    _EnvironmentCRL,
    _negentropy,
    _seeds,
    check_environments,
    split_by_groups,
)

__all__ = [
    "LiNGCReLLike",
    "PooledICA",
    "PooledDirectLiNGAM",
    "CREATORNoIntersection",
    "CREATORNoPruning",
    "CREATORRandomIntersection",
    "SingleEnvironmentICA",
    "match_by_distribution",
]

_QUANTILES = np.linspace(0.02, 0.98, 49)


def _quantiles(S: np.ndarray) -> np.ndarray:
    """Quantiles of each standardised column of ``S`` and of its negation: ``(d, 2, len(_QUANTILES))``."""
    S = (S - S.mean(0)) / np.maximum(S.std(0), 1e-12)
    q = np.quantile(S, _QUANTILES, axis=0).T
    return np.stack([q, -q[:, ::-1]], axis=1)


def match_by_distribution(sources: list[np.ndarray]) -> list[list[int]]:
    """Match every environment's ICA sources to environment 0's by the sign-invariant quantile distance
    ``min(||Q_a - Q_b||, ||Q_a - Q_{-b}||)`` (Hungarian).  Returns ``groups[i][k]`` = the source of env ``k``
    matched to source ``i`` of env 0."""
    ref = _quantiles(sources[0])[:, 0]
    d = ref.shape[0]
    groups = [[i] for i in range(d)]
    for S in sources[1:]:
        q = _quantiles(S)
        cost = np.min(np.linalg.norm(ref[:, None, None, :] - q[None, :, :, :], axis=-1), axis=-1)  # (d, d)
        rows, cols = linear_sum_assignment(cost)
        for i, j in zip(rows, cols):
            groups[i].append(int(j))
    return groups


class LiNGCReLLike(_EnvironmentCRL):
    """LiNGCReL-style estimator: match ICA components across environments by their distributions, then order,
    prune and disentangle as :class:`~icml26.linear_crl.CREATOR` (same parameters and attributes)."""

    def __init__(
        self,
        n_latent: int,
        rank_tol: float = 0.15,
        intersect_tol: float = 0.2,
        ica_restarts: int = 1,
        max_iter: int = 1000,
        tol: float = 1e-4,
        random_state=None,
    ) -> None:
        self.n_latent = n_latent
        self.rank_tol = rank_tol
        self.intersect_tol = intersect_tol
        self.ica_restarts = ica_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _order(self, rows, Xw):
        d, K = int(self.n_latent), len(rows)
        matched = match_by_distribution([X @ r.T for X, r in zip(Xw, rows)])
        self.matching_ = np.array(matched)
        unused = list(range(d))
        Q = np.zeros((d, 0))
        groups, scores, runner = [], [], []
        for _ in range(d):
            P_perp = np.eye(d) - Q @ Q.T
            sc = []
            for i in unused:
                M = np.array([rows[k][matched[i][k]] for k in range(K)]) @ P_perp
                sc.append(collinearity(M))
            o = np.argsort(sc)
            i = unused.pop(int(o[0]))
            scores.append(sc[o[0]])
            runner.append(sc[o[1]] if len(o) > 1 else np.nan)
            groups.append(list(matched[i]))
            q = P_perp @ top_direction(np.array([rows[k][matched[i][k]] for k in range(K)]) @ P_perp)
            Q = np.column_stack([Q, q / np.linalg.norm(q)])
        return groups, Q, scores, runner


class PooledICA(LinearCRLBase):
    """FastICA on all environments pooled (environment labels ignored); ``adjacency_matrix_`` is empty because
    ICA's components are independent by assumption.  ``ica_restarts`` restarts, the best negentropy kept."""

    _min_envs_is_d = False

    def __init__(
        self, n_latent: int, ica_restarts: int = 1, max_iter: int = 1000, tol: float = 1e-4, random_state=None
    ) -> None:
        self.n_latent = n_latent
        self.ica_restarts = ica_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        _check_int("ica_restarts", self.ica_restarts, 1)
        _check_int("max_iter", self.max_iter, 1)
        _check_float("tol", self.tol, 0.0)

    def fit(self, Xs, y=None, groups=None):
        """Fit FastICA on ``np.vstack`` of the environment-centred, pooled-whitened ``Xs`` (or ``X`` with
        ``groups``)."""
        Xs = self._validate(Xs, groups)
        Z = np.vstack(self._whiten(Xs))
        d = int(self.n_latent)
        best, warned = None, 0
        for seed in _seeds(self.random_state, self.ica_restarts):
            ica = FastICA(
                n_components=d,
                whiten="unit-variance",
                fun="logcosh",
                max_iter=self.max_iter,
                tol=self.tol,
                random_state=seed,
            )
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always", ConvergenceWarning)
                S = ica.fit_transform(Z)
            warned += sum(issubclass(x.category, ConvergenceWarning) for x in w)
            J = _negentropy(S)
            if best is None or J > best[0]:
                best = (J, ica.components_.copy(), int(ica.n_iter_))
        self.ica_ = {"n_iter": [best[2]], "convergence_warnings": warned, "contrast": [best[0]]}
        self._set_graph(unit_rows(best[1]), np.zeros((d, d), dtype=int), list(range(d)))
        return self


class CREATORNoIntersection(CREATOR):
    """CREATOR with step 3 (subspace intersection with the children's spans) skipped: same parameters, ICA, ordering
    and pruning; latent ``t``'s feature is the unit vector of ``U_t = span(rows of t)`` with the largest component in
    ``V_{t-1}^perp``, so it mixes ``y_t`` with all of its parents, not only ``sur(t)``."""

    _disentangle = False


class CREATORRandomIntersection(CREATOR):
    """CREATOR with step 3 pointed at the wrong nodes: each latent's row span is intersected with the spans of
    randomly chosen LATER nodes that are NOT its estimated children (as many as it has children; fewer when fewer
    exist), all else unchanged.  The control of the disentanglement claim: it keeps the intersection machinery and
    the number of intersections, and removes only what the claim credits -- that the children are the right
    partners.  The choice is drawn from ``random_state``."""

    def _fit_rows(self, rows, Xw):
        self._partner_rng = np.random.default_rng(_seeds(self.random_state, 1)[0])
        return super()._fit_rows(rows, Xw)

    def _partners(self, t: int, B: np.ndarray):
        children = np.flatnonzero(B[:, t])
        others = [c for c in range(t + 1, B.shape[0]) if not B[c, t]]
        return [int(c) for c in self._partner_rng.permutation(others)[: len(children)]]


class CREATORNoPruning(CREATOR):
    """CREATOR with step 2 (pruning) skipped: every earlier node in its order is a parent, so the graph is the
    complete DAG in CREATOR's order (step 3 then intersects with every later node).  The control of the SHD claims:
    it keeps the order and removes only what they credit, the rank-drop pruning."""

    def _prune(self, C: np.ndarray):
        _, stat = super()._prune(C)
        return list(range(C.shape[1] - 1)), stat


class SingleEnvironmentICA(PooledICA):
    """FastICA on one environment's data only (``environment``, default 0), applied to every environment.

    With the weights changing across environments a single environment's unmixing separates that environment's
    noises, which are not the latents (``y = (I - B_k)^{-1} Omega_k z``): it is the strongest simple alternative to
    combining environments.  The graph is empty (ICA components are independent by assumption)."""

    def __init__(
        self,
        n_latent: int,
        environment: int = 0,
        ica_restarts: int = 1,
        max_iter: int = 1000,
        tol: float = 1e-4,
        random_state=None,
    ) -> None:
        super().__init__(n_latent, ica_restarts=ica_restarts, max_iter=max_iter, tol=tol, random_state=random_state)
        self.environment = environment

    def fit(self, Xs, y=None, groups=None):
        """Fit FastICA on ``Xs[environment]`` alone (``Xs`` as for every estimator here, any ``K >= 1``; with
        ``groups``, ``environment`` indexes the sorted labels)."""
        if groups is not None:
            Xs, self.environments_ = split_by_groups(Xs, groups)
        Xs = check_environments(Xs, _check_int("n_latent", self.n_latent, 1))
        e = self.environment
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or not 0 <= e < len(Xs):
            raise ValueError(f"environment must be an integer in [0, {len(Xs) - 1}] (an index of Xs), got {e!r}")
        super().fit([Xs[int(e)]])
        self.n_envs_ = len(Xs)
        return self


class PooledDirectLiNGAM(LinearCRLBase):
    """``lingam.DirectLiNGAM`` on the pooled, environment-centred variables it is given (environments ignored).

    LiNGAM assumes the causal variables are observed.  Fed the observations of this model (linear mixtures of the
    latents) it answers a different question; the reproduction feeds it the TRUE latents instead, as a reference
    for the graph alone ("the latents observed, the environments pooled": weights that change across
    environments make even that misspecified).  ``components_`` is the identity (the variables are the latents);
    ``adjacency_matrix_`` is lingam's, binarised at ``|b| > weight_threshold``.  Needs ``lingam``
    (``pip install 'icml26[causal]'``).
    """

    _min_envs_is_d = False

    def __init__(self, n_latent: int | None = None, weight_threshold: float = 0.0, random_state=None) -> None:
        self.n_latent = n_latent
        self.weight_threshold = weight_threshold
        self.random_state = random_state

    def fit(self, Xs, y=None, groups=None):
        """Fit DirectLiNGAM on ``np.vstack`` of the environment-centred ``Xs`` (``n_latent``: ``None`` or ``p``;
        or ``X`` with ``groups``)."""
        if groups is not None:
            Xs, self.environments_ = split_by_groups(Xs, groups)
        try:
            import lingam
        except ImportError as e:  # pragma: no cover - depends on the extra
            raise ImportError("PooledDirectLiNGAM needs lingam: pip install 'icml26[causal]'") from e
        w = self.weight_threshold
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not (np.isfinite(w) and w >= 0):
            raise ValueError(f"weight_threshold must be a finite number >= 0, got {w!r}")
        p = np.asarray(Xs[0]).shape[1] if isinstance(Xs, (list, tuple)) and len(Xs) else None
        if self.n_latent is not None and p is not None and self.n_latent != p:
            raise ValueError(f"n_latent must be None or the number of variables p={p}, got {self.n_latent!r}")
        Xs = check_environments(Xs, 1)
        d = Xs[0].shape[1]
        Z = np.vstack([X - X.mean(0) for X in Xs])
        model = lingam.DirectLiNGAM(random_state=self.random_state).fit(Z)
        self.lingam_ = model
        self.mean_ = np.vstack(Xs).mean(axis=0)
        self.whitening_ = np.eye(d)
        self.n_envs_ = len(Xs)
        self.n_features_in_ = d
        B = (np.abs(model.adjacency_matrix_) > w).astype(int)
        self._set_graph(np.eye(d), B, [int(o) for o in model.causal_order_])
        return self
