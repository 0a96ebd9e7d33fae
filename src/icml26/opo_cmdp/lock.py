"""``ContextualCombinationLock``: a deep-exploration family (a ``gymnasium.Env`` whose observation carries the
state, the layer and the context), and the finite classes (decoys + truth) the experiment gives the learners.

Layer ``h`` has ``S`` states: state 0 is *on the lock*, states ``1..S-1`` are *off* it.  On the lock the
context-dependent key ``k_h(c) = argmax_a (K_h c)_a`` keeps the agent on it; any other action drops it off for
good.  Mean losses (all in [0, 1]; observed losses are Bernoulli draws):

=====================================  ==========================================================
on the lock, ``h < H - 1``             key: ``key_loss``; any other action: ``leave_loss``
off the lock, ``h < H - 1``            ``off_loss``
last layer, on the lock                key: 0 (the prize); any other action: 1
last layer, off the lock               1
=====================================  ==========================================================

With the defaults the truth's optimal policy follows the key to the end (value ``key_loss (H - 1)``), but a learner
that believes the prize is not there (every decoy in :func:`make_lock_classes` says the key at the last layer also
costs 1) leaves at the first step, and the only data that refutes that belief is the last layer of the lock, which
takes ``H`` correct non-greedy actions in a row to reach.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .classes import FiniteDynamicsClass, FiniteFunctionClass

__all__ = ["ContextualCombinationLock", "make_lock_classes", "lock_losses", "lock_dynamics"]


def _keys(K: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``[n, H]`` key actions ``argmax_a (K_h c)_a``."""
    return np.argmax(np.einsum("had,nd->nha", K, C), axis=-1)


def lock_losses(params: dict, C: np.ndarray) -> np.ndarray:
    """Mean losses ``[n, H, S, A]`` of a lock with key matrices ``params['K']`` and the table in the module docstring;
    ``params['prize']`` is the key's mean loss at the last layer (0: the truth; 1: a decoy); ``params['off_noise']``
    (optional ``[H, S, A]``) is subtracted from the off-lock losses (decoys that differ where a greedy learner
    does go, so the oracle has something to refute)."""
    K = params["K"]
    H, A, _ = K.shape
    S = params["S"]
    n = len(C)
    keys = _keys(K, C)
    f = np.empty((n, H, S, A))
    f[:, :, 0, :] = params["leave_loss"]
    f[:, :, 1:, :] = params["off_loss"]
    rows = np.arange(n)
    for h in range(H - 1):
        f[rows, h, 0, keys[:, h]] = params["key_loss"]
    f[:, H - 1, :, :] = 1.0
    f[rows, H - 1, 0, keys[:, H - 1]] = params["prize"]
    if params.get("off_noise") is not None:
        f[:, :, 1:, :] = np.clip(f[:, :, 1:, :] - params["off_noise"][None, :, 1:, :], 0.0, 1.0)
    return f


def lock_dynamics(params: dict, C: np.ndarray) -> np.ndarray:
    """Deterministic transitions ``[n, H, S, A, S]``: the key keeps state 0, any other action ``a`` on the lock goes to
    off state ``1 + a mod (S - 1)``, off state ``s`` goes to ``1 + (s + a) mod (S - 1)``."""
    K = params["K"]
    H, A, _ = K.shape
    S = params["S"]
    n = len(C)
    keys = _keys(K, C)
    P = np.zeros((n, H, S, A, S))
    a = np.arange(A)
    P[:, :, 0, a, 1 + a % (S - 1)] = 1.0
    for s in range(1, S):
        P[:, :, s, a, 1 + (s + a) % (S - 1)] = 1.0
    rows = np.arange(n)
    for h in range(H):
        P[rows, h, 0, keys[:, h], :] = 0.0
        P[rows, h, 0, keys[:, h], 0] = 1.0
    return P


class ContextualCombinationLock(gym.Env):
    """A contextual combination lock with ``H`` layers, ``S >= 2`` states per layer (state 0: on the lock), ``A``
    actions and a finite pool of ``context_pool`` contexts drawn once from ``N(0, I_d)`` (one drawn per episode).

    Observation: ``{"state": s, "layer": h, "context": c}`` (a ``gymnasium.spaces.Dict``, so a standard agent sees
    the context and the layer; ``layer == H`` after the last step).  ``reset() -> (obs, {"context": c, "h": 0})``,
    ``step(a) -> (obs, -loss, terminated, False, {"loss": l, "h": h})``.  ``true_model(C)`` gives the exact
    ``(f*, P*)`` for regret by dynamic programming.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        n_layers: int = 6,
        n_states: int = 3,
        n_actions: int = 4,
        context_dim: int = 4,
        context_pool: int = 100,
        key_loss: float = 0.25,
        leave_loss: float = 0.1,
        off_loss: float = 0.15,
        seed: int = 0,
    ) -> None:
        for name, v, lo in (
            ("n_layers", n_layers, 2),
            ("n_states", n_states, 2),
            ("n_actions", n_actions, 2),
            ("context_dim", context_dim, 1),
            ("context_pool", context_pool, 1),
        ):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        for name, v in (("key_loss", key_loss), ("leave_loss", leave_loss), ("off_loss", off_loss)):
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and 0.0 <= v <= 1.0):
                raise ValueError(f"{name} must be a mean loss in [0, 1], got {v!r}")
        self.n_layers, self.n_states, self.n_actions, self.context_dim = n_layers, n_states, n_actions, context_dim
        rng = np.random.default_rng([seed, 41])
        self.contexts = rng.normal(size=(context_pool, context_dim))
        self.true_params = {
            "K": rng.normal(size=(n_layers, n_actions, context_dim)),
            "S": n_states,
            "key_loss": float(key_loss),
            "leave_loss": float(leave_loss),
            "off_loss": float(off_loss),
            "prize": 0.0,
        }
        self.observation_space = spaces.Dict(
            {
                "state": spaces.Discrete(n_states),
                "layer": spaces.Discrete(n_layers + 1),
                "context": spaces.Box(-np.inf, np.inf, shape=(context_dim,), dtype=np.float64),
            }
        )
        self.action_space = spaces.Discrete(n_actions)
        self._c: np.ndarray | None = None
        self._h = self._s = 0

    def true_model(self, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``(f* [n, H, S, A], P* [n, H, S, A, S])`` at contexts ``[n, d]``."""
        C = np.asarray(contexts, dtype=float)
        if C.ndim != 2 or C.shape[1] != self.context_dim:
            raise ValueError(f"contexts must have shape [n, {self.context_dim}] (context_dim), got {C.shape}")
        return lock_losses(self.true_params, C), lock_dynamics(self.true_params, C)

    def _obs(self) -> dict:
        assert self._c is not None
        return {"state": self._s, "layer": self._h, "context": self._c.copy()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._c = self.contexts[self.np_random.integers(len(self.contexts))]
        self._f, self._P = (x[0] for x in self.true_model(self._c[None]))
        self._h, self._s = 0, 0
        return self._obs(), {"context": self._c.copy(), "h": 0}

    def step(self, action: int):
        if self._c is None or self._h >= self.n_layers:
            raise RuntimeError("call reset() before step() (the episode is over)")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an integer in [0, {self.n_actions}), got {action!r}")
        if not self.action_space.contains(int(action)):
            raise ValueError(f"action must lie in [0, {self.n_actions}), got {action!r}")
        h, s, a = self._h, self._s, int(action)
        loss = float(self.np_random.random() < self._f[h, s, a])
        self._h += 1
        done = self._h >= self.n_layers
        if not done:
            self._s = int(self.np_random.choice(self.n_states, p=self._P[h, s, a]))
        return self._obs(), -loss, done, False, {"loss": loss, "h": h}


def make_lock_classes(
    env: ContextualCombinationLock, n_decoys: int = 15, seed: int = 0, key_noise: float = 0.3
) -> tuple[FiniteFunctionClass, FiniteDynamicsClass, dict]:
    """Realizable classes of ``n_decoys + 1`` candidates each, decoys first, the truth LAST (ties go to the lowest
    index, so a decoy wins until the data refutes it).

    Every loss decoy says the prize is not there (the key at the last layer costs 1, like every other action);
    decoy 0 is the truth otherwise, the others also lower the off-lock losses of a random half of ``(h, s, a)`` by
    up to 0.1 (refutable where a greedy learner goes).  Dynamics decoys perturb the key matrices by
    ``N(0, key_noise^2)`` (so their keys differ on some contexts and layers; refutable on the lock only).
    """
    if isinstance(n_decoys, bool) or not isinstance(n_decoys, int) or n_decoys < 1:
        raise ValueError(f"n_decoys must be an integer >= 1, got {n_decoys!r}")
    if not key_noise >= 0:
        raise ValueError(f"key_noise must be >= 0, got {key_noise!r}")
    H, S, A, d = env.n_layers, env.n_states, env.n_actions, env.context_dim
    rng = np.random.default_rng([seed, 43])
    tp = env.true_params
    fparams, pparams = [], []
    for i in range(n_decoys):
        noise = None if i == 0 else 0.1 * rng.random((H, S, A)) * (rng.random((H, S, A)) < 0.5)
        fparams.append({**tp, "prize": 1.0, "off_noise": noise})
        pparams.append({**tp, "K": tp["K"] + key_noise * rng.normal(size=(H, A, d))})
    fparams.append(tp)
    pparams.append(tp)
    F = FiniteFunctionClass(fparams, lock_losses, context_dim=d)
    P = FiniteDynamicsClass(pparams, lock_dynamics, context_dim=d)
    return F, P, {"truth_index": n_decoys}
