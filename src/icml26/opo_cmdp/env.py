"""``ContextualLayeredMDP``: a synthetic contextual layered MDP with known ground truth (a ``gymnasium.Env``),
and the finite classes (truth + decoys) the experiment gives the learners."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .classes import FiniteDynamicsClass, FiniteFunctionClass
from .tabular import optimal_policy

__all__ = ["ContextualLayeredMDP", "make_classes"]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def loss_model(params: dict, C: np.ndarray) -> np.ndarray:
    """``f(c, h, s, a) = sigmoid(theta_{h,s,a} . c + b_{h,s,a})``; with ``params['mislead']`` the truly optimal
    first action (under ``params['truth']``) is given loss 1 (the misleading decoy)."""
    f = _sigmoid(np.einsum("hsad,nd->nhsa", params["theta"], C) + params["bias"][None])
    if params.get("mislead"):
        t = params["truth"]
        pi, _, _ = optimal_policy(loss_model(t["f"], C), dynamics_model(t["P"], C))
        f[:, 0, 0, :] = np.where(pi[:, 0, 0, :] > 0, 1.0, f[:, 0, 0, :])
    return f


def dynamics_model(params: dict, C: np.ndarray) -> np.ndarray:
    """``P(.|c, h, s, a) = softmax(W_{h,s,a} c + u_{h,s,a})`` over the next layer's states."""
    return _softmax(np.einsum("hsatd,nd->nhsat", params["W"], C) + params["u"][None])


class ContextualLayeredMDP(gym.Env):
    """Layered contextual MDP: ``H`` layers of ``S`` states, ``A`` actions, a finite pool of contexts.

    Each episode draws a context ``c`` uniformly from ``contexts`` (``context_pool`` vectors drawn once from
    ``N(0, I_d)``), starts in state 0 of layer 0 and plays ``H`` steps.  The loss of ``(h, s, a)`` is
    ``Bernoulli(f*(c, h, s, a))`` with ``f* = sigmoid(loss_scale * (theta . c + b) + loss_offset)`` (a negative
    ``loss_offset`` makes per-step losses small, so a predicted loss of 1 deters a greedy learner); the next
    state is drawn from ``P*(.|c, h, s, a) = softmax(dyn_scale * W c + u)``.
    ``reset() -> (s, {"context": c, "h": 0})``, ``step(a) -> (s', -loss, terminated, False, {"loss": l, "h": h})``.
    ``true_model(C)`` returns the exact ``(f*, P*)`` for regret by dynamic programming.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        n_layers: int = 4,
        n_states: int = 4,
        n_actions: int = 3,
        context_dim: int = 4,
        context_pool: int = 200,
        loss_scale: float = 1.0,
        loss_offset: float = 0.0,
        dyn_scale: float = 1.0,
        seed: int = 0,
    ) -> None:
        for name, v, lo in (
            ("n_layers", n_layers, 1),
            ("n_states", n_states, 1),
            ("n_actions", n_actions, 2),
            ("context_dim", context_dim, 1),
            ("context_pool", context_pool, 1),
        ):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if not loss_scale > 0 or not dyn_scale >= 0:
            raise ValueError(f"loss_scale must be > 0 and dyn_scale >= 0, got {loss_scale}, {dyn_scale}")
        self.n_layers, self.n_states, self.n_actions, self.context_dim = n_layers, n_states, n_actions, context_dim
        H, S, A, d = n_layers, n_states, n_actions, context_dim
        rng = np.random.default_rng([seed, 17])
        self.contexts = rng.normal(size=(context_pool, d))
        self.true_params = {
            "f": {
                "theta": loss_scale * rng.normal(size=(H, S, A, d)) / np.sqrt(d),
                "bias": loss_offset + loss_scale * rng.normal(size=(H, S, A)),
            },
            "P": {"W": dyn_scale * rng.normal(size=(H, S, A, S, d)) / np.sqrt(d), "u": rng.normal(size=(H, S, A, S))},
        }
        self.observation_space = spaces.Discrete(S)
        self.action_space = spaces.Discrete(A)
        self._c: np.ndarray | None = None
        self._h = self._s = 0

    def true_model(self, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``(f* [n, H, S, A], P* [n, H, S, A, S])`` at contexts ``[n, d]``."""
        C = np.asarray(contexts, dtype=float)
        if C.ndim != 2 or C.shape[1] != self.context_dim:
            raise ValueError(f"contexts must have shape [n, {self.context_dim}] (context_dim), got {C.shape}")
        return loss_model(self.true_params["f"], C), dynamics_model(self.true_params["P"], C)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._c = self.contexts[self.np_random.integers(len(self.contexts))]
        self._f, self._P = (x[0] for x in self.true_model(self._c[None]))
        self._h, self._s = 0, 0
        return self._s, {"context": self._c.copy(), "h": 0}

    def step(self, action: int):
        if self._c is None or self._h >= self.n_layers:
            raise RuntimeError("call reset() before step() (the episode is over)")
        if not self.action_space.contains(int(action)):
            raise ValueError(f"action must lie in [0, {self.n_actions}), got {action!r}")
        h, s, a = self._h, self._s, int(action)
        loss = float(self.np_random.random() < self._f[h, s, a])
        self._h += 1
        done = self._h >= self.n_layers
        if not done:
            self._s = int(self.np_random.choice(self.n_states, p=self._P[h, s, a]))
        return self._s, -loss, done, False, {"loss": loss, "h": h}


def make_classes(
    env: ContextualLayeredMDP, n_decoys: int = 31, seed: int = 0, mislead: str = "all", noise: float = 1.0
) -> tuple[FiniteFunctionClass, FiniteDynamicsClass, dict]:
    """Realizable classes ``F``, ``P`` of ``n_decoys + 1`` candidates each: decoys first, the truth LAST.

    Each decoy copies the truth on a random half of the ``(h, s, a)`` triples and adds ``N(0, noise^2)`` to the
    parameters of the rest.  Misleading decoys additionally give the truly optimal first action (layer 0, start
    state) loss 1: ``mislead="first"``: only candidate 0, which is the truth otherwise; ``"all"``: candidate 0
    and every other decoy; ``"none"``: no decoy.  Candidate 0 agrees with the truth on every action a greedy
    learner plays and wins all ties (the oracles break ties by the lowest index), so once the other decoys are
    refuted a greedy learner never tries the optimal first action again; with ``"all"`` no candidate but the
    truth ever recommends it.
    """
    if mislead not in ("all", "first", "none"):
        raise ValueError(f"mislead must be 'all', 'first' or 'none', got {mislead!r}")
    H, S, A, d = env.n_layers, env.n_states, env.n_actions, env.context_dim
    rng = np.random.default_rng([seed, 29])
    tf, tp = env.true_params["f"], env.true_params["P"]
    fparams, pparams = [], []
    for _ in range(n_decoys):
        mask = rng.random((H, S, A)) < 0.5
        fparams.append(
            {
                "theta": tf["theta"] + noise * mask[..., None] * rng.normal(size=(H, S, A, d)),
                "bias": tf["bias"] + noise * mask * rng.normal(size=(H, S, A)),
                "mislead": mislead == "all",
                "truth": env.true_params,
            }
        )
        mask = rng.random((H, S, A)) < 0.5
        pparams.append(
            {
                "W": tp["W"] + noise * mask[..., None, None] * rng.normal(size=(H, S, A, S, d)),
                "u": tp["u"] + noise * mask[..., None] * rng.normal(size=(H, S, A, S)),
            }
        )
    if mislead != "none" and n_decoys > 0:
        fparams[0] = {"theta": tf["theta"], "bias": tf["bias"], "mislead": True, "truth": env.true_params}
    fparams.append(tf)
    pparams.append(tp)
    F = FiniteFunctionClass(fparams, loss_model, context_dim=d)
    P = FiniteDynamicsClass(pparams, dynamics_model, context_dim=d)
    return F, P, {"truth_index": n_decoys, "mislead": mislead}
