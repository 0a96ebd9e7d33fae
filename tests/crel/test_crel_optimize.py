import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.crel import Ellipsoid, UnionOfBalls, linear_worst_case, worst_case
from icml26.crel._optimize import _pgd


def random_ellipsoid(seed: int, d: int) -> Ellipsoid:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d))
    L = np.linalg.cholesky(A @ A.T + 0.3 * np.eye(d))
    return Ellipsoid(rng.standard_normal(d), L, rng.uniform(0.5, 2))


def lin(w, b=0.0):
    wt = torch.as_tensor(np.asarray(w, dtype=float))
    return lambda z: z @ wt + b


def bumpy(t, b, h=1.0):
    tt, bt = torch.as_tensor(t), torch.as_tensor(b)
    return lambda z: -torch.log1p(((z - tt) ** 2).sum(-1)) - h * torch.exp(-((z - bt) ** 2).sum(-1) / 0.18)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 8), b=st.floats(-5, 5))
def test_pgd_equals_linear_closed_form(seed, d, b):
    E = random_ellipsoid(seed, d)
    w = np.random.default_rng(seed + 7).standard_normal(d)
    closed = linear_worst_case(w, b, E)
    # closed form itself: R = w'c + b - r ||L'w||, attained on the boundary
    expected = w @ E.center + b - E.radius * np.linalg.norm(E.chol.T @ w)
    assert closed.value == pytest.approx(expected, abs=1e-12)
    assert np.linalg.norm(E.whiten(closed.argmin)) == pytest.approx(E.radius, rel=1e-10)
    res = worst_case(lin(w, b), E)
    assert abs(res.value - closed.value) <= 1e-6
    assert E.contains(res.argmin)


def test_pgd_equals_linear_closed_form_on_union_of_balls():
    rng = np.random.default_rng(0)
    U = UnionOfBalls(rng.standard_normal((6, 3)), 0.4)
    w = rng.standard_normal(3)
    closed = linear_worst_case(w, 1.0, U)
    assert closed.value == pytest.approx((U.centers @ w).min() + 1.0 - 0.4 * np.linalg.norm(w))
    assert abs(worst_case(lin(w, 1.0), U).value - closed.value) <= 1e-6


def test_linear_worst_case_by_dense_boundary_sampling():
    E = random_ellipsoid(3, 3)
    w = np.array([0.3, -1.0, 0.5])
    R = linear_worst_case(w, 0.0, E).value
    vals = E.sample_boundary(100_000, 0) @ w
    assert vals.min() >= R - 1e-9  # nothing in the set is below the closed form
    assert vals.min() - R <= 1e-3  # and the boundary gets within 1e-3 of it


@pytest.mark.parametrize("seed", range(5))
def test_pgd_matches_dense_grid_in_2d_nonconvex(seed):
    rng = np.random.default_rng(seed)
    E = random_ellipsoid(seed, 2)
    m = bumpy(E.center + rng.standard_normal(2), E.sample_boundary(1, seed)[0] * 0.8 + 0.2 * E.center)
    pgd = worst_case(m, E).value
    grid = worst_case(m, E, "grid", n_grid=400).value
    assert pgd <= grid + 1e-12  # grid points are feasible, so PGD's minimum can only be lower
    assert abs(pgd - grid) <= 1e-3


def test_screening_finds_a_narrow_basin_that_structured_starts_miss():
    # the one instance (seed 2, #7) where the full run's PGD missed the grid minimum by 0.025
    rng = np.random.default_rng([2, 77])
    for _ in range(7):
        A = rng.standard_normal((2, 2))
        E = Ellipsoid(rng.standard_normal(2), np.linalg.cholesky(A @ A.T + 0.2 * np.eye(2)), rng.uniform(0.5, 2.0))
        t = E.center + rng.standard_normal(2)
        b = E.sample_boundary(1, rng)[0] * 0.8 + 0.2 * E.center
        h = float(rng.uniform(0.5, 1.5))
    m = bumpy(t, b, h)
    grid = worst_case(m, E, "grid", n_grid=400).value
    screened = worst_case(m, E, random_state=2, n_screen=1024).value
    assert screened <= grid + 1e-12
    assert abs(screened - grid) <= 1e-3


def test_pgd_stays_feasible_and_is_monotone():
    E = random_ellipsoid(4, 3)
    m = bumpy(E.center + 2.0, E.center)
    rng = np.random.default_rng(0)
    U0 = rng.standard_normal((16, 3)) * 3
    n = len(U0)
    u, f, _, _, hist = _pgd(
        m,
        np.repeat(E.center[None], n, 0),
        np.repeat(E.chol[None], n, 0),
        np.full(n, E.radius),
        U0,
        max_iter=100,
        tol=1e-9,
        prune=False,
        check_feasible=True,
    )
    assert bool((u.norm(dim=1) <= E.radius * (1 + 1e-12) + 1e-12).all())
    assert bool((hist[1:] <= hist[:-1] + 1e-12 * (1 + hist[:-1].abs())).all())


def test_invariances_shift_and_nesting_and_in_set_samples():
    E = random_ellipsoid(5, 3)
    m = bumpy(E.center + 1.0, E.center - 0.5)
    R = worst_case(m, E).value
    assert worst_case(lambda z: m(z) + 2.5, E).value == pytest.approx(R + 2.5, abs=1e-9)
    # a larger radius (higher confidence) gives a superset, so R can only go down
    bigger = Ellipsoid(E.center, E.chol, E.radius * 1.5)
    assert worst_case(m, bigger).value <= R + 1e-12
    # R is never above the worst in-set point
    pts = E.sample(500, 1)
    with torch.no_grad():
        assert R <= float(m(torch.as_tensor(pts)).min()) + 1e-12


def test_degenerate_inputs_raise():
    E = random_ellipsoid(6, 2)
    with pytest.raises(ValueError, match="method"):
        worst_case(lin([1.0, 0.0]), E, method="newton")
    with pytest.raises(ValueError, match="metric must map"):
        worst_case(lambda z: z, E)
    with pytest.raises(TypeError, match="S must be"):
        worst_case(lin([1.0]), [0.0])
    with pytest.raises(ValueError, match="2-D"):
        worst_case(lin([1.0, 0, 0]), random_ellipsoid(0, 3), "grid")
    with pytest.raises(ValueError, match="infinite"):
        worst_case(lin([1.0, 0.0]), Ellipsoid(np.zeros(2), np.eye(2), math.inf))
