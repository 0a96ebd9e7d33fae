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
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import adjusted_rand_score

from icml26.core import (
    Experiment,
    Report,
    judge_every,
    judge_superiority,
    judge_threshold,
    mean_ci,
    register,
)

from .baselines import ARMULLike, OracleClusterDML, PersonalizedDML, UniformFusion
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
    # preconditions
    min_i2: float = 0.5  # Cochran's I^2 of the per-task DML estimates: tasks are heterogeneous
    max_chaining_ari: float = 0.9  # precondition: the unguarded rule's ARI at the largest m is below this


QUICK = Config(models=("plr",), deltas=(2 / 3,), n_tasks=12, n_base=300, n_rep=1, stress_m=(15, 45), corr_n_base=200)
FULL = Config()

METHODS = ("ada", "ada_auto", "personalized", "oracle", "armul_k-1", "armul_k", "armul_k+1", "uniform")
STRESS_METHODS = ("ada", "ada_unguarded", "personalized", "oracle", "armul_k")


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
        "personalized": PersonalizedDML(**common),
        "oracle": OracleClusterDML(labels, **common),
        "armul_k": ARMULLike(cfg.n_clusters, random_state=0, **common),
    }
    out = {}
    for name, est in ests.items():
        est.fit_scores(scores)
        out[name] = {
            "rmse": _rmse(est.coef_, theta),
            "ari": float(adjusted_rand_score(labels, est.labels_)),
            "cluster_cover": cluster_coverage(est, theta, 1 - cfg.coverage_level),
            "n_clusters": int(est.n_clusters_),
        }
    warn = AdaptiveFusedOrthogonal(chain_guard="none", **fused).fit_scores(scores)
    out["ada"]["n_chained"] = int(ests["ada"].n_chained_)
    out["ada_unguarded"]["n_chained"] = int(warn.n_chained_)
    se = np.array([scores.pooled([j])[1] for j in range(m)])
    out["gap_over_se"] = float(cfg.stress_delta / np.mean(se))
    return out


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


def _cell(model: str, delta: float) -> str:
    return f"{model}-d{delta:.3g}"


def measure(cfg: Config, seed: int, progress) -> dict:
    """One seed: every (model, delta) cell simulated with its own data seed; seed 0 also draws the path figure."""
    out: dict = {"cells": {}, "tuning": {}, "stress": {}}
    for mi, model in enumerate(cfg.models):
        for di, delta in enumerate(cfg.deltas):
            data_seed = 1000 * seed + 10 * mi + di
            # the grid search runs once per cell on a development study shared by every seed (seed 10^6 + cell)
            tuned = progress.checkpoint(
                f"tune-{model}-d{di}",
                {**asdict(cfg), "model": model, "delta": delta},
                lambda model=model, delta=delta, mi=mi, di=di: _tune(cfg, model, delta, 10**6 + 10 * mi + di),
            )
            out["tuning"][_cell(model, delta)] = tuned
            out["cells"][_cell(model, delta)] = progress.cached(
                f"{model}-d{di}",
                lambda model=model, delta=delta, ds=data_seed, t=tuned: _study(cfg, model, delta, ds, t),
            )
    for i, m in enumerate(cfg.stress_m):
        out["stress"][str(m)] = progress.cached(
            f"stress-m{m}", lambda m=m, ds=1000 * seed + 500 + i: _stress(cfg, m, ds)
        )
    out["correlated"] = progress.cached("correlated", lambda: _correlated(cfg, 1000 * seed + 700))
    if seed == 0:  # one fusion path for the figure (not judged)
        path_model, path_delta = cfg.models[0], cfg.deltas[len(cfg.deltas) // 2]
        out["path"] = progress.cached("path", lambda: _path(cfg, path_model, path_delta, 1000 * seed + 99))
    return out


def judge_coverage(id: str, covered, level: float = 0.95, confidence: float = 0.95):
    """Two-sided coverage statement over independent intervals: *holds* if the nominal ``level`` lies inside the
    exact (Clopper-Pearson) ``confidence`` binomial interval of the coverage, *does not hold* if it lies outside
    (under- or over-coverage).  Judged by :func:`judge_every` on ``(lower - level, level - upper) <= 0``."""
    from scipy.stats import binomtest

    c = np.asarray(covered, dtype=int).ravel()
    if c.size == 0 or not np.all((c == 0) | (c == 1)):
        raise ValueError("covered must be a non-empty sequence of 0/1 indicators")
    ci = binomtest(int(c.sum()), int(c.size)).proportion_ci(confidence, method="exact")
    return judge_every(
        id,
        f"The adaptive estimator's cluster-level {level:.0%} Wald intervals have nominal coverage: {level:g} lies "
        f"inside the exact {confidence:.0%} binomial interval of the share of intervals that contain every member "
        "task's true effect (two-sided: under- and over-coverage both fail)",
        ("binomial interval: (lower - nominal, nominal - upper)", [ci.low - level, level - ci.high]),
        bound=0.0,
        sense="<=",
    )


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    seeds = list(report.seeds or range(len(records)))
    cells = [(mi, model, di, delta) for mi, model in enumerate(cfg.models) for di, delta in enumerate(cfg.deltas)]
    results: dict[str, list[dict]] = {_cell(m, d): [r["cells"][_cell(m, d)] for r in records] for _, m, _, d in cells}
    report.metrics["per_study"] = results

    def vals(method: str, metric: str, cell_filter=lambda m, d: True) -> np.ndarray:
        return np.array([r[method][metric] for _, m, _, d in cells if cell_filter(m, d) for r in results[_cell(m, d)]])

    def units(cell_filter=lambda m, d: True) -> list[int]:
        """The seed of every value ``vals`` returns (cells of one seed are averaged before the test)."""
        return [s for _, m, _, d in cells if cell_filter(m, d) for s in seeds]

    g_ada, g_uni = len(cfg.radius_grid), len(cfg.uniform_grid)
    picked = {c: t for c, t in records[0]["tuning"].items()}
    report.set_tuning(
        "ada",
        configs=g_ada,
        steps=1,
        note=f"fuse radius on {list(cfg.radius_grid)} (0.1 = paper default) by RMSE on one development study per "
        "cell; picked " + ", ".join(f"{c}: {t['radius']:g}" for c, t in picked.items()),
    )
    report.set_tuning(
        "uniform",
        configs=g_uni,
        steps=1,
        note=f"lambda on {list(cfg.uniform_grid)} (0.01 = MeTaG's) by RMSE on the same development studies; picked "
        + ", ".join(f"{c}: {t['lam']:g}" for c, t in picked.items()),
    )
    for arm, note in (
        ("ada_auto", f"c_w='auto', kappa={cfg.auto_kappa}: nothing tuned (reported only)"),
        ("ada_unguarded", "the paper's rule at its default radius 0.1, no chaining guard (stress cells)"),
        ("personalized", "no hyperparameter"),
        ("oracle", "true labels given"),
        ("armul", "K given (K-1, K, K+1 reported separately), k-means start, no tuning"),
    ):
        report.set_tuning(arm, configs=1, steps=0 if arm in ("personalized", "oracle") else 1, note=note)

    # -- tables -------------------------------------------------------------------------------------------
    rows = []
    for _, model, _, delta in cells:
        for meth in METHODS:
            rs = results[_cell(model, delta)]
            row = {"model": model, "delta": round(delta, 3), "method": meth}
            for metric in ("rmse", "ari", "coverage", "n_clusters"):
                est = mean_ci([r[meth][metric] for r in rs])
                row[metric] = est.mean
                if metric == "rmse":
                    row["rmse_sd"] = est.std
            rows.append(row)
    report.add_table(
        "per_cell",
        rows,
        caption="Mean over seeds per (model, delta) cell: RMSE of task estimates (and its sd over seeds), "
        "adjusted Rand index, Wald 95% coverage of the tasks' true effects, number of recovered clusters.",
    )

    by_model = []
    for model in cfg.models:
        sep = vals("ada", "ari", lambda m, d, model=model: m == model and d >= 2 / 3 - 1e-9)
        cls = vals("ada", "ari", lambda m, d, model=model: m == model and abs(d - 1 / 3) < 1e-9)
        mine = lambda m, d, model=model: m == model  # noqa: E731
        by_model.append(
            {
                "model": model,
                "ari_delta>=2/3": float(sep.mean()) if sep.size else float("nan"),
                "ari_delta=1/3": float(cls.mean()) if cls.size else float("nan"),
                "rmse_ratio_vs_personalized": float(
                    np.mean(vals("ada", "rmse", mine) / vals("personalized", "rmse", mine))
                ),
                "rmse_ratio_vs_oracle": float(np.mean(vals("ada", "rmse", mine) / vals("oracle", "rmse", mine))),
                "coverage_ada": float(vals("ada", "coverage", mine).mean()),
                "coverage_oracle": float(vals("oracle", "coverage", mine).mean()),
            }
        )
    report.add_table(
        "per_model",
        by_model,
        caption="The claim statistics split by model (descriptive; the claims above pool every cell).",
    )

    # -- preconditions: the tasks are heterogeneous and pooling within the true clusters helps ---------------
    sep_f = lambda m, d: d >= 2 / 3 - 1e-9  # noqa: E731
    close_f = lambda m, d: abs(d - 1 / 3) < 1e-9  # noqa: E731
    report.add_claim(
        judge_threshold(
            "tasks_heterogeneous",
            f"The tasks are heterogeneous, so there are clusters to find and a common effect would be wrong: "
            f"Cochran's I^2 of the per-task DML estimates is >= {cfg.min_i2:g}",
            ("per-task DML I^2", vals("personalized", "i2")),
            threshold=cfg.min_i2,
            sense=">=",
            kind="precondition",
            units=units(),
        )
    )
    pers_rmse, orc_rmse = vals("personalized", "rmse"), vals("oracle", "rmse")
    report.add_claim(
        judge_superiority(
            "pooling_has_room",
            "Pooling has something to gain: the oracle that pools within the true clusters has lower RMSE than "
            "per-task DML (no pooling, the trivial rule)",
            ("oracle RMSE", orc_rmse),
            {"personalized RMSE": pers_rmse},
            higher_is_better=False,
            test="ttest",
            kind="precondition",
            units=units(),
        )
    )
    helps = ["tasks_heterogeneous", "pooling_has_room"]

    # -- claims -----------------------------------------------------------------------------------------------
    separated = [d for d in cfg.deltas if sep_f(None, d)]
    close = [d for d in cfg.deltas if close_f(None, d)]
    if separated:
        report.add_claim(
            judge_threshold(
                "recovery_separated",
                "Mean adjusted Rand index of the recovered clusters is >= 0.95 when clusters are well "
                "separated (delta >= 2/3)",
                ("ada ARI", vals("ada", "ari", sep_f)),
                threshold=0.95,
                sense=">=",
                units=units(sep_f),
                requires=["tasks_heterogeneous"],
            )
        )
    if close:
        report.add_claim(
            judge_threshold(
                "recovery_close",
                "Mean adjusted Rand index is >= 0.85 at delta = 1/3",
                ("ada ARI", vals("ada", "ari", close_f)),
                threshold=0.85,
                sense=">=",
                units=units(close_f),
                requires=["tasks_heterogeneous"],
            )
        )
    ada_rmse = vals("ada", "rmse")
    report.add_claim(
        judge_superiority(
            "pooling_gain",
            "The adaptive fused estimator has lower RMSE than per-task DML (per-seed mean over cells, paired over "
            "seeds)",
            ("ada RMSE", ada_rmse),
            {"personalized RMSE": pers_rmse},
            higher_is_better=False,
            alpha=0.01,
            units=units(),
            requires=helps,
        )
    )
    cell_diff = [
        float(np.mean([r["ada"]["rmse"] - r["personalized"]["rmse"] for r in results[_cell(m, d)]]))
        for _, m, _, d in cells
    ]
    report.add_claim(
        judge_every(
            "pooling_gain_every_cell",
            "RMSE below per-task DML in every (model, delta) cell (mean RMSE difference < 0 per cell)",
            ("ada minus personalized mean RMSE per cell", cell_diff),
            bound=0.0,
            sense="<=",
            requires=helps,
        )
    )
    report.add_claim(
        judge_threshold(
            "pooling_ratio",
            "Average ratio RMSE(adaptive) / RMSE(per-task DML) is <= 0.7",
            ("ada/personalized RMSE ratio", ada_rmse / pers_rmse),
            threshold=0.7,
            sense="<=",
            units=units(),
            requires=helps,
        )
    )
    report.add_claim(
        judge_superiority(
            "oracle_match",
            "RMSE within 1.15x of the oracle that knows the clusters: the ratio of mean RMSEs (over seeds) is "
            "< 1.15, i.e. mean RMSE(ada) < 1.15 mean RMSE(oracle), by a paired bootstrap over seeds",
            ("ada RMSE", ada_rmse),
            {"oracle RMSE x 1.15": 1.15 * orc_rmse},
            higher_is_better=False,
            test="bootstrap",
            units=units(),
            requires=["tasks_heterogeneous"],
        )
    )
    ada_seed = np.array([np.mean(ada_rmse[np.array(units()) == s]) for s in seeds])
    orc_seed = np.array([np.mean(orc_rmse[np.array(units()) == s]) for s in seeds])
    boot = np.random.default_rng(0).integers(0, len(seeds), size=(10_000, len(seeds)))
    ratios = ada_seed[boot].mean(axis=1) / orc_seed[boot].mean(axis=1)
    report.metrics["oracle_ratio_of_means"] = {
        "ratio": float(ada_seed.mean() / orc_seed.mean()),
        "bootstrap_95": [float(x) for x in np.quantile(ratios, [0.025, 0.975])],
    }
    report.add_note(
        f"oracle_match: ratio of mean RMSEs {ada_seed.mean() / orc_seed.mean():.3f}, paired percentile bootstrap "
        f"over seeds 95% [{np.quantile(ratios, 0.025):.3f}, {np.quantile(ratios, 0.975):.3f}] (the judge tests "
        "the equivalent contrast mean(1.15 oracle - ada) > 0 with the same bootstrap)."
    )
    report.add_claim(
        judge_superiority(
            "misspecified_k",
            "A misspecified number of clusters (K-1 or K+1) hurts the k-means-style baseline; the adaptive "
            "estimator, which needs no K, has lower RMSE than it",
            ("ada RMSE", ada_rmse),
            {"armul K-1 RMSE": vals("armul_k-1", "rmse"), "armul K+1 RMSE": vals("armul_k+1", "rmse")},
            higher_is_better=False,
            units=units(),
            requires=["tasks_heterogeneous"],
        )
    )
    # -- many-tasks stress cells ------------------------------------------------------------------------------
    big = str(max(cfg.stress_m))
    stress = {m: [r["stress"][m] for r in records] for m in map(str, cfg.stress_m)}
    report.add_claim(
        judge_threshold(
            "chaining_unguarded",
            f"Chaining exists: with many noisy tasks (m = {big}) the paper's unguarded rule (exact fusion at the "
            f"default radius 0.1, connected components) recovers the clusters poorly, ARI <= {cfg.max_chaining_ari}",
            ("ada_unguarded ARI", [x["ada_unguarded"]["ari"] for x in stress[big]]),
            threshold=cfg.max_chaining_ari,
            sense="<=",
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            "recovery_many_tasks",
            f"With the chaining guard the clusters are recovered at m = {big} (mean ARI >= 0.9)",
            ("ada ARI", [x["ada"]["ari"] for x in stress[big]]),
            threshold=0.9,
            sense=">=",
            requires=["chaining_unguarded"],
        )
    )
    report.add_claim(
        judge_every(
            "many_tasks_no_worse",
            "With the chaining guard, adding tasks never makes the method worse than not pooling: mean RMSE <= "
            f"per-task DML's at every m in {list(cfg.stress_m)}",
            (
                "ada minus personalized mean RMSE per m",
                [float(np.mean([x["ada"]["rmse"] - x["personalized"]["rmse"] for x in stress[m]])) for m in stress],
            ),
            bound=0.0,
            sense="<=",
            requires=["chaining_unguarded"],
        )
    )
    report.add_table(
        "stress",
        [
            {
                "m": int(m),
                "method": meth,
                "rmse": float(np.mean([x[meth]["rmse"] for x in stress[m]])),
                "ari": float(np.mean([x[meth]["ari"] for x in stress[m]])),
                "n_clusters": float(np.mean([x[meth]["n_clusters"] for x in stress[m]])),
                "cluster_coverage": float(np.mean([c for x in stress[m] for c in x[meth]["cluster_cover"]])),
                "gap_over_se": float(np.mean([x["gap_over_se"] for x in stress[m]])),
            }
            for m in stress
            for meth in STRESS_METHODS
        ],
        caption=f"Many-tasks stress cells (PLR, delta = {cfg.stress_delta:.3g}, n_j = {cfg.stress_n_base} + "
        "(100 // m) j, p_j cycling 6..15, paper radius 0.1): mean over seeds. gap_over_se = delta / mean per-task SE.",
    )
    # -- inference: cluster-level coverage, two-sided against the nominal level ------------------------------
    cover = [c for r in records for cell in r["cells"].values() for c in cell["ada"]["cluster_cover"]]
    report.add_claim(judge_coverage("inference", cover, cfg.coverage_level))
    from scipy.stats import binomtest

    cp = binomtest(int(np.sum(cover)), len(cover)).proportion_ci(0.95, method="exact")
    report.metrics["cluster_coverage"] = {
        "covered": int(np.sum(cover)),
        "n_intervals": len(cover),
        "coverage": float(np.mean(cover)),
        "clopper_pearson_95": [float(cp.low), float(cp.high)],
    }
    report.add_note(
        f"inference: {int(np.sum(cover))} of {len(cover)} cluster intervals cover ({np.mean(cover):.3f}); exact "
        f"95% binomial interval [{cp.low:.3f}, {cp.high:.3f}] against {cfg.coverage_level}."
    )
    corr = [r["correlated"] for r in records]
    report.add_table(
        "correlated_covariates",
        [
            {
                "method": meth,
                "rmse": float(np.mean([x[meth]["rmse"] for x in corr])),
                "ari": float(np.mean([x[meth]["ari"] for x in corr])),
                "cluster_coverage": float(np.mean([c for x in corr for c in x[meth]["cluster_cover"]])),
                "n_intervals": len([c for x in corr for c in x[meth]["cluster_cover"]]),
            }
            for meth in ("ada", "oracle", "personalized")
        ],
        caption=f"Correlated covariates (reported, not judged): PLR, delta = {cfg.corr_delta:.3g}, m = "
        f"{cfg.n_tasks}, n_j = {cfg.corr_n_base} + {cfg.n_step} j, Corr(X_l, X_l') = {cfg.corr_x}^|l - l'|; "
        "share of 95% cluster intervals that contain every member task's effect.",
    )
    diffs = [x for x in vals("ada", "ci_diff_vs_oracle") if x is not None]
    n_exact = len(diffs)
    if diffs:
        report.add_claim(
            judge_every(
                "inference_matches_oracle",
                "Whenever the partition is recovered exactly, the adaptive estimator's Wald intervals equal the "
                "oracle's (same cross-fitted scores, same pooled refit and sandwich SE)",
                ("max |CI_ada - CI_oracle|", diffs),
                bound=0.0,
                sense="<=",
                tol=1e-9,
                kind="check",
            )
        )
    report.add_note(
        f"The partition was recovered exactly in {n_exact} of {len(ada_rmse)} studies (where "
        "inference_matches_oracle applies). Task-level coverage (mean over studies): adaptive "
        f"{np.mean(vals('ada', 'coverage')):.3f}, oracle {np.mean(vals('oracle', 'coverage')):.3f}. "
        f"inference pools the {len(cover)} cluster intervals of the main cells as independent draws (the clusters "
        "of a study hold disjoint, independently simulated tasks); the stress and correlated-covariate cells' "
        "cluster coverage is reported in their tables, not judged."
    )

    # -- figures ------------------------------------------------------------------------------------------
    path_rec = next((r for r in records if "path" in r), None)
    if path_rec is not None:
        path_model = cfg.models[0]
        path_delta = cfg.deltas[len(cfg.deltas) // 2]
        report.add_figure(
            "fusion_path",
            _path_figure(path_rec["path"]),
            caption=f"Fusion path ({path_model}, delta={path_delta:.3g}, m={cfg.n_tasks}): task estimates as the "
            "penalty scale s grows; colour = true cluster, dotted = true effects. Left: adaptive weights "
            "s*lambda_jj' (tasks merge into the true clusters and stay apart); right: uniform weights s "
            "(everything merges).",
        )
    report.add_figure(
        "rmse_per_cell",
        _rmse_figure(cfg, cells, results),
        caption="RMSE per method and cell (mean over seeds, bars: sd).",
    )
    report.add_note(
        "Seeds are the unit: every claim averages the cells of a seed and tests over seeds (the cells of one seed "
        "are independent simulations, but from different settings)."
    )
    report.add_note(
        "All methods share the same cross-fitted nuisances per study (fit_scores). Learners: additive cubic "
        "splines on [X, sum X] + RidgeCV; IRM propensity: L2 logistic regression on X."
    )
    report.add_note(
        f"Sample sizes: n_j = {cfg.n_base} + {cfg.n_step} j (PLR) and {cfg.irm_n_factor}x that (IRM); "
        f"p_j = {cfg.p_base} + j; m = {cfg.n_tasks} tasks, K = {cfg.n_clusters} clusters."
    )
    report.add_note(
        f"ada = fuse radius tuned on {list(cfg.radius_grid)} (gamma={cfg.gamma}, tau={cfg.tau}, eps_n={cfg.eps_n}), "
        f"chaining guard on (chain_guard='split', guard_alpha=0.01), n_rep={cfg.n_rep} repeated cross-fits; "
        f"ada_auto = c_w='auto' with kappa={cfg.auto_kappa} (ours), reported only; the stress cells use the paper "
        "radius 0.1 for ada and ada_unguarded."
    )


def _path_figure(path: dict):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.8))
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    labels = np.asarray(path["labels"])
    for ax, key, title in zip(
        fig.subplots(1, 2), ("adaptive", "uniform"), ("adaptive weights", "uniform weights (MeTaG-like)")
    ):
        s = np.asarray(path[f"scale_{key}"])
        p = np.asarray(path[f"path_{key}"])
        for j in range(p.shape[1]):
            ax.plot(s, p[:, j], color=colours[labels[j] % len(colours)], lw=1)
        for t in np.unique(path["theta"]):
            ax.axhline(t, color="grey", ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("penalty scale s")
        ax.set_title(title)
    fig.axes[0].set_ylabel("theta_j estimate")
    return fig


def _rmse_figure(cfg: Config, cells, results):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(6, 2.2 * len(cells)), 3.8))
    ax = fig.subplots()
    width = 0.8 / len(METHODS)
    x = np.arange(len(cells))
    for i, meth in enumerate(METHODS):
        means = [np.mean([r[meth]["rmse"] for r in results[_cell(m, d)]]) for _, m, _, d in cells]
        sds = [np.std([r[meth]["rmse"] for r in results[_cell(m, d)]]) for _, m, _, d in cells]
        ax.bar(x + (i - len(METHODS) / 2 + 0.5) * width, means, width, yerr=sds, label=meth, capsize=2)
    ax.set_xticks(x, [f"{m}\ndelta={d:.2g}" for _, m, _, d in cells])
    ax.set_ylabel("RMSE over tasks")
    ax.set_yscale("log")
    ax.legend(fontsize=7, ncol=4)
    return fig


EXPERIMENT = register(
    Experiment(
        slug="fused_orthogonal",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 12},  # 12 x 6 cells x ~3 clusters >= 200 intervals for `inference`
        measure=measure,
        judge=judge,
        threads=1,  # tiny BLAS calls: one thread avoids oversubscription on a shared CPU
    )
)
