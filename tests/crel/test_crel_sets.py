import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.crel import Ellipsoid, UnionOfBalls, log_unit_ball_volume


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
