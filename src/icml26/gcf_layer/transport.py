"""Optimal transport maps for general translation-invariant costs from a finitely c-concave potential."""

from __future__ import annotations

import math

import numpy as np
import torch

from .layer import FinitelyConvex

__all__ = ["GeneralCostOT", "l2_uvp", "as_points"]


def as_points(a, name: str, dim: int | None = None) -> np.ndarray:
    """Check points: finite, 2-D ``(N, d)`` with ``N >= 1``; 1-D input means ``d = 1``."""
    if isinstance(a, torch.Tensor):
        a = a.detach().cpu().numpy()
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be an array of numbers of shape (N, d), got {type(a).__name__}") from e
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape (N, d) with N, d >= 1, got {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} must have {dim} columns, got {arr.shape[1]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN/inf)")
    return arr


def l2_uvp(T_hat, T_star, Y) -> float:
    r"""Unexplained variance percentage (Korotin et al. 2021):
    :math:`100 \cdot \mathbb{E}\|\hat T(X) - T^*(X)\|^2 / \mathrm{Var}(\nu)`, with
    :math:`\mathrm{Var}(\nu) = \mathrm{tr}\,\mathrm{Cov}(Y)` estimated from target samples ``Y``.

    ``T_hat`` and ``T_star`` are ``(N, d)`` images of the same source points; ``Y`` is ``(M, d)``, ``M >= 2``.
    """
    T_hat = as_points(T_hat, "T_hat")
    T_star = as_points(T_star, "T_star", T_hat.shape[1])
    Y = as_points(Y, "Y", T_hat.shape[1])
    if T_hat.shape[0] != T_star.shape[0]:
        raise ValueError(f"T_hat and T_star must map the same points, got {T_hat.shape[0]} and {T_star.shape[0]} rows")
    if Y.shape[0] < 2:
        raise ValueError(f"Y must hold at least 2 target samples to estimate Var(nu), got {Y.shape[0]}")
    var = float(Y.var(axis=0, ddof=1).sum())
    if not var > 0:
        raise ValueError("Y has zero variance: L2-UVP is undefined")
    return float(100.0 * np.mean(np.sum((T_hat - T_star) ** 2, axis=1)) / var)


class GeneralCostOT:
    r"""Monge map for a cost ``c(x, y) = h(x - y)`` from a finitely c-concave Kantorovich potential.

    The potential is a concave-mode :class:`FinitelyConvex` layer whose candidates are the ``M`` target
    samples and whose offsets ``b`` are learned,

    .. math::  u(x) = \min_{i \le M} \big[c(x, Y_i) - b_i\big],

    trained by stochastic ascent (Adam, minibatches of source points) on the semi-discrete Kantorovich dual

    .. math::  D(b) = \mathbb{E}_{X \sim \mu}\big[u(X)\big] + \frac1M \sum_i b_i ,

    which is concave in ``b`` (the layer's value is a min of affine functions of ``b``) and whose supremum is
    the optimal transport cost from ``mu`` to the empirical target.  Training uses the exact min
    (``selection="hard"``: Danskin gradients through each source point's winning candidate); ``"ste"`` and
    ``"soft"`` use the log-sum-exp weights (``temp``) in the backward pass instead.  The map is the
    potential's choice ``T(x) = Y_{i*(x)}`` (``transport(X, "hard")``), which equals the twist formula
    ``T(x) = x - (grad h)^{-1}(grad u(x))``; ``transport(X, "soft")`` applies the twist formula to the
    log-sum-exp smoothed potential and gives a continuous map.  Unlike a discrete OT plan, both are defined
    out of sample.  (The paper also learns the candidates; see ``docs/gcf_layer.md`` for why we fix them.)

    Parameters
    ----------
    cost: a translation-invariant cost with ``inverse_grad_h`` (e.g. :func:`~.kernels.lp_cost`), or any
        ``c(x, y) -> (B, n)`` (then only ``transport(X, "hard")`` is available).
    steps: Adam steps (>= 1); lr: learning rate relative to the spread (std) of the costs, cosine-decayed
        to 0.
    batch_size: source points per step.
    temp: inverse temperature relative to the cost spread (the layer's ``temp`` is ``temp / std(C)``).
    selection: training selection, ``"hard"`` (default), ``"ste"`` or ``"soft"``.
    seed: seed for the minibatches.
    """

    def __init__(
        self,
        cost,
        *,
        steps: int = 2000,
        lr: float = 1e-2,
        batch_size: int = 512,
        temp: float = 100.0,
        selection: str = "hard",
        seed: int = 0,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        if not callable(cost):
            raise TypeError(f"cost must be callable c(x, y) -> (B, n), got {type(cost).__name__}")
        for name, v in (("steps", steps), ("batch_size", batch_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        for name, v in (("lr", lr), ("temp", temp)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if selection not in ("ste", "soft", "hard"):
            raise ValueError(f"selection must be 'ste', 'soft' or 'hard', got {selection!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        self.cost, self.steps, self.lr, self.batch_size = cost, steps, float(lr), batch_size
        self.temp, self.selection, self.seed, self.dtype = float(temp), selection, seed, dtype

    def fit(self, X, Y) -> GeneralCostOT:
        """Learn the potential from source samples ``X`` ``(N, d)`` and target samples ``Y`` ``(M, d)``."""
        X = as_points(X, "X")
        Y = as_points(Y, "Y", X.shape[1])
        g = torch.Generator().manual_seed(self.seed)
        Xt = torch.as_tensor(X, dtype=self.dtype)
        Yt = torch.as_tensor(Y, dtype=self.dtype)
        d, M = X.shape[1], Y.shape[0]
        C = self.cost(Xt, Yt)  # (N, M): the candidates are fixed, so the cost matrix is computed once
        scale = float(C.std()) if C.numel() > 1 else 1.0
        scale = scale if math.isfinite(scale) and scale > 0 else 1.0
        self.potential_ = FinitelyConvex(
            M,
            d,
            d,
            self.cost,
            mode="concave",
            smoothing="lse",
            temp=self.temp / scale,
            y_init=Yt,
            dtype=self.dtype,
        )
        self.potential_.y.requires_grad_(False)  # candidates are the target sample
        opt = torch.optim.Adam([self.potential_.b], lr=self.lr * scale)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.steps, eta_min=0.0)
        B = min(self.batch_size, X.shape[0])
        self.history_ = []
        for step in range(self.steps):
            rows = torch.randint(0, X.shape[0], (B,), generator=g)
            u = self.potential_._select_from(C[rows], self.selection).value
            dual = u.mean() + self.potential_.b.mean()
            opt.zero_grad(set_to_none=True)
            (-dual).backward()
            opt.step()
            sched.step()
            if step % 100 == 0 or step == self.steps - 1:
                self.history_.append({"step": step, "dual": float(dual.detach())})
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "potential_"):
            raise RuntimeError("call fit(X, Y) before using the map")

    @torch.no_grad()
    def dual_value(self, X) -> float:
        """``D(b)`` with the expectation over source samples ``X`` (<= the OT cost to the target)."""
        self._check_fitted()
        X = torch.as_tensor(as_points(X, "X", self.potential_.dim_x), dtype=self.dtype)
        return float(self.potential_.select(X, "hard").value.mean() + self.potential_.b.mean())

    def transport(self, X, selection: str = "hard") -> np.ndarray:
        """Map source points ``X`` ``(N, d)``: ``hard`` gives ``Y_{i*(x)}``; ``soft`` twist map."""
        self._check_fitted()
        if selection not in ("hard", "soft"):
            raise ValueError(f"selection must be 'hard' or 'soft', got {selection!r}")
        Xt = torch.as_tensor(as_points(X, "X", self.potential_.dim_x), dtype=self.dtype)
        if selection == "hard":
            with torch.no_grad():
                return self.potential_.select(Xt, "hard").choice.numpy().astype(float)
        inv = getattr(self.cost, "inverse_grad_h", None)
        if inv is None:
            raise ValueError("selection='soft' needs a cost with inverse_grad_h (a translation-invariant h(x - y))")
        grad_u = self.potential_.gradient(Xt, "soft")
        return (Xt - inv(grad_u)).detach().numpy().astype(float)
