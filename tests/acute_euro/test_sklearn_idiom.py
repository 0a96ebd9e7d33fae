"""The raw confidence in scikit-learn's idiom: as the last column of X (every tool) or as routed metadata."""

import numpy as np
import pytest
import sklearn
from sklearn.calibration import CalibratedClassifierCV
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict
from sklearn.pipeline import Pipeline

from icml26.acute_euro import ACUTEConfidenceEstimator, as_pooled, pack_features, select_view_cv


def _data(n=120, L=3, d=4, seed=0):
    """Activations that are pure noise; correctness drawn from the raw confidence: only the raw column informs."""
    rng = np.random.default_rng(seed)
    acts = rng.normal(size=(n, L, d))
    raw = rng.uniform(0, 1, n)
    y = (rng.uniform(0, 1, n) < raw).astype(int)
    return acts, raw, y


def _est(**kw):
    return ACUTEConfidenceEstimator(n_layers=3, raw_conf_column=True, n_estimators=20, random_state=0, **kw)


def test_pack_features_layout_and_roundtrip():
    acts, raw, _ = _data(n=10)
    X = pack_features(acts, raw)
    assert X.shape == (10, 3 * 4 + 1)
    assert np.array_equal(X[:, -1], raw)
    assert np.array_equal(as_pooled(X[:, :-1], n_layers=3), acts)
    assert pack_features(acts).shape == (10, 12)
    with pytest.raises(ValueError, match="raw_conf"):
        pack_features(acts, raw[:-1])
    with pytest.raises(ValueError, match="raw_conf"):
        pack_features(acts, raw + 1.0)
    with pytest.raises(ValueError, match="n_layers"):
        as_pooled(X[:, :-1], n_layers=5)


def test_column_form_equals_metadata_form():
    acts, raw, y = _data()
    a = ACUTEConfidenceEstimator(n_estimators=20, random_state=0).fit(acts, y, raw_conf=raw)
    b = _est().fit(pack_features(acts, raw), y)
    assert np.array_equal(a.predict_proba(acts, raw_conf=raw), b.predict_proba(pack_features(acts, raw)))
    assert b.n_features_in_ == 13
    with pytest.raises(ValueError, match="raw_conf must not be passed"):
        _est().fit(pack_features(acts, raw), y, raw_conf=raw)
    with pytest.raises(ValueError, match="raw_conf"):
        _est().fit(pack_features(acts, raw) * 2.0, y)  # last column outside [0, 1]


def test_cross_val_predict_carries_the_raw_confidence_into_every_fold():
    acts, raw, y = _data()
    X = pack_features(acts, raw)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    p = cross_val_predict(_est(), X, y, cv=cv, method="predict_proba")[:, 1]
    assert p.shape == (120,) and np.all((p >= 0) & (p <= 1))
    manual = np.zeros(120)
    for tr, te in cv.split(X, y):
        manual[te] = _est().fit(X[tr], y[tr]).predict_proba(X[te])[:, 1]
    assert np.array_equal(p, manual)
    # the raw column is what carries the signal: without it the forest sees noise only
    p_without = cross_val_predict(_est(include_raw_conf=False), X, y, cv=cv, method="predict_proba")[:, 1]
    assert roc_auc_score(y, p) > 0.75 > 0.65 > roc_auc_score(y, p_without)


def test_grid_search_over_views_and_forest_depth():
    acts, raw, y = _data()
    grid = [
        {"view": ["mean"], "layer": ["early", "late"], "min_samples_leaf": [1, 5]},
        {"view": ["cosine"]},
        {"view": ["pca"], "n_components": [2]},
    ]
    gs = GridSearchCV(_est(), grid, scoring="neg_brier_score", cv=3).fit(pack_features(acts, raw), y)
    assert len(gs.cv_results_["params"]) == 6
    assert gs.best_estimator_.uses_raw_conf_
    assert gs.predict_proba(pack_features(acts, raw)).shape == (120, 2)


def test_calibrated_classifier_cv_wraps_it():
    acts, raw, y = _data()
    X = pack_features(acts, raw)
    cal = CalibratedClassifierCV(_est(), cv=3, method="sigmoid").fit(X, y)
    p = cal.predict_proba(X)[:, 1]
    assert p.shape == (120,) and np.all((p > 0) & (p < 1))
    assert all(c.estimator.uses_raw_conf_ for c in cal.calibrated_classifiers_)


def test_metadata_routing_through_a_pipeline():
    acts, raw, y = _data()
    flat = pack_features(acts)
    with sklearn.config_context(enable_metadata_routing=True):
        est = ACUTEConfidenceEstimator(n_layers=3, n_estimators=20, random_state=0)
        est.set_fit_request(raw_conf=True).set_predict_proba_request(raw_conf=True).set_predict_request(raw_conf=True)
        pipe = Pipeline([("acute", est)]).fit(flat, y, raw_conf=raw)
        p = pipe.predict_proba(flat, raw_conf=raw)
        assert pipe.predict(flat, raw_conf=raw).shape == (120,)
    direct = ACUTEConfidenceEstimator(n_estimators=20, random_state=0).fit(acts, y, raw_conf=raw)
    assert np.array_equal(p, direct.predict_proba(acts, raw_conf=raw))
    assert pipe.named_steps["acute"].uses_raw_conf_


def test_select_view_cv_picks_by_inner_folds_and_validates():
    acts, raw, y = _data()
    cands = [{"view": "mean", "layer": "late"}, {"view": "cosine"}]
    best, scores = select_view_cv(
        cands, acts, y, lambda p, t: roc_auc_score(t, p), raw_conf=raw, cv=3, random_state=0, base={"n_estimators": 10}
    )
    assert best in cands and len(scores) == 2
    with pytest.raises(ValueError, match="candidates"):
        select_view_cv([], acts, y, roc_auc_score)
    with pytest.raises(ValueError, match="cv"):
        select_view_cv(cands, acts[:5], np.array([0, 1, 1, 1, 1]), roc_auc_score)


@pytest.mark.parametrize(
    "kw, err",
    [
        ({"n_layers": 0}, ValueError),
        ({"min_samples_leaf": 0}, ValueError),
        ({"max_depth": 0}, ValueError),
        ({"raw_conf_column": "yes"}, TypeError),
    ],
)
def test_new_parameters_are_validated(kw, err):
    acts, raw, y = _data(n=20)
    with pytest.raises(err, match=next(iter(kw))):
        ACUTEConfidenceEstimator(**kw).fit(acts, y, raw_conf=raw)
