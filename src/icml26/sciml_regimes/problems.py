"""1-D time-dependent PDE benchmarks with exact (or reference) solutions, and their PINN losses.

Every problem is posed on ``x in [x0, x1]``, ``t in [0, 1]`` with an initial condition at ``t = 0`` and boundary
conditions at ``x0``/``x1``.  The PINN training loss (unit weights, as in the paper's code) is

    L(theta) = MSE_f + MSE_ic + MSE_bc,   MSE_f = mean_i r(x_i, t_i)^2 over the N_f collocation points,

where ``r = N[u_theta]`` is the PDE residual computed with autograd, ``MSE_ic = mean (u_theta(x, 0) - u0(x))^2`` and
``MSE_bc`` is the periodic mismatch ``mean (u_theta(x0, t) - u_theta(x1, t))^2`` (Dirichlet ``u = 0`` for the wave).
Collocation points are drawn without replacement from the interior of a ``num_x x num_t`` grid (257 x 101 in
the paper).  The test error is the relative L2 error ``||u_hat - u||_2 / ||u||_2`` on a ``129 x 101`` grid.

Problems (coefficient = the "physical difficulty" axis of the regime map):

* :class:`ConvectionProblem` ``u_t + beta u_x = 0``, ``u(x, 0) = sin x``, periodic  ->  ``u = sin(x - beta t)``;
* :class:`ReactionProblem` ``u_t = rho u (1 - u)``, ``u(x, 0) = h(x) = exp(-(x - pi)^2 / (2 (pi/4)^2))``
  ->  ``u = h e^{rho t} / (h e^{rho t} + 1 - h)``;
* :class:`DiffusionProblem` ``u_t = nu u_xx``, ``u(x, 0) = sin x``, periodic  ->  ``u = e^{-nu t} sin x``;
* :class:`WaveProblem` on ``x in [0, 1]``: ``u_tt = 4 u_xx``, ``u(0, t) = u(1, t) = 0``,
  ``u(x, 0) = sin(pi x) + sin(beta pi x) / 2``, ``u_t(x, 0) = 0``
  ->  ``u = sin(pi x) cos(2 pi t) + sin(beta pi x) cos(2 beta pi t) / 2`` (integer ``beta``);
* :class:`ReactionDiffusionProblem` ``u_t = nu u_xx + rho u (1 - u)``, ``u(x, 0) = h(x)``, periodic: reference by
  Strang splitting (exact logistic half steps around an exact Fourier heat step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor, nn

__all__ = [
    "Batch",
    "PDEProblem",
    "ConvectionProblem",
    "ReactionProblem",
    "DiffusionProblem",
    "WaveProblem",
    "ReactionDiffusionProblem",
    "relative_l2",
]

TWO_PI = 2.0 * math.pi


def _check_coef(name: str, value: float, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a number in ({lo:g}, {hi:g}], got {type(value).__name__}")
    value = float(value)
    if not (lo < value <= hi):
        raise ValueError(f"{name} must lie in ({lo:g}, {hi:g}], got {value!r}")
    return value


@dataclass(frozen=True)
class Batch:
    """Training points of one problem: collocation ``(x_f, t_f)``, initial ``(x_ic, u_ic)`` and boundary ``t_bc``
    (tensors of shape ``(n, 1)``)."""

    x_f: Tensor
    t_f: Tensor
    x_ic: Tensor
    u_ic: Tensor
    t_bc: Tensor

    @property
    def n_f(self) -> int:
        return int(self.x_f.shape[0])


def _grad(u: Tensor, z: Tensor) -> Tensor:
    return torch.autograd.grad(u, z, torch.ones_like(u), create_graph=True)[0]


def _grads(u: Tensor, x: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
    """``(u_x, u_t)`` in one backward pass."""
    gx, gt = torch.autograd.grad(u, (x, t), torch.ones_like(u), create_graph=True)
    return gx, gt


def relative_l2(u_hat: Tensor | np.ndarray, u: Tensor | np.ndarray) -> float:
    """``||u_hat - u||_2 / ||u||_2`` (the paper's test error)."""
    u_hat, u = np.asarray(torch.as_tensor(u_hat).detach(), float), np.asarray(torch.as_tensor(u).detach(), float)
    return float(np.linalg.norm(u_hat - u) / max(np.linalg.norm(u), 1e-300))


@dataclass(frozen=True)
class PDEProblem:
    """Base class: subclasses set the domain, the coefficient and implement :meth:`exact`, :meth:`residual` and
    :meth:`initial`.  ``num_x``, ``num_t``: the grid collocation points are drawn from; ``dtype``: of the points."""

    num_x: int = 257
    num_t: int = 101
    dtype: torch.dtype = torch.float64

    coefficient_name = "coefficient"
    coefficient_range = (0.0, 1.0)
    x_range = (0.0, TWO_PI)
    t_range = (0.0, 1.0)
    periodic = True

    def __post_init__(self) -> None:
        for name in ("num_x", "num_t"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 3:
                raise ValueError(f"{name} must be an integer >= 3, got {v!r}")
        lo, hi = self.coefficient_range
        _check_coef(self.coefficient_name, getattr(self, self.coefficient_name), lo, hi)

    # -- what subclasses define ----------------------------------------------------------------------------------
    @property
    def coefficient(self) -> float:
        return float(getattr(self, self.coefficient_name))

    def with_coefficient(self, value: float) -> PDEProblem:
        """The same problem with the difficulty coefficient set to ``value`` (for curriculum training)."""
        return replace(self, **{self.coefficient_name: float(value)})

    def exact(self, x: Tensor, t: Tensor) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def initial(self, x: Tensor) -> Tensor:
        return self.exact(x, torch.zeros_like(x))

    def pde(self, u: Tensor, x: Tensor, t: Tensor) -> Tensor:  # pragma: no cover - abstract
        """The residual ``N[u]`` of ``u = u_theta(x, t)`` (computed with autograd through ``x``, ``t``)."""
        raise NotImplementedError

    def residual(self, model: nn.Module, x: Tensor, t: Tensor) -> Tensor:
        """The PDE residual of ``model`` at ``(x, t)`` (which must require grad)."""
        return self.pde(model(x, t), x, t)

    def boundary_terms(self, u_lo: Tensor, u_hi: Tensor) -> Tensor:
        """Periodic mismatch ``mean (u(x0, t) - u(x1, t))^2``."""
        return torch.mean((u_lo - u_hi) ** 2)

    def initial_terms(self, u0: Tensor, u_ic: Tensor, u0_t: Tensor | None) -> Tensor:
        """``mean (u(x, 0) - u0(x))^2``."""
        return torch.mean((u0 - u_ic) ** 2)

    needs_ut0 = False  # whether initial_terms needs u_t(x, 0)

    # -- shared ----------------------------------------------------------------------------------------------------
    def grid(self, n_x: int, n_t: int) -> tuple[Tensor, Tensor]:
        """``(X, T)`` of shape ``(n_t, n_x)`` on the closed domain."""
        x = torch.linspace(*self.x_range, n_x, dtype=self.dtype)
        t = torch.linspace(*self.t_range, n_t, dtype=self.dtype)
        T, X = torch.meshgrid(t, x, indexing="ij")
        return X, T

    def sample(self, n_f: int, seed: int = 0) -> Batch:
        """``n_f`` collocation points drawn without replacement from the interior of the ``num_x x num_t`` grid
        (seeded by ``seed``), the initial condition on all ``num_x`` grid x and the boundary on all ``num_t`` t."""
        n_int = (self.num_x - 2) * (self.num_t - 1)
        if isinstance(n_f, bool) or not isinstance(n_f, (int, np.integer)) or not 1 <= n_f <= n_int:
            raise ValueError(f"n_f must be an integer in [1, {n_int}] (interior grid points), got {n_f!r}")
        X, T = self.grid(self.num_x, self.num_t)
        Xi, Ti = X[1:, 1:-1].reshape(-1), T[1:, 1:-1].reshape(-1)
        idx = np.random.default_rng(seed).choice(n_int, size=int(n_f), replace=False)
        idx_t = torch.as_tensor(np.sort(idx))
        x_ic = X[0].reshape(-1, 1)
        return Batch(
            x_f=Xi[idx_t].reshape(-1, 1).clone(),
            t_f=Ti[idx_t].reshape(-1, 1).clone(),
            x_ic=x_ic.clone(),
            u_ic=self.initial(x_ic).detach(),
            t_bc=T[:, 0].reshape(-1, 1).clone(),
        )

    def loss(self, model: nn.Module, batch: Batch, parts: bool = False) -> Tensor | dict[str, Tensor]:
        """``MSE_f + MSE_ic + MSE_bc`` (module docstring); ``parts=True`` returns the three terms and the total.
        All points go through the model in one forward pass."""
        n_f, n_ic, n_bc = batch.x_f.shape[0], batch.x_ic.shape[0], batch.t_bc.shape[0]
        lo = torch.full_like(batch.t_bc, self.x_range[0])
        hi = torch.full_like(batch.t_bc, self.x_range[1])
        x = torch.cat([batch.x_f, batch.x_ic, lo, hi]).detach().requires_grad_(True)
        t = torch.cat([batch.t_f, torch.zeros_like(batch.x_ic), batch.t_bc, batch.t_bc]).detach().requires_grad_(True)
        u = model(x, t)
        r = self.pde(u, x, t)[:n_f]
        res = torch.mean(r**2)
        u0_t = _grad(u, t)[n_f : n_f + n_ic] if self.needs_ut0 else None
        ic = self.initial_terms(u[n_f : n_f + n_ic], batch.u_ic, u0_t)
        bc = self.boundary_terms(u[n_f + n_ic : n_f + n_ic + n_bc], u[n_f + n_ic + n_bc :])
        total = res + ic + bc
        if parts:
            return {"total": total, "res": res, "ic": ic, "bc": bc}
        return total

    def test_grid(self, n_x: int = 129, n_t: int = 101) -> tuple[Tensor, Tensor, Tensor]:
        """Flattened ``(x, t, u)`` (each ``(n_x n_t, 1)``) of the exact solution on the test grid."""
        X, T = self.grid(n_x, n_t)
        x, t = X.reshape(-1, 1), T.reshape(-1, 1)
        return x, t, self.exact(x, t).detach()

    def test_error(self, model: nn.Module, n_x: int = 129, n_t: int = 101) -> float:
        """Relative L2 error of ``model`` on the test grid."""
        x, t, u = self.test_grid(n_x, n_t)
        with torch.no_grad():
            return relative_l2(model(x, t), u)


@dataclass(frozen=True)
class ConvectionProblem(PDEProblem):
    """``u_t + beta u_x = 0`` on ``[0, 2 pi] x [0, 1]``, ``u(x, 0) = sin x``, periodic; ``u = sin(x - beta t)``.
    ``beta`` in ``(0, 200]``."""

    beta: float = 1.0
    coefficient_name = "beta"
    coefficient_range = (0.0, 200.0)

    def exact(self, x: Tensor, t: Tensor) -> Tensor:
        return torch.sin(x - self.beta * t)

    def pde(self, u: Tensor, x: Tensor, t: Tensor) -> Tensor:
        u_x, u_t = _grads(u, x, t)
        return u_t + self.beta * u_x


def _bump(x: Tensor) -> Tensor:
    return torch.exp(-((x - math.pi) ** 2) / (2 * (math.pi / 4) ** 2))


@dataclass(frozen=True)
class ReactionProblem(PDEProblem):
    """``u_t = rho u (1 - u)``, ``u(x, 0) = h(x)`` (Gaussian bump), periodic; ``u = h e^{rho t} / (h e^{rho t} + 1 -
    h)``.  ``rho`` in ``(0, 100]``."""

    rho: float = 1.0
    coefficient_name = "rho"
    coefficient_range = (0.0, 100.0)

    def exact(self, x: Tensor, t: Tensor) -> Tensor:
        h, e = _bump(x), torch.exp(self.rho * t)
        return h * e / (h * e + 1 - h)

    def pde(self, u: Tensor, x: Tensor, t: Tensor) -> Tensor:
        return _grad(u, t) - self.rho * u * (1 - u)


@dataclass(frozen=True)
class DiffusionProblem(PDEProblem):
    """``u_t = nu u_xx``, ``u(x, 0) = sin x``, periodic; ``u = e^{-nu t} sin x``.  ``nu`` in ``(0, 100]``."""

    nu: float = 1.0
    coefficient_name = "nu"
    coefficient_range = (0.0, 100.0)

    def exact(self, x: Tensor, t: Tensor) -> Tensor:
        return torch.exp(-self.nu * t) * torch.sin(x)

    def pde(self, u: Tensor, x: Tensor, t: Tensor) -> Tensor:
        u_x, u_t = _grads(u, x, t)
        return u_t - self.nu * _grad(u_x, x)


@dataclass(frozen=True)
class WaveProblem(PDEProblem):
    """``u_tt = 4 u_xx`` on ``[0, 1] x [0, 1]``, ``u(0, t) = u(1, t) = 0``, ``u(x, 0) = sin(pi x) + sin(beta pi x)/2``,
    ``u_t(x, 0) = 0``; ``u = sin(pi x) cos(2 pi t) + sin(beta pi x) cos(2 beta pi t) / 2``.  ``beta``: a positive
    integer up to 50 (so the boundary conditions hold)."""

    beta: float = 1.0
    coefficient_name = "beta"
    coefficient_range = (0.0, 50.0)
    x_range = (0.0, 1.0)
    periodic = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if float(self.beta) != round(float(self.beta)):
            raise ValueError(f"beta must be a whole number (the boundary conditions need it), got {self.beta!r}")

    def exact(self, x: Tensor, t: Tensor) -> Tensor:
        b = self.beta
        return torch.sin(math.pi * x) * torch.cos(2 * math.pi * t) + 0.5 * torch.sin(b * math.pi * x) * torch.cos(
            2 * b * math.pi * t
        )

    needs_ut0 = True

    def pde(self, u: Tensor, x: Tensor, t: Tensor) -> Tensor:
        return _grad(_grad(u, t), t) - 4.0 * _grad(_grad(u, x), x)

    def boundary_terms(self, u_lo: Tensor, u_hi: Tensor) -> Tensor:
        """Dirichlet ``mean u(0, t)^2 + mean u(1, t)^2``."""
        return torch.mean(u_lo**2) + torch.mean(u_hi**2)

    def initial_terms(self, u0: Tensor, u_ic: Tensor, u0_t: Tensor | None) -> Tensor:
        """``mean (u(x, 0) - u0)^2 + mean u_t(x, 0)^2``."""
        return torch.mean((u0 - u_ic) ** 2) + torch.mean(u0_t**2)


@dataclass(frozen=True)
class ReactionDiffusionProblem(PDEProblem):
    """``u_t = nu u_xx + rho u (1 - u)``, ``u(x, 0) = h(x)``, periodic on ``[0, 2 pi]``.  No closed form: the
    reference is Strang splitting on a periodic ``ref_nx`` grid with ``ref_steps`` time steps, each a logistic half
    step ``u <- u e^{rho dt/2} / (u e^{rho dt/2} + 1 - u)``, an exact heat step ``u_k <- e^{-nu k^2 dt} u_k`` in
    Fourier space and another logistic half step; :meth:`exact` interpolates it linearly in ``(t, x)``.
    ``nu`` in ``(0, 100]``, ``rho`` in ``(0, 100]``."""

    nu: float = 1.0
    rho: float = 1.0
    ref_nx: int = 512
    ref_steps: int = 2000
    coefficient_name = "rho"
    coefficient_range = (0.0, 100.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_coef("nu", self.nu, 0.0, 100.0)
        for name in ("ref_nx", "ref_steps"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 8:
                raise ValueError(f"{name} must be an integer >= 8, got {v!r}")

    def reference(self, n_t: int = 101) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(x, t, U)``: the split-step solution ``U[j, i] = u(x_i, t_j)`` on ``ref_nx`` periodic x (excluding
        ``2 pi``) and ``n_t`` equispaced t (``ref_steps`` must be a multiple of ``n_t - 1``)."""
        if self.ref_steps % (n_t - 1):
            raise ValueError(f"ref_steps ({self.ref_steps}) must be a multiple of n_t - 1 ({n_t - 1})")
        x = np.arange(self.ref_nx) * TWO_PI / self.ref_nx
        k = np.fft.rfftfreq(self.ref_nx, d=1.0 / self.ref_nx)
        dt = 1.0 / self.ref_steps
        heat = np.exp(-self.nu * k**2 * dt)
        e_half = np.exp(self.rho * dt / 2)
        u = np.exp(-((x - math.pi) ** 2) / (2 * (math.pi / 4) ** 2))
        every = self.ref_steps // (n_t - 1)
        out = [u.copy()]
        for s in range(1, self.ref_steps + 1):
            u = u * e_half / (u * e_half + 1 - u)
            u = np.fft.irfft(np.fft.rfft(u) * heat, n=self.ref_nx)
            u = u * e_half / (u * e_half + 1 - u)
            if s % every == 0:
                out.append(u.copy())
        return x, np.linspace(0.0, 1.0, n_t), np.array(out)

    def initial(self, x: Tensor) -> Tensor:
        return _bump(x)

    def exact(self, x: Tensor, t: Tensor) -> Tensor:
        from scipy.interpolate import RegularGridInterpolator

        xs, ts, U = self.reference(101 if self.ref_steps % 100 == 0 else self.ref_steps + 1)
        xs = np.append(xs, TWO_PI)
        U = np.concatenate([U, U[:, :1]], axis=1)  # periodic closure
        f = RegularGridInterpolator((ts, xs), U)
        pts = np.column_stack(
            [np.clip(t.detach().reshape(-1).numpy(), 0.0, 1.0), x.detach().reshape(-1).numpy() % TWO_PI]
        )
        return torch.as_tensor(f(pts), dtype=x.dtype).reshape(x.shape)

    def pde(self, u: Tensor, x: Tensor, t: Tensor) -> Tensor:
        return _grad(u, t) - self.nu * _grad(_grad(u, x), x) - self.rho * u * (1 - u)
