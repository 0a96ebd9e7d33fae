"""Reproduction: CREATOR vs LiNGCReL-style matching vs pooled ICA on synthetic multi-environment linear CRL.

Per seed and latent dimension ``d`` we draw one latent DAG, mixing and ``3d`` environments' weights (data for
``K`` environments are the first ``K`` of them, so the sweep over ``K`` is nested) and the two noise regimes
on the same graph: ``"env"`` (weak heterogeneity: one noise family per environment, the paper's setting) and
``"node"`` (one family per latent, LiNGCReL's assumption).  Every arm sees the same data, and the two
environment methods run the same FastICA fits (same settings and random state) and the same downstream steps;
only the matching of ICA rows across environments differs.  Claims are judged at ``K = 2d``, ``n = 1000``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from icml26.core import (
    Experiment,
    Report,
    judge_every,
    judge_non_inferiority,
    judge_superiority,
    judge_threshold,
    register,
)

from .baselines import LiNGCReLLike, PooledDirectLiNGAM, PooledICA
from .creator import CREATOR
from .data import make_linear_crl_data
from .graphs import is_linear_extension, surrounded_sets
from .metrics import loc_r2, mcc, relabel, shd

REGIMES = {
    "env": "weak heterogeneity (one noise family per environment)",
    "node": "LiNGCReL-friendly (one noise family per latent)",
}
ARMS = {"creator": "CREATOR", "lingcrel": "LiNGCReL-like", "pooled": "pooled ICA", "lingam": "DirectLiNGAM"}


@dataclass(frozen=True)
class Config:
    """Grid, data-generating settings, estimator settings (shared by all arms) and the claims' thresholds."""

    dims: tuple[int, ...] = (3, 5, 7)
    env_factors: tuple[int, ...] = (1, 2, 3)  # K = factor * d (the LocR^2-vs-K figure)
    claim_factor: int = 2  # claims at K = 2d
    regimes: tuple[str, ...] = ("env", "node")
    n_samples: int = 1000
    n_obs: int = 10
    edge_prob: float = 0.5
    min_edge_ratio: float = 1.0  # DAGs with fewer than ratio * (d - 1) edges are redrawn (see docs)
    weight_range: tuple[float, float] = (0.5, 1.5)
    scale_range: tuple[float, float] = (0.5, 2.0)
    # estimators (identical for every arm that has the setting; library defaults, not tuned)
    rank_tol: float = 0.15
    intersect_tol: float = 0.2
    ica_restarts: int = 1
    max_iter: int = 1000
    lingam: bool = True  # the DirectLiNGAM reference arm (skipped with a note when lingam is not installed)
    # claims
    recovery_thresholds: tuple[tuple[int, float], ...] = ((3, 0.9), (5, 0.9), (7, 0.85))
    pooled_fail_threshold: float = 0.85
    min_gain: float = 0.15
    friendly_threshold: float = 0.9
    ni_margin: float = 0.03
    test: str = "wilcoxon"
    alpha: float = 0.01


FULL = Config()
QUICK = Config(dims=(3, 5), env_factors=(1, 2), test="ttest", alpha=0.05)

INVARIANCE_TOL = 1e-8
EXACT_TOL = 1e-8


def _lingam_available(cfg: Config) -> bool:
    if not cfg.lingam:
        return False
    import importlib.util

    return importlib.util.find_spec("lingam") is not None


# -- one cell -----------------------------------------------------------------------------------------------------
def _true_row_nodes(model, truth) -> np.ndarray:
    """``nodes[k, r]``: the true latent of ICA row ``r`` of environment ``k`` (Hungarian on |cos| to the exact
    rows; diagnostic only)."""
    from scipy.optimize import linear_sum_assignment

    exact = [u @ model.dewhitening_ for u in truth.oracle_unmixing()[: model.n_envs_]]
    out = []
    for R, E in zip(model.unmixing_rows_, exact):
        E = E / np.linalg.norm(E, axis=1, keepdims=True)
        rows, cols = linear_sum_assignment(-np.abs(R @ E.T))
        nodes = np.empty(len(rows), dtype=int)
        nodes[rows] = cols
        out.append(nodes)
    return np.array(out)


def _evaluate(model, Xs, truth, K: int) -> dict:
    Y = np.vstack(truth.latents[:K])
    Yh = model.transform(np.vstack(Xs))
    score, match, per = loc_r2(Y, Yh, truth.adjacency, return_matching=True)
    B_est = relabel((model.adjacency_matrix_ != 0).astype(int), match)
    out = {
        "locr2": score,
        "shd": shd(truth.adjacency, B_est),
        "mcc": mcc(Y, Yh),
        "order_ok": bool(is_linear_extension([int(match[t]) for t in model.causal_order_], truth.adjacency)),
        "n_edges": int(B_est.sum()),
        "adjacency": B_est.tolist(),
    }
    if hasattr(model, "row_assignment_"):
        nodes = _true_row_nodes(model, truth)
        pure = [len({int(nodes[k, model.row_assignment_[t, k]]) for k in range(K)}) == 1 for t in range(model.n_latent)]
        out["group_purity"] = float(np.mean(pure))
        out["order_scores"] = model.order_scores_.tolist()
        out["order_runner_up"] = [float(x) for x in model.order_runner_up_ if np.isfinite(x)]  # none at the last step
        stats, true_B = model.pruning_stats_, truth.adjacency
        par, non = [], []
        for t in range(model.n_latent):
            for s in range(t):
                (par if true_B[match[t], match[s]] else non).append(float(stats[t, s]))
        out["prune_stat_parents"], out["prune_stat_others"] = par, non
        out["convergence_warnings"] = int(model.ica_["convergence_warnings"])
    return out


def _fit(est, Xs):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", UserWarning)
        est.fit(Xs)
    return est, sum("not identifiable" in str(x.message) for x in w)


def _cell(cfg: Config, Xs_all, truth, d: int, K: int, regime: str, rs: int, with_lingam: bool) -> dict:
    Xs = Xs_all[:K]
    out = {"regime": regime, "d": d, "K": K, "true_adjacency": truth.adjacency.tolist()}
    shared = {
        "rank_tol": cfg.rank_tol,
        "intersect_tol": cfg.intersect_tol,
        "ica_restarts": cfg.ica_restarts,
        "max_iter": cfg.max_iter,
        "random_state": rs,
    }
    creator, out["identifiability_warnings"] = _fit(CREATOR(d, **shared), Xs)
    lingcrel, _ = _fit(LiNGCReLLike(d, **shared), Xs)
    pooled, _ = _fit(PooledICA(d, ica_restarts=cfg.ica_restarts, max_iter=cfg.max_iter, random_state=rs), Xs)
    out["creator"] = _evaluate(creator, Xs, truth, K)
    out["lingcrel"] = _evaluate(lingcrel, Xs, truth, K)
    out["pooled"] = _evaluate(pooled, Xs, truth, K)
    out["same_ica_rows"] = bool(np.array_equal(creator.unmixing_rows_, lingcrel.unmixing_rows_))
    if with_lingam and K == cfg.claim_factor * d:
        ref = PooledDirectLiNGAM(random_state=rs).fit(truth.latents[:K])
        B = (ref.adjacency_matrix_ != 0).astype(int)
        out["lingam"] = {"shd": shd(truth.adjacency, B), "n_edges": int(B.sum()), "adjacency": B.tolist()}
    if K == cfg.claim_factor * d and regime == "env":
        out["invariance"] = _invariance(creator, Xs, truth, K, np.random.default_rng([rs, 7]))
    return out


# -- checks -------------------------------------------------------------------------------------------------------
def _invariance(model, Xs, truth, K: int, rng) -> float:
    """Largest change of (adjacency, LocR^2) when the fitted ICA rows are handed back permuted across and within
    environments, sign-flipped and rescaled, and the observations are changed by an invertible linear map."""
    with warnings.catch_warnings():  # refits of the same rows: their identifiability warning is already counted
        warnings.simplefilter("ignore", UserWarning)
        return _invariance_gap(model, Xs, truth, K, rng)


def _invariance_gap(model, Xs, truth, K: int, rng) -> float:
    d, p = model.n_latent, model.n_features_in_
    U = [r @ model.whitening_ for r in model.unmixing_rows_]  # observed-coordinate unmixing, s = U (x - mu_k)
    Y = np.vstack(truth.latents[:K])
    base = CREATOR(d, rank_tol=model.rank_tol, intersect_tol=model.intersect_tol).fit_unmixing(Xs, U)
    perm = rng.permutation(K)
    M = rng.normal(size=(p, p)) + 3.0 * np.eye(p)
    Minv = np.linalg.inv(M)
    U2 = []
    for k in perm:
        D = rng.choice([-1.0, 1.0], d) * rng.uniform(0.2, 5.0, d)
        U2.append((D[:, None] * U[k][rng.permutation(d)]) @ Minv)
    moved = CREATOR(d, rank_tol=model.rank_tol, intersect_tol=model.intersect_tol).fit_unmixing(
        [Xs[k] @ M.T for k in perm], U2
    )
    Yh = [m.transform(np.vstack(X)) for m, X in ((model, Xs), (base, Xs), (moved, [Xs[k] @ M.T for k in perm]))]
    Y2 = np.vstack([truth.latents[k] for k in perm])
    s = [loc_r2(Y, Yh[0], truth.adjacency), loc_r2(Y, Yh[1], truth.adjacency), loc_r2(Y2, Yh[2], truth.adjacency)]
    graph_diff = int(
        np.sum(base.adjacency_matrix_ != moved.adjacency_matrix_)
        + np.sum(base.adjacency_matrix_ != model.adjacency_matrix_)
    )
    return float(graph_diff + max(abs(s[1] - s[0]), abs(s[2] - s[0])))


def _oracle(Xs, truth) -> dict:
    """Exact rows ``Omega_k^{-1}(I - B_k) H^+`` (the infinite-sample ICA output) with numerical tolerances."""
    d = truth.n_latent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = CREATOR(d, rank_tol=1e-6, intersect_tol=1e-4).fit_unmixing(Xs, truth.oracle_unmixing()[: len(Xs)])
    Y = np.vstack(truth.latents[: len(Xs)])
    score, match, _ = loc_r2(Y, m.transform(np.vstack(Xs)), truth.adjacency, return_matching=True)
    return {
        "one_minus_locr2": 1.0 - score,
        "shd": shd(truth.adjacency, m.adjacency_matrix_, match),
        "order_ok": bool(is_linear_extension([int(match[t]) for t in m.causal_order_], truth.adjacency)),
    }


def _metric_invariance(truth, K: int, rng) -> float:
    """Largest deviation of the metrics' closed forms: LocR^2 = 1 on ``~sur``-mixed, permuted, rescaled true
    latents; MCC = 1 on permuted, rescaled ones; SHD(B, B relabelled back) = 0."""
    Y = np.vstack(truth.latents[:K])
    d = Y.shape[1]
    sur = surrounded_sets(truth.adjacency)
    Ym = np.column_stack(
        [
            rng.uniform(0.5, 2.0) * rng.choice([-1, 1]) * Y[:, i]
            + sum(rng.normal() * Y[:, j] for j in sur[i])
            + rng.normal()
            for i in range(d)
        ]
    )
    perm = rng.permutation(d)
    scale = rng.uniform(0.5, 2.0, d) * rng.choice([-1, 1], d)
    inv = np.argsort(perm)
    Bp = truth.adjacency[np.ix_(perm, perm)]  # node t of Bp is true node perm[t]
    return float(
        max(
            abs(1.0 - loc_r2(Y, Ym[:, perm], truth.adjacency)),
            abs(1.0 - mcc(Y, Y[:, perm] * scale)),
            shd(truth.adjacency, Bp, perm),
            shd(Bp, truth.adjacency, inv),
        )
    )


# -- measure ------------------------------------------------------------------------------------------------------
def measure(cfg: Config, seed: int, progress=None) -> dict:
    """One seed: every (d, regime, K) cell, the oracle-rows check and the metric closed forms."""
    with_lingam = _lingam_available(cfg)
    cells, checks = [], {}
    k_max = max(cfg.env_factors + (cfg.claim_factor,))
    for d in cfg.dims:
        rs = int(np.random.SeedSequence([seed, d]).generate_state(1)[0] % (2**31 - 1))
        for regime in cfg.regimes:
            # same seed for both regimes: same DAG, mixing and weights; only the noise families differ
            Xs_all, truth = make_linear_crl_data(
                n_latent=d,
                n_obs=cfg.n_obs,
                n_envs=k_max * d,
                n_samples=cfg.n_samples,
                noise=regime,
                edge_prob=cfg.edge_prob,
                weight_range=cfg.weight_range,
                scale_range=cfg.scale_range,
                min_edges=int(np.ceil(cfg.min_edge_ratio * (d - 1))),
                seed=rs,
            )
            for f in sorted(set(cfg.env_factors + (cfg.claim_factor,))):
                cells.append(_cell(cfg, Xs_all, truth, d, f * d, regime, rs, with_lingam))
            if regime == "env":
                K = cfg.claim_factor * d
                checks[f"oracle_d{d}"] = _oracle(Xs_all[:K], truth)
                checks[f"metrics_d{d}"] = _metric_invariance(truth, K, np.random.default_rng([rs, 11]))
                checks[f"n_edges_d{d}"] = int(truth.adjacency.sum())
    return {"cells": cells, "checks": checks, "lingam": with_lingam}


# -- judge --------------------------------------------------------------------------------------------------------
def _cell_of(rec: dict, regime: str, d: int, K: int) -> dict:
    return next(c for c in rec["cells"] if c["regime"] == regime and c["d"] == d and c["K"] == K)


def _threshold_for(cfg: Config, d: int) -> float:
    return dict(cfg.recovery_thresholds).get(d, min(t for _, t in cfg.recovery_thresholds))


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    seeds = report.seeds or list(range(len(records)))
    f = cfg.claim_factor
    alpha = cfg.alpha
    arms = ["creator", "lingcrel", "pooled"]
    budget_note = (
        f"FastICA (logcosh, unit-variance whitening) with max_iter={cfg.max_iter}, "
        f"restarts={cfg.ica_restarts}, library defaults, nothing tuned; same random state for all arms"
    )
    report.set_tuning(
        "CREATOR",
        configs=1,
        steps=cfg.max_iter,
        note=f"{budget_note}; rank_tol={cfg.rank_tol}, intersect_tol={cfg.intersect_tol} (spec defaults)",
    )
    report.set_tuning(
        "LiNGCReL-like",
        configs=1,
        steps=cfg.max_iter,
        note=f"{budget_note}; the same ICA fits and thresholds as CREATOR",
    )
    report.set_tuning("pooled ICA", configs=1, steps=cfg.max_iter, note=f"{budget_note}; one fit on the pooled data")
    with_lingam = all(r["lingam"] for r in records)
    if with_lingam:
        report.set_tuning(
            "DirectLiNGAM",
            configs=1,
            steps=0,
            note="lingam.DirectLiNGAM defaults on the pooled TRUE latents (graph-only reference)",
        )

    # (0) preconditions: pooled ICA fails in the weak-heterogeneity regime (per d)
    for d in cfg.dims:
        K = f * d
        report.add_claim(
            judge_threshold(
                f"pooled_ica_fails_d{d}",
                f"In the weak-heterogeneity regime (d={d}, K={K}, n={cfg.n_samples}) FastICA on the pooled data does "
                f"not recover the latents: mean LocR^2 <= {cfg.pooled_fail_threshold:g}, so recovery needs the "
                "environments",
                ("pooled ICA LocR2", [_cell_of(r, "env", d, K)["pooled"]["locr2"] for r in records]),
                threshold=cfg.pooled_fail_threshold,
                sense="<=",
                kind="precondition",
            )
        )
    if "node" in cfg.regimes:
        vals = [_cell_of(r, "node", d, f * d)["lingcrel"]["locr2"] for r in records for d in cfg.dims]
        units = [s for s in seeds for _ in cfg.dims]
        report.add_claim(
            judge_threshold(
                "friendly_baseline_recovers",
                f"Where LiNGCReL's assumption holds (one noise family per latent, K=2d, d in {list(cfg.dims)}), the "
                f"LiNGCReL-style baseline recovers the latents: mean LocR^2 >= {cfg.friendly_threshold:g}",
                ("LiNGCReL-like LocR2 (regime node)", vals),
                threshold=cfg.friendly_threshold,
                kind="precondition",
                units=units,
            )
        )

    # (1) claims in the weak-heterogeneity regime
    for d in cfg.dims:
        K = f * d
        pre = [f"pooled_ica_fails_d{d}"]
        cells = [_cell_of(r, "env", d, K) for r in records]
        thr = _threshold_for(cfg, d)
        report.add_claim(
            judge_threshold(
                f"weak_recovery_d{d}",
                f"Weak heterogeneity, d={d}, K={K}, n={cfg.n_samples}: CREATOR's mean LocR^2 >= {thr:g}",
                (f"CREATOR LocR2 (d={d})", [c["creator"]["locr2"] for c in cells]),
                threshold=thr,
                requires=pre,
            )
        )
        report.add_claim(
            judge_superiority(
                f"beats_lingcrel_locr2_d{d}",
                f"Weak heterogeneity, d={d}, K={K}: CREATOR's LocR^2 exceeds the LiNGCReL-style baseline's by >= "
                f"{cfg.min_gain:g} on average (one-sided paired test over seeds)",
                (f"CREATOR LocR2 (d={d})", [c["creator"]["locr2"] for c in cells]),
                {f"LiNGCReL-like LocR2 (d={d})": [c["lingcrel"]["locr2"] for c in cells]},
                test=cfg.test,
                alpha=alpha,
                min_effect=cfg.min_gain,
                requires=pre,
            )
        )
        report.add_claim(
            judge_superiority(
                f"lower_shd_d{d}",
                f"Weak heterogeneity, d={d}, K={K}: CREATOR's SHD is lower than the LiNGCReL-style baseline's",
                (f"CREATOR SHD (d={d})", [c["creator"]["shd"] for c in cells]),
                {f"LiNGCReL-like SHD (d={d})": [c["lingcrel"]["shd"] for c in cells]},
                higher_is_better=False,
                test=cfg.test,
                alpha=alpha,
                requires=pre,
            )
        )

    # (2) claims where the baseline's assumption holds (pooled over d: one value per seed)
    if "node" in cfg.regimes:
        cre = [_cell_of(r, "node", d, f * d)["creator"]["locr2"] for r in records for d in cfg.dims]
        lin = [_cell_of(r, "node", d, f * d)["lingcrel"]["locr2"] for r in records for d in cfg.dims]
        units = [s for s in seeds for _ in cfg.dims]
        report.add_claim(
            judge_threshold(
                "friendly_recovery",
                f"One noise family per latent (K=2d, d in {list(cfg.dims)}): CREATOR's mean LocR^2 >= "
                f"{cfg.friendly_threshold:g}",
                ("CREATOR LocR2 (regime node)", cre),
                threshold=cfg.friendly_threshold,
                units=units,
            )
        )
        report.add_claim(
            judge_non_inferiority(
                "friendly_non_inferior",
                f"One noise family per latent (K=2d): CREATOR's LocR^2 is within {cfg.ni_margin:g} of the "
                "LiNGCReL-style baseline's (non-inferiority)",
                ("CREATOR LocR2 (regime node)", cre),
                {"LiNGCReL-like LocR2 (regime node)": lin},
                margin=cfg.ni_margin,
                units=units,
                requires=["friendly_baseline_recovers"],
            )
        )

    # (3) checks: guarantees of our code
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
                [_cell_of(r, "env", d, f * d)["invariance"] for r in records for d in cfg.dims],
            ),
            bound=INVARIANCE_TOL,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "metric_closed_forms",
            "LocR^2 = 1 on true latents mixed within the ~sur class, permuted and rescaled; MCC = 1 on permuted, "
            "rescaled latents; SHD of a graph against its relabelled copy = 0",
            ("largest deviation", [r["checks"][f"metrics_d{d}"] for r in records for d in cfg.dims]),
            bound=1e-10,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "same_ica_for_both_environment_methods",
            "CREATOR and the LiNGCReL-style baseline start from identical per-environment ICA rows (budget parity)",
            ("cells with different ICA rows", [float(not c["same_ica_rows"]) for r in records for c in r["cells"]]),
            bound=0.0,
            kind="check",
        )
    )

    _tables(cfg, records, report, arms, with_lingam)
    _figures(cfg, records, report, arms)
    report.metrics = {
        "n_seeds": len(records),
        "creator_locr2_env_K2d": {
            d: float(np.mean([_cell_of(r, "env", d, f * d)["creator"]["locr2"] for r in records])) for d in cfg.dims
        },
        "identifiability_warnings": int(sum(c["identifiability_warnings"] for r in records for c in r["cells"])),
    }
    report.add_note(
        "Data setting: DAGs with fewer than min_edge_ratio * (d - 1) edges are redrawn (min_edge_ratio="
        f"{cfg.min_edge_ratio:g}). With the spec's edge_prob=0.5 alone, d=3 graphs are often empty or a single "
        "edge, latents then equal their noises up to scale, pooled ICA recovers them and the precondition was "
        "borderline (mean pooled LocR^2 0.80 over 20 seeds); edge_prob, weights and noise families are the spec's."
    )
    report.add_note(
        "LocR^2 regresses each estimated component on the true y_{i} and y_{sur(i)} (pooled over environments) "
        "after the Hungarian matching that maximises the summed R^2; SHD is computed after the same matching. "
        "The same rule for every arm."
    )
    if not with_lingam:
        report.add_note(
            "lingam is not installed: the DirectLiNGAM reference arm was skipped (pip install 'icml26[causal]')."
        )


def _ms(xs) -> str:
    xs = np.asarray(xs, dtype=float)
    return f"{xs.mean():.3f} ± {xs.std(ddof=1) if xs.size > 1 else 0.0:.3f}"


def _tables(cfg: Config, records, report: Report, arms, with_lingam: bool) -> None:
    rows = []
    Ks = sorted({c["K"] // c["d"] for c in records[0]["cells"]})
    for regime in cfg.regimes:
        for d in cfg.dims:
            for fk in Ks:
                cells = [_cell_of(r, regime, d, fk * d) for r in records]
                row = {"regime": regime, "d": d, "K": fk * d}
                for a in arms:
                    row[f"{ARMS[a]} LocR2"] = _ms([c[a]["locr2"] for c in cells])
                for a in arms:
                    row[f"{ARMS[a]} SHD"] = _ms([c[a]["shd"] for c in cells])
                if with_lingam and fk == cfg.claim_factor:
                    row["DirectLiNGAM (true latents) SHD"] = _ms([c["lingam"]["shd"] for c in cells])
                row["CREATOR MCC"] = _ms([c["creator"]["mcc"] for c in cells])
                row["CREATOR - LiNGCReL LocR2"] = _ms([c["creator"]["locr2"] - c["lingcrel"]["locr2"] for c in cells])
                rows.append(row)
    report.add_table(
        "recovery",
        rows,
        f"Mean ± sd over {len(records)} seeds, n={cfg.n_samples} per environment, "
        f"p={cfg.n_obs}. DirectLiNGAM is fed the TRUE latents pooled over environments (a graph-only "
        "reference; at K=2d).",
    )
    diag = []
    for regime in cfg.regimes:
        for d in cfg.dims:
            cells = [_cell_of(r, regime, d, cfg.claim_factor * d) for r in records]
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
    report.add_table(
        "learned_diagnostics",
        diag,
        "What the environment methods learned, at K=2d: share of row groups whose ICA rows all belong to one true "
        "latent (the matching; CREATOR matches geometrically, LiNGCReL-like by noise distributions), share of "
        "seeds whose recovered order is a linear extension of the true DAG, mean collinearity score "
        "(1 - sigma_1^2/K) of the chosen node vs the best other candidate (0 = collinear), and the mean pruning "
        f"statistic for true parents vs other earlier nodes (threshold rank_tol={cfg.rank_tol:g}).",
    )


_COLORS = {"creator": "C0", "lingcrel": "C1", "pooled": "C2"}
_STYLE = {"creator": ("o", "-"), "lingcrel": ("s", "--"), "pooled": ("^", ":")}


def _figures(cfg: Config, records, report: Report, arms) -> None:
    from matplotlib.figure import Figure

    Ks = sorted({c["K"] // c["d"] for c in records[0]["cells"]})
    fig = Figure(figsize=(4.2 * len(cfg.dims), 3.6 * len(cfg.regimes)), layout="constrained")
    axes = fig.subplots(len(cfg.regimes), len(cfg.dims), squeeze=False)
    for i, regime in enumerate(cfg.regimes):
        for j, d in enumerate(cfg.dims):
            ax = axes[i][j]
            for a in arms:
                m, s = [], []
                for fk in Ks:
                    v = [_cell_of(r, regime, d, fk * d)[a]["locr2"] for r in records]
                    m.append(np.mean(v))
                    s.append(np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0)
                ax.errorbar(
                    [fk * d for fk in Ks],
                    m,
                    yerr=s,
                    marker=_STYLE[a][0],
                    ls=_STYLE[a][1],
                    capsize=3,
                    color=_COLORS[a],
                    label=ARMS[a],
                )
            ax.axhline(_threshold_for(cfg, d), color="0.6", lw=0.8, ls="--")
            ax.set_xticks([fk * d for fk in Ks])
            ax.set_title(f"{regime}: {REGIMES[regime].split(' (')[0]}, d={d}", fontsize=9)
            ax.set_xlabel("number of environments K")
            ax.set_ylabel("LocR^2 (mean ± s.e. over seeds)")
            ax.set_ylim(0.3, 1.02)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="lower right")
    report.add_figure(
        "locr2_vs_envs", fig, "LocR^2 against the number of environments per method; dashed: the claim's threshold."
    )

    d = max(x for x in cfg.dims if x <= 5) if any(x <= 5 for x in cfg.dims) else cfg.dims[0]
    cell = _cell_of(records[0], "env", d, cfg.claim_factor * d)
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
        f"Seed {seed0}, weak heterogeneity, d={d}, K={cfg.claim_factor * d}: "
        "estimated latent graphs relabelled by the LocR^2 matching. Black: correct edge; red: extra or "
        "reversed; dashed grey: missing.",
    )


def _draw_graph(ax, B: np.ndarray, ref: np.ndarray | None) -> None:
    d = B.shape[0]
    ang = np.pi / 2 - 2 * np.pi * np.arange(d) / d
    pos = np.column_stack([np.cos(ang), np.sin(ang)])
    edges = [(j, i) for i in range(d) for j in range(d) if B[i, j]]
    for j, i in edges:
        ok = ref is None or ref[i, j]
        ax.annotate(
            "",
            xy=pos[i] * 0.85,
            xytext=pos[j] * 0.85,
            arrowprops={"arrowstyle": "-|>", "color": "k" if ok else "C3", "lw": 1.4, "shrinkA": 12, "shrinkB": 12},
        )
    if ref is not None:
        for i in range(d):
            for j in range(d):
                if ref[i, j] and not B[i, j]:
                    ax.annotate(
                        "",
                        xy=pos[i] * 0.85,
                        xytext=pos[j] * 0.85,
                        arrowprops={
                            "arrowstyle": "-|>",
                            "color": "0.6",
                            "lw": 1.0,
                            "ls": "--",
                            "shrinkA": 12,
                            "shrinkB": 12,
                        },
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


EXPERIMENT = register(
    Experiment(
        slug="linear_crl",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 5, "full": 20},
        measure=measure,
        judge=judge,
        threads=1,
    )
)
