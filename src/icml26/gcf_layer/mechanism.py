"""Revenue-optimal menus for one buyer: the auction problem as training one :class:`FinitelyConvex` layer."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from .exact import exact_revenue
from .layer import FinitelyConvex

__all__ = ["MenuMechanism", "check_types", "menu_exact_revenue"]


def check_types(types: torch.Tensor, dim: int, dtype: torch.dtype, name: str = "types") -> torch.Tensor:
    """Validate a batch of buyer types: a finite ``(S, dim)`` tensor of ``dtype`` with ``S >= 1``."""
    if not isinstance(types, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (S, {dim}), got {type(types).__name__}")
    if types.ndim != 2 or types.shape[1] != dim or types.shape[0] < 1:
        raise ValueError(f"{name} must have shape (S, {dim}) with S >= 1, got {tuple(types.shape)}")
    if types.dtype != dtype:
        raise TypeError(f"{name} must have dtype {dtype}, got {types.dtype}")
    if not torch.isfinite(types).all():
        raise ValueError(f"{name} must be finite (no NaN/inf)")
    return types


class MenuMechanism:
    r"""A menu of (allocation, price) pairs that a buyer of type ``x`` chooses from by maximising utility.

    The buyer's utility is the layer itself, :math:`u(x) = \max_j [k(x, y_j) - b_j]` with the outside option
    ``(0, 0)``: candidates ``y_j`` are allocations (lotteries), offsets ``b_j`` are prices.  Incentive
    compatibility holds by construction (the buyer takes the arg-max) and individual rationality through the
    outside option, so designing the auction is the single-level problem

    .. math::  \max_\theta \; \mathbb{E}_x\big[ b_{j^*(x)} - \text{cost}(y_{j^*(x)}) \big],

    trained on a sample of types with a soft arg-max (``sum_j w_j b_j``) and then a straight-through phase
    whose forward pass is the exact arg-max (Nehzati 2026, Sec. on auctions; RochetNet is the special case of
    a linear kernel).  Revenue is always reported with hard selection.

    Parameters
    ----------
    layer: a convex-mode :class:`FinitelyConvex` with ``default_option=True`` (the outside option).
    cost_fn: optional seller cost ``cost(allocations (B, dim_y)) -> (B,)``, e.g.
        ``lambda y: (y**2).sum(1)/2``;
        the objective and :meth:`revenue` are then profit = price - cost.
    """

    def __init__(self, layer: FinitelyConvex, cost_fn: Callable[[torch.Tensor], torch.Tensor] | None = None) -> None:
        if not isinstance(layer, FinitelyConvex):
            raise TypeError(f"layer must be a FinitelyConvex, got {type(layer).__name__}")
        if layer.mode != "convex":
            raise ValueError(f"layer.mode must be 'convex' (buyer utility is a max), got {layer.mode!r}")
        if not layer.default_option:
            raise ValueError("layer.default_option must be True: the outside option (0, 0) makes the menu IR")
        if cost_fn is not None and not callable(cost_fn):
            raise TypeError(f"cost_fn must be callable allocations -> (B,) costs, got {type(cost_fn).__name__}")
        self.layer = layer
        self.cost_fn = cost_fn
        self.history_: list[dict] = []

    def _profit(self, types: torch.Tensor, selection: str) -> torch.Tensor:
        sel = self.layer.select(types, selection)
        profit = sel.price
        if self.cost_fn is not None:
            profit = profit - self.cost_fn(sel.choice)
        return profit

    def fit(
        self,
        types: torch.Tensor,
        *,
        soft_steps: int = 3000,
        ste_steps: int = 1000,
        lr: float = 1e-2,
        ste_lr: float = 1e-3,
        batch_size: int | None = None,
        grad_clip: float = 5.0,
        generator: torch.Generator | None = None,
        log_every: int = 100,
        restarts: int = 1,
        explore_steps: int | None = None,
        val_types: torch.Tensor | None = None,
        init_fn: Callable[[torch.Generator | None], tuple[torch.Tensor, torch.Tensor]] | None = None,
    ) -> MenuMechanism:
        """Maximise mean profit over ``types`` (``(S, dim_x)`` sample of the type distribution).

        Schedule ``soft -> ste``: ``soft_steps`` of Adam (``lr``, cosine decay to ``lr/10``) on the soft
        objective, then ``ste_steps`` of Adam (``ste_lr``, cosine decay) on the straight-through objective.
        Candidates are projected back into their convex set after every step.  Full batch unless
        ``batch_size`` is given.  ``history_`` records the objective every ``log_every`` steps.

        Restarts at equal total steps (``restarts > 1``): the menu's current parameters and ``restarts - 1``
        fresh initialisations (``init_fn(generator) -> (y, b)``; default: candidates uniform in the box,
        prices uniform in ``[0, max(|b|, 1)]``) each get ``explore_steps`` soft steps at constant ``lr``
        (default ``soft_steps // (2 * restarts)``); the one with the highest HARD profit on the held-out
        ``val_types`` (default: the last fifth of ``types``, which is then not trained on) continues with the
        remaining ``soft_steps - restarts * explore_steps`` soft steps and the ``ste_steps``, so the total
        number of optimiser steps is ``soft_steps + ste_steps`` whatever ``restarts`` is.  ``restarts_``
        lists each start's held-out profit after exploring and ``selected_`` the chosen start.
        """
        types = check_types(types, self.layer.dim_x, self.layer.y.dtype)
        for name, v, lo in (
            ("soft_steps", soft_steps, 0),
            ("ste_steps", ste_steps, 0),
            ("log_every", log_every, 1),
            ("restarts", restarts, 1),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if soft_steps + ste_steps < 1:
            raise ValueError("soft_steps + ste_steps must be >= 1")
        for name, v in (("lr", lr), ("ste_lr", ste_lr), ("grad_clip", grad_clip)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
        ):
            raise ValueError(f"batch_size must be None or an integer >= 1, got {batch_size!r}")
        if init_fn is not None and not callable(init_fn):
            raise TypeError(f"init_fn must be callable generator -> (y, b), got {type(init_fn).__name__}")
        self.restarts_, self.selected_ = [], 0
        step = 0
        if restarts > 1:
            if explore_steps is None:
                explore_steps = soft_steps // (2 * restarts)
            if isinstance(explore_steps, bool) or not isinstance(explore_steps, int) or explore_steps < 1:
                raise ValueError(f"explore_steps must be an integer >= 1, got {explore_steps!r}")
            if restarts * explore_steps > soft_steps:
                raise ValueError(
                    f"restarts * explore_steps = {restarts * explore_steps} exceeds soft_steps = {soft_steps}: "
                    "the restarts must fit in the same total budget"
                )
            if val_types is None:
                if types.shape[0] < 2:
                    raise ValueError("restarts need held-out types: pass val_types or at least 2 types")
                cut = types.shape[0] - max(1, types.shape[0] // 5)
                types, val_types = types[:cut], types[cut:]
            else:
                val_types = check_types(val_types, self.layer.dim_x, self.layer.y.dtype, "val_types")
            starts = [(self.layer.y.detach().clone(), self.layer.b.detach().clone())]
            for _ in range(restarts - 1):
                y0, b0 = init_fn(generator) if init_fn is not None else self._random_init(generator)
                starts.append(
                    (torch.as_tensor(y0, dtype=self.layer.y.dtype), torch.as_tensor(b0, dtype=self.layer.b.dtype))
                )
            best = None
            for r, (y0, b0) in enumerate(starts):
                if tuple(y0.shape) != tuple(self.layer.y.shape) or tuple(b0.shape) != tuple(self.layer.b.shape):
                    raise ValueError(
                        f"init_fn must return y of shape {tuple(self.layer.y.shape)} and b of shape "
                        f"{tuple(self.layer.b.shape)}, got {tuple(y0.shape)} and {tuple(b0.shape)}"
                    )
                with torch.no_grad():
                    self.layer.y.copy_(y0)
                    self.layer.b.copy_(b0)
                    self.layer.project_()
                step = self._train(
                    types, "soft", explore_steps, lr, False, batch_size, grad_clip, generator, log_every, step
                )
                with torch.no_grad():
                    v = float(self._profit(val_types, "hard").mean())
                self.restarts_.append({"restart": r, "val_objective": v})
                if best is None or v > best[0]:
                    best = (v, r, self.layer.y.detach().clone(), self.layer.b.detach().clone())
            _, self.selected_, y_best, b_best = best
            with torch.no_grad():
                self.layer.y.copy_(y_best)
                self.layer.b.copy_(b_best)
            soft_steps -= restarts * explore_steps
        for phase, n_steps, phase_lr in (("soft", soft_steps, lr), ("ste", ste_steps, ste_lr)):
            step = self._train(types, phase, n_steps, phase_lr, True, batch_size, grad_clip, generator, log_every, step)
        return self

    def _random_init(self, generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor]:
        """A fresh start: candidates uniform in the box (standard normal if unbounded), prices in [0, max|b|]."""
        layer = self.layer
        shape, dtype = tuple(layer.y.shape), layer.y.dtype
        if layer.y_bounds is None:
            y = torch.randn(*shape, generator=generator, dtype=dtype)
        else:
            lo, hi = layer.y_bounds
            y = lo + (hi - lo) * torch.rand(*shape, generator=generator, dtype=dtype)
        scale = max(float(layer.b.detach().abs().max()), 1.0)
        return y, torch.rand(shape[0], generator=generator, dtype=dtype) * scale

    def _train(self, types, phase, n_steps, lr, cosine, batch_size, grad_clip, generator, log_every, step) -> int:
        """``n_steps`` Adam steps on the ``phase`` objective (cosine decay to ``lr/10`` if ``cosine``)."""
        if n_steps == 0:
            return step
        S = types.shape[0]
        opt = torch.optim.Adam(self.layer.parameters(), lr=lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=n_steps, eta_min=lr / 10) if cosine else None
        for _ in range(n_steps):
            batch = types
            if batch_size is not None and batch_size < S:
                batch = types[torch.randint(0, S, (batch_size,), generator=generator)]
            loss = -self._profit(batch, phase).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.layer.parameters(), grad_clip)
            opt.step()
            if sched is not None:
                sched.step()
            self.layer.project_()
            if step % log_every == 0:
                self.history_.append({"step": step, "phase": phase, "objective": -float(loss.detach())})
            step += 1
        return step

    @torch.no_grad()
    def outcomes(self, types: torch.Tensor, hard: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(allocations (S, dim_y), payments (S,), utilities (S,))`` of each type under the menu."""
        types = check_types(types, self.layer.dim_x, self.layer.y.dtype)
        sel = self.layer.select(types, "hard" if hard else "soft")
        return sel.choice, sel.price, sel.value

    @torch.no_grad()
    def revenue(self, types: torch.Tensor, hard: bool = True) -> float:
        """Mean payment minus seller cost over ``types`` (use FRESH types; hard is exactly IC/IR)."""
        types = check_types(types, self.layer.dim_x, self.layer.y.dtype)
        return float(self._profit(types, "hard" if hard else "soft").mean())

    @torch.no_grad()
    def exact_revenue(self, kernel: Callable | None = None) -> float:
        """Exact expected profit of the hard menu for types uniform on ``[0, 1]^d`` (``d`` = 1 or 2), no sampling.

        The buyer's utility for each option must be affine in her type (a linear kernel, the square-root kernel):
        the regions of types that choose each option are then polytopes, measured exactly by
        :func:`~icml26.gcf_layer.exact.exact_revenue` in float64.  ``kernel`` replaces the layer's kernel for the
        buyer (a menu designed for one buyer, sold to another); the seller's cost is ``cost_fn``."""
        k = self.layer.kernel if kernel is None else kernel
        Y, b = (t.detach().to(torch.float64) for t in self.layer.options())
        return menu_exact_revenue(Y, b, k, self.cost_fn)

    @torch.no_grad()
    def menu(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(allocations (m, dim_y), prices (m,))``, the outside option ``(0, 0)`` first."""
        Y, b = self.layer.options()
        return Y.detach().clone(), b.detach().clone()


@torch.no_grad()
def menu_exact_revenue(
    alloc: torch.Tensor,
    price: torch.Tensor,
    kernel: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    cost_fn: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> float:
    """Exact expected profit of the menu ``(alloc (m, d), price (m,))`` (outside option included by the caller) for a
    buyer with values ``kernel(x, alloc)`` and types ``U[0, 1]^d``, ``d <= 2``: the kernel must be affine in ``x``
    (checked at the box's centre and a corner-free point; ``ValueError`` otherwise)."""
    alloc = torch.as_tensor(alloc, dtype=torch.float64)
    price = torch.as_tensor(price, dtype=torch.float64)
    if alloc.ndim != 2 or alloc.shape[1] not in (1, 2) or price.shape != (alloc.shape[0],):
        raise ValueError(
            f"alloc must be (m, d) with d in (1, 2) and price (m,), got {tuple(alloc.shape)}, {tuple(price.shape)}"
        )
    d = alloc.shape[1]
    base = kernel(torch.zeros(1, d, dtype=torch.float64), alloc)[0]  # k(0, y_j)
    slopes = torch.stack([kernel(torch.eye(d, dtype=torch.float64)[i : i + 1], alloc)[0] - base for i in range(d)], 1)
    probe = torch.tensor([[0.3, 0.7][:d], [0.9, 0.2][:d]], dtype=torch.float64)
    if not torch.allclose(kernel(probe, alloc), base + probe @ slopes.T, rtol=1e-9, atol=1e-9):
        raise ValueError(
            "kernel must be affine in the type x for the exact revenue (e.g. linear_kernel, sqrt_value_kernel)"
        )
    profit = price if cost_fn is None else price - cost_fn(alloc)
    return exact_revenue(slopes.numpy(), (price - base).numpy(), profit.numpy())
