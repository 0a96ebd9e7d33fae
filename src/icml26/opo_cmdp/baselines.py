"""Baselines: greedy plug-in (no optimism), epsilon-greedy plug-in, the uniform policy, the optimal policy.

The plug-in learners share :class:`~icml26.opo_cmdp.opo.OracleAgent` with OPO-CMDP (same data, oracles and
epoch schedule); only how a policy is formed from ``(f_hat, P_hat)`` differs.
"""

from __future__ import annotations

import numpy as np

from .classes import FiniteDynamicsClass, FiniteFunctionClass
from .opo import OracleAgent
from .tabular import optimal_policy

__all__ = ["GreedyPlugIn", "EpsilonGreedyPlugIn", "UniformPolicy", "OptimalPolicy"]


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
