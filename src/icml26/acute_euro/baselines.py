"""Baselines: recalibrate the model's raw confidence (Platt, isotonic, Nadaraya-Watson) or probe it linearly.

Every calibrator is a scikit-learn estimator with ``fit(raw_conf, y)`` and ``predict_proba(raw_conf)`` where
``raw_conf`` is ``[n]`` or ``[n, 1]`` in [0, 1] and ``y`` is binary correctness; ``predict_proba`` returns
``[n, 2]`` with ``P(correct)`` in column 1.

Inputs are validated with errors that name the argument: ``raw_conf`` must be real and finite (complex, NaN/inf,
sparse and non-numeric input are refused) and lie in [0, 1]; ``fit`` needs ``y`` with both classes (one class is
an error, not a constant prediction).  Hyperparameters live in ``__init__``, so ``sklearn.base.clone`` works;
``tests/acute_euro/test_sklearn_checks.py`` runs scikit-learn's estimator checks and lists the excluded ones (they
feed multi-feature or unbounded ``X``) with the reason for each.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import issparse
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from .estimator import ACUTEConfidenceEstimator

__all__ = ["PlattCalibrator", "IsotonicCalibrator", "NWKRCalibrator", "logistic_probe"]

_EPS = 1e-6


def _as_real(x, name: str) -> np.ndarray:
    """``x`` as a float array, or a named error: sparse, complex and non-numeric input are refused."""
    if issparse(x):
        raise TypeError(f"{name} must be a dense array: sparse input is not supported")
    a = np.asarray(x)
    if a.dtype.kind == "c":
        raise ValueError(f"{name} must be real and finite: Complex data not supported")
    if a.dtype.kind not in "biuf":
        try:
            a = a.astype(float)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be real numbers, got dtype {a.dtype} ({err})") from None
    return a.astype(float, copy=False)


def _check_conf(raw_conf, name: str = "raw_conf") -> np.ndarray:
    r = _as_real(raw_conf, name)
    if not np.all(np.isfinite(r)):
        raise ValueError(f"{name} must be real and finite (it holds NaN or inf)")
    if r.ndim == 2 and r.shape[1] == 1:
        r = r[:, 0]
    if r.ndim != 1:
        raise ValueError(f"{name} must have shape [n] or [n, 1], got {r.shape}")
    if r.size == 0:
        raise ValueError(f"{name} must not be empty")
    if r.min() < 0.0 or r.max() > 1.0:
        raise ValueError(f"{name} must lie in [0, 1]")
    return r


def _check_xy(raw_conf, y) -> tuple[np.ndarray, np.ndarray]:
    r = _check_conf(raw_conf)
    if y is None:
        raise ValueError("y must be given: the calibrators need the correctness labels (requires y)")
    yf = _as_real(y, "y")
    if yf.shape != r.shape:
        raise ValueError(f"y must have one label per confidence ({r.size}), got shape {yf.shape}")
    if not np.all((yf == 0) | (yf == 1)):
        raise ValueError("y must be binary correctness (0/1 or bool)")
    if np.all(yf == yf[0]):
        raise ValueError(f"y must contain two classes (0 and 1), got only class {int(yf[0])}")
    return r, yf


def _two_columns(p1: np.ndarray) -> np.ndarray:
    p1 = np.clip(p1, 0.0, 1.0)
    return np.column_stack([1.0 - p1, p1])


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, _EPS, 1.0 - _EPS)
    return np.log(p) - np.log1p(-p)


class _Calibrator(ClassifierMixin, BaseEstimator):
    def predict(self, raw_conf) -> np.ndarray:
        return (self.predict_proba(raw_conf)[:, 1] > 0.5).astype(int)


class PlattCalibrator(_Calibrator):
    """Platt scaling on the logit of the raw confidence: ``P(correct) = sigmoid(a * logit(c) + b)``.

    ``a, b`` minimise the L2-regularised logistic loss of scikit-learn's ``LogisticRegression(C)``,
    ``C * sum_i [log(1 + exp(z_i)) - y_i z_i] + a^2 / 2`` with ``z_i = a * logit(c_i) + b`` (the intercept is not
    penalised), here by Newton's method with backtracking (two parameters: a few O(n) steps, so a grid of C values
    costs little); logit(c) is taken after clipping c to ``[1e-6, 1 - 1e-6]``.
    """

    def __init__(self, C: float = 1e4) -> None:
        self.C = C

    def fit(self, raw_conf, y) -> PlattCalibrator:
        if not (isinstance(self.C, (int, float, np.number)) and np.isfinite(self.C) and self.C > 0):
            raise ValueError(f"C must be a finite number > 0, got {self.C!r}")
        r, yf = _check_xy(raw_conf, y)
        self.classes_ = np.array([0, 1])
        self.coef_, self.intercept_ = _platt_newton(_logit(r), yf.astype(float), float(self.C))
        return self

    def predict_proba(self, raw_conf) -> np.ndarray:
        check_is_fitted(self, "classes_")
        r = _check_conf(raw_conf)
        return _two_columns(expit(self.coef_ * _logit(r) + self.intercept_))


def _platt_newton(x: np.ndarray, y: np.ndarray, C: float, max_iter: int = 100) -> tuple[float, float]:
    """``argmin_{a,b} C * sum_i [log(1 + e^{z_i}) - y_i z_i] + a^2 / 2``, ``z = a x + b`` (strictly convex)."""

    def objective(a: float, b: float) -> float:
        z = a * x + b
        return C * float(np.sum(np.logaddexp(0.0, z) - y * z)) + 0.5 * a * a

    m = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
    a, b = 0.0, float(np.log(m / (1 - m)))
    f = objective(a, b)
    for _ in range(max_iter):
        p = expit(a * x + b)
        g = np.array([C * float((p - y) @ x) + a, C * float(np.sum(p - y))])
        w = C * p * (1 - p)
        hxx, hx, h1 = float(w @ (x * x)) + 1.0, float(w @ x), float(w.sum()) + 1e-12
        det = hxx * h1 - hx * hx
        step = np.array([h1 * g[0] - hx * g[1], hxx * g[1] - hx * g[0]]) / det if det > 0 else g
        decrease = float(g @ step)
        if decrease < 1e-12 * max(1.0, abs(f)):
            break
        t = 1.0
        while t > 1e-12:
            a1, b1 = a - t * step[0], b - t * step[1]
            f1 = objective(a1, b1)
            if f1 <= f - 1e-4 * t * decrease:
                break
            t *= 0.5
        else:
            break
        a, b, f = a1, b1, f1
    return float(a), float(b)


class IsotonicCalibrator(_Calibrator):
    """Isotonic regression of correctness on the raw confidence (monotone, piecewise constant; values clipped to
    the training range outside it)."""

    def fit(self, raw_conf, y) -> IsotonicCalibrator:
        r, yf = _check_xy(raw_conf, y)
        self.classes_ = np.array([0, 1])
        self.iso_ = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(r, yf)
        return self

    def predict_proba(self, raw_conf) -> np.ndarray:
        check_is_fitted(self, "iso_")
        return _two_columns(self.iso_.predict(_check_conf(raw_conf)))


class NWKRCalibrator(_Calibrator):
    """Nadaraya-Watson kernel regression of correctness on the raw confidence:

        P(correct | c) = sum_i K_h(c - c_i) y_i / sum_i K_h(c - c_i),   K_h(z) = exp(-z^2 / (2 h^2)).

    ``bandwidth="cv"`` picks ``h`` from ``grid`` by leave-one-out Brier score on the training set; a float fixes it.
    As ``h -> inf`` the prediction tends to the training base rate; as ``h -> 0`` it interpolates the labels.
    """

    def __init__(self, bandwidth: float | str = "cv", grid: tuple[float, ...] | None = None) -> None:
        self.bandwidth = bandwidth
        self.grid = grid

    def _grid(self) -> np.ndarray:
        return np.geomspace(0.005, 0.5, 15) if self.grid is None else np.asarray(self.grid, dtype=float)

    @staticmethod
    def _weights(c: np.ndarray, centres: np.ndarray, h: float) -> np.ndarray:
        z = (c[:, None] - centres[None, :]) / h
        w = np.exp(-0.5 * z * z)
        return w

    def fit(self, raw_conf, y) -> NWKRCalibrator:
        r, yf = _check_xy(raw_conf, y)
        self.classes_ = np.array([0, 1])
        self.x_, self.y_ = r, yf
        self.base_rate_ = float(yf.mean())
        if isinstance(self.bandwidth, str):
            if self.bandwidth != "cv":
                raise ValueError(f"bandwidth must be 'cv' or a positive float, got {self.bandwidth!r}")
            grid = self._grid()
            if grid.ndim != 1 or grid.size == 0 or not np.all(grid > 0):
                raise ValueError("grid must be a non-empty sequence of positive bandwidths")
            losses = []
            for h in grid:
                w = self._weights(r, r, h)
                np.fill_diagonal(w, 0.0)  # leave one out
                den = w.sum(axis=1)
                pred = np.where(den > 1e-300, (w @ yf) / np.maximum(den, 1e-300), self.base_rate_)
                losses.append(float(np.mean((pred - yf) ** 2)))
            self.bandwidth_ = float(grid[int(np.argmin(losses))])
            self.cv_losses_ = losses
        else:
            if not (np.isfinite(self.bandwidth) and self.bandwidth > 0):
                raise ValueError(f"bandwidth must be 'cv' or a positive float, got {self.bandwidth!r}")
            self.bandwidth_ = float(self.bandwidth)
        return self

    def predict_proba(self, raw_conf) -> np.ndarray:
        check_is_fitted(self, "bandwidth_")
        c = _check_conf(raw_conf)
        # log-sum-exp form: stable for tiny bandwidths (the nearest training points dominate)
        z = (c[:, None] - self.x_[None, :]) / self.bandwidth_
        logw = -0.5 * z * z
        logw -= logw.max(axis=1, keepdims=True)
        w = np.exp(logw)
        return _two_columns((w @ self.y_) / w.sum(axis=1))


def logistic_probe(view: str = "mean", layer: str | int = "late", n_components: int = 20, C: float = 1.0):
    """The linear-probe ablation of ACUTE: the same features, a standardised L2 logistic regression instead of
    the random forest."""
    return ACUTEConfidenceEstimator(
        view=view,
        layer=layer,
        n_components=n_components,
        estimator=make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000)),
    )
