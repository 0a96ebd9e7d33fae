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


def test_truncated_tree_equals_a_depth_limited_tree():
    """Reading a fully grown tree at depth d is the tree grown with max_depth=d.  One feature keeps the splits
    deterministic (with several, equally good splits of small nodes are broken by the splitter's random stream,
    which a depth limit shifts: then the two are equal in distribution, not tree by tree)."""
    from sklearn.tree import DecisionTreeClassifier

    from icml26.acute_euro import truncated_tree_proba

    rng = np.random.default_rng(1)
    X, Xt = rng.normal(size=(300, 1)), rng.normal(size=(80, 1))
    y = (np.sin(3 * X[:, 0]) + 0.5 * rng.normal(size=300) > 0).astype(int)
    full = DecisionTreeClassifier(random_state=0).fit(X, y)
    got = truncated_tree_proba(full, Xt, [1, 2, 4, 6, None, 10**6])
    assert full.tree_.max_depth > 6
    for d in (1, 2, 4, 6):
        ref = DecisionTreeClassifier(max_depth=d, random_state=0).fit(X, y).predict_proba(Xt)[:, 1]
        assert np.array_equal(got[d], ref)
    assert np.array_equal(got[None], full.predict_proba(Xt)[:, 1])
    assert np.array_equal(got[10**6], got[None])


def test_select_forest_cv_scores_are_exact_forests_and_validate():
    """At the grown size m the (leaf, full depth) score is the inner-CV minus-Brier of the real m-tree ACUTE forest;
    other sizes follow the unbiased T-tree estimate (pbar - y)^2 + s^2 (1/T - 1/m), so larger forests score better."""
    from sklearn.model_selection import StratifiedKFold

    from icml26.acute_euro import select_forest_cv

    acts, raw, y = _data(n=90)
    view = {"view": "mean", "layer": "late"}
    best, scores = select_forest_cv(
        acts,
        y,
        raw,
        view=view,
        min_samples_leaf=(1, 3),
        max_depth=(2, None),
        n_estimators=(4, 12, 50),
        cv=3,
        random_state=0,
        cv_trees=12,
    )
    assert len(scores) == 12 and set(best) == {"min_samples_leaf", "max_depth", "n_estimators"}
    assert scores[f"leaf={best['min_samples_leaf']},depth={best['max_depth']},trees={best['n_estimators']}"] == max(
        scores.values()
    )
    for leaf, d in ((1, 2), (3, None)):
        got = [scores[f"leaf={leaf},depth={d},trees={t}"] for t in (4, 12, 50)]
        assert got[0] < got[1] < got[2]
    assert best["n_estimators"] == 50
    for leaf, k in ((1, 12), (3, 12)):
        vals = []
        for tr, te in StratifiedKFold(3, shuffle=True, random_state=0).split(acts, y):
            est = ACUTEConfidenceEstimator(
                **view, n_estimators=k, min_samples_leaf=leaf, max_depth=None, random_state=0
            )
            p = est.fit(acts[tr], y[tr], raw_conf=raw[tr]).predict_proba(acts[te], raw_conf=raw[te])[:, 1]
            vals.append(-np.mean((p - y[te]) ** 2))
        assert scores[f"leaf={leaf},depth=None,trees={k}"] == pytest.approx(np.mean(vals), abs=1e-12)
    with pytest.raises(ValueError, match="max_depth"):
        select_forest_cv(acts, y, raw, view=view, max_depth=(0,))
    with pytest.raises(ValueError, match="min_samples_leaf"):
        select_forest_cv(acts, y, raw, view=view, min_samples_leaf=())
    with pytest.raises(ValueError, match="cv_trees"):
        select_forest_cv(acts, y, raw, view=view, cv_trees=1)
    with pytest.raises(ValueError, match="cv"):
        select_forest_cv(acts[:5], np.array([0, 1, 1, 1, 1]), raw[:5], view=view)
