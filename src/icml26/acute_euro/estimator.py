"""ACUTE: a confidence estimator learned from a model's own activations (scikit-learn estimator)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.decomposition import PCA
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

__all__ = [
    "ACUTEConfidenceEstimator",
    "as_pooled",
    "layer_index",
    "pack_features",
    "select_forest_cv",
    "select_view",
    "select_view_cv",
    "truncated_tree_proba",
]

_VIEWS = ("mean", "cosine", "pca")
_NAMED_LAYERS = ("early", "mid", "late")


def as_pooled(X, n_layers: int | None = None) -> np.ndarray:
    """Activations as a float array ``[n, L, d]``.

    Accepts ``[n, L, d]`` (already pooled), ``[n, d]`` (one layer: ``L = 1``; or, with ``n_layers = L``, the
    layer-major flattening ``[h_bar^(1), ..., h_bar^(L)]`` of width ``L * d``, reshaped back) or a list of
    ``[T_i, L, d]`` arrays (one per output, mean-pooled over its ``T_i`` positions here).
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
        if n_layers is None or n_layers == 1:
            X = X[:, None, :]
        else:
            if X.shape[1] % n_layers:
                raise ValueError(
                    f"X: a 2-D X of width {X.shape[1]} cannot hold n_layers={n_layers} layers of equal width"
                )
            X = X.reshape(X.shape[0], n_layers, X.shape[1] // n_layers)
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


def pack_features(X, raw_conf=None) -> np.ndarray:
    """One 2-D matrix for scikit-learn's tools: the activations flattened layer-major (``[n, L * d]``) and, if
    given, the raw confidence as the last column (``[n, L * d + 1]``).

    Fit it with ``ACUTEConfidenceEstimator(n_layers=L, raw_conf_column=raw_conf is not None)``: then
    ``cross_val_predict``, ``GridSearchCV``, ``CalibratedClassifierCV`` and pipelines see an ordinary
    ``(X, y)`` problem, and the raw confidence travels with the rows into every fold, fit and predict alike.
    """
    X = as_pooled(X)
    flat = X.reshape(X.shape[0], -1)
    if raw_conf is None:
        return flat
    r = np.asarray(raw_conf, dtype=float).reshape(-1)
    if r.shape[0] != X.shape[0]:
        raise ValueError(f"raw_conf must have one value per row of X ({X.shape[0]}), got {r.shape[0]}")
    if not np.all(np.isfinite(r)) or r.min() < 0.0 or r.max() > 1.0:
        raise ValueError("raw_conf must be finite and lie in [0, 1]")
    return np.concatenate([flat, r[:, None]], axis=1)


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

    then, if ``include_raw_conf`` and a raw confidence is given, the raw confidence as the last column.  A
    classifier (default ``RandomForestClassifier(n_estimators, min_samples_leaf, max_depth, max_features="sqrt")``,
    500 trees, leaves of >= 3) maps the features to ``P(correct)``: ``predict_proba(X)[:, 1]``.

    The raw confidence reaches the estimator in one of two ways:

    * as metadata: ``fit(X, y, raw_conf=r)`` and ``predict_proba(X, raw_conf=r)``.  Under
      ``sklearn.set_config(enable_metadata_routing=True)`` the estimator has ``set_fit_request(raw_conf=True)``
      and ``set_predict_proba_request(raw_conf=True)`` / ``set_predict_request``, so a ``Pipeline`` routes it to
      both.  (scikit-learn's ``cross_val_predict``, ``GridSearchCV`` and ``CalibratedClassifierCV`` route metadata
      to ``fit`` only, so for them use the column form.)
    * as the last column of ``X`` (``raw_conf_column=True``, ``X = pack_features(acts, r)`` of width
      ``L * d + 1``, with ``n_layers = L``): the raw confidence then follows the rows through every split, fit
      and predict of any scikit-learn tool.

    Parameters
    ----------
    view: ``"mean"``, ``"cosine"`` or ``"pca"``.
    layer: ``"early"``, ``"mid"``, ``"late"`` or an int; used by ``view="mean"``.
    n_components: components per layer for ``view="pca"`` (>= 1).
    include_raw_conf: use the raw confidence as a feature when it is given (metadata or column).
    estimator: any scikit-learn classifier with ``predict_proba`` (cloned); ``None`` for the random forest.
    n_estimators: trees of the default random forest (ignored when ``estimator`` is given).
    random_state: seed of the default random forest (ignored when ``estimator`` is given).
    n_layers: how a 2-D ``X`` is laid out: ``None`` or 1 -> one layer ``[n, d]``; ``L`` -> the layer-major
        flattening ``[n, L * d]`` (what :func:`pack_features` writes).
    raw_conf_column: the last column of a 2-D ``X`` is the raw confidence (in [0, 1]); ``raw_conf`` must then not
        be passed as metadata.
    min_samples_leaf, max_depth: depth controls of the default random forest (``min_samples_leaf >= 1``,
        ``max_depth`` ``None`` or ``>= 1``).
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
        n_layers: int | None = None,
        raw_conf_column: bool = False,
        min_samples_leaf: int = 3,
        max_depth: int | None = None,
    ) -> None:
        self.view = view
        self.layer = layer
        self.n_components = n_components
        self.include_raw_conf = include_raw_conf
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.n_layers = n_layers
        self.raw_conf_column = raw_conf_column
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth

    # ---------------------------------------------------------------------------------------------- features
    def _check_params(self) -> None:
        if self.view not in _VIEWS:
            raise ValueError(f"view must be one of {_VIEWS}, got {self.view!r}")
        if self.view == "pca" and not _is_int(self.n_components, 1):
            raise ValueError(f"n_components must be an integer >= 1, got {self.n_components!r}")
        for name in ("include_raw_conf", "raw_conf_column"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        if self.estimator is not None and not hasattr(self.estimator, "predict_proba"):
            raise TypeError("estimator must be a scikit-learn classifier with predict_proba")
        if self.n_layers is not None and not _is_int(self.n_layers, 1):
            raise ValueError(f"n_layers must be None or an integer >= 1, got {self.n_layers!r}")
        if not _is_int(self.min_samples_leaf, 1):
            raise ValueError(f"min_samples_leaf must be an integer >= 1, got {self.min_samples_leaf!r}")
        if self.max_depth is not None and not _is_int(self.max_depth, 1):
            raise ValueError(f"max_depth must be None or an integer >= 1, got {self.max_depth!r}")

    @staticmethod
    def _check_raw(raw_conf, n: int) -> np.ndarray:
        r = np.asarray(raw_conf, dtype=float).reshape(-1)
        if r.shape[0] != n:
            raise ValueError(f"raw_conf must have one value per row of X ({n}), got {r.shape[0]}")
        if not np.all(np.isfinite(r)) or r.min() < 0.0 or r.max() > 1.0:
            raise ValueError("raw_conf must be finite and lie in [0, 1]")
        return r

    def _split_X(self, X, raw_conf) -> tuple[np.ndarray, np.ndarray | None]:
        """``(activations [n, L, d], raw confidence [n] or None)`` from the inputs, in either form."""
        if not self.raw_conf_column:
            return as_pooled(X, self.n_layers), raw_conf
        if raw_conf is not None:
            raise ValueError("raw_conf must not be passed when raw_conf_column=True: it is the last column of X")
        X = check_array(X, dtype=float, ensure_min_features=2, input_name="X")
        return as_pooled(X[:, :-1], self.n_layers), self._check_raw(X[:, -1], X.shape[0])

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
        X, raw = self._validated(X, raw_conf)
        return self._features(X, raw, fitting=False)

    def _validated(self, X, raw_conf) -> tuple[np.ndarray, np.ndarray | None]:
        acts, raw = self._split_X(X, raw_conf)
        if acts.shape[1:] != self.activation_shape_:
            n_in = acts.shape[1] * acts.shape[2] + int(self.raw_conf_column)
            raise ValueError(
                f"X has {n_in} features, but ACUTEConfidenceEstimator is expecting {self.n_features_in_} features "
                f"as input: (L, d) = {acts.shape[1:]}, fitted on {self.activation_shape_}"
            )
        return acts, self._raw_for_predict(raw, acts.shape[0])

    def _raw_for_predict(self, raw_conf, n: int) -> np.ndarray | None:
        if self.uses_raw_conf_:
            if raw_conf is None:
                raise ValueError("raw_conf is required: the estimator was fitted with raw_conf as a feature")
            return self._check_raw(raw_conf, n)
        if raw_conf is not None and self.include_raw_conf and not self.raw_conf_column:
            raise ValueError("raw_conf given to predict but not to fit; pass it to both or to neither")
        return None

    # ---------------------------------------------------------------------------------------------- sklearn API
    def fit(self, X, y, raw_conf=None) -> ACUTEConfidenceEstimator:
        """Fit on activations ``X`` (``[n, L, d]``, ``[n, d]``, ``[n, L * d]`` with ``n_layers``, a list of
        ``[T_i, L, d]``, or ``[n, L * d + 1]`` with ``raw_conf_column``), labels ``y`` (1 = the output was correct)
        and, optionally, the model's raw confidence ``raw_conf`` (``[n]``)."""
        self._check_params()
        if y is None:
            raise ValueError("ACUTEConfidenceEstimator requires y to be passed, but the target y is None")
        X, raw = self._split_X(X, raw_conf)
        y = column_or_1d(y, warn=True)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got {y.shape[0]}")
        check_classification_targets(y)
        self.activation_shape_ = X.shape[1:]
        self.n_features_in_ = int(X.shape[1] * X.shape[2]) + int(self.raw_conf_column)
        self.uses_raw_conf_ = bool(self.include_raw_conf and raw is not None)
        raw = self._check_raw(raw, X.shape[0]) if self.uses_raw_conf_ else None
        feats = self._features(X, raw, fitting=True)
        if self.estimator is None:
            est = RandomForestClassifier(
                n_estimators=self.n_estimators,
                min_samples_leaf=self.min_samples_leaf,
                max_depth=self.max_depth,
                max_features="sqrt",
                random_state=self.random_state,
            )
        else:
            est = clone(self.estimator)
        self.estimator_ = est.fit(feats, y)
        self.classes_ = self.estimator_.classes_
        return self

    def predict_proba(self, X, raw_conf=None) -> np.ndarray:
        """Class probabilities ``[n, n_classes]``; for correctness labels ``{0, 1}`` column 1 is ``P(correct)``."""
        check_is_fitted(self, "estimator_")
        X, raw = self._validated(X, raw_conf)
        return self.estimator_.predict_proba(self._features(X, raw, fitting=False))

    def predict(self, X, raw_conf=None) -> np.ndarray:
        check_is_fitted(self, "estimator_")
        return self.classes_[np.argmax(self.predict_proba(X, raw_conf), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags


def _is_int(v, low: int) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= low


def _positive_column(est, X, raw) -> np.ndarray:
    return est.predict_proba(X, raw)[:, list(est.classes_).index(1)]


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
        scores.append(float(score(_positive_column(est, X_val, raw_val), y_val)))
    return dict(candidates[int(np.argmax(scores))]), scores


def select_view_cv(
    candidates: Sequence[dict],
    X,
    y,
    score,
    raw_conf=None,
    cv: int = 5,
    random_state: int | None = None,
    base: dict | None = None,
) -> tuple[dict, list[float]]:
    """Pick the parameter set with the best mean ``score(p, y)`` over a stratified ``cv``-fold split of the
    training labels themselves (inner cross-validation: no extra labels, usable at every training size).

    Each candidate is ``ACUTEConfidenceEstimator(random_state=random_state, **base, **candidate)``; folds come from
    ``StratifiedKFold(cv, shuffle=True, random_state=random_state)`` (``cv`` is lowered to the minority-class count
    when that is smaller, and must end up >= 2).  ``score`` is higher-is-better, e.g. :func:`auc_euro` or
    ``lambda p, y: -brier_score_loss(y, p)``.  Returns ``(best_params, mean_scores)``; ties go to the first.
    """
    from sklearn.model_selection import StratifiedKFold

    if not candidates:
        raise ValueError("candidates must not be empty")
    y = np.asarray(y)
    k = min(int(cv), int(np.bincount(np.unique(y, return_inverse=True)[1]).min()))
    if k < 2:
        raise ValueError(f"cv must be >= 2 and each class needs >= 2 labels; got cv={cv} and k={k} usable folds")
    acts = as_pooled(X) if not isinstance(X, np.ndarray) or X.ndim != 2 else X
    raw = None if raw_conf is None else np.asarray(raw_conf, dtype=float)
    folds = list(StratifiedKFold(k, shuffle=True, random_state=random_state).split(np.zeros(len(y)), y))
    means = []
    for params in candidates:
        vals = []
        for tr, te in folds:
            est = ACUTEConfidenceEstimator(random_state=random_state, **(base or {}), **params)
            est.fit(acts[tr], y[tr], None if raw is None else raw[tr])
            vals.append(float(score(_positive_column(est, acts[te], None if raw is None else raw[te]), y[te])))
        means.append(float(np.mean(vals)))
    return dict(candidates[int(np.argmax(means))]), means


def _view_features(params: dict, acts_tr, raw_tr, acts_te, raw_te) -> tuple[np.ndarray, np.ndarray]:
    """The (training, held-out) feature matrices of one view, fitted (PCA) on the training rows only: exactly the
    matrices ``ACUTEConfidenceEstimator(**params)`` would feed its classifier in ``fit`` and ``predict_proba``."""
    est = ACUTEConfidenceEstimator(**params)
    est._check_params()
    use_raw = bool(est.include_raw_conf and raw_tr is not None)
    f_tr = est._features(acts_tr, raw_tr if use_raw else None, fitting=True)
    f_te = est._features(acts_te, raw_te if use_raw else None, fitting=False)
    return f_tr, f_te


def truncated_tree_proba(tree, X, depths: Sequence[int | None], column: int = 1) -> dict:
    """``P(class column)`` of one fitted decision tree for the rows of ``X``, read at every depth in ``depths``.

    A tree grown without a depth limit, read at depth ``d``, predicts with the class frequencies of each sample's
    ancestor node at depth ``min(d, leaf depth)``: that is the tree grown with ``max_depth=d`` (same bootstrap, same
    splits down to depth ``d``; identical when the splits are deterministic, e.g. ``max_features=None`` without
    ties, and equal in distribution for a random forest's randomised splits).  ``None`` = the full tree.  Returns
    ``{d: array [n]}``.
    """
    t = tree.tree_
    leaves = t.apply(np.ascontiguousarray(X, dtype=np.float32))
    value = t.value[:, 0, :]
    prob = value[:, column] / value.sum(axis=1)
    depth = np.asarray(t.compute_node_depths(), dtype=int) - 1  # root at depth 0
    parent = np.full(t.node_count, -1)
    inner = np.flatnonzero(t.children_left >= 0)
    parent[t.children_left[inner]] = inner
    parent[t.children_right[inner]] = inner
    out = {}
    for d in depths:
        if d is None or d >= t.max_depth:
            out[d] = prob[leaves]
            continue
        anc = np.arange(t.node_count)
        for level in range(d + 1, t.max_depth + 1):  # parents first: their ancestor is already resolved
            nodes = np.flatnonzero(depth == level)
            anc[nodes] = anc[parent[nodes]]
        out[d] = prob[anc[leaves]]
    return out


def select_forest_cv(
    X,
    y,
    raw_conf=None,
    view: dict | None = None,
    min_samples_leaf: Sequence[int] = (1, 3, 10),
    max_depth: Sequence[int | None] = (2, 4, 8, None),
    n_estimators: Sequence[int] = (50, 100, 200),
    cv: int = 5,
    random_state: int | None = None,
    cv_trees: int | None = None,
) -> tuple[dict, dict]:
    """The random forest's size, depth and leaf size by inner ``cv``-fold cross-validated Brier score on the
    training labels (returned as a higher-is-better score: minus the Brier score).

    Grid: ``min_samples_leaf x max_depth x n_estimators``.  Cost: ONE forest of ``m = cv_trees`` trees (default
    ``max(n_estimators)``) per leaf size and fold, grown without a depth limit on the view's features (computed,
    PCA included, once per fold).  Every depth is read off its trees (:func:`truncated_tree_proba`).  Every size
    ``T`` is scored by the expected Brier score of a ``T``-tree forest given the fold's training rows, estimated
    without bias from the ``m`` trees: the trees are i.i.d. given those rows, so with ``pbar_i`` and ``s_i^2`` the
    mean and the (ddof = 1) variance of the ``m`` tree predictions on held-out row ``i``,

        E[(mean of T trees - y_i)^2] = (mu_i - y_i)^2 + sigma_i^2 / T,
        estimated by  (pbar_i - y_i)^2 + s_i^2 (1/T - 1/m).

    At ``T = m`` this is the grown forest's Brier score exactly (the ``m``-tree ACUTE forest of the same
    ``random_state``); sizes above ``m`` cost nothing more.  In expectation the Brier score never rises with the
    size, so the estimate picks the largest size unless the trees agree (``s_i = 0``); it also reports how much
    each doubling gains.  Folds: ``StratifiedKFold(cv, shuffle=True, random_state)`` like :func:`select_view_cv`
    (``cv`` lowered to the minority-class count, >= 2).

    Returns ``(best, scores)``: ``best = {"min_samples_leaf", "max_depth", "n_estimators"}`` (ties go to the
    smallest forest, then the shallowest, then the largest leaves) and ``scores`` mapping
    ``"leaf=a,depth=b,trees=c"`` to the mean over folds of minus the (estimated) Brier score.
    """
    from sklearn.model_selection import StratifiedKFold

    leaves_, depths_ = list(min_samples_leaf), list(max_depth)
    sizes_ = list(n_estimators)
    if not leaves_ or not depths_ or not sizes_:
        raise ValueError("min_samples_leaf, max_depth and n_estimators must be non-empty")
    if not all(_is_int(v, 1) for v in leaves_):
        raise ValueError(f"min_samples_leaf must hold integers >= 1, got {leaves_!r}")
    if not all(d is None or _is_int(d, 1) for d in depths_):
        raise ValueError(f"max_depth must hold None or integers >= 1, got {depths_!r}")
    if not all(_is_int(v, 1) for v in sizes_):
        raise ValueError(f"n_estimators must hold integers >= 1, got {sizes_!r}")
    m = max(sizes_) if cv_trees is None else cv_trees
    if not _is_int(m, 2):
        raise ValueError(f"cv_trees must be None or an integer >= 2, got {cv_trees!r}")
    y = np.asarray(y)
    k = min(int(cv), int(np.bincount(np.unique(y, return_inverse=True)[1]).min()))
    if k < 2:
        raise ValueError(f"cv must be >= 2 and each class needs >= 2 labels; got cv={cv} and k={k} usable folds")
    acts = as_pooled(X)
    raw = None if raw_conf is None else np.asarray(raw_conf, dtype=float)
    folds = list(StratifiedKFold(k, shuffle=True, random_state=random_state).split(np.zeros(len(y)), y))
    total = {(a, d, s): 0.0 for a in leaves_ for d in depths_ for s in sizes_}
    for tr, te in folds:
        f_tr, f_te = _view_features(
            view or {}, acts[tr], None if raw is None else raw[tr], acts[te], None if raw is None else raw[te]
        )
        y_te = (y[te] == 1).astype(float)
        for a in leaves_:
            rf = RandomForestClassifier(
                n_estimators=m, min_samples_leaf=a, max_features="sqrt", random_state=random_state
            ).fit(f_tr, y[tr])
            col = list(rf.classes_).index(1)
            per_tree = [truncated_tree_proba(tree, f_te, depths_, col) for tree in rf.estimators_]
            for d in depths_:
                P = np.stack([t[d] for t in per_tree])  # [m, n_te]
                sq = (P.mean(axis=0) - y_te) ** 2
                var = P.var(axis=0, ddof=1)
                for s in sizes_:
                    total[(a, d, s)] -= float(np.mean(sq + var * (1.0 / s - 1.0 / m))) / len(folds)
    order = sorted(total, key=lambda c: (c[2], 10**9 if c[1] is None else c[1], -c[0]))
    best = max(order, key=lambda c: total[c])  # max returns the first maximum in `order`
    scores = {f"leaf={a},depth={d},trees={s}": v for (a, d, s), v in total.items()}
    return {"min_samples_leaf": best[0], "max_depth": best[1], "n_estimators": best[2]}, scores
