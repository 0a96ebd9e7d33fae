"""Baselines: recalibrate the model's raw confidence (Platt, isotonic, Nadaraya-Watson) or probe it linearly.

Every calibrator is a scikit-learn estimator with ``fit(raw_conf, y)`` and ``predict_proba(raw_conf)`` where
``raw_conf`` is ``[n]`` or ``[n, 1]`` in [0, 1] and ``y`` is binary correctness; ``predict_proba`` returns
``[n, 2]`` with ``P(correct)`` in column 1.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from .estimator import ACUTEConfidenceEstimator

__all__ = ["PlattCalibrator", "IsotonicCalibrator", "NWKRCalibrator", "logistic_probe"]

_EPS = 1e-6


def _check_conf(raw_conf, name: str = "raw_conf") -> np.ndarray:
    r = np.asarray(raw_conf, dtype=float)
    if r.ndim == 2 and r.shape[1] == 1:
        r = r[:, 0]
    if r.ndim != 1:
        raise ValueError(f"{name} must have shape [n] or [n, 1], got {r.shape}")
    if r.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(r)) or r.min() < 0.0 or r.max() > 1.0:
        raise ValueError(f"{name} must be finite and lie in [0, 1]")
    return r


def _check_xy(raw_conf, y) -> tuple[np.ndarray, np.ndarray]:
    r = _check_conf(raw_conf)
    y = np.asarray(y)
    if y.shape != r.shape:
        raise ValueError(f"y must have one label per confidence ({r.size}), got shape {y.shape}")
    yf = y.astype(float)
    if not np.all((yf == 0) | (yf == 1)):
        raise ValueError("y must be binary correctness (0/1 or bool)")
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

    ``a, b`` are fitted by (L2-regularised, strength ``1/C``) logistic regression; logit(c) is taken after
    clipping c to ``[1e-6, 1 - 1e-6]``.
    """

    def __init__(self, C: float = 1e4) -> None:
        self.C = C

    def fit(self, raw_conf, y) -> PlattCalibrator:
        if not self.C > 0:
            raise ValueError(f"C must be > 0, got {self.C}")
        r, yf = _check_xy(raw_conf, y)
        self.classes_ = np.array([0, 1])
        if np.all(yf == yf[0]):  # one class only: the best constant
            self.constant_ = float(yf[0])
            return self
        self.constant_ = None
        self.lr_ = LogisticRegression(C=self.C).fit(_logit(r)[:, None], yf.astype(int))
        return self

    def predict_proba(self, raw_conf) -> np.ndarray:
        check_is_fitted(self, "classes_")
        r = _check_conf(raw_conf)
        if self.constant_ is not None:
            return _two_columns(np.full(r.size, self.constant_))
        return self.lr_.predict_proba(_logit(r)[:, None])


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
