"""The finitely k-convex layer: ``f(x) = max_j [k(x, y_j) - b_j]`` with trainable candidates and offsets."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

from .kernels import Kernel, linear_kernel

__all__ = ["FinitelyConvex", "Selection", "SELECTIONS"]

SELECTIONS = ("soft", "hard", "ste")
_MODES = ("convex", "concave")
_SMOOTHINGS = ("softmax_mean", "lse")


class Selection(NamedTuple):
    """What the layer chose for a batch of ``B`` points among its ``m`` options.

    value: ``(B,)`` the (smoothed) value ``f(x)``; choice: ``(B, dim_y)`` the selected candidate
    ``sum_j w_j y_j``; price: ``(B,)`` the selected offset ``sum_j w_j b_j``; weights: ``(B, m)`` the
    selection weights (one-hot for ``hard``); index: ``(B,)`` the hard arg-max ``j*(x)``.
    """

    value: torch.Tensor
    choice: torch.Tensor
    price: torch.Tensor
    weights: torch.Tensor
    index: torch.Tensor


def _check_kernel(kernel: Kernel, dim_x: int, dim_y: int, dtype: torch.dtype) -> None:
    if not callable(kernel):
        raise TypeError(f"kernel must be callable k(x, y) -> (B, n) tensor, got {type(kernel).__name__}")
    # fixed probe points in (0, 1): no draw from the global random state
    x = torch.linspace(0.1, 0.9, 3 * dim_x, dtype=dtype).reshape(3, dim_x)
    y = torch.linspace(0.2, 0.8, 4 * dim_y, dtype=dtype).reshape(4, dim_y)
    try:
        out = kernel(x, y)
    except Exception as e:  # noqa: BLE001 - any failure means the signature is wrong
        raise TypeError(
            f"kernel must accept (x of shape (B, dim_x), y of shape (n, dim_y)) and return (B, n); "
            f"calling it on shapes {tuple(x.shape)}, {tuple(y.shape)} failed: {e}"
        ) from e
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (3, 4):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise TypeError(
            f"kernel must return a tensor of shape (B, n) = (3, 4) for inputs (3, {dim_x}), (4, {dim_y}); got {shape}"
        )


class FinitelyConvex(nn.Module):
    r"""A finitely k-convex function and its choice map, as an ``nn.Module``.

    .. math::  f_\theta(x) = \max_{j \le n} \big[k(x, y_j) - b_j\big], \qquad
               y^*(x) = y_{j^*(x)}, \quad j^*(x) = \arg\max_j \big[k(x, y_j) - b_j\big]

    with parameters :math:`\theta = (y_1..y_n, b_1..b_n)` (``self.y``, ``self.b``).  Any max of kernel pieces
    is k-convex by construction; finitely many pieces are uniformly dense in the k-convex functions on compact
    sets (Nehzati 2026, Thm 5.1).  When ``k`` is differentiable in ``x`` the gradient is
    :math:`\nabla f(x) = \nabla_x k(x, y_{j^*(x)})` almost everywhere (Danskin), which is what
    :meth:`gradient` returns for ``selection="hard"``.  With ``mode="concave"`` the layer is the finitely
    c-concave function :math:`u(x) = \min_j [k(x, y_j) - b_j]` (``k`` is then a cost ``c``).

    Selections (``forward(x, selection)``):

    * ``"hard"``: exact arg-max (ties go to the larger offset ``b_j``, i.e. the higher price).
    * ``"soft"``: weights ``w = softmax(temp * s)`` over the scores ``s_j = k(x, y_j) - b_j`` (sign-flipped
      for ``concave``); value ``sum_j w_j s_j`` (``smoothing="softmax_mean"``) or
      ``(1/temp) logsumexp(temp * s)`` (``smoothing="lse"``, which satisfies
      ``f <= f_tau <= f + log(m) / temp``); choice ``sum_j w_j y_j``; price ``sum_j w_j b_j``.
    * ``"ste"``: straight-through, forward equals ``hard`` and backward equals ``soft``
      (``soft + (hard - soft).detach()``).

    Parameters
    ----------
    n_candidates: number ``n`` of trainable pieces (>= 1).
    dim_x, dim_y: dimensions of ``x`` and of the candidates ``y_j``.
    kernel: ``k(x, y)`` mapping ``(B, dim_x)``, ``(n, dim_y)`` to ``(B, n)`` (see :mod:`.kernels`).
    y_bounds: ``(low, high)`` with ``low < high``: candidates live in the box ``[low, high]^dim_y`` (a convex
        set; :meth:`project_` keeps them there).  ``None``: unconstrained.
    y_budget: if given, candidates also satisfy ``sum_i y_i <= y_budget`` (e.g. unit-demand lotteries).
    default_option: add the fixed option ``(y_0, b_0) = (0, 0)`` (an auction's outside option, which makes
        every menu individually rational).
    mode: ``"convex"`` (max) or ``"concave"`` (min).
    smoothing: ``"softmax_mean"`` or ``"lse"`` (soft value, see above).
    temp: inverse temperature (> 0) of the soft selection.
    y_init, b_init: optional initial candidates ``(n, dim_y)`` and offsets ``(n,)``; by default candidates are
        uniform in ``y_bounds`` (standard normal when unbounded) and offsets are zero.
    generator: ``torch.Generator`` for the default initialisation.
    """

    def __init__(
        self,
        n_candidates: int,
        dim_x: int,
        dim_y: int,
        kernel: Kernel = linear_kernel,
        *,
        y_bounds: tuple[float, float] | None = None,
        y_budget: float | None = None,
        default_option: bool = False,
        mode: str = "convex",
        smoothing: str = "softmax_mean",
        temp: float = 500.0,
        y_init: torch.Tensor | None = None,
        b_init: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        for name, v in (("n_candidates", n_candidates), ("dim_x", dim_x), ("dim_y", dim_y)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        if smoothing not in _SMOOTHINGS:
            raise ValueError(f"smoothing must be one of {_SMOOTHINGS}, got {smoothing!r}")
        if isinstance(temp, bool) or not isinstance(temp, (int, float)) or not (math.isfinite(temp) and temp > 0):
            raise ValueError(f"temp must be a finite number > 0, got {temp!r}")
        if y_bounds is not None:
            if len(y_bounds) != 2 or not all(math.isfinite(float(v)) for v in y_bounds):
                raise ValueError(f"y_bounds must be a pair (low, high) of finite numbers, got {y_bounds!r}")
            lo, hi = float(y_bounds[0]), float(y_bounds[1])
            if not lo < hi:
                raise ValueError(f"y_bounds must satisfy low < high, got low={lo:g}, high={hi:g}")
            y_bounds = (lo, hi)
        if y_budget is not None:
            if not (math.isfinite(float(y_budget))):
                raise ValueError(f"y_budget must be a finite number, got {y_budget!r}")
            lo_sum = (y_bounds[0] if y_bounds is not None else -math.inf) * dim_y
            if not float(y_budget) >= lo_sum:
                raise ValueError(
                    f"y_budget must be >= dim_y * low = {lo_sum:g} (else the set is empty), got {y_budget}"
                )
            y_budget = float(y_budget)
        if default_option:
            if y_bounds is not None and not (y_bounds[0] <= 0.0 <= y_bounds[1]):
                raise ValueError(f"default_option needs 0 inside y_bounds, got {y_bounds}")
            if y_budget is not None and y_budget < 0:
                raise ValueError(f"default_option needs y_budget >= 0, got {y_budget}")
        _check_kernel(kernel, dim_x, dim_y, dtype)

        self.n_candidates, self.dim_x, self.dim_y = n_candidates, dim_x, dim_y
        self.kernel = kernel
        self.y_bounds, self.y_budget = y_bounds, y_budget
        self.default_option, self.mode, self.smoothing, self.temp = (
            bool(default_option),
            mode,
            smoothing,
            float(temp),
        )

        if y_init is None:
            if y_bounds is None:
                y_init = torch.randn(n_candidates, dim_y, generator=generator, dtype=dtype)
            else:
                u = torch.rand(n_candidates, dim_y, generator=generator, dtype=dtype)
                y_init = y_bounds[0] + (y_bounds[1] - y_bounds[0]) * u
        y_init = torch.as_tensor(y_init, dtype=dtype)
        if tuple(y_init.shape) != (n_candidates, dim_y) or not torch.isfinite(y_init).all():
            raise ValueError(
                f"y_init must be a finite tensor of shape ({n_candidates}, {dim_y}), got {tuple(y_init.shape)}"
            )
        b_init = torch.zeros(n_candidates, dtype=dtype) if b_init is None else torch.as_tensor(b_init, dtype=dtype)
        if tuple(b_init.shape) != (n_candidates,) or not torch.isfinite(b_init).all():
            raise ValueError(f"b_init must be a finite tensor of shape ({n_candidates},), got {tuple(b_init.shape)}")
        self.y = nn.Parameter(y_init.clone())
        self.b = nn.Parameter(b_init.clone())
        if y_bounds is not None or y_budget is not None:
            self.project_()

    # -- options ---------------------------------------------------------------------------------------------
    def options(self) -> tuple[torch.Tensor, torch.Tensor]:
        """All options ``(Y, b)`` of shapes ``(m, dim_y)``, ``(m,)``; default ``(0, 0)`` first."""
        if not self.default_option:
            return self.y, self.b
        y0 = torch.zeros(1, self.dim_y, dtype=self.y.dtype, device=self.y.device)
        b0 = torch.zeros(1, dtype=self.b.dtype, device=self.b.device)
        return torch.cat([y0, self.y]), torch.cat([b0, self.b])

    def _check_x(self, x: torch.Tensor, name: str = "x") -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor of shape (B, {self.dim_x}), got {type(x).__name__}")
        if x.ndim != 2 or x.shape[1] != self.dim_x:
            raise ValueError(f"{name} must have shape (B, {self.dim_x}), got {tuple(x.shape)}")
        if x.dtype != self.y.dtype:
            raise TypeError(f"{name} must have dtype {self.y.dtype} (the layer's), got {x.dtype}")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} must be finite (no NaN/inf)")
        return x

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``s_j(x) = k(x, y_j) - b_j`` for every option, shape ``(B, m)`` (before the concave sign flip)."""
        Y, b = self.options()
        return self.kernel(x, Y) - b

    # -- forward ---------------------------------------------------------------------------------------------
    def select(self, x: torch.Tensor, selection: str = "soft") -> Selection:
        """Value, choice, price, weights and arg-max index for a batch ``x`` (see the class docstring)."""
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
        x = self._check_x(x)
        Y, b = self.options()
        return self._select_from(self.kernel(x, Y), selection)

    def _select_from(self, K: torch.Tensor, selection: str) -> Selection:
        """:meth:`select` given the kernel matrix ``K[i, j] = k(x_i, y_j)`` (shape ``(B, m)``)."""
        Y, b = self.options()
        sign = 1.0 if self.mode == "convex" else -1.0
        s = sign * (K - b)  # maximise s in both modes
        # hard arg-max; exact ties go to the option with the larger offset (the higher price)
        sd = s.detach()
        hard = None
        if selection == "soft":
            idx = sd.argmax(dim=1)
        else:
            best = sd.max(dim=1, keepdim=True).values
            idx = torch.where(sd >= best, b.detach().expand_as(sd), torch.full_like(sd, -math.inf)).argmax(dim=1)
            w = torch.nn.functional.one_hot(idx, s.shape[1]).to(s.dtype)
            hard = Selection(sign * s.gather(1, idx[:, None]).squeeze(1), Y[idx], b[idx], w, idx)
            if selection == "hard":
                return hard
        w = torch.softmax(self.temp * s, dim=1)
        if self.smoothing == "lse":
            soft_value = sign * torch.logsumexp(self.temp * s, dim=1) / self.temp
        else:
            soft_value = sign * (w * s).sum(1)
        soft = Selection(soft_value, w @ Y, w @ b, w, idx)
        if selection == "soft":
            return soft
        return Selection(*(sv + (hv - sv).detach() for sv, hv in zip(soft[:4], hard[:4])), idx)

    def forward(self, x: torch.Tensor, selection: str = "soft") -> tuple[torch.Tensor, torch.Tensor]:
        """``(f(x), y*(x))`` for a batch ``x`` of shape ``(B, dim_x)`` under ``selection``."""
        out = self.select(x, selection)
        return out.value, out.choice

    # -- calculus --------------------------------------------------------------------------------------------
    def gradient(self, x: torch.Tensor, selection: str = "hard") -> torch.Tensor:
        r"""``grad_x f(x)``, shape ``(B, dim_x)``; for ``hard`` this is Danskin's ``grad_x k(x, y_{j*(x)})``.

        With ``soft`` and ``smoothing="lse"`` it is ``sum_j w_j(x) grad_x k(x, y_j)``.
        """
        x = self._check_x(x).detach().requires_grad_(True)
        with torch.enable_grad():
            v = self.select(x, selection).value
            (g,) = torch.autograd.grad(v.sum(), x)
        return g

    def transform(
        self, z: torch.Tensor, x_pool: torch.Tensor, sup: bool = True, chunk: int = 1024
    ) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Numerical k-conjugate over a finite search set ``x_pool`` (a grid or a sample of the x-domain).

        ``sup=True``:  :math:`f^k(z) = \max_{x \in pool} [k(x, z) - f(x)]` (convex duality);
        ``sup=False``: :math:`u^c(z) = \min_{x \in pool} [k(x, z) - u(x)]` (OT's c-transform).
        The hard value of the layer is used.  Returns ``(values (Bz,), x_star (Bz, dim_x))``.  Gradients flow
        to
        the parameters through ``f(x_star)`` (envelope theorem, ``x_star`` fixed).
        """
        if not isinstance(z, torch.Tensor) or z.ndim != 2 or z.shape[1] != self.dim_y:
            raise ValueError(
                f"z must be a torch.Tensor of shape (B, {self.dim_y}), got "
                f"{tuple(z.shape) if isinstance(z, torch.Tensor) else type(z).__name__}"
            )
        if not torch.isfinite(z).all():
            raise ValueError("z must be finite (no NaN/inf)")
        x_pool = self._check_x(x_pool, "x_pool")
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
            raise ValueError(f"chunk must be an integer >= 1, got {chunk!r}")
        f_pool = self.select(x_pool, "hard").value
        vals, where = [], []
        for start in range(0, z.shape[0], chunk):
            gap = self.kernel(x_pool, z[start : start + chunk]) - f_pool[:, None]  # (M, b)
            best = gap.max(0) if sup else gap.min(0)
            vals.append(best.values)
            where.append(best.indices)
        idx = torch.cat(where)
        return torch.cat(vals), x_pool[idx]

    # -- feasibility -----------------------------------------------------------------------------------------
    @torch.no_grad()
    def project_(self) -> FinitelyConvex:
        """Euclidean projection of the candidates onto ``{y in [low, high]^d, sum(y) <= y_budget}``
        (in place).

        Without a budget this is a clamp.  With one, the projection of a row ``v`` whose clamp breaks the budget is
        ``clamp(v - lam, low, high)`` with the ``lam > 0`` at which ``g(lam) = sum(clamp(v - lam, low, high))``
        equals the budget.  ``g`` is piecewise linear and non-increasing with kinks at ``v_i - high`` and
        ``v_i - low``, so ``lam`` is found exactly: evaluate ``g`` at every kink (``2 d`` of them, ``d`` small),
        find the segment where it crosses the budget and interpolate on it.
        """
        lo, hi = self.y_bounds if self.y_bounds is not None else (-math.inf, math.inf)
        y = self.y.data
        raw = y.clone()
        y.clamp_(lo, hi)
        if self.y_budget is not None:
            over = y.sum(1) > self.y_budget
            if over.any():
                v = raw[over]  # project the raw point (clamping first would not be the Euclidean projection)
                floor = self.y_budget / self.dim_y if lo == -math.inf else min(lo, self.y_budget / self.dim_y)
                c = (v.max(1, keepdim=True).values - floor).clamp_min(0) + 1.0  # g(c) <= budget
                kinks = torch.cat([v - hi, v - lo], 1)  # -inf / +inf where a bound is infinite
                kinks = torch.minimum(kinks.clamp_min(0.0), c)  # only lam in [0, c] matters
                t = torch.cat([torch.zeros_like(c), kinks, c], 1).sort(1).values  # (r, 2d + 2)
                g = (v[:, None, :] - t[:, :, None]).clamp(lo, hi).sum(2)  # g at every kink, non-increasing
                k = (g > self.y_budget).sum(1, keepdim=True).clamp(1, t.shape[1] - 1)  # first kink with g <= budget
                t0, t1 = t.gather(1, k - 1), t.gather(1, k)
                g0, g1 = g.gather(1, k - 1), g.gather(1, k)
                lam = t0 + (g0 - self.y_budget) * (t1 - t0) / (g0 - g1).clamp_min(torch.finfo(v.dtype).tiny)
                y[over] = (v - lam).clamp(lo, hi)
        return self

    @torch.no_grad()
    def is_feasible(self, tol: float = 1e-6) -> bool:
        """Whether every candidate lies in the box and meets the budget (within ``tol``)."""
        y = self.y
        ok = bool(torch.isfinite(y).all())
        if self.y_bounds is not None:
            ok &= bool((y >= self.y_bounds[0] - tol).all() and (y <= self.y_bounds[1] + tol).all())
        if self.y_budget is not None:
            ok &= bool((y.sum(1) <= self.y_budget + tol).all())
        return ok

    def extra_repr(self) -> str:
        return (
            f"n_candidates={self.n_candidates}, dim_x={self.dim_x}, dim_y={self.dim_y}, "
            f"kernel={getattr(self.kernel, '__name__', repr(self.kernel))}, "
            f"mode={self.mode}, y_bounds={self.y_bounds}, y_budget={self.y_budget}, "
            f"default_option={self.default_option}, temp={self.temp:g}"
        )
