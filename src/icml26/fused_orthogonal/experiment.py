"""Reproduction: clustered multitask DML on the paper's Section 4 simulations, scaled to 2 CPU cores.

For every (model, delta) cell and seed we simulate ``m`` tasks with 3 planted clusters
(:func:`make_clustered_tasks`), cross-fit the nuisances of every task ONCE, and fit the adaptive fused
estimator and every baseline on those same scores (``fit_scores``): all methods see identical nuisance fits.
Metrics per study: RMSE of the task estimates, adjusted Rand index of the clusters, Wald 95% coverage.

Seeds are the unit: ``measure(config, seed)`` runs every cell with its own data seed; the judges average the
cells of a seed before testing over seeds.  Issue 23 added: the method's fuse radius and UniformFusion's
lambda tuned on equal grids on development studies; ``n_rep`` repeated cross-fits; many-tasks stress cells
(m = 15, 45, 90) with the precondition ``chaining_unguarded`` (the paper's rule chains) and the claims
``recovery_many_tasks`` / ``many_tasks_no_worse`` for the chaining guard; ``inference`` judged two-sided
on cluster-level coverage against 0.95 with an exact binomial interval; ``oracle_match`` as the ratio of
mean RMSEs with a paired bootstrap; a correlated-covariates cell (reported).  ``inference_matches_oracle``
(intervals identical to the oracle's whenever the partition is recovered) is a check of our refit.
Preconditions ``tasks_heterogeneous`` (Cochran's I^2) and ``pooling_has_room`` (oracle beats per-task DML).

Evidence v3 (issue 46): the control arm "pilots + merge, no fusion" (``fusion="none"``: the method with its ADMM
step removed, every task its own cluster before the same Cochran guard and pooled refit) runs beside the method in
every cell; a fusion cell (many close, noisy tasks, where the two can differ) isolates the fusion step, with a
shuffled-weights ADMM arm (``fusion="shuffled"``) as its control; the stress cells' coverage is judged.  Judges,
tables and figures live in :mod:`.claims`.  Reported seeds are fresh (``REPORTED``); the v1/v2 reported seeds 0-11
are the dev seeds every design choice saw (``TUNING``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import adjusted_rand_score

from icml26.core import Experiment, register

from .baselines import ARMULLike, OracleClusterDML, PersonalizedDML, UniformFusion
from .claims import cell_name, judge
from .data import make_clustered_tasks
from .estimator import AdaptiveFusedOrthogonal
from .fusion import fusion_path
from .scores import IRMScore, PLRScore, cross_fit_scores, default_regressor


@dataclass(frozen=True)
class Config:
    models: tuple[str, ...] = ("plr", "irm")
    deltas: tuple[float, ...] = (1 / 3, 2 / 3, 1.0)
    n_tasks: int = 20
    n_clusters: int = 3
    n_base: int = 400  # n_j = n_base + n_step * j
    n_step: int = 20
    p_base: int = 5  # p_j = p_base + j
    # IRM tasks get irm_n_factor x the samples: the AIPW per-task SE is ~2x the PLR one at equal n (see docs);
    # 4x keeps the IRM cells at the same per-task SE (and half the paper's n_j = 3200 + 80 j).
    irm_n_factor: int = 4
    n_folds: int = 2
    c_w: float = 0.1  # the paper's defaults: fuse radius (c_w / tau)^(1/gamma) = 0.1
    gamma: float = 2.0
    tau: float = 10.0
    eps_n: float = 1e-12
    auto_kappa: float = 1.5  # reported variant c_w="auto" (ours)
    n_rep: int = 2  # repeated cross-fits (DoubleML's n_rep) feeding pilots, losses and pooled estimates
    # tuning (issue 23): the method's fuse radius and UniformFusion's lambda, each on a grid of the same size,
    # chosen by RMSE on one development study per cell (data seeds disjoint from every evaluation seed)
    radius_grid: tuple[float, ...] = (0.05, 0.075, 0.1, 0.15, 0.2, 0.3)  # c_w = tau * r^gamma; 0.1 = paper
    uniform_grid: tuple[float, ...] = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2)  # 0.01 = MeTaG's value
    path_points: int = 30
    # many-tasks stress cells (issue 23): PLR, delta = 1/3, m in stress_m, n_j = stress_n_base + (100 // m) j,
    # p_j cycling through 6..15; the paper's default fuse radius (where single-linkage chaining shows)
    stress_m: tuple[int, ...] = (15, 45, 90)
    stress_delta: float = 1 / 3
    stress_n_base: int = 230
    # correlated covariates (reported, not judged): Corr(X_l, X_l') = corr_x^|l - l'|
    corr_x: float = 0.7
    corr_delta: float = 2 / 3
    corr_n_base: int = 400
    coverage_level: float = 0.95
    # a coverage verdict needs power (issue 46, v3b): with an exact 95% binomial interval wider than this the share
    # of covering intervals cannot tell nominal coverage from 0.90 or from 1.0 (36/36 gives [0.903, 1]; at 0.95
    # coverage the width reaches 0.08 at ~150 intervals), so the verdict is inconclusive
    coverage_max_width: float = 0.08
    # preconditions
    min_i2: float = 0.5  # Cochran's I^2 of the per-task DML estimates: tasks are heterogeneous
    max_chaining_ari: float = 0.9  # precondition: the unguarded rule's ARI at the largest m is below this
    # fusion cell (issue 46): PLR, m = fusion_m tasks, clusters delta = fusion_delta apart, n_j = fusion_n_base +
    # (100 // m) j, p_j cycling 6..15; chosen on dev seeds (at the paper's radius 0.1) as the setting where the
    # method and "pilots + merge, no fusion" differed most (see TUNING); the claim fusion_step compares the two there
    # at the radius fusion_radius_grid's tuning picks
    fusion_m: int = 45
    fusion_delta: float = 0.25
    fusion_n_base: int = 230
    # v3c: the fusion cell's radius is tuned like the main cells' (by RMSE on one development study, data seed
    # 10^6 + 800), separately for the method (and every arm that shares its radius) and for the paper's Stage-2
    # estimate; the grid reaches below the main cells' because the paper's 0.1 fuses all 45 tasks (v3b)
    fusion_radius_grid: tuple[float, ...] = (0.02, 0.03, 0.05, 0.075, 0.1, 0.15)
    path_seed: int = 400  # the seed that also draws the fusion-path figure (the first reported seed)


QUICK = Config(
    models=("plr",), deltas=(2 / 3,), n_tasks=12, n_base=300, n_rep=1, stress_m=(15, 45), corr_n_base=200, fusion_m=30
)
FULL = Config()

# fresh in v3c (issue 46): never seen while designing.  DEV: every seed a design choice saw - the reported seeds of
# v1 / v2 (full 0-11, quick 0-2), the c_w="auto" pilot seeds 100-103 (docs, "Deviations"), the v3 reported
# seeds 200-211 and the v3b reported seeds 300-311, on whose records the referees found what v3b / v3c changed
REPORTED = tuple(range(400, 412))
DEV = (*range(12), *range(100, 104), *range(200, 212), *range(300, 312))


def _score(model: str):
    # Fast learners: additive cubic splines on [X, sum X] + RidgeCV for every regression; for the IRM
    # propensity a plain L2 logistic regression on X (misspecified on purpose: the outcome model is
    # well specified, so the doubly robust score stays consistent, and it is 20x faster than spline logistic).
    if model == "plr":
        return PLRScore(default_regressor(), default_regressor())
    return IRMScore(default_regressor(), LogisticRegression(C=1.0, max_iter=1000))


def _c_w(cfg: Config, radius: float) -> float:
    return float(cfg.tau * radius**cfg.gamma)


def _estimators(cfg: Config, model: str, labels: np.ndarray, k: int, tuned: dict | None = None) -> dict:
    common = dict(model=model, n_folds=cfg.n_folds, n_rep=cfg.n_rep)
    fused = dict(gamma=cfg.gamma, tau=cfg.tau, eps_n=cfg.eps_n, **common)
    tuned = tuned or {"c_w": cfg.c_w, "lam": cfg.uniform_grid[0]}
    return {
        "ada": AdaptiveFusedOrthogonal(c_w=tuned["c_w"], **fused),
        "ada_auto": AdaptiveFusedOrthogonal(c_w="auto", kappa=cfg.auto_kappa, **fused),
        "personalized": PersonalizedDML(**common),
        "oracle": OracleClusterDML(labels, **common),
        "armul_k-1": ARMULLike(max(k - 1, 1), random_state=0, **common),
        "armul_k": ARMULLike(k, random_state=0, **common),
        "armul_k+1": ARMULLike(k + 1, random_state=0, **common),
        "uniform": UniformFusion(tuned["lam"], **common),
        # the control arm: the method with its fusion step removed (same radius, guard, refit)
        "merge": AdaptiveFusedOrthogonal(c_w=tuned["c_w"], fusion="none", **fused),
        # reported: the paper's Stage-2 estimate (the fused coefficients, no guard, no pooled refit), same radius
        "paper_stage2": AdaptiveFusedOrthogonal(c_w=tuned["c_w"], refit="none", chain_guard="none", **fused),
    }


def _simulate(cfg: Config, model: str, delta: float, data_seed: int, **kw):
    f = cfg.irm_n_factor if model == "irm" else 1
    return make_clustered_tasks(
        model,
        kw.pop("n_tasks", cfg.n_tasks),
        cfg.n_clusters,
        delta,
        f * kw.pop("n_base", cfg.n_base),
        f * kw.pop("n_step", cfg.n_step),
        cfg.p_base,
        random_state=data_seed,
        **kw,
    )


def _rmse(coef, theta) -> float:
    return float(np.sqrt(np.mean((np.asarray(coef) - theta) ** 2)))


def cluster_coverage(est, theta: np.ndarray, alpha: float = 0.05) -> list[int]:
    """One 0/1 per recovered cluster: its Wald interval contains the true effect of every member task."""
    ci = est.cluster_confint(alpha)
    return [
        int(np.all((ci[c, 0] <= theta[est.labels_ == c]) & (theta[est.labels_ == c] <= ci[c, 1])))
        for c in range(est.n_clusters_)
    ]


def _tune(cfg: Config, model: str, delta: float, dev_seed: int) -> dict:
    """Grid search on one development study: the method's fuse radius and UniformFusion's lambda, each over a
    grid of len(radius_grid) == len(uniform_grid) values, by RMSE against the known effects."""
    tasks, theta, _ = _simulate(cfg, model, delta, dev_seed)
    scores = cross_fit_scores(tasks, _score(model), n_folds=cfg.n_folds, random_state=dev_seed, n_rep=cfg.n_rep)
    fused = dict(model=model, gamma=cfg.gamma, tau=cfg.tau, eps_n=cfg.eps_n, n_folds=cfg.n_folds, n_rep=cfg.n_rep)
    ada = [
        _rmse(AdaptiveFusedOrthogonal(c_w=_c_w(cfg, r), **fused).fit_scores(scores).coef_, theta)
        for r in cfg.radius_grid
    ]
    uni = [
        _rmse(UniformFusion(lam, model=model, n_folds=cfg.n_folds, n_rep=cfg.n_rep).fit_scores(scores).coef_, theta)
        for lam in cfg.uniform_grid
    ]
    r = cfg.radius_grid[int(np.argmin(ada))]
    return {
        "radius": r,
        "c_w": _c_w(cfg, r),
        "lam": float(cfg.uniform_grid[int(np.argmin(uni))]),
        "dev_rmse_ada": ada,
        "dev_rmse_uniform": uni,
    }


def i_squared(coef: np.ndarray, se: np.ndarray) -> float:
    """Cochran's ``I^2 = max(0, (Q - (m - 1)) / Q)``, ``Q = sum_j (coef_j - mean_w)^2 / se_j^2`` (inverse-variance
    weighted mean): the share of the spread of the per-task estimates not explained by their noise."""
    w = 1.0 / np.asarray(se, dtype=float) ** 2
    mu = float(np.sum(w * coef) / np.sum(w))
    q = float(np.sum(w * (coef - mu) ** 2))
    return max(0.0, (q - (len(coef) - 1)) / q) if q > 0 else 0.0


def _study(cfg: Config, model: str, delta: float, data_seed: int, tuned: dict | None = None) -> dict:
    tasks, theta, labels = _simulate(cfg, model, delta, data_seed)
    scores = cross_fit_scores(tasks, _score(model), n_folds=cfg.n_folds, random_state=data_seed, n_rep=cfg.n_rep)
    out, cis = {}, {}
    for name, est in _estimators(cfg, model, labels, cfg.n_clusters, tuned).items():
        est.fit_scores(scores)
        ci = cis[name] = est.confint(0.05)
        out[name] = {
            "rmse": _rmse(est.coef_, theta),
            "ari": float(adjusted_rand_score(labels, est.labels_)),
            "coverage": float(np.mean((ci[:, 0] <= theta) & (theta <= ci[:, 1]))),
            "cluster_cover": cluster_coverage(est, theta, 1 - cfg.coverage_level),
            "n_clusters": int(est.n_clusters_),
        }
        if name == "personalized":
            out[name]["i2"] = i_squared(est.coef_, est.se_)
    # with the partition recovered exactly the adaptive refit is the oracle's (same scores, same SE code)
    exact = out["ada"]["ari"] == 1.0
    out["ada"]["ci_diff_vs_oracle"] = float(np.max(np.abs(cis["ada"] - cis["oracle"]))) if exact else None
    return out


def _fit_arms(cfg: Config, ests: dict, scores, theta: np.ndarray, labels: np.ndarray) -> dict:
    """Fit every arm on the same cross-fitted scores; RMSE, ARI, cluster coverage and cluster count of each."""
    out = {}
    for name, est in ests.items():
        est.fit_scores(scores)
        out[name] = {
            "rmse": _rmse(est.coef_, theta),
            "ari": float(adjusted_rand_score(labels, est.labels_)),
            "cluster_cover": cluster_coverage(est, theta, 1 - cfg.coverage_level),
            "n_clusters": int(est.n_clusters_),
        }
    return out


def _stress(cfg: Config, m: int, data_seed: int) -> dict:
    """Many noisy tasks: the guarded method, the paper's unguarded rule, per-task DML, the oracle, ARMUL-like K."""
    tasks, theta, labels = _simulate(
        cfg, "plr", cfg.stress_delta, data_seed, n_tasks=m, n_base=cfg.stress_n_base, n_step=100 // m, p_cycle=10
    )
    scores = cross_fit_scores(tasks, _score("plr"), n_folds=cfg.n_folds, random_state=data_seed, n_rep=cfg.n_rep)
    common = dict(model="plr", n_folds=cfg.n_folds, n_rep=cfg.n_rep)
    fused = dict(c_w=cfg.c_w, gamma=cfg.gamma, tau=cfg.tau, eps_n=cfg.eps_n, **common)
    ests = {
        "ada": AdaptiveFusedOrthogonal(chain_guard="split", **fused),
        "ada_unguarded": AdaptiveFusedOrthogonal(chain_guard="none", **fused),
        "merge": AdaptiveFusedOrthogonal(chain_guard="split", fusion="none", **fused),
        # reported: ADMM on permuted weights, to attribute the method's edge over the merge at large m
        "shuffled": AdaptiveFusedOrthogonal(chain_guard="split", fusion="shuffled", random_state=data_seed, **fused),
        "paper_stage2": AdaptiveFusedOrthogonal(refit="none", chain_guard="none", **fused),  # reported
        "personalized": PersonalizedDML(**common),
        "oracle": OracleClusterDML(labels, **common),
        "armul_k": ARMULLike(cfg.n_clusters, random_state=0, **common),
    }
    out = _fit_arms(cfg, ests, scores, theta, labels)
    out["ada"]["n_chained"] = int(ests["ada"].n_chained_)
    se = np.array([scores.pooled([j])[1] for j in range(m)])
    out["gap_over_se"] = float(cfg.stress_delta / np.mean(se))
    return out


def _fusion_tasks(cfg: Config, data_seed: int):
    tasks, theta, labels = _simulate(
        cfg,
        "plr",
        cfg.fusion_delta,
        data_seed,
        n_tasks=cfg.fusion_m,
        n_base=cfg.fusion_n_base,
        n_step=100 // cfg.fusion_m,
        p_cycle=10,
    )
    scores = cross_fit_scores(tasks, _score("plr"), n_folds=cfg.n_folds, random_state=data_seed, n_rep=cfg.n_rep)
    return scores, theta, labels


def _tune_fusion(cfg: Config, dev_seed: int) -> dict:
    """The fusion cell's radius on ``fusion_radius_grid`` by RMSE on one development study: one pick for the
    method (guard and pooled refit) and one for the paper's Stage-2 estimate (no guard, no refit)."""
    scores, theta, _ = _fusion_tasks(cfg, dev_seed)
    fused = dict(model="plr", gamma=cfg.gamma, tau=cfg.tau, eps_n=cfg.eps_n, n_folds=cfg.n_folds, n_rep=cfg.n_rep)
    rmse = {
        arm: [
            _rmse(AdaptiveFusedOrthogonal(c_w=_c_w(cfg, r), **kw, **fused).fit_scores(scores).coef_, theta)
            for r in cfg.fusion_radius_grid
        ]
        for arm, kw in (("ada", {}), ("paper_stage2", dict(refit="none", chain_guard="none")))
    }
    return {
        **{f"radius_{a}": cfg.fusion_radius_grid[int(np.argmin(v))] for a, v in rmse.items()},
        **{f"dev_rmse_{a}": v for a, v in rmse.items()},
    }


def _fusion_cell(cfg: Config, data_seed: int, seed: int, tuned: dict | None = None) -> dict:
    """Many close, noisy tasks: the method against "pilots + merge, no fusion" (its fusion step removed), the
    controls "shuffled-weights ADMM" and "one cluster + guard" (the ADMM's output replaced by one all-task cluster),
    the unguarded ADMM (whose partition says whether the cell can isolate the fusion step), the paper's Stage-2
    estimate (at its own tuned radius and at the paper's 0.1), per-task DML and the oracle, all on the same
    cross-fitted scores.  ``tuned``: :func:`_tune_fusion`'s picks (None: the paper's radius for every arm)."""
    scores, theta, labels = _fusion_tasks(cfg, data_seed)
    paper = (cfg.c_w / cfg.tau) ** (1 / cfg.gamma)
    tuned = tuned or {"radius_ada": paper, "radius_paper_stage2": paper}
    common = dict(model="plr", n_folds=cfg.n_folds, n_rep=cfg.n_rep)
    shape = dict(gamma=cfg.gamma, tau=cfg.tau, eps_n=cfg.eps_n, **common)
    fused = dict(c_w=_c_w(cfg, tuned["radius_ada"]), **shape)
    stage2 = dict(refit="none", chain_guard="none", **shape)
    ests = {
        "ada": AdaptiveFusedOrthogonal(**fused),
        "merge": AdaptiveFusedOrthogonal(fusion="none", **fused),
        "shuffled": AdaptiveFusedOrthogonal(fusion="shuffled", random_state=seed, **fused),
        "one_cluster": AdaptiveFusedOrthogonal(fusion="one", **fused),
        "ada_unguarded": AdaptiveFusedOrthogonal(chain_guard="none", **fused),
        "paper_stage2": AdaptiveFusedOrthogonal(c_w=_c_w(cfg, tuned["radius_paper_stage2"]), **stage2),
        "paper_stage2_r0.1": AdaptiveFusedOrthogonal(c_w=cfg.c_w, **stage2),
        "personalized": PersonalizedDML(**common),
        "oracle": OracleClusterDML(labels, **common),
    }
    return _fit_arms(cfg, ests, scores, theta, labels)


def _correlated(cfg: Config, data_seed: int) -> dict:
    """Correlated covariates (reported): coverage of the method's and the oracle's cluster intervals."""
    tasks, theta, labels = _simulate(cfg, "plr", cfg.corr_delta, data_seed, n_base=cfg.corr_n_base, x_corr=cfg.corr_x)
    scores = cross_fit_scores(tasks, _score("plr"), n_folds=cfg.n_folds, random_state=data_seed, n_rep=cfg.n_rep)
    common = dict(model="plr", n_folds=cfg.n_folds, n_rep=cfg.n_rep)
    out = {}
    for name, est in (
        ("ada", AdaptiveFusedOrthogonal(c_w=cfg.c_w, gamma=cfg.gamma, tau=cfg.tau, eps_n=cfg.eps_n, **common)),
        ("oracle", OracleClusterDML(labels, **common)),
        ("personalized", PersonalizedDML(**common)),
    ):
        est.fit_scores(scores)
        out[name] = {
            "rmse": _rmse(est.coef_, theta),
            "ari": float(adjusted_rand_score(labels, est.labels_)),
            "cluster_cover": cluster_coverage(est, theta, 1 - cfg.coverage_level),
        }
    return out


def _path(cfg: Config, model: str, delta: float, data_seed: int) -> dict:
    tasks, theta, labels = _simulate(cfg, model, delta, data_seed)
    scores = cross_fit_scores(tasks, _score(model), n_folds=cfg.n_folds, random_state=data_seed)
    ada = AdaptiveFusedOrthogonal(model=model, c_w=cfg.c_w, gamma=cfg.gamma, tau=cfg.tau, eps_n=cfg.eps_n)
    A, b, lam = ada.fusion_problem(scores)
    ones = np.ones_like(lam) - np.eye(len(b))
    s_ada = np.logspace(-5, 2, cfg.path_points)
    s_uni = np.logspace(-4, 0.5, cfg.path_points)
    return {
        "theta": theta.tolist(),
        "labels": labels.tolist(),
        "scale_adaptive": s_ada.tolist(),
        "path_adaptive": fusion_path(A, b, lam, s_ada).tolist(),
        "scale_uniform": s_uni.tolist(),
        "path_uniform": fusion_path(A, b, ones, s_uni).tolist(),
    }


def measure(cfg: Config, seed: int, progress) -> dict:
    """One seed: every (model, delta) cell simulated with its own data seed; seed 0 also draws the path figure."""
    out: dict = {"cells": {}, "tuning": {}, "stress": {}}
    fusion_tuned = progress.checkpoint(
        "tune-fusion", {**asdict(cfg), "cell": "fusion"}, lambda: _tune_fusion(cfg, 10**6 + 800)
    )
    out["tuning"]["fusion"] = fusion_tuned
    out["fusion"] = progress.cached("fusion", lambda: _fusion_cell(cfg, 1000 * seed + 800, seed, fusion_tuned))
    for mi, model in enumerate(cfg.models):
        for di, delta in enumerate(cfg.deltas):
            data_seed = 1000 * seed + 10 * mi + di
            # the grid search runs once per cell on a development study shared by every seed (seed 10^6 + cell)
            tuned = progress.checkpoint(
                f"tune-{model}-d{di}",
                {**asdict(cfg), "model": model, "delta": delta},
                lambda model=model, delta=delta, mi=mi, di=di: _tune(cfg, model, delta, 10**6 + 10 * mi + di),
            )
            out["tuning"][cell_name(model, delta)] = tuned
            out["cells"][cell_name(model, delta)] = progress.cached(
                f"{model}-d{di}",
                lambda model=model, delta=delta, ds=data_seed, t=tuned: _study(cfg, model, delta, ds, t),
            )
    for i, m in enumerate(cfg.stress_m):
        out["stress"][str(m)] = progress.cached(
            f"stress-m{m}", lambda m=m, ds=1000 * seed + 500 + i: _stress(cfg, m, ds)
        )
    out["correlated"] = progress.cached("correlated", lambda: _correlated(cfg, 1000 * seed + 700))
    if seed == cfg.path_seed:  # one fusion path for the figure (not judged)
        path_model, path_delta = cfg.models[0], cfg.deltas[len(cfg.deltas) // 2]
        out["path"] = progress.cached("path", lambda: _path(cfg, path_model, path_delta, 1000 * seed + 99))
    return out


TUNING = (
    dict(
        variant="v1 (201efaa..9fc9ba1): the spec's cells scaled to 2 cores (m = 20, n_j = 400 + 20 j, p_j = 5 + j, "
        "2 folds, spline learners, L2 logistic IRM propensity), paper constants c_w = 0.1, tau = 10, gamma = 2; IRM "
        "first at the spec's n_j, then at irm_n_factor = 4 after it merged and split clusters (docs, finding)",
        seeds=list(range(10)),
        outcome="IRM at the spec's n: recovery_close, pooling_gain_every_cell, oracle_match fail; 4x n kept",
    ),
    dict(
        variant="v1: c_w='auto' with the spec's kappa = 3, then kappa = 1.5 (reported only, never judged)",
        seeds=[100, 101, 102, 103],
        outcome="kappa = 3 merged the delta = 1/3 PLR clusters; kappa = 1.5 kept as the reported variant",
    ),
    dict(
        variant="v2 (76616f4): evidence v2 thresholds (coverage >= 0.9 one-sided, I^2 >= 0.5, oracle beats "
        "per-task DML) and quick preset 2 -> 3 seeds",
        seeds=[0, 1, 2],
        outcome="all claims held on the quick and full presets",
    ),
    dict(
        variant="v2 (issue 23, 23c62c1): the chaining guard designed on the m = 90 stress cell - no guard, the range "
        "rule alone (guard_alpha = 1, two-means split), + Cochran's test, + fewest-groups exact 1-D k-means, + "
        "merge of homogeneous neighbours; stress sizes n_j = 230 + (100 // m) j; n_rep = 2",
        seeds=[0, 1, 2, 3, 4, 5],
        outcome="ARI at m = 90: 0.09, 0.55, 0.86, 0.90; the merge lifted m = 15 from 0.93 to 0.98; kept the last",
    ),
    dict(
        variant="v2 (issue 23): the method's fuse radius on (0.05 .. 0.3) and UniformFusion's lambda on (1e-4 .. "
        "0.03), 6 values each, by RMSE on one development study per cell (data seed 10^6 + cell, not a seed of "
        "the runner); re-run by every preset (same study, same pick)",
        seeds=[],
        outcome="radius 0.05 in five cells, 0.15 in IRM delta 1/3; lambda 0.001-0.003",
    ),
    dict(
        variant="v2 reference run (da58145): full preset on seeds 0-11; the referee (issue 46) re-judged it with "
        "'pilots + merge, no fusion' (the ADMM removed) and found the same numbers at m = 20 and 90",
        seeds=list(range(12)),
        outcome="claims 10/10, checks 1/1, preconditions 3/3 (uncontrolled); coverage 0.918 CP [0.873, 0.951]",
    ),
    dict(
        variant="v3 (issue 46) probe for a setting where fusion and 'pilots + merge' differ, PLR, radius 0.1, 1 "
        "repeated cross-fit, data seeds 7000 + s of dev seed 7's block (s = 0..11): main cells delta 1/3 and 2/3 "
        "m = 20 (s 0-3); stress m = 45 (s 0-2), m = 90 (s 0-3); m = 45 at n_base 150 (s 0-5); m = 45 delta 1/4 "
        "n_base 230 (s 0-11); m = 45 delta 1/3 at radius 0.05 and 0.15 (s 0-5); m = 60 delta 1/4 (s 0-5); m = 45 "
        "delta 1/5 n_base 400 (s 0-5)",
        seeds=[7],
        outcome="main cells: identical in 7 of 8 studies (ada - merge RMSE +0.0001); elsewhere the sign flips "
        "between seed halves: m = 45 delta 1/4 -0.0071 (s 0-5), +0.0041 (s 6-11); m = 90 +0.0055; delta 1/5 "
        "+0.0080. Kept m = 45, delta 1/4, n_base 230 (the largest mean gap on the first half) as the fusion "
        "cell; no setting showed a consistent gain of fusion over the merge",
    ),
    dict(
        variant="v3 controls chosen before any reported seed ran: 'pilots + merge, no fusion' (fusion = 'none') for "
        "every claim crediting the fused estimator, the unguarded rule for the guard's claims, shuffled adaptive "
        "weights (fusion = 'shuffled') for fusion_step; coverage judged two-sided in every stress cell",
        seeds=[],
        outcome="see the reference run (seeds 200-211); nothing was adjusted after it",
    ),
    dict(
        variant="v3 reference run (c9d462f) on seeds 200-211, then its referee's probes on those records: the "
        "unguarded ADMM returns ONE cluster in the fusion cell in 12/12 seeds and 'one cluster + guard' equals the "
        "method in 12/12; with the pooled refit the ADMM labels equal the connected components of "
        "{lambda > eps_n}; the stress-cell coverage rule at ~36 intervals passes SE x 1.5 with probability 1",
        seeds=list(range(200, 212)),
        outcome="claims 5/14, controls 2/10, checks 1/1, preconditions 4/4; the fusion cell's coverage 22/37 "
        "unjudged; the paper's Stage-2 estimate (refit='none') RMSE ~0.20 against per-task DML ~0.06 there, "
        "unreported. These seeds became dev seeds",
    ),
    dict(
        variant="v3b, chosen from the v3 referee's report before any fresh seed ran: coverage verdicts need an "
        "exact 95% interval no wider than 0.08 (else inconclusive; 36/36 gives [0.903, 1], width 0.097); the "
        "fusion cell's coverage judged "
        "(inference_fusion); 'pooled intervals on a wrong partition' (ARMUL K-1) as the control of inference; "
        "'one cluster + guard' (fusion = 'one') as a second control of fusion_step, with the precondition "
        "fusion_admm_nontrivial (the unguarded ADMM partition is neither one cluster nor all singletons in at "
        "least half the seeds); the paper's Stage-2 estimate reported in every cell; fresh seeds 300-311",
        seeds=[],
        outcome="see the reference run (seeds 300-311); nothing was adjusted after it",
    ),
    dict(
        variant="v3b reference run (8cc6752) on seeds 300-311 (and the quick preset / tests on 300-302), then the "
        "second referee's probes on dev seeds 0-11 and 200-211: 'pilots + merge' gives the method's main-cell "
        "intervals (204/217 both), so inference passes the issue's break; a non-orthogonal score covers 51/54 on dev "
        "(weak confounding); at the method's radius 0.05 the unguarded ADMM partition is non-trivial in 24/24 dev "
        "seeds (method - merge -0.0006 RMSE, p = 0.40); the paper's Stage-2 estimate in the fusion cell is 0.202 / "
        "0.066 / 0.052 at radius 0.1 / 0.05 / 0.03 vs per-task DML 0.060; the oracle fails the coverage rule in "
        "the fusion cell (29/36)",
        seeds=[*range(12), *range(200, 212), *range(300, 312)],
        outcome="claims 3/15, controls 3/12, checks 1/1, preconditions 4/5; seeds 300-311 became dev seeds",
    ),
    dict(
        variant="v3c, chosen from the second referee's report before any fresh seed ran: 'pilots + merge' as a "
        "control of inference; a precondition per coverage claim that the oracle's intervals are not rejected "
        "(oracle_covers_*); the fusion cell's radius tuned like the main cells' (RMSE on one development study, "
        "data seed 10^6 + 800, grid 0.02-0.15) separately for the method and for the paper's Stage-2 estimate, "
        "which is also reported at the paper's 0.1; fresh seeds 400-411",
        seeds=[],
        outcome="see the reference run (seeds 400-411); nothing was adjusted after it",
    ),
)


EXPERIMENT = register(
    Experiment(
        slug="fused_orthogonal",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": REPORTED[:3], "full": REPORTED},  # 12 x 6 cells x ~3 clusters >= 200 intervals
        measure=measure,
        judge=judge,
        threads=1,  # tiny BLAS calls: one thread avoids oversubscription on a shared CPU
        dev_seeds=DEV,
        tuning=TUNING,
    )
)
