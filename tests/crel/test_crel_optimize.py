import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.crel import Ellipsoid, HullSet, UnionOfBalls, linear_worst_case, worst_case
from icml26.crel._optimize import _BallParam, _HullParam, _pgd, _proj_simplex


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


def _grid_instance(seed: int, i: int):
    """Instance ``i`` (0-based) of seed ``seed`` of the reproduction's grid claim."""
    rng = np.random.default_rng([seed, 77])
    for _ in range(i + 1):
        A = rng.standard_normal((2, 2))
        E = Ellipsoid(rng.standard_normal(2), np.linalg.cholesky(A @ A.T + 0.2 * np.eye(2)), rng.uniform(0.5, 2.0))
        t = E.center + rng.standard_normal(2)
        b = E.sample_boundary(1, rng)[0] * 0.8 + 0.2 * E.center
        h = float(rng.uniform(0.5, 1.5))
    return bumpy(t, b, h), E


@pytest.mark.parametrize("opt_seed", range(3))
def test_default_diverse_screen_finds_the_narrow_basin_the_structured_starts_miss(opt_seed):
    # seed 2, instance 7: the v1 full run's PGD (no screen) missed the grid minimum by 0.025; the diverse
    # screen (one start per basin) is on by default and finds it for every optimizer seed
    m, E = _grid_instance(2, 6)
    grid = worst_case(m, E, "grid", n_grid=400).value
    assert worst_case(m, E, random_state=opt_seed).value - grid <= 1e-3
    # mutant: the screen off -> the narrow basin is missed (so the grid claim can fail)
    assert worst_case(m, E, random_state=opt_seed, n_screen=0).value - grid > 1e-2


def test_top_k_screen_without_diversity_is_what_missed_basins():
    # separation=0 keeps the top screened points (all in one basin): seed 1, instance 5, optimizer seed 1
    # is the case the issue measured with n_screen=256 (off by 0.1175); the diverse choice is not
    m, E = _grid_instance(1, 4)
    grid = worst_case(m, E, "grid", n_grid=400).value
    top4 = worst_case(m, E, random_state=1, n_diverse=4, separation=0.0).value
    assert top4 - grid > 1e-2
    assert worst_case(m, E, random_state=1).value - grid <= 1e-3


def test_pgd_stays_feasible_and_is_monotone():
    E = random_ellipsoid(4, 3)
    m = bumpy(E.center + 2.0, E.center)
    rng = np.random.default_rng(0)
    U0 = rng.standard_normal((16, 3)) * 3
    n = len(U0)
    param = _BallParam(np.repeat(E.center[None], n, 0), np.repeat(E.chol[None], n, 0), np.full(n, E.radius))
    u, f, _, _, hist = _pgd(m, param, U0, max_iter=100, tol=1e-9, prune=False, check_feasible=True)
    assert bool((u.norm(dim=1) <= E.radius * (1 + 1e-12) + 1e-12).all())
    assert bool((hist[1:] <= hist[:-1] + 1e-12 * (1 + hist[:-1].abs())).all())


def test_pgd_on_a_hull_stays_on_the_simplex_and_is_monotone():
    H = HullSet(np.random.default_rng(1).standard_normal((12, 3)), 1.3)
    m = bumpy(H.center + 2.0, H.center)
    L0 = np.random.default_rng(2).standard_normal((8, len(H.vertices)))
    u, f, _, _, hist = _pgd(m, _HullParam(H.vertices, 8), L0, max_iter=100, tol=1e-9, prune=False, check_feasible=True)
    assert bool((hist[1:] <= hist[:-1] + 1e-12 * (1 + hist[:-1].abs())).all())
    assert H.contains((u @ torch.as_tensor(H.vertices)).numpy()).all()


@settings(max_examples=20, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 9))
def test_simplex_projection_is_the_nearest_point(seed, k):
    v = np.random.default_rng(seed).standard_normal((3, k)) * 3
    p = _proj_simplex(torch.as_tensor(v)).numpy()
    assert np.all(p >= 0) and np.allclose(p.sum(1), 1.0)
    # optimality: <v - p, q - p> <= 0 for every vertex q of the simplex
    for vi, pi in zip(v, p):
        assert np.all((np.eye(k) - pi) @ (vi - pi) <= 1e-9)


def test_linear_and_nonconvex_worst_case_on_a_hull():
    rng = np.random.default_rng(3)
    H = HullSet(rng.standard_normal((20, 2)), 1.5)
    w = np.array([0.4, -1.2])
    closed = linear_worst_case(w, 0.5, H)
    assert closed.value == pytest.approx(float(np.min(H.vertices @ w)) + 0.5)
    assert abs(worst_case(lin(w, 0.5), H).value - closed.value) <= 1e-6
    m = bumpy(H.center + 0.8, H.center - 0.3)
    grid = worst_case(m, H, "grid", n_grid=300).value
    pgd = worst_case(m, H)
    assert pgd.value <= grid + 1e-12 and abs(pgd.value - grid) <= 1e-3
    assert H.contains(pgd.argmin)


def test_metric_that_is_not_differentiable_gets_a_clear_error():
    E = random_ellipsoid(6, 2)
    with pytest.raises(TypeError, match="metric must return a torch.Tensor"):
        worst_case(lambda z: np.zeros(len(z)), E)
    with pytest.raises(TypeError, match="metric must be differentiable"):
        worst_case(lambda z: (z**2).sum(-1).detach(), E)
    with pytest.raises(TypeError, match="metric must be differentiable"):
        worst_case(lambda z: torch.tensor((z.detach().numpy() ** 2).sum(-1)), E)
    with pytest.raises(TypeError, match="metric must compute its value"):
        worst_case(lambda z: torch.as_tensor(z.numpy().sum(-1)), E)
    with pytest.raises(TypeError, match="floating-point"):
        worst_case(lambda z: (z > 0).sum(-1), E)
    with pytest.raises(ValueError, match="NaN or infinite gradient"):
        worst_case(lambda z: z.norm(dim=-1).sqrt() * 0 + torch.sqrt(z[:, 0] - z[:, 0]), E)
    # the grid needs no gradient: a numpy-backed metric that returns a tensor is fine there
    assert math.isfinite(worst_case(lambda z: torch.as_tensor(z.numpy().sum(-1)), E, "grid", n_grid=20).value)


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
