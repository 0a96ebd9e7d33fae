"""Reproduction of CReL's claims on S1 (synthetic, known truth) and S2 (sklearn digits), CPU-sized.

Per seed and latent dimension ``d``:

1. S1 data ``y = f(x) + A(x) eps`` (+ rare failures); a conditional-Gaussian MLP generator fitted on a
   separate training draw; ``n_cal + n_test`` real pairs.  Coverage: scores of every pair for each set
   type (ellipsoid, ball, PCP) with one generator draw per condition, then ``n_splits`` random
   calibration/test splits per ``alpha``.
2. Informativeness: sets calibrated on the first ``n_cal`` pairs, log-volume of each set type for the same
   test conditions and the same generator draws (same ``random_state``).
3. Optimizer: PGD vs the closed form for a random linear metric on those sets; PGD vs a dense polar grid on
   random 2-D ellipses with a non-convex metric.
4. Interpretability: oracle sampler (failure rate ``p_fail``) vs "risky" sampler (``p_fail_risky``),
   each calibrated on the same real pairs; reliability vs average metric and worst-of-K on the same draws.
S2 digits: class-conditional Gaussians in PCA-16 (good, and risky = 15% samples from the nearest other
class), metric ``log p_clf(c | z)`` of a logistic regression, calibration on held-out real digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26.core import (
    Experiment,
    Report,
    judge_every,
    judge_superiority,
    mean_ci,
    register,
    seed_everything,
)

from ._data import (
    MixtureSampler,
    SyntheticProblem,
    bump_metric,
    fit_gaussian_generator,
    linear_metric,
    make_digits_task,
)
from ._optimize import linear_worst_case, worst_case
from ._reliability import ConformalReliability, conformal_quantile
from ._sets import Ellipsoid
from .baselines import sample_metrics

SET_NAMES = ("ellipsoid", "ball", "pcp")


@dataclass(frozen=True)
class Config:
    dims: tuple[int, ...] = (2, 8)
    n_train: int = 2000  # pairs to fit the MLP generator
    train_steps: int = 300
    n_cal: int = 500
    n_test: int = 500
    n_samples: int = 32  # K
    alphas: tuple[float, ...] = (0.05, 0.1, 0.2)
    curve_alphas: tuple[float, ...] = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
    n_splits: int = 100
    volume_alpha: float = 0.1
    n_volume_x: int = 200
    n_mc: int = 2000  # Monte Carlo points per PCP volume
    n_linear_instances: int = 10  # per seed and dim
    n_grid_instances: int = 10  # per seed
    n_grid: int = 400
    interp_alpha: float = 0.1
    n_interp_x: int = 100
    n_interp_baseline_x: int = 30  # conditions on which the ball / PCP reliability is also computed
    p_fail: float = 0.05
    p_fail_risky: float = 0.20
    delta: float = 2.5
    digits: bool = True
    digits_mix: float = 0.15
    digits_repeats: int = 5  # conditions = 10 classes x repeats
    seed_fraction: float = 0.8  # interpretability must hold in >= this share of seeds (4 of 5)


QUICK = Config(
    dims=(2,),
    n_train=500,
    train_steps=100,
    n_test=200,
    n_splits=20,
    n_volume_x=30,
    n_mc=500,
    n_linear_instances=3,
    n_grid_instances=3,
    n_interp_x=8,
    n_interp_baseline_x=0,
    digits_repeats=1,
)
FULL = Config(n_train=1000, n_interp_x=50, n_interp_baseline_x=10)


# ------------------------------------------------------------------------------------------------ pieces
def _gap(a, b):
    return "" if a is None or b is None else a - b


def _band(alpha: float, n: int) -> tuple[float, float]:
    return 1 - alpha - 0.01, 1 - alpha + 1 / (n + 1) + 0.01


def _s1_unit(cfg: Config, seed: int, d: int) -> dict:
    """Coverage, volumes, linear-optimizer check and interpretability on S1 for one seed and dimension."""
    seed_everything(seed)
    rng = np.random.default_rng([seed, d])
    P = SyntheticProblem(d, p_fail=cfg.p_fail, delta=cfg.delta)
    x_tr, y_tr = P.draw(cfg.n_train, rng)
    gen = fit_gaussian_generator(x_tr, y_tr, cfg.train_steps, seed)
    n = cfg.n_cal + cfg.n_test
    X, Y = P.draw(n, rng)
    w = rng.standard_normal(d)
    lin = linear_metric(w)
    out: dict = {"d": d, "seed": seed}

    # 1. coverage over random splits (scores once per pair; generator draws depend on x only)
    perms = [rng.permutation(n) for _ in range(cfg.n_splits)]
    cov: dict = {}
    for st in SET_NAMES:
        rel = ConformalReliability(gen, None, lin, 0.9, cfg.n_samples, st, random_state=seed)
        s = rel.conformity_scores(X, Y)
        cov[st] = {}
        for a in sorted(set(cfg.alphas) | set(cfg.curve_alphas)):
            c = [np.mean(s[p[cfg.n_cal :]] <= conformal_quantile(s[p[: cfg.n_cal]], a)) for p in perms]
            cov[st][f"{a:g}"] = {"mean": float(np.mean(c)), "std": float(np.std(c, ddof=1))}
    out["coverage"] = cov

    # 2. volumes (same draws for all set types: same random_state) and 3a. linear closed form vs PGD
    Xc, Yc, Xt, Yt = X[: cfg.n_cal], Y[: cfg.n_cal], X[cfg.n_cal :], Y[cfg.n_cal :]
    vol, cover_at, lin_diff = {}, {}, {}
    for st in SET_NAMES:
        rel = ConformalReliability(gen, None, lin, 1 - cfg.volume_alpha, cfg.n_samples, st, random_state=seed)
        rel.conformalize(Xc, Yc)
        lv, inside, diffs = [], [], []
        for i in range(cfg.n_volume_x):
            S = rel.predict_set(Xt[i])
            lv.append(S.log_volume(n_mc=cfg.n_mc, random_state=i) if st == "pcp" else S.log_volume())
            inside.append(bool(S.contains(Yt[i])))
            if i < cfg.n_linear_instances:
                wi = rng.standard_normal(d)
                pgd = worst_case(lambda z, wi=wi: z @ torch.as_tensor(wi), S).value
                diffs.append(abs(pgd - linear_worst_case(wi, 0.0, S).value))
        vol[st], cover_at[st], lin_diff[st] = lv, float(np.mean(inside)), diffs
    out.update(log_volume=vol, volume_coverage=cover_at, linear_abs_diff=lin_diff)

    # 4. interpretability: oracle vs risky sampler, same real calibration pairs and test conditions
    m = bump_metric(P)
    interp: dict = {}
    for gname, p_fail in (("good", cfg.p_fail), ("risky", cfg.p_fail_risky)):
        g = MixtureSampler(P, p_fail)
        set_types = SET_NAMES if cfg.n_interp_baseline_x > 0 else ("ellipsoid",)
        rels = {
            st: ConformalReliability(
                g, None, m, 1 - cfg.interp_alpha, cfg.n_samples, st, random_state=seed
            ).conformalize(Xc, Yc)
            for st in set_types
        }
        R, avg, wok, gap_in_set = [], [], [], []
        R_base: dict = {"ball": [], "pcp": []}
        for i in range(cfg.n_interp_x):
            x = Xt[i]
            Z = rels["ellipsoid"].latent_samples(x)
            vals = sample_metrics(rels["ellipsoid"], x, Z)
            res = rels["ellipsoid"].reliability_details(x, Z)
            S = rels["ellipsoid"].predict_set(x, Z)
            inset = S.contains(Z)
            R.append(res.value)
            avg.append(float(vals.mean()))
            wok.append(float(vals.min()))
            if inset.any():  # R <= the worst in-set sample (optimizer sanity check)
                gap_in_set.append(float(vals[inset].min() - res.value))
            if i < cfg.n_interp_baseline_x:
                for st in ("ball", "pcp"):
                    R_base[st].append(rels[st].reliability(x, latent_samples=Z))
        interp[gname] = {
            "R": float(np.mean(R)),
            "R_q10": float(np.quantile(R, 0.1)),
            "avg": float(np.mean(avg)),
            "worst_of_k": float(np.mean(wok)),
            "R_ball": float(np.mean(R_base["ball"])) if R_base["ball"] else None,
            "R_pcp": float(np.mean(R_base["pcp"])) if R_base["pcp"] else None,
            "qhat": rels["ellipsoid"].qhat_,
            "min_in_set_sample_minus_R": float(np.min(gap_in_set)) if gap_in_set else None,
        }
    out["interp"] = interp
    if d == 2 and seed == 0:
        out["figure"] = _figure_data(cfg, P, gen, m, Xc, Yc, Xt[0], rng, seed)
    return out


def _figure_data(cfg, P, gen, m, Xc, Yc, x0, rng, seed) -> dict:
    """Sets and worst-case points for one 2-D condition (risky sampler, to show a failure being caught)."""
    g = MixtureSampler(P, cfg.p_fail_risky)
    out = {"x": float(x0), "real": P.sample(np.full(300, x0), rng).tolist()}
    Z = None
    for st in SET_NAMES:
        rel = ConformalReliability(g, None, m, 1 - cfg.interp_alpha, cfg.n_samples, st, random_state=seed)
        rel.conformalize(Xc, Yc)
        if Z is None:
            Z = rel.latent_samples(x0)
            out["samples"] = Z.tolist()
        S = rel.predict_set(x0, Z)
        val, arg = rel.reliability(x0, return_argmin=True, latent_samples=Z)
        rec = {"value": val, "argmin": arg.tolist(), "radius": S.radius}
        if isinstance(S, Ellipsoid):
            rec.update(center=S.center.tolist(), chol=S.chol.tolist())
        out[st] = rec
    return out


def _grid_unit(cfg: Config, seed: int) -> dict:
    """|PGD - dense polar grid| on random 2-D ellipses with a non-convex metric (a dip near the boundary)."""
    rng = np.random.default_rng([seed, 77])
    diffs = []
    for _ in range(cfg.n_grid_instances):
        A = rng.standard_normal((2, 2))
        L = np.linalg.cholesky(A @ A.T + 0.2 * np.eye(2))
        S = Ellipsoid(rng.standard_normal(2), L, rng.uniform(0.5, 2.0))
        t = S.center + rng.standard_normal(2)
        b = S.sample_boundary(1, rng)[0] * 0.8 + 0.2 * S.center
        tt, bt = torch.as_tensor(t), torch.as_tensor(b)
        h = float(rng.uniform(0.5, 1.5))

        def metric(z, tt=tt, bt=bt, h=h):
            return -torch.log1p(((z - tt) ** 2).sum(-1)) - h * torch.exp(-((z - bt) ** 2).sum(-1) / 0.18)

        r_pgd = worst_case(metric, S, random_state=seed).value
        r_grid = worst_case(metric, S, "grid", n_grid=cfg.n_grid).value
        diffs.append(abs(r_pgd - r_grid))
    return {"abs_diff": diffs}


def _digits_unit(cfg: Config, seed: int) -> dict:
    seed_everything(seed)
    T = make_digits_task(seed, mix=cfg.digits_mix)
    conds = np.repeat(np.arange(10), cfg.digits_repeats)
    out: dict = {"classifier_accuracy": T.classifier_accuracy}
    for gname, g in (("good", T.good), ("risky", T.risky)):
        rel = ConformalReliability(
            g, T.encoder, T.metric, 1 - cfg.interp_alpha, cfg.n_samples, random_state=seed
        )
        rel.conformalize(T.X_cal, T.Y_cal)
        cover = rel.coverage(T.X_test, T.Y_test)
        R, avg, wok = [], [], []
        for c in conds:
            Z = rel.latent_samples(c)
            vals = sample_metrics(rel, c, Z)
            R.append(rel.reliability(c, latent_samples=Z))
            avg.append(float(vals.mean()))
            wok.append(float(vals.min()))
        R = np.array(R)
        out[gname] = {
            "R": float(R.mean()),
            "R_q10": float(np.quantile(R, 0.1)),
            "avg": float(np.mean(avg)),
            "worst_of_k": float(np.mean(wok)),
            "coverage": cover,
            "qhat": rel.qhat_,
            "R_per_class": [float(R[conds == c].mean()) for c in range(10)],
        }
    return out


# ------------------------------------------------------------------------------------------------ figures
def _fig_set(fd: dict, metric_fn):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.2, 5.2))
    ax = fig.add_subplot(1, 1, 1)
    real, Z = np.array(fd["real"]), np.array(fd["samples"])
    pts = np.vstack([real, Z])
    lo, hi = pts.min(0) - 1.5, pts.max(0) + 1.5
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 200))
    G = np.stack([gx.ravel(), gy.ravel()], 1)
    with torch.no_grad():
        mv = metric_fn(fd["x"], torch.as_tensor(G)).numpy().reshape(gx.shape)
    cs = ax.contourf(gx, gy, mv, levels=20, cmap="Greys_r", alpha=0.45)
    fig.colorbar(cs, ax=ax, label="metric m(x, z) (higher is better)")
    ax.scatter(real[:, 0], real[:, 1], s=4, c="tab:green", alpha=0.5, label="real outputs y | x")
    ax.scatter(Z[:, 0], Z[:, 1], s=14, c="tab:blue", marker="x", label="K generated samples")
    th = np.linspace(0, 2 * np.pi, 300)
    circ = np.stack([np.cos(th), np.sin(th)], 1)
    colors = {"ellipsoid": "tab:red", "ball": "tab:orange", "pcp": "tab:purple"}
    for st in ("ellipsoid", "ball"):
        rec = fd[st]
        b = np.array(rec["center"]) + rec["radius"] * circ @ np.array(rec["chol"]).T
        ax.plot(b[:, 0], b[:, 1], c=colors[st], lw=1.6, label=f"{st} set")
    D = np.linalg.norm(G[:, None, :] - Z[None], axis=2).min(1).reshape(gx.shape)
    ax.contour(gx, gy, D, levels=[fd["pcp"]["radius"]], colors=colors["pcp"], linewidths=1.2)
    ax.plot([], [], c=colors["pcp"], label="PCP union of balls")
    for st in SET_NAMES:
        a = fd[st]["argmin"]
        ax.scatter(
            [a[0]],
            [a[1]],
            marker="*",
            s=220,
            c=colors[st],
            edgecolors="k",
            zorder=5,
            label=f"worst case ({st}): R={fd[st]['value']:.2f}",
        )
    ax.set_xlabel("z1")
    ax.set_ylabel("z2")
    ax.set_title(f"S1, d=2, x={fd['x']:.2f}, risky generator, 90% sets")
    ax.legend(fontsize=7, loc="lower left")
    ax.set_aspect("equal")
    return fig


def _fig_coverage(cfg: Config, s1: list[dict]):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.2, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    alphas = np.array(sorted(set(cfg.alphas) | set(cfg.curve_alphas)))
    nominal = 1 - alphas
    ax.plot(nominal, nominal, "k--", lw=1, label="1 - alpha")
    ax.plot(nominal, nominal + 1 / (cfg.n_cal + 1), "k:", lw=1, label="1 - alpha + 1/(n+1)")
    styles = {"ellipsoid": "tab:red", "ball": "tab:orange", "pcp": "tab:purple"}
    for d in cfg.dims:
        for st in SET_NAMES:
            c = [np.mean([u["coverage"][st][f"{a:g}"]["mean"] for u in s1 if u["d"] == d]) for a in alphas]
            ax.plot(
                nominal,
                c,
                marker="o",
                ms=3,
                c=styles[st],
                ls="-" if d == cfg.dims[0] else "-.",
                label=f"{st}, d={d}",
            )
    ax.set_xlabel("nominal coverage 1 - alpha")
    ax.set_ylabel(f"empirical coverage (mean of {cfg.n_splits} splits, seeds)")
    ax.legend(fontsize=7)
    return fig


# ------------------------------------------------------------------------------------------------ run
def run(cfg: Config, seeds: list[int], progress) -> Report:
    report = Report()
    s1, grid, dig = [], [], []
    for s in progress.track(seeds, description="crel seeds"):
        for d in cfg.dims:
            s1.append(progress.cached(f"seed{s}-s1-d{d}", lambda s=s, d=d: _s1_unit(cfg, s, d)))
        grid.append(progress.cached(f"seed{s}-grid", lambda s=s: _grid_unit(cfg, s)))
        if cfg.digits:
            dig.append(progress.cached(f"seed{s}-digits", lambda s=s: _digits_unit(cfg, s)))
    n_seeds = len(seeds)

    # -- coverage --------------------------------------------------------------------------------------
    def excess(u, st, a):
        lo, hi = _band(a, cfg.n_cal)
        c = u["coverage"][st][f"{a:g}"]["mean"]
        return max(lo - c, c - hi)

    rows = []
    for d in cfg.dims:
        for a in cfg.alphas:
            lo, hi = _band(a, cfg.n_cal)
            row = {"d": d, "alpha": a, "band_low": lo, "band_high": hi}
            for st in SET_NAMES:
                vals = [u["coverage"][st][f"{a:g}"]["mean"] for u in s1 if u["d"] == d]
                row[st] = f"{np.mean(vals):.4f} ± {np.std(vals, ddof=1) if len(vals) > 1 else 0:.4f}"
            rows.append(row)
    report.add_table(
        "coverage",
        rows,
        f"Mean empirical coverage over {cfg.n_splits} random splits "
        f"(n_cal={cfg.n_cal}, n_test={cfg.n_test}), mean ± sd over {n_seeds} seeds; "
        "fitted conditional-Gaussian generator, K samples per condition.",
    )
    exc = {st: [excess(u, st, a) for u in s1 for a in cfg.alphas] for st in SET_NAMES}
    report.add_claim(
        judge_every(
            "coverage",
            "Empirical coverage lies within [1-alpha-0.01, 1-alpha+1/(n+1)+0.01] for alpha in "
            f"{{{', '.join(f'{a:g}' for a in cfg.alphas)}}} (mean over {cfg.n_splits} random splits), "
            "every seed and dimension; value = distance outside the band (<= 0 inside)",
            ("ellipsoid CReL", exc["ellipsoid"]),
            bound=0.0,
            sense="<=",
            baselines={"ball": exc["ball"], "pcp": exc["pcp"]},
        )
    )

    # -- informativeness -------------------------------------------------------------------------------
    dv = max(cfg.dims)
    lv = {st: np.concatenate([u["log_volume"][st] for u in s1 if u["d"] == dv]) for st in SET_NAMES}
    report.add_claim(
        judge_superiority(
            "informativeness",
            f"At equal alpha={cfg.volume_alpha:g}, CReL ellipsoid sets are smaller than PCP's union of balls "
            f"(log-volume paired over test conditions, S1 d={dv}, one-sided Wilcoxon p < 0.01)",
            ("ellipsoid CReL", lv["ellipsoid"]),
            {"pcp": lv["pcp"]},
            higher_is_better=False,
            alpha=0.01,
        )
    )
    vrows = []
    for d in cfg.dims:
        for st in SET_NAMES:
            v = np.concatenate([u["log_volume"][st] for u in s1 if u["d"] == d])
            cv = [u["volume_coverage"][st] for u in s1 if u["d"] == d]
            vrows.append(
                {
                    "d": d,
                    "set": st,
                    "median_log_volume": float(np.median(v)),
                    "mean_log_volume": float(np.mean(v)),
                    "test_coverage": float(np.mean(cv)),
                    "n_pairs": int(v.size),
                }
            )
    report.add_table(
        "volume",
        vrows,
        f"Log-volume of the {1 - cfg.volume_alpha:.0%} sets on the same test "
        "conditions and generator draws; test_coverage = share of the test outputs inside.",
    )

    # -- optimizer -------------------------------------------------------------------------------------
    gd = np.concatenate([g["abs_diff"] for g in grid])
    report.add_claim(
        judge_every(
            "optimizer_grid",
            f"PGD worst case matches a dense 2-D polar grid ({cfg.n_grid}x{cfg.n_grid}) within 1e-3 on "
            "random ellipses with a non-convex metric",
            ("|R_pgd - R_grid|", gd),
            bound=1e-3,
            sense="<=",
        )
    )
    ld = np.concatenate([u["linear_abs_diff"]["ellipsoid"] for u in s1])
    ld_pcp = np.concatenate([u["linear_abs_diff"]["pcp"] for u in s1])
    report.add_claim(
        judge_every(
            "optimizer_linear",
            "PGD worst case equals the closed form for linear metrics within 1e-6 (S1 ellipsoid sets, "
            "all dims)",
            ("|R_pgd - R_closed| ellipsoid", ld),
            bound=1e-6,
            sense="<=",
            baselines={"pcp (union of balls)": ld_pcp},
        )
    )

    # -- interpretability ------------------------------------------------------------------------------
    need = math.ceil(cfg.seed_fraction * n_seeds - 1e-9)
    irows, ok_syn = [], []
    for s in seeds:
        ok = True
        for d in cfg.dims:
            u = next(x for x in s1 if x["d"] == d and x["seed"] == s)
            gd_, rk = u["interp"]["good"], u["interp"]["risky"]
            r_gap, a_gap = gd_["R"] - rk["R"], gd_["avg"] - rk["avg"]
            ok = ok and r_gap > abs(a_gap)
            irows.append(
                {
                    "data": f"S1 d={d}",
                    "seed": s,
                    "R_good": gd_["R"],
                    "R_risky": rk["R"],
                    "R_gap": r_gap,
                    "avg_gap": a_gap,
                    "worst_of_k_gap": gd_["worst_of_k"] - rk["worst_of_k"],
                    "R_ball_gap": _gap(gd_["R_ball"], rk["R_ball"]),
                    "R_pcp_gap": _gap(gd_["R_pcp"], rk["R_pcp"]),
                    "R_q10_good": gd_["R_q10"],
                    "R_q10_risky": rk["R_q10"],
                }
            )
        ok_syn.append(ok)
    report.add_claim(
        judge_every(
            "interpretability_synthetic",
            f"S1: the risky generator (failure rate {cfg.p_fail_risky:g} vs {cfg.p_fail:g}) gets a lower "
            f"reliability score than the oracle by more than their average-metric gap in >= {need} of "
            f"{n_seeds} seeds "
            "(value = number of such seeds)",
            ("seeds where R_good - R_risky > |avg_good - avg_risky|", [int(np.sum(ok_syn))]),
            bound=need,
            sense=">=",
        )
    )
    if cfg.digits:
        ok_dig = []
        for s, u in zip(seeds, dig):
            gd_, rk = u["good"], u["risky"]
            r_gap, a_gap = gd_["R"] - rk["R"], gd_["avg"] - rk["avg"]
            ok_dig.append(r_gap > abs(a_gap))
            irows.append(
                {
                    "data": "digits",
                    "seed": s,
                    "R_good": gd_["R"],
                    "R_risky": rk["R"],
                    "R_gap": r_gap,
                    "avg_gap": a_gap,
                    "worst_of_k_gap": gd_["worst_of_k"] - rk["worst_of_k"],
                    "R_q10_good": gd_["R_q10"],
                    "R_q10_risky": rk["R_q10"],
                    "coverage_good": gd_["coverage"],
                    "coverage_risky": rk["coverage"],
                }
            )
        report.add_claim(
            judge_every(
                "interpretability_digits",
                f"Digits: the risky generator ({cfg.digits_mix:.0%} samples from the nearest other class) "
                "gets a lower reliability score than the good one by more than their average-metric gap in "
                f">= {need} of {n_seeds} seeds (value = number of such seeds)",
                ("seeds where R_good - R_risky > |avg_good - avg_risky|", [int(np.sum(ok_dig))]),
                bound=need,
                sense=">=",
            )
        )
        report.add_table(
            "digits_per_class",
            [
                {
                    "class": c,
                    **{
                        f"R_{g}": mean_ci([u[g]["R_per_class"][c] for u in dig]).mean
                        for g in ("good", "risky")
                    },
                }
                for c in range(10)
            ],
            "Digits: mean reliability per class over seeds.",
        )
    report.add_table(
        "interpretability",
        irows,
        "Per seed: model-level reliability (mean R over conditions) "
        "of the good and risky generator, and the good-minus-risky gap of each score "
        f"(ball / PCP reliability on the first {cfg.n_interp_baseline_x} conditions only).",
    )
    min_gap = [u["interp"][g]["min_in_set_sample_minus_R"] for u in s1 for g in ("good", "risky")]
    min_gap = [v for v in min_gap if v is not None]
    if min_gap:
        report.add_note(
            f"R_pgd <= worst in-set sample: min over runs of (worst in-set sample - R) = "
            f"{min(min_gap):.3g} (must be >= 0)."
        )

    # -- figures and metrics ---------------------------------------------------------------------------
    fd = next((u["figure"] for u in s1 if "figure" in u), None)
    if fd is not None:
        report.add_figure(
            "prediction_set_2d",
            _fig_set(fd, bump_metric(SyntheticProblem(2, cfg.p_fail, cfg.delta))),
            "A 2-D condition: real outputs, generated samples, the 90% ellipsoid / ball / PCP "
            "sets and the worst-case point (star) of each (risky generator).",
        )
    report.add_figure("coverage_vs_alpha", _fig_coverage(cfg, s1), "Empirical vs nominal coverage.")
    report.metrics = {
        "s1": [{k: v for k, v in u.items() if k != "figure"} for u in s1],
        "grid": grid,
        "digits": dig,
    }
    report.add_note(
        "Timing is on a shared 2-core machine; the paper's real image/text models are not "
        "reproduced (no downloads): S1 synthetic and sklearn digits stand in for them."
    )
    return report


register(
    Experiment(
        slug="crel",
        title="Conformal Reliability: A New Evaluation Metric for Conditional Generation",
        paper="Gao, Sun, Wang, Shi, Wang, Feng, Fu, ICML 2026, arXiv 2605.30807",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 5},
        run=run,
        component="ConformalReliability (conformal latent sets + PGD worst-case metric), Ellipsoid, "
        "UnionOfBalls, worst_case",
    )
)
