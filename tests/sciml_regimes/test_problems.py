"""Exact solutions satisfy their PDEs (finite differences and autograd), sampling, bad input."""

import math

import numpy as np
import pytest
import torch

from icml26.sciml_regimes import (
    PINN,
    ConvectionProblem,
    DiffusionProblem,
    ReactionDiffusionProblem,
    ReactionProblem,
    WaveProblem,
)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny tensors: one torch thread is faster than two on a busy 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


CLOSED = [
    ConvectionProblem(beta=30.0),
    ReactionProblem(rho=5.0),
    DiffusionProblem(nu=2.0),
    WaveProblem(beta=3.0),
]


class Exact(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x, t):
        return self.p.exact(x, t)


@pytest.mark.parametrize("prob", CLOSED, ids=lambda p: type(p).__name__)
def test_autograd_residual_of_exact_solution_vanishes(prob):
    b = prob.sample(300, seed=1)
    x, t = b.x_f.clone().requires_grad_(True), b.t_f.clone().requires_grad_(True)
    assert prob.residual(Exact(prob), x, t).abs().max() < 1e-9
    parts = prob.loss(Exact(prob), b, parts=True)
    assert float(parts["total"].detach()) < 1e-18 and float(parts["ic"].detach()) < 1e-24


def _fd_residual(prob, x, t, h=1e-4):
    u = lambda x, t: prob.exact(torch.as_tensor(x), torch.as_tensor(t)).numpy()  # noqa: E731
    ut = (u(x, t + h) - u(x, t - h)) / (2 * h)
    ux = (u(x + h, t) - u(x - h, t)) / (2 * h)
    uxx = (u(x + h, t) - 2 * u(x, t) + u(x - h, t)) / h**2
    utt = (u(x, t + h) - 2 * u(x, t) + u(x, t - h)) / h**2
    uu = u(x, t)
    if isinstance(prob, ConvectionProblem):
        return ut + prob.beta * ux
    if isinstance(prob, ReactionProblem):
        return ut - prob.rho * uu * (1 - uu)
    if isinstance(prob, DiffusionProblem):
        return ut - prob.nu * uxx
    return utt - 4 * uxx


@pytest.mark.parametrize("prob", CLOSED, ids=lambda p: type(p).__name__)
def test_finite_difference_residual_of_exact_solution_is_small(prob):
    rng = np.random.default_rng(0)
    x = rng.uniform(*prob.x_range, 200) * 0.9 + 0.05
    t = rng.uniform(0.05, 0.95, 200)
    scale = 1.0 + prob.coefficient**2
    assert np.abs(_fd_residual(prob, x, t)).max() / scale < 1e-5


def test_wave_boundary_and_initial_velocity():
    p = WaveProblem(beta=4.0)
    t = torch.linspace(0, 1, 11, dtype=torch.float64).reshape(-1, 1)
    assert p.exact(torch.zeros_like(t), t).abs().max() < 1e-12
    assert p.exact(torch.ones_like(t), t).abs().max() < 1e-12


def test_reaction_diffusion_reference_converges_and_matches_initial_condition():
    coarse = ReactionDiffusionProblem(nu=0.5, rho=2.0, ref_nx=128, ref_steps=400)
    fine = ReactionDiffusionProblem(nu=0.5, rho=2.0, ref_nx=128, ref_steps=800)
    xa, _, ua = coarse.reference(n_t=11)
    _, _, ub = fine.reference(n_t=11)
    assert np.abs(ua - ub).max() < 1e-4
    assert np.allclose(ua[0], np.exp(-((xa - math.pi) ** 2) / (2 * (math.pi / 4) ** 2)))
    # nu -> 0 reduces to the logistic closed form
    nr = ReactionDiffusionProblem(nu=1e-9, rho=2.0, ref_nx=128, ref_steps=400)
    xs, ts, u = nr.reference(n_t=11)
    exact = ReactionProblem(rho=2.0).exact(torch.as_tensor(xs)[None, :], torch.as_tensor(ts)[:, None]).numpy()
    assert np.abs(u - exact).max() < 1e-5


def test_sample_is_seeded_without_replacement_in_the_interior():
    p = ConvectionProblem(beta=5.0)
    a, b, c = p.sample(100, 3), p.sample(100, 3), p.sample(100, 4)
    assert torch.equal(a.x_f, b.x_f) and torch.equal(a.t_f, b.t_f) and not torch.equal(a.x_f, c.x_f)
    pts = {(float(x), float(t)) for x, t in zip(a.x_f, a.t_f)}
    assert len(pts) == 100
    assert (a.t_f > 0).all() and (a.x_f > 0).all() and (a.x_f < 2 * math.pi).all()
    assert a.x_ic.shape == (p.num_x, 1) and a.t_bc.shape == (p.num_t, 1)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: ConvectionProblem(beta=0.0), "beta"),
        (lambda: ConvectionProblem(beta=500.0), "beta"),
        (lambda: ReactionProblem(rho=-1.0), "rho"),
        (lambda: DiffusionProblem(nu=1e6), "nu"),
        (lambda: WaveProblem(beta=2.5), "beta"),
        (lambda: ReactionDiffusionProblem(nu=-1.0, rho=1.0), "nu"),
        (lambda: ConvectionProblem(beta=1.0).sample(0), "n_f"),
        (lambda: ConvectionProblem(beta=1.0).sample(10**7), "n_f"),
        (lambda: ConvectionProblem(beta=1.0, num_x=2), "num_x"),
        (lambda: PINN(width=0), "width"),
        (lambda: PINN(depth=1), "depth"),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_coefficient_type_error():
    with pytest.raises(TypeError, match="beta"):
        ConvectionProblem(beta="ten")
