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

from icml26.core import Experiment, register

from .baselines import (
    CREATORNoIntersection,
    CREATORNoPruning,
    CREATORRandomIntersection,
    LiNGCReLLike,
    PooledDirectLiNGAM,
    PooledICA,
    SingleEnvironmentICA,
)
from .creator import CREATOR
from .data import make_linear_crl_data
from .graphs import is_linear_extension, surrounded_sets
from .metrics import loc_r2, mcc, relabel, shd, shd_best


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
    # claims (set on the dev seeds 0-19: see TUNING)
    recovery_mcc: float = 0.9  # recovery means mean MCC >= this; the single-environment precondition: <= this
    mcc_margin: float = 0.03  # "CREATOR beats X on MCC" means by >= this (lower end of the one-sided interval)
    disentangle_margin: float = 0.02  # LocR^2 gain of step 3 on the latents it can change
    # "CREATOR's SHD is lower than both trivial graphs'" means by >= this share of the d(d-1)/2 node pairs on average
    # (0.32: between random pruning's mean advantage and CREATOR's lower end on the dev seeds; see TUNING)
    shd_margin_pairs: float = 0.32
    test: str = "wilcoxon"
    alpha: float = 0.01


FULL = Config()
QUICK = Config(dims=(3, 5), env_factors=(1, 2), test="ttest", alpha=0.05)


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
    node_r2 = np.empty(len(match))
    node_r2[match] = per  # node_r2[i]: the matched R^2 of true latent i
    out = {
        "locr2": score,
        "shd": shd(truth.adjacency, B_est),
        "shd_best": shd_best(truth.adjacency, model.adjacency_matrix_),
        "mcc": mcc(Y, Yh),
        "node_locr2": node_r2.tolist(),
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


def _on_creator_rows(cls, creator: CREATOR, Xs):
    """An ablation arm refitted on CREATOR's own ICA rows (same fits; only the step the arm changes differs)."""
    m = cls(**creator.get_params())
    with warnings.catch_warnings():  # the same rows as CREATOR's: its identifiability warning is already counted
        warnings.simplefilter("ignore", UserWarning)
        return m.fit_unmixing_rows(Xs, creator.unmixing_rows_, creator.ica_)


def _without_intersection(creator: CREATOR, Xs) -> CREATORNoIntersection:
    """The no-intersection arm on CREATOR's own ICA rows (same fits, ordering and pruning; step 3 skipped)."""
    return _on_creator_rows(CREATORNoIntersection, creator, Xs)


def _matched_rows_mean(creator: CREATOR, Xs, truth, K: int) -> dict:
    """MCC of the sign-aligned mean of each of CREATOR's matched row groups (its geometric matching alone: no
    ordering projection, pruning or intersection), a diagnostic of how much of CREATOR's MCC is the matching."""
    G = []
    for t in range(creator.n_latent):
        R = np.array([creator.unmixing_rows_[k][creator.row_assignment_[t, k]] for k in range(K)])
        g = (R * np.sign(R @ R[0])[:, None]).mean(0)
        G.append(g / np.linalg.norm(g))
    Xw = (np.vstack(Xs) - creator.mean_) @ creator.whitening_.T
    return {"mcc": mcc(np.vstack(truth.latents[:K]), Xw @ np.array(G).T)}


def _random_pruning(creator: CREATOR, no_prune, truth, rng) -> dict:
    """The graph-only control of the SHD claims: CREATOR's order and CREATOR's own number of edges, but the edges
    kept drawn at random from the complete DAG in that order (CREATOR minus the pruning's judgement of WHICH edges,
    otherwise equal)."""
    full = np.argwhere(no_prune.adjacency_matrix_ != 0)  # the complete DAG in CREATOR's order, CREATOR's labels
    k = int(np.count_nonzero(creator.adjacency_matrix_))
    B = np.zeros_like(no_prune.adjacency_matrix_, dtype=int)
    if k:
        keep = full[rng.choice(len(full), size=k, replace=False)]
        B[keep[:, 0], keep[:, 1]] = 1
    return {"shd_best": shd_best(truth.adjacency, B), "n_edges": k}


def _cell(cfg: Config, Xs_all, truth, d: int, K: int, regime: str, rs: int, with_lingam: bool) -> dict:
    Xs = Xs_all[:K]
    sur = surrounded_sets(truth.adjacency)
    out = {
        "regime": regime,
        "d": d,
        "K": K,
        "true_adjacency": truth.adjacency.tolist(),
        # the latents whose parents are not all surrounding (sur(i) != pa(i)): the only ones step 3 can change
        "intersected_nodes": [i for i in range(d) if set(sur[i]) != set(np.flatnonzero(truth.adjacency[i]).tolist())],
    }
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
    no_int = _without_intersection(creator, Xs)
    rand_int = _on_creator_rows(CREATORRandomIntersection, creator, Xs)
    no_prune = _on_creator_rows(CREATORNoPruning, creator, Xs)
    env0, _ = _fit(SingleEnvironmentICA(d, ica_restarts=cfg.ica_restarts, max_iter=cfg.max_iter, random_state=rs), Xs)
    out["creator"] = _evaluate(creator, Xs, truth, K)
    out["no_intersection"] = _evaluate(no_int, Xs, truth, K)
    out["random_intersection"] = _evaluate(rand_int, Xs, truth, K)
    out["no_pruning"] = _evaluate(no_prune, Xs, truth, K)
    out["random_pruning"] = _random_pruning(creator, no_prune, truth, np.random.default_rng([rs, K, 13]))
    out["matched_rows_mean"] = _matched_rows_mean(creator, Xs, truth, K)
    out["env0_ica"] = _evaluate(env0, Xs, truth, K)
    out["lingcrel"] = _evaluate(lingcrel, Xs, truth, K)
    out["pooled"] = _evaluate(pooled, Xs, truth, K)
    out["same_ica_rows"] = bool(
        np.array_equal(creator.unmixing_rows_, lingcrel.unmixing_rows_)
        and np.array_equal(creator.unmixing_rows_, no_int.unmixing_rows_)
        and np.array_equal(creator.unmixing_rows_, rand_int.unmixing_rows_)
        and np.array_equal(creator.unmixing_rows_, no_prune.unmixing_rows_)
    )
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
            shd_best(truth.adjacency, Bp),
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


from .claims import judge  # noqa: E402  (the evidence lives beside the measurement)

# Every variant tried while designing this reproduction, with the seeds it saw (Experiment.tuning; report.md shows it).
# Seeds 0-19 were the reported seeds of the v1/v2 runs (quick: 0-4) and the referee of issue 55 measured on them, so
# they are the dev seeds now; the presets report fresh seeds 100-119 (quick: 100-104), which no choice below saw.
_OLD = list(range(20))
TUNING = (
    dict(
        variant="initial design (215f4d0, d1117cc): the spec's data (edge_prob 0.5, weights U(0.5, 1.5), scales "
        "U(0.5, 2)), spec estimator defaults (rank_tol 0.15, intersect_tol 0.2, one ICA restart), claims on LocR^2 "
        "at K=2d, precondition pooled-ICA LocR^2 <= 0.85",
        seeds=_OLD,
        outcome="d=3 graphs were often empty or a single edge: pooled ICA recovered them and the d=3 precondition "
        "was borderline (mean pooled LocR^2 0.80 over 20 seeds)",
    ),
    dict(
        variant="fc1217f: DAGs with fewer than d - 1 edges redrawn (min_edge_ratio = 1.0), to make the pooled-ICA "
        "precondition hold",
        seeds=_OLD,
        outcome="v2 reference run (96477d1): claims 9/11, checks 6/6, preconditions 4/4; the 0.15 LocR^2 gap over "
        "LiNGCReL-like does not hold at d=3 (ceiling), inconclusive at d=5, holds at d=7",
    ),
    dict(
        variant="referee (issue 55): random directions, pooled ICA, single-environment ICA, intersect() returning "
        "its input, SHD at the best relabelling, friendly_non_inferior's arms",
        seeds=_OLD,
        outcome="LocR^2 floor 0.68 / 0.64 / 0.53 (random), single-environment ICA 0.95 / 0.91 / 0.83; no verdict "
        "moves without the intersection; LiNGCReL-like MCC 0.806 < env-0 ICA 0.814 at d=5; identical outputs in "
        "54/60 node-regime cells",
    ),
    dict(
        variant="issue 55, dev run: arms CREATOR, CREATOR without intersection (same ICA rows), LiNGCReL-like, "
        "pooled ICA, env-0 ICA (FastICA on environment 0, applied to all), MCC and SHD at the best relabelling",
        seeds=_OLD,
        outcome="MCC (d=3/5/7) CREATOR 0.953/0.956/0.944, no intersection 0.954/0.956/0.956, LiNGCReL-like "
        "0.870/0.797/0.739, env-0 ICA 0.849/0.823/0.777, pooled 0.714/0.657/0.607; LocR^2 gain of the intersection "
        "over all latents 0.002/0.014/0.016 (99% lower ends -0.001/-0.004/0.001): MCC does not see step 3",
    ),
    dict(
        variant="issue 55: thresholds chosen on that run: recovery_mcc 0.9 (recovery and the single-environment "
        "precondition), mcc_margin 0.03 (CREATOR-LiNGCReL 99% lower ends 0.040/0.117/0.160, CREATOR-env-0 "
        "0.070/0.098/0.129), disentanglement judged on the latents step 3 can change (sur(i) != pa(i)), "
        "disentangle_margin 0.02 (gain 0.069, lower end 0.046, 20 seeds)",
        seeds=_OLD,
        outcome="on the dev seeds: claims 14/14 hold, controls reject 18/18, checks 7/7 pass, preconditions 4/4 "
        "hold; the design the reported seeds 100-119 run (only the sklearn surface changed after this entry)",
    ),
    dict(
        variant="issue 55, the heterogeneity diagnostic (a warning only, no verdict uses it): CREATOR's order_tol "
        "= 0.2 on the first step's collinearity score, read off the dev run's order scores and four Gaussian-noise "
        "probes (d=5, K=10, data seeds 0-3)",
        seeds=list(range(20)),
        outcome="non-Gaussian data score at most 0.18 at any step (d=7), Gaussian noise 0.30-0.38 at the first "
        "step; the reported run's numbers do not depend on it",
    ),
    dict(
        variant="referee of the v3 run (issue 55 follow-up, probes on dev seeds): (a) an arm taking CREATOR's matched "
        "row groups, sign-aligned and averaged (no ordering projection, pruning or intersection); (b) step 3 "
        "intersecting with the spans of random later non-children; (c) the complete DAG; (d) env-0 ICA vs "
        "LiNGCReL-like; (e) edge signs fixed across environments (its own generator, d=5, K=10, seeds 0-9)",
        seeds=_OLD,
        outcome="(a) MCC 0.939 / 0.951 vs CREATOR 0.953 / 0.956 (d=3/5): the MCC claims credit the matching; (b) "
        "per-latent LocR^2 0.822 vs 0.980 (d=5), 0.632 vs 0.985 (d=7); (c) SHD 0.75 / 4.5 (d=3/5), close to "
        "LiNGCReL-like's; (d) env-0 ICA beats LiNGCReL-like by 0.041 (d=5) / 0.045 (d=7), above the 0.03 margin; "
        "(e) CREATOR MCC 0.976 -> 0.845",
    ),
    dict(
        variant="edge signs fixed across environments (only the magnitudes change), measured again on dev seeds "
        "0-19 with the referee's generator (d=5, K=10, n=1000, p=10); not adopted: the spec draws new signs per "
        "environment, and the reference run follows the spec",
        seeds=_OLD,
        outcome="signs redrawn: CREATOR MCC 0.974, matched-rows mean 0.951, env-0 ICA 0.832, CREATOR SHD 0.30; signs "
        "fixed: CREATOR MCC 0.844 (< the 0.9 recovery bar), matched-rows mean 0.761, env-0 ICA 0.747, SHD 0.95. "
        "The recovery claims are claims about the spec's generator and do not carry to fixed signs",
    ),
    dict(
        variant="v3b controls and margins, full preset --dev: disentanglement_gain's control = CREATOR intersecting "
        "random later non-children (as many as the children); lower_shd's control = CREATOR without pruning "
        "(complete DAG in its order) with shd_margin = 0.5 edges (so a control whose mean SHD advantage is below "
        "half an edge is 'does not hold', not a power failure); beats_lingcrel dropped (its env-0 control beat "
        "LiNGCReL-like by more than the margin); matched-rows mean arm added to the tables",
        seeds=_OLD,
        outcome="claims 10/11 hold, controls reject 14/14 (every arm verdict 'does not hold'), checks 7/7, "
        "preconditions 4/4; SHD lower ends over LiNGCReL-like 0.08 / 3.00 / 7.30 (d=3/5/7): lower_shd_d3 "
        "inconclusive (at d=3 the largest possible advantage is about 0.75 edges); no-pruning SHD 0.75 / 4.5 / 10.8 "
        "vs LiNGCReL-like 0.75 / 3.9 / 9.75; random-intersection LocR^2 on the intersected latents 0.976 / 0.822 / "
        "0.626 vs no intersection 0.976 / 0.894 / 0.917 and CREATOR 0.997 / 0.980 / 0.985",
    ),
)

_TUNING_V3C = (
    dict(
        variant="second referee of issue 55 (probes): re-judging the stored v3b reference records (seeds 100-119) with "
        "LiNGCReL-like removed from lower_shd's baselines and with shd_margin 0 / 0.25 / 0.5 / 1 / 2; "
        "disentanglement_gain per d on those records; a 'guarded' random intersection and Gaussian-noise copies "
        "(d=3) and a rank-1 environment on dev data seeds",
        seeds=_OLD + list(range(100, 120)),
        outcome="lower_shd rested on LiNGCReL-like (without it the no-pruning control was inconclusive; the margin "
        "changed no verdict); disentanglement_gain lower end 0.030 pooled, 0.011 at d=5, 0.037 at d=7 (carried by "
        "d=7); order_tol 0.2 missed some d=3 Gaussian copies. These looked at the reported seeds: the v3c design "
        "below was then set on the dev seeds only",
    ),
    dict(
        variant="v3c, full preset --dev: lower_shd's baselines = the complete DAG in CREATOR's order (no pruning) and "
        "the empty graph; its control = random pruning (CREATOR's order and edge count, edges drawn at random from "
        "that complete DAG), first with shd_margin 0.5 edges; disentanglement_gain judged per d >= 5 with "
        "requires single_env_ica_fails_d*",
        seeds=_OLD,
        outcome="SHD (d=3/5/7) CREATOR 0.20/0.40/1.25, complete DAG 0.75/4.50/10.80, empty 2.25/5.50/10.20, random "
        "pruning 0.75/1.75/4.70 (the best relabelling helps a random graph a lot): at 0.5 edges random pruning "
        "PASSES the rule (lower ends 2.06 at d=5, 4.42 at d=7), so the margin matters; CREATOR's lower ends 3.55 / "
        "7.79; disentanglement lower ends 0.025 (d=5), 0.040 (d=7) against 0.02",
    ),
    dict(
        variant="v3c: shd_margin replaced by shd_margin_pairs = 0.32 of the d(d-1)/2 node pairs (3.2 edges at d=5, "
        "6.72 at d=7): between random pruning's mean advantage (0.275 / 0.262 of the pairs) and CREATOR's lower "
        "end (0.355 / 0.371) on the dev run; lower_shd judged at d >= 5 only (at d=3 the complete DAG in CREATOR's "
        "order misses 0.75 of 3 pairs, so no margin exists: CREATOR's lower end 0.12, random pruning's mean 0.0)",
        seeds=_OLD,
        outcome="dev re-judged: claims hold (lower_shd_d5 lower end 3.55 vs 3.2, lower_shd_d7 7.79 vs 6.72), every "
        "control rejects with its arm failing (random pruning 2.75 / 5.50 mean advantage < 3.2 / 6.72)",
    ),
    dict(
        variant="v3c, the heterogeneity diagnostic at d=3 and d=5: CREATOR(d, random_state=0) on "
        "make_linear_crl_data(n_latent=d, n_envs=2d, min_edges=d-1, seed=s) and on its Gaussian-noise copy, "
        "data seeds 0-19; order_tol left at 0.2",
        seeds=_OLD,
        outcome="first-step score, non-Gaussian max 0.088 (d=3) / 0.099 (d=5); Gaussian copies min 0.116 (d=3) / "
        "0.261 (d=5): the 0.2 warning fires on 11/20 Gaussian copies at d=3 and 20/20 at d=5; a d-free tol near "
        "0.1 would separate d=3 and d=5 but d=7 was not probed, so it is left open",
    ),
)

EXPERIMENT = register(
    Experiment(
        slug="linear_crl",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": tuple(range(100, 105)), "full": tuple(range(100, 120))},
        measure=measure,
        judge=judge,
        threads=1,
        dev_seeds=tuple(_OLD),
        tuning=TUNING + _TUNING_V3C,
    )
)
