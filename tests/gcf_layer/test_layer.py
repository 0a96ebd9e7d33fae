"""FinitelyConvex: closed-form approximation, Danskin gradients, selections, projection, bad inputs."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.gcf_layer import FinitelyConvex, linear_kernel, lp_cost, neg_lp_cost, sqrt_value_kernel

torch.set_num_threads(1)
D64 = torch.float64


def _quadratic_layer(n: int) -> tuple[FinitelyConvex, float]:
    """max_j [x y_j - y_j^2 / 2] over a grid y_j on [-1, 1]: approximates f(x) = x^2 / 2."""
    y = torch.linspace(-1, 1, n, dtype=D64)[:, None]
    layer = FinitelyConvex(n, 1, 1, linear_kernel, y_init=y, b_init=(y[:, 0] ** 2) / 2, dtype=D64)
    return layer, 2.0 / (n - 1)


@pytest.mark.parametrize("n", [5, 11, 41])
def test_closed_form_approximation_error_is_delta_squared_over_8(n):
    layer, delta = _quadratic_layer(n)
    x = torch.linspace(-1, 1, 20001, dtype=D64)[:, None]
    with torch.no_grad():
        f = layer(x, "hard")[0]
    err = (x[:, 0] ** 2 / 2 - f).abs().max().item()
    assert err == pytest.approx(delta**2 / 8, rel=1e-6)
    grad_err = (layer.gradient(x)[:, 0] - x[:, 0]).abs().max().item()
    assert grad_err <= delta / 2 + 1e-12


def test_error_shrinks_as_n_grows():
    errs = []
    x = torch.linspace(-1, 1, 4001, dtype=D64)[:, None]
    for n in (3, 9, 33, 129):
        layer, _ = _quadratic_layer(n)
        with torch.no_grad():
            errs.append((x[:, 0] ** 2 / 2 - layer(x, "hard")[0]).abs().max().item())
    assert all(a > b for a, b in zip(errs, errs[1:]))


def _random_layer(kernel, n=7, d=2, seed=0, **kw) -> FinitelyConvex:
    g = torch.Generator().manual_seed(seed)
    return FinitelyConvex(
        n,
        d,
        d,
        kernel,
        y_init=torch.rand(n, d, generator=g, dtype=D64),
        b_init=torch.rand(n, generator=g, dtype=D64),
        dtype=D64,
        **kw,
    )


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_linear_kernel_layer_is_convex(seed, t):
    layer = _random_layer(linear_kernel, seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    a, b = torch.randn(2, 5, 2, generator=g, dtype=D64)
    with torch.no_grad():
        lhs = layer(t * a + (1 - t) * b, "hard")[0]
        rhs = t * layer(a, "hard")[0] + (1 - t) * layer(b, "hard")[0]
    assert (lhs <= rhs + 1e-12).all()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["linear", "sqrt", "neg_lp3"]))
def test_layer_is_upper_envelope_of_kernel_pieces_and_fenchel_young_holds(seed, name):
    kernel = {"linear": linear_kernel, "sqrt": sqrt_value_kernel, "neg_lp3": neg_lp_cost(3.0)}[name]
    layer = _random_layer(kernel, seed=seed)
    g = torch.Generator().manual_seed(seed + 7)
    x = torch.rand(50, 2, generator=g, dtype=D64)
    with torch.no_grad():
        f = layer(x, "hard")[0]
        pieces = kernel(x, layer.y) - layer.b
        assert torch.allclose(f, pieces.max(1).values)  # a max over kernel pieces: k-convex by construction
        z = torch.rand(20, 2, generator=g, dtype=D64)
        fk, _ = layer.transform(z, x_pool=x, sup=True)  # k-conjugate over the pool
        # Fenchel-Young: f(x) + f^k(z) >= k(x, z) on the pool
        assert (f[:, None] + fk[None, :] >= kernel(x, z) - 1e-12).all()
        # f^k(y_j) <= b_j: each piece lies below f
        fk_y, _ = layer.transform(layer.y.detach(), x_pool=x, sup=True)
        assert (fk_y <= layer.b + 1e-12).all()


@pytest.mark.parametrize("kernel", [linear_kernel, sqrt_value_kernel, neg_lp_cost(3.0), neg_lp_cost(1.5)])
def test_hard_gradient_matches_finite_differences_and_danskin(kernel):
    layer = _random_layer(kernel, n=9, seed=3)
    x = torch.rand(40, 2, generator=torch.Generator().manual_seed(4), dtype=D64) * 0.8 + 0.1
    with torch.no_grad():
        s = kernel(x, layer.y) - layer.b
        top2 = s.topk(2, dim=1).values
    x = x[(top2[:, 0] - top2[:, 1]) > 1e-3]  # away from kinks
    assert len(x) > 10
    g = layer.gradient(x, "hard")
    h = 1e-6
    for i in range(2):
        e = torch.zeros(2, dtype=D64)
        e[i] = h
        with torch.no_grad():
            fd = (layer(x + e, "hard")[0] - layer(x - e, "hard")[0]) / (2 * h)
        assert torch.allclose(g[:, i], fd, atol=1e-6)
    # Danskin: grad f(x) = grad_x k(x, y_{j*(x)})
    idx = layer.select(x, "hard").index
    xr = x.clone().requires_grad_(True)
    k_star = kernel(xr, layer.y.detach()).gather(1, idx[:, None]).sum()
    (gk,) = torch.autograd.grad(k_star, xr)
    assert torch.allclose(g, gk, atol=1e-12)


def test_soft_lse_gradient_matches_finite_differences():
    layer = _random_layer(neg_lp_cost(3.0), seed=5, smoothing="lse", temp=20.0)
    x = torch.rand(30, 2, generator=torch.Generator().manual_seed(6), dtype=D64)
    g = layer.gradient(x, "soft")
    h = 1e-6
    for i in range(2):
        e = torch.zeros(2, dtype=D64)
        e[i] = h
        with torch.no_grad():
            fd = (layer(x + e, "soft")[0] - layer(x - e, "soft")[0]) / (2 * h)
        assert torch.allclose(g[:, i], fd, atol=1e-6)


@pytest.mark.parametrize("temp", [1.0, 10.0, 500.0])
def test_lse_bounds(temp):
    layer = _random_layer(linear_kernel, n=12, seed=1, smoothing="lse", temp=temp, default_option=True)
    x = torch.randn(200, 2, generator=torch.Generator().manual_seed(2), dtype=D64)
    with torch.no_grad():
        f, f_tau = layer(x, "hard")[0], layer(x, "soft")[0]
    m = layer.n_candidates + 1
    assert (f <= f_tau + 1e-12).all() and (f_tau <= f + math.log(m) / temp + 1e-12).all()


def test_concave_mode_is_min_of_pieces():
    layer = _random_layer(lp_cost(3.0), seed=2, mode="concave")
    x = torch.randn(50, 2, dtype=D64)
    with torch.no_grad():
        u = layer(x, "hard")[0]
        assert torch.allclose(u, (lp_cost(3.0)(x, layer.y) - layer.b).min(1).values)
        assert (layer(x, "soft")[0] >= u - 1e-12).all()  # softmax mean of a min is above the min


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_hard_selection_recovers_argmax(seed):
    layer = _random_layer(linear_kernel, n=15, seed=seed, default_option=True)
    x = torch.rand(64, 2, generator=torch.Generator().manual_seed(seed + 1), dtype=D64)
    with torch.no_grad():
        Y, b = layer.options()
        s = x @ Y.T - b
        sel = layer.select(x, "hard")
    assert torch.equal(sel.index, s.argmax(1))
    assert torch.allclose(sel.value, s.max(1).values)
    assert torch.equal(sel.choice, Y[sel.index]) and torch.equal(sel.price, b[sel.index])
    assert torch.equal(sel.weights.sum(1), torch.ones(64, dtype=D64))


def test_hard_ties_go_to_higher_price():
    # x = 1: option 1 (y=0.5, b=0) and option 2 (y=1, b=0.5) tie at utility 0.5; the default gives 0.
    layer = FinitelyConvex(
        2,
        1,
        1,
        linear_kernel,
        y_init=torch.tensor([[0.5], [1.0]], dtype=D64),
        b_init=torch.tensor([0.0, 0.5], dtype=D64),
        default_option=True,
        dtype=D64,
    )
    sel = layer.select(torch.tensor([[1.0]], dtype=D64), "hard")
    assert sel.price.item() == 0.5 and sel.index.item() == 2


def test_ste_forward_is_hard_and_backward_is_soft():
    x = torch.rand(32, 2, generator=torch.Generator().manual_seed(9), dtype=D64)
    grads = {}
    for sel in ("soft", "hard", "ste"):
        layer = _random_layer(sqrt_value_kernel, n=10, seed=4, default_option=True, temp=5.0)
        out = layer.select(x, sel)
        if sel == "ste":
            hard = layer.select(x, "hard")
            for a, b in zip(out[:4], hard[:4]):
                assert torch.allclose(a, b)
        (out.price.sum() + out.value.sum() + out.choice.sum()).backward()
        grads[sel] = torch.cat([layer.y.grad.ravel(), layer.b.grad.ravel()])
    assert torch.allclose(grads["ste"], grads["soft"])
    assert not torch.allclose(grads["soft"], grads["hard"])  # the two backward passes really differ


def test_projection_box_and_budget():
    layer = FinitelyConvex(50, 3, 3, y_bounds=(0.0, 1.0), y_budget=1.0, y_init=torch.randn(50, 3) * 2)
    assert layer.is_feasible()
    y0 = layer.y.detach().clone()
    layer.project_()
    assert torch.allclose(layer.y, y0)  # idempotent
    # Euclidean projection: no random feasible point is closer to v than proj(v)
    g = torch.Generator().manual_seed(0)
    v = torch.randn(1, 3, generator=g) + 0.5
    with torch.no_grad():
        layer.y[:1] = v
    layer.project_()
    p = layer.y[:1].detach()
    cand = torch.rand(20000, 3, generator=g)
    cand = cand[cand.sum(1) <= 1.0]
    assert (p - v).norm() <= (cand - v).norm(dim=1).min() + 1e-5


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_parameter_set_is_convex(seed, t):
    g = torch.Generator().manual_seed(seed)

    def make():
        return FinitelyConvex(
            6,
            2,
            2,
            y_bounds=(-1.0, 2.0),
            y_budget=1.5,
            y_init=torch.randn(6, 2, generator=g) * 3,
            generator=g,
        )

    a, b = make(), make()
    assert a.is_feasible() and b.is_feasible()
    with torch.no_grad():
        a.y.copy_(t * a.y + (1 - t) * b.y)
    assert a.is_feasible()


def test_bad_inputs_raise_naming_the_argument():
    with pytest.raises(ValueError, match="y_bounds"):
        FinitelyConvex(4, 1, 1, y_bounds=(1.0, 1.0))
    with pytest.raises(ValueError, match="y_bounds"):
        FinitelyConvex(4, 1, 1, y_bounds=(2.0, 0.0))
    with pytest.raises(ValueError, match="n_candidates"):
        FinitelyConvex(0, 1, 1)
    with pytest.raises(ValueError, match="temp"):
        FinitelyConvex(4, 1, 1, temp=0.0)
    with pytest.raises(ValueError, match="mode"):
        FinitelyConvex(4, 1, 1, mode="both")
    with pytest.raises(ValueError, match="default_option"):
        FinitelyConvex(4, 1, 1, y_bounds=(0.5, 1.0), default_option=True)
    with pytest.raises(TypeError, match="kernel"):
        FinitelyConvex(4, 2, 2, kernel=lambda x: x)
    with pytest.raises(TypeError, match="kernel"):
        FinitelyConvex(4, 2, 2, kernel=lambda x, y: (x * y).sum(1))  # elementwise: wrong output shape
    with pytest.raises(TypeError, match="kernel"):
        FinitelyConvex(4, 2, 2, kernel="linear")
    with pytest.raises(ValueError, match="p must"):
        lp_cost(1.0)
    layer = FinitelyConvex(4, 2, 2)
    with pytest.raises(ValueError, match="x must be finite"):
        layer(torch.tensor([[float("nan"), 0.0]]))
    with pytest.raises(ValueError, match="x must have shape"):
        layer(torch.zeros(3, 3))
    with pytest.raises(TypeError, match="x must"):
        layer(np.zeros((3, 2)))
    with pytest.raises(TypeError, match="dtype"):
        layer(torch.zeros(3, 2, dtype=D64))
    with pytest.raises(ValueError, match="selection"):
        layer(torch.zeros(3, 2), "argmax")


def _bisection_projection(v, lo, hi, budget, steps=200):
    """Reference: clamp(v - lam) with lam found by bisection in float64 (the slow, obviously right way)."""
    v = v.double()
    lam_lo, lam_hi = torch.zeros(v.shape[0], 1, dtype=D64), torch.full((v.shape[0], 1), 1e3, dtype=D64)
    for _ in range(steps):
        mid = (lam_lo + lam_hi) / 2
        big = (v - mid).clamp(lo, hi).sum(1, keepdim=True) > budget
        lam_lo, lam_hi = torch.where(big, mid, lam_lo), torch.where(big, lam_hi, mid)
    inside = v.clamp(lo, hi).sum(1, keepdim=True) <= budget
    return torch.where(inside, v.clamp(lo, hi), (v - lam_hi).clamp(lo, hi))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(1, 6),
    st.sampled_from([(0.0, 1.0), (-1.0, 2.0), (-3.0, 0.5), None]),
    st.floats(0.1, 3.0),
)
def test_projection_is_the_exact_kink_interpolation(seed, d, bounds, budget):
    lo, hi = bounds if bounds is not None else (-math.inf, math.inf)
    if d * lo > budget:
        budget = d * lo + 0.5  # keep the feasible set non-empty
    v = torch.randn(64, d, generator=torch.Generator().manual_seed(seed), dtype=D64) * 3
    layer = FinitelyConvex(64, d, d, y_bounds=bounds, y_budget=budget, y_init=v, dtype=D64)
    expected = _bisection_projection(v, lo, hi, budget)
    assert torch.allclose(layer.y.detach(), expected, atol=1e-9)
    assert layer.is_feasible(tol=1e-9)


def test_projection_onto_a_halfspace_without_box():
    v = torch.randn(40, 3, generator=torch.Generator().manual_seed(3), dtype=D64) * 3
    layer = FinitelyConvex(40, 3, 3, y_budget=1.0, y_init=v, dtype=D64)
    over = v.sum(1) > 1.0
    expected = torch.where(over[:, None], v - ((v.sum(1) - 1.0) / 3)[:, None], v)  # closed form
    assert torch.allclose(layer.y, expected, atol=1e-9)
