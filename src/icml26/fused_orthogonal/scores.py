"""Neyman-orthogonal scores with cross-fitted nuisances (DoubleML conventions).

Every score is linear in the target: ``psi(W; theta, eta) = psi_a(W; eta) * theta + psi_b(W; eta)``.  Solving
``sum_i psi_i = 0`` over a set of observations gives the (pooled) DML estimate
``theta = - sum psi_b / sum psi_a`` with the sandwich variance ``sum psi_i^2 / (sum psi_a)^2``.
Per task ``j`` the orthogonal loss ``f_j(theta) = a_j (theta - b_j)^2 + const`` with ``a_j = -mean_i psi_a``
and ``b_j = mean_i psi_b / a_j`` is the quadratic whose gradient is ``-2 mean_i psi_i``; these ``(a_j, b_j)``
are what the fusion step works with.

* :class:`PLRScore` -- partially linear model ``Y = theta D + g(X) + eps``, partialling-out score
  ``psi = ((Y - l(X)) - theta (D - m(X))) (D - m(X))`` with ``l = E[Y|X]``, ``m = E[D|X]`` (DoubleMLPLR).
* :class:`IRMScore` -- average treatment effect with binary ``D``, AIPW score
  ``psi = g1 - g0 + D (Y - g1)/m - (1 - D)(Y - g0)/(1 - m) - theta`` with ``g_d = E[Y|X, D=d]`` and the
  propensity ``m = P(D=1|X)`` clipped to ``[clip, 1 - clip]`` (DoubleMLIRM, ``score='ATE'``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, SplineTransformer

from .data import TaskData

__all__ = [
    "PLRScore",
    "IRMScore",
    "CrossFitScores",
    "cross_fit_scores",
    "aggregate_repetitions",
    "default_regressor",
    "default_classifier",
]


def _append_row_sum(x: np.ndarray) -> np.ndarray:
    return np.column_stack([x, x.sum(axis=1)])


def default_regressor():
    """Fast nuisance regressor: additive cubic splines (5 knots) on ``[X, sum_l X_l]`` + ``RidgeCV``."""
    return make_pipeline(
        FunctionTransformer(_append_row_sum),
        SplineTransformer(n_knots=5, degree=3),
        RidgeCV(alphas=np.logspace(-3, 3, 13)),
    )


def default_classifier():
    """Fast propensity classifier: the same spline features + L2 logistic regression (C=1)."""
    return make_pipeline(
        FunctionTransformer(_append_row_sum),
        SplineTransformer(n_knots=5, degree=3),
        LogisticRegression(C=1.0, max_iter=1000),
    )


class _Score:
    name = ""
    n_outcomes = 2

    def _check_task(self, task: TaskData, j: int) -> None:
        if not isinstance(task, TaskData):
            raise TypeError(f"tasks[{j}] must be a TaskData, got {type(task).__name__}")

    def folds(self, task: TaskData, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """``n_folds`` (train, test) index pairs that partition the task's samples."""
        kf = KFold(n_splits=n_folds, shuffle=True, random_state=seed)
        return list(kf.split(task.x))

    def fit_predict(self, task: TaskData, train: np.ndarray, test: np.ndarray) -> dict[str, np.ndarray]:
        raise NotImplementedError

    @staticmethod
    def elements(y: np.ndarray, d: np.ndarray, nuisance: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def cross_fit(
        self, task: TaskData, folds: Sequence[tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(psi_a, psi_b)`` per observation, each from nuisances fitted on the other folds."""
        psi_a = np.empty(task.n)
        psi_b = np.empty(task.n)
        for train, test in folds:
            nuis = self.fit_predict(task, train, test)
            psi_a[test], psi_b[test] = self.elements(task.y[test], task.d[test], nuis)
        return psi_a, psi_b


class PLRScore(_Score):
    """Partialling-out score of the partially linear model (DoubleMLPLR, ``score='partialling out'``).

    ``psi = ((Y - l(X)) - theta (D - m(X))) (D - m(X))``, so ``psi_a = -(D - m)^2`` and
    ``psi_b = (Y - l)(D - m)``.  ``ml_l`` learns ``l(X) = E[Y|X]``, ``ml_m`` learns ``m(X) = E[D|X]``
    (any sklearn regressors; ``None`` uses :func:`default_regressor`).  Learners are ``clone()``-d per fold.
    """

    name = "plr"

    def __init__(self, ml_l=None, ml_m=None) -> None:
        self.ml_l = default_regressor() if ml_l is None else ml_l
        self.ml_m = default_regressor() if ml_m is None else ml_m
        for nm, est in (("ml_l", self.ml_l), ("ml_m", self.ml_m)):
            if not (hasattr(est, "fit") and hasattr(est, "predict")):
                raise TypeError(f"{nm} must be an sklearn regressor with fit/predict, got {type(est).__name__}")

    def fit_predict(self, task, train, test):
        x_tr, x_te = task.x[train], task.x[test]
        l_hat = clone(self.ml_l).fit(x_tr, task.y[train]).predict(x_te)
        m_hat = clone(self.ml_m).fit(x_tr, task.d[train]).predict(x_te)
        return {"l": np.asarray(l_hat, float), "m": np.asarray(m_hat, float)}

    @staticmethod
    def elements(y, d, nuisance):
        v = d - nuisance["m"]
        return -(v**2), (y - nuisance["l"]) * v


class IRMScore(_Score):
    """AIPW (doubly robust) score of the average treatment effect (DoubleMLIRM, ``score='ATE'``).

    ``psi_b = g1 - g0 + D (Y - g1)/m - (1 - D)(Y - g0)/(1 - m)``, ``psi_a = -1``.  ``ml_l`` is the outcome
    regressor (DoubleML's ``ml_g``), fitted separately on the treated and the control training samples;
    ``ml_m`` is a classifier for ``P(D=1|X)`` whose predictions are clipped to ``[clip, 1 - clip]``.
    Folds are stratified on ``D`` so both arms appear in every training fold.
    """

    name = "irm"

    def __init__(self, ml_l=None, ml_m=None, clip: float = 0.05) -> None:
        self.ml_l = default_regressor() if ml_l is None else ml_l
        self.ml_m = default_classifier() if ml_m is None else ml_m
        if not (hasattr(self.ml_l, "fit") and hasattr(self.ml_l, "predict")):
            raise TypeError(f"ml_l must be an sklearn regressor with fit/predict, got {type(self.ml_l).__name__}")
        if not hasattr(self.ml_m, "predict_proba"):
            raise TypeError(
                f"ml_m must be an sklearn classifier with predict_proba for model='irm', got {type(self.ml_m).__name__}"
            )
        if is_regressor(self.ml_m) and not is_classifier(self.ml_m):
            raise TypeError("ml_m must be a classifier for model='irm'")
        if not (isinstance(clip, (int, float)) and 0.0 <= clip < 0.5):
            raise ValueError(f"clip must lie in [0, 0.5), got {clip!r}")
        self.clip = float(clip)

    def _check_task(self, task, j):
        super()._check_task(task, j)
        if not np.all((task.d == 0) | (task.d == 1)):
            raise ValueError(f"tasks[{j}].d must be binary (0/1) for model='irm'")

    def folds(self, task, n_folds, seed):
        counts = np.bincount(task.d.astype(int), minlength=2)
        if counts.min() < n_folds:
            raise ValueError(
                f"each arm needs at least n_folds={n_folds} samples for model='irm', got {counts.tolist()} "
                "(controls, treated)"
            )
        kf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
        return list(kf.split(task.x, task.d.astype(int)))

    def fit_predict(self, task, train, test):
        x_tr, x_te, d_tr, y_tr = task.x[train], task.x[test], task.d[train], task.y[train]
        g0 = clone(self.ml_l).fit(x_tr[d_tr == 0], y_tr[d_tr == 0]).predict(x_te)
        g1 = clone(self.ml_l).fit(x_tr[d_tr == 1], y_tr[d_tr == 1]).predict(x_te)
        clf = clone(self.ml_m).fit(x_tr, d_tr.astype(int))
        col = list(clf.classes_).index(1)
        m = np.clip(clf.predict_proba(x_te)[:, col], self.clip, 1.0 - self.clip)
        return {"g0": np.asarray(g0, float), "g1": np.asarray(g1, float), "m": m}

    @staticmethod
    def elements(y, d, nuisance):
        g0, g1, m = nuisance["g0"], nuisance["g1"], nuisance["m"]
        psi_b = g1 - g0 + d * (y - g1) / m - (1.0 - d) * (y - g0) / (1.0 - m)
        return -np.ones_like(y), psi_b


_Z_AGG = 1.96  # DoubleML's critical value when it aggregates repeated cross-fits (utils/_estimation.py)


def aggregate_repetitions(coefs, ses) -> tuple[float, float]:
    """DoubleML's aggregation of ``n_rep`` repeated cross-fits (``_aggregate_coefs_and_ses``, doubleml 0.11).

    ``coef = median_r coef_r`` and ``se = (median_r (coef_r + 1.96 se_r) - coef) / 1.96`` (the median upper
    confidence bound turned back into a standard error).  One repetition returns ``(coef, se)`` unchanged.
    """
    c = np.asarray(coefs, dtype=float).ravel()
    s = np.asarray(ses, dtype=float).ravel()
    if c.size == 1:
        return float(c[0]), float(s[0])
    coef = float(np.median(c))
    return coef, float((np.median(c + _Z_AGG * s) - coef) / _Z_AGG)


@dataclass(frozen=True)
class CrossFitScores:
    """Cross-fitted score elements of ``m`` tasks: ``psi_a[j]``, ``psi_b[j]`` of shape ``(n_rep, n_j)``.

    Repetition ``r`` holds the scores of one random ``n_folds``-fold split (DoubleML's ``n_rep``); 1-D arrays
    are read as one repetition.  Every estimate aggregates the repetitions the way DoubleML does
    (:func:`aggregate_repetitions`): per-task estimates (the pilots, ``b``), pooled cluster estimates and their
    standard errors.  Fitting every estimator in this module from the same :class:`CrossFitScores` compares them
    on the very same nuisance fits (see ``fit_scores``).
    """

    psi_a: tuple[np.ndarray, ...]
    psi_b: tuple[np.ndarray, ...]
    model: str = ""

    def __post_init__(self) -> None:
        pa = tuple(np.atleast_2d(np.asarray(a, dtype=float)) for a in self.psi_a)
        pb = tuple(np.atleast_2d(np.asarray(b, dtype=float)) for b in self.psi_b)
        if len(pa) != len(pb) or any(a.shape != b.shape for a, b in zip(pa, pb)):
            raise ValueError("psi_a and psi_b must hold one array of the same shape per task")
        if pa and (any(a.ndim != 2 for a in pa) or len({a.shape[0] for a in pa}) != 1):
            raise ValueError("every task must have the same number of repetitions (arrays of shape (n_rep, n_j))")
        object.__setattr__(self, "psi_a", pa)
        object.__setattr__(self, "psi_b", pb)

    @property
    def n_tasks(self) -> int:
        return len(self.psi_a)

    @property
    def n_rep(self) -> int:
        """Number of repeated cross-fits."""
        return self.psi_a[0].shape[0]

    @property
    def n(self) -> np.ndarray:
        """Samples per task, shape (m,)."""
        return np.array([a.shape[1] for a in self.psi_a])

    @property
    def a(self) -> np.ndarray:
        """Curvatures ``a_j = -mean psi_a`` (over samples and repetitions) of the per-task losses, shape (m,)."""
        return np.array([-np.mean(a) for a in self.psi_a])

    @property
    def b(self) -> np.ndarray:
        """Per-task DML estimates (the minimisers of ``f_j``; aggregated over repetitions), shape (m,).

        One repetition: ``b_j = -sum_i psi_b / sum_i psi_a``; several: the median over repetitions.
        """
        if self.n_rep == 1:
            return np.array([-np.sum(pb) / np.sum(pa) for pa, pb in zip(self.psi_a, self.psi_b)])
        return np.array([self.pooled([j])[0] for j in range(self.n_tasks)])

    def _stack(self, tasks) -> tuple[np.ndarray, np.ndarray]:
        idx = np.asarray(tasks, dtype=int).ravel()
        if idx.size == 0:
            raise ValueError("tasks must name at least one task")
        return (
            np.concatenate([self.psi_a[j] for j in idx], axis=1),
            np.concatenate([self.psi_b[j] for j in idx], axis=1),
        )

    def pooled(self, tasks: Sequence[int] | np.ndarray) -> tuple[float, float]:
        """Pooled DML estimate over the tasks in ``tasks`` and its sandwich standard error.

        Per repetition ``theta_r = -sum psi_b / sum psi_a`` and
        ``se_r = sqrt(sum (psi_a theta_r + psi_b)^2) / |sum psi_a|`` (sums over every observation of those
        tasks), aggregated over repetitions by :func:`aggregate_repetitions`.
        """
        pa, pb = self._stack(tasks)
        theta = -pb.sum(axis=1) / pa.sum(axis=1)
        se = np.sqrt(np.sum((pa * theta[:, None] + pb) ** 2, axis=1)) / np.abs(pa.sum(axis=1))
        return aggregate_repetitions(theta, se)

    def se_at(self, tasks: Sequence[int] | np.ndarray, theta: float) -> float:
        """Sandwich standard error of the pooled score of ``tasks`` evaluated at ``theta`` (median over reps)."""
        pa, pb = self._stack(tasks)
        se = np.sqrt(np.sum((pa * theta + pb) ** 2, axis=1)) / np.abs(pa.sum(axis=1))
        return float(np.median(se))


def make_score(model: str, ml_l=None, ml_m=None):
    """The score object for ``model`` (``"plr"`` or ``"irm"``)."""
    if model == "plr":
        return PLRScore(ml_l, ml_m)
    if model == "irm":
        return IRMScore(ml_l, ml_m)
    raise ValueError(f"model must be 'plr' or 'irm', got {model!r}")


def cross_fit_scores(
    tasks: Sequence[TaskData],
    score: _Score,
    n_folds: int = 2,
    random_state: int | None = None,
    n_rep: int = 1,
) -> CrossFitScores:
    """Cross-fit ``score``'s nuisances task by task (``n_folds`` folds each, ``n_rep`` independent random splits)
    and return the score elements.

    Repetition ``r`` of task ``j`` splits with the seed ``SeedSequence(random_state).generate_state(m n_rep)
    [r m + j]``, so repetition 0 is the single-split fit.  Raises ``ValueError`` if ``tasks`` is empty,
    ``n_folds < 2``, ``n_rep < 1``, or a task has fewer samples than folds.
    """
    if isinstance(tasks, TaskData) or not isinstance(tasks, Sequence):
        raise TypeError("tasks must be a list of TaskData")
    if len(tasks) == 0:
        raise ValueError("tasks must hold at least one TaskData")
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    if isinstance(n_rep, bool) or not isinstance(n_rep, (int, np.integer)) or n_rep < 1:
        raise ValueError(f"n_rep must be an integer >= 1, got {n_rep!r}")
    for j, t in enumerate(tasks):
        score._check_task(t, j)
        if t.n < n_folds:
            raise ValueError(f"tasks[{j}] has {t.n} samples, fewer than n_folds={n_folds}; need n_j >= n_folds")
    bad_seed = isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0
    if random_state is not None and bad_seed:
        raise ValueError(f"random_state must be None or a non-negative integer, got {random_state!r}")
    m = len(tasks)
    seeds = np.random.SeedSequence(random_state).generate_state(m * int(n_rep))
    psi_a, psi_b = [], []
    for j, t in enumerate(tasks):
        reps = [score.cross_fit(t, score.folds(t, int(n_folds), int(seeds[r * m + j]))) for r in range(n_rep)]
        pa, pb = np.array([r[0] for r in reps]), np.array([r[1] for r in reps])
        if not (np.all(np.isfinite(pa)) and np.all(np.isfinite(pb))):
            raise ValueError(f"the nuisance learners produced non-finite scores on tasks[{j}]")
        if np.any(np.sum(pa, axis=1) == 0):
            raise ValueError(f"tasks[{j}] has a zero score Jacobian (sum psi_a = 0): the target is not identified")
        psi_a.append(pa)
        psi_b.append(pb)
    return CrossFitScores(tuple(psi_a), tuple(psi_b), model=score.name)
