"""Optimistic policy optimization for stochastic contextual MDPs with offline function approximation.

Levy, Rosenberg, Cohen & Mansour (arXiv 2602.13706) learn a contextual layered MDP through two offline oracles
(least squares for losses, log loss for dynamics) and, instead of planning on an optimistic model, run policy
mirror descent per context on optimistic losses: a counterfactual bonus, large where past policies rarely put
occupancy, keeps probability on under-explored actions.  The bandit case (OPO-CMAB, Levy & Mansour) is the
one-step special case and follows the public Vowpal Wabbit reduction; the MDP extension here is reconstructed.

=========================================  ==================================================================
paper                                      here
=========================================  ==================================================================
contexts ``c ~ D``, layers ``h < H``        :class:`ContextualLayeredMDP` (``contexts``, ``n_layers``)
``f* in F``, ``P* in P`` (realizable)       :class:`FiniteFunctionClass`, :class:`FiniteDynamicsClass`
LS / log-loss oracles                       :func:`least_squares_oracle`, :func:`log_loss_oracle`
``pi_t(a|c, s)``, ``q``, ``V``, ``Q``       :meth:`OPOCMDP.policy`, :func:`occupancy`, :func:`evaluate_policy`
regret ``sum_t V^{pi_t}(c_t) - V*(c_t)``    :func:`run` -> :class:`RegretLog` (exact, by DP)
=========================================  ==================================================================

Example::

    from icml26.opo_cmdp import ContextualLayeredMDP, OPOCMDP, make_classes, run
    env = ContextualLayeredMDP(n_layers=3, n_states=3, n_actions=3, context_pool=50, seed=0)
    F, P, _ = make_classes(env, n_decoys=15, seed=0)
    log = run(env, OPOCMDP(F, P, 3, 3, 3, T=1000), T=1000, seed=0)
    log.cum_regret[-1]
"""

from .baselines import (
    EpsilonGreedyPlugIn,
    ExploreFirstFloor,
    GreedyPlugIn,
    LinearFloor,
    OptimalPolicy,
    OptimisticGreedy,
    UniformPolicy,
)
from .classes import FiniteDynamicsClass, FiniteFunctionClass, least_squares_oracle, log_loss_oracle
from .env import ContextualLayeredMDP, make_classes
from .lock import ContextualCombinationLock, make_lock_classes
from .opo import OPOCMAB, OPOCMDP, OracleAgent, RegretLog, run
from .tabular import evaluate_policy, occupancy, optimal_policy

__all__ = [
    "ContextualLayeredMDP",
    "make_classes",
    "ContextualCombinationLock",
    "make_lock_classes",
    "FiniteFunctionClass",
    "FiniteDynamicsClass",
    "least_squares_oracle",
    "log_loss_oracle",
    "OPOCMDP",
    "OPOCMAB",
    "OracleAgent",
    "RegretLog",
    "run",
    "occupancy",
    "evaluate_policy",
    "optimal_policy",
    "GreedyPlugIn",
    "EpsilonGreedyPlugIn",
    "OptimisticGreedy",
    "LinearFloor",
    "ExploreFirstFloor",
    "UniformPolicy",
    "OptimalPolicy",
]
