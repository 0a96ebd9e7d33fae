"""The evidence: ``judge(config, records, report)`` turns the per-seed records of
:func:`icml26.trace_du.experiment.measure` into judged statements, tables and figures.  Seeds are the units.

* preconditions (ring): ``backdoor_learned``, ``forget_members_detectable``, ``retrain_removes_backdoor``,
  ``rewind_deep`` (at the claims' ``sigma`` TRACE-DU rewinds to ``t* >= T/4``) and ``rewind_matters`` (an effect
  test: TRACE-DU's metric below the no-rewind arm's on the same noise draws by at least ``rewind_min_effect``, paired
  t-test), so the ASR / MIA claims compare unlearning with retraining only where the rewind changes the outcome;
* claims ``graph_aware_more_accurate_<graph>_R<R>``: at an equal budget of ``R`` retraining rounds (both bounds
  rewind to ``T - R``) and the same certificate, the graph-aware bound's smaller noise gives higher test accuracy
  than the graph-agnostic bound's, in >= 8 of 10 seeds.  Control ``<claim>_ctl_agnostic_sigma``: TRACE-DU's rewind
  point with the noise the graph-agnostic bound needs there, a fresh draw (the method minus its tighter bound);
* claims ``graph_aware_beats_retrain_<graph>_R<R>_eps<eps>`` (a weak certificate: the graph-aware arm against
  retraining from the init for the same ``R`` rounds, each arm's rounds at a step size picked on the dev seeds from
  one grid), control ``<claim>_ctl_agnostic_bound``; and its companion ``graph_aware_asr_close_to_retrain_<graph>_R<R>
  _eps<eps>`` (the same cell's backdoor success within ``asr_margin`` of retrain-R's), control ``<claim>_ctl_no_noise``
  (the same rewind and rounds, the noise drawn but not added);
* claims ``unlearned_asr_close_to_retrain``, ``unlearned_mia_close_to_retrain``, ``asr_below_fine_tune`` at the
  claims' ``sigma``; control ``<claim>_ctl_no_rewind``: the same noise added to the final model and the same number of
  rounds of training without the client (the method minus its rewind);
* checks (true by construction; each has a mutant test in tests/trace_du/test_check_mutants.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import TYPE_CHECKING

import numpy as np

from icml26.core import Report, judge_every, judge_k_of_n, judge_non_inferiority, judge_superiority, judge_threshold

from .mechanisms import sensitivity_threshold

if TYPE_CHECKING:
    from .experiment import Config

__all__ = [
    "judge",
    "budget_claim_id",
    "weak_claim_id",
    "PRECONDITIONS",
    "CHECKS",
    "NO_REWIND",
    "AGNOSTIC_SIGMA",
    "AGNOSTIC_BOUND",
    "NO_NOISE",
    "weak_asr_claim_id",
]

PRECONDITIONS = (
    "backdoor_learned",
    "forget_members_detectable",
    "retrain_removes_backdoor",
    "rewind_deep",
    "rewind_matters",
)
CHECKS = (
    "bound_valid_strongly_convex",
    "graph_bound_tighter_pointwise",
    "sequential_bound_valid",
    "released_noise_matches_certificate",
    "certificates_flag_heuristic",
    "sequential_rounds_within_two_retrains",
    "fresh_noise_per_request",
)
NO_REWIND = "_ctl_no_rewind"
AGNOSTIC_SIGMA = "_ctl_agnostic_sigma"
AGNOSTIC_BOUND = "_ctl_agnostic_bound"
NO_NOISE = "_ctl_no_noise"
_GRAPH = {"ring": "16-node ring", "er": "Erdos-Renyi graph"}


def budget_claim_id(topology: str, R: int) -> str:
    return f"graph_aware_more_accurate_{topology}_R{R}"


def weak_claim_id(topology: str, R: int, epsilon: float) -> str:
    return f"graph_aware_beats_retrain_{topology}_R{R}_eps{epsilon:g}"


def weak_asr_claim_id(topology: str, R: int, epsilon: float) -> str:
    return f"graph_aware_asr_close_to_retrain_{topology}_R{R}_eps{epsilon:g}"


def _topos(records) -> list[str]:
    return [t for t in ("ring", "er") if t in records[0]]


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    n, T, k = len(records), cfg.rounds, cfg.local_steps
    arms = [r["claim_arms"] for r in records]
    kwin = max(1, math.ceil(cfg.win_frac * n))
    note = f"lr={cfg.lr}, K={k}, batch={cfg.batch_size}, l2={cfg.l2} for every arm (not tuned per arm)"
    ru = float(np.mean([a["trace_du"]["rounds"] for a in arms]))
    report.set_tuning(
        "TRACE-DU",
        configs=1,
        steps=ru * k,
        note=f"{note}; sigma={cfg.claim_sigma:g} chosen on the dev seeds; steps = resumed rounds x K",
    )
    report.set_tuning("no rewind (control)", configs=1, steps=ru * k, note=f"{note}; same noise and rounds")
    report.set_tuning("Fine-tune", configs=1, steps=ru * k, note=f"{note}; as many rounds as TRACE-DU resumed")
    report.set_tuning("Retrain", configs=1, steps=T * k, note=f"{note}; all {T} rounds from the init")
    for R in cfg.budgets:
        report.set_tuning(f"graph-aware, R={R}", configs=1, steps=R * k, note=f"{note}; sigma calibrated, no knob")
        report.set_tuning(f"graph-agnostic, R={R}", configs=1, steps=R * k, note=f"{note}; sigma calibrated, no knob")

    # (0) preconditions (ring), judged first
    ring = [r["ring"] for r in records]
    report.add_claim(
        judge_threshold(
            "backdoor_learned",
            f"Before unlearning the forget client's backdoor succeeds on >= {cfg.pre_asr:g} of triggered test images "
            "(mean over kept nodes; ring).",
            ("before unlearning ASR", [r["before"]["asr"] for r in ring]),
            threshold=cfg.pre_asr,
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            "forget_members_detectable",
            f"Before unlearning, the loss-threshold membership attack separates the forget client's clean training "
            f"samples from held-out ones of their class with AUC >= {cfg.pre_mia:g} (ring).",
            ("before unlearning MIA AUC", [r["before"]["mia"] for r in ring]),
            threshold=cfg.pre_mia,
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            "retrain_removes_backdoor",
            f"Retraining without the client brings backdoor success below {cfg.pre_retrain_asr:g} (ring).",
            ("Retrain ASR", [r["retrain"]["asr"] for r in ring]),
            threshold=cfg.pre_retrain_asr,
            sense="<=",
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            "rewind_deep",
            f"At sigma={cfg.claim_sigma:g} TRACE-DU rewinds to t* >= {cfg.rewind_frac:g} T (ring, T={T}): the "
            "unlearned model is not a retrain from the init.",
            ("TRACE-DU t*/T", [a["trace_du"]["t_star"] / T for a in arms]),
            threshold=cfg.rewind_frac,
            kind="precondition",
        )
    )
    key = cfg.rewind_metric
    report.add_claim(
        judge_superiority(
            "rewind_matters",
            f"At sigma={cfg.claim_sigma:g} the rewind has an effect: TRACE-DU's {key.upper()} (mean of "
            f"{cfg.noise_draws} noise draws) is lower than the no-rewind arm's (the same draws added to the final "
            f"model, the same rounds without the client) by at least {cfg.rewind_min_effect:g} (ring).",
            (f"TRACE-DU {key.upper()}", [a["trace_du"][key] for a in arms]),
            {f"no-rewind {key.upper()}": [a["no_rewind"][key] for a in arms]},
            higher_is_better=False,
            test="ttest",
            min_effect=cfg.rewind_min_effect,
            kind="precondition",
        )
    )
    pre = list(PRECONDITIONS)

    # (1) checks: guarantees of our code and of the theorem it implements
    topos = _topos(records)
    report.add_claim(
        judge_every(
            "bound_valid_strongly_convex",
            "Strongly convex model, on every graph: at every round the measured distance to an actual coupled retrain "
            "without the client is <= the computed bound, stacked (||X - X'||_F <= Delta_U(t)) and per node "
            "(||x_i - x'_i|| <= a_i^t); worst excess per seed.",
            (
                "max excess over rounds, graphs and nodes",
                [max(max(r[t]["bound"]["excess"], r[t]["bound"]["per_node_excess"]) for t in topos) for r in records],
            ),
            bound=0.0,
            tol=cfg.bound_tol,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "graph_bound_tighter_pointwise",
            "The graph-aware bound is <= the graph-agnostic one at every round, on every graph.",
            ("max(graph - agnostic)", [max(r[t]["bound"]["graph_minus_agnostic"] for t in topos) for r in records]),
            bound=0.0,
            tol=1e-12,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "sequential_bound_valid",
            "After the first request, the bound for {c1, c2} recomputed along the branch covers the distance to the "
            "coupled reference without both clients at every position of the branch, stacked and per node.",
            (
                "max excess along the branch",
                [
                    # a position of the branch with no reference to compare counts as 1 (a failure)
                    max(s["excess"], s["per_node_excess"], float(s["positions_expected"] - s["positions_compared"]))
                    for s in (r["sequential"] for r in records)
                ],
            ),
            bound=0.0,
            tol=cfg.bound_tol,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "released_noise_matches_certificate",
            "Every resumed run TraceDU releases (both bounds at every budget, the weak-certificate cell included, "
            "TRACE-DU at the claims' sigma; both graphs) "
            "starts at its rewind checkpoint + N(0, sigma^2): per coordinate, the perturbation over sigma has "
            f"mean 0 and variance 1 within {cfg.noise_z:g} standard errors, and sigma covers the bound at t*.",
            (
                "worst excess of the noise test",
                [max(r[t]["noise_excess"] for t in topos) for r in records],
            ),
            bound=0.0,
            tol=1e-9,
            kind="check",
        )
    )
    flags = [
        float(
            m["heuristic"]
            and m["wrong_regime_heuristic"]
            and m["low_smoothness_heuristic"]
            and not m["softmax_heuristic"]
        )
        for m in (r["mlp"] for r in records)
    ]
    report.add_claim(
        judge_every(
            "certificates_flag_heuristic",
            "The MLP's certificate is heuristic (also when a convex regime is declared for it), so is the softmax "
            "model's when its declared smoothness is below its own bound; the softmax model's with its own bound is "
            "not.",
            ("flags correct (1 = yes)", flags),
            bound=1.0,
            sense=">=",
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "sequential_rounds_within_two_retrains",
            f"Two sequential requests train exactly the rounds their certificates state (T - t* each), so together "
            f"at most 2T = {2 * T}: excess of the rounds trained over both.",
            (
                "max(trained - certified, total - 2T)",
                [
                    max(
                        max(abs(a - b) for a, b in zip(s["rounds_trained"], s["rounds"])),
                        sum(s["rounds_trained"]) - 2 * T,
                    )
                    for s in (r["sequential"] for r in records)
                ],
            ),
            bound=0.0,
            kind="check",
        )
    )

    report.add_claim(
        judge_every(
            "fresh_noise_per_request",
            f"Two sequential requests draw independent noise: the correlation of the second request's perturbation "
            f"with the first's on the nodes both perturb is within {cfg.noise_z:g} standard errors of 0.",
            (
                "|corr| - z/sqrt(n)",
                [
                    abs(s["noise_corr"]) - cfg.noise_z / math.sqrt(s["noise_n"])
                    for s in (r["sequential"] for r in records)
                ],
            ),
            bound=0.0,
            kind="check",
        )
    )

    # (2) claims: the efficiency claim at equal round budgets, per graph and budget
    for topo in topos:
        for j, R in enumerate(cfg.budgets):
            rows = [r[topo]["budget"][j] for r in records]
            cid = budget_claim_id(topo, R)
            claim = judge_k_of_n(
                cid,
                f"{_GRAPH[topo]}, budget R={R} retraining rounds (both bounds rewind to T-R={T - R}), eps="
                f"{cfg.epsilon:g}, delta={cfg.delta:g}: with the noise its certificate needs there, the graph-aware "
                f"bound reaches higher test accuracy than the graph-agnostic one in >= {kwin} of {n} seeds.",
                ("graph-aware accuracy", [x["graph"]["acc"] for x in rows]),
                {"graph-agnostic accuracy": [x["agnostic"]["acc"] for x in rows]},
                k=kwin,
                controls=[cid + AGNOSTIC_SIGMA],
            )
            c = report.add_claim(claim)
            report.add_claim(
                c.control(
                    cid + AGNOSTIC_SIGMA,
                    f"Control for {cid}: the graph-aware arm's rewind point with the noise the graph-agnostic bound "
                    "needs there (a fresh draw) does not pass the claim's rule.",
                    ("same t*, agnostic sigma, fresh noise: accuracy", [x["ctl_agnostic_sigma"]["acc"] for x in rows]),
                )
            )

    # (2b) a weak certificate at the tight budget: the graph-aware arm against exact retraining for the same rounds
    for topo in topos:
        if "weak" not in records[0][topo]:
            continue
        w = [r[topo]["weak"] for r in records]
        R, eps = w[0]["R"], w[0]["epsilon"]
        cid = weak_claim_id(topo, R, eps)
        lr = w[0].get("lr", {})
        grid = len(cfg.weak_lr_grid)
        for arm, key in (("graph-aware", "graph"), ("graph-agnostic", "agnostic"), ("retrain-R", "retrain_R")):
            report.set_tuning(
                f"eps{eps:g} {arm}",
                configs=grid,
                steps=R * k,
                note=f"lr {lr.get(key, cfg.lr)} picked from {list(cfg.weak_lr_grid)} on the dev seeds (same grid for "
                "every arm); steps = R rounds x K",
            )
        c = report.add_claim(
            judge_k_of_n(
                cid,
                f"{_GRAPH[topo]}, budget R={R} rounds, a weak certificate eps={eps:g}, delta={cfg.delta:g} (analytic "
                f"Gaussian): the graph-aware arm (mean of {cfg.noise_draws} draws) reaches higher test accuracy than "
                f"retraining from the init without the client for the same {R} rounds (exact, no noise) in >= "
                f"{kwin} of {n} seeds.",
                (f"eps{eps:g} graph-aware accuracy", [x["graph"]["acc"] for x in w]),
                {f"eps{eps:g} retrain-R accuracy": [x["retrain_R"]["acc"] for x in w]},
                k=kwin,
                controls=[cid + AGNOSTIC_BOUND],
            )
        )
        report.add_claim(
            c.control(
                cid + AGNOSTIC_BOUND,
                f"Control for {cid}: the graph-agnostic bound at the same budget and certificate (its own noise "
                "level and draws) does not pass the claim's rule.",
                (f"eps{eps:g} graph-agnostic accuracy", [x["agnostic"]["acc"] for x in w]),
            )
        )
        if "no_noise" not in w[0]:
            continue
        # its companion: does the accuracy win keep the backdoor? the graph-aware arm's ASR against retrain-R's
        aid = weak_asr_claim_id(topo, R, eps)
        c = report.add_claim(
            judge_non_inferiority(
                aid,
                f"{_GRAPH[topo]}, the cell of {cid}: the graph-aware arm's backdoor success (mean of "
                f"{cfg.noise_draws} draws) is within {cfg.asr_margin:g} of retraining from the init for the same {R} "
                "rounds.",
                (f"eps{eps:g} graph-aware ASR", [x["graph"]["asr"] for x in w]),
                {f"eps{eps:g} retrain-R ASR": [x["retrain_R"]["asr"] for x in w]},
                margin=cfg.asr_margin,
                higher_is_better=False,
                requires=["backdoor_learned", "retrain_removes_backdoor"],
                controls=[aid + NO_NOISE],
            )
        )
        report.add_claim(
            c.control(
                aid + NO_NOISE,
                f"Control for {aid}: the same rewind and rounds with the noise drawn but not added does not pass the "
                "claim's rule.",
                ("no-noise ASR", [x["no_noise"]["asr"] for x in w]),
            )
        )

    # (3) claims at the claims' sigma (ring), each against the no-rewind arm
    retr = [r["ring"]["retrain"] for r in records]
    for claim in (
        judge_non_inferiority(
            "unlearned_asr_close_to_retrain",
            f"At sigma={cfg.claim_sigma:g}, TRACE-DU's backdoor success after unlearning is within "
            f"{cfg.asr_margin:g} of retraining from scratch.",
            ("TRACE-DU ASR", [a["trace_du"]["asr"] for a in arms]),
            {"Retrain ASR": [x["asr"] for x in retr]},
            margin=cfg.asr_margin,
            higher_is_better=False,
            requires=pre,
            controls=["unlearned_asr_close_to_retrain" + NO_REWIND],
        ),
        judge_non_inferiority(
            "unlearned_mia_close_to_retrain",
            f"At sigma={cfg.claim_sigma:g}, the membership AUC of the forgotten client's samples after unlearning is "
            f"within {cfg.mia_margin:g} of retraining from scratch.",
            ("TRACE-DU MIA AUC", [a["trace_du"]["mia"] for a in arms]),
            {"Retrain MIA AUC": [x["mia"] for x in retr]},
            margin=cfg.mia_margin,
            higher_is_better=False,
            requires=pre,
            controls=["unlearned_mia_close_to_retrain" + NO_REWIND],
        ),
        judge_superiority(
            "asr_below_fine_tune",
            f"At sigma={cfg.claim_sigma:g}, TRACE-DU removes the backdoor better than fine-tuning on the remaining "
            "clients for the same number of rounds.",
            ("TRACE-DU ASR", [a["trace_du"]["asr"] for a in arms]),
            {"Fine-tune ASR": [a["fine_tune"]["asr"] for a in arms]},
            higher_is_better=False,
            test="ttest",
            requires=pre,
            controls=["asr_below_fine_tune" + NO_REWIND],
        ),
    ):
        key = "mia" if "mia" in claim.id else "asr"
        c = report.add_claim(claim)
        report.add_claim(
            c.control(
                claim.id + NO_REWIND,
                f"Control for {claim.id}: the same noise added to the final model (no rewind) and the same number of "
                "rounds without the client does not pass the claim's rule.",
                (f"no-rewind {key.upper()}", [a["no_rewind"][key] for a in arms]),
            )
        )

    _tables(cfg, records, report)
    _figures(cfg, records, report)


def _ms(v) -> str:
    v = np.asarray(v, float)
    return f"{v.mean():.3f} ± {v.std(ddof=1):.3f}" if v.size > 1 else f"{v.mean():.3f}"


def _tables(cfg: Config, records, report: Report) -> None:
    T = cfg.rounds
    arms = [r["claim_arms"] for r in records]
    ring = [r["ring"] for r in records]
    methods = [
        ("before unlearning", [r["before"] for r in ring], "-", "-"),
        ("Retrain", [r["retrain"] for r in ring], str(T), "0"),
        ("TRACE-DU", [a["trace_du"] for a in arms], _ms([a["trace_du"]["rounds"] for a in arms]), None),
        ("no rewind (control)", [a["no_rewind"] for a in arms], _ms([a["no_rewind"]["rounds"] for a in arms]), str(T)),
        ("rewind, noise not added", [a["no_noise"] for a in arms], _ms([a["no_noise"]["rounds"] for a in arms]), None),
        ("Fine-tune", [a["fine_tune"] for a in arms], _ms([a["fine_tune"]["rounds"] for a in arms]), str(T)),
        ("Retrain, same rounds", [a["retrain_R"] for a in arms], _ms([a["retrain_R"]["rounds"] for a in arms]), "0"),
        ("Last+noise", [a["last_noise"] for a in arms], "0", str(T)),
    ]
    ts = _ms([a["trace_du"]["t_star"] for a in arms])
    report.add_table(
        "methods",
        [
            {
                "method": m,
                "t*": ts if t is None else t,
                "rounds retrained": rr,
                "accuracy": _ms([x["acc"] for x in v]),
                "backdoor ASR": _ms([x["asr"] for x in v]),
                "MIA AUC": _ms([x["mia"] for x in v]),
            }
            for m, v, rr, t in methods
        ],
        f"16-node ring, mean ± sd over {len(records)} seeds at sigma={cfg.claim_sigma:g}, eps={cfg.epsilon:g}, "
        f"delta={cfg.delta:g}; Last+noise sigma = {_ms([a['last_noise']['sigma'] for a in arms])} (calibrated to "
        "the bound at T).",
    )
    rows = []
    for topo in _topos(records):
        for j, R in enumerate(cfg.budgets):
            b = [r[topo]["budget"][j] for r in records]
            g = np.array([x["graph"]["acc"] for x in b])
            a = np.array([x["agnostic"]["acc"] for x in b])
            c = np.array([x["ctl_agnostic_sigma"]["acc"] for x in b])
            rr = np.array([x["retrain_R"]["acc"] for x in b])
            rows.append(
                {
                    "graph": _GRAPH[topo],
                    "R": R,
                    "t*": T - R,
                    "sigma graph-aware": _ms([x["graph"]["sigma"] for x in b]),
                    "sigma agnostic": _ms([x["agnostic"]["sigma"] for x in b]),
                    "acc graph-aware": _ms(g),
                    "acc agnostic": _ms(a),
                    "acc control": _ms(c),
                    "wins graph": f"{int((g > a).sum())}/{len(g)}",
                    "wins control": f"{int((c > a).sum())}/{len(c)}",
                    "acc retrain R rounds": _ms([x["retrain_R"]["acc"] for x in b]),
                    "wins graph vs retrain R": f"{int((g > rr).sum())}/{len(g)}",
                    "log10 bound regime-agnostic": _ms([x["regime_agnostic_log10_bound"] for x in b]),
                    "acc retrain T": _ms([r[topo]["retrain"]["acc"] for r in records]),
                }
            )
    if "weak" in records[0]["ring"]:
        report.add_table(
            "weak_certificate",
            [
                {
                    "graph": _GRAPH[topo],
                    "R": records[0][topo]["weak"]["R"],
                    "eps": records[0][topo]["weak"]["epsilon"],
                    "sigma graph-aware": _ms([r[topo]["weak"]["graph"]["sigma"] for r in records]),
                    "sigma agnostic": _ms([r[topo]["weak"]["agnostic"]["sigma"] for r in records]),
                    "acc graph-aware": _ms([r[topo]["weak"]["graph"]["acc"] for r in records]),
                    "acc agnostic": _ms([r[topo]["weak"]["agnostic"]["acc"] for r in records]),
                    "acc retrain R rounds": _ms([r[topo]["weak"]["retrain_R"]["acc"] for r in records]),
                    "ASR graph-aware": _ms([r[topo]["weak"]["graph"]["asr"] for r in records]),
                    "ASR retrain R rounds": _ms([r[topo]["weak"]["retrain_R"]["asr"] for r in records]),
                    "ASR no noise": _ms([r[topo]["weak"].get("no_noise", {"asr": math.nan})["asr"] for r in records]),
                    "MIA graph-aware": _ms([r[topo]["weak"]["graph"]["mia"] for r in records]),
                    "lr graph / agnostic / retrain": "/".join(
                        f"{records[0][topo]['weak'].get('lr', {}).get(key, cfg.lr):g}"
                        for key in ("graph", "agnostic", "retrain_R")
                    ),
                    "acc retrain R at training lr": _ms(
                        [r[topo]["weak"].get("retrain_R_train_lr", {"acc": math.nan})["acc"] for r in records]
                    ),
                }
                for topo in _topos(records)
            ],
            "A weak certificate (analytic Gaussian) at the tight budget: the certified arms against exact retraining "
            "from the init for the same R rounds, each arm's R rounds at its own step size picked on the dev seeds "
            "from one grid; the training-lr retrain is the untuned baseline of the earlier reference runs.",
        )
    report.add_table(
        "equal_budgets",
        rows,
        f"At an equal budget of R retraining rounds each bound calibrates its own noise at t* = T - R (accuracy: mean "
        f"of {cfg.noise_draws} independent draws per arm and seed); the control uses the graph-agnostic noise level "
        "at the same t* with its own draws (the same distribution as the agnostic arm: an A/A null). Retrain R "
        "rounds: exact retraining from the init without the client for the same R rounds, no noise. The "
        "regime-agnostic bound (the non-convex rho on this convex model) at T - R is given as log10: no finite "
        "noise level of use certifies there.",
    )
    sweep = []
    for topo in _topos(records):
        for j, s in enumerate(cfg.sigmas):
            sweep.append(
                {
                    "graph": _GRAPH[topo],
                    "sigma": s,
                    "psi*": f"{sensitivity_threshold(cfg.epsilon, cfg.delta, s):.3f}",
                    "t* graph-aware": _ms([r[topo]["t_star_sweep"][j]["graph"] for r in records]),
                    "t* agnostic": _ms([r[topo]["t_star_sweep"][j]["agnostic"] for r in records]),
                    "t* regime-agnostic": _ms([r[topo]["t_star_sweep"][j]["regime_agnostic"] for r in records]),
                }
            )
    report.add_table("sigma_sweep", sweep, f"Rewind point per noise level and bound (T={T}; from the bound only).")
    report.add_table(
        "bound_tightness",
        [
            {
                "seed": r["seed"],
                **{
                    f"{t} {q}": v
                    for t in _topos(records)
                    for q, v in (
                        ("deg(c)", r[t]["degree"]),
                        ("Delta(T) graph", f"{r[t]['bound']['graph'][-1]:.2f}"),
                        ("Delta(T) agnostic", f"{r[t]['bound']['agnostic'][-1]:.2f}"),
                        ("dist(T)", f"{r[t]['bound']['dist'][-1]:.2f}"),
                        ("max dist/Delta", f"{r[t]['bound']['max_ratio']:.4f}"),
                    )
                },
                "sequential t*": r["sequential"]["t_star"],
                "sequential rounds": sum(r["sequential"]["rounds"]),
            }
            for r in records
        ],
        "The bound against the coupled retrain (ratio 1 at round 1 is equality: the first injection is exact).",
    )
    c = records[0]["training_curve"]
    report.add_table(
        "learned_diagnostics",
        [
            {
                "round": t,
                "accuracy": f"{np.mean([r['training_curve']['acc'][i] for r in records]):.3f}",
                "backdoor ASR": f"{np.mean([r['training_curve']['asr'][i] for r in records]):.3f}",
                "MIA AUC": f"{np.mean([r['training_curve']['mia'][i] for r in records]):.3f}",
            }
            for i, t in enumerate(c["round"])
        ],
        "Gossip training on the ring learns: accuracy, backdoor success and membership signal over rounds.",
    )
    report.add_table(
        "mlp_heuristic",
        [
            {
                "seed": r["seed"],
                "heuristic": r["mlp"]["heuristic"],
                "low smoothness heuristic": r["mlp"]["low_smoothness_heuristic"],
                "violations": "; ".join(r["mlp"]["violations"]),
                "t*": r["mlp"]["t_star"],
                "acc before": f"{r['mlp']['before']['acc']:.3f}",
                "acc after": f"{r['mlp']['after']['acc']:.3f}",
            }
            for r in records
        ],
        "Non-convex MLP: rho = 1 + lr*beta makes the bound explode after round 1; the certificate says heuristic.",
    )
    report.metrics.update({"config": asdict(cfg)})


def _figures(cfg: Config, records, report: Report) -> None:
    from matplotlib.figure import Figure

    r0 = records[0]
    fig = Figure(figsize=(10, 4.0), layout="constrained")
    for ax, topo in zip(fig.subplots(1, 2), _topos(records)):
        b = r0[topo]["bound"]
        t = np.arange(len(b["graph"]))
        ax.plot(t, b["graph"], label="TRACE-DU (graph-aware)")
        ax.plot(t, b["agnostic"], ls="--", label="graph-agnostic (scalar)")
        ax.plot(t, b["dist"], color="k", lw=1, label="measured ||X - X_retrain||_F")
        ax.axhline(
            sensitivity_threshold(cfg.epsilon, cfg.delta, cfg.claim_sigma),
            color="0.5",
            lw=0.8,
            ls="-.",
            label=f"psi* at sigma={cfg.claim_sigma:g}",
        )
        for R in cfg.budgets:
            ax.axvline(cfg.rounds - R, color="0.8", lw=0.8)
        ax.set_xlabel("round t")
        ax.set_ylabel("sensitivity Delta_U(t)")
        ax.set_title(f"{_GRAPH[topo]} (seed {r0['seed']}); grey lines: t* = T - R", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    report.add_figure("sensitivity_vs_round", fig, "Bounds on the distance to the retrained trajectory.")

    fig = Figure(figsize=(10, 3.8), layout="constrained")
    for ax, topo in zip(fig.subplots(1, 2), _topos(records)):
        for j, R in enumerate(cfg.budgets):
            b = [r[topo]["budget"][j] for r in records]
            g = [x["graph"]["acc"] for x in b]
            a = [x["agnostic"]["acc"] for x in b]
            ax.scatter(a, g, label=f"R={R}", s=18)
        lo, hi = ax.get_xlim()
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.8)
        ax.set_xlim(0, max(hi, 0.3))
        ax.set_ylim(0, max(hi, 0.3) * 1.6)
        ax.set_xlabel("graph-agnostic accuracy")
        ax.set_ylabel("graph-aware accuracy")
        ax.set_title(f"{_GRAPH[topo]}: equal budgets, one point per seed", fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    report.add_figure("equal_budgets", fig, "Above the diagonal: the graph-aware bound is more accurate.")

    arms = [r["claim_arms"] for r in records]
    names = [
        ("Retrain", [r["ring"]["retrain"] for r in records]),
        ("TRACE-DU", [a["trace_du"] for a in arms]),
        ("no rewind", [a["no_rewind"] for a in arms]),
        ("no noise", [a["no_noise"] for a in arms]),
        ("Fine-tune", [a["fine_tune"] for a in arms]),
        ("Retrain R", [a["retrain_R"] for a in arms]),
        ("Last+noise", [a["last_noise"] for a in arms]),
        ("before", [r["ring"]["before"] for r in records]),
    ]
    fig = Figure(figsize=(11, 3.6), layout="constrained")
    for ax, (key, lab) in zip(
        fig.subplots(1, 3), (("acc", "test accuracy"), ("asr", "backdoor success"), ("mia", "MIA AUC (forget client)"))
    ):
        v = [[x[key] for x in xs] for _, xs in names]
        ax.bar(range(len(names)), [np.mean(a) for a in v], yerr=[np.std(a) for a in v], capsize=3)
        ax.set_xticks(range(len(names)), [a for a, _ in names], rotation=30, fontsize=8)
        ax.set_ylabel(lab)
        ax.set_title(f"{lab} (ring, sigma={cfg.claim_sigma:g})", fontsize=9)
    report.add_figure("metrics_per_method", fig, "Mean ± sd over seeds.")

    c = r0["training_curve"]
    fig = Figure(figsize=(5.5, 3.6), layout="constrained")
    ax = fig.subplots()
    for key, lab in (("acc", "accuracy"), ("asr", "backdoor success"), ("mia", "MIA AUC")):
        ax.plot(c["round"], c[key], marker=".", label=lab)
    ax.set_xlabel("round")
    ax.set_ylabel("value (mean over kept nodes)")
    ax.set_title(f"Gossip training on the ring (seed {r0['seed']})")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    report.add_figure("training_curve", fig, "The learned component: the gossip-trained model over rounds.")
