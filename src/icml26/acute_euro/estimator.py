"""ACUTE: a confidence estimator learned from a model's own activations (scikit-learn estimator)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.decomposition import PCA
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

__all__ = ["ACUTEConfidenceEstimator", "as_pooled", "layer_index"]

_VIEWS = ("mean", "cosine", "pca")
_NAMED_LAYERS = ("early", "mid", "late")


def as_pooled(X) -> np.ndarray:
    """Activations as a float array ``[n, L, d]``.

    Accepts ``[n, L, d]`` (already pooled), ``[n, d]`` (one layer: ``L = 1``) or a list of ``[T_i, L, d]`` arrays
    (one per output, mean-pooled over its ``T_i`` positions here).
    """
    if isinstance(X, (list, tuple)) and len(X) > 0 and np.ndim(X[0]) == 3:
        arrays = [np.asarray(x, dtype=float) for x in X]
        shapes = {a.shape[1:] for a in arrays}
        if len(shapes) != 1:
            raise ValueError(f"X: every [T_i, L, d] array needs the same (L, d), got {sorted(shapes)}")
        if any(a.shape[0] == 0 for a in arrays):
            raise ValueError("X: an output has T_i = 0 positions; each needs at least one")
        X = np.stack([a.mean(axis=0) for a in arrays])
    X = check_array(X, allow_nd=True, dtype=float, ensure_min_samples=1, input_name="X")
    if X.ndim == 2:
        X = X[:, None, :]
    if X.ndim != 3:
        raise ValueError(f"X must have shape [n, L, d], [n, d] or be a list of [T_i, L, d]; got {X.shape}")
    return X


def layer_index(layer: str | int, n_layers: int) -> int:
    """``"early"`` -> ``L // 4``, ``"mid"`` -> ``L // 2``, ``"late"`` -> ``L - 1``; an int indexes (negatives from
    the end)."""
    if isinstance(layer, str):
        if layer not in _NAMED_LAYERS:
            raise ValueError(f"layer must be one of {_NAMED_LAYERS} or an int, got {layer!r}")
        return {"early": n_layers // 4, "mid": n_layers // 2, "late": n_layers - 1}[layer]
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
        raise TypeError(f"layer must be 'early', 'mid', 'late' or an int, got {type(layer).__name__}")
    if not -n_layers <= layer < n_layers:
        raise ValueError(f"layer must lie in [{-n_layers}, {n_layers - 1}] for {n_layers} layers, got {layer}")
    return int(layer) % n_layers


def _cosine_view(X: np.ndarray) -> np.ndarray:
    """``[cos(h_1, h_L), ..., cos(h_{L-1}, h_L)]``: how far each layer's mean state is from the last one's."""
    last = X[:, -1, :]
    num = np.einsum("nld,nd->nl", X[:, :-1, :], last)
    den = np.linalg.norm(X[:, :-1, :], axis=2) * np.linalg.norm(last, axis=1)[:, None]
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


class ACUTEConfidenceEstimator(ClassifierMixin, BaseEstimator):
    """Predict whether a model's output is correct from its pooled activations (ACUTE).

    Features (one "view" of the activations ``X[i] = [h_bar^(1), ..., h_bar^(L)]``):

    * ``view="mean"``: ``h_bar^(j)`` for ``j = layer_index(layer, L)`` (``early = L//4``, ``mid = L//2``,
      ``late = L-1``);
    * ``view="cosine"``: ``[cos(h_bar^(1), h_bar^(L)), ..., cos(h_bar^(L-1), h_bar^(L))]`` (needs ``L >= 2``);
    * ``view="pca"``: per layer, the first ``n_components`` principal components (PCA fitted on the training
      activations only; at most ``min(n_components, n, d)``), concatenated over layers;

    then, if ``include_raw_conf`` and ``raw_conf`` is given, the raw confidence as the last column.  A classifier
    (default ``RandomForestClassifier(n_estimators, min_samples_leaf=3, max_features="sqrt")``, 500 trees) maps the
    features to ``P(correct)``: ``predict_proba(X, raw_conf)[:, 1]``.

    Parameters
    ----------
    view: ``"mean"``, ``"cosine"`` or ``"pca"``.
    layer: ``"early"``, ``"mid"``, ``"late"`` or an int; used by ``view="mean"``.
    n_components: components per layer for ``view="pca"`` (>= 1).
    include_raw_conf: append ``raw_conf`` as a feature when it is passed to ``fit`` (then ``predict_proba``
        needs it too).
    estimator: any scikit-learn classifier with ``predict_proba`` (cloned); ``None`` for the random forest.
    n_estimators: trees of the default random forest (ignored when ``estimator`` is given).
    random_state: seed of the default random forest (ignored when ``estimator`` is given).
    """

    def __init__(
        self,
        view: str = "mean",
        layer: str | int = "late",
        n_components: int = 20,
        include_raw_conf: bool = True,
        estimator=None,
        n_estimators: int = 500,
        random_state: int | None = None,
    ) -> None:
        self.view = view
        self.layer = layer
        self.n_components = n_components
        self.include_raw_conf = include_raw_conf
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.random_state = random_state

    # ---------------------------------------------------------------------------------------------- features
    def _check_params(self) -> None:
        if self.view not in _VIEWS:
            raise ValueError(f"view must be one of {_VIEWS}, got {self.view!r}")
        if self.view == "pca" and (
            isinstance(self.n_components, bool)
            or not isinstance(self.n_components, (int, np.integer))
            or self.n_components < 1
        ):
            raise ValueError(f"n_components must be an integer >= 1, got {self.n_components!r}")
        if not isinstance(self.include_raw_conf, (bool, np.bool_)):
            raise TypeError(f"include_raw_conf must be a bool, got {type(self.include_raw_conf).__name__}")
        if self.estimator is not None and not hasattr(self.estimator, "predict_proba"):
            raise TypeError("estimator must be a scikit-learn classifier with predict_proba")

    @staticmethod
    def _check_raw(raw_conf, n: int) -> np.ndarray:
        r = np.asarray(raw_conf, dtype=float).reshape(-1)
        if r.shape[0] != n:
            raise ValueError(f"raw_conf must have one value per row of X ({n}), got {r.shape[0]}")
        if not np.all(np.isfinite(r)) or r.min() < 0.0 or r.max() > 1.0:
            raise ValueError("raw_conf must be finite and lie in [0, 1]")
        return r

    def _features(self, X: np.ndarray, raw: np.ndarray | None, fitting: bool) -> np.ndarray:
        n, L, _ = X.shape
        if self.view == "mean":
            feats = X[:, layer_index(self.layer, L), :]
        elif self.view == "cosine":
            if L < 2:
                raise ValueError(f"view='cosine' needs at least 2 layers, X has L={L}")
            feats = _cosine_view(X)
        else:
            if fitting:
                self.pcas_ = [
                    PCA(n_components=min(self.n_components, X.shape[0], X.shape[2]), random_state=0).fit(X[:, j, :])
                    for j in range(L)
                ]
            feats = np.concatenate([p.transform(X[:, j, :]) for j, p in enumerate(self.pcas_)], axis=1)
        if raw is not None:
            feats = np.concatenate([feats, raw[:, None]], axis=1)
        return feats

    def transform_features(self, X, raw_conf=None) -> np.ndarray:
        """The feature matrix the classifier sees (for inspection; uses the fitted PCA, never refits)."""
        check_is_fitted(self, "estimator_")
        X = self._validate_X(X)
        return self._features(X, self._raw_for_predict(raw_conf, X.shape[0]), fitting=False)

    def _validate_X(self, X) -> np.ndarray:
        X = as_pooled(X)
        if X.shape[1:] != self.activation_shape_:
            raise ValueError(
                f"X has {X.shape[1] * X.shape[2]} features, but ACUTEConfidenceEstimator is expecting "
                f"{self.n_features_in_} features as input: (L, d) = {X.shape[1:]}, fitted on {self.activation_shape_}"
            )
        return X

    def _raw_for_predict(self, raw_conf, n: int) -> np.ndarray | None:
        if self.uses_raw_conf_:
            if raw_conf is None:
                raise ValueError("raw_conf is required: the estimator was fitted with raw_conf as a feature")
            return self._check_raw(raw_conf, n)
        if raw_conf is not None and self.include_raw_conf:
            raise ValueError("raw_conf given to predict but not to fit; pass it to both or to neither")
        return None

    # ---------------------------------------------------------------------------------------------- sklearn API
    def fit(self, X, y, raw_conf=None) -> ACUTEConfidenceEstimator:
        """Fit on activations ``X`` (``[n, L, d]``, ``[n, d]`` or a list of ``[T_i, L, d]``), labels ``y``
        (1 = the output was correct) and, optionally, the model's raw confidence ``raw_conf`` (``[n]``)."""
        self._check_params()
        if y is None:
            raise ValueError("ACUTEConfidenceEstimator requires y to be passed, but the target y is None")
        X = as_pooled(X)
        y = column_or_1d(y, warn=True)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got {y.shape[0]}")
        check_classification_targets(y)
        self.activation_shape_ = X.shape[1:]
        self.n_features_in_ = int(X.shape[1] * X.shape[2])
        self.uses_raw_conf_ = bool(self.include_raw_conf and raw_conf is not None)
        raw = self._check_raw(raw_conf, X.shape[0]) if self.uses_raw_conf_ else None
        feats = self._features(X, raw, fitting=True)
        if self.estimator is None:
            est = RandomForestClassifier(
                n_estimators=self.n_estimators, min_samples_leaf=3, max_features="sqrt", random_state=self.random_state
            )
        else:
            est = clone(self.estimator)
        self.estimator_ = est.fit(feats, y)
        self.classes_ = self.estimator_.classes_
        return self

    def predict_proba(self, X, raw_conf=None) -> np.ndarray:
        """Class probabilities ``[n, n_classes]``; for correctness labels ``{0, 1}`` column 1 is ``P(correct)``."""
        check_is_fitted(self, "estimator_")
        X = self._validate_X(X)
        feats = self._features(X, self._raw_for_predict(raw_conf, X.shape[0]), fitting=False)
        return self.estimator_.predict_proba(feats)

    def predict(self, X, raw_conf=None) -> np.ndarray:
        check_is_fitted(self, "estimator_")
        return self.classes_[np.argmax(self.predict_proba(X, raw_conf), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags


def select_view(
    candidates: Sequence[dict],
    X_train,
    y_train,
    X_val,
    y_val,
    score,
    raw_train=None,
    raw_val=None,
    random_state: int | None = None,
) -> tuple[dict, list[float]]:
    """Pick the parameter set (e.g. ``{"view": "mean", "layer": "late"}``) with the best ``score(p, y)`` on a
    validation split (never the test set).  Returns ``(best_params, scores)``."""
    scores = []
    for params in candidates:
        est = ACUTEConfidenceEstimator(random_state=random_state, **params).fit(X_train, y_train, raw_train)
        scores.append(float(score(est.predict_proba(X_val, raw_val)[:, list(est.classes_).index(1)], y_val)))
    return dict(candidates[int(np.argmax(scores))]), scores
