"""What the paper compares against: RochetNet, closed-form separate sales and pure bundling, and POT's exact
optimal transport with a barycentric-projection map."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .kernels import linear_kernel
from .mechanism import check_types, menu_exact_revenue
from .transport import as_points

__all__ = ["RochetNet", "SeparateSales", "PureBundling", "BarycentricOT"]


class RochetNet(nn.Module):
    r"""RochetNet (Dütting et al., 2019): a menu of lotteries for an additive buyer.

    Menu items ``(sigmoid(a_j), b_j)`` plus the outside option ``(0, 0)``; the buyer's utility is
    ``max_j [<x, sigmoid(a_j)> - b_j]``.  Training maximises
    ``E[sum_j softmax(temp * u(x))_j b_j]`` with Adam;
    evaluation uses the exact arg-max.  Same function class as ``FinitelyConvex`` with a linear kernel and box
    ``[0, 1]`` (allocations parameterised by a sigmoid instead of projected).
    """

    def __init__(self, n_items: int, dim: int, temp: float = 1000.0, generator: torch.Generator | None = None) -> None:
        super().__init__()
        if isinstance(n_items, bool) or not isinstance(n_items, int) or n_items < 1:
            raise ValueError(f"n_items must be an integer >= 1, got {n_items!r}")
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
        if not (isinstance(temp, (int, float)) and math.isfinite(temp) and temp > 0):
            raise ValueError(f"temp must be a finite number > 0, got {temp!r}")
        self.dim, self.temp = dim, float(temp)
        self.a = nn.Parameter(torch.randn(n_items, dim, generator=generator))
        self.b = nn.Parameter(torch.rand(n_items, generator=generator) * dim)

    def menu(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(allocations (n+1, dim), prices (n+1,))``, the outside option first."""
        alloc = torch.cat([torch.zeros(1, self.dim), torch.sigmoid(self.a)])
        return alloc, torch.cat([torch.zeros(1), self.b])

    def _payment(self, types: torch.Tensor, hard: bool) -> torch.Tensor:
        alloc, price = self.menu()
        u = types @ alloc.T - price
        if hard:  # exact arg-max; ties go to the higher price
            best = u.max(1, keepdim=True).values
            idx = torch.where(u >= best, price.expand_as(u), torch.full_like(u, -math.inf)).argmax(1)
            return price[idx]
        return torch.softmax(self.temp * u, dim=1) @ price

    def fit(
        self,
        types: torch.Tensor,
        *,
        steps: int = 4000,
        lr: float = 1e-2,
        batch_size: int | None = None,
        generator: torch.Generator | None = None,
        restarts: int = 1,
        explore_steps: int | None = None,
        val_types: torch.Tensor | None = None,
    ) -> RochetNet:
        """Adam (cosine decay to ``lr/10``) on the soft revenue over minibatches of ``types``.

        ``restarts > 1``: the same equal-budget scheme as :meth:`MenuMechanism.fit` -- the current parameters
        and ``restarts - 1`` fresh draws (``a ~ N(0, 1)``, ``b ~ U[0, dim]``) each get ``explore_steps``
        (default ``steps // (2 * restarts)``) constant-``lr`` steps; the best by hard revenue on ``val_types``
        (default: the last fifth of ``types``) continues for the remaining ``steps - restarts *
        explore_steps``.  ``restarts_`` and ``selected_`` record the selection.
        """
        types = check_types(types, self.dim, torch.float32)
        for name, v in (("steps", steps), ("restarts", restarts)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        self.restarts_, self.selected_ = [], 0
        if restarts > 1:
            if explore_steps is None:
                explore_steps = steps // (2 * restarts)
            if isinstance(explore_steps, bool) or not isinstance(explore_steps, int) or explore_steps < 1:
                raise ValueError(f"explore_steps must be an integer >= 1, got {explore_steps!r}")
            if restarts * explore_steps > steps:
                raise ValueError(f"restarts * explore_steps = {restarts * explore_steps} exceeds steps = {steps}")
            if val_types is None:
                if types.shape[0] < 2:
                    raise ValueError("restarts need held-out types: pass val_types or at least 2 types")
                cut = types.shape[0] - max(1, types.shape[0] // 5)
                types, val_types = types[:cut], types[cut:]
            else:
                val_types = check_types(val_types, self.dim, torch.float32, "val_types")
            starts = [(self.a.detach().clone(), self.b.detach().clone())]
            for _ in range(restarts - 1):
                starts.append(
                    (
                        torch.randn(*self.a.shape, generator=generator),
                        torch.rand(self.b.shape[0], generator=generator) * self.dim,
                    )
                )
            best = None
            for r, (a0, b0) in enumerate(starts):
                with torch.no_grad():
                    self.a.copy_(a0)
                    self.b.copy_(b0)
                self._train(types, explore_steps, lr, False, batch_size, generator)
                v = self.revenue(val_types)
                self.restarts_.append({"restart": r, "val_objective": v})
                if best is None or v > best[0]:
                    best = (v, r, self.a.detach().clone(), self.b.detach().clone())
            _, self.selected_, a_best, b_best = best
            with torch.no_grad():
                self.a.copy_(a_best)
                self.b.copy_(b_best)
            steps -= restarts * explore_steps
        self._train(types, steps, lr, True, batch_size, generator)
        return self

    def _train(self, types, steps, lr, cosine, batch_size, generator) -> None:
        if steps == 0:
            return
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=lr / 10) if cosine else None
        S = types.shape[0]
        for _ in range(steps):
            batch = (
                types
                if batch_size is None or batch_size >= S
                else types[torch.randint(0, S, (batch_size,), generator=generator)]
            )
            loss = -self._payment(batch, hard=False).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()

    @torch.no_grad()
    def revenue(self, types: torch.Tensor, hard: bool = True) -> float:
        types = check_types(types, self.dim, torch.float32)
        return float(self._payment(types, hard).mean())

    @torch.no_grad()
    def exact_revenue(self) -> float:
        """Exact expected revenue of the hard menu for types ``U[0, 1]^dim`` (``dim <= 2``), as
        :meth:`MenuMechanism.exact_revenue <icml26.gcf_layer.MenuMechanism.exact_revenue>`."""
        alloc, price = self.menu()
        return menu_exact_revenue(alloc.double(), price.double(), linear_kernel)


class SeparateSales:
    """Sell each item separately at a posted price ``p_i``: revenue ``sum_i p_i 1{x_i >= p_i}``.

    ``prices=None`` picks each price on a grid to maximise empirical revenue in :meth:`fit`.  For values
    ``U[0, 1]`` the optimum is ``p_i = 1/2`` with revenue ``d/4``.
    """

    def __init__(self, prices: float | np.ndarray | None = None) -> None:
        self.prices = prices

    def fit(self, types: np.ndarray) -> SeparateSales:
        x = as_points(types, "types")
        if self.prices is None:
            grid = np.linspace(0, x.max(), 2001)
            self.prices_ = np.array(
                [grid[np.argmax([p * np.mean(x[:, i] >= p) for p in grid])] for i in range(x.shape[1])]
            )
        else:
            self.prices_ = np.broadcast_to(np.asarray(self.prices, dtype=float), (x.shape[1],)).copy()
        return self

    def revenue(self, types: np.ndarray) -> float:
        x = as_points(types, "types", len(self.prices_))
        return float(np.mean(((x >= self.prices_) * self.prices_).sum(1)))


class PureBundling:
    """Sell only the grand bundle at price ``p``: revenue ``p 1{sum_i x_i >= p}``.

    For two items ``U[0, 1]`` the optimal price is ``sqrt(2/3)`` and the revenue ``(2/3) sqrt(2/3)``.
    ``price=None`` picks it on a grid in :meth:`fit`.
    """

    def __init__(self, price: float | None = None) -> None:
        self.price = price

    def fit(self, types: np.ndarray) -> PureBundling:
        s = as_points(types, "types").sum(1)
        if self.price is None:
            grid = np.linspace(0, s.max(), 4001)
            self.price_ = float(grid[np.argmax([p * np.mean(s >= p) for p in grid])])
        else:
            self.price_ = float(self.price)
        return self

    def revenue(self, types: np.ndarray) -> float:
        s = as_points(types, "types").sum(1)
        return float(self.price_ * np.mean(s >= self.price_))


class BarycentricOT:
    """POT's exact OT (``ot.emd``) between two samples, mapped by barycentric projection.

    ``T(X_k) = sum_i P_ki Y_i / sum_i P_ki``; a new point is sent where its nearest source sample goes.
    ``cost`` is any ``c(x, y)`` torch cost (e.g. :func:`~.kernels.lp_cost`).
    """

    def __init__(self, cost) -> None:
        if not callable(cost):
            raise TypeError(f"cost must be callable c(x, y) -> (B, n), got {type(cost).__name__}")
        self.cost = cost

    def fit(self, X, Y) -> BarycentricOT:
        import ot  # the [ot] extra

        X = as_points(X, "X")
        Y = as_points(Y, "Y", X.shape[1])
        M = self.cost(torch.as_tensor(X), torch.as_tensor(Y)).numpy()
        a = np.full(X.shape[0], 1.0 / X.shape[0])
        b = np.full(Y.shape[0], 1.0 / Y.shape[0])
        P = ot.emd(a, b, M, numItermax=10_000_000)
        self.cost_ = float((P * M).sum())
        self.X_, self.T_ = X, (P @ Y) / P.sum(1, keepdims=True)
        return self

    def transport(self, X) -> np.ndarray:
        X = as_points(X, "X", self.X_.shape[1])
        out = np.empty((X.shape[0], self.T_.shape[1]))
        for s in range(0, X.shape[0], 2048):  # 1-nearest neighbour, in chunks
            d = ((X[s : s + 2048, None, :] - self.X_[None]) ** 2).sum(-1)
            out[s : s + 2048] = self.T_[d.argmin(1)]
        return out
