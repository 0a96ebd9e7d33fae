"""The PINN: a tanh MLP ``(x, t) -> u`` and the optimizers the paper compares (:func:`fit`).

``fit`` runs one of four schedules on the total PINN loss ``L = MSE_f + MSE_ic + MSE_bc`` of a problem:

* ``"lbfgs"``: L-BFGS (lr 1, strong-Wolfe line search), ``steps`` iterations (the paper's default trainer);
* ``"adam"``: Adam, ``steps`` steps at ``lr``;
* ``"adam_lbfgs"``: Adam for ``switch * steps`` steps, then L-BFGS for the rest (Rathore et al. 2024);
* ``"curriculum"``: L-BFGS warm-started through ``stages`` problems whose coefficient ramps linearly from
  ``min(c, c_start)`` to the target ``c`` (Krishnapriyan et al. 2021); the last stage (the target problem) gets
  ``final_frac * steps`` iterations and the earlier stages share the rest equally.

All four get the same number of iterations ``steps``; an L-BFGS iteration may evaluate the loss more than once
(line search; at most ``1.25`` evaluations per iteration on average, torch's default ``max_eval``), which
:class:`TrainLog` records as ``n_evals``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from .problems import Batch, PDEProblem

__all__ = ["PINN", "TrainLog", "fit", "OPTIMIZERS"]

OPTIMIZERS = ("lbfgs", "adam", "adam_lbfgs", "curriculum")


class PINN(nn.Module):
    """MLP ``u_theta(x, t)``: ``depth`` linear layers (``depth - 1`` hidden tanh layers of ``width``), inputs mapped
    affinely from ``domain = ((x0, x1), (t0, t1))`` to ``[-1, 1]^2``; Xavier-normal weights and zero biases as in
    the paper's code (``num_layer = 4`` = Linear(2, w)-tanh-Linear(w, w)-tanh-Linear(w, w)-tanh-Linear(w, 1))."""

    def __init__(
        self,
        width: int = 32,
        depth: int = 4,
        domain: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 2 * math.pi), (0.0, 1.0)),
        seed: int | None = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        if isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= 4096:
            raise ValueError(f"width must be an integer in [1, 4096], got {width!r}")
        if isinstance(depth, bool) or not isinstance(depth, int) or not 2 <= depth <= 32:
            raise ValueError(f"depth must be an integer in [2, 32] (number of linear layers), got {depth!r}")
        (x0, x1), (t0, t1) = domain
        if not (x1 > x0 and t1 > t0):
            raise ValueError(f"domain must be ((x0, x1), (t0, t1)) with x1 > x0 and t1 > t0, got {domain!r}")
        self.width, self.depth = width, depth
        self.register_buffer("lo", torch.tensor([x0, t0], dtype=dtype))
        self.register_buffer("hi", torch.tensor([x1, t1], dtype=dtype))
        sizes = [2] + [width] * (depth - 1) + [1]
        self.layers = nn.ModuleList(nn.Linear(a, b, dtype=dtype) for a, b in zip(sizes[:-1], sizes[1:]))
        gen = None if seed is None else torch.Generator().manual_seed(int(seed))
        with torch.no_grad():
            for lin in self.layers:
                std = math.sqrt(2.0 / (lin.in_features + lin.out_features))
                lin.weight.copy_(torch.randn(lin.weight.shape, generator=gen, dtype=dtype) * std)
                lin.bias.zero_()

    def forward(self, x: Tensor, t: Tensor) -> Tensor:
        h = 2.0 * (torch.cat([x, t], dim=-1) - self.lo) / (self.hi - self.lo) - 1.0
        for lin in self.layers[:-1]:
            h = torch.tanh(lin(h))
        return self.layers[-1](h)


@dataclass
class TrainLog:
    """What :func:`fit` did: the loss at every evaluation (``losses``; for curriculum, against the current stage's
    problem), the final training loss on the target problem and its parts, the test error, the iterations and
    loss evaluations spent, and whether training produced a non-finite loss (``failed``)."""

    optimizer: str
    losses: list[float] = field(default_factory=list)
    stage_ends: list[int] = field(default_factory=list)
    final_loss: float = float("nan")
    parts: dict[str, float] = field(default_factory=dict)
    test_error: float = float("nan")
    steps: int = 0
    n_evals: int = 0
    failed: bool = False

    def curve(self, n: int = 50) -> list[float]:
        """``n`` losses at evenly spaced evaluations (for plots and JSON records)."""
        if not self.losses:
            return []
        idx = np.unique(np.linspace(0, len(self.losses) - 1, n).round().astype(int))
        return [float(self.losses[i]) for i in idx]

    def plateaued(self, frac: float = 0.1, rel: float = 0.01) -> bool:
        """Whether the loss changed by less than ``rel`` (relative) over the last ``frac`` of evaluations."""
        if len(self.losses) < 10:
            return True
        k = max(1, int(len(self.losses) * frac))
        a, b = self.losses[-k - 1], self.losses[-1]
        return bool(abs(a - b) <= rel * max(abs(a), 1e-300))


def _lbfgs(model: nn.Module, loss_fn, iters: int, history: int, log: TrainLog) -> None:
    if iters <= 0:
        return
    opt = torch.optim.LBFGS(
        model.parameters(),
        lr=1.0,
        max_iter=iters,
        max_eval=int(iters * 1.25),
        history_size=history,
        tolerance_grad=1e-12,
        tolerance_change=1e-14,
        line_search_fn="strong_wolfe",
    )

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        if not torch.isfinite(loss):
            raise FloatingPointError("non-finite loss")
        loss.backward()
        log.losses.append(float(loss.detach()))
        log.n_evals += 1
        return loss

    opt.step(closure)
    log.steps += iters


def _adam(model: nn.Module, loss_fn, steps: int, lr: float, log: TrainLog) -> None:
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        if not torch.isfinite(loss):
            raise FloatingPointError("non-finite loss")
        loss.backward()
        opt.step()
        log.losses.append(float(loss.detach()))
        log.n_evals += 1
    log.steps += steps


def fit(
    model: nn.Module,
    problem: PDEProblem,
    optimizer: str = "lbfgs",
    *,
    batch: Batch | None = None,
    n_f: int = 512,
    seed: int = 0,
    steps: int = 300,
    lr: float = 1e-2,
    history: int = 50,
    switch: float = 0.5,
    stages: int = 4,
    c_start: float = 1.0,
    final_frac: float = 0.5,
    test_grid: tuple[int, int] = (129, 101),
) -> TrainLog:
    """Train ``model`` in place on ``problem``'s PINN loss with ``optimizer`` (module docstring) for ``steps``
    iterations and return a :class:`TrainLog`.  ``batch``: the training points (default ``problem.sample(n_f,
    seed)``).  Raises ``ValueError`` for an unknown ``optimizer`` or out-of-range settings.  A non-finite loss stops
    training and sets ``log.failed`` (the cell is then reported as failed, never silently dropped)."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {optimizer!r}")
    if not isinstance(problem, PDEProblem):
        raise TypeError(f"problem must be a PDEProblem, got {type(problem).__name__}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    if isinstance(stages, bool) or not isinstance(stages, int) or stages < 1:
        raise ValueError(f"stages must be an integer >= 1, got {stages!r}")
    if optimizer == "curriculum" and stages > steps:
        raise ValueError(f"stages must be <= steps ({steps}) for the curriculum, got {stages!r}")
    if not 0.0 < final_frac <= 1.0:
        raise ValueError(f"final_frac must lie in (0, 1], got {final_frac!r}")
    if not 0.0 < switch < 1.0:
        raise ValueError(f"switch must lie in (0, 1), got {switch!r}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr!r}")
    if not c_start > 0:
        raise ValueError(f"c_start must be > 0, got {c_start!r}")
    batch = problem.sample(n_f, seed) if batch is None else batch
    log = TrainLog(optimizer)
    try:
        if optimizer == "lbfgs":
            _lbfgs(model, lambda: problem.loss(model, batch), steps, history, log)
        elif optimizer == "adam":
            _adam(model, lambda: problem.loss(model, batch), steps, lr, log)
        elif optimizer == "adam_lbfgs":
            k = max(1, int(round(switch * steps)))
            _adam(model, lambda: problem.loss(model, batch), k, lr, log)
            log.stage_ends.append(len(log.losses))
            _lbfgs(model, lambda: problem.loss(model, batch), steps - k, history, log)
        else:
            c = problem.coefficient
            coefs = np.linspace(min(c, c_start), c, stages)
            last = steps if stages == 1 else max(1, int(round(final_frac * steps)))
            rest, k = steps - last, stages - 1
            per = [rest // k + (1 if i < rest % k else 0) for i in range(k)] + [last] if k else [last]
            for ci, it in zip(coefs, per):
                stage = problem.with_coefficient(float(ci))
                _lbfgs(model, lambda s=stage: s.loss(model, batch), it, history, log)
                log.stage_ends.append(len(log.losses))
    except FloatingPointError:
        log.failed = True
    parts = problem.loss(model, batch, parts=True)
    log.parts = {k: float(v.detach()) for k, v in parts.items()}
    log.final_loss = log.parts["total"]
    if not math.isfinite(log.final_loss):
        log.failed = True
    log.test_error = problem.test_error(model, *test_grid)
    return log
