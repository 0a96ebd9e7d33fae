"""Hessian power iteration / Hutchinson on known spectra, HVP vs the full Hessian, CKA invariances, mode
connectivity closed forms."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.sciml_regimes import (
    PINN,
    ConvectionProblem,
    hessian_top_eigenvalue,
    hessian_trace,
    hvp,
    linear_cka,
    mode_connectivity,
    model_loss_closure,
)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny tensors: one torch thread is faster than two on a busy 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _quad(n, seed, top=10.0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    eig = np.concatenate([[top], rng.uniform(-4.0, 5.0, n - 1)])
    A = torch.as_tensor((Q * eig) @ Q.T)
    return A, eig, (lambda ps: 0.5 * ps[0] @ A @ ps[0]), [torch.as_tensor(rng.normal(size=n))]


@given(n=st.integers(3, 25), seed=st.integers(0, 10_000))
@settings(max_examples=20, deadline=None)
def test_power_iteration_finds_the_top_eigenvalue_of_a_quadratic(n, seed):
    A, eig, f, theta = _quad(n, seed)
    lam = hessian_top_eigenvalue(f, theta, iters=500, tol=1e-12, seed=seed)
    assert lam == pytest.approx(10.0, rel=1e-3)


def test_hutchinson_trace_within_three_standard_errors():
    A, eig, f, theta = _quad(20, 1)
    m = 400
    est = hessian_trace(f, theta, samples=m, tol=1e-15, min_samples=m, seed=0)
    An = A.numpy()
    sd = math.sqrt(2 * (np.sum(An**2) - np.sum(np.diag(An) ** 2)) / m)
    assert abs(est - eig.sum()) < 3 * sd


def test_hutchinson_exact_on_diagonal_hessian():
    d = torch.tensor([1.0, -2.0, 3.5, 7.0], dtype=torch.float64)
    est = hessian_trace(lambda ps: 0.5 * (d * ps[0] ** 2).sum(), [torch.zeros(4, dtype=torch.float64)], samples=3)
    assert est == pytest.approx(float(d.sum()), abs=1e-12)


def test_hvp_matches_full_hessian_of_a_tiny_pinn_loss():
    torch.manual_seed(0)
    p = ConvectionProblem(beta=3.0)
    b = p.sample(20, 0)
    model = PINN(3, 2, seed=0)
    loss_fn, params = model_loss_closure(model, lambda m: p.loss(m, b))
    flat = torch.cat([q.reshape(-1) for q in params])
    shapes = [q.shape for q in params]

    def unflat(v):
        out, i = [], 0
        for s in shapes:
            k = int(np.prod(s))
            out.append(v[i : i + k].reshape(s))
            i += k
        return out

    H = torch.autograd.functional.hessian(lambda v: loss_fn(unflat(v)), flat)
    v = torch.randn(flat.shape, dtype=torch.float64)
    hv = torch.cat([h.reshape(-1) for h in hvp(loss_fn, params, unflat(v))])
    assert torch.allclose(hv, H @ v, rtol=1e-8, atol=1e-10)
    top = float(torch.linalg.eigvalsh(H).abs().max())
    assert abs(hessian_top_eigenvalue(loss_fn, params, iters=300, tol=1e-10)) == pytest.approx(top, rel=1e-3)
    assert float(loss_fn(params).detach()) == pytest.approx(float(p.loss(model, b).detach()), rel=1e-12)


@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 100.0), p=st.integers(1, 6), q=st.integers(1, 6))
@settings(max_examples=30, deadline=None)
def test_cka_invariances(seed, scale, p, q):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(50, p)), rng.normal(size=(50, q))
    R, _ = np.linalg.qr(rng.normal(size=(p, p)))
    assert linear_cka(X, X) == pytest.approx(1.0, abs=1e-10)
    assert linear_cka(X, scale * X @ R) == pytest.approx(1.0, abs=1e-10)
    base = linear_cka(X, Y)
    assert 0.0 <= base <= 1.0 + 1e-12
    assert linear_cka(scale * X @ R, Y) == pytest.approx(base, abs=1e-10)
    assert linear_cka(Y, X) == pytest.approx(base, abs=1e-12)


def test_cka_one_dimensional_is_squared_correlation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = 0.3 * x + rng.normal(size=200)
    assert linear_cka(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1] ** 2, rel=1e-10)


def test_cka_bad_shapes():
    with pytest.raises(ValueError, match="rows"):
        linear_cka(np.ones((3, 2)), np.ones((4, 2)))


def test_mode_connectivity_closed_forms():
    a = [torch.tensor([1.0, -2.0], dtype=torch.float64)]
    b = [torch.tensor([-1.0, 3.0], dtype=torch.float64)]
    convex = lambda ps: (ps[0] ** 2).sum()  # noqa: E731
    same = mode_connectivity(a, a, convex)
    assert same["mc"] == 0.0
    assert mode_connectivity(a, b, convex)["mc"] >= 0.0  # convex: the path lies below the chord
    well = lambda ps: ((ps[0] ** 2 - 1) ** 2).sum()  # noqa: E731  minima at +-1 per coordinate
    lo, hi = [torch.tensor([-1.0], dtype=torch.float64)], [torch.tensor([1.0], dtype=torch.float64)]
    lin = mode_connectivity(lo, hi, well)
    assert lin["mc"] < 0 and lin["t_star"] == pytest.approx(0.5)
    bez = mode_connectivity(lo, hi, well, path="bezier", bend_steps=20)
    assert len(bez["loss"]) == 101 and bez["mc"] <= 0.0


def test_mode_connectivity_and_hessian_bad_input():
    a = [torch.zeros(2, dtype=torch.float64)]
    with pytest.raises(ValueError, match="path"):
        mode_connectivity(a, a, lambda ps: ps[0].sum(), path="cubic")
    with pytest.raises(ValueError, match="shapes"):
        mode_connectivity(a, [torch.zeros(3, dtype=torch.float64)], lambda ps: ps[0].sum())
    with pytest.raises(ValueError, match="iters"):
        hessian_top_eigenvalue(lambda ps: ps[0].sum(), a, iters=0)
    with pytest.raises(ValueError, match="samples"):
        hessian_trace(lambda ps: ps[0].sum(), a, samples=0)
    with pytest.raises(TypeError, match="params"):
        hessian_trace(lambda ps: ps[0].sum(), [], samples=1)
