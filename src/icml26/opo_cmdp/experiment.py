"""Reproduction, the measurement: OPO-CMDP on a contextual combination lock, a setting that needs optimism.

Per seed: one lock (context pool, context-dependent keys) and one pair of finite classes (decoys first, truth last;
every loss decoy says the prize at the end of the lock is not there, see
:func:`~icml26.opo_cmdp.lock.make_lock_classes`).  Every learner sees the same lock, classes, oracles and epoch
schedule; regret is exact (DP on the true model).  Arms:

* the method: OPO-CMDP, its ``(eta_scale, gamma)`` chosen per seed from ``opo_grid`` on a separate tuning stream
  (same lock, another trajectory seed, ``tune_T`` episodes);
* tuned baselines: epsilon-greedy plug-in (``eps_scales``) and optimistic greedy (OPO's bonus + a DP argmin,
  ``og_gammas``), each tuned the same way with a grid of the same size; greedy plug-in, uniform and optimal for scale;
* control arms (OPO's chosen step, the same everything else): no bonus (``gamma = 0``), the bonus's sign flipped
  (pessimism), and the linear floor (OPO's policy mixed with ``floor`` uniform play in every episode);
* the spec's ``|S||A|`` sweep: OPO-CMDP's regret at ``sweep_T`` on locks of sizes ``sweep_sizes`` (reported only).

The evidence (claims, controls, checks, tables, figures) is in :mod:`.claims`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.core import Experiment, register

from .baselines import (
    EpsilonGreedyPlugIn,
    ExploreFirstFloor,
    GreedyPlugIn,
    LinearFloor,
    OptimalPolicy,
    OptimisticGreedy,
    UniformPolicy,
)
from .claims import ARMS, judge
from .classes import least_squares_oracle, log_loss_oracle
from .env import ContextualLayeredMDP, make_classes
from .lock import ContextualCombinationLock, make_lock_classes
from .opo import OPOCMAB, OPOCMDP, run

__all__ = [
    "Config",
    "FULL",
    "QUICK",
    "ARMS",
    "measure",
    "slope",
    "window_ratio",
    "growth_exponent",
    "late_share",
    "rate_ratio",
    "TUNING",
    "EXPERIMENT",
]


@dataclass(frozen=True)
class Config:
    """Lock, classes, horizon, tuning grids and the claims' thresholds (fixed on the dev seeds: see ``TUNING``)."""

    n_layers: int = 6
    n_states: int = 3
    n_actions: int = 4
    context_dim: int = 4
    context_pool: int = 100
    n_decoys: int = 15
    T: int = 4000
    tune_T: int = 1000
    # OPO-CMDP's grid of (eta_scale, gamma) pairs: eta_scale in (100, 300, 1000, 3000) x gamma in (0.1, 0.3, 1),
    # plus (10000, 0.3) above the edge where picks sat (second referee, issue 52)
    opo_grid: tuple[tuple[float, float], ...] = tuple(
        (e, g) for e in (100.0, 300.0, 1000.0, 3000.0) for g in (0.1, 0.3, 1.0)
    ) + ((10000.0, 0.3),)
    # the tuned baselines get as many configurations (13 each): eps-greedy extended below its old floor 0.01 (its
    # pick in 5/5 reported seeds), optimistic greedy with one more point between its picks 0.3 / 0.5 and 1
    eps_scales: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)
    og_gammas: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0, 3.0, 5.0, 10.0)
    # opo_beats_baselines / opo_competitive read, per seed and arm, the MEDIAN exact R_T over this many independent
    # evaluation streams (the main one and seed + 200000, + 300000, ...; the chosen setting fixed): one stream's
    # R_T is a lottery (a run reaches the prize early or not), the median over 3 is less so
    eval_streams: int = 3
    floor: float = 0.05  # the linear-floor control's share of uniform play
    # the second control of opo_sublinear (v3e, the referee's learner, nothing tuned): uniform for the first window,
    # then the optimal policy mixed with this share of uniform play (late share floor_level / uniform's, 0.24 at 0.04)
    etc_floor: float = 0.04
    slope_from: float = 0.25  # slopes of log R_t vs log t are fitted on t in [slope_from * T, T]
    slope_threshold: float = 0.9  # precondition: the no-bonus arm's slope is >= this (linear regret)
    # the late share (v3d-v3e's sublinearity statistic, reported only since v3f) reads the first window
    # [0, first_frac * T); the explore-first control explores for that window
    first_frac: float = 0.125
    # sublinearity (v3f, set on dev seeds 0, 1, 200-204, 310-314): ONE run per seed of max(horizons) episodes (the
    # step set once for that run); its rate ratio (mean regret per episode on [T/2, T] over that on [T/4, T/2)) is
    # <= rate_threshold (0.71 for sqrt T, 1 for linear regret), and its late level (mean regret per episode on
    # [T/2, T]) is <= late_level (a separate claim: it excludes a linear floor of >= ~1.75% uniform play)
    rate_threshold: float = 0.8
    late_level: float = 0.05
    optimism_ratio: float = 0.5  # optimism pays: R_T(arm) / R_T(no bonus) is <= this
    competitive_ratio: float = 2.0  # competitive: R_T(arm) / R_T(tuned optimistic greedy) is <= this
    k_wins: int = 4
    # sublinearity: R_T at these horizons (a run per horizon, OPO's step set per T, eta ~ 1/sqrt(T)); must hold T
    horizons: tuple[int, ...] = (1000, 2000, 4000, 8000)
    sweep_sizes: tuple[tuple[int, int], ...] = ((2, 2), (3, 3), (4, 4))
    sweep_T: int = 1000
    cmab_rounds: int = 80
    n_checkpoints: int = 40

    def __post_init__(self) -> None:
        for name in ("n_layers", "n_states", "n_actions", "context_dim", "context_pool", "n_decoys", "T", "tune_T"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.T < 8:
            raise ValueError(f"T must be >= 8 (the doubling windows need T/4 >= 2), got {self.T}")
        for name in ("eps_scales", "og_gammas"):
            g = getattr(self, name)
            if not g or not all(isinstance(x, (int, float)) and x > 0 for x in g):
                raise ValueError(f"{name} must be a non-empty tuple of positive numbers, got {g!r}")
        if not self.opo_grid or not all(
            isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, (int, float)) and x > 0 for x in p)
            for p in self.opo_grid
        ):
            raise ValueError(
                f"opo_grid must be a non-empty tuple of (eta_scale, gamma) pairs > 0, got {self.opo_grid!r}"
            )
        h = self.horizons
        if (
            len(h) < 2
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 8 for x in h)
            or list(h) != sorted(set(h))
            or self.T not in h
        ):
            raise ValueError(f"horizons must be >= 2 increasing integers >= 8 that include T={self.T}, got {h!r}")
        if isinstance(self.eval_streams, bool) or not isinstance(self.eval_streams, int) or self.eval_streams < 1:
            raise ValueError(f"eval_streams must be a positive integer, got {self.eval_streams!r}")
        if not 0.0 < self.floor <= 1.0:
            raise ValueError(f"floor must lie in (0, 1], got {self.floor!r}")
        if not (isinstance(self.etc_floor, (int, float)) and 0.0 < self.etc_floor <= 1.0):
            raise ValueError(f"etc_floor must lie in (0, 1], got {self.etc_floor!r}")
        if not 0.0 < self.slope_from < 1.0:
            raise ValueError(f"slope_from must lie in (0, 1), got {self.slope_from!r}")
        if not (isinstance(self.first_frac, (int, float)) and 0.0 < self.first_frac <= 0.5):
            raise ValueError(f"first_frac must lie in (0, 0.5] (the first window ends by T/2), got {self.first_frac!r}")
        if not (isinstance(self.rate_threshold, (int, float)) and 0.0 < self.rate_threshold < 1.0):
            raise ValueError(f"rate_threshold must lie in (0, 1) (1 is linear regret), got {self.rate_threshold!r}")
        if not (isinstance(self.late_level, (int, float)) and 0.0 < self.late_level < 1.0):
            raise ValueError(f"late_level must lie in (0, 1), got {self.late_level!r}")


FULL = Config()
QUICK = Config(
    n_layers=4,
    n_actions=3,
    context_pool=30,
    n_decoys=7,
    T=600,
    tune_T=200,
    horizons=(150, 300, 600, 1200),
    opo_grid=((300.0, 0.3), (1000.0, 0.3)),
    eps_scales=(0.3, 1.0),
    og_gammas=(0.3, 1.0),
    sweep_sizes=((2, 2), (3, 3)),
    sweep_T=200,
    cmab_rounds=30,
    n_checkpoints=20,
)


def _checkpoints(T: int, n: int) -> np.ndarray:
    return np.unique(np.geomspace(1, T, n).astype(int))


def slope(cum: np.ndarray, start: float) -> float:
    """Least-squares slope of ``log R_t`` on ``log t`` over ``t`` in ``[start * T, T]`` (20 log-spaced points)."""
    T = len(cum)
    ts = np.unique(np.geomspace(max(1, int(start * T)), T, 20).astype(int))
    y = np.log(np.maximum(cum[ts - 1], 1e-12))
    return float(np.polyfit(np.log(ts), y, 1)[0])


MIN_WINDOW_REGRET = 1e-3  # the window ratio is undefined (nan) when the earlier window's mean is below this


def window_ratio(gaps: np.ndarray) -> float:
    """Mean regret per episode over the last doubling window ``[T/2, T]`` divided by that over ``[T/4, T/2)``:
    about ``2^(p-1)`` for regret growing like ``T^p`` (0.71 for ``sqrt T``), 1 for linear regret.  ``nan`` when the
    earlier window's mean is below ``MIN_WINDOW_REGRET`` (a ratio of near-zero numbers says nothing).  Reported in a
    table only (the evaluation run at ``T``); the sublinearity claim reads :func:`rate_ratio` of the ``max(horizons)``
    run."""
    T = len(gaps)
    late, early = float(np.mean(gaps[T // 2 :])), float(np.mean(gaps[T // 4 : T // 2]))
    return late / early if early >= MIN_WINDOW_REGRET else float("nan")


def late_share(gaps: np.ndarray, first_frac: float = 0.125) -> float:
    """How much of its early per-episode regret a learner still pays late: the mean exact regret per episode over
    the last doubling window ``[T/2, T]`` divided by that over the first window ``[0, first_frac * T)``.  v3d-v3e's
    sublinearity statistic, reported only since v3f (an explore-first linear learner passes it; see below).

    For regret growing like ``T^p`` it is ``2 (1 - 2^-p) (1/first_frac)^(1-p)`` with the default 1/8: 1 for linear
    regret, 0.21 for ``sqrt T``, 0.05 for ``T^0.2``, 0 for regret that stops growing.  A linear-floor learner (a share
    ``phi`` of uniform play in every episode) pays at least the floor's own per-episode regret ``c_phi`` late (on
    the lock, ``c_phi`` = the optimal policy mixed with ``phi`` uniform play; 0.143 at ``phi = 0.05``) and at most
    about uniform play's per-episode regret early (0.48 on the lock), so its late share stays above ``c_phi / u``
    (0.30) however well it learns, when its first window is near uniform play's: it then fails a bar below that.  A
    linear learner whose floor costs under the bar times its first window's per-episode regret passes (an
    explore-first learner with a 4% floor: 0.24 < 0.25): the statistic is scale-free and tests that per-episode
    regret falls, not that it goes to 0.

    Why the FIRST window as the denominator (not a later doubling window such as ``[T/8, T/4)``): a learner that
    has converged pays exactly 0 regret for long stretches (22 of OPO-CMDP's 84 doubling windows after ``T/8`` in
    the v3d dev probe are exactly 0), so a ratio of two late windows is 0/0 or a ratio of tiny numbers; every
    learner here starts from uniform play, so its first window's mean is far from 0 (>= 0.06 per episode in every
    dev run) and the ratio is well defined without a floor.  ``nan`` when the first window's mean is 0 (a learner
    optimal from the start; the judge counts nan as not sublinear)."""
    g = np.asarray(gaps, dtype=float)
    if g.ndim != 1:
        raise ValueError(f"gaps must be a 1-d array of per-episode regrets, got shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError("gaps must be finite (no NaN or inf per-episode regret)")
    if np.any(g < -1e-9):  # exact DP regret is >= 0 up to rounding
        raise ValueError(f"gaps must be >= 0 (regret against the optimal policy), got min {g.min():.3g}")
    T = len(g)
    k = int(first_frac * T)
    if not 1 <= k <= T // 2:
        raise ValueError(f"late_share needs 1 <= first_frac * T <= T/2, got first_frac={first_frac!r}, T={T}")
    first, late = float(np.mean(g[:k])), float(np.mean(g[T // 2 :]))
    return late / first if first > 0 else float("nan")


def rate_ratio(gaps: np.ndarray, min_regret: float = MIN_WINDOW_REGRET) -> float:
    """Whether per-episode regret falls within ONE run (one learner, one step): the mean exact regret per episode over
    the last doubling window ``[T/2, T]`` divided by that over the one before, ``[T/4, T/2)``.

    About ``2^(p-1)`` for regret growing like ``T^p`` (0.71 for ``sqrt T``, 0.87 for ``T^0.8``), exactly 1 for a learner
    whose per-episode regret has reached a constant floor (linear regret).  The earlier window's mean is read as at
    least ``min_regret`` (1e-3 per episode): a learner that pays nothing from ``T/4`` on gets 0 (its regret stopped
    growing), one that pays nothing on ``[T/4, T/2)`` and 0.01 per episode later gets 10 (its regret grows again),
    never 0/0.  Unlike :func:`late_share` it does not compare with the first window's exploration, so a linear learner
    cannot pass it by exploring hard early."""
    g = np.asarray(gaps, dtype=float)
    if g.ndim != 1:
        raise ValueError(f"gaps must be a 1-d array of per-episode regrets, got shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError("gaps must be finite (no NaN or inf per-episode regret)")
    if np.any(g < -1e-9):
        raise ValueError(f"gaps must be >= 0 (regret against the optimal policy), got min {g.min():.3g}")
    if len(g) < 4:
        raise ValueError(f"rate_ratio needs T >= 4 episodes (two doubling windows), got {len(g)}")
    if isinstance(min_regret, (bool, np.bool_)) or not (
        isinstance(min_regret, (int, float, np.integer, np.floating)) and min_regret > 0
    ):
        raise ValueError(f"min_regret must be > 0, got {min_regret!r}")
    T = len(g)
    late, early = float(np.mean(g[T // 2 :])), float(np.mean(g[T // 4 : T // 2]))
    return late / max(early, min_regret)


def floor_level(env, floor: float) -> float:
    """Exact mean (over the env's contexts) per-episode regret of the optimal policy mixed with ``floor`` uniform
    play at every step: the per-episode regret a linear-floor learner pays however well its own policy learns."""
    from .tabular import evaluate_policy, optimal_policy

    if isinstance(floor, (bool, np.bool_)) or not isinstance(floor, (int, float, np.integer, np.floating)):
        raise ValueError(f"floor must be a number in [0, 1], got {floor!r}")
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"floor must lie in [0, 1] (the uniform-play share), got {floor!r}")
    f, P = env.true_model(env.contexts)
    pi, V, _ = optimal_policy(f, P)
    mix = (1.0 - floor) * pi + floor / pi.shape[-1]
    Vm, _ = evaluate_policy(mix, f, P)
    return float(np.mean(Vm[:, 0, 0] - V[:, 0, 0]))


def growth_exponent(horizons, regrets) -> float:
    """Least-squares slope of ``log R_T`` on ``log T`` over the horizons (a separate run per ``T``): about ``p`` for
    regret growing like ``T^p`` (0.5 for ``sqrt T``, 1 for linear).  Reported only since v3d (the linear floor's
    exponent over 1k-8k is 0.84: it cannot separate).  ``nan`` (undefined, no floor) unless every
    ``R_T`` is positive (exact regret is >= 0; the lock's learners all start with positive regret)."""
    r = np.asarray(regrets, dtype=float)
    if len(r) != len(horizons) or len(r) < 2:
        raise ValueError(f"growth_exponent needs one R_T per horizon (>= 2), got {list(r)} for {list(horizons)}")
    if not np.all(r > 0):
        return float("nan")
    return float(np.polyfit(np.log(np.asarray(horizons, dtype=float)), np.log(r), 1)[0])


def _make(cfg: Config, seed: int, S: int | None = None, A: int | None = None):
    env = ContextualCombinationLock(
        cfg.n_layers, S or cfg.n_states, A or cfg.n_actions, cfg.context_dim, cfg.context_pool, seed=seed
    )
    F, P, info = make_lock_classes(env, n_decoys=cfg.n_decoys, seed=seed)
    return env, F, P, info


def _agent(cfg: Config, name: str, F, P, env, T: int, scale=None, opo: tuple[float, float] | None = None):
    """Arm ``name``; ``scale``: the tuned arm's hyperparameter (OPO: ``(eta_scale, gamma)``); ``opo``: OPO-CMDP's
    chosen ``(eta_scale, gamma)``, which the control arms reuse."""
    dims = (env.n_layers, env.n_states, env.n_actions)
    if name == "opo":
        return OPOCMDP(F, P, *dims, T=T, eta_scale=scale[0], gamma=scale[1])
    if name in ("opo_nobonus", "opo_flipped", "opo_floor") and opo is None:
        raise ValueError(f"the control arm {name!r} needs opo=(eta_scale, gamma), OPO-CMDP's chosen setting")
    if name == "opo_nobonus":
        return OPOCMDP(F, P, *dims, T=T, eta_scale=opo[0], gamma=0.0)
    if name == "opo_flipped":
        return OPOCMDP(F, P, *dims, T=T, eta_scale=opo[0], gamma=opo[1], bonus_sign=-1.0)
    if name == "opo_floor":
        return LinearFloor(OPOCMDP(F, P, *dims, T=T, eta_scale=opo[0], gamma=opo[1]), floor=cfg.floor)
    if name == "etc_floor":
        return ExploreFirstFloor(env, n_explore=int(cfg.first_frac * T), floor=cfg.etc_floor)
    if name == "opt_greedy":
        return OptimisticGreedy(F, P, *dims, gamma=scale)
    if name == "eps":
        return EpsilonGreedyPlugIn(F, P, *dims, eps_scale=scale)
    if name == "greedy":
        return GreedyPlugIn(F, P, *dims)
    if name == "uniform":
        return UniformPolicy(*dims)
    if name == "optimal":
        return OptimalPolicy(env)
    raise ValueError(f"unknown arm {name!r}; expected one of {list(ARMS)}")


def _cmab_reference(F, contexts, actions, losses, eta: float, gamma: float, A: int, c: np.ndarray) -> np.ndarray:
    """OPO-CMAB's rule written out directly (no shared code with :class:`OPOCMDP`): probabilities at round
    ``t = len(actions) + 1`` for context ``c``."""
    pred_all = F.predict(np.vstack([contexts, c[None]]) if len(contexts) else c[None])[:, :, 0, 0, :]  # [K, n+1, A]
    pi = np.full(A, 1.0 / A)
    visits = np.zeros(A)
    for k in range(1, len(actions) + 1):
        rows = np.arange(k - 1)
        sse = np.array([np.sum((pred_all[m, rows, actions[: k - 1]] - losses[: k - 1]) ** 2) for m in range(len(F))])
        f_hat = pred_all[int(np.argmin(sse)), -1]
        beta = gamma * np.sqrt(k / A)
        b = np.minimum(1.0, (beta / 2.0) / (1.0 + visits))
        lt = np.maximum(0.0, f_hat - b)
        visits = visits + pi
        w = pi * np.exp(-eta * lt)
        pi = w / w.sum()
    return pi


def _cmab_check(cfg: Config, seed: int) -> float:
    """Largest difference between OPO-CMAB (the ``H = |S| = 1`` case of the OPO-CMDP code) and the bandit rule
    written out directly, plus 1 if the last oracle pick differs from :func:`least_squares_oracle` on the same data."""
    env = ContextualLayeredMDP(1, 1, cfg.n_actions, cfg.context_dim, 10, loss_offset=-2.0, seed=seed)
    F, _, _ = make_classes(env, n_decoys=7, seed=seed, mislead="first")
    agent = OPOCMAB(F, cfg.n_actions, eta=0.1, gamma=1.0)
    rng = np.random.default_rng([seed, 5])
    fstar = env.true_model(env.contexts)[0][:, 0, 0]
    ctx, acts, losses, worst = [], [], [], 0.0
    for _ in range(cfg.cmab_rounds):
        i = int(rng.integers(len(env.contexts)))
        c = env.contexts[i]
        p = agent.policy(c)
        ref = _cmab_reference(
            F,
            np.array(ctx).reshape(-1, cfg.context_dim),
            np.array(acts, dtype=int),
            np.array(losses),
            0.1,
            1.0,
            cfg.n_actions,
            c,
        )
        worst = max(worst, float(np.max(np.abs(p - ref))))
        a = int(rng.choice(cfg.n_actions, p=p))
        loss = float(rng.random() < fstar[i, a])
        agent.observe(c, a, loss)
        ctx.append(c)
        acts.append(a)
        losses.append(loss)
    data = {
        "context": np.array(ctx[:-1]),
        "h": np.zeros(len(acts) - 1, int),
        "s": np.zeros(len(acts) - 1, int),
        "a": np.array(acts[:-1]),
        "loss": np.array(losses[:-1]),
    }
    worst += float(agent.kf != least_squares_oracle(F, data))
    return worst


def _mdp_reference(F, P, episodes, picks, c, H: int, S: int, A: int, eta: float, gamma: float) -> np.ndarray:
    """OPO-CMDP's MDP rule written out directly with scalar loops (no shared code with :class:`OPOCMDP` or
    :mod:`.tabular`): the policy ``[H, S, A]`` for context ``c`` after the updates of ``episodes`` (``picks[j - 1]``:
    the oracle picks ``(kf, kp)`` used for episode ``j``), from ``s_0 = 0``, counts ``n += occupancy``."""
    fs, ps = F.predict(c[None])[:, 0], P.predict(c[None])[:, 0]  # [K, H, S, A], [K, H, S, A, S]
    pi = [[[1.0 / A] * A for _ in range(S)] for _ in range(H)]
    n = [[[0.0] * A for _ in range(S)] for _ in range(H)]
    for j in range(1, episodes + 1):
        f, p = fs[picks[j - 1][0]], ps[picks[j - 1][1]]
        d = [1.0 if s == 0 else 0.0 for s in range(S)]
        q = [[[0.0] * A for _ in range(S)] for _ in range(H)]
        for h in range(H):  # occupancy, forward
            nd = [0.0] * S
            for s in range(S):
                for a in range(A):
                    q[h][s][a] = d[s] * pi[h][s][a]
                    for s2 in range(S):
                        nd[s2] += q[h][s][a] * p[h, s, a, s2]
            d = nd
        beta = gamma * (j / (S * A)) ** 0.5
        V = [0.0] * S
        Q = [[[0.0] * A for _ in range(S)] for _ in range(H)]
        for h in reversed(range(H)):  # policy evaluation of pi_j on the optimistic loss, backward
            nV = [0.0] * S
            for s in range(S):
                for a in range(A):
                    b = min(1.0, (beta / 2.0) / (1.0 + n[h][s][a]))
                    Q[h][s][a] = max(0.0, f[h, s, a] - b) + (
                        sum(p[h, s, a, s2] * V[s2] for s2 in range(S)) if h + 1 < H else 0.0
                    )
                    nV[s] += pi[h][s][a] * Q[h][s][a]
            V = nV
        for h in range(H):
            for s in range(S):
                w = [pi[h][s][a] * float(np.exp(-eta * Q[h][s][a])) for a in range(A)]
                z = sum(w)
                for a in range(A):
                    pi[h][s][a] = w[a] / z
                    n[h][s][a] += q[h][s][a]
    return np.array(pi)


def _mdp_check(cfg: Config, seed: int) -> float:
    """Largest difference between OPO-CMDP's policies (gamma > 0, the bonus and counts active) and
    :func:`_mdp_reference` over ``cmab_rounds`` episodes on a small lock (H=3, S=2, A=3), plus 1 for every epoch
    whose oracle picks differ from :func:`least_squares_oracle` / :func:`log_loss_oracle` on the episodes before it."""

    H, S, A = 3, 2, 3
    env = ContextualCombinationLock(H, S, A, cfg.context_dim, 5, seed=seed)
    F, P, _ = make_lock_classes(env, n_decoys=3, seed=seed)
    eta, gamma = 0.5, 1.0
    agent = OPOCMDP(F, P, H, S, A, eta=eta, gamma=gamma)
    rng = np.random.default_rng([seed, 7])
    data: dict[str, list] = {k: [] for k in ("context", "h", "s", "a", "loss", "next_state")}
    picks: list[tuple[int, int]] = []
    worst = 0.0
    for t in range(1, cfg.cmab_rounds + 1):
        if (t & (t - 1)) == 0:  # an epoch starts: the oracles on the episodes before t
            arr = {k: np.asarray(v) for k, v in data.items()}
            if not data["h"]:
                arr["context"] = np.zeros((0, cfg.context_dim))
            pick = (least_squares_oracle(F, arr), log_loss_oracle(P, arr))
        obs, _ = env.reset(seed=seed if t == 1 else None)
        c = np.asarray(obs["context"], dtype=float)
        pol = agent.policy(c)
        worst = max(worst, float(np.max(np.abs(pol - _mdp_reference(F, P, t - 1, picks, c, H, S, A, eta, gamma)))))
        traj, done, s, h = [], False, int(obs["state"]), 0
        while not done:
            a = int(rng.choice(A, p=pol[h, s] / pol[h, s].sum()))
            obs, _, done, _, info = env.step(a)
            s2 = -1 if done else int(obs["state"])
            traj.append((h, s, a, float(info["loss"]), s2))
            for k, v in zip(data, (c, h, s, a, float(info["loss"]), s2)):
                data[k].append(v)
            s, h = s2, h + 1
        agent.observe(c, traj)
        picks.append(pick)
        worst += float(agent.history[-1] != pick)
    return worst


TUNED = {"opo": "opo_grid", "eps": "eps_scales", "opt_greedy": "og_gammas"}
LONG_ARMS = ("opo", "opo_floor", "etc_floor")  # the arms the sublinearity claim and its control read (R_T per horizon)
STREAM_ARMS = ("opo", "eps", "opt_greedy")  # the arms the median over evaluation streams is measured for


def measure(cfg: Config, seed: int, progress=None) -> dict:
    """One seed: tune OPO-CMDP, epsilon-greedy and optimistic greedy on a tuning stream, then run every arm on the
    evaluation stream (exact regret curves, slopes, window ratios, diagnostics), the |S||A| sweep and the checks."""
    env, F, P, info = _make(cfg, seed)
    cps = _checkpoints(cfg.T, cfg.n_checkpoints)
    out: dict = {"seed": seed, "checkpoints": cps.tolist(), "arms": {}, "tuning": {}}
    tune_seed = seed + 100_000
    for name, field in TUNED.items():
        grid = getattr(cfg, field)
        # the tuned agent is built for the evaluation horizon (OPO's eta ~ 1/sqrt(T): the step tuned is the step
        # evaluated) and played for tune_T episodes on the tuning stream
        scores = [
            float(run(env, _agent(cfg, name, F, P, env, cfg.T, s), cfg.tune_T, tune_seed).cum_regret[-1]) for s in grid
        ]
        out["tuning"][name] = {"grid": list(grid), "tune_regret": scores, "chosen": grid[int(np.argmin(scores))]}
    chosen = tuple(out["tuning"]["opo"]["chosen"])
    for name in ARMS:
        scale = out["tuning"][name]["chosen"] if name in TUNED else None
        agent = _agent(cfg, name, F, P, env, cfg.T, scale, opo=chosen)
        log = run(env, agent, cfg.T, seed)
        cum, gaps = log.cum_regret, log.per_episode_gap
        rec = {
            "final": float(cum[-1]),
            "curve": cum[cps - 1].tolist(),
            "oracle_calls": log.oracle_calls,
            "slope": slope(cum, cfg.slope_from) if cum[-1] > 0 else 0.0,
            "window_ratio": window_ratio(gaps),  # reported only (table); nan when undefined
            "windows": [float(np.mean(gaps[lo:hi])) for lo, hi in _windows(cfg.T)],
            "max_abs_gap": float(np.max(np.abs(gaps))),
        }
        inner = agent.agent if isinstance(agent, LinearFloor) else agent
        if isinstance(inner, OPOCMDP):
            rec["bonus"] = [inner.bonus_trace[t - 1] for t in cps]
            rec["entropy"] = [inner.entropy_trace[t - 1] for t in cps]
        if hasattr(inner, "history"):
            picks = np.array([k for k, _ in inner.history])
            rec["f_is_truth"] = [float(picks[t - 1] == info["truth_index"]) for t in cps]
        if name in STREAM_ARMS:  # the same chosen setting on independent evaluation streams
            rec["final_streams"] = [rec["final"]] + [
                float(
                    run(
                        env, _agent(cfg, name, F, P, env, cfg.T, scale, opo=chosen), cfg.T, seed + 100_000 * (k + 1)
                    ).cum_regret[-1]
                )
                for k in range(1, cfg.eval_streams)
            ]
            rec["final_median"] = float(np.median(rec["final_streams"]))
        if name in LONG_ARMS:
            rec["final_at"], rec["late_share_at"] = {}, {}
            for T2 in cfg.horizons:
                g2 = (
                    gaps
                    if T2 == cfg.T
                    else run(env, _agent(cfg, name, F, P, env, T2, scale, opo=chosen), T2, seed).per_episode_gap
                )
                rec["final_at"][str(T2)] = float(np.sum(g2))
                # negative regret is a bug of the regret computation that optimal_regret_zero reports: nan here
                # (not sublinear) so that the run finishes and the check can fail, where late_share would raise
                ok = bool(np.all(g2 >= -1e-9))
                rec["late_share_at"][str(T2)] = late_share(g2, cfg.first_frac) if ok else float("nan")
                if T2 == max(cfg.horizons):  # the sublinearity claims read ONE run, the longest (step set once)
                    rec["rate_windows"] = [float(np.mean(g2[lo:hi])) for lo, hi in _windows(T2)]
                    rec["rate_ratio"] = rate_ratio(g2) if ok else float("nan")
                    rec["late_level"] = float(np.mean(g2[T2 // 2 :]))
            rec["growth_exponent"] = growth_exponent(cfg.horizons, list(rec["final_at"].values()))
            # the claim reads the largest late share over the horizons (nan, undefined, propagates: not sublinear)
            rec["late_share"] = float(np.max(list(rec["late_share_at"].values())))
        out["arms"][name] = rec
    out["floor_level"] = floor_level(env, cfg.floor)
    out["etc_floor_level"] = floor_level(env, cfg.etc_floor)
    out["uniform_level"] = float(out["arms"]["uniform"]["final"]) / cfg.T
    out["sweep"] = {}
    for S, A in cfg.sweep_sizes:
        e, f, p, _ = _make(cfg, seed, S, A)
        out["sweep"][f"{S}x{A}"] = float(
            run(e, _agent(cfg, "opo", f, p, e, cfg.sweep_T, chosen), cfg.sweep_T, seed).cum_regret[-1]
        )
    out["cmab_max_diff"] = _cmab_check(cfg, seed)
    out["mdp_max_diff"] = _mdp_check(cfg, seed)
    return out


def _windows(T: int) -> list[tuple[int, int]]:
    """Doubling windows ``[T/2^(k+1), T/2^k)`` ending at ``T`` (from ``T/16``), earliest first."""
    edges = [T // 16, T // 8, T // 4, T // 2, T]
    return [(lo, hi) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo]


_OLD = [0, 1, 2, 3, 4]  # the seeds every run before evidence v3 reported (dev seeds since v3)
_V3 = [100, 101, 102, 103, 104]  # v3/v3b's reported seeds, looked at by two referees' design probes: dev since v3c
_V3D = [310, 311, 312, 313, 314]  # v3d/v3e's reported seeds, probed by referee passes 3 and 4: dev since v3f
_V3C = [200, 201, 202, 203, 204]  # v3c's reported seeds, used to design v3d's sublinearity test: dev since v3d
TUNING = (
    dict(
        variant="v1 (07197c3..98860b3): the spec's sigmoid/softmax contextual MDP with 31 decoys, loss_offset 0 and "
        "one misleading decoy",
        seeds=_OLD,
        outcome="greedy plug-in escaped (regret ~3 at T=1000); the precondition greedy_misled failed",
    ),
    dict(
        variant="v1: loss_offset -2 and every decoy overstating the optimal first action (mislead='all')",
        seeds=_OLD,
        outcome="greedy_misled held only after its slope window moved from [T/8, T] to [T/4, T] (0.91 on [T/8, T])",
    ),
    dict(
        variant="v1 full preset: eta_scale grid (1, 3, 10) then (1, 3, 10, 30); eps grid (0.03, 0.1, 0.3, 1)",
        seeds=_OLD,
        outcome="OPO's step at the top of its grid in 5/5 seeds; opo_sublinear held (slope 0.51), opo_beats_plugin "
        "did not (tuned eps-greedy 40 vs OPO 115); the gamma=0 ablation reached 25 (the setting did not need "
        "optimism; referee, issue 52)",
    ),
    dict(
        variant="v2 (issue 52) pilot: contextual combination lock H=6, S=3, A=4, 100 contexts, 15 decoys, "
        "key/leave/off losses 0.25/0.1/0.15, T=2000; OPO eta_scale 10 and 30, no bonus, flipped bonus, optimistic "
        "greedy gamma 1, linear floor 0.05, eps-greedy scale 1, greedy",
        seeds=[0, 1],
        outcome="no bonus, flipped, eps-greedy and greedy linear (slopes 0.99-1.00, window ratios 1.00); OPO 266-278, "
        "optimistic greedy 275-281; window ratio OPO 0.45-0.93, linear floor 0.91 (its log-log slope 0.53: the "
        "slope test would pass it)",
    ),
    dict(
        variant="v2 first dev run (full preset, --dev): grids of 3, OPO eta_scale in (3, 10, 30) at gamma=1, "
        "eps-greedy "
        "(0.3, 1, 3), optimistic greedy gamma (0.3, 1, 3); claims opo_beats_baselines, optimism_pays (ratio <= 0.5), "
        "opo_sublinear (window ratio <= 0.8, set from the pilot)",
        seeds=_OLD,
        outcome="OPO 402-465 vs optimistic greedy 127-401 (it chose gamma 0.3 in 3 seeds); OPO's window ratio 4.4 and "
        "4.6 in the two seeds that chose eta 10 (its gamma=1 bonus, growing like sqrt(j), re-explores late); a pilot "
        "of OPO at gamma 0.1/0.3 on seeds 0, 1 gave 160-370 and converged. So OPO's grid became (eta_scale, gamma) "
        "pairs and every tuned arm got 4 configurations; claim opo_competitive added with ratio threshold 2 (the "
        "per-seed OPO/optimistic-greedy ratios were 1.0-3.7)",
    ),
    dict(
        variant="v2 second dev run (the shipped configuration): OPO grid (10, 0.3), (30, 0.3), (10, 1), (30, 1); "
        "eps-greedy (0.1, 0.3, 1, 3); optimistic greedy gamma (0.1, 0.3, 1, 3); tune_T 1000, T 4000; thresholds "
        "no-bonus slope >= 0.9 on [T/4, T], optimism ratio <= 0.5, competitive ratio <= 2, window ratio <= 0.8, 4 of 5 "
        "wins; linear floor 0.05",
        seeds=_OLD,
        outcome="nobonus_linear holds (slope 0.996); opo_beats_baselines does not hold (beats eps-greedy 5/5, "
        "optimistic greedy 2/5); optimism_pays holds (0.14, interval to 0.22); opo_competitive inconclusive (1.60, "
        "interval [0.01, 3.20]); opo_sublinear holds (0.17, interval to 0.63); every control rejects (linear floor "
        "0.99, no bonus 1.00). Nothing changed after this run; reported seeds 100-104 unseen until the reference run",
    ),
    dict(
        variant="lapse: two quick-preset smoke runs (pipeline checks, after each code change of the first dev run) on "
        "the quick preset's reported seeds",
        seeds=[100, 101, 102],
        outcome="quick verdicts seen (opo_beats_baselines does not hold, opo_sublinear inconclusive at T=600); nothing "
        "was tuned on them, the full preset's seeds 103-104 and its T=4000 numbers were not seen before the reference "
        "run",
    ),
    dict(
        variant="referee (issue 52 review of d0a7cba) probes on the REPORTED seeds: OPO grid plus (100, 0.3), "
        "(30, 0.1), (100, 0.1) with the experiment's tuning stream; the shipped (30, 0.3) at T = 8000 and 16000 "
        "(step per T); "
        "count-free, no-bonus and floor-0.01 mutants",
        seeds=[100, 101, 102, 103, 104],
        outcome="(100, 0.3) won tuning in 5/5 and flipped opo_beats_baselines (to holds), opo_competitive (to holds) "
        "and opo_sublinear (to does not hold); at T = 8000/16000 the window ratio reached 1e6-1e7 (sqrt(j) "
        "re-exploration bursts). These seeds' numbers were seen before the v3b design: the v3b grid, horizons and "
        "tuning rule below were set on the dev seeds' tuning streams only, but they are no longer unseen",
    ),
    dict(
        variant="v3b pilot (tuning streams only, exactly measure's tuning: tune_T 1000, seed + 100000): OPO built for "
        "the evaluation horizon T = 4000 (so the tuned step is the evaluated step), eta_scale in (10, 30, 100, 300, "
        "1000) x gamma in (0.03, 0.1, 0.3, 1), then (3000) x (0.1, 0.3, 1) and (10000, 0.3)",
        seeds=_OLD,
        outcome="best per seed: (1000, 0.3) in seeds 0-3 (tuning regret 68.5, 61.7, 59.0, 60.3), (300, 0.3) in seed 4 "
        "(73.8); eta_scale 3000 worse than 1000 in 5/5 (120-258); gamma 0.03 never finds the prize (450-459); (10000, "
        "0.3) beat (1000, 0.3) in seed 0 only (61.7 vs 68.5; 123-269 elsewhere, a noisy landscape: a run either "
        "reaches the prize early or not). Shipped grid: eta_scale (100, 300, 1000, 3000) x gamma (0.1, 0.3, 1), "
        "every pick inside it on the dev seeds",
    ),
    dict(
        variant="v3b (the shipped configuration): OPO grid 4 x 3 = 12 pairs; eps-greedy scales and optimistic-greedy "
        "gammas 12 each (0.01-10, log-spaced); tuned agents built for T (eta per evaluation horizon), played for "
        "tune_T = 1000; opo_sublinear judged at T = 4000 and 8000 (a run per horizon, step per T, per-seed maximum "
        "of the window ratios; control arms the same); every other threshold unchanged from v2",
        seeds=_OLD,
        outcome="set from the pilot above before any v3b run on reported seeds; the full-preset dev run (--dev) ran "
        "only after the reference run (a first one beside it was stopped, the machine overloaded): OPO picks "
        "(1000, 0.3) x4, (300, 0.3) x1 (inside the grid); claims 1/4 hold: opo_beats_baselines does not hold (OPO "
        "beats optimistic greedy in 2/5), opo_competitive inconclusive, optimism_pays holds, opo_sublinear does not "
        "hold; controls 7/7; nothing was changed after either run",
    ),
    dict(
        variant="second referee (issue 52 review of 16f4632) probes on the then-reported seeds: OPO grid plus "
        "(10000, 0.3); the gamma = 0.3 picks (300, 1000, 3000, 10000) evaluated at T = 4000 and 8000; tuning at the "
        "full horizon; the sublinearity claim re-judged with log2(R_8000 / R_4000) instead of the window ratio",
        seeds=[100, 101, 102, 103, 104],
        outcome="(10000, 0.3) won seed 100's tuning by 0.03 and turned opo_beats_baselines to does not hold; OPO's "
        "R_4000 over the picks is bimodal (112-138 or 258-491: a run reaches the prize early or not); the growth "
        "exponent gave OPO 0.58 (upper end 0.958) vs linear floor 1.12. These seeds have now been looked at for "
        "design choices, so v3c moves them into dev_seeds and reports on fresh seeds 200-204 (quick 200-202)",
    ),
    dict(
        variant="v3c design (set from the two referee reports, before any v3c run): OPO grid + (10000, 0.3) (13 "
        "pairs), eps-greedy + 0.005 and optimistic greedy + 0.7 (13 each); opo_beats_baselines and opo_competitive "
        "read the per-seed median R_T over 3 evaluation streams (the chosen setting fixed) instead of one stream; "
        "opo_sublinear judged by the growth exponent of R_T over T in (1000, 2000, 4000, 8000) (a run and a step "
        "per T; upper interval end < 1), linear floor as its control; the window ratio only reported (nan below "
        "1e-3 per episode, no 1e-9 floor); no-bonus arm dropped from the long horizons (cost); every other "
        "threshold unchanged",
        seeds=_OLD + _V3,
        outcome="fixed before any v3c run; a quick-preset pipeline check on dev seeds 0-2 (the code ran; quick "
        "verdicts not used for any choice)",
    ),
    dict(
        variant="v3c --dev full run (seeds 0-4 and 100-104), stopped after 2 of 10 seeds for time (ETA 49 min on the "
        "shared cores); code before the logsumexp speedup (numerics only) and the mdp_reference check",
        seeds=[0, 1],
        outcome="OPO picks (10000, 0.3) and (1000, 0.3) (seed 0 again at the top of the grid); median R_4000 over 3 "
        "streams OPO 142.1 / 140.7 vs optimistic greedy 128.9 / 215.5 (1 win of 2; OPO's single streams 123-261), "
        "eps-greedy 1800 at its new grid floor 0.005 (linear); growth exponent OPO 0.09 / 0.48, linear floor 0.83 / "
        "0.82 (below 1: over 1k-8k the floor's R_T still carries OPO's early exploration, so the exponent test may "
        "not separate it; the control then leaves opo_sublinear inconclusive). Nothing was changed after seeing "
        "them; the reference run on seeds 200-204 followed",
    ),
    dict(
        variant="v3c --dev full run on seeds 2, 3, 4 (the shipped v3c code), AFTER the reference run on 200-204",
        seeds=[2, 3, 4],
        outcome="OPO picks (1000, 0.3) x2, (300, 0.3); median R_4000 OPO 249.6 / 116.9 / 124.6 vs optimistic greedy "
        "116.7 / 118.3 / 206.0 (2 wins of 3, one by 1.4); opo_beats_baselines does not hold (needs 3 of 3), "
        "optimism_pays holds, opo_competitive inconclusive (ratios 2.14, 0.99, 0.61), opo_sublinear inconclusive "
        "(OPO's exponents 0.42, 0.29, 0.16; the linear floor's 0.94, 0.90, 0.89 also below 1); controls 5/6, checks "
        "3/3. With seeds 0, 1: OPO beats optimistic greedy in 3 of 5 dev seeds. Nothing was changed after it",
    ),
    dict(
        variant="v3c reference run (the v3c code) on its reported seeds, read for the v3d design: the stored "
        "records (windows of the T=4000 run, R_T per horizon, each seed's chosen step)",
        seeds=_V3C,
        outcome="the linear floor's doubling windows stay at 0.143-0.162 per episode from T/8 on (0.46 in seed 202 "
        "until T/2); OPO's windows [T/4, T/2) and [T/2, T] are exactly 0 in 5 of 10. These seeds become dev seeds "
        "(the reported seeds of v3d are fresh: 310-314)",
    ),
    dict(
        variant="v3d design probe: OPO-CMDP at each seed's chosen step (v3c's tuning picks; seed 0 (10000, 0.3), "
        "seed 1 (1000, 0.3)) and its linear floor (0.05) at T = 1000, 2000, 4000, 8000 (a run per T, step per T); "
        "per-episode exact regret stored; candidate sublinearity statistics computed offline: (a) the brief's "
        "ratio of mean per-episode regret on [T/2, T] to [T/8, T/4); (b) the late share (on [T/2, T] over the "
        "first window [0, T/8)) at T = 4000 only; (c) the late share, per seed its largest over the 4 horizons; (d) "
        "the late per-episode regret over uniform play's (a level, not a fall)",
        seeds=[0, 1] + _V3C,
        outcome="(a) OPO's [T/8, T/4) mean is exactly 0 in 4 of 28 runs (0/0) and its late window exceeds it in 10 (a "
        "converged learner's re-exploration bursts), so a ratio of two late windows cannot tell converged from "
        "linear: rejected; (b) OPO 0-0.10, floor 0.31-0.72; (c) OPO 0.056-0.187 per seed (seeds 0, 1, 200-204: "
        "0.109, 0.094, 0.120, 0.100, 0.141, 0.187, 0.056), floor 0.44-0.81; adopted (every horizon, the stricter); "
        "(d) not adopted (not a fall). Bar 0.25: above OPO's dev maximum 0.187 and below the floor's construction "
        "bound 0.295 (its exact late per-episode regret 0.1427, the optimal policy mixed with 5% uniform play, the "
        "same on every lock, over uniform play's 0.483), so the floor fails by construction while its first window "
        "costs no more than uniform play (<= 0.47 in every dev run); a pure power law T^p meets it for p <= 0.55. "
        "First window 1/8 and bar 0.25 fixed here; the growth exponent and the window ratio stay reported only",
    ),
    dict(
        variant="v3d: floor_level (the lock's exact floor regret, a constant of the lock's structure) printed once "
        "on seed 300 while writing it",
        seeds=[300],
        outcome="0.1427 (the same as seeds 0 and 200); no learner was run on seed 300. Out of caution the v3d "
        "reported seeds skip it: 310-314 (quick 310-312), seen by nothing before the reference run",
    ),
    dict(
        variant="referee pass 3 probes (not ours, not tuning): explore-first linear learners judged by opo_sublinear's "
        "rule (uniform for T/8, then the true optimal policy mixed with 0.005-0.05 uniform play; a wrong first action "
        "on a share rho of contexts), OPO frozen at T/8, OPO mixed with 0.02 / 0.01 uniform play, on the v3d reported "
        "seeds; the v3d fast replay kernel against _step on seeds 7, 310, 313; a user's lock on seed 1",
        seeds=[1, 7, 310, 311, 312, 313, 314],
        outcome="explore-first 4% floor: late share 0.242 in every seed, the claim's rule says holds (linear regret "
        "passes); floors <= 4% pass analytically (0.033-0.242); OPO + 2% / 1% floor pass in seeds 313, 314; the fast "
        "kernel differs from _step by up to 1.0 at eta_scale >= 3e4 and 1e-5 at (1e4, 0.3). v3e: the kernel is "
        "replaced by _step's own arithmetic; the referee's 4% explore-first learner becomes opo_sublinear's second "
        "control (etc_floor 0.04, the referee's value, not tuned; the bar 0.25 and first window 1/8 unchanged). The "
        "v3e run reports on the same seeds 310-314 on the brief's instruction (their v3d numbers and the referee's "
        "probes on them are public: nothing in v3e was chosen from them, the new control is the referee's own arm); "
        "seeds 1 and 7 become dev seeds",
    ),
    dict(
        variant="v3e replay test (tests only, no experiment setting): OPO on the full lock at every opo_grid point "
        "plus "
        "(3e4, 0.3) and (1e5, 1), own play for T = 1000 episodes, late contexts replayed against _step",
        seeds=[3, 11],
        outcome="the v3d kernel fails (2.3e-10 at (1000, *) and more above); the v3e replay equals _step to 1e-10",
    ),
    dict(
        variant="referee pass 4 probes (issue 52 review of d18a001; not ours, not tuning): the stored verdicts "
        "re-judged with OPO's records replaced by control arms; (R_8000/8000)/(R_1000/1000) per seed and the T=4000 "
        "run's doubling windows; late-context replay of OPO-CMDP and OptimisticGreedy on continuous models (seed "
        "313 and synthetic MDPs); a user's env with a float32 context Box; 2,000 fresh contexts timed",
        seeds=[310, 311, 312, 313, 314],
        outcome="opo_sublinear's verdict cannot depend on OPO (its explore-first control is the lock constant "
        "0.2416 < 0.25); OPO's 8k/1k average-regret ratio 0.965 in seed 311 (a step per T: each horizon a "
        "different learner); its late level on [T/2, T] at T=4000 is 0 / 0.0199 / 0 / 0 / 0 against >= 0.1167 for "
        "both floors. These seeds become dev seeds; v3f reports on fresh seeds 410-414 (quick 410-412)",
    ),
    dict(
        variant="v3f design probe (benchmarks/opo_cmdp_rate_probe.py): ONE run per seed of T = 8000 episodes, "
        "OPO-CMDP at the seed's chosen step (the v3c/v3e tuning picks, step set once for T = 8000) and its 5% "
        "linear floor, per-episode exact regret stored; candidate rate statistics of that run computed offline, "
        "each the last doubling window [T/2, T] over an earlier one with the earlier read as at least 1e-3 per "
        "episode: (a) over [T/8, T/4); (b) over [T/4, T/2); (c) over [T/8, T/2); and the late level (mean regret "
        "per episode on [T/2, T], the referee's level rule)",
        seeds=[0, 1] + _V3C + [310, 311, 312, 313, 314],
        outcome="per seed (0, 1, 200-204, 310-314): OPO (a) 0 1.14 1.00 0 11.6 0.65 7.0 13.9 0 0.54 0 0, mean 2.99 "
        "[-0.18, 6.15]; (b) 0 1.64 0.68 0 1.69 0.76 0.61 2.87 0 0.71 0 0, mean 0.75 [0.17, 1.32]; (c) mean 0.93 "
        "[0.11, 1.75]; the 5% floor (a) mean 0.86, two seeds 0.31 (OPO inside it still exploring on [T/8, T/4)); "
        "(b) 0.87-1.01, mean 0.975 [0.943, 1.01]; (c) mean 0.91 (two 0.55). OPO pays 0 from T/4 on in 5 of 12 seeds "
        "and a small plateau (0.005-0.014 per episode, rising in seeds 1, 202, 310: re-exploration from the "
        "sqrt(j) bonus) in the rest. Adopted: (b), the classic doubling-window ratio, the floors' closest to 1 "
        "(an explore-first floor gives exactly 1), bar 0.8 (T^0.68 regret; below the 5% floor's dev minimum 0.87), "
        "fixed before any v3f run on reported seeds; on the dev seeds OPO is undecided by it (interval end 1.32; "
        "until the fifth referee this entry said 'fails'), so opo_sublinear was not expected to hold. "
        "Level rule: OPO 0-0.0139 per episode (mean 0.0062 [0.0025, "
        "0.0098]), the 5% floor 0.143-0.150, the explore-first 4% floor 0.117 (exact); bar 0.05 (the referee's "
        "value; it excludes floors of >= ~1.75% uniform play)",
    ),
    dict(
        variant="v3f tests only (no experiment setting): late-seen contexts against tracking from the start for "
        "OPO-CMDP, the flipped bonus, OptimisticGreedy and OPO-CMAB on small locks",
        seeds=[1, 4],
        outcome="OptimisticGreedy's inherited replay fails (fixed: its own step); the others equal bitwise",
    ),
    dict(
        variant="v3f pipeline checks: two quick-preset runs of the v3f code (after the rate and level claims were "
        "fixed above; before and after the faster update kernel, a numerics-only change) on the quick preset's seeds",
        seeds=[410, 411, 412],
        outcome="the code ran (41.9 s, then 25.5 s); quick verdicts seen, the same in both (claims 1/5, controls "
        "8/9, checks 3/3); nothing was chosen or changed from them; the full preset's T = 4000 / 8000 numbers on "
        "410-414 unseen before the reference run",
    ),
    dict(
        variant="v3f numerics check after the reference run: a third quick-preset run, before and after the "
        "scratch-array change to _update (OPOCMDP._workspace), comparing records",
        seeds=[410, 411, 412],
        outcome="records identical (no arithmetic changed), so the full reference was re-judged from its records; "
        "nothing chosen from it",
    ),
    dict(
        variant="referee pass 5 probes (issue 52 review of v3f at a21e1ff; not ours, not tuning): OPO's 8000-episode "
        "runs re-run on the reported seeds (bit-identical), OPO plus 0.1-2% floors under both rules, the rate rule "
        "on dev seeds 1 / 202 / 310, fresh-context timing",
        seeds=[1, 202, 310, 410, 411, 412, 413, 414],
        outcome="no reported verdict or number changed; the level rule's exact exclusion boundary is ~1.63% "
        "uniform play (1% floor passes it, the rate rule rejects it: 0.907); docs' 'OPO fails the rate rule on dev "
        "seeds' corrected to 'undecided'; 2,000 fresh contexts 58.4 s CPU (knife edge of the 60 s target)",
    ),
)

EXPERIMENT = register(
    Experiment(
        slug="opo_cmdp",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": (410, 411, 412), "full": (410, 411, 412, 413, 414)},
        measure=measure,
        judge=judge,
        threads=1,
        dev_seeds=tuple(_OLD + _V3 + _V3C + [7, 11, 300] + _V3D),
        tuning=TUNING,
    )
)
