"""Decentralized local SGD (D-PSGD with ``K`` local steps) that records its trajectory.

Round ``t`` (for every node ``i`` at once, parameters stacked as ``X`` ``(n, p)``)::

    y_i^t     = SGD_K(x_i^t; D_i, rng(seed, i, t))   K steps w <- w - eta grad(mean_b l(w; batch) + lambda/2 ||w||^2)
    x_i^{t+1} = sum_j W_ij y_j^t                       gossip averaging

and the record keeps the checkpoints ``X^t`` every ``ckpt_every`` rounds (and at the last round) plus, every
round, the edge distances ``d_ij^t = ||y_i^t - y_j^t||_2`` for ``W_ij > 0`` (the "historical trajectory"
TRACE-DU reads).  Batches come from one generator per (node, round), ``numpy.random.default_rng([seed, i, t])``
with ``i`` the node's *global* id, so dropping a node never changes any other node's draws: that is what makes
the retrained reference run coupled to the original one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from .graphs import check_gossip_matrix

__all__ = ["DecentralizedSGD", "Trajectory", "batch_indices"]


def batch_indices(seed: int, node: int, round: int, n_samples: int, local_steps: int, batch_size: int) -> np.ndarray:
    """The ``(local_steps, batch_size)`` sample indices node ``node`` uses in round ``round`` (with replacement)."""
    return np.random.default_rng([int(seed), int(node), int(round)]).integers(0, n_samples, (local_steps, batch_size))


@dataclass
class Trajectory:
    """One training segment: rounds ``start .. start + rounds`` on nodes ``nodes`` (global ids) with gossip ``W``.

    ``checkpoints[t]``: ``X^t`` ``(len(nodes), p)`` at absolute round ``t``; ``distances[r]``: ``(len(nodes),
    len(nodes))`` edge distances ``||y_i - y_j||`` of absolute round ``start + r`` (0 off the edges)."""

    nodes: tuple[int, ...]
    W: np.ndarray
    start: int
    rounds: int
    checkpoints: dict[int, torch.Tensor]
    distances: np.ndarray
    config: dict = field(default_factory=dict)
    model: object = None
    node_data: list = field(default_factory=list, repr=False)

    @property
    def end(self) -> int:
        return self.start + self.rounds

    @property
    def final(self) -> torch.Tensor:
        return self.checkpoints[self.end]


class DecentralizedSGD:
    """Gossip training of ``model`` on ``node_data`` (one ``(X_i, y_i)`` per node) with gossip matrix ``W``.

    ``node_ids``: the global id of each node (defaults to ``0..n-1``; a run without some clients passes the ids it
    keeps so their batches match the full run); ``init``: common initial parameters ``(p,)`` (default
    ``model.init(seed)``) or per-node ``(n, p)``; ``start_round``: absolute round index of the first round (resuming
    from a checkpoint at round ``start_round``)."""

    def __init__(
        self,
        model,
        node_data: Sequence[tuple[torch.Tensor, torch.Tensor]],
        W: np.ndarray,
        *,
        local_steps: int = 5,
        lr: float = 0.5,
        batch_size: int = 16,
        rounds: int = 60,
        seed: int = 0,
        ckpt_every: int = 1,
        node_ids: Sequence[int] | None = None,
        init: torch.Tensor | None = None,
        start_round: int = 0,
    ) -> None:
        W = check_gossip_matrix(W)
        n = W.shape[0]
        if len(node_data) != n:
            raise ValueError(f"node_data must hold one (X, y) per node of W: {len(node_data)} for {n} nodes")
        for name, v, low in (
            ("local_steps", local_steps, 1),
            ("batch_size", batch_size, 1),
            ("rounds", rounds, 0),
            ("ckpt_every", ckpt_every, 1),
            ("start_round", start_round, 0),
        ):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr!r}")
        ids = tuple(range(n)) if node_ids is None else tuple(int(i) for i in node_ids)
        if len(ids) != n or len(set(ids)) != n:
            raise ValueError(f"node_ids must be {n} distinct ids, got {node_ids!r}")
        d, C = getattr(model, "d", None), getattr(model, "C", None)
        for i, (X, y) in enumerate(node_data):
            if not (isinstance(X, torch.Tensor) and isinstance(y, torch.Tensor)):
                raise TypeError(f"node_data[{i}] must be a pair of torch tensors (X, y), got {type(X).__name__}")
            if X.dtype != torch.float64:
                raise TypeError(f"node_data[{i}] X must be float64 (the bound is checked to 1e-9), got {X.dtype}")
            if y.dtype.is_floating_point or y.dtype == torch.bool or y.dtype.is_complex:
                raise TypeError(f"node_data[{i}] y must hold integer class labels, got {y.dtype}")
            if X.is_floating_point() and not bool(torch.isfinite(X).all()):
                bad = int((~torch.isfinite(X)).sum())
                raise ValueError(f"node_data[{i}] X must be finite: it holds {bad} NaN or inf entries")
            if X.dim() != 2 or y.dim() != 1 or X.shape[0] != y.shape[0] or X.shape[0] < 1:
                raise ValueError(
                    f"node_data[{i}] must be (X, y) with X (m, d), y (m,) and the same number >= 1 of rows"
                )
            if d is not None and X.shape[1] != d:
                raise ValueError(f"node_data[{i}] X has {X.shape[1]} features but the model expects n_features={d}")
            if C is not None and (int(y.min()) < 0 or int(y.max()) >= C):
                raise ValueError(
                    f"node_data[{i}] y must be labels in [0, {C - 1}] (model n_classes={C}), got "
                    f"[{int(y.min())}, {int(y.max())}]"
                )
        self.model, self.node_data, self.W, self.node_ids = model, list(node_data), W, ids
        self.local_steps, self.lr, self.batch_size, self.rounds = int(local_steps), float(lr), int(batch_size), rounds
        self.seed, self.ckpt_every, self.start_round = int(seed), int(ckpt_every), int(start_round)
        x0 = model.init(self.seed) if init is None else torch.as_tensor(init, dtype=torch.float64)
        self.init = (x0.expand(n, -1) if x0.dim() == 1 else x0).clone()
        if self.init.shape != (n, model.n_params):
            raise ValueError(f"init must have shape ({model.n_params},) or ({n}, {model.n_params}), got {x0.shape}")

    def _batches(self, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``(K, n, b, d)`` inputs and ``(K, n, b)`` labels of round ``t``."""
        Xs, ys = [], []
        for nid, (X, y) in zip(self.node_ids, self.node_data):
            idx = torch.from_numpy(batch_indices(self.seed, nid, t, X.shape[0], self.local_steps, self.batch_size))
            Xs.append(X[idx])
            ys.append(y[idx])
        return torch.stack(Xs, 1), torch.stack(ys, 1)

    def local_sgd(self, X: torch.Tensor, t: int) -> torch.Tensor:
        """``Y = SGD_K(X)`` of round ``t`` for every node."""
        bx, by = self._batches(t)
        Y = X.clone()
        for k in range(self.local_steps):
            Y = Y - self.lr * self.model.grad(Y, bx[k], by[k])
        return Y

    def run(self) -> Trajectory:
        """Train ``rounds`` rounds and return the recorded :class:`Trajectory`."""
        n = self.W.shape[0]
        Wt = torch.as_tensor(self.W, dtype=torch.float64)
        mask = (self.W > 0) & ~np.eye(n, dtype=bool)
        X = self.init.clone()
        t0, T = self.start_round, self.start_round + self.rounds
        ckpts, dists = {t0: X.clone()}, np.zeros((self.rounds, n, n))
        for r, t in enumerate(range(t0, T)):
            Y = self.local_sgd(X, t)
            dists[r] = np.where(mask, (Y[:, None] - Y[None]).norm(dim=-1).numpy(), 0.0)
            X = Wt @ Y
            if (t + 1 - t0) % self.ckpt_every == 0 or t + 1 == T:
                ckpts[t + 1] = X.clone()
        cfg = dict(
            local_steps=self.local_steps,
            lr=self.lr,
            batch_size=self.batch_size,
            seed=self.seed,
            ckpt_every=self.ckpt_every,
        )
        return Trajectory(self.node_ids, self.W.copy(), t0, self.rounds, ckpts, dists, cfg, self.model, self.node_data)
