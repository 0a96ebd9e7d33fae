"""Platt, isotonic and Nadaraya-Watson calibrators, and the logistic probe."""

import numpy as np
import pytest

from icml26.acute_euro import IsotonicCalibrator, NWKRCalibrator, PlattCalibrator, logistic_probe


def _conf(n=400, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.uniform(size=n)
    y = (rng.uniform(size=n) < c**2).astype(int)  # overconfident raw confidence
    return c, y


def test_nwkr_large_bandwidth_gives_base_rate():
    c, y = _conf()
    p = NWKRCalibrator(bandwidth=1e4).fit(c, y).predict_proba(c)[:, 1]
    assert np.allclose(p, y.mean(), atol=1e-6)


def test_nwkr_tiny_bandwidth_interpolates_labels():
    c, y = _conf()
    p = NWKRCalibrator(bandwidth=1e-6).fit(c, y).predict_proba(c)[:, 1]
    assert np.allclose(p, y)


def test_nwkr_cv_picks_a_grid_bandwidth_and_calibrates():
    c, y = _conf(2000)
    cal = NWKRCalibrator().fit(c, y)
    assert cal.bandwidth_ in list(np.geomspace(0.005, 0.5, 15))
    p = cal.predict_proba(np.array([0.5]))[0, 1]
    assert p == pytest.approx(0.25, abs=0.08)


@pytest.mark.parametrize("cls", [PlattCalibrator, IsotonicCalibrator, NWKRCalibrator])
def test_calibrators_reduce_smooth_ece_and_return_two_columns(cls):
    from icml26.acute_euro import smooth_ece

    c, y = _conf(3000, 1)
    ct, yt = _conf(3000, 2)
    p = cls().fit(c, y).predict_proba(ct)
    assert p.shape == (3000, 2) and np.allclose(p.sum(1), 1) and p.min() >= 0 and p.max() <= 1
    assert smooth_ece(p[:, 1], yt) < 0.5 * smooth_ece(ct, yt)


def test_isotonic_is_monotone():
    c, y = _conf()
    grid = np.linspace(0, 1, 50)
    p = IsotonicCalibrator().fit(c, y).predict_proba(grid)[:, 1]
    assert np.all(np.diff(p) >= -1e-12)


@pytest.mark.parametrize("cls", [PlattCalibrator, IsotonicCalibrator, NWKRCalibrator])
@pytest.mark.parametrize("label", [0, 1])
def test_one_class_is_refused(cls, label):
    """One class used to give a silent constant p (1 for all-correct); now fit names the problem."""
    c, y = _conf()
    with pytest.raises(ValueError, match="y must contain two classes"):
        cls().fit(c, np.full_like(y, label))


@pytest.mark.parametrize("cls", [PlattCalibrator, IsotonicCalibrator, NWKRCalibrator])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores_are_refused(cls, bad):
    c, y = _conf(20)
    c = c.copy()
    c[3] = bad
    with pytest.raises(ValueError, match="raw_conf must be real and finite"):
        cls().fit(c, y)
    fitted = cls().fit(*_conf(20))
    with pytest.raises(ValueError, match="raw_conf must be real and finite"):
        fitted.predict_proba(c)


@pytest.mark.parametrize("cls", [PlattCalibrator, IsotonicCalibrator, NWKRCalibrator])
def test_complex_and_non_numeric_input_are_refused(cls):
    c, y = _conf(20)
    with pytest.raises(ValueError, match="raw_conf must be real and finite"):
        cls().fit(c + 0j, y)
    with pytest.raises(ValueError, match="y must be real and finite"):
        cls().fit(c, y + 0j)
    with pytest.raises(TypeError, match="raw_conf must be real numbers"):
        cls().fit(np.array(["a"] * 20), y)
    with pytest.raises(TypeError, match="raw_conf must be a dense array"):
        from scipy.sparse import csr_matrix

        cls().fit(csr_matrix(c[:, None]), y)
    fitted = cls().fit(c, y)
    with pytest.raises(ValueError, match="raw_conf must be real and finite"):
        fitted.predict_proba(c + 1j)
    with pytest.raises(ValueError, match="y must be given"):
        cls().fit(c, None)


@pytest.mark.parametrize(
    "est", [PlattCalibrator(C=0.5), IsotonicCalibrator(), NWKRCalibrator(bandwidth=0.1, grid=(0.1, 0.2))]
)
def test_calibrators_clone(est):
    from sklearn.base import clone

    c, y = _conf(200)
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params()
    assert np.array_equal(twin.fit(c, y).predict_proba(c), est.fit(c, y).predict_proba(c))
    assert not hasattr(clone(est), "classes_")  # a clone is unfitted
    if est.get_params():
        key = next(iter(est.get_params()))
        assert clone(est).set_params(**{key: est.get_params()[key]}).get_params() == est.get_params()


def test_logistic_probe_runs_on_activations():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3, 4))
    y = (X[:, -1, 0] > 0).astype(int)
    raw = rng.uniform(size=200)
    probe = logistic_probe(view="mean", layer="late").fit(X, y, raw)
    assert (probe.predict(X, raw) == y).mean() > 0.9


@pytest.mark.parametrize("cls", [PlattCalibrator, IsotonicCalibrator, NWKRCalibrator])
def test_bad_inputs(cls):
    with pytest.raises(ValueError, match=r"raw_conf must lie in \[0, 1\]"):
        cls().fit([0.1, 1.5], [0, 1])
    with pytest.raises(ValueError, match="y must be binary"):
        cls().fit([0.1, 0.5], [0, 2])
    with pytest.raises(ValueError, match="y must have one label per confidence"):
        cls().fit([0.1, 0.5], [0, 1, 1])
    with pytest.raises(ValueError, match=r"raw_conf must have shape \[n\] or \[n, 1\]"):
        cls().fit(np.zeros((2, 2)), [0, 1])


def test_nwkr_bad_bandwidth():
    with pytest.raises(ValueError, match="bandwidth must be 'cv' or a positive float"):
        NWKRCalibrator(bandwidth=-1.0).fit([0.1, 0.5], [0, 1])
    with pytest.raises(ValueError, match="bandwidth must be 'cv' or a positive float"):
        NWKRCalibrator(bandwidth="loo").fit([0.1, 0.5], [0, 1])


@pytest.mark.parametrize("C", [1e-3, 0.1, 1.0, 1e4])
def test_platt_newton_solves_sklearns_logistic_objective(C):
    """Platt's two parameters minimise the same L2 logistic objective as LogisticRegression(C) (solved tightly)."""
    from sklearn.linear_model import LogisticRegression

    from icml26.acute_euro.baselines import _logit

    c, y = _conf(300, 2)
    cal = PlattCalibrator(C=C).fit(c, y)
    lr = LogisticRegression(C=C, tol=1e-12, max_iter=10000).fit(_logit(c)[:, None], y)
    assert cal.coef_ == pytest.approx(lr.coef_[0, 0], rel=1e-5, abs=1e-8)
    assert cal.intercept_ == pytest.approx(lr.intercept_[0], rel=1e-5, abs=1e-8)
    assert np.allclose(cal.predict_proba(c), lr.predict_proba(_logit(c)[:, None]), atol=1e-6)
    # separable labels: the penalty keeps the slope finite
    sep = PlattCalibrator(C=C).fit(np.array([0.1, 0.2, 0.8, 0.9]), np.array([0, 0, 1, 1]))
    assert np.isfinite(sep.coef_) and sep.coef_ > 0


@pytest.mark.parametrize("C", [0, -1.0, float("inf"), "1"])
def test_platt_rejects_bad_C(C):
    c, y = _conf(20)
    with pytest.raises(ValueError, match="C must"):
        PlattCalibrator(C=C).fit(c, y)
