"""Surplus kernels ``k(x, y)`` and transport costs ``c(x, y)`` for :class:`FinitelyConvex`.

Every kernel maps a batch of points ``x`` of shape ``(B, dim_x)`` and a set of candidates ``y`` of shape
``(n, dim_y)`` to the matrix ``K[i, j] = k(x_i, y_j)`` of shape ``(B, n)``.  Kernels must be differentiable in
both arguments (torch autograd) wherever the layer is trained.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["linear_kernel", "sqrt_value_kernel", "lp_cost", "neg_lp_cost", "LpCost", "Kernel"]

Kernel = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def linear_kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``k(x, y) = <x, y>``: an additive buyer's value for the lottery ``y``; k-convex = ordinary convex."""
    return x @ y.T


def sqrt_value_kernel(x: torch.Tensor, y: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``k(x, y) = sum_i x_i sqrt(y_i)``: a buyer with concave value of quantity (needs ``y >= 0``).

    ``y`` is clamped at ``eps`` inside the square root so the gradient stays finite at ``y = 0``.
    """
    return x @ y.clamp_min(eps).sqrt().T


class LpCost:
    """Translation-invariant cost ``c(x, y) = h(x - y)`` with ``h(z) = sum_i |z_i|^p / p`` (``p > 1``).

    ``h`` is strictly convex, so the optimal map satisfies the twist condition
    ``grad h(x - T(x)) = grad u(x)``, i.e. ``T(x) = x - (grad h)^{-1}(grad u(x))`` with
    ``(grad h)^{-1}(g)_i = sign(g_i) |g_i|^{1/(p-1)}`` (:meth:`inverse_grad_h`).
    """

    def __init__(self, p: float) -> None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not p > 1.0:
            raise ValueError(f"p must be a number > 1 (strictly convex cost), got {p!r}")
        self.p = float(p)

    def __call__(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        diff = x[:, None, :] - y[None, :, :]
        return (diff.abs() ** self.p).sum(-1) / self.p

    def inverse_grad_h(self, g: torch.Tensor) -> torch.Tensor:
        """``(grad h)^{-1}(g)``, elementwise ``sign(g) |g|^{1/(p-1)}``."""
        return torch.sign(g) * g.abs() ** (1.0 / (self.p - 1.0))

    def __repr__(self) -> str:
        return f"lp_cost(p={self.p:g})"


class _NegLp:
    """``k(x, y) = -c(x, y)`` for an :class:`LpCost` ``c`` (a surplus kernel; max over it = c-concave min)."""

    def __init__(self, p: float) -> None:
        self.cost = LpCost(p)
        self.p = self.cost.p

    def __call__(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return -self.cost(x, y)

    def __repr__(self) -> str:
        return f"neg_lp_cost(p={self.p:g})"


def lp_cost(p: float) -> LpCost:
    """The transport cost ``c(x, y) = sum_i |x_i - y_i|^p / p`` (``p > 1``)."""
    return LpCost(p)


def neg_lp_cost(p: float) -> _NegLp:
    """The surplus kernel ``k(x, y) = -sum_i |x_i - y_i|^p / p``: k-convex = negated c-concave."""
    return _NegLp(p)
