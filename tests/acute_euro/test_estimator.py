"""ACUTEConfidenceEstimator: views, leakage, determinism, sklearn conventions and bad inputs."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from icml26.acute_euro import ACUTEConfidenceEstimator, as_pooled, layer_index
from icml26.acute_euro.estimator import select_view


def _data(n=120, L=4, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, L, d))
    y = (X[:, -1, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    raw = rng.uniform(size=n)
    return X, y, raw


def _small(**kw):
    return ACUTEConfidenceEstimator(n_estimators=20, random_state=0, **kw)


def test_layer_index_mapping():
    assert [layer_index(x, 4) for x in ("early", "mid", "late")] == [1, 2, 3]
    assert [layer_index(x, 12) for x in ("early", "mid", "late")] == [3, 6, 11]
    assert layer_index(-1, 4) == 3
    with pytest.raises(ValueError, match="layer must lie in"):
        layer_index(4, 4)
    with pytest.raises(ValueError, match="layer must be one of"):
        layer_index("top", 4)


def test_mean_view_selects_layer_and_raw_conf_is_last():
    X, y, raw = _data()
    est = _small(view="mean", layer="mid").fit(X, y, raw_conf=raw)
    F = est.transform_features(X, raw)
    assert F.shape == (120, 6 + 1)
    assert np.array_equal(F[:, :6], X[:, 2, :])
    assert np.array_equal(F[:, -1], raw)
    est2 = _small(view="mean", include_raw_conf=False).fit(X, y, raw_conf=raw)
    assert est2.transform_features(X).shape == (120, 6)


def test_cosine_view_identical_layers_give_one_and_length_L_minus_1():
    X, y, raw = _data()
    X[:, :, :] = X[:, :1, :]  # every layer equal
    est = _small(view="cosine", include_raw_conf=False).fit(X, y)
    F = est.transform_features(X)
    assert F.shape == (120, 3)
    assert np.allclose(F, 1.0)


def test_pca_view_is_fitted_on_train_only():
    X, y, raw = _data()
    est = _small(view="pca", n_components=3).fit(X[:80], y[:80], raw[:80])
    comps = [p.components_.copy() for p in est.pcas_]
    F_test = est.transform_features(X[80:], raw[80:])
    assert F_test.shape == (40, 4 * 3 + 1)
    for p, c in zip(est.pcas_, comps):
        assert np.array_equal(p.components_, c)  # transforming the test set did not refit
    est.predict_proba(X[80:], raw[80:])
    for p, c in zip(est.pcas_, comps):
        assert np.array_equal(p.components_, c)
    # the projection uses the training mean, not the test mean
    manual = (X[80:, 0, :] - est.pcas_[0].mean_) @ est.pcas_[0].components_.T
    assert np.allclose(F_test[:, :3], manual)


def test_mean_pooling_of_variable_length_lists():
    rng = np.random.default_rng(1)
    seqs = [rng.normal(size=(t, 3, 5)) for t in (1, 4, 7)]
    pooled = as_pooled(seqs)
    assert pooled.shape == (3, 3, 5)
    assert np.allclose(pooled[1], seqs[1].mean(axis=0))


def test_deterministic_given_random_state_and_probabilities_valid():
    X, y, raw = _data()
    p1 = ACUTEConfidenceEstimator(n_estimators=30, random_state=7).fit(X, y, raw).predict_proba(X, raw)
    p2 = ACUTEConfidenceEstimator(n_estimators=30, random_state=7).fit(X, y, raw).predict_proba(X, raw)
    assert p1.shape == (120, 2)
    assert np.array_equal(p1, p2)
    assert p1.min() >= 0 and p1.max() <= 1 and np.allclose(p1.sum(1), 1)


def test_learns_a_signal_in_one_layer():
    X, y, raw = _data(n=600)
    est = _small(view="mean", layer="late").fit(X[:400], y[:400], raw[:400])
    acc = (est.predict(X[400:], raw[400:]) == y[400:]).mean()
    assert acc > 0.8


def test_custom_estimator_is_cloned():
    X, y, raw = _data()
    rf = RandomForestClassifier(n_estimators=5, random_state=0)
    est = ACUTEConfidenceEstimator(estimator=rf).fit(X, y, raw)
    assert est.estimator_ is not rf and not hasattr(rf, "estimators_")


def test_select_view_uses_validation_split():
    from icml26.acute_euro import auc_euro

    X, y, raw = _data(n=300)
    cands = [{"view": "mean", "layer": 0, "n_estimators": 20}, {"view": "mean", "layer": "late", "n_estimators": 20}]
    best, scores = select_view(cands, X[:200], y[:200], X[200:], y[200:], auc_euro, raw[:200], raw[200:], 0)
    assert best["layer"] == "late" and scores[1] > scores[0]


@pytest.mark.parametrize(
    "kwargs, call, err, match",
    [
        ({"view": "median"}, "fit", ValueError, "view must be one of"),
        ({"view": "pca", "n_components": 0}, "fit", ValueError, "n_components must be"),
        ({"include_raw_conf": "yes"}, "fit", TypeError, "include_raw_conf must be a bool"),
        ({"estimator": object()}, "fit", TypeError, "estimator must be"),
        ({"view": "cosine"}, "fit1layer", ValueError, "needs at least 2 layers"),
        ({}, "badraw", ValueError, "raw_conf must be finite and lie in"),
        ({}, "missingraw", ValueError, "raw_conf is required"),
        ({}, "shape", ValueError, "fitted on"),
        ({}, "ylen", ValueError, "y must have one label per row"),
    ],
)
def test_bad_inputs(kwargs, call, err, match):
    X, y, raw = _data()
    est = _small(**kwargs)
    with pytest.raises(err, match=match):
        if call == "fit":
            est.fit(X, y, raw)
        elif call == "fit1layer":
            est.fit(X[:, :1, :], y)
        elif call == "badraw":
            est.fit(X, y, raw + 1.0)
        elif call == "missingraw":
            est.fit(X, y, raw).predict_proba(X)
        elif call == "shape":
            est.fit(X, y, raw).predict_proba(X[:, :, :3], raw)
        elif call == "ylen":
            est.fit(X, y[:-1], raw)
