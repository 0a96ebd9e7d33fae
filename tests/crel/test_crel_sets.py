import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.crel import Ellipsoid, HullSet, UnionOfBalls, log_unit_ball_volume


def random_ellipsoid(seed: int, d: int = 3, radius: float | None = None) -> Ellipsoid:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d))
    L = np.linalg.cholesky(A @ A.T + 0.3 * np.eye(d))
    r = rng.uniform(0.5, 2.0) if radius is None else radius
    return Ellipsoid(rng.standard_normal(d), L, r)


def test_unit_ball_volume_closed_forms():
    assert math.exp(log_unit_ball_volume(1)) == pytest.approx(2.0)
    assert math.exp(log_unit_ball_volume(2)) == pytest.approx(math.pi)
    assert math.exp(log_unit_ball_volume(3)) == pytest.approx(4 / 3 * math.pi)


def test_ellipsoid_contains_center_and_not_just_outside():
    E = random_ellipsoid(0)
    assert E.contains(E.center)
    e1 = np.eye(3)[0]
    assert E.contains(E.center + 0.9999 * E.radius * E.chol @ e1)
    assert not E.contains(E.center + 1.0001 * E.radius * E.chol @ e1)


def test_ellipsoid_log_volume_matches_closed_form_and_monte_carlo():
    E = random_ellipsoid(1)
    expected = 3 * math.log(E.radius) + math.log(abs(np.linalg.det(E.chol))) + math.log(4 / 3 * math.pi)
    assert E.log_volume() == pytest.approx(expected, rel=1e-12)
    # hit-or-miss Monte Carlo in a bounding box (d = 3), within 2 %
    rng = np.random.default_rng(0)
    half = E.radius * np.sqrt((E.chol**2).sum(axis=1))  # exact half-widths of the bounding box
    P = rng.uniform(E.center - half, E.center + half, size=(400_000, 3))
    mc = E.contains(P).mean() * np.prod(2 * half)
    assert mc == pytest.approx(math.exp(E.log_volume()), rel=0.02)


def test_degenerate_radius_and_infinite_radius():
    E = random_ellipsoid(2, radius=0.0)
    assert E.log_volume() == -math.inf
    np.testing.assert_allclose(E.project(E.center + 1.0), E.center)
    assert random_ellipsoid(2, radius=math.inf).log_volume() == math.inf


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 5), scale=st.floats(0.1, 10.0))
def test_ellipsoid_projection_lands_in_set_on_boundary_and_is_idempotent(seed, d, scale):
    E = random_ellipsoid(seed, d)
    rng = np.random.default_rng(seed + 1)
    z = E.center + scale * rng.standard_normal((20, d))
    p = E.project(z)
    assert E.contains(p).all()
    np.testing.assert_array_equal(E.project(p), p)  # idempotent
    outside = ~E.contains(z)
    u = np.linalg.norm(E.whiten(p[outside]), axis=1)
    np.testing.assert_allclose(u, E.radius, rtol=1e-8)  # outside points land on the boundary
    np.testing.assert_array_equal(p[~outside], z[~outside])  # inside points stay


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
def test_ellipsoid_projection_is_nearest_point(seed):
    E = random_ellipsoid(seed, 2)
    rng = np.random.default_rng(seed)
    z = E.center + 4 * rng.standard_normal(2)
    p = E.project(z)
    cand = np.vstack([E.sample_boundary(20_000, seed), E.sample(5_000, seed)])
    assert np.linalg.norm(p - z) <= np.linalg.norm(cand - z, axis=1).min() + 1e-9


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 6), r=st.floats(0.05, 3.0))
def test_ball_projection_is_the_nearest_point(seed, d, r):
    rng = np.random.default_rng(seed)
    c = rng.standard_normal(d)
    E = Ellipsoid(c, np.eye(d), r)
    z = c + 3 * rng.standard_normal(d)
    p = E.project(z)
    dist = np.linalg.norm(z - c)
    expected = z if dist <= r else c + (z - c) * r / dist
    np.testing.assert_allclose(p, expected, atol=1e-9)
    assert E.contains(p)
    np.testing.assert_array_equal(E.project(p), p)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), K=st.integers(1, 6), d=st.integers(1, 4))
def test_union_of_balls_projection(seed, K, d):
    rng = np.random.default_rng(seed)
    U = UnionOfBalls(rng.standard_normal((K, d)), rng.uniform(0.1, 1.0))
    z = 3 * rng.standard_normal((10, d))
    p = U.project(z)
    assert U.contains(p).all()
    np.testing.assert_array_equal(U.project(p), p)
    # nearest: no ball's own projection is closer
    for k in range(K):
        c = U.centers[k]
        dist = np.linalg.norm(z - c, axis=1, keepdims=True)
        pk = np.where(dist <= U.radius, z, c + (z - c) * U.radius / np.maximum(dist, 1e-300))
        assert np.all(np.linalg.norm(p - z, axis=1) <= np.linalg.norm(pk - z, axis=1) + 1e-12)


def test_union_of_balls_log_volume():
    d, r = 3, 0.7
    one = UnionOfBalls(np.zeros((1, d)), r)
    assert one.log_volume() == pytest.approx(d * math.log(r) + log_unit_ball_volume(d))
    far = UnionOfBalls(np.array([[0.0, 0, 0], [10.0, 0, 0], [0, 10.0, 0]]), r)  # disjoint: exact sum
    assert far.log_volume(n_mc=2000) == pytest.approx(math.log(3) + one.log_volume(), abs=1e-12)
    same = UnionOfBalls(np.zeros((4, d)), r)  # identical balls: the volume of one
    assert same.log_volume(n_mc=2000) == pytest.approx(one.log_volume(), abs=1e-12)
    rng = np.random.default_rng(3)
    U = UnionOfBalls(rng.standard_normal((5, 2)) * 0.6, 0.5)
    P = rng.uniform(-3, 3, size=(400_000, 2))
    mc = U.contains(P).mean() * 36.0
    assert math.exp(U.log_volume(n_mc=50_000)) == pytest.approx(mc, rel=0.02)


def test_set_input_validation():
    with pytest.raises(ValueError, match="chol"):
        Ellipsoid(np.zeros(2), np.eye(3), 1.0)
    with pytest.raises(ValueError, match="chol"):
        Ellipsoid(np.zeros(2), np.array([[1.0, 1.0], [0.0, 1.0]]), 1.0)  # not lower triangular
    with pytest.raises(ValueError, match="radius"):
        Ellipsoid(np.zeros(2), np.eye(2), -1.0)
    with pytest.raises(ValueError, match="centers"):
        UnionOfBalls(np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="z must have shape"):
        Ellipsoid(np.zeros(2), np.eye(2), 1.0).contains(np.zeros(3))


def random_hull(seed: int, d: int = 2, K: int = 16, r: float = 1.3) -> HullSet:
    return HullSet(np.random.default_rng(seed).standard_normal((K, d)) * [1.0, 0.4, 2.0][:d], r)


@pytest.mark.parametrize("d", [2, 3])
def test_hull_gauge_facets_equal_lp_and_scale_the_hull(d):
    H = random_hull(0, d)
    v = np.random.default_rng(1).standard_normal((20, d))
    facets = H.gauge(v)  # 20 points: closed form from qhull's facets
    lp = np.array([H._gauge_lp(x) for x in v])
    assert np.allclose(facets, lp, atol=1e-9)
    assert H.gauge(2.5 * v[0]) == pytest.approx(2.5 * H.gauge(v[0]))  # positively homogeneous
    # the samples lie in the unscaled hull (gauge <= 1); the hull's vertices have gauge exactly 1
    assert np.all(H.gauge(H.samples - H.center) <= 1 + 1e-9)
    assert np.allclose(H.gauge(H.samples[H._hull_idx] - H.center), 1.0)


def test_hull_contains_center_vertices_and_not_just_outside():
    H = random_hull(2)
    assert H.contains(H.center)
    assert np.all(H.contains(H.vertices))
    v = H.vertices[0] - H.center
    assert not H.contains(H.center + 1.0001 * v)


def test_hull_log_volume_matches_monte_carlo():
    H = random_hull(3, d=3, K=30)
    lo, hi = H.vertices.min(0), H.vertices.max(0)
    pts = np.random.default_rng(0).uniform(lo, hi, size=(200_000, 3))
    mc = np.prod(hi - lo) * np.mean(H.contains(pts))
    assert math.exp(H.log_volume()) == pytest.approx(mc, rel=0.02)
    # a radius scales the volume by r^d
    assert HullSet(H.samples, 2 * H.radius).log_volume() == pytest.approx(H.log_volume() + 3 * math.log(2))


@settings(max_examples=10, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), scale=st.floats(1.1, 10.0))
def test_hull_projection_lands_on_boundary_and_is_idempotent(seed, scale):
    H = random_hull(seed)
    z = H.center + scale * (H.sample_boundary(5, seed) - H.center) + 0.01
    p = H.project(z)
    assert np.all(H.contains(p))
    outside = ~H.contains(z)
    assert np.allclose(H.gauge(p[outside] - H.center), H.radius, atol=1e-6)
    assert np.allclose(H.project(p), p)
    # nearest point: no sampled point of the set is closer
    inner = H.center + (H.sample_boundary(2000, 1) - H.center) * np.random.default_rng(2).random((2000, 1))
    for zi, pi in zip(z[outside], p[outside]):
        assert np.linalg.norm(zi - pi) <= np.linalg.norm(inner - zi, axis=1).min() + 1e-7


def test_hull_degenerate_and_bad_inputs():
    H = HullSet(np.ones((5, 2)), 1.0)  # all samples equal: no crash, only the centre is inside
    assert H.contains(np.ones(2)) and not H.contains(np.array([1.0, 1.1]))
    assert H.log_volume() == -math.inf
    with pytest.raises(ValueError, match="samples"):
        HullSet(np.ones((1, 2)), 1.0)
    with pytest.raises(ValueError, match="radius"):
        HullSet(np.ones((3, 2)), -1.0)
