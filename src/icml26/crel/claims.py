"""Reproduction, the evidence: claims (each with its control arm), preconditions, checks, tables and figures from the
per-seed records of :func:`icml26.crel.experiment.measure`.

Control arms (measured in the same run, on the same seeds, conditions and generator draws):

- the **ball CReL** set (the ellipsoid minus its covariance: ``Sigma = I``, the same K samples, mean and calibration
  pairs) for the three informativeness claims: what they credit is the set's shape taken from the samples;
- the **global-covariance ellipse** (the ellipsoid minus its *per-condition* shape: one shrunk covariance for every
  condition, the MAPIE-style standardized-residual score) as their second control: what CReL adds over an
  x-independent covariance score is the shape per condition;
- the **centre metric** ``m(x, mu(x))`` (the reliability with the set shrunk to its centre, ``qhat = 0``: the same
  samples and mean, no worst case over the calibrated set) for the two interpretability claims: what they credit is
  the worst case over the conformal set.

Checks (guarantees of our code, each with a mutant test in tests/crel/test_check_mutants.py): the conformal rank over
re-splits, end-to-end coverage against the exact ``k/(n+1)`` (both sides), PGD against the linear closed form, PGD
against a dense 2-D grid, and ``R`` below the in-set samples.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import torch

from icml26.core import (
    Report,
    judge_every,
    judge_k_of_n,
    judge_superiority,
    judge_threshold,
    mean_ci,
)

from ._data import SyntheticProblem, bump_metric

__all__ = ["judge", "exact_rank", "separation", "coverage_checks", "SET_NAMES", "VOLUME_SETS"]

SET_NAMES = ("ellipsoid", "ball", "pcp")  # re-split coverage and interpretability baselines
VOLUME_SETS = ("ellipsoid", "ball", "hull", "pcp")
CONTROL_SETS = ("ellipsoid", "ball", "global", "pcp")  # "global": the one-covariance ellipse (second control)
GLOBAL_WORDS = (
    "The global-covariance ellipse (MAPIE-style standardized residual: the ellipsoid with one shrunk covariance for "
    "every condition, the mean of the sample covariances at separate conditions; the same samples' mean and the same "
    "calibration pairs) is not smaller than PCP's union of balls by the same rule"
)


def _gap(a, b):
    return "" if a is None or b is None else a - b


def exact_rank(n: int, alpha: float) -> int:
    """``k = ceil((n + 1)(1 - alpha))`` in exact rational arithmetic (independent of the library's ``_rank``)."""
    return math.ceil((n + 1) * (1 - Fraction(str(alpha))))


def missing_plus_one_shift(cfg) -> float:
    """How far the rank without its ``+1``, ``ceil(n (1 - alpha))``, moves the expected end-to-end coverage below
    ``k/(n+1)``, averaged over the calibrations (``n`` cycling over ``cfg.e2e_n_cals``; exact arithmetic)."""
    a = 1 - Fraction(str(cfg.e2e_alpha))
    ns = [cfg.e2e_n_cals[j % len(cfg.e2e_n_cals)] for j in range(max(cfg.e2e_calibrations, len(cfg.e2e_n_cals)))]
    return float(np.mean([(exact_rank(n, cfg.e2e_alpha) - math.ceil(n * a)) / (n + 1) for n in ns]))


def coverage_checks(cfg, units: list, e2e: list[dict], set_type: str = "ellipsoid") -> list:
    """The two one-sided halves of "end-to-end coverage equals k/(n+1) within +-e2e_band" (a TOST), as checks:
    split-conformal coverage is a guarantee of the construction, so a failure is a bug of our code.

    The unit is one calibration: given a seed's generator (trained on separate data), each fresh calibration with
    its fresh test pairs is an independent draw whose deviation ``coverage - k/(n+1)`` has mean exactly 0 for a
    correct implementation, whatever the generator, so the calibrations of all seeds are independent draws by
    design (seeds are still reported per row of the table).  Each value carries its binomial Monte-Carlo error
    ``sqrt(p (1 - p) / n_test)``, ``p = k/(n+1)``, added to the spread (conservative: the spread holds it already).
    ``units`` (the seed of each record) only labels the records.  ``set_type``: the sets the records come from
    (ids ``coverage``, ``coverage_upper`` for the ellipsoid, ``coverage_<set>``, ``coverage_upper_<set>`` else).
    """
    if len(units) != len(e2e):
        raise ValueError(f"units must give one seed per record: {len(units)} for {len(e2e)} records")
    dev, se = [], []
    for rec in e2e:
        c, e = np.asarray(rec["coverage"], dtype=float), np.asarray(rec["expected"], dtype=float)
        dev += (c - e).tolist()
        se += np.sqrt(e * (1 - e) / cfg.e2e_n_test).tolist()
    ns = ", ".join(str(n) for n in cfg.e2e_n_cals)
    what = (
        f"S1, fitted generator, alpha={cfg.e2e_alpha:g}, n_cal cycling over {{{ns}}}: {cfg.e2e_calibrations} "
        f"fresh calibrations x {cfg.e2e_n_test} fresh test pairs per seed and dimension (the unit: one calibration, "
        "an independent draw with mean deviation exactly 0), through "
        "predict_set(x).contains(y); value = coverage - k/(n+1) with k = ceil((n+1)(1-alpha)), the exact "
        f"expectation; a rank off by one moves it by 1/(n+1) >= {1 / (max(cfg.e2e_n_cals) + 1):.3f}, the rank "
        f"without its +1 by {missing_plus_one_shift(cfg):.4f} on average"
    )
    out = []
    suffix = "" if set_type == "ellipsoid" else f"_{set_type}"
    set_words = {
        "ellipsoid": "CReL's ellipsoid sets",
        "ball": "the ball CReL sets",
        "hull": "the scaled-hull CReL sets",
        "pcp": "PCP's union-of-balls sets",
    }[set_type]
    for cid, bound, sense, words in (
        ("coverage" + suffix, -cfg.e2e_band, ">=", "not below"),
        ("coverage_upper" + suffix, cfg.e2e_band, "<=", "not above"),
    ):
        out.append(
            judge_threshold(
                cid,
                f"End-to-end coverage of {set_words} is {words} its exact expectation k/(n+1) by more "
                f"than {cfg.e2e_band:g} ({what})",
                ("coverage - k/(n+1)", dev),
                threshold=bound,
                sense=sense,
                mc_se=se,
                kind="check",
                unit="calibration",
            )
        )
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
        "centre_gap": gd_["centre"] - rk["centre"],
        "q_alpha_gap": gd_["q_alpha"] - rk["q_alpha"],
        "R_sep": sp["R"],
        "worst_of_k_sep": sp["worst_of_k"],
        "avg_sep": sp["avg"],
        "q_alpha_sep": sp["q_alpha"],
        "centre_sep": sp["centre"],
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


def _fig_coverage(cfg, s1: list[dict]):
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


# ------------------------------------------------------------------------------------------------ judge
def judge(cfg, records: list[dict], report: Report) -> None:
    seeds = list(report.seeds or range(len(records)))
    s1 = [u for r in records for u in r["s1"]]
    grid = [r["grid"] for r in records]
    dig = [r["digits"] for r in records] if cfg.digits else []
    n_seeds = len(seeds)
    report.set_tuning("ellipsoid CReL", configs=1, steps=0, note="shrinkage 0.1, eps 1e-6, K fixed: nothing tuned")
    report.set_tuning("pcp", configs=1, steps=0, note="K fixed: nothing tuned")
    report.set_tuning("ball CReL (control)", configs=1, steps=0, note="Sigma = I; the same K samples: nothing tuned")
    report.set_tuning(
        "global-covariance ellipse (control)",
        configs=1,
        steps=0,
        note=f"the ellipsoid's shrinkage and eps, covariance from {cfg.n_global_shape_x} separate conditions: nothing "
        "tuned",
    )
    arms = ("R", "worst-of-K", "average-metric", "alpha-quantile", "centre-metric")
    for arm in (f"{a} separation" for a in arms):
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
        "arithmetic: the check `conformal_rank` tests it exactly, the checks `coverage`, `coverage_upper` test the "
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
    for c in coverage_checks(cfg, [u["seed"] for u in s1], e2e):
        report.add_claim(c)
    for st in [t for t in getattr(cfg, "e2e_set_types", ()) if t != "ellipsoid"]:
        recs = [u["coverage_e2e_sets"][st] for u in s1]
        for c in coverage_checks(cfg, [u["seed"] for u in s1], recs, st):
            report.add_claim(c)
    erows = []
    for u, st in [(v, t) for v in s1 for t in ("ellipsoid", *v.get("coverage_e2e_sets", {}))]:
        e = u["coverage_e2e"] if st == "ellipsoid" else u["coverage_e2e_sets"][st]
        dv_ = np.subtract(e["coverage"], e["expected"])
        erows.append(
            {
                "set": st,
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
        "End-to-end coverage of each checked set type on fresh pairs (mean over the calibrations of a seed and "
        "dimension), its exact expectation (mean k/(n+1) over the n_cal values used) and the deviation.",
    )

    # -- informativeness, per generator ----------------------------------------------------------------
    dv = max(cfg.dims)
    gen_words = {"fitted": "fitted conditional-Gaussian generator", "oracle": "oracle mixture sampler"}
    for gname, cid in (("fitted", "informativeness"), ("oracle", "informativeness_oracle")):
        sub = [u for u in s1 if u["d"] == dv]
        lv = {st: np.concatenate([u["log_volume"][gname][st] for u in sub]) for st in CONTROL_SETS}
        lv_units = [u["seed"] for u in sub for _ in u["log_volume"][gname]["ellipsoid"]]
        c = report.add_claim(
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
                controls=[f"{cid}_ball", f"{cid}_global"],
            )
        )
        report.add_claim(
            c.control(
                f"{cid}_ball",
                "The ball CReL set (the ellipsoid minus its covariance: Sigma = I, the same samples, mean and "
                "calibration) is not smaller than PCP's union of balls by the same rule",
                ("ball CReL", lv["ball"]),
            )
        )
        report.add_claim(c.control(f"{cid}_global", GLOBAL_WORDS, ("global-covariance ellipse", lv["global"])))
    vrows, pcp_wins = [], []
    sources = [
        (f"S1 {gen_words[g]}", d, [u for u in s1 if u["d"] == d], g) for g in ("fitted", "oracle") for d in cfg.dims
    ]
    if cfg.digits:
        sources.append(("digits, class-conditional Gaussian", 16, dig, None))
    for label, d, units_, g in sources:
        lvs = {}
        for st in (*VOLUME_SETS, "global"):
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
        lv = {st: np.concatenate([u["log_volume"][st] for u in dig]) for st in CONTROL_SETS}
        c = report.add_claim(
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
                controls=["informativeness_digits_ball", "informativeness_digits_global"],
            )
        )
        report.add_claim(
            c.control(
                "informativeness_digits_ball",
                "On digits, the ball CReL set (Sigma = I) is not smaller than PCP's union of balls by the same rule",
                ("ball CReL", lv["ball"]),
            )
        )
        report.add_claim(
            c.control(
                "informativeness_digits_global",
                "On digits: " + GLOBAL_WORDS,
                ("global-covariance ellipse", lv["global"]),
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
            # a check (issue 46): a guarantee of our optimiser at this scale, not a finding of the paper; a mutant
            # (PGD stopped after one step) fails it
            kind="check",
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
    # the paper's premise: a risky generator with matched average quality (safe = blurrier, risky = more failures;
    # the safe scale set on the dev seeds), a precondition that the average metric does not separate them, and the
    # centre metric m(x, mu(x)) as the control arm (no worst case over the calibrated set)
    need = math.ceil(cfg.seed_fraction * n_seeds - 1e-9)
    scores = ("R", "worst_of_k", "avg", "q_alpha", "centre")
    irows, sep_syn, wok_good, wok_risky, avg_abs = [], {k: [] for k in scores}, [], [], []
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
        avg_abs.append(float(np.mean(np.abs(seps["avg"]))))  # |.| per dimension first: signs cannot cancel
        wok_good.append(float(np.mean([u["interp"]["good"]["q_alpha"] for u in rec["s1"]])))
        wok_risky.append(float(np.mean([u["interp"]["risky"]["q_alpha"] for u in rec["s1"]])))
    scales = ", ".join(f"d={d}: {v:g}" for d, v in cfg.safe_scale if d in cfg.dims)
    gens = (
        f"the safe sampler (failure rate {cfg.p_fail:g}, noise x {{{scales}}}) vs the risky one (failure rate "
        f"{cfg.p_fail_risky:g}, true noise)"
    )
    report.add_claim(
        judge_superiority(
            "risky_generator_worse_synthetic",
            f"S1 has a failure to detect: the risky generator's sample metric is lower than the safe one's at the "
            f"sets' level alpha = {cfg.interp_alpha:g} (its alpha-quantile over the K samples of a condition; {gens}; "
            "mean over conditions and dims)",
            ("safe alpha-quantile", wok_good),
            {"risky alpha-quantile": wok_risky},
            test="ttest",
            kind="precondition",
        )
    )
    sep_words = (
        "separation = mean / sd over conditions of the paired difference score(safe) - score(risky), each score "
        "on the same generator draws and conditions"
    )
    report.add_claim(
        judge_threshold(
            "average_matched_synthetic",
            f"S1 shows the paper's premise: the average metric does not separate the two generators ({gens}): "
            f"|average-metric separation| (mean over dims of |.|) <= {cfg.avg_sep_bound:g} ({sep_words})",
            ("|average-metric separation|", avg_abs),
            threshold=cfg.avg_sep_bound,
            sense="<=",
            kind="precondition",
        )
    )
    c = report.add_claim(
        judge_k_of_n(
            "interpretability_synthetic",
            f"S1: the reliability score separates the risky generator from the safe one ({gens}) better than "
            f"worst-of-K, than the average metric and than the alpha-quantile of the K sample metrics ({sep_words}; "
            f"mean over dims) in >= {need} of {n_seeds} seeds",
            ("R separation", sep_syn["R"]),
            {
                "worst-of-K separation": sep_syn["worst_of_k"],
                "average-metric separation": sep_syn["avg"],
                "alpha-quantile separation": sep_syn["q_alpha"],
            },
            k=need,
            requires=["risky_generator_worse_synthetic", "average_matched_synthetic"],
            controls=["interpretability_synthetic_centre"],
        )
    )
    report.add_claim(
        c.control(
            "interpretability_synthetic_centre",
            "The centre metric m(x, mu(x)) (the reliability without its worst case over the calibrated set: the same "
            "samples and mean) does not separate the generators better than worst-of-K, the average metric and the "
            "alpha-quantile by the same rule",
            ("centre-metric separation", sep_syn["centre"]),
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
        dgens = (
            f"the safe model (fitted class Gaussians, Cholesky x {cfg.digits_good_scale:g}) vs the risky one (fitted "
            f"Gaussians, {cfg.digits_mix:.0%} of samples from the nearest other class)"
        )
        report.add_claim(
            judge_superiority(
                "risky_generator_worse_digits",
                f"Digits has a failure to detect: the risky generator's sample metric is lower than the safe one's "
                f"at the sets' level alpha = {cfg.interp_alpha:g} (alpha-quantile over the K samples; {dgens})",
                ("safe alpha-quantile", [u["good"]["q_alpha"] for u in dig]),
                {"risky alpha-quantile": [u["risky"]["q_alpha"] for u in dig]},
                test="ttest",
                kind="precondition",
            )
        )
        report.add_claim(
            judge_threshold(
                "average_matched_digits",
                f"Digits shows the paper's premise: the average metric does not separate the two generators "
                f"({dgens}): |average-metric separation| <= {cfg.avg_sep_bound:g} ({sep_words})",
                ("|average-metric separation|", [abs(v) for v in sep_dig["avg"]]),
                threshold=cfg.avg_sep_bound,
                sense="<=",
                kind="precondition",
            )
        )
        c = report.add_claim(
            judge_k_of_n(
                "interpretability_digits",
                f"Digits: the reliability score separates the risky generator from the safe one ({dgens}) better "
                f"than worst-of-K, than the average metric and than the alpha-quantile of the K sample metrics "
                f"({sep_words}) in >= {need} of {n_seeds} seeds",
                ("R separation", sep_dig["R"]),
                {
                    "worst-of-K separation": sep_dig["worst_of_k"],
                    "average-metric separation": sep_dig["avg"],
                    "alpha-quantile separation": sep_dig["q_alpha"],
                },
                k=need,
                requires=["risky_generator_worse_digits", "average_matched_digits"],
                controls=["interpretability_digits_centre"],
            )
        )
        report.add_claim(
            c.control(
                "interpretability_digits_centre",
                "On digits, the centre metric m(c, mu(c)) does not separate the generators better than worst-of-K, "
                "the average metric and the alpha-quantile by the same rule",
                ("centre-metric separation", sep_dig["centre"]),
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
        "Per seed: model-level reliability (mean R over conditions) of the safe ('good') and risky generator, the "
        "safe-minus-risky gap of each score (centre = the control arm m(x, mu(x))), and each score's separation "
        "(paired: mean / sd of the per-condition difference, judged; unpaired: gap / pooled sd, reported); "
        f"ball / PCP reliability on the first {cfg.n_interp_baseline_x} conditions only.",
    )
    wins = [
        f"{name}: {label} separates at least as well as R in "
        f"{int(np.sum(np.asarray(v[key]) >= np.asarray(v['R'])))} of {len(v['R'])} seeds"
        for name, v in (("S1", sep_syn), *((("digits", sep_dig),) if cfg.digits else ()))
        for key, label in (("worst_of_k", "worst-of-K"), ("q_alpha", "the alpha-quantile"))
    ]
    report.add_note("Interpretability against the trivial rules: " + "; ".join(wins) + ".")

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
