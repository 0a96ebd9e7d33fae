"""Surplus kernels ``k(x, y)`` and transport costs ``c(x, y)`` for :class:`FinitelyConvex`.

Every kernel maps a batch of points ``x`` of shape ``(B, dim_x)`` and a set of candidates ``y`` of shape
``(n, dim_y)`` to the matrix ``K[i, j] = k(x_i, y_j)`` of shape ``(B, n)``.  Kernels must be differentiable in
both arguments (torch autograd) wherever the layer is trained.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = [
    "linear_kernel",
    "sqrt_value_kernel",
    "lp_cost",
    "neg_lp_cost",
    "LpCost",
    "norm_cost",
    "NormCost",
    "Kernel",
]

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


class NormCost:
    """Non-separable translation-invariant cost ``c(x, y) = h(x - y)`` with ``h(z) = ||z||_2^p / p`` (``p > 1``).

    Unlike :class:`LpCost` (a sum over coordinates), the Euclidean norm couples the coordinates, so the optimal map
    between two non-product measures depends on ``p`` and is not the coordinate-wise monotone rearrangement.  ``h`` is
    strictly convex with ``grad h(z) = ||z||^(p-2) z``, so the twist formula applies with
    ``(grad h)^{-1}(g) = ||g||^((2-p)/(p-1)) g`` (:meth:`inverse_grad_h`).  ``eps`` smooths the norm at ``z = 0``
    (``||z|| = sqrt(|z|^2 + eps)``) so the gradient stays finite when a point sits on a candidate.
    """

    def __init__(self, p: float, eps: float = 1e-12) -> None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not p > 1.0:
            raise ValueError(f"p must be a number > 1 (strictly convex cost), got {p!r}")
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0.0:
            raise ValueError(f"eps must be a number >= 0, got {eps!r}")
        self.p, self.eps = float(p), float(eps)

    def __call__(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        diff = x[:, None, :] - y[None, :, :]
        return ((diff**2).sum(-1) + self.eps) ** (self.p / 2) / self.p

    def inverse_grad_h(self, g: torch.Tensor) -> torch.Tensor:
        """``(grad h)^{-1}(g) = ||g||^((2-p)/(p-1)) g`` (row-wise norm)."""
        norm = ((g**2).sum(-1, keepdim=True) + self.eps).sqrt()
        return g * norm ** ((2.0 - self.p) / (self.p - 1.0))

    def __repr__(self) -> str:
        return f"norm_cost(p={self.p:g})"


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


def norm_cost(p: float) -> NormCost:
    """The non-separable transport cost ``c(x, y) = ||x - y||_2^p / p`` (``p > 1``)."""
    return NormCost(p)


def neg_lp_cost(p: float) -> _NegLp:
    """The surplus kernel ``k(x, y) = -sum_i |x_i - y_i|^p / p``: k-convex = negated c-concave."""
    return _NegLp(p)
