import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.crel import (
    ConformalReliability,
    Ellipsoid,
    GlobalCovarianceReliability,
    HullSet,
    UnionOfBalls,
    average_metric,
    conformal_quantile,
    min_calibration_size,
    sample_metrics,
    worst_of_k,
)


class GaussianGenerator:
    """y | x ~ N(m(x), diag(s)^2) in R^d, with m(x) = x * a (a test generator)."""

    def __init__(self, d: int = 2, scale=(1.0, 0.3)) -> None:
        self.d = d
        self.a = np.linspace(1.0, -1.0, d)
        self.s = np.resize(np.asarray(scale, dtype=float), d)

    def sample(self, x, n, rng):
        return float(x) * self.a + rng.standard_normal((n, self.d)) * self.s


def linear(w):
    wt = torch.as_tensor(np.asarray(w, dtype=float))
    return lambda x, z: z @ wt


@pytest.fixture
def gaussian_generator():
    return GaussianGenerator()


def test_conformal_quantile_rank():
    s = np.arange(1.0, 10.0)  # n = 9, alpha = 0.1 -> k = ceil(10 * 0.9) = 9: the largest score
    assert conformal_quantile(s, 0.1) == 9.0
    assert conformal_quantile(s[:8], 0.1) == math.inf  # n = 8: k = 9 > n
    assert conformal_quantile([1.0, 2.0, 2.0, 2.0, 3.0], 0.5) == 2.0  # ties: k = 3 -> 2.0
    assert conformal_quantile(np.arange(100.0), 0.2) == 80.0  # k = ceil(101 * 0.8) = 81 -> value 80
    assert min_calibration_size(0.1) == 9
    assert min_calibration_size(0.05) == 19
    assert min_calibration_size(0.2) == 4


def scores_and_splits(seed, set_type, n=400):
    rng = np.random.default_rng(seed)
    gen = GaussianGenerator()
    X = rng.uniform(-1, 1, n)
    Y = np.stack([gen.sample(x, 1, rng)[0] for x in X])
    rel = ConformalReliability(gen, None, linear([1.0, 0.0]), 0.9, 16, set_type, random_state=seed)
    return rel.conformity_scores(X, Y), rng


@settings(max_examples=4, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), set_type=st.sampled_from(["ellipsoid", "ball", "hull", "pcp"]))
def test_coverage_guarantee_over_random_splits(seed, set_type):
    s, rng = scores_and_splits(seed, set_type)
    n_cal = 200
    for alpha in (0.05, 0.1, 0.2):
        covs = []
        for _ in range(200):
            p = rng.permutation(len(s))
            covs.append(np.mean(s[p[n_cal:]] <= conformal_quantile(s[p[:n_cal]], alpha)))
        lo, hi = 1 - alpha - 0.01, 1 - alpha + 1 / (n_cal + 1) + 0.01
        assert lo <= np.mean(covs) <= hi, (alpha, np.mean(covs))


def test_conformalize_predict_set_coverage_and_score(gaussian_generator):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, 300)
    Y = np.stack([gaussian_generator.sample(x, 1, rng)[0] for x in X])
    rel = ConformalReliability(gaussian_generator, None, linear([1.0, 0.0]), 0.8, 16, random_state=0)
    assert rel.conformalize(X[:200], Y[:200]) is rel
    assert rel.qhat_ == conformal_quantile(rel.conformity_scores_, 0.2)
    S = rel.predict_set(X[0])
    assert isinstance(S, Ellipsoid) and S.radius == rel.qhat_
    assert 0.6 <= rel.coverage(X[200:], Y[200:]) <= 1.0
    r, z = rel.reliability(X[0], return_argmin=True)
    assert isinstance(r, float) and z.shape == (2,)
    assert np.isfinite(rel.score(X[:3])) and average_metric(rel, X[:3]).shape == (3,)
    # R is below the average metric of the samples for a linear metric (the set holds the sample mean)
    Z = rel.latent_samples(X[1])
    assert rel.reliability(X[1], latent_samples=Z) <= Z.mean(0) @ np.array([1.0, 0.0]) + 1e-12
    assert worst_of_k(rel, X[:2]).shape == (2,)
    assert ConformalReliability.calibrate is ConformalReliability.conformalize


def test_pcp_with_one_sample_equals_ball_around_it(gaussian_generator):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, 50)
    Y = np.stack([gaussian_generator.sample(x, 1, rng)[0] for x in X])
    kw = dict(confidence_level=0.9, n_samples=1, random_state=3)
    pcp = ConformalReliability(gaussian_generator, None, linear([0.5, -1.0]), set_type="pcp", **kw)
    ball = ConformalReliability(gaussian_generator, None, linear([0.5, -1.0]), set_type="ball", **kw)
    pcp.conformalize(X, Y)
    ball.conformalize(X, Y)
    np.testing.assert_allclose(pcp.conformity_scores_, ball.conformity_scores_)
    P, B = pcp.predict_set(X[0]), ball.predict_set(X[0])
    assert isinstance(P, UnionOfBalls) and isinstance(B, Ellipsoid)
    np.testing.assert_allclose(P.centers[0], B.center)
    assert P.log_volume() == pytest.approx(B.log_volume())
    assert pcp.reliability(X[1]) == pytest.approx(ball.reliability(X[1]), abs=1e-9)


def test_higher_confidence_never_increases_reliability(gaussian_generator):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, 200)
    Y = np.stack([gaussian_generator.sample(x, 1, rng)[0] for x in X])
    m = linear([1.0, 1.0])
    rels = [ConformalReliability(gaussian_generator, None, m, c, 16) for c in (0.5, 0.8, 0.95)]
    R = [rel.conformalize(X, Y).reliability(X[0]) for rel in rels]
    assert R[0] >= R[1] >= R[2]


def test_degenerate_samples_do_not_crash():
    class Constant:
        def sample(self, x, n, rng):
            return np.ones((n, 3))

    rel = ConformalReliability(Constant(), None, linear([1.0, 0, 0]), 0.9, 8, random_state=0)
    rel.conformalize(np.zeros(20), np.ones((20, 3)) + 1e-4)
    S = rel.predict_set(0.0)
    assert np.isfinite(S.log_volume())
    assert np.isfinite(rel.reliability(0.0))


# ---------------------------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1])
def test_confidence_level_outside_unit_interval(gaussian_generator, level):
    with pytest.raises(ValueError, match=r"confidence_level.*\(0, 1\)"):
        ConformalReliability(gaussian_generator, None, linear([1.0, 0]), confidence_level=level)


def test_calibration_set_too_small_says_how_many(gaussian_generator):
    rel = ConformalReliability(gaussian_generator, None, linear([1.0, 0]), confidence_level=0.95)
    with pytest.raises(ValueError, match="at least 19 are needed"):
        rel.conformalize(np.zeros(18), np.zeros((18, 2)))
    rel.conformalize(np.zeros(19), np.zeros((19, 2)))  # 19 is enough
    assert math.isfinite(rel.qhat_)


def test_encoder_output_of_wrong_shape(gaussian_generator):
    def bad_encoder(outputs):
        return np.asarray(outputs)[:, :1].ravel()  # 1-D instead of (n, d)

    rel = ConformalReliability(gaussian_generator, bad_encoder, linear([1.0]))
    with pytest.raises(ValueError, match="encoder output .* must have shape"):
        rel.conformalize(np.zeros(20), np.zeros((20, 2)))

    calls = {"n": 0}

    def drifting_encoder(outputs):  # d changes between calibration outputs and generated samples
        calls["n"] += 1
        a = np.asarray(outputs)
        return a if calls["n"] == 1 else a[:, :1]

    rel = ConformalReliability(gaussian_generator, drifting_encoder, linear([1.0, 0]))
    msg = r"encoder output for generator samples .* must have shape \(32, 2\)"
    with pytest.raises(ValueError, match=msg):
        rel.conformalize(np.zeros(20), np.zeros((20, 2)))


def test_other_bad_arguments(gaussian_generator):
    m = linear([1.0, 0])
    with pytest.raises(ValueError, match="set_type"):
        ConformalReliability(gaussian_generator, None, m, set_type="polytope")
    with pytest.raises(TypeError, match="share_samples"):
        ConformalReliability(gaussian_generator, None, m, share_samples="yes")
    with pytest.raises(ValueError, match=r"n_samples must be >= d \+ 1 = 3 for set_type='hull'"):
        ConformalReliability(gaussian_generator, None, m, n_samples=2, set_type="hull").conformalize(
            np.zeros(20), np.zeros((20, 2))
        )
    with pytest.raises(ValueError, match="n_samples"):
        ConformalReliability(gaussian_generator, None, m, n_samples=1, set_type="ellipsoid")
    with pytest.raises(TypeError, match="generator"):
        ConformalReliability(object(), None, m)
    with pytest.raises(ValueError, match="shrinkage"):
        ConformalReliability(gaussian_generator, None, m, shrinkage=1.5)
    with pytest.raises(RuntimeError, match="conformalize"):
        ConformalReliability(gaussian_generator, None, m).predict_set(0.0)
    with pytest.raises(ValueError, match="Y_cal must hold one output per condition"):
        ConformalReliability(gaussian_generator, None, m).conformalize(np.zeros(20), np.zeros((19, 2)))
    rel = ConformalReliability(gaussian_generator, None, lambda x, z: z.sum(), n_samples=4)
    rel.conformalize(np.zeros(20), np.zeros((20, 2)))
    with pytest.raises(ValueError, match="metric must map"):
        rel.reliability(0.0)
    with pytest.raises(ValueError, match="latent_samples"):
        rel.predict_set(0.0, latent_samples=np.zeros((4, 3)))


@pytest.mark.parametrize("bad", ["a", 1.5, True, [1]])
def test_random_state_of_the_wrong_type_is_named(gaussian_generator, bad):
    with pytest.raises(TypeError, match="random_state must be a non-negative integer or None"):
        ConformalReliability(gaussian_generator, None, linear([1.0, 0]), random_state=bad)
    with pytest.raises(ValueError, match="random_state"):
        ConformalReliability(gaussian_generator, None, linear([1.0, 0]), random_state=-1)
    ConformalReliability(gaussian_generator, None, linear([1.0, 0]), random_state=np.int64(3))  # numpy ints are fine


def test_calibration_outputs_of_another_dimension_blame_y_cal(gaussian_generator):
    with pytest.raises(
        ValueError, match=r"Y_cal encoded to latent dimension d = 3 and the generator's outputs to d = 2"
    ):
        ConformalReliability(gaussian_generator, None, linear([1.0, 0])).conformalize(np.zeros(50), np.ones((50, 3)))


# ---------------------------------------------------------------------------------------------- global covariance
def test_global_covariance_ellipse_is_one_shape_for_every_condition_and_covers():
    gen = GaussianGenerator(scale=(1.0, 0.3))
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, 700)
    Y = np.stack([gen.sample(x, 1, rng)[0] for x in X])
    rel = GlobalCovarianceReliability(gen, None, linear([1.0, 0.0]), X[600:], 0.9, 16, random_state=2)
    rel.conformalize(X[:300], Y[:300])
    S0, S1 = rel.predict_set(X[300]), rel.predict_set(X[301])
    np.testing.assert_array_equal(S0.chol, S1.chol)  # one shape, per-condition centres
    assert not np.allclose(S0.center, S1.center)
    # the shared covariance is the shrunk mean sample covariance: close to diag(1, 0.09) for this generator
    Sig = rel.chol_ @ rel.chol_.T
    assert abs(Sig[0, 0] - (0.9 + 0.1 * 1.09 / 2)) < 0.15 and abs(Sig[1, 1] - (0.9 * 0.09 + 0.1 * 1.09 / 2)) < 0.05
    assert 0.84 <= rel.coverage(X[300:600], Y[300:600]) <= 0.96
    assert np.isfinite(rel.reliability(X[300]))


def test_global_covariance_bad_arguments(gaussian_generator):
    m = linear([1.0, 0])
    with pytest.raises(ValueError, match="shape_conditions must hold at least one"):
        GlobalCovarianceReliability(gaussian_generator, None, m, [])
    with pytest.raises(TypeError, match="shape_conditions must be a sequence"):
        GlobalCovarianceReliability(gaussian_generator, None, m, 3.0)
    with pytest.raises(TypeError, match="set_type is fixed"):
        GlobalCovarianceReliability(gaussian_generator, None, m, [0.0], set_type="ball")
    with pytest.raises(RuntimeError, match="conformalize"):
        GlobalCovarianceReliability(gaussian_generator, None, m, [0.0, 1.0]).predict_set(0.0)


# ---------------------------------------------------------------------------------------------- shared samples
def _fitted(gen, set_type="ellipsoid", **kw):
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, 60)
    Y = np.stack([gen.sample(x, 1, rng)[0] for x in X])
    m = lambda x, z: -((z - 0.3) ** 2).sum(-1)  # noqa: E731 - a non-linear metric
    return ConformalReliability(gen, None, m, 0.9, 16, set_type, random_state=1, **kw).conformalize(X, Y)


@pytest.mark.parametrize("set_type", ["ellipsoid", "hull", "pcp"])
def test_reliability_and_predict_set_describe_the_same_set(gaussian_generator, set_type):
    rel = _fitted(gaussian_generator, set_type)
    x = 0.37
    S1, S2 = rel.predict_set(x), rel.predict_set(x)
    np.testing.assert_array_equal(rel.latent_samples(x), rel.latent_samples(x))
    r, z = rel.reliability(x, return_argmin=True)
    assert S1.contains(z)  # the argmin lies in the set predict_set returns
    assert rel.reliability(x) == r  # repeated calls: same samples, same optimizer seed
    assert rel.reliability(x, latent_samples=rel.latent_samples(x)) == r
    # the baselines use the same samples too
    vals = sample_metrics(rel, x)
    with torch.no_grad():
        expect = rel.metric(x, torch.as_tensor(rel.latent_samples(x))).numpy()
    np.testing.assert_allclose(vals, expect)
    if set_type == "ellipsoid":
        np.testing.assert_array_equal(S1.center, S2.center)
    # a new calibration forgets the shared samples; fresh=True never touches them
    Z = rel.latent_samples(x)
    assert not np.array_equal(rel.latent_samples(x, fresh=True), Z)
    np.testing.assert_array_equal(rel.latent_samples(x), Z)
    rel.clear_samples()
    assert not np.array_equal(rel.latent_samples(x), Z)


def test_share_samples_false_draws_fresh_samples(gaussian_generator):
    rel = _fitted(gaussian_generator, share_samples=False)
    assert not np.array_equal(rel.latent_samples(0.2), rel.latent_samples(0.2))
    assert not np.array_equal(rel.predict_set(0.2).center, rel.predict_set(0.2).center)


def test_shared_samples_are_keyed_by_value_and_copies():
    gen = GaussianGenerator()
    rel = _fitted(gen)
    Z = rel.latent_samples(np.float64(0.5))
    np.testing.assert_array_equal(rel.latent_samples(0.5), Z)  # same value, other type
    np.testing.assert_array_equal(rel.latent_samples(torch.tensor(0.5, dtype=torch.float64)), Z)
    Z[:] = 0.0  # the caller's copy: the cache is not changed
    assert np.any(rel.latent_samples(0.5) != 0.0)

    class Unhashable:
        __hash__ = None

    class Gen:
        def sample(self, x, n, rng):
            return rng.standard_normal((n, 2))

    rel = _fitted(Gen())
    with pytest.warns(UserWarning, match="cache key"):
        rel.latent_samples(Unhashable())


def test_hull_sets_cover_and_hold_their_samples(gaussian_generator):
    rel = _fitted(gaussian_generator, "hull")
    S = rel.predict_set(0.1)
    assert isinstance(S, HullSet) and S.radius == rel.qhat_
    if rel.qhat_ >= 1.0:  # the scaled hull holds the unscaled one, hence every sample
        assert np.all(S.contains(rel.latent_samples(0.1)))
    rng = np.random.default_rng(9)
    X = rng.uniform(-1, 1, 200)
    Y = np.stack([gaussian_generator.sample(x, 1, rng)[0] for x in X])
    assert 0.8 <= rel.coverage(X, Y) <= 1.0


def test_metric_errors_name_the_metric(gaussian_generator):
    rel = _fitted(gaussian_generator)
    rel.metric = lambda x, z: z.detach().numpy().sum(-1)
    with pytest.raises(TypeError, match="metric must return a torch.Tensor"):
        rel.reliability(0.0)
    with pytest.raises(TypeError, match="metric must return a torch.Tensor"):
        sample_metrics(rel, 0.0)
    rel.metric = lambda x, z: torch.as_tensor(z.detach().numpy().sum(-1))
    with pytest.raises(TypeError, match="metric must be differentiable"):
        rel.reliability(0.0)


def test_optimizer_seed_does_not_depend_on_an_objects_address():
    """A condition without a value repr (default object repr holds its address) gets one fixed seed, so two equal
    runs in different processes give the same worst case."""
    from icml26.crel import ConformalReliability

    class Cond:
        def __hash__(self):
            return 1

    est = ConformalReliability.__new__(ConformalReliability)
    est.random_state = 0
    assert est._optimizer_seed(Cond()) == est._optimizer_seed(Cond())
    assert est._optimizer_seed(1.0) == est._optimizer_seed(1.0) != est._optimizer_seed(2.0)
