"""Reproduction: OPO-CMDP vs greedy / epsilon-greedy plug-in, uniform and optimal policies on a contextual
layered MDP built to mislead greedy learners.

Per seed: one environment (context pool, true losses and dynamics) and one pair of finite classes (decoys
first, truth last; every decoy overstates the truly optimal first action, see :func:`make_classes`).  Every
learner sees the same environment, classes, oracles and epoch schedule.  Regret is exact (DP on the true model).
Tuning: OPO-CMDP's step scale and epsilon-greedy's epsilon scale each get a grid of the same size, chosen on a
separate tuning stream (same environment, other trajectory seed, ``tune_T`` episodes); the chosen value is then
run on the evaluation stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.core import Experiment, Report, judge_every, judge_k_of_n, judge_threshold, register

from .baselines import EpsilonGreedyPlugIn, GreedyPlugIn, OptimalPolicy, UniformPolicy
from .classes import least_squares_oracle
from .env import ContextualLayeredMDP, make_classes
from .opo import OPOCMAB, OPOCMDP, run

ARMS = {
    "opo": "OPO-CMDP",
    "greedy": "greedy plug-in",
    "eps": "epsilon-greedy plug-in",
    "uniform": "uniform",
    "optimal": "optimal",
    "opo_nobonus": "OPO-CMDP without bonus (gamma=0; ablation)",
}


@dataclass(frozen=True)
class Config:
    """Environment, classes, horizon, tuning grids and the claims' thresholds."""

    n_layers: int = 3
    n_states: int = 3
    n_actions: int = 3
    context_dim: int = 4
    context_pool: int = 100
    loss_scale: float = 1.0
    loss_offset: float = -2.0  # small per-step losses: a predicted loss of 1 deters greedy (see docs)
    n_decoys: int = 31
    mislead: str = "all"
    T: int = 4000
    tune_T: int = 2000
    eta_scales: tuple[float, ...] = (1.0, 3.0, 10.0)
    eps_scales: tuple[float, ...] = (0.1, 0.3, 1.0)
    gamma: float = 1.0
    slope_from: float = 0.25  # slope of log R_t vs log t fitted on t in [slope_from * T, T] (spec: T/8; see docs)
    slope_threshold: float = 0.9
    k_wins: int = 4
    cmab_rounds: int = 80
    n_checkpoints: int = 40


# full: grids of 4 (in a trial seed eta_scale=10 was chosen at the edge of {1, 3, 10}); quick: grids of 3
FULL = Config(eta_scales=(1.0, 3.0, 10.0, 30.0), eps_scales=(0.03, 0.1, 0.3, 1.0))
QUICK = Config(context_pool=50, n_decoys=15, T=1000, tune_T=500, cmab_rounds=40)


def _checkpoints(T: int, n: int) -> np.ndarray:
    return np.unique(np.geomspace(1, T, n).astype(int))


def _slope(cum: np.ndarray, start: float) -> float:
    T = len(cum)
    ts = np.unique(np.geomspace(max(1, int(start * T)), T, 20).astype(int))
    y = np.log(np.maximum(cum[ts - 1], 1e-12))
    return float(np.polyfit(np.log(ts), y, 1)[0])


def _make(cfg: Config, seed: int):
    env = ContextualLayeredMDP(
        cfg.n_layers,
        cfg.n_states,
        cfg.n_actions,
        cfg.context_dim,
        cfg.context_pool,
        loss_scale=cfg.loss_scale,
        loss_offset=cfg.loss_offset,
        seed=seed,
    )
    F, P, info = make_classes(env, n_decoys=cfg.n_decoys, seed=seed, mislead=cfg.mislead)
    return env, F, P, info


def _agent(cfg: Config, name: str, F, P, env, T: int, scale: float | None = None):
    dims = (cfg.n_layers, cfg.n_states, cfg.n_actions)
    if name in ("opo", "opo_nobonus"):
        return OPOCMDP(F, P, *dims, T=T, eta_scale=scale, gamma=cfg.gamma if name == "opo" else 0.0)
    if name == "greedy":
        return GreedyPlugIn(F, P, *dims)
    if name == "eps":
        return EpsilonGreedyPlugIn(F, P, *dims, eps_scale=scale)
    if name == "uniform":
        return UniformPolicy(*dims)
    return OptimalPolicy(env)


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
    env = ContextualLayeredMDP(1, 1, cfg.n_actions, cfg.context_dim, 10, loss_offset=cfg.loss_offset, seed=seed)
    F, _, _ = make_classes(env, n_decoys=7, seed=seed, mislead="first")
    agent = OPOCMAB(F, cfg.n_actions, eta=0.1, gamma=cfg.gamma)
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
            cfg.gamma,
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
    # the oracle the agent used last equals least_squares_oracle on the same rounds
    data = {
        "context": np.array(ctx[:-1]),
        "h": np.zeros(len(acts) - 1, int),
        "s": np.zeros(len(acts) - 1, int),
        "a": np.array(acts[:-1]),
        "loss": np.array(losses[:-1]),
    }
    worst += float(agent.kf != least_squares_oracle(F, data))
    return worst


def measure(cfg: Config, seed: int, progress=None) -> dict:
    """One seed: tune OPO-CMDP and epsilon-greedy on a tuning stream, then run every arm on the evaluation
    stream; exact regret curves, slopes, diagnostics and the two checks."""
    env, F, P, info = _make(cfg, seed)
    cps = _checkpoints(cfg.T, cfg.n_checkpoints)
    out: dict = {"checkpoints": cps.tolist(), "arms": {}, "tuning": {}}
    tune_seed = seed + 100_000
    for name, grid in (("opo", cfg.eta_scales), ("eps", cfg.eps_scales)):
        scores = [
            float(run(env, _agent(cfg, name, F, P, env, cfg.tune_T, s), cfg.tune_T, tune_seed).cum_regret[-1])
            for s in grid
        ]
        out["tuning"][name] = {"grid": list(grid), "tune_regret": scores, "chosen": grid[int(np.argmin(scores))]}
    for name in ARMS:
        tuned = "opo" if name == "opo_nobonus" else name  # the ablation reuses OPO-CMDP's chosen step
        scale = out["tuning"][tuned]["chosen"] if tuned in out["tuning"] else None
        agent = _agent(cfg, name, F, P, env, cfg.T, scale)
        log = run(env, agent, cfg.T, seed)
        cum = log.cum_regret
        rec = {
            "final": float(cum[-1]),
            "curve": cum[cps - 1].tolist(),
            "oracle_calls": log.oracle_calls,
            "slope": _slope(cum, cfg.slope_from) if cum[-1] > 0 else 0.0,
            "max_abs_gap": float(np.max(np.abs(log.per_episode_gap))),
        }
        if name in ("opo", "opo_nobonus"):
            rec["bonus"] = [agent.bonus_trace[t - 1] for t in cps]
            rec["entropy"] = [agent.entropy_trace[t - 1] for t in cps]
        if hasattr(agent, "history"):
            picks = np.array([k for k, _ in agent.history])
            rec["f_is_truth"] = [float(picks[t - 1] == info["truth_index"]) for t in cps]
        out["arms"][name] = rec
    out["cmab_max_diff"] = _cmab_check(cfg, seed)
    return out


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    n = len(records)
    arm = {k: [r["arms"][k] for r in records] for k in ARMS}
    report.set_tuning(
        "OPO-CMDP",
        configs=len(cfg.eta_scales),
        steps=cfg.tune_T,
        note=f"eta_scale in {list(cfg.eta_scales)} (eta = scale * sqrt(log A / (H^2 T))), chosen per "
        f"seed by regret on a separate tuning stream of {cfg.tune_T} episodes; gamma={cfg.gamma:g}",
    )
    report.set_tuning(
        "epsilon-greedy",
        configs=len(cfg.eps_scales),
        steps=cfg.tune_T,
        note=f"eps_t = min(1, scale * t^(-1/3)), scale in {list(cfg.eps_scales)}, chosen the same way",
    )
    report.set_tuning("greedy", configs=1, steps=0, note="no hyperparameter")

    report.add_claim(
        judge_threshold(
            "greedy_misled",
            f"The environment misleads greedy methods: greedy plug-in's log-log regret slope over t in "
            f"[{cfg.slope_from:g}T, T] is >= {cfg.slope_threshold:g} (linear regret)",
            ("greedy plug-in slope", [a["slope"] for a in arm["greedy"]]),
            threshold=cfg.slope_threshold,
            sense=">=",
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            "opo_sublinear",
            f"OPO-CMDP's regret grows sublinearly: its log-log regret slope over t in [{cfg.slope_from:g}T, T] is < "
            f"{cfg.slope_threshold:g} (whole 95% interval below)",
            ("OPO-CMDP slope", [a["slope"] for a in arm["opo"]]),
            threshold=cfg.slope_threshold,
            sense="<=",
            requires=["greedy_misled"],
        )
    )
    k = min(cfg.k_wins, n)
    report.add_claim(
        judge_k_of_n(
            "opo_beats_plugin",
            f"OPO-CMDP's regret at T={cfg.T} is lower than greedy plug-in's and epsilon-greedy plug-in's in >= {k} of "
            f"{n} seeds",
            ("OPO-CMDP regret at T", [a["final"] for a in arm["opo"]]),
            {
                "greedy plug-in regret at T": [a["final"] for a in arm["greedy"]],
                "epsilon-greedy plug-in regret at T": [a["final"] for a in arm["eps"]],
            },
            k=k,
            higher_is_better=False,
            requires=["greedy_misled"],
        )
    )
    report.add_claim(
        judge_every(
            "cmab_equivalence",
            f"OPO-CMAB (the H=|S|=1 case of the OPO-CMDP code) reproduces the bandit rule written out directly: "
            f"identical action probabilities over {cfg.cmab_rounds} rounds and the same LS oracle pick",
            ("max |p_agent - p_reference| + oracle mismatch", [r["cmab_max_diff"] for r in records]),
            bound=1e-12,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "optimal_regret_zero",
            "The optimal policy of the true model has exact DP regret 0 in every episode",
            ("max |gap| of the optimal policy", [a["max_abs_gap"] for a in arm["optimal"]]),
            bound=1e-12,
            kind="check",
        )
    )

    rows = []
    for key, name in ARMS.items():
        fin = np.array([a["final"] for a in arm[key]])
        sl = np.array([a["slope"] for a in arm[key]])
        sd = (fin.std(ddof=1), sl.std(ddof=1)) if n > 1 else (0.0, 0.0)
        rows.append(
            {
                "method": name,
                "regret at T (mean ± sd)": f"{fin.mean():.1f} ± {sd[0]:.1f}",
                "slope (mean ± sd)": f"{sl.mean():.3f} ± {sd[1]:.3f}",
                "oracle calls": int(np.mean([a["oracle_calls"] for a in arm[key]])),
                "chosen scale per seed": ", ".join(f"{r['tuning'][key]['chosen']:g}" for r in records)
                if key in records[0]["tuning"]
                else "-",
            }
        )
    report.add_table(
        "regret",
        rows,
        f"Exact cumulative regret at T={cfg.T} over {n} seeds; H={cfg.n_layers}, "
        f"S={cfg.n_states}, A={cfg.n_actions}, {cfg.context_pool} contexts, |F|=|P|={cfg.n_decoys + 1}.",
    )
    cps = records[0]["checkpoints"]
    diag = []
    for i in np.unique(np.linspace(0, len(cps) - 1, 8).astype(int)):
        diag.append(
            {
                "episode": cps[i],
                "OPO mean bonus along its occupancy": float(np.mean([a["bonus"][i] for a in arm["opo"]])),
                "OPO policy entropy (nats)": float(np.mean([a["entropy"][i] for a in arm["opo"]])),
                "OPO: f_hat is the truth (share of seeds)": float(np.mean([a["f_is_truth"][i] for a in arm["opo"]])),
                "greedy: f_hat is the truth": float(np.mean([a["f_is_truth"][i] for a in arm["greedy"]])),
                "eps-greedy: f_hat is the truth": float(np.mean([a["f_is_truth"][i] for a in arm["eps"]])),
            }
        )
    report.add_table(
        "learned_diagnostics",
        diag,
        "What the learners learned: OPO-CMDP's confidence width (counterfactual bonus averaged over its "
        "own occupancy and the context pool) shrinks, its policy entropy falls from log A, and the LS "
        "oracle's pick becomes the true f once the optimal first action has been tried.",
    )
    _figure(cfg, records, report)
    report.metrics = {k: float(np.mean([a["final"] for a in arm[k]])) for k in ARMS}
    report.add_note(
        "Setting: per-step losses are small (loss_offset=-2) and every decoy in F gives the truly optimal "
        "first action loss 1, so a learner that never tries that action cannot refute the decoys; the "
        "first decoy equals the truth elsewhere and wins ties (lowest index). With loss_offset=0 or only "
        "one misleading decoy greedy plug-in escaped (regret ~3 at T=1000) and the precondition failed."
    )
    report.add_note(
        "Ablation (not judged): 'OPO-CMDP without bonus' is the same mirror-descent learner with gamma=0 "
        "and OPO-CMDP's chosen step; its soft policy still tries every action early, so on this "
        "environment the ablation tells how much of OPO-CMDP's exploration comes from the bonus and "
        "how much from the mirror-descent policy itself."
    )
    report.add_note(
        "The MDP extension of OPO-CMAB (occupancy-based counterfactual bonus, doubling epochs, policy "
        "evaluation of pi_j on the optimistic loss) is our reconstruction; the paper's H^4 and "
        "sqrt(|S||A|) exponents are not claimed."
    )


def _figure(cfg: Config, records, report: Report) -> None:
    from matplotlib.figure import Figure

    cps = np.array(records[0]["checkpoints"])
    fig = Figure(figsize=(7.5, 5.0), layout="constrained")
    ax = fig.subplots()
    inset = ax.inset_axes([0.08, 0.5, 0.38, 0.42])
    for i, (key, name) in enumerate(ARMS.items()):
        if key == "optimal":
            continue
        ls = ":" if key == "opo_nobonus" else "-"
        curves = np.array([r["arms"][key]["curve"] for r in records])
        m = curves.mean(0)
        se = curves.std(0, ddof=1) / np.sqrt(len(curves)) if len(curves) > 1 else 0 * m
        ax.plot(cps, m, color=f"C{i}", ls=ls, label=name)
        ax.fill_between(cps, m - se, m + se, color=f"C{i}", alpha=0.2)
        inset.loglog(cps, np.maximum(m, 1e-3), color=f"C{i}", ls=ls)
    inset.loglog(cps, cps * 0.1, color="0.5", ls="--", lw=0.8)
    inset.set_title("log-log (dashed: slope 1)", fontsize=8)
    inset.tick_params(labelsize=7)
    ax.set_xlabel("episode t")
    ax.set_ylabel("cumulative exact regret (mean ± s.e. over seeds)")
    ax.set_title(f"Regret on the greedy-misleading CMDP (H={cfg.n_layers}, S={cfg.n_states}, A={cfg.n_actions})")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    report.add_figure(
        "cumulative_regret",
        fig,
        "Cumulative exact regret per method (dotted: the gamma=0 ablation); inset: the same on log-log axes.",
    )


EXPERIMENT = register(
    Experiment(
        slug="opo_cmdp",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 5, "full": 5},
        measure=measure,
        judge=judge,
        threads=1,
    )
)
