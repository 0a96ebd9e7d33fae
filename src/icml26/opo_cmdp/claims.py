"""Reproduction, the evidence: ``judge(config, records, report)`` turns the per-seed records of
:func:`icml26.opo_cmdp.experiment.measure` into judged statements, tables and figures.  Seeds are the units.

* precondition ``nobonus_linear``: the setting needs optimism: OPO-CMDP without its bonus has linear regret
  (log-log slope over ``[T/4, T]`` >= 0.9, whole interval);
* claim ``opo_beats_baselines``: OPO-CMDP's regret at ``T`` (per seed the median over ``eval_streams`` evaluation
  streams, each arm at its chosen setting) is lower than tuned epsilon-greedy's and tuned optimistic greedy's (their
  medians) in >= 4 of 5 seeds; controls: the same rule for the no-bonus and the sign-flipped arms (main stream);
* claim ``optimism_pays``: OPO-CMDP's regret at ``T`` is at most half the no-bonus arm's (per-seed ratio, whole
  interval); control: the sign-flipped arm's ratio;
* claim ``opo_competitive``: OPO-CMDP's median regret at ``T`` is at most ``competitive_ratio`` times tuned optimistic
  greedy's median (per-seed ratio, whole interval); controls: the no-bonus and the sign-flipped arms;
* claim ``opo_sublinear`` (v3f): per-episode regret falls within ONE run: OPO-CMDP played once for
  ``max(horizons)`` episodes (its step set once for that run: one learner, not a step per horizon), its rate ratio
  (mean regret per episode over ``[T/2, T]`` over that over ``[T/4, T/2)``;
  :func:`~icml26.opo_cmdp.experiment.rate_ratio`) is at most ``rate_threshold`` (per-seed ratio, whole interval;
  0.71 for sqrt T, 1 for linear regret); controls: the linear-floor arm (OPO mixed with 5% uniform play) and the
  referee's explore-first floor (uniform for the first window, then the true optimal policy mixed with
  ``etc_floor`` = 4% uniform play), both linear: their late windows sit at their floor's per-episode regret;
* claim ``opo_late_level`` (v3f, the referee's level rule, a separate statement, not a rate): in the same run the
  mean regret per episode over ``[T/2, T]`` is at most ``late_level`` (whole interval): below the late level of any
  learner that keeps >= ~1.75% uniform play (``late_level`` 0.05); controls: the same two floors.  The late share
  (v3d-v3e's statistic, which the explore-first floor passes) and the growth exponent of ``R_T`` over the horizons
  (v3c's, which the floor passes) are reported only;
* checks ``cmab_equivalence``, ``mdp_reference`` (the MDP update with its bonus against a scalar-loop rewrite) and
  ``optimal_regret_zero`` (our code; each has a mutant test).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from icml26.core import Report, judge_every, judge_k_of_n, judge_threshold

if TYPE_CHECKING:
    from .experiment import Config

__all__ = ["judge", "ARMS", "CONTROLS"]

ARMS = {
    "opo": "OPO-CMDP",
    "opo_nobonus": "OPO-CMDP without bonus (gamma=0; control)",
    "opo_flipped": "OPO-CMDP with the bonus's sign flipped (control)",
    "opo_floor": "OPO-CMDP with a linear floor (control)",
    "etc_floor": "explore-first linear floor (oracle learner; control)",
    "opt_greedy": "optimistic greedy (bonus + DP argmin)",
    "eps": "epsilon-greedy plug-in",
    "greedy": "greedy plug-in",
    "uniform": "uniform",
    "optimal": "optimal",
}
CONTROLS = {  # claim -> [(control id, control arm)]
    "opo_beats_baselines": [
        ("opo_beats_baselines_ctl_nobonus", "opo_nobonus"),
        ("opo_beats_baselines_ctl_flipped", "opo_flipped"),
    ],
    "optimism_pays": [("optimism_pays_ctl_flipped", "opo_flipped")],
    "opo_competitive": [
        ("opo_competitive_ctl_nobonus", "opo_nobonus"),
        ("opo_competitive_ctl_flipped", "opo_flipped"),
    ],
    "opo_sublinear": [("opo_sublinear_ctl_floor", "opo_floor"), ("opo_sublinear_ctl_etc_floor", "etc_floor")],
    "opo_late_level": [("opo_late_level_ctl_floor", "opo_floor"), ("opo_late_level_ctl_etc_floor", "etc_floor")],
}
_WHAT = {
    "opo_nobonus": "the same learner and step with gamma = 0 (no bonus)",
    "opo_flipped": "the same learner, step and bonus with the bonus's sign flipped (l~ = min(1, f_hat + b))",
    "opo_floor": "OPO-CMDP's policy mixed with {floor:g} uniform play in every episode (linear regret by construction)",
    "etc_floor": "uniform play for the first window [0, first_frac T), then the TRUE model's optimal policy mixed with "
    "{etc_floor:g} uniform play in every episode (linear regret by construction; the referee's learner, pass 3)",
}


def _vals(arm: dict, key: str, field: str) -> list[float]:
    return [a[field] for a in arm[key]]


def _controlled(report: Report, claim, arm: dict, field: str, cfg: Config, transform=None) -> None:
    c = report.add_claim(claim)
    for cid, key in CONTROLS[claim.id]:
        vals = _vals(arm, key, field) if transform is None else transform(key)
        report.add_claim(
            c.control(
                cid,
                f"Control for {claim.id}: {ARMS[key]}, i.e. "
                f"{_WHAT[key].format(floor=cfg.floor, etc_floor=cfg.etc_floor)}, measured on the "
                f"same seeds, does not pass the claim's rule",
                (f"{ARMS[key]}: {field}", vals),
            )
        )


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    n = len(records)
    units = [r.get("seed", i) for i, r in enumerate(records)]
    arm = {k: [r["arms"][k] for r in records] for k in ARMS}
    for name, field, what in (
        ("OPO-CMDP", "opo_grid", "(eta_scale, gamma) (eta = eta_scale * sqrt(log A / (H^2 T)))"),
        ("epsilon-greedy", "eps_scales", "eps_t = min(1, scale * t^(-1/3)), scale"),
        ("optimistic greedy", "og_gammas", "bonus scale gamma"),
    ):
        grid = list(getattr(cfg, field))
        report.set_tuning(
            name,
            configs=len(grid),
            steps=cfg.tune_T,
            note=f"{what} in {grid}, chosen per seed by regret on a separate tuning stream of {cfg.tune_T} episodes "
            f"(the agent built for T={cfg.T}, so OPO's tuned step is its evaluated step)",
        )
    for key in ("opo_nobonus", "opo_flipped", "opo_floor"):
        report.set_tuning(ARMS[key], configs=1, steps=0, note="OPO-CMDP's chosen (eta_scale, gamma), nothing tuned")
    report.set_tuning(
        ARMS["etc_floor"],
        configs=1,
        steps=0,
        note=f"floor {cfg.etc_floor:g}, the referee's (pass 3), "
        "set before the v3e run (seeds 310-314, dev seeds since v3f), not tuned",
    )
    report.set_tuning("greedy plug-in", configs=1, steps=0, note="no hyperparameter")

    pre = "nobonus_linear"
    report.add_claim(
        judge_threshold(
            pre,
            f"The setting needs optimism: OPO-CMDP without its bonus (gamma=0, OPO's chosen step) has linear regret, "
            f"its log-log regret slope over t in [{cfg.slope_from:g}T, T] is >= {cfg.slope_threshold:g} (whole 95% "
            f"interval)",
            (f"{ARMS['opo_nobonus']}: slope", _vals(arm, "opo_nobonus", "slope")),
            threshold=cfg.slope_threshold,
            sense=">=",
            kind="precondition",
            units=units,
        )
    )
    k = min(cfg.k_wins, n)
    _controlled(
        report,
        judge_k_of_n(
            "opo_beats_baselines",
            f"OPO-CMDP's exact regret at T={cfg.T} (per seed the median over {cfg.eval_streams} evaluation streams "
            f"at its chosen setting) is lower than tuned epsilon-greedy plug-in's and tuned optimistic greedy's (their "
            f"medians) in >= {k} of {n} seeds",
            ("OPO-CMDP: final_median", _vals(arm, "opo", "final_median")),
            {
                "epsilon-greedy plug-in (tuned): final_median": _vals(arm, "eps", "final_median"),
                "optimistic greedy (tuned): final_median": _vals(arm, "opt_greedy", "final_median"),
            },
            k=k,
            higher_is_better=False,
            requires=[pre],
            units=units,
            controls=[c for c, _ in CONTROLS["opo_beats_baselines"]],
        ),
        arm,
        "final",
        cfg,
    )
    nob = np.array(_vals(arm, "opo_nobonus", "final"))

    def ratio(key: str) -> list[float]:
        return (np.array(_vals(arm, key, "final")) / nob).tolist()

    _controlled(
        report,
        judge_threshold(
            "optimism_pays",
            f"Optimism pays: OPO-CMDP's exact regret at T={cfg.T} is at most {cfg.optimism_ratio:g} times that of "
            f"the same learner without its bonus (per-seed ratio, whole 95% interval)",
            ("OPO-CMDP: R_T / R_T(no bonus)", ratio("opo")),
            threshold=cfg.optimism_ratio,
            sense="<=",
            requires=[pre],
            units=units,
            controls=[c for c, _ in CONTROLS["optimism_pays"]],
        ),
        arm,
        "R_T / R_T(no bonus)",
        cfg,
        transform=ratio,
    )
    og = np.array(_vals(arm, "opt_greedy", "final_median"))

    def vs_og(key: str) -> list[float]:  # OPO's median over streams; a control arm's main stream (one run)
        return (np.array(_vals(arm, key, "final_median" if key == "opo" else "final")) / og).tolist()

    _controlled(
        report,
        judge_threshold(
            "opo_competitive",
            f"OPO-CMDP is competitive with tuned optimistic greedy (which plans an argmin every episode): its exact "
            f"regret at T={cfg.T} is at most {cfg.competitive_ratio:g} times optimistic greedy's (per seed the ratio "
            f"of the medians over {cfg.eval_streams} evaluation streams, whole 95% interval)",
            ("OPO-CMDP: R_T / R_T(optimistic greedy)", vs_og("opo")),
            threshold=cfg.competitive_ratio,
            sense="<=",
            requires=[pre],
            units=units,
            controls=[c for c, _ in CONTROLS["opo_competitive"]],
        ),
        arm,
        "R_T / R_T(optimistic greedy)",
        cfg,
        transform=vs_og,
    )
    horizons = list(cfg.horizons)
    T_max = max(horizons)

    def rate(key: str) -> list[float]:  # nan (a negative per-episode regret: the regret computation is broken, which
        v = np.array(_vals(arm, key, "rate_ratio"), dtype=float)  # optimal_regret_zero reports) counts as linear
        return np.where(np.isfinite(v), v, 1.0).tolist()

    _controlled(
        report,
        judge_threshold(
            "opo_sublinear",
            f"OPO-CMDP's per-episode regret falls within one run (one learner: OPO-CMDP played once for T={T_max} "
            f"episodes, its step set once for that T): the mean exact regret per episode over the last doubling "
            f"window [T/2, T] is at most {cfg.rate_threshold:g} times that over the window before it, [T/4, T/2) "
            f"(per seed this rate ratio, the earlier window read as at least 1e-3 per episode; 0.71 for sqrt(T) "
            f"regret, 1 for linear; whole 95% interval)",
            ("OPO-CMDP: rate ratio", rate("opo")),
            threshold=cfg.rate_threshold,
            sense="<=",
            requires=[pre],
            units=units,
            controls=[c for c, _ in CONTROLS["opo_sublinear"]],
        ),
        arm,
        "rate ratio",
        cfg,
        transform=rate,
    )
    per_phi = float(np.mean([r["floor_level"] for r in records])) / cfg.floor  # the floor's regret per unit share
    _controlled(
        report,
        judge_threshold(
            "opo_late_level",
            f"OPO-CMDP's late per-episode regret is low (a level, not a rate): in the same run of T={T_max} "
            f"episodes, its mean exact regret per episode over [T/2, T] is at most {cfg.late_level:g} (whole 95% "
            f"interval), below that of any learner that keeps about {cfg.late_level / per_phi:.3g} or more uniform "
            f"play (on these locks the optimal policy mixed with a share phi of uniform play pays about "
            f"{per_phi:.3g} phi "
            f"per episode: exact at phi = {cfg.floor:g}, linear in phi to first order)",
            ("OPO-CMDP: late level", _vals(arm, "opo", "late_level")),
            threshold=cfg.late_level,
            sense="<=",
            requires=[pre],
            units=units,
            controls=[c for c, _ in CONTROLS["opo_late_level"]],
        ),
        arm,
        "late_level",
        cfg,
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
            "mdp_reference",
            f"OPO-CMDP's MDP update with its bonus on (gamma=1: occupancy, counterfactual counts, policy evaluation, "
            f"mirror step) reproduces the rule written out with scalar loops on a small lock (H=3, S=2, A=3): the "
            f"same policies over {cfg.cmab_rounds} episodes (to 1e-10) and the same oracle picks per epoch",
            ("max |pi_agent - pi_reference| + oracle mismatches", [r["mdp_max_diff"] for r in records]),
            bound=1e-10,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "optimal_regret_zero",
            "The optimal policy of the true model has exact DP regret 0 in every episode",
            ("max |gap| of the optimal policy", _vals(arm, "optimal", "max_abs_gap")),
            bound=1e-12,
            kind="check",
        )
    )
    _tables(cfg, records, arm, report)
    _figure(cfg, records, report)
    report.metrics = {k: float(np.mean(_vals(arm, k, "final"))) for k in ARMS}
    report.add_note(
        f"Setting: a contextual combination lock (H={cfg.n_layers}, S={cfg.n_states}, A={cfg.n_actions}, "
        f"{cfg.context_pool} contexts, context-dependent keys). Every loss decoy says the prize at the end of the "
        "lock is not there, and decoys win ties; leaving the lock at the first step is then best, so a learner that "
        "follows the plug-in model never sees the data that refutes the decoys. Reaching the prize takes H correct "
        "actions in a row that the plug-in model advises against."
    )
    report.add_note(
        "Controls: every claim credits optimism (or, for sublinearity, vanishing exploration), so its control arms "
        "are OPO-CMDP with exactly that removed, at OPO's chosen step, on the same seeds: no bonus (gamma=0), the "
        f"bonus's sign flipped (pessimism), and a linear floor ({cfg.floor:g} uniform play mixed into every "
        "episode); sublinearity has a second control, the referee's explore-first floor (uniform play for the first "
        f"window, then the true optimal policy mixed with {cfg.etc_floor:g} uniform play: linear regret). A control "
        "holds when its arm fails the claim's rule."
    )
    report.add_note(
        f"Sublinearity is judged within one run per seed (T={T_max}, OPO's step set once for it: one learner): its "
        "per-episode regret over the last doubling window [T/2, T] must be at most "
        f"{cfg.rate_threshold:g} times that over [T/4, T/2) (the rate ratio: 0.71 for sqrt(T) regret; a linear "
        "learner whose per-episode regret has reached its floor gives 1, whatever it did early). A second, separate "
        f"claim reads the level of the same window (<= {cfg.late_level:g} per episode). v3d-v3e judged the late "
        f"share (the last window over the first, [0, {cfg.first_frac:g}T)), which an explore-first learner with a "
        f"{cfg.etc_floor:g} floor passes (0.24: it measures how hard a learner explored early, not whether its "
        "regret keeps falling); it is reported in table horizons, as is the growth exponent of R_T over separate "
        "runs per T (v3c; the floor's is below 1 over 1k-8k), neither judged. The log-log slope of one run's R_t "
        "is not used either (the floor's is below 1). "
        "OPO-CMDP, optimistic greedy and "
        "epsilon-greedy are each evaluated on "
        f"{cfg.eval_streams} independent streams at their chosen settings; the beats-baselines and competitive "
        "claims read the per-seed medians. The MDP extension of OPO-CMAB (occupancy-based counterfactual bonus, "
        "doubling epochs, policy evaluation of pi_j on the optimistic loss) is our reconstruction; the paper's H^4 "
        "and sqrt(|S||A|) exponents are not claimed."
    )


def _fmt(x) -> str:
    return "(" + ", ".join(f"{v:g}" for v in x) + ")" if isinstance(x, (list, tuple)) else f"{x:g}"


def _sd(x: np.ndarray) -> float:
    return float(x.std(ddof=1)) if len(x) > 1 else 0.0


def _tables(cfg: Config, records: list[dict], arm: dict, report: Report) -> None:
    n = len(records)
    rows = []
    for key, name in ARMS.items():
        fin, sl, wr = (np.array(_vals(arm, key, f), dtype=float) for f in ("final", "slope", "window_ratio"))
        tuned = key in records[0]["tuning"]
        med = (
            "; ".join(f"{a['final_median']:.1f}" for a in arm[key])
            if "final_median" in records[0]["arms"][key]
            else "-"
        )
        ok = wr[np.isfinite(wr)]
        rows.append(
            {
                "method": name,
                "regret at T (mean ± sd)": f"{fin.mean():.1f} ± {_sd(fin):.1f}",
                "median over streams per seed": med,
                "slope on [T/4, T]": f"{sl.mean():.3f} ± {_sd(sl):.3f}",
                "window ratio (median; min-max; n/a)": (
                    f"{np.median(ok):.3g}; {ok.min():.3g}-{ok.max():.3g}; {len(wr) - len(ok)}"
                    if len(ok)
                    else f"n/a x{len(wr)}"
                ),
                "oracle calls": int(np.mean(_vals(arm, key, "oracle_calls"))),
                "chosen per seed": "; ".join(_fmt(r["tuning"][key]["chosen"]) for r in records) if tuned else "-",
            }
        )
    report.add_table(
        "regret",
        rows,
        f"Exact cumulative regret at T={cfg.T} over {n} seeds on the lock (H={cfg.n_layers}, S={cfg.n_states}, "
        f"A={cfg.n_actions}, {cfg.context_pool} contexts, |F|=|P|={cfg.n_decoys + 1}); slope of log R_t on log t "
        "over [T/4, T]; window ratio = mean regret per episode on [T/2, T] / on [T/4, T/2) (reported only; n/a "
        f"when the earlier window's mean is below 1e-3); median over streams: R_T per seed, "
        f"median over {cfg.eval_streams} independent evaluation streams at the chosen setting "
        "(what opo_beats_baselines and opo_competitive read).",
    )
    rows = []
    for key in ("opo", "opo_floor", "etc_floor"):
        row = {"method": ARMS[key]}
        for T2 in records[0]["arms"][key]["final_at"]:
            fin = np.array([a["final_at"][T2] for a in arm[key]])
            row[f"R_T at T={int(T2)} (mean ± sd)"] = f"{fin.mean():.1f} ± {_sd(fin):.1f}"
        row["rate ratio per seed (T_max run; claim)"] = "; ".join(f"{a['rate_ratio']:.3f}" for a in arm[key])
        row["late level per seed (T_max run; claim)"] = "; ".join(f"{a['late_level']:.4f}" for a in arm[key])
        row["late share per seed (max over T; reported only)"] = "; ".join(f"{a['late_share']:.3f}" for a in arm[key])
        row["growth exponent per seed (reported only)"] = "; ".join(f"{a['growth_exponent']:.3f}" for a in arm[key])
        rows.append(row)
    uv = np.array([r["uniform_level"] for r in records])
    for phi, field in ((cfg.floor, "floor_level"), (cfg.etc_floor, "etc_floor_level")):
        lv = np.array([r[field] for r in records])
        rows.append(
            {
                "method": f"floor's per-episode regret / uniform's ({phi:g} uniform play mixed into the optimal "
                "policy; exact): an explore-first learner with this floor has this late share",
                "late level per seed (T_max run; claim)": "; ".join(f"{a:.4f}" for a in lv),
                "late share per seed (max over T; reported only)": "; ".join(f"{a / b:.3f}" for a, b in zip(lv, uv)),
            }
        )
    report.add_table(
        "horizons",
        rows,
        "The sublinearity claims read ONE run per seed, the longest (T_max = "
        f"{max(cfg.horizons)}, the step set once for it): the rate ratio (mean regret per episode over [T/2, T] / over "
        f"[T/4, T/2), the earlier read as at least 1e-3; bar {cfg.rate_threshold:g}) and the late level (mean regret "
        f"per episode over [T/2, T]; bar {cfg.late_level:g}). Reported only: a separate run per horizon T (the step "
        "set for that T) and its exact regret R_T, the late share (v3d-v3e: [T/2, T] over [0, "
        f"{cfg.first_frac:g}T), the largest over the horizons) and the growth exponent (v3c: slope of log R_T on log "
        "T). Last rows: the floors' exact late per-episode regret (the optimal policy mixed with phi uniform play) "
        "and that over uniform play's (the late share an explore-first learner with this floor has).",
    )
    rows = []
    for key in ("opo", "opo_floor", "etc_floor"):
        w = np.array(_vals(arm, key, "rate_windows"))
        rows.append({"method": ARMS[key], **{f"window {i + 1}": float(v) for i, v in enumerate(w.mean(0))}})
    report.add_table(
        "rate_windows",
        rows,
        f"The sublinearity claims' run (T_max = {max(cfg.horizons)}, one per seed): mean regret per episode over the "
        "doubling windows [T/16, T/8), [T/8, T/4), [T/4, T/2), [T/2, T] (mean over seeds; the claims read the last "
        "two per seed).",
    )
    rows = []
    for key in ("opo", "opo_floor", "opo_nobonus", "opt_greedy"):
        w = np.array(_vals(arm, key, "windows"))
        rows.append({"method": ARMS[key], **{f"window {i + 1}": float(v) for i, v in enumerate(w.mean(0))}})
    report.add_table(
        "doubling_windows",
        rows,
        "Mean regret per episode over the doubling windows [T/16, T/8), [T/8, T/4), [T/4, T/2), [T/2, T] (mean "
        "over seeds).",
    )
    sizes = list(records[0]["sweep"])
    report.add_table(
        "size_sweep",
        [
            {
                "S x A": s,
                "|S||A|": int(np.prod([int(x) for x in s.split("x")])),
                "OPO-CMDP regret (mean ± sd)": f"{np.mean([r['sweep'][s] for r in records]):.1f} ± "
                f"{_sd(np.array([r['sweep'][s] for r in records])):.1f}",
            }
            for s in sizes
        ],
        f"The spec's |S||A| sweep (reported, not judged): OPO-CMDP's exact regret at T={cfg.sweep_T} on locks with "
        f"H={cfg.n_layers} and the given S, A (OPO's chosen step of the seed).",
    )
    cps = records[0]["checkpoints"]
    diag = []
    for i in np.unique(np.linspace(0, len(cps) - 1, 8).astype(int)):
        diag.append(
            {
                "episode": cps[i],
                "OPO mean bonus along its occupancy": float(np.mean([a["bonus"][i] for a in arm["opo"]])),
                "OPO policy entropy (nats)": float(np.mean([a["entropy"][i] for a in arm["opo"]])),
                "OPO: f_hat is the truth": float(np.mean([a["f_is_truth"][i] for a in arm["opo"]])),
                "no bonus: f_hat is the truth": float(np.mean([a["f_is_truth"][i] for a in arm["opo_nobonus"]])),
                "optimistic greedy: f_hat is the truth": float(
                    np.mean([a["f_is_truth"][i] for a in arm["opt_greedy"]])
                ),
                "eps-greedy: f_hat is the truth": float(np.mean([a["f_is_truth"][i] for a in arm["eps"]])),
            }
        )
    report.add_table(
        "learned_diagnostics",
        diag,
        "What the learners learned (share of seeds whose least-squares pick is the true f, at the given episode): "
        "the optimistic learners refute the decoys once they reach the prize; the others never do.",
    )


def _figure(cfg: Config, records, report: Report) -> None:
    from matplotlib.figure import Figure

    cps = np.array(records[0]["checkpoints"])
    fig = Figure(figsize=(7.5, 5.0), layout="constrained")
    ax = fig.subplots()
    inset = ax.inset_axes([0.08, 0.55, 0.36, 0.38])
    for i, (key, name) in enumerate(ARMS.items()):
        if key in ("optimal", "uniform"):
            continue
        ls = ":" if key.startswith("opo_") else "-"
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
    ax.set_title(f"Regret on the contextual combination lock (H={cfg.n_layers}, S={cfg.n_states}, A={cfg.n_actions})")
    ax.legend(loc="lower right", fontsize=7)
    ax.grid(alpha=0.3)
    report.add_figure(
        "cumulative_regret",
        fig,
        "Cumulative exact regret per method (dotted: the control arms); inset: the same on log-log axes.",
    )
