"""Reproduction of CReL's claims on S1 (synthetic, known truth) and S2 (sklearn digits), CPU-sized.

Per seed and latent dimension ``d``:

1. S1 data ``y = f(x) + A(x) eps`` (+ rare failures); a conditional-Gaussian MLP generator fitted on a
   separate training draw; ``n_cal + n_test`` real pairs.  Re-split coverage: scores of every pair for each
   set type with one generator draw per condition, then ``n_splits`` random calibration/test splits per
   ``alpha`` (this only exercises the rank arithmetic of the conformal quantile: a check).
2. End-to-end coverage (the claim): ``e2e_calibrations`` fresh calibration draws, with ``n_cal`` cycling over
   ``e2e_n_cals`` (24-49), each judged on ``e2e_n_test`` fresh test pairs through
   ``predict_set(x).contains(y)``; the deviation of each from its exact expectation ``k/(n+1)`` is judged
   two-sided with a Monte-Carlo-aware interval, inside a band narrower than ``1/(n+1)``, so a rank off by one
   fails.
3. Informativeness per generator: sets calibrated on the first ``n_cal`` pairs, log-volume of each set type
   (ellipsoid, ball, hull, PCP) for the same test conditions and the same generator draws, with the fitted
   Gaussian and with the oracle mixture sampler (and on digits with the class-conditional generator).
4. Optimizer: PGD vs the closed form for a random linear metric on those sets; PGD (default starts, three
   optimizer seeds) vs a dense polar grid on random 2-D ellipses with a non-convex metric.
5. Interpretability: oracle sampler (failure rate ``p_fail``) vs "risky" sampler (``p_fail_risky``), each
   calibrated on the same real pairs; the standardized good-minus-risky separation of the reliability vs
   that of worst-of-K and of the average metric, on the same draws.
S2 digits: class-conditional Gaussians in PCA-16 (good, and risky = 15% samples from the nearest other
class), metric ``log p_clf(c | z)`` of a logistic regression, calibration on held-out real digits.

Seeds are the unit (``measure(config, seed)``: data, generator fit, calibration, test draws all from the seed).
Kinds: the re-split statement is a check (exact rank arithmetic), coverage is claimed end to end; the
optimizer's linear closed form and its bound by the in-set samples are checks (true by construction), the
grid match on a non-convex metric is a claim (multi-start PGD has no guarantee).  The interpretability claims
require a precondition: the risky generator must really be worse (its worst-of-K metric lower).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

from icml26.core import (
    Experiment,
    Report,
    judge_every,
    judge_k_of_n,
    judge_superiority,
    judge_threshold,
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
from ._sets import Ellipsoid, HullSet
from .baselines import sample_metrics

SET_NAMES = ("ellipsoid", "ball", "pcp")  # re-split coverage and interpretability baselines
VOLUME_SETS = ("ellipsoid", "ball", "hull", "pcp")


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
    # end-to-end coverage through contains() on fresh points (ellipsoid CReL)
    e2e_alpha: float = 0.1
    e2e_n_cals: tuple[int, ...] = (24, 29, 34, 39, 44, 49)  # n_cal cycles over these; k/(n+1) from 0.90 to 0.92
    e2e_calibrations: int = 120  # fresh calibration sets per seed and dimension
    e2e_n_test: int = 50  # fresh test pairs per calibration
    e2e_band: float = 0.015  # |coverage - k/(n+1)| band; an off-by-one rank moves it by 1/(n+1) >= 0.02
    n_opt_seeds: int = 3  # optimizer seeds per grid instance
    n_digits_volume: int = 5  # generator draws per class for the digits set volumes


QUICK = Config(
    dims=(2,),
    n_train=500,
    train_steps=100,
    n_cal=200,
    n_test=100,
    n_splits=20,
    n_volume_x=20,
    n_mc=500,
    n_linear_instances=3,
    n_grid_instances=3,
    n_interp_x=8,
    n_interp_baseline_x=0,
    digits_repeats=1,
    e2e_calibrations=24,
    e2e_n_test=50,
    n_opt_seeds=2,
    n_digits_volume=1,
)
FULL = Config(n_train=1000, n_interp_x=50, n_interp_baseline_x=10)


# ------------------------------------------------------------------------------------------------ pieces
def _gap(a, b):
    return "" if a is None or b is None else a - b


def exact_rank(n: int, alpha: float) -> int:
    """``k = ceil((n + 1)(1 - alpha))`` in exact rational arithmetic (independent of the library's ``_rank``)."""
    return math.ceil((n + 1) * (1 - Fraction(str(alpha))))


def e2e_coverage(cfg: Config, P, gen, metric, rng: np.random.Generator, set_type: str = "ellipsoid") -> dict:
    """Coverage of fresh test pairs through ``predict_set(x).contains(y)``, over fresh calibration draws.

    Calibration ``j`` uses ``n = e2e_n_cals[j % len]`` real pairs; its expected coverage is exactly
    ``k/(n+1)``, ``k = ceil((n+1)(1-alpha))`` (exact rational arithmetic, not the library's rank), so
    ``deviation = coverage - k/(n+1)`` has mean 0 for a correct implementation.
    """
    covs, expect = [], []
    for j in range(cfg.e2e_calibrations):
        n = cfg.e2e_n_cals[j % len(cfg.e2e_n_cals)]
        rel = ConformalReliability(
            gen, None, metric, 1 - cfg.e2e_alpha, cfg.n_samples, set_type, random_state=int(rng.integers(2**31))
        )
        rel.conformalize(*P.draw(n, rng))
        covs.append(rel.coverage(*P.draw(cfg.e2e_n_test, rng)))
        expect.append(exact_rank(n, cfg.e2e_alpha) / (n + 1))
    c, e = np.asarray(covs), np.asarray(expect)
    return {"coverage": c.tolist(), "expected": e.tolist()}


def coverage_claims(cfg: Config, units: list, e2e: list[dict]) -> list:
    """The two one-sided halves of "end-to-end coverage equals k/(n+1) within +-e2e_band" (a TOST).

    Per unit (seed): the mean deviation ``coverage - k/(n+1)`` over its calibrations (all dimensions), and its
    Monte-Carlo standard error ``sd / sqrt(#calibrations)`` (calibrations are independent draws).
    """
    per: dict = {}
    for u, rec in zip(units, e2e):
        per.setdefault(u, []).extend(np.subtract(rec["coverage"], rec["expected"]).tolist())
    keys = list(per)
    dev = [float(np.mean(per[k])) for k in keys]
    se = [float(np.std(per[k], ddof=1) / np.sqrt(len(per[k]))) if len(per[k]) > 1 else 0.5 for k in keys]
    ns = ", ".join(str(n) for n in cfg.e2e_n_cals)
    what = (
        f"S1, fitted generator, alpha={cfg.e2e_alpha:g}, n_cal cycling over {{{ns}}}: {cfg.e2e_calibrations} "
        f"fresh calibrations x {cfg.e2e_n_test} fresh test pairs per seed and dimension, through "
        "predict_set(x).contains(y); value = coverage - k/(n+1) with k = ceil((n+1)(1-alpha)), the exact "
        f"expectation; a rank off by one moves it by 1/(n+1) >= {1 / (max(cfg.e2e_n_cals) + 1):.3f}"
    )
    out = []
    for cid, bound, sense, words in (
        ("coverage", -cfg.e2e_band, ">=", "not below"),
        ("coverage_upper", cfg.e2e_band, "<=", "not above"),
    ):
        out.append(
            judge_threshold(
                cid,
                f"End-to-end coverage of CReL's ellipsoid sets is {words} its exact expectation k/(n+1) by more "
                f"than {cfg.e2e_band:g} ({what})",
                ("coverage - k/(n+1)", dev),
                threshold=bound,
                sense=sense,
                mc_se=se,
            )
        )
    return out


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
            c, rank_err = [], 0
            for p in perms:
                q = conformal_quantile(s[p[: cfg.n_cal]], a)
                c.append(np.mean(s[p[cfg.n_cal :]] <= q))
                # the threshold is the k-th smallest calibration score: exactly k scores are <= it
                rank_err = max(rank_err, abs(int(np.sum(s[p[: cfg.n_cal]] <= q)) - exact_rank(cfg.n_cal, a)))
            cov[st][f"{a:g}"] = {"mean": float(np.mean(c)), "std": float(np.std(c, ddof=1)), "rank_error": rank_err}
    out["coverage"] = cov
    out["coverage_e2e"] = e2e_coverage(cfg, P, gen, lin, np.random.default_rng([seed, d, 5]))

    # 2. volumes per generator (same draws for all set types: same random_state), 3a. linear closed form vs PGD
    Xc, Yc, Xt, Yt = X[: cfg.n_cal], Y[: cfg.n_cal], X[cfg.n_cal :], Y[cfg.n_cal :]
    vol, cover_at, lin_diff = {}, {}, {}
    for gname, g in (("fitted", gen), ("oracle", MixtureSampler(P, cfg.p_fail))):
        vol[gname], cover_at[gname] = {}, {}
        for st in VOLUME_SETS:
            rel = ConformalReliability(g, None, lin, 1 - cfg.volume_alpha, cfg.n_samples, st, random_state=seed)
            rel.conformalize(Xc, Yc)
            lv, inside, diffs = [], [], []
            for i in range(cfg.n_volume_x):
                S = rel.predict_set(Xt[i])
                lv.append(S.log_volume(n_mc=cfg.n_mc, random_state=i) if st == "pcp" else S.log_volume())
                inside.append(bool(S.contains(Yt[i])))
                if gname == "fitted" and i < cfg.n_linear_instances:
                    wi = rng.standard_normal(d)
                    pgd = worst_case(lambda z, wi=wi: z @ torch.as_tensor(wi), S).value
                    diffs.append(abs(pgd - linear_worst_case(wi, 0.0, S).value))
            vol[gname][st], cover_at[gname][st] = lv, float(np.mean(inside))
            if gname == "fitted":
                lin_diff[st] = diffs
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
            rel = rels["ellipsoid"]
            Z = rel.latent_samples(x)  # shared: the set, R and the sample baselines all use these
            vals = sample_metrics(rel, x)
            res = rel.reliability_details(x)
            S = rel.predict_set(x)
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
            "per_x": {"R": R, "avg": avg, "worst_of_k": wok},
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
    for st in VOLUME_SETS:
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
        if isinstance(S, HullSet):
            rec.update(vertices=S.vertices.tolist())
        out[st] = rec
    return out


def _grid_unit(cfg: Config, seed: int) -> dict:
    """|PGD - dense polar grid| on random 2-D ellipses with a non-convex metric (a dip near the boundary), for
    each of ``n_opt_seeds`` optimizer seeds (the random starts and the screen of :func:`worst_case`)."""
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

        r_grid = worst_case(metric, S, "grid", n_grid=cfg.n_grid).value
        diffs.append([abs(worst_case(metric, S, random_state=o).value - r_grid) for o in range(cfg.n_opt_seeds)])
    return {"abs_diff": diffs}  # [instance][optimizer seed]


def _digits_unit(cfg: Config, seed: int) -> dict:
    seed_everything(seed)
    T = make_digits_task(seed, mix=cfg.digits_mix)
    conds = np.repeat(np.arange(10), cfg.digits_repeats)
    out: dict = {"classifier_accuracy": T.classifier_accuracy}
    for gname, g in (("good", T.good), ("risky", T.risky)):
        rel = ConformalReliability(g, T.encoder, T.metric, 1 - cfg.interp_alpha, cfg.n_samples, random_state=seed)
        rel.conformalize(T.X_cal, T.Y_cal)
        cover = rel.coverage(T.X_test, T.Y_test)
        R, avg, wok = [], [], []
        for c in conds:  # a fresh draw per repeat of a class (repeats are not one cached draw)
            Z = rel.latent_samples(c, fresh=True)
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
            "per_x": {"R": R.tolist(), "avg": avg, "worst_of_k": wok},
            "coverage": cover,
            "qhat": rel.qhat_,
            "R_per_class": [float(R[conds == c].mean()) for c in range(10)],
        }
    # informativeness on digits: the good generator's sets (hull volume: qhull in d = 16 is too slow, skipped)
    vol, cov = {}, {}
    for st in ("ellipsoid", "ball", "pcp"):
        rel = ConformalReliability(
            T.good, T.encoder, T.metric, 1 - cfg.volume_alpha, cfg.n_samples, st, random_state=seed
        ).conformalize(T.X_cal, T.Y_cal)
        lv = []
        for c in np.repeat(np.arange(10), cfg.n_digits_volume):
            S = rel.predict_set(c, rel.latent_samples(c, fresh=True))
            lv.append(S.log_volume(n_mc=cfg.n_mc, random_state=int(c)) if st == "pcp" else S.log_volume())
        vol[st] = lv
        cov[st] = rel.coverage(T.X_test, T.Y_test)
    out["log_volume"], out["volume_coverage"] = vol, cov
    return out


def separation(good, risky, paired: bool = True) -> float:
    """Standardized good-minus-risky gap of a score over conditions.

    ``paired`` (the judged one; both generators are scored on the same conditions): ``mean(d) / sd(d)`` with
    ``d_i = good_i - risky_i``, so condition difficulty, common to both, cancels.  Unpaired:
    ``(mean(good) - mean(risky)) / sqrt((var(good) + var(risky)) / 2)`` (Cohen's d), reported beside.
    """
    g, r = np.asarray(good, dtype=float), np.asarray(risky, dtype=float)
    if paired:
        d = g - r
        gap, sd = float(d.mean()), float(d.std(ddof=1)) if d.size > 1 else 0.0
    else:
        gap = float(g.mean() - r.mean())
        sd = math.sqrt((g.var(ddof=1) + r.var(ddof=1)) / 2) if min(g.size, r.size) > 1 else 0.0
    return gap / sd if sd > 0 else math.copysign(math.inf, gap) if gap else 0.0


def _interp_row(data: str, seed, gd_: dict, rk: dict, sp: dict) -> dict:
    return {
        "data": data,
        "seed": seed,
        "R_good": gd_["R"],
        "R_risky": rk["R"],
        "R_gap": gd_["R"] - rk["R"],
        "avg_gap": gd_["avg"] - rk["avg"],
        "worst_of_k_gap": gd_["worst_of_k"] - rk["worst_of_k"],
        "R_sep": sp["R"],
        "worst_of_k_sep": sp["worst_of_k"],
        "avg_sep": sp["avg"],
        "R_sep_unpaired": separation(gd_["per_x"]["R"], rk["per_x"]["R"], paired=False),
        "worst_of_k_sep_unpaired": separation(gd_["per_x"]["worst_of_k"], rk["per_x"]["worst_of_k"], paired=False),
        "R_ball_gap": _gap(gd_.get("R_ball"), rk.get("R_ball")),
        "R_pcp_gap": _gap(gd_.get("R_pcp"), rk.get("R_pcp")),
    }


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
    colors = {"ellipsoid": "tab:red", "ball": "tab:orange", "hull": "tab:brown", "pcp": "tab:purple"}
    for st in ("ellipsoid", "ball"):
        rec = fd[st]
        b = np.array(rec["center"]) + rec["radius"] * circ @ np.array(rec["chol"]).T
        ax.plot(b[:, 0], b[:, 1], c=colors[st], lw=1.6, label=f"{st} set")
    D = np.linalg.norm(G[:, None, :] - Z[None], axis=2).min(1).reshape(gx.shape)
    ax.contour(gx, gy, D, levels=[fd["pcp"]["radius"]], colors=colors["pcp"], linewidths=1.2)
    ax.plot([], [], c=colors["pcp"], label="PCP union of balls")
    if "hull" in fd:
        from scipy.spatial import ConvexHull

        V = np.array(fd["hull"]["vertices"])
        loop = V[ConvexHull(V).vertices]
        loop = np.vstack([loop, loop[:1]])
        ax.plot(loop[:, 0], loop[:, 1], c=colors["hull"], lw=1.4, label="hull set")
    for st in [s_ for s_ in VOLUME_SETS if s_ in fd]:
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
    ax.legend(fontsize=6, loc="upper left", framealpha=0.7)
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


# ------------------------------------------------------------------------------------------------ measure
def measure(cfg: Config, seed: int, progress) -> dict:
    """One seed: S1 per dimension, the 2-D grid instances and (optionally) digits, all drawn from ``seed``."""
    s1 = [progress.cached(f"s1-d{d}", lambda d=d: _s1_unit(cfg, seed, d)) for d in cfg.dims]
    grid = progress.cached("grid", lambda: _grid_unit(cfg, seed))
    dig = progress.cached("digits", lambda: _digits_unit(cfg, seed)) if cfg.digits else None
    return {"s1": s1, "grid": grid, "digits": dig}


# ------------------------------------------------------------------------------------------------ judge
def judge(cfg: Config, records: list[dict], report: Report) -> None:
    seeds = list(report.seeds or range(len(records)))
    s1 = [u for r in records for u in r["s1"]]
    grid = [r["grid"] for r in records]
    dig = [r["digits"] for r in records] if cfg.digits else []
    n_seeds = len(seeds)
    report.set_tuning("ellipsoid CReL", configs=1, steps=0, note="shrinkage 0.1, eps 1e-6, K fixed: nothing tuned")
    report.set_tuning("pcp", configs=1, steps=0, note="K fixed: nothing tuned")
    for arm in ("R separation", "worst-of-K separation", "average-metric separation"):
        report.set_tuning(arm, configs=1, steps=0, note="the same K samples per condition; nothing tuned")

    # -- coverage: rank arithmetic on re-splits (check), end to end on fresh points (claims) -------------
    rows = []
    for d in cfg.dims:
        for a in cfg.alphas:
            k = exact_rank(cfg.n_cal, a)
            row = {"d": d, "alpha": a, "k/(n+1)": k / (cfg.n_cal + 1)}
            for st in SET_NAMES:
                vals = [u["coverage"][st][f"{a:g}"]["mean"] for u in s1 if u["d"] == d]
                row[st] = f"{np.mean(vals):.4f} ± {np.std(vals, ddof=1) if len(vals) > 1 else 0:.4f}"
            rows.append(row)
    report.add_table(
        "coverage",
        rows,
        f"Mean empirical coverage over {cfg.n_splits} random re-splits of one pool "
        f"(n_cal={cfg.n_cal}, n_test={cfg.n_test}), mean ± sd over {n_seeds} seeds; "
        "fitted conditional-Gaussian generator, K samples per condition. Over re-splits of one pool the "
        "expected coverage is exactly k/(n+1) for any score (exchangeability), so this only tests the rank "
        "arithmetic: the check `conformal_rank` tests it exactly, the claims `coverage`, `coverage_upper` test the "
        "sets end to end.",
    )
    rank_err = {st: [u["coverage"][st][f"{a:g}"]["rank_error"] for u in s1 for a in cfg.alphas] for st in SET_NAMES}
    report.add_claim(
        judge_every(
            "conformal_rank",
            "On every re-split of the pool, for alpha in "
            f"{{{', '.join(f'{a:g}' for a in cfg.alphas)}}}, the conformal threshold is the k-th smallest "
            "calibration score, k = ceil((n+1)(1-alpha)) computed exactly (value = max |#{s_cal <= qhat} - k|); "
            "the rank arithmetic re-split coverage tests, checked without Monte-Carlo slack",
            ("ellipsoid CReL", rank_err["ellipsoid"]),
            bound=0.0,
            sense="<=",
            baselines={"ball": rank_err["ball"], "pcp": rank_err["pcp"]},
            kind="check",
        )
    )
    ball_pcp = [x for st in ("ball", "pcp") for x in rank_err[st]]
    if any(x > 0 for x in ball_pcp):
        report.add_note(f"Rank arithmetic off for ball / PCP sets: max error {max(ball_pcp)}.")
    e2e = [u["coverage_e2e"] for u in s1]
    for c in coverage_claims(cfg, [u["seed"] for u in s1], e2e):
        report.add_claim(c)
    erows = []
    for u in s1:
        e = u["coverage_e2e"]
        dv_ = np.subtract(e["coverage"], e["expected"])
        erows.append(
            {
                "seed": u["seed"],
                "d": u["d"],
                "coverage": float(np.mean(e["coverage"])),
                "k/(n+1)": float(np.mean(e["expected"])),
                "deviation": float(dv_.mean()),
                "mc_se": float(dv_.std(ddof=1) / np.sqrt(dv_.size)) if dv_.size > 1 else None,
            }
        )
    report.add_table(
        "coverage_e2e",
        erows,
        "End-to-end coverage of the ellipsoid sets on fresh pairs (mean over the calibrations of a seed and "
        "dimension), its exact expectation (mean k/(n+1) over the n_cal values used) and the deviation.",
    )

    # -- informativeness, per generator ----------------------------------------------------------------
    dv = max(cfg.dims)
    gen_words = {"fitted": "fitted conditional-Gaussian generator", "oracle": "oracle mixture sampler"}
    for gname, cid in (("fitted", "informativeness"), ("oracle", "informativeness_oracle")):
        sub = [u for u in s1 if u["d"] == dv]
        lv = {st: np.concatenate([u["log_volume"][gname][st] for u in sub]) for st in ("ellipsoid", "pcp")}
        lv_units = [u["seed"] for u in sub for _ in u["log_volume"][gname]["ellipsoid"]]
        report.add_claim(
            judge_superiority(
                cid,
                f"At equal alpha={cfg.volume_alpha:g}, CReL ellipsoid sets are smaller than PCP's union of balls "
                f"(S1 d={dv}, {gen_words[gname]}; mean log-volume over test conditions per seed, paired over "
                "seeds, one-sided t test p < 0.01)",
                ("ellipsoid CReL", lv["ellipsoid"]),
                {"pcp": lv["pcp"]},
                higher_is_better=False,
                test="ttest",
                alpha=0.01,
                units=lv_units,  # conditions of one seed share its generator and qhat: seeds are the unit
            )
        )
    vrows, pcp_wins = [], []
    sources = [
        (f"S1 {gen_words[g]}", d, [u for u in s1 if u["d"] == d], g) for g in ("fitted", "oracle") for d in cfg.dims
    ]
    if cfg.digits:
        sources.append(("digits, class-conditional Gaussian", 16, dig, None))
    for label, d, units_, g in sources:
        lvs = {}
        for st in VOLUME_SETS:
            recs = [(u["log_volume"] if g is None else u["log_volume"][g]).get(st) for u in units_]
            if any(r is None for r in recs):
                continue
            v = np.concatenate(recs)
            cv = [(u["volume_coverage"] if g is None else u["volume_coverage"][g])[st] for u in units_]
            lvs[st] = float(np.mean(v))
            vrows.append(
                {
                    "data": label,
                    "d": d,
                    "set": st,
                    "median_log_volume": float(np.median(v)),
                    "mean_log_volume": float(np.mean(v)),
                    "test_coverage": float(np.mean(cv)),
                    "n_sets": int(v.size),
                }
            )
        smaller = [st for st in lvs if st != "ellipsoid" and lvs[st] < lvs["ellipsoid"]]
        if smaller:
            pcp_wins.append(
                f"{label} (d={d}): "
                + ", ".join(f"{st} {lvs[st]:.3g}" for st in smaller)
                + f" < ellipsoid {lvs['ellipsoid']:.3g}"
            )
    if cfg.digits:
        lv = {st: np.concatenate([u["log_volume"][st] for u in dig]) for st in ("ellipsoid", "pcp")}
        report.add_claim(
            judge_superiority(
                "informativeness_digits",
                f"At equal alpha={cfg.volume_alpha:g}, CReL ellipsoid sets are smaller than PCP's union of balls "
                "on digits (PCA-16 latent, class-conditional Gaussian generator; mean log-volume over "
                f"{10 * cfg.n_digits_volume} generator draws per seed, paired over seeds, one-sided t test p < 0.01)",
                ("ellipsoid CReL", lv["ellipsoid"]),
                {"pcp": lv["pcp"]},
                higher_is_better=False,
                test="ttest",
                alpha=0.01,
                units=[s for s, u in zip(seeds, dig) for _ in u["log_volume"]["ellipsoid"]],
            )
        )
    report.add_table(
        "volume",
        vrows,
        f"Log-volume of the {1 - cfg.volume_alpha:.0%} sets per generator, on the same test conditions and "
        "generator draws for every set type; test_coverage = share of the test outputs inside. Hull volume in "
        "d = 16 is not computed (qhull takes seconds per set there).",
    )
    report.add_note(
        "Where another set is smaller than CReL's ellipsoid (mean log-volume): "
        + ("; ".join(pcp_wins) if pcp_wins else "nowhere")
        + ". The ellipsoid fits elliptical (Gaussian) sample clouds by design; the oracle mixture's samples "
        "carry a 5% shifted failure mode that the ellipsoid must stretch to cover."
    )

    # -- optimizer -------------------------------------------------------------------------------------
    gd = np.concatenate([np.asarray(g["abs_diff"], dtype=float).reshape(len(g["abs_diff"]), -1) for g in grid])
    per_opt = [int((gd[:, o] <= 1e-3).sum()) for o in range(gd.shape[1])]
    report.add_claim(
        judge_every(
            "optimizer_grid",
            f"PGD (default starts: structured + a diverse 256-point screen) matches a dense 2-D polar grid "
            f"({cfg.n_grid}x{cfg.n_grid}) within 1e-3 on {gd.shape[0]} random ellipses with a non-convex metric, "
            f"for each of {gd.shape[1]} optimizer seeds (every instance and seed)",
            ("|R_pgd - R_grid|", gd.ravel()),
            bound=1e-3,
            sense="<=",
            # a claim, not a check: multi-start PGD on a non-convex metric has no guarantee
        )
    )
    report.add_table(
        "optimizer_grid",
        [
            {"optimizer_seed": o, "within_1e-3": per_opt[o], "instances": gd.shape[0], "worst": float(gd[:, o].max())}
            for o in range(gd.shape[1])
        ],
        "PGD vs the dense grid, per optimizer seed.",
    )
    ld = np.concatenate([u["linear_abs_diff"]["ellipsoid"] for u in s1])
    report.add_claim(
        judge_every(
            "optimizer_linear",
            "PGD worst case equals the closed form for linear metrics within 1e-6 (S1 ellipsoid sets, "
            "all dims: a convex problem with a unique boundary optimum; hull and PCP sets reported beside)",
            ("|R_pgd - R_closed| ellipsoid", ld),
            bound=1e-6,
            sense="<=",
            baselines={
                f"{st} (closed form: {'min over vertices' if st == 'hull' else 'per ball'})": np.concatenate(
                    [u["linear_abs_diff"][st] for u in s1]
                )
                for st in ("hull", "pcp")
            },
            kind="check",
        )
    )
    for st in ("ball", "hull", "pcp"):
        worst = max(float(np.max(u["linear_abs_diff"][st], initial=0.0)) for u in s1)
        if worst > 1e-6:
            report.add_note(f"PGD vs closed form on linear metrics, {st} sets: worst gap {worst:.3g} (> 1e-6).")
    min_gap = [u["interp"][g]["min_in_set_sample_minus_R"] for u in s1 for g in ("good", "risky")]
    min_gap = [v for v in min_gap if v is not None]
    if min_gap:
        report.add_claim(
            judge_every(
                "optimizer_below_in_set_samples",
                "R (PGD with the in-set samples among its starts and a non-increasing objective) is never above "
                "the worst generated sample inside the set (value = worst in-set sample - R)",
                ("min in-set sample metric - R", min_gap),
                bound=0.0,
                sense=">=",
                tol=1e-9,
                kind="check",
            )
        )

    # -- interpretability ------------------------------------------------------------------------------
    need = math.ceil(cfg.seed_fraction * n_seeds - 1e-9)
    scores = ("R", "worst_of_k", "avg")
    irows, sep_syn, wok_good, wok_risky = [], {k: [] for k in scores}, [], []
    for s, rec in zip(seeds, records):
        seps = {k: [] for k in scores}
        for u in rec["s1"]:
            gd_, rk = u["interp"]["good"], u["interp"]["risky"]
            sp = {k: separation(gd_["per_x"][k], rk["per_x"][k]) for k in scores}
            for k in scores:
                seps[k].append(sp[k])
            irows.append(_interp_row(f"S1 d={u['d']}", s, gd_, rk, sp))
        for k in scores:
            sep_syn[k].append(float(np.mean(seps[k])))  # mean over dimensions: one value per seed
        wok_good.append(float(np.mean([u["interp"]["good"]["worst_of_k"] for u in rec["s1"]])))
        wok_risky.append(float(np.mean([u["interp"]["risky"]["worst_of_k"] for u in rec["s1"]])))
    report.add_claim(
        judge_superiority(
            "risky_generator_worse_synthetic",
            f"S1 has a failure to detect: the risky generator (failure rate {cfg.p_fail_risky:g} vs "
            f"{cfg.p_fail:g}) has a lower worst-of-K metric than the oracle sampler (mean over conditions and dims)",
            ("oracle worst-of-K", wok_good),
            {"risky worst-of-K": wok_risky},
            test="ttest",
            kind="precondition",
        )
    )
    sep_words = (
        "separation = mean / sd over conditions of the paired difference score(good) - score(risky), each score "
        "on the same generator draws and conditions"
    )
    report.add_claim(
        judge_k_of_n(
            "interpretability_synthetic",
            "S1: the reliability score separates the risky generator from the oracle better than worst-of-K and "
            f"than the average metric ({sep_words}; mean over dims) in >= {need} of {n_seeds} seeds",
            ("R separation", sep_syn["R"]),
            {"worst-of-K separation": sep_syn["worst_of_k"], "average-metric separation": sep_syn["avg"]},
            k=need,
            requires=["risky_generator_worse_synthetic"],
        )
    )
    if cfg.digits:
        sep_dig = {k: [] for k in scores}
        for s, u in zip(seeds, dig):
            gd_, rk = u["good"], u["risky"]
            sp = {k: separation(gd_["per_x"][k], rk["per_x"][k]) for k in scores}
            for k in scores:
                sep_dig[k].append(sp[k])
            irows.append(
                _interp_row("digits", s, gd_, rk, sp)
                | {"coverage_good": gd_["coverage"], "coverage_risky": rk["coverage"]}
            )
        report.add_claim(
            judge_superiority(
                "risky_generator_worse_digits",
                f"Digits has a failure to detect: the risky generator ({cfg.digits_mix:.0%} samples from the "
                "nearest other class) has a lower worst-of-K metric than the good one",
                ("good worst-of-K", [u["good"]["worst_of_k"] for u in dig]),
                {"risky worst-of-K": [u["risky"]["worst_of_k"] for u in dig]},
                test="ttest",
                kind="precondition",
            )
        )
        report.add_claim(
            judge_k_of_n(
                "interpretability_digits",
                f"Digits: the reliability score separates the risky generator ({cfg.digits_mix:.0%} samples from "
                f"the nearest other class) from the good one better than worst-of-K and than the average metric "
                f"({sep_words}) in >= {need} of {n_seeds} seeds",
                ("R separation", sep_dig["R"]),
                {"worst-of-K separation": sep_dig["worst_of_k"], "average-metric separation": sep_dig["avg"]},
                k=need,
                requires=["risky_generator_worse_digits"],
            )
        )
        report.add_table(
            "digits_per_class",
            [
                {
                    "class": c,
                    **{f"R_{g}": mean_ci([u[g]["R_per_class"][c] for u in dig]).mean for g in ("good", "risky")},
                }
                for c in range(10)
            ],
            "Digits: mean reliability per class over seeds.",
        )
    report.add_table(
        "interpretability",
        irows,
        "Per seed: model-level reliability (mean R over conditions) of the good and risky generator, the "
        "good-minus-risky gap of each score, and each score's separation (paired: mean / sd of the per-condition "
        "difference, judged; unpaired: gap / pooled sd, reported); "
        f"ball / PCP reliability on the first {cfg.n_interp_baseline_x} conditions only.",
    )
    wins = [
        f"{name}: worst-of-K separates better in {int(np.sum(np.asarray(v['worst_of_k']) >= np.asarray(v['R'])))} "
        f"of {len(v['R'])} seeds"
        for name, v in (("S1", sep_syn), *((("digits", sep_dig),) if cfg.digits else ()))
    ]
    report.add_note("Interpretability against the trivial rule: " + "; ".join(wins) + ".")

    # -- figures and metrics ---------------------------------------------------------------------------
    fd = next((u["figure"] for u in s1 if "figure" in u), None)
    if fd is not None:
        report.add_figure(
            "prediction_set_2d",
            _fig_set(fd, bump_metric(SyntheticProblem(2, cfg.p_fail, cfg.delta))),
            "A 2-D condition: real outputs, generated samples, the 90% ellipsoid / ball / hull / PCP "
            "sets and the worst-case point (star) of each (risky generator).",
        )
    report.add_figure("coverage_vs_alpha", _fig_coverage(cfg, s1), "Empirical vs nominal coverage.")
    report.metrics = {
        "s1": [{k: v for k, v in u.items() if k != "figure"} for u in s1],
        "grid": grid,
        "digits": dig,
    }
    report.add_note(
        "Seeds are the unit: each seed draws its own data, generator fit, calibration and test pairs; "
        "several test conditions or dimensions of one seed are averaged per seed before any test."
    )
    report.add_note(
        "Timing is on a shared 2-core machine; the paper's real image/text models are not "
        "reproduced (no downloads): S1 synthetic and sklearn digits stand in for them."
    )


EXPERIMENT = register(
    Experiment(
        slug="crel",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 5},
        measure=measure,
        judge=judge,
        threads=1,  # tiny torch ops: one thread is much faster than two contending ones
    )
)
