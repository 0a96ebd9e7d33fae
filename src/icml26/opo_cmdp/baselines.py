"""Baselines: greedy plug-in (no optimism), epsilon-greedy plug-in, the uniform policy, the optimal policy.

The plug-in learners share :class:`~icml26.opo_cmdp.opo.OracleAgent` with OPO-CMDP (same data, oracles and
epoch schedule); only how a policy is formed from ``(f_hat, P_hat)`` differs.
"""

from __future__ import annotations

import numpy as np

from .classes import FiniteDynamicsClass, FiniteFunctionClass
from .opo import OPOCMDP, OracleAgent
from .tabular import _occupancy, optimal_policy

__all__ = [
    "GreedyPlugIn",
    "EpsilonGreedyPlugIn",
    "OptimisticGreedy",
    "LinearFloor",
    "ExploreFirstFloor",
    "UniformPolicy",
    "OptimalPolicy",
]


class GreedyPlugIn(OracleAgent):
    """Plays ``argmin`` of the plug-in model: the optimal policy of ``(f_hat(c), P_hat(c))`` (no exploration)."""

    def _greedy(self, context) -> np.ndarray:
        row = self.track(self._context(context))[0]
        f, p = self._models(np.array([row]), self.kf, self.kp)
        return optimal_policy(f, p)[0][0]

    def policy(self, context) -> np.ndarray:
        return self._greedy(context)


class EpsilonGreedyPlugIn(GreedyPlugIn):
    """Greedy plug-in mixed with the uniform policy: ``(1 - eps_t) pi_greedy + eps_t / |A|`` with
    ``eps_t = min(1, eps_scale * t^{-power})`` (``t`` the episode being played)."""

    def __init__(
        self,
        F: FiniteFunctionClass,
        P: FiniteDynamicsClass | None,
        n_layers: int,
        n_states: int,
        n_actions: int,
        eps_scale: float = 1.0,
        power: float = 1 / 3,
        epoch_schedule: str = "doubling",
    ):
        super().__init__(F, P, n_layers, n_states, n_actions, epoch_schedule)
        if not eps_scale >= 0:
            raise ValueError(f"eps_scale must be >= 0, got {eps_scale}")
        if not power >= 0:
            raise ValueError(f"power must be >= 0, got {power}")
        self.eps_scale, self.power = float(eps_scale), float(power)

    def policy(self, context) -> np.ndarray:
        eps = min(1.0, self.eps_scale * (self.t + 1) ** (-self.power))
        return (1.0 - eps) * self._greedy(context) + eps / self.A


class UniformPolicy:
    """Every action with probability ``1/|A|`` (learns nothing)."""

    oracle_calls = 0

    def __init__(self, n_layers: int, n_states: int, n_actions: int) -> None:
        self.shape = (n_layers, n_states, n_actions)

    def policy(self, context) -> np.ndarray:
        return np.full(self.shape, 1.0 / self.shape[-1])

    def observe(self, context, trajectory) -> None:
        pass


class OptimalPolicy(UniformPolicy):
    """The optimal policy of the TRUE model (regret 0 by definition; a check of the regret computation)."""

    def __init__(self, env) -> None:
        super().__init__(env.n_layers, env.n_states, env.n_actions)
        self.env = env

    def policy(self, context) -> np.ndarray:
        f, p = self.env.true_model(np.asarray(context, dtype=float)[None])
        return optimal_policy(f, p)[0][0]


class OptimisticGreedy(OPOCMDP):
    """Optimistic greedy (the spec's E-UC^3RL-style baseline): OPO-CMDP's counterfactual bonus, but the policy of
    episode ``j`` is the ``argmin`` (dynamic programming) of the optimistic model ``(max(0, f_hat - b_j), P_hat)``
    instead of a mirror-descent step; ``n_{j+1} = n_j + q_j`` with ``q_j`` the occupancy of that deterministic policy
    under ``P_hat`` (counterfactually, for every tracked context).  ``gamma`` scales the bonus (tuned like OPO's
    step); ``eta`` is unused."""

    def __init__(self, F, P, n_layers: int, n_states: int, n_actions: int, gamma: float = 1.0, **kw) -> None:
        super().__init__(F, P, n_layers, n_states, n_actions, eta=1.0, gamma=gamma, **kw)

    def _plan(self, rows: np.ndarray, j: int, n: np.ndarray, kf: int, kp: int) -> tuple[np.ndarray, np.ndarray]:
        f, p = self._models(rows, kf, kp)
        beta = self.gamma * np.sqrt(j / (self.S * self.A))
        b = np.minimum(1.0, (beta / 2.0) / (1.0 + n))
        return optimal_policy(np.maximum(0.0, f - b), p)[0], b

    def _step(self, logpi, n, rows, j, kf, kp):
        f, p = self._models(rows, kf, kp)
        pi, b = self._plan(rows, j, n, kf, kp)
        q = _occupancy(pi, p, self.s0)
        with np.errstate(divide="ignore"):
            logpi = np.log(pi)
        return logpi, n + q, float(np.mean(np.sum(q * b, axis=(-1, -2, -3)))) if len(rows) else 0.0

    def _replay(self, logpi: np.ndarray, n: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Contexts first seen after episode ``t`` go through this learner's own updates of episodes ``1..t`` (its
        :meth:`_step`: the argmin plan and the occupancy of that deterministic policy), not OPO-CMDP's mirror step
        (v3d-v3e inherited :meth:`OPOCMDP._replay`, a mirror step with ``eta = 1``: referee pass 4)."""
        for j, (kf, kp) in enumerate(self.history, start=1):
            logpi, n, _ = self._step(logpi, n, rows, j, kf, kp)
        return logpi, n

    def policy(self, context) -> np.ndarray:
        row = self.track(self._context(context))[0]
        rows = np.array([row])
        return self._plan(rows, self.t + 1, self._n[rows], self.kf, self.kp)[0][0]


class LinearFloor:
    """A learner whose regret is linear by construction: it plays ``(1 - floor) pi + floor / |A|`` where ``pi`` is
    the wrapped learner's policy, so every episode keeps a fixed share of uniform play (the control arm for the
    sublinearity claim: the method with its vanishing exploration replaced by a constant floor)."""

    def __init__(self, agent, floor: float = 0.05) -> None:
        if isinstance(floor, (bool, np.bool_)) or not isinstance(floor, (int, float, np.integer, np.floating)):
            raise ValueError(f"floor must be a number in (0, 1], got {floor!r}")
        if not 0.0 < floor <= 1.0:
            raise ValueError(f"floor must lie in (0, 1], got {floor!r}")
        self.agent, self.floor = agent, float(floor)

    @property
    def oracle_calls(self) -> int:
        return int(getattr(self.agent, "oracle_calls", 0))

    def track(self, contexts):
        return self.agent.track(contexts) if hasattr(self.agent, "track") else None

    def policy(self, context) -> np.ndarray:
        pi = np.asarray(self.agent.policy(context), dtype=float)
        return (1.0 - self.floor) * pi + self.floor / pi.shape[-1]

    def observe(self, context, trajectory) -> None:
        self.agent.observe(context, trajectory)


class ExploreFirstFloor(UniformPolicy):
    """A learner whose regret is linear by construction, built to pass the late-share test (referee pass 3): uniform
    play for the first ``n_explore`` episodes, then the optimal policy of the TRUE model mixed with ``floor`` uniform
    play, ``(1 - floor) pi* + floor / |A|``, in every later episode.  Its late per-episode regret is the floor's
    (``floor_level``), its first window's is uniform play's, so its late share is their ratio (0.24 at ``floor =
    0.04`` on the lock): the second control of ``opo_sublinear``, an oracle learner (it knows the truth and the
    test's first window), not a method."""

    def __init__(self, env, n_explore: int, floor: float = 0.04) -> None:
        super().__init__(env.n_layers, env.n_states, env.n_actions)
        if isinstance(n_explore, (bool, np.bool_)) or not isinstance(n_explore, (int, np.integer)) or n_explore < 0:
            raise ValueError(f"n_explore must be an integer >= 0, got {n_explore!r}")
        if (
            isinstance(floor, (bool, np.bool_))
            or not isinstance(floor, (int, float, np.integer, np.floating))
            or not 0.0 <= floor <= 1.0
        ):
            raise ValueError(f"floor must lie in [0, 1], got {floor!r}")
        self.env, self.n_explore, self.floor, self.t = env, int(n_explore), float(floor), 0

    def policy(self, context) -> np.ndarray:
        if self.t < self.n_explore:
            return super().policy(context)
        f, p = self.env.true_model(np.asarray(context, dtype=float)[None])
        pi = optimal_policy(f, p)[0][0]
        return (1.0 - self.floor) * pi + self.floor / pi.shape[-1]

    def observe(self, context, trajectory) -> None:
        self.t += 1
