"""Loss-landscape diagnostics that take a loss *closure*, so they work for any model (PINN, FNO, neural ODE).

``loss_fn(params) -> scalar tensor`` is evaluated at a list of parameter tensors ``params``;
:func:`model_loss_closure` builds one from an ``nn.Module`` with ``torch.func.functional_call``.  Hessian-vector
products use Pearlmutter's double-backward trick, ``H v = d/dtheta (grad L(theta) . v)``, which also works when the
loss itself contains input derivatives (a PINN residual) - the case PyHessian does not support (its issue #15).

* :func:`hessian_top_eigenvalue`: power iteration ``v <- H v / ||H v||``, ``lambda = v . H v`` (the largest-magnitude
  eigenvalue), stopped when ``lambda`` changes by less than ``tol`` (relative);
* :func:`hessian_trace`: Hutchinson, ``tr H = E[z^T H z]`` with Rademacher ``z``, stopped when the running mean
  changes by less than ``tol`` (relative) after ``min_samples``;
* :func:`linear_cka`: ``CKA(X, Y) = HSIC(X, Y) / sqrt(HSIC(X, X) HSIC(Y, Y))`` with the linear kernel,
  ``HSIC(X, Y) = ||Y_c^T X_c||_F^2`` for column-centred ``X_c = H X``, ``H = I - 11^T / n``;
* :func:`mode_connectivity`: ``mc = (L(a) + L(b)) / 2 - L(gamma(t*))`` with ``t* = argmax_t |(L(a) + L(b)) / 2 -
  L(gamma(t))|`` along the straight line ``gamma(t) = (1 - t) a + t b`` or a quadratic Bezier curve
  ``gamma(t) = (1 - t)^2 a + 2 t (1 - t) c + t^2 b`` whose bend ``c`` is fitted to the mean loss over ``t``;
  ``mc < 0``: a barrier, ``mc >= 0``: connected.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

__all__ = ["hessian_top_eigenvalue", "hessian_trace", "linear_cka", "mode_connectivity", "model_loss_closure", "hvp"]

LossFn = Callable[[Sequence[Tensor]], Tensor]


def _params(params) -> list[Tensor]:
    if isinstance(params, nn.Module):
        params = list(params.parameters())
    if isinstance(params, Tensor):
        params = [params]
    params = [p.detach() for p in params]
    if not params or not all(isinstance(p, Tensor) for p in params):
        raise TypeError("params must be an nn.Module, a tensor or a non-empty sequence of tensors")
    return params


def model_loss_closure(model: nn.Module, loss: Callable[[nn.Module], Tensor]) -> tuple[LossFn, list[Tensor]]:
    """``(loss_fn, params)``: ``loss_fn(ps)`` evaluates ``loss(model)`` with the model's parameters replaced by
    ``ps`` (``torch.func.functional_call``); ``params`` are the model's current parameters (detached)."""
    names = [n for n, _ in model.named_parameters()]
    buffers = dict(model.named_buffers())

    class _Swapped(nn.Module):
        def __init__(self, ps):
            super().__init__()
            self.ps = ps

        def forward(self, *args):
            return torch.func.functional_call(model, ({**dict(zip(names, self.ps)), **buffers},), args)

    def loss_fn(ps: Sequence[Tensor]) -> Tensor:
        return loss(_Swapped(list(ps)))

    return loss_fn, [p.detach().clone() for _, p in model.named_parameters()]


def hvp(loss_fn: LossFn, params: Sequence[Tensor], v: Sequence[Tensor]) -> list[Tensor]:
    """``H v`` at ``params`` by double backward (``H`` the Hessian of ``loss_fn`` w.r.t. all of ``params``)."""
    ps = [p.detach().requires_grad_(True) for p in params]
    g = torch.autograd.grad(loss_fn(ps), ps, create_graph=True)
    dot = sum((gi * vi).sum() for gi, vi in zip(g, v))
    return [h.detach() for h in torch.autograd.grad(dot, ps, allow_unused=True, materialize_grads=True)]


def _check_int(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def _dot(a: Sequence[Tensor], b: Sequence[Tensor]) -> float:
    return float(sum((x * y).sum() for x, y in zip(a, b)))


def hessian_top_eigenvalue(loss_fn: LossFn, params, iters: int = 20, tol: float = 1e-3, seed: int = 0) -> float:
    """Largest-magnitude eigenvalue of the Hessian of ``loss_fn`` at ``params`` by power iteration on
    Hessian-vector products (at most ``iters`` products; stops when the Rayleigh quotient changes by less than
    ``tol``, relative).  The start vector is Gaussian, drawn from ``seed``."""
    ps = _params(params)
    iters = _check_int("iters", iters, 1)
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    gen = torch.Generator().manual_seed(int(seed))
    v = [torch.randn(p.shape, generator=gen, dtype=p.dtype) for p in ps]
    norm = math.sqrt(_dot(v, v))
    v = [x / norm for x in v]
    lam = None
    for _ in range(iters):
        hv = hvp(loss_fn, ps, v)
        new = _dot(v, hv)
        norm = math.sqrt(_dot(hv, hv))
        if norm == 0.0:
            return 0.0
        v = [x / norm for x in hv]
        if lam is not None and abs(new - lam) <= tol * max(abs(lam), 1e-300):
            return float(new)
        lam = new
    return float(lam)


def hessian_trace(
    loss_fn: LossFn, params, samples: int = 20, tol: float = 1e-3, min_samples: int = 5, seed: int = 0
) -> float:
    """Hutchinson estimate ``mean_k z_k^T H z_k`` of ``tr H`` with Rademacher ``z_k`` (drawn from ``seed``): at most
    ``samples`` products, stopping early once ``min_samples`` are in and the running mean moved by less than
    ``tol`` (relative).  Exact in expectation; the variance is ``2 (||H||_F^2 - sum_i H_ii^2)`` per sample."""
    ps = _params(params)
    samples = _check_int("samples", samples, 1)
    min_samples = _check_int("min_samples", min_samples, 1)
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    gen = torch.Generator().manual_seed(int(seed))
    total, mean = 0.0, None
    for k in range(1, samples + 1):
        z = [(torch.randint(0, 2, p.shape, generator=gen) * 2 - 1).to(p.dtype) for p in ps]
        total += _dot(z, hvp(loss_fn, ps, z))
        new = total / k
        if mean is not None and k >= min_samples and abs(new - mean) <= tol * max(abs(mean), 1e-300):
            return float(new)
        mean = new
    return float(mean)


def linear_cka(X, Y) -> float:
    """Linear CKA between representations ``X`` ``(n, p)`` and ``Y`` ``(n, q)`` of the same ``n`` inputs (module
    docstring).  In ``[0, 1]``; invariant to orthogonal transforms and isotropic scaling of either argument; for
    1-D ``X``, ``Y`` it equals the squared Pearson correlation.  1-D inputs are read as ``(n, 1)``."""
    X = np.asarray(torch.as_tensor(X).detach().cpu(), dtype=float)
    Y = np.asarray(torch.as_tensor(Y).detach().cpu(), dtype=float)
    X = X.reshape(-1, 1) if X.ndim == 1 else X
    Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must be 2-D with the same number of rows, got shapes {X.shape} and {Y.shape}")
    if X.shape[0] < 2:
        raise ValueError("X and Y need at least 2 rows")
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    hxy = np.linalg.norm(Yc.T @ Xc) ** 2
    hxx, hyy = np.linalg.norm(Xc.T @ Xc), np.linalg.norm(Yc.T @ Yc)
    if hxx == 0.0 or hyy == 0.0:
        return 0.0
    return float(hxy / (hxx * hyy))


def mode_connectivity(
    model_a,
    model_b,
    loss_fn: LossFn,
    path: str = "linear",
    n_points: int | None = None,
    bend_steps: int = 50,
    bend_points: int = 50,
    seed: int = 0,
) -> dict:
    """Mode connectivity of two minima (``nn.Module`` or parameter lists of the same shapes) under ``loss_fn``.
    Returns ``{"mc", "t_star", "t", "loss"}`` (module docstring); ``n_points`` defaults to 11 (linear) / 101
    (Bezier).  The Bezier bend starts at the midpoint and is fitted by L-BFGS (``bend_steps`` iterations) to the
    mean loss at ``bend_points`` fixed t drawn uniformly from ``seed``."""
    if path not in ("linear", "bezier"):
        raise ValueError(f"path must be 'linear' or 'bezier', got {path!r}")
    a, b = _params(model_a), _params(model_b)
    if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b)):
        raise ValueError("model_a and model_b must have parameters of the same shapes")
    n_points = (11 if path == "linear" else 101) if n_points is None else _check_int("n_points", n_points, 2)
    ts = np.linspace(0.0, 1.0, n_points)
    if path == "linear":

        def point(t: float, c=None):
            return [(1 - t) * x + t * y for x, y in zip(a, b)]

        bend = None
    else:
        bend = [((x + y) / 2).clone().requires_grad_(True) for x, y in zip(a, b)]

        def point(t: float, c=None):
            c = bend if c is None else c
            return [(1 - t) ** 2 * x + 2 * t * (1 - t) * ci + t**2 * y for x, ci, y in zip(a, c, b)]

        _check_int("bend_steps", bend_steps, 0)
        tb = np.random.default_rng(seed).uniform(0.0, 1.0, _check_int("bend_points", bend_points, 1))
        if bend_steps:
            opt = torch.optim.LBFGS(bend, lr=1.0, max_iter=bend_steps, line_search_fn="strong_wolfe")

            def closure():
                opt.zero_grad()
                val = sum(loss_fn(point(float(t))) for t in tb) / len(tb)
                val.backward()
                return val

            opt.step(closure)
        bend = [c.detach() for c in bend]
    with torch.no_grad() if _no_grad_ok(loss_fn, a) else _null():
        losses = np.array([float(loss_fn(point(float(t))).detach()) for t in ts])
    ends = (losses[0] + losses[-1]) / 2
    k = int(np.argmax(np.abs(ends - losses)))
    return {"mc": float(ends - losses[k]), "t_star": float(ts[k]), "t": ts.tolist(), "loss": losses.tolist()}


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _no_grad_ok(loss_fn: LossFn, params: list[Tensor]) -> bool:
    """Whether ``loss_fn`` can run under ``no_grad`` (a PINN loss needs autograd for its input derivatives)."""
    try:
        with torch.no_grad():
            loss_fn(params)
        return True
    except RuntimeError:
        return False
