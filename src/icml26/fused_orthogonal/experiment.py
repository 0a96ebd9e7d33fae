"""Reproduction: clustered multitask DML on the paper's Section 4 simulations, scaled to 2 CPU cores.

For every (model, delta) cell and seed we simulate ``m`` tasks with 3 planted clusters
(:func:`make_clustered_tasks`), cross-fit the nuisances of every task ONCE, and fit the adaptive fused
estimator and every baseline on those same scores (``fit_scores``): all methods see identical nuisance fits.
Metrics per study: RMSE of the task estimates, adjusted Rand index of the clusters, Wald 95% coverage.

Seeds are the unit: ``measure(config, seed)`` runs every cell with its own data seed; the judges average the
cells of a seed before testing over seeds.  Kinds: ``inference_matches_oracle`` (intervals identical to the
oracle's whenever the partition is recovered: same scores, same SE code) is a check of our refit, not evidence
about the paper; ``inference`` is an absolute coverage claim with its Monte-Carlo error.  Preconditions: the
tasks are heterogeneous (Cochran's I^2 of the per-task estimates) and pooling within the true clusters has
room to help (oracle / per-task RMSE), required by the claims that fusion helps.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    uniform_lam: float = 0.01  # MeTaG's lambda in the paper
    path_points: int = 30
    # preconditions
    min_i2: float = 0.5  # Cochran's I^2 of the per-task DML estimates: tasks are heterogeneous
    inference_level: float = 0.90  # the 95% intervals must cover at least this often (absolute)


QUICK = Config(models=("plr",), deltas=(2 / 3,), n_tasks=12, n_base=300)
FULL = Config()

METHODS = ("ada", "ada_auto", "personalized", "oracle", "armul_k-1", "armul_k", "armul_k+1", "uniform")


def _score(model: str):
    # Fast learners: additive cubic splines on [X, sum X] + RidgeCV for every regression; for the IRM
    # propensity a plain L2 logistic regression on X (misspecified on purpose: the outcome model is
    # well specified, so the doubly robust score stays consistent, and it is 20x faster than spline logistic).
    if model == "plr":
        return PLRScore(default_regressor(), default_regressor())
    return IRMScore(default_regressor(), LogisticRegression(C=1.0, max_iter=1000))


def _estimators(cfg: Config, model: str, labels: np.ndarray, k: int) -> dict:
    common = dict(model=model, n_folds=cfg.n_folds)
    fused = dict(gamma=cfg.gamma, tau=cfg.tau, eps_n=cfg.eps_n, **common)
    return {
        "ada": AdaptiveFusedOrthogonal(c_w=cfg.c_w, **fused),
        "ada_auto": AdaptiveFusedOrthogonal(c_w="auto", kappa=cfg.auto_kappa, **fused),
        "personalized": PersonalizedDML(**common),
        "oracle": OracleClusterDML(labels, **common),
        "armul_k-1": ARMULLike(max(k - 1, 1), random_state=0, **common),
        "armul_k": ARMULLike(k, random_state=0, **common),
        "armul_k+1": ARMULLike(k + 1, random_state=0, **common),
        "uniform": UniformFusion(cfg.uniform_lam, **common),
    }


def _simulate(cfg: Config, model: str, delta: float, data_seed: int):
    f = cfg.irm_n_factor if model == "irm" else 1
    return make_clustered_tasks(
        model,
        cfg.n_tasks,
        cfg.n_clusters,
        delta,
        f * cfg.n_base,
        f * cfg.n_step,
        cfg.p_base,
        random_state=data_seed,
    )


def i_squared(coef: np.ndarray, se: np.ndarray) -> float:
    """Cochran's ``I^2 = max(0, (Q - (m - 1)) / Q)``, ``Q = sum_j (coef_j - mean_w)^2 / se_j^2`` (inverse-variance
    weighted mean): the share of the spread of the per-task estimates not explained by their noise."""
    w = 1.0 / np.asarray(se, dtype=float) ** 2
    mu = float(np.sum(w * coef) / np.sum(w))
    q = float(np.sum(w * (coef - mu) ** 2))
    return max(0.0, (q - (len(coef) - 1)) / q) if q > 0 else 0.0


def _study(cfg: Config, model: str, delta: float, data_seed: int) -> dict:
    tasks, theta, labels = _simulate(cfg, model, delta, data_seed)
    scores = cross_fit_scores(tasks, _score(model), n_folds=cfg.n_folds, random_state=data_seed)
    out, cis = {}, {}
    for name, est in _estimators(cfg, model, labels, cfg.n_clusters).items():
        est.fit_scores(scores)
        ci = cis[name] = est.confint(0.05)
        out[name] = {
            "rmse": float(np.sqrt(np.mean((est.coef_ - theta) ** 2))),
            "ari": float(adjusted_rand_score(labels, est.labels_)),
            "coverage": float(np.mean((ci[:, 0] <= theta) & (theta <= ci[:, 1]))),
            "n_clusters": int(est.n_clusters_),
        }
        if name == "personalized":
            out[name]["i2"] = i_squared(est.coef_, est.se_)
    # with the partition recovered exactly the adaptive refit is the oracle's (same scores, same SE code)
    exact = out["ada"]["ari"] == 1.0
    out["ada"]["ci_diff_vs_oracle"] = float(np.max(np.abs(cis["ada"] - cis["oracle"]))) if exact else None
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
    out: dict = {"cells": {}}
    for mi, model in enumerate(cfg.models):
        for di, delta in enumerate(cfg.deltas):
            data_seed = 1000 * seed + 10 * mi + di
            out["cells"][_cell(model, delta)] = progress.cached(
                f"{model}-d{di}", lambda model=model, delta=delta, ds=data_seed: _study(cfg, model, delta, ds)
            )
    if seed == 0:  # one fusion path for the figure (not judged)
        path_model, path_delta = cfg.models[0], cfg.deltas[len(cfg.deltas) // 2]
        out["path"] = progress.cached("path", lambda: _path(cfg, path_model, path_delta, 1000 * seed + 99))
    return out


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

    for arm, note in (
        ("ada", f"paper defaults c_w={cfg.c_w}, gamma={cfg.gamma}, tau={cfg.tau}: nothing tuned"),
        ("ada_auto", f"c_w='auto', kappa={cfg.auto_kappa}: nothing tuned"),
        ("personalized", "no hyperparameter"),
        ("oracle", "true labels given"),
        ("armul", "K given (K-1, K, K+1 reported separately), k-means start, no tuning"),
        ("uniform", f"lambda={cfg.uniform_lam} fixed (MeTaG's value; untuned, issue 23)"),
    ):
        report.set_tuning(arm, configs=1, steps=1, note=note)

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
        judge_threshold(
            "oracle_match",
            "RMSE within 1.15x of the oracle that knows the clusters (average ratio <= 1.15)",
            ("ada/oracle RMSE ratio", ada_rmse / orc_rmse),
            threshold=1.15,
            sense="<=",
            units=units(),
            requires=["tasks_heterogeneous"],
        )
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
    # absolute coverage: per seed, the share of tasks whose 95% interval covers the truth, with the
    # Monte-Carlo error of a binomial over the seed's distinct intervals (tasks of one recovered cluster share
    # one interval, so the number of clusters counts, not the number of tasks)
    cov_seed = [float(np.mean([r["cells"][_cell(m, d)]["ada"]["coverage"] for _, m, _, d in cells])) for r in records]
    n_int = [sum(r["cells"][_cell(m, d)]["ada"]["n_clusters"] for _, m, _, d in cells) for r in records]
    report.add_claim(
        judge_threshold(
            "inference",
            f"The adaptive estimator's Wald 95% intervals cover the true task effects at least "
            f"{cfg.inference_level:.0%} of the time (absolute; interval includes the binomial Monte-Carlo error "
            "over the distinct cluster intervals)",
            ("ada coverage", cov_seed),
            threshold=cfg.inference_level,
            sense=">=",
            mc_se=[float(np.sqrt(0.95 * 0.05 / n)) for n in n_int],
        )
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
        "inference_matches_oracle applies). Coverage: adaptive "
        f"{np.mean(vals('ada', 'coverage')):.3f}, oracle {np.mean(vals('oracle', 'coverage')):.3f} (mean over "
        f"studies), {sum(n_int)} distinct cluster intervals in all; the claim is one-sided, so over-coverage is "
        "not judged (issue 23)."
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
        f"ada = paper defaults (c_w={cfg.c_w}, gamma={cfg.gamma}, tau={cfg.tau}, eps_n={cfg.eps_n}); "
        f"ada_auto = c_w='auto' with kappa={cfg.auto_kappa} (ours), reported only."
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
        seeds={"quick": 3, "full": 10},
        measure=measure,
        judge=judge,
        threads=1,  # tiny BLAS calls: one thread avoids oversubscription on a shared CPU
    )
)
