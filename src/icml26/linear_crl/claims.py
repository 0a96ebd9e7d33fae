"""Reproduction, the evidence: ``judge(config, records, report)`` turns the per-seed records of
:func:`icml26.linear_crl.experiment.measure` into judged statements, tables and figures.

Seeds are the units (one DAG, mixing and set of environments per seed and latent dimension; values pooled over
``d`` are averaged per seed first).  At ``K = 2d`` environments, ``n = 1000`` samples each:

* preconditions ``single_env_ica_fails_d*`` (weak heterogeneity, the paper's setting): FastICA fitted on ONE
  environment and applied to all -- the strongest simple alternative to combining environments -- does not recover
  the latents (mean MCC <= ``recovery_mcc``); ``friendly_baseline_recovers``: where LiNGCReL's assumption holds
  (one noise family per latent) the LiNGCReL-style baseline does (mean MCC >= ``recovery_mcc``);
* claims, each with control statements ``<claim>_ctl_<arm>``: the claim's own rule applied to a control arm measured
  on the same seeds, which holds when the arm fails the rule:

  - ``recovery_mcc_d*``: CREATOR's MCC >= ``recovery_mcc``.  What the MCC claims credit is mostly CREATOR's
    geometric matching of ICA rows across environments: the sign-aligned mean of its matched row groups, with no
    ordering projection, pruning or intersection, comes within about 0.01 of CREATOR's MCC (table recovery,
    column "matched-rows mean").  Controls: env-0 ICA (one environment's ICA, empty graph: no environments
    combined) and LiNGCReL-like (the same ICA rows and downstream steps, rows matched by their noise laws: CREATOR
    minus its geometric matching; in the weak-heterogeneity regime its row groups are 0% pure, i.e. random);
  - ``beats_ica_mcc_d*``: CREATOR's MCC exceeds env-0 ICA's and pooled ICA's by >= ``mcc_margin``.  Control:
    LiNGCReL-like.  (v3 also claimed "beats LiNGCReL-like"; its only control, env-0 ICA, beats LiNGCReL-like by
    more than the margin and was "rejected" only for lack of power, and a random-matching baseline adds nothing
    beyond beats_ica, so the claim was dropped.  LiNGCReL-like stays in the tables and as a control arm.)
  - ``lower_shd_d*``: CREATOR's SHD at the best relabelling is lower than both trivial graphs' -- the complete DAG
    in CREATOR's own order (CREATOR without pruning) and the empty graph (what both ICA arms return) -- by >=
    ``shd_margin_pairs`` of the ``d(d-1)/2`` node pairs.  Control: CREATOR with random pruning (its order and its own
    number of edges, the edges drawn at random from the complete DAG in that order): the method minus the
    pruning's judgement of which edges, otherwise equal.  LiNGCReL-like is not a baseline of this claim;
  - ``disentanglement_gain_d*`` (d >= 5, each requiring its ``single_env_ica_fails_d*``): on the latents whose
    parents are not all surrounding (the only ones step 3 can change), CREATOR's per-latent LocR^2 exceeds
    CREATOR-without-intersection's (same ICA rows, order and graph; step 3 skipped) by >= ``disentangle_margin``.
    Control: CREATOR intersecting with the spans of random later NON-children (as many as the children; all else
    unchanged): the intersection machinery without what the claim credits, the right partners;
  - ``friendly_recovery``: one noise family per latent, CREATOR's MCC >= ``recovery_mcc``.  Control: env-0 ICA;
* checks of our own code (each has a mutant test in tests/linear_crl/test_check_mutants.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from icml26.core import HOLDS, Report, judge_every, judge_superiority, judge_threshold

if TYPE_CHECKING:
    from .experiment import Config

__all__ = ["judge", "ARMS", "INVARIANCE_TOL", "EXACT_TOL", "control_id"]

ARMS = {
    "creator": "CREATOR",
    "no_intersection": "CREATOR without intersection",
    "lingcrel": "LiNGCReL-like",
    "pooled": "pooled ICA",
    "env0_ica": "env-0 ICA",
    "random_intersection": "CREATOR intersecting random non-children",
    "no_pruning": "CREATOR without pruning",
    "random_pruning": "CREATOR with random pruning",
    "matched_rows_mean": "matched-rows mean",
    "lingam": "DirectLiNGAM",
}
REGIMES = {
    "env": "weak heterogeneity (one noise family per environment)",
    "node": "LiNGCReL-friendly (one noise family per latent)",
}
INVARIANCE_TOL = 1e-8
EXACT_TOL = 1e-8
_CTL_PHRASE = {
    "env0_ica": "env-0 ICA (FastICA on environment 0 alone, applied to all; empty graph: no environments combined)",
    "lingcrel": "LiNGCReL-like (CREATOR's ordering, pruning and disentanglement on ICA rows matched across "
    "environments by their noise laws: CREATOR without its geometric matching)",
    "no_intersection": "CREATOR without intersection (the same ICA rows, order and graph; step 3 skipped)",
    "random_intersection": "CREATOR intersecting each latent's span with those of random later NON-children (as "
    "many as its children; same ICA rows, order and graph)",
    "no_pruning": "CREATOR without pruning (same ICA rows and order; every earlier node a parent: the complete DAG)",
    "random_pruning": "CREATOR with random pruning (CREATOR's order and its own number of edges, the edges drawn at "
    "random from the complete DAG in that order)",
}


def control_id(claim_id: str, arm: str) -> str:
    """The id of claim ``claim_id``'s control statement for control arm ``arm``."""
    return f"{claim_id}_ctl_{arm}"


def _cell(rec: dict, regime: str, d: int, K: int) -> dict:
    return next(c for c in rec["cells"] if c["regime"] == regime and c["d"] == d and c["K"] == K)


def _controlled(report: Report, claim, arms: dict[str, list], what: str) -> None:
    """Add ``claim`` and one control statement per arm in ``arms`` (name -> values, same seeds)."""
    c = report.add_claim(claim)
    for arm, vals in arms.items():
        report.add_claim(
            c.control(
                control_id(claim.id, arm),
                f"Control for {claim.id}: {_CTL_PHRASE[arm]} does not pass the claim's rule ({what})",
                (f"{ARMS[arm]} {claim.method['name'].split(' ', 1)[1]}", vals),
            )
        )


def _intersected_gain_values(records: list[dict], cfg: Config, arm: str, d: int) -> tuple[list[float], list[int]]:
    """Per seed whose d-latent DAG has latents step 3 can change: the mean per-latent LocR^2 of ``arm`` over them."""
    vals, idx = [], []
    for i, r in enumerate(records):
        c = _cell(r, "env", d, cfg.claim_factor * d)
        if c["intersected_nodes"]:
            vals.append(float(np.mean([c[arm]["node_locr2"][j] for j in c["intersected_nodes"]])))
            idx.append(i)
    return vals, idx


def judge(config: Config, records: list[dict], report: Report) -> None:
    cfg = config
    seeds = list(report.seeds or range(len(records)))
    f, alpha, thr, m = cfg.claim_factor, cfg.alpha, cfg.recovery_mcc, cfg.mcc_margin
    _budgets(cfg, records, report)

    # (0) preconditions
    for d in cfg.dims:
        K = f * d
        report.add_claim(
            judge_threshold(
                f"single_env_ica_fails_d{d}",
                f"Weak heterogeneity (d={d}, K={K}, n={cfg.n_samples}): FastICA fitted on one environment and applied "
                f"to all (the strongest simple alternative to combining environments) does not recover the latents: "
                f"mean MCC <= {thr:g}",
                ("env-0 ICA MCC", [_cell(r, "env", d, K)["env0_ica"]["mcc"] for r in records]),
                threshold=thr,
                sense="<=",
                kind="precondition",
            )
        )
    units = [s for s in seeds for _ in cfg.dims]
    if "node" in cfg.regimes:
        report.add_claim(
            judge_threshold(
                "friendly_baseline_recovers",
                f"Where LiNGCReL's assumption holds (one noise family per latent, K=2d, d in {list(cfg.dims)}), the "
                f"LiNGCReL-style baseline recovers the latents: mean MCC >= {thr:g} (per seed, averaged over d)",
                ("LiNGCReL-like MCC (regime node)", _over_d(records, cfg, "node", "lingcrel", "mcc")),
                threshold=thr,
                kind="precondition",
                units=units,
            )
        )

    # (1) claims in the weak-heterogeneity regime, per d
    for d in cfg.dims:
        K = f * d
        pre = [f"single_env_ica_fails_d{d}"]
        cells = [_cell(r, "env", d, K) for r in records]

        def v(arm: str, key: str = "mcc", cells=cells) -> list[float]:
            return [float(c[arm][key]) for c in cells]

        cid = f"recovery_mcc_d{d}"
        _controlled(
            report,
            judge_threshold(
                cid,
                f"Weak heterogeneity, d={d}, K={K}, n={cfg.n_samples}: CREATOR recovers the latents, mean MCC >= "
                f"{thr:g} (credits combining environments by CREATOR's geometric matching of ICA rows)",
                (f"CREATOR MCC (d={d})", v("creator")),
                threshold=thr,
                requires=pre,
                controls=[control_id(cid, "env0_ica"), control_id(cid, "lingcrel")],
            ),
            {"env0_ica": v("env0_ica"), "lingcrel": v("lingcrel")},
            f"mean MCC >= {thr:g}",
        )
        cid = f"beats_ica_mcc_d{d}"
        _controlled(
            report,
            judge_superiority(
                cid,
                f"Weak heterogeneity, d={d}, K={K}: CREATOR's MCC exceeds both single-environment ICA's (env 0, "
                f"applied to all) and pooled ICA's by >= {m:g} on average (one-sided paired tests over seeds; credits "
                "combining environments by CREATOR's geometric matching)",
                (f"CREATOR MCC (d={d})", v("creator")),
                {f"env-0 ICA MCC (d={d})": v("env0_ica"), f"pooled ICA MCC (d={d})": v("pooled")},
                test=cfg.test,
                alpha=alpha,
                min_effect=m,
                requires=pre,
                controls=[control_id(cid, "lingcrel")],
            ),
            {"lingcrel": v("lingcrel")},
            f"beat env-0 and pooled ICA's MCC by >= {m:g}",
        )
        if d < 5:  # at d=3 the complete DAG in CREATOR's order misses < 1 pair on average: no margin to clear
            continue
        cid, msh = f"lower_shd_d{d}", cfg.shd_margin_pairs * d * (d - 1) / 2
        _controlled(
            report,
            judge_superiority(
                cid,
                f"Weak heterogeneity, d={d}, K={K}: CREATOR's SHD at the best relabelling of its latents is lower "
                f"than both trivial graphs' -- the complete DAG in CREATOR's own order (CREATOR without pruning) and "
                f"the empty graph (what both ICA arms return) -- by >= {msh:g} edges ({cfg.shd_margin_pairs:g} of the "
                f"{d * (d - 1) // 2} node pairs) on average (credits "
                "the pruning's choice of edges: its control keeps CREATOR's order and edge count and picks the edges "
                "at random)",
                (f"CREATOR SHD (d={d})", v("creator", "shd_best")),
                {
                    f"complete DAG in CREATOR's order SHD (d={d})": v("no_pruning", "shd_best"),
                    f"empty graph SHD (d={d})": v("pooled", "shd_best"),
                },
                higher_is_better=False,
                test=cfg.test,
                alpha=alpha,
                min_effect=msh,
                requires=pre,
                controls=[control_id(cid, "random_pruning")],
            ),
            {"random_pruning": v("random_pruning", "shd_best")},
            "a best-relabelling SHD lower than the complete DAG's in CREATOR's order and the empty graph's by >= "
            f"{msh:g} edges",
        )

    # (2) the disentanglement step, per d >= 5, on the latents it can change
    md = cfg.disentangle_margin
    for d in [x for x in cfg.dims if x >= 5]:
        cre, idx = _intersected_gain_values(records, cfg, "creator", d)
        cid = f"disentanglement_gain_d{d}"
        _controlled(
            report,
            judge_superiority(
                cid,
                f"Weak heterogeneity, d={d}, K={f * d}: on the latents whose parents are not all surrounding (the only "
                "ones the intersection step can change), CREATOR's per-latent LocR^2 exceeds that of CREATOR without "
                f"intersection (same ICA rows, order and graph) by >= {md:g} on average (per seed, averaged over "
                "those latents; seeds without such latents drop out; credits intersecting with the CHILDREN's spans)",
                (f"CREATOR LocR2 (intersected latents, d={d})", cre),
                {
                    f"CREATOR without intersection LocR2 (d={d})": _intersected_gain_values(
                        records, cfg, "no_intersection", d
                    )[0]
                },
                test=cfg.test,
                alpha=alpha,
                min_effect=md,
                units=[seeds[i] for i in idx],
                requires=[f"single_env_ica_fails_d{d}"],
                controls=[control_id(cid, "random_intersection")],
            ),
            {"random_intersection": _intersected_gain_values(records, cfg, "random_intersection", d)[0]},
            f"beat the no-intersection arm's LocR^2 on those latents by >= {md:g}",
        )

    # (3) where LiNGCReL's assumption holds
    if "node" in cfg.regimes:
        cid = "friendly_recovery"
        _controlled(
            report,
            judge_threshold(
                cid,
                f"One noise family per latent (K=2d, d in {list(cfg.dims)}): CREATOR's mean MCC >= {thr:g} (per "
                "seed, averaged over d)",
                ("CREATOR MCC (regime node)", _over_d(records, cfg, "node", "creator", "mcc")),
                threshold=thr,
                units=units,
                requires=["friendly_baseline_recovers"],
                controls=[control_id(cid, "env0_ica")],
            ),
            {"env0_ica": _over_d(records, cfg, "node", "env0_ica", "mcc")},
            f"mean MCC >= {thr:g}",
        )

    _checks(cfg, records, report)
    _tables(cfg, records, report)
    _figures(cfg, records, report)
    report.metrics = {
        "n_seeds": len(records),
        "mcc_env_K2d": {
            a: {d: float(np.mean([_cell(r, "env", d, f * d)[a]["mcc"] for r in records])) for d in cfg.dims}
            for a in ("creator", "no_intersection", "lingcrel", "pooled", "env0_ica")
        },
        "identifiability_warnings": int(sum(c["identifiability_warnings"] for r in records for c in r["cells"])),
    }
    _notes(cfg, records, report)


def _over_d(records: list[dict], cfg: Config, regime: str, arm: str, key: str) -> list[float]:
    return [float(_cell(r, regime, d, cfg.claim_factor * d)[arm][key]) for r in records for d in cfg.dims]


def _budgets(cfg: Config, records: list[dict], report: Report) -> None:
    note = (
        f"FastICA (logcosh, unit-variance whitening) with max_iter={cfg.max_iter}, restarts={cfg.ica_restarts}, "
        "library defaults, nothing tuned; the same random state for every arm"
    )
    report.set_tuning(
        "CREATOR",
        configs=1,
        steps=cfg.max_iter,
        note=f"{note}; rank_tol={cfg.rank_tol}, intersect_tol={cfg.intersect_tol} (spec defaults)",
    )
    report.set_tuning(
        "CREATOR without intersection", configs=1, steps=cfg.max_iter, note="CREATOR's own ICA rows and thresholds"
    )
    report.set_tuning("LiNGCReL-like", configs=1, steps=cfg.max_iter, note=f"{note}; the same ICA fits as CREATOR")
    report.set_tuning("pooled ICA", configs=1, steps=cfg.max_iter, note=f"{note}; one fit on the pooled data")
    report.set_tuning("env-0 ICA", configs=1, steps=cfg.max_iter, note=f"{note}; one fit on environment 0")
    if all(r["lingam"] for r in records):
        report.set_tuning(
            "DirectLiNGAM", configs=1, steps=0, note="lingam.DirectLiNGAM defaults on the pooled TRUE latents"
        )


def _checks(cfg: Config, records: list[dict], report: Report) -> None:
    f = cfg.claim_factor
    for d in cfg.dims:
        ck = [r["checks"][f"oracle_d{d}"] for r in records]
        report.add_claim(
            judge_every(
                f"oracle_exact_d{d}",
                f"On exact (infinite-sample) ICA rows, d={d}, K={f * d}: CREATOR returns a causal order that is a "
                "linear extension of the true DAG, SHD = 0, and LocR^2 = 1 to 1e-8",
                (
                    "(1 - LocR2) + SHD + order errors",
                    [c["one_minus_locr2"] + c["shd"] + (not c["order_ok"]) for c in ck],
                ),
                bound=EXACT_TOL,
                kind="check",
            )
        )
    report.add_claim(
        judge_every(
            "post_ica_invariance",
            "CREATOR's graph and LocR^2 do not change when its ICA rows are permuted across and within environments, "
            "sign-flipped and rescaled, and the observations are changed by an invertible linear map",
            (
                "changed adjacency entries + |delta LocR2|",
                [_cell(r, "env", d, f * d)["invariance"] for r in records for d in cfg.dims],
            ),
            bound=INVARIANCE_TOL,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "metric_closed_forms",
            "LocR^2 = 1 on true latents mixed within the ~sur class, permuted and rescaled; MCC = 1 on permuted, "
            "rescaled latents; SHD of a graph against its relabelled copy = 0, also at the best relabelling",
            ("largest deviation", [r["checks"][f"metrics_d{d}"] for r in records for d in cfg.dims]),
            bound=1e-10,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "same_ica_rows_for_environment_arms",
            "CREATOR, its three ablations (without intersection, random non-child intersection, without pruning) and "
            "the LiNGCReL-style baseline start from identical per-environment ICA rows (budget parity; each ablation "
            "differs from CREATOR in one step only)",
            ("cells with different ICA rows", [float(not c["same_ica_rows"]) for r in records for c in r["cells"]]),
            bound=0.5,  # counts: < 0.5 means none
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "best_relabelling_shd_le_matched",
            "For every arm and cell, the SHD at the best relabelling is at most the SHD under the LocR^2 matching "
            "(the minimum over permutations includes that matching)",
            (
                "best-relabelling SHD - matched SHD",
                [
                    float(c[a]["shd_best"] - c[a]["shd"])
                    for r in records
                    for c in r["cells"]
                    for a in (
                        "creator",
                        "no_intersection",
                        "random_intersection",
                        "no_pruning",
                        "lingcrel",
                        "pooled",
                        "env0_ica",
                    )
                ],
            ),
            bound=0.5,  # integers: <= 0.5 means <= 0
            kind="check",
        )
    )


def _ms(xs) -> str:
    xs = np.asarray(xs, dtype=float)
    return f"{xs.mean():.3f} ± {xs.std(ddof=1) if xs.size > 1 else 0.0:.3f}"


_TABLE_ARMS = ("creator", "no_intersection", "lingcrel", "pooled", "env0_ica")


def _tables(cfg: Config, records: list[dict], report: Report) -> None:
    rows = []
    with_lingam = all(r["lingam"] for r in records)
    Ks = sorted({c["K"] // c["d"] for c in records[0]["cells"]})
    for regime in cfg.regimes:
        for d in cfg.dims:
            for fk in Ks:
                cells = [_cell(r, regime, d, fk * d) for r in records]
                row: dict = {"regime": regime, "d": d, "K": fk * d}
                for key, label in (("mcc", "MCC"), ("shd_best", "SHD (best relabelling)"), ("locr2", "LocR2")):
                    for a in _TABLE_ARMS:
                        row[f"{ARMS[a]} {label}"] = _ms([c[a][key] for c in cells])
                row["matched-rows mean MCC"] = _ms([c["matched_rows_mean"]["mcc"] for c in cells])
                row["CREATOR without pruning SHD (best relabelling)"] = _ms(
                    [c["no_pruning"]["shd_best"] for c in cells]
                )
                row["CREATOR with random pruning SHD (best relabelling)"] = _ms(
                    [c["random_pruning"]["shd_best"] for c in cells]
                )
                if with_lingam and fk == cfg.claim_factor:
                    row["DirectLiNGAM (true latents) SHD"] = _ms([c["lingam"]["shd"] for c in cells])
                rows.append(row)
    report.add_table(
        "recovery",
        rows,
        f"Mean ± sd over {len(records)} seeds, n={cfg.n_samples} per environment, p={cfg.n_obs}. MCC: mean |corr| "
        "after the Hungarian matching; SHD at the best relabelling of the estimated latents; LocR^2 (the paper's "
        "metric, recovery up to surrounded parents). env-0 ICA and pooled ICA return the empty graph. matched-rows "
        "mean: the sign-aligned mean of each of CREATOR's matched ICA row groups (the geometric matching alone, no "
        "ordering projection, pruning or intersection). CREATOR without pruning: the complete DAG in its order; "
        "CREATOR with random pruning: as many edges as CREATOR's, drawn at random from that complete DAG."
        + (
            " DirectLiNGAM is fed the TRUE latents pooled over environments (a graph-only reference)."
            if with_lingam
            else ""
        ),
    )
    dis = []
    for d in cfg.dims:
        cells = [_cell(r, "env", d, cfg.claim_factor * d) for r in records]
        have = [c for c in cells if c["intersected_nodes"]]
        row = {
            "d": d,
            "seeds with such latents": len(have),
            "latents per seed": _ms([len(c["intersected_nodes"]) for c in cells]),
        }
        for a in ("creator", "no_intersection", "random_intersection", "env0_ica"):
            row[f"{ARMS[a]} LocR2 on them"] = (
                _ms([np.mean([c[a]["node_locr2"][j] for j in c["intersected_nodes"]]) for c in have]) if have else "-"
            )
        row["CREATOR - no intersection (all latents) LocR2"] = _ms(
            [c["creator"]["locr2"] - c["no_intersection"]["locr2"] for c in cells]
        )
        row["CREATOR - no intersection MCC"] = _ms([c["creator"]["mcc"] - c["no_intersection"]["mcc"] for c in cells])
        dis.append(row)
    report.add_table(
        "disentanglement",
        dis,
        "Weak heterogeneity, K=2d: the latents whose parents are not all surrounding (sur(i) != pa(i), the only ones "
        "step 3 can change), and the per-latent LocR^2 there with and without the intersection step. MCC does not "
        "see the step: both arms' features correlate with the same latent; LocR^2 asks whether the feature leaves "
        "the span of the latent and its surrounded parents.",
    )
    diag = []
    for regime in cfg.regimes:
        for d in cfg.dims:
            cells = [_cell(r, regime, d, cfg.claim_factor * d) for r in records]
            for a in ("creator", "lingcrel"):
                ev = [c[a] for c in cells]
                par = [x for e in ev for x in e["prune_stat_parents"]]
                non = [x for e in ev for x in e["prune_stat_others"]]
                diag.append(
                    {
                        "regime": regime,
                        "d": d,
                        "arm": ARMS[a],
                        "pure row groups": float(np.mean([e["group_purity"] for e in ev])),
                        "order correct": float(np.mean([e["order_ok"] for e in ev])),
                        "chosen order score": float(np.mean([np.mean(e["order_scores"]) for e in ev])),
                        "runner-up score": float(np.mean([x for e in ev for x in e["order_runner_up"]] or [np.nan])),
                        "prune stat, true parents": float(np.mean(par)) if par else float("nan"),
                        "prune stat, non-parents": float(np.mean(non)) if non else float("nan"),
                        "ICA convergence warnings": int(sum(e["convergence_warnings"] for e in ev)),
                    }
                )
            agree = np.mean([c["creator"]["adjacency"] == c["lingcrel"]["adjacency"] for c in cells])
            diag[-1]["same graph as CREATOR"] = float(agree)
    report.add_table(
        "learned_diagnostics",
        diag,
        "What the environment methods learned, at K=2d: share of row groups whose ICA rows all belong to one true "
        "latent (CREATOR matches geometrically, LiNGCReL-like by noise distributions), share of seeds whose "
        "recovered order is a linear extension of the true DAG, mean collinearity score (1 - sigma_1^2/K) of the "
        "chosen node vs the best other candidate (0 = collinear), the mean pruning statistic for true parents vs "
        f"other earlier nodes (threshold rank_tol={cfg.rank_tol:g}), and the share of seeds where LiNGCReL-like "
        "returns CREATOR's graph.",
    )


_COLORS = {"creator": "C0", "lingcrel": "C1", "pooled": "C2", "env0_ica": "C3", "no_intersection": "C4"}
_STYLE = {
    "creator": ("o", "-"),
    "lingcrel": ("s", "--"),
    "pooled": ("^", ":"),
    "env0_ica": ("v", "-."),
    "no_intersection": ("x", (0, (1, 1))),
}


def _figures(cfg: Config, records: list[dict], report: Report) -> None:
    from matplotlib.figure import Figure

    Ks = sorted({c["K"] // c["d"] for c in records[0]["cells"]})
    fig = Figure(figsize=(4.2 * len(cfg.dims), 3.6 * len(cfg.regimes)), layout="constrained")
    axes = fig.subplots(len(cfg.regimes), len(cfg.dims), squeeze=False)
    for i, regime in enumerate(cfg.regimes):
        for j, d in enumerate(cfg.dims):
            ax = axes[i][j]
            for a in ("creator", "lingcrel", "pooled", "env0_ica"):
                mean, se = [], []
                for fk in Ks:
                    vals = [_cell(r, regime, d, fk * d)[a]["mcc"] for r in records]
                    mean.append(np.mean(vals))
                    se.append(np.std(vals, ddof=1) / np.sqrt(len(vals)) if len(vals) > 1 else 0.0)
                ax.errorbar(
                    [fk * d for fk in Ks],
                    mean,
                    yerr=se,
                    marker=_STYLE[a][0],
                    ls=_STYLE[a][1],
                    capsize=3,
                    color=_COLORS[a],
                    label=ARMS[a],
                )
            ax.axhline(cfg.recovery_mcc, color="0.6", lw=0.8, ls="--")
            ax.set_xticks([fk * d for fk in Ks])
            ax.set_title(f"{regime}: {REGIMES[regime].split(' (')[0]}, d={d}", fontsize=9)
            ax.set_xlabel("number of environments K")
            ax.set_ylabel("MCC (mean ± s.e. over seeds)")
            ax.set_ylim(0.4, 1.02)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="lower right")
    report.add_figure(
        "mcc_vs_envs",
        fig,
        "MCC against the number of environments per method (env-0 ICA is fitted on environment 0 only; its MCC "
        "still moves with K because it is scored on all K environments' latents); dashed: the recovery threshold.",
    )

    d = max(x for x in cfg.dims if x <= 5) if any(x <= 5 for x in cfg.dims) else cfg.dims[0]
    cell = _cell(records[0], "env", d, cfg.claim_factor * d)
    true_B = cell["true_adjacency"]
    fig = Figure(figsize=(12, 4.0), layout="constrained")
    axes = fig.subplots(1, 3)
    panels = [
        ("true DAG", true_B, None),
        (f"CREATOR (SHD {cell['creator']['shd']})", cell["creator"]["adjacency"], true_B),
        (f"LiNGCReL-like (SHD {cell['lingcrel']['shd']})", cell["lingcrel"]["adjacency"], true_B),
    ]
    for ax, (title, B, ref) in zip(axes, panels):
        _draw_graph(ax, np.asarray(B), None if ref is None else np.asarray(ref))
        ax.set_title(title, fontsize=10)
    seed0 = report.seeds[0] if report.seeds else 0
    report.add_figure(
        "estimated_vs_true_graph",
        fig,
        f"Seed {seed0}, weak heterogeneity, d={d}, K={cfg.claim_factor * d}: estimated latent graphs relabelled by "
        "the LocR^2 matching. Black: correct edge; red: extra or reversed; dashed grey: missing.",
    )


def _draw_graph(ax, B: np.ndarray, ref: np.ndarray | None) -> None:
    d = B.shape[0]
    ang = np.pi / 2 - 2 * np.pi * np.arange(d) / d
    pos = np.column_stack([np.cos(ang), np.sin(ang)])
    arrow = {"arrowstyle": "-|>", "shrinkA": 12, "shrinkB": 12}
    for i in range(d):
        for j in range(d):
            if B[i, j]:
                ok = ref is None or ref[i, j]
                ax.annotate(
                    "",
                    xy=pos[i] * 0.85,
                    xytext=pos[j] * 0.85,
                    arrowprops={**arrow, "color": "k" if ok else "C3", "lw": 1.4},
                )
            elif ref is not None and ref[i, j]:
                ax.annotate(
                    "",
                    xy=pos[i] * 0.85,
                    xytext=pos[j] * 0.85,
                    arrowprops={**arrow, "color": "0.6", "lw": 1.0, "ls": "--"},
                )
    for t in range(d):
        ax.scatter(*pos[t] * 0.85, s=500, color="white", edgecolor="k", zorder=3)
        ax.text(*pos[t] * 0.85, f"y{t}", ha="center", va="center", zorder=4)
    ax.set_xlim(-1.2, 1.2)
    ax.set_ylim(-1.2, 1.2)
    ax.set_aspect("equal")
    ax.set_xlabel("latent nodes (true labels)")
    ax.set_xticks([])
    ax.set_yticks([])


def _notes(cfg: Config, records: list[dict], report: Report) -> None:
    report.add_note(
        "Data setting: DAGs with fewer than min_edge_ratio * (d - 1) edges are redrawn (min_edge_ratio="
        f"{cfg.min_edge_ratio:g}); edge_prob, weights and noise families are the spec's."
    )
    report.add_note(
        "Metrics: MCC and SHD at the best relabelling carry the claims (LocR^2 has a high floor: random directions "
        "score about 0.68 / 0.64 / 0.53 at d = 3 / 5 / 7). LocR^2 is kept for the disentanglement claim, where it "
        "is the right measure (recovery up to the surrounded parents), and in the tables."
    )
    report.add_note(
        "friendly_non_inferior (v2) was removed: in the node regime CREATOR and LiNGCReL-like return the same "
        "output in most cells, so the comparison could not fail; table learned_diagnostics shows how often their "
        "graphs agree."
    )
    if not all(r["lingam"] for r in records):
        report.add_note(
            "lingam is not installed: the DirectLiNGAM reference arm was skipped. The [causal] extra (lingam) is kept "
            "out of [all] because lingam pins scipy below the version the other papers use; with "
            "pip install 'icml26[causal]' the arm runs (table recovery gains a DirectLiNGAM column)."
        )
    report.add_note(
        "LiNGCReL-like matches ICA rows across environments by their noise laws; in the weak-heterogeneity regime the "
        "noise law belongs to the environment, not the latent, so its row groups are 0% pure (table "
        "learned_diagnostics): it is a random-matching baseline there, and no claim rests on beating it (the MCC "
        "claims' baselines are env-0 and pooled ICA, the SHD claims' the complete DAG in CREATOR's order and the empty "
        "graph; LiNGCReL-like is only a control arm of the MCC claims)."
    )
    report.add_note(
        "lower_shd_d* and disentanglement_gain_d* are judged at d >= 5 only. At d=3 the complete DAG in CREATOR's "
        "order is wrong in under one of the three node pairs on average (table recovery), so no SHD margin exists "
        "that CREATOR could clear and random pruning could not; and few d=3 DAGs have latents the intersection step "
        "can change. The d=3 numbers stay in the tables."
    )
    for d in cfg.dims:
        pre = next((c for c in report.claims if c.id == f"single_env_ica_fails_d{d}"), None)
        if pre is not None and pre.verdict != HOLDS:
            report.add_note(
                f"d={d}: one environment's ICA comes close to recovering the latents (single_env_ica_fails_d{d} is "
                f"{pre.verdict}), so the d={d} claims are setting-invalid in this run: reported, not evidence."
            )
