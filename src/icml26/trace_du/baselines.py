"""The baselines TRACE-DU is compared against (the graph-agnostic bound is ``TraceDU(..., bound="agnostic")``).

- :func:`retrain`: retrain from the common init on ``V \\ U`` with ``W^{-U}`` and the same per-(node, round)
  batches (the gold standard, exact unlearning, ``T`` rounds).
- :func:`last_plus_noise`: no rewind: ``X^T + N(0, sigma^2)`` with ``sigma`` calibrated to the bound at ``T``
  (certified, no retraining).
- :func:`fine_tune`: continue from ``X^T`` on ``V \\ U`` for ``rounds`` rounds (no certificate).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from .graphs import remove_nodes
from .mechanisms import analytic_gaussian_sigma, check_privacy, gaussian_sigma
from .training import DecentralizedSGD, Trajectory
from .unlearning import TraceDU

__all__ = ["retrain", "last_plus_noise", "fine_tune"]


def _kept(traj: Trajectory, forget: Iterable[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    U = tuple(sorted({int(c) for c in forget}))
    if any(c not in traj.nodes for c in U):
        raise ValueError(f"forget must be node ids of the trajectory {list(traj.nodes)}, got {list(U)}")
    kept = tuple(i for i in traj.nodes if i not in U)
    if not kept:
        raise ValueError("cannot forget every node")
    return U, kept


def _run(traj: Trajectory, kept, W, rounds: int, init, start: int, lr: float | None = None) -> Trajectory:
    c = traj.config
    data = dict(zip(traj.nodes, traj.node_data))
    return DecentralizedSGD(
        traj.model,
        [data[i] for i in kept],
        W,
        local_steps=c["local_steps"],
        lr=c["lr"] if lr is None else lr,
        batch_size=c["batch_size"],
        rounds=rounds,
        seed=c["seed"],
        ckpt_every=c["ckpt_every"],
        node_ids=kept,
        init=init,
        start_round=start,
    ).run()


def retrain(traj: Trajectory, forget: Iterable[int], rounds: int | None = None, lr: float | None = None) -> Trajectory:
    """Retrain from round 0 without ``forget`` (same init, same batches of the kept nodes); ``lr`` overrides the
    training run's step size (default: the same)."""
    U, kept = _kept(traj, forget)
    x0 = traj.checkpoints[traj.start][[traj.nodes.index(i) for i in kept]]
    return _run(traj, kept, remove_nodes(traj.W, U), traj.rounds if rounds is None else rounds, x0, 0, lr)


def fine_tune(traj: Trajectory, forget: Iterable[int], rounds: int) -> Trajectory:
    """Continue training from the final models for ``rounds`` rounds on the kept nodes (no certificate)."""
    U, kept = _kept(traj, forget)
    X = traj.final[[traj.nodes.index(i) for i in kept]]
    return _run(traj, kept, remove_nodes(traj.W, U), rounds, X, traj.end)


def last_plus_noise(
    tdu: TraceDU,
    forget: Iterable[int],
    epsilon: float,
    delta: float,
    mechanism: str = "classic",
    seed: int | None = None,
) -> tuple[torch.Tensor, float, float]:
    """``X^T + N(0, sigma^2 I)`` on the kept nodes with ``sigma`` calibrated to ``Delta_U(T)`` (the TRACE-DU graph
    bound of ``tdu``, so the certificate is the same as TRACE-DU's); returns ``(models, sigma, Delta_U(T))``."""
    epsilon, delta = check_privacy(epsilon, delta, mechanism)
    sens = tdu.sensitivity(forget)
    D = float(sens.delta[-1])
    sigma = (gaussian_sigma if mechanism == "classic" else analytic_gaussian_sigma)(epsilon, delta, D)
    X, ids = tdu._checkpoint(int(sens.rounds[-1]))
    s = tdu.config["seed"] if seed is None else int(seed)
    g = np.random.default_rng([s, 20_000 + len(tdu.certificates)])
    base = X[[ids.index(i) for i in sens.nodes]]
    return base + sigma * torch.from_numpy(g.standard_normal(tuple(base.shape))), sigma, D
