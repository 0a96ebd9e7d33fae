"""Reproduction: distributional advice vs point predictions, exactly computed on synthetic season lengths.

Per seed we draw one instance per family (Gaussian, geometric and bimodal season lengths, parameters jittered
around a fixed grid in units of ``B``), and for each instance a set of predictions: the truth shifted by
``delta * B`` days (random direction per instance; ``delta = 0`` is a perfect prediction) and the truth mixed
with an adversarial point mass of weight ``eps`` on the far side of ``B``.  Every policy is scored exactly
(expected competitive ratio under the truth, worst case over all season lengths).  Clamp is scored in both
readings (``mode="clamp"``: the global argmin clamped into the safe range; ``mode="range_argmin"``: the argmin
within it).  Claims on the size of the gain at ``delta = 0`` are judged per family with seeds as units (the
instances of a seed are averaged first); the guarantees of our code are checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from icml26.core import Experiment, Report, judge_every, judge_superiority, register, seed_everything

from .baselines import (
    BreakEven,
    CuiDinitz,
    KarlinRandomized,
    PSKDeterministic,
    PSKRandomized,
    point_prediction,
)
from .instance import SkiRental, bimodal, discretized_gaussian, geometric, minimax_ratio, point_mass, shift
from .policies import ClampPolicy, OptimalThreshold, RobustStoppingDistribution, evaluate


@dataclass(frozen=True)
class Config:
    """Sizes and grids (family parameters are in units of the buy cost ``B``)."""

    buy_cost: int = 100
    horizon: int = 1000
    gaussian_means: tuple[float, ...] = (0.2, 0.6, 1.0, 1.5, 3.0)  # sigma = mean / 4
    geometric_means: tuple[float, ...] = (0.2, 0.8, 2.0, 5.0)  # mean 1/q
    bimodal_weights: tuple[float, ...] = (0.5, 0.7, 0.3)  # weight of the short mode N(0.1B, 0.03B)
    bimodal_modes: tuple[float, float, float, float] = (0.1, 0.03, 3.0, 0.4)  # mu1, sd1, mu2, sd2
    jitter: float = 0.25  # family parameters are multiplied by exp(U(-jitter, jitter)) per seed
    lambdas: tuple[float, ...] = (0.25, 0.5, 0.75)
    deltas: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
    adversarial_weights: tuple[float, ...] = (0.2, 0.5)
    tradeoff_lambdas: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    point: str = "median"  # point prediction handed to the PSK baselines


FULL = Config()
QUICK = Config(
    buy_cost=20,
    horizon=200,
    gaussian_means=(0.6, 1.5),
    geometric_means=(0.8, 2.0),
    bimodal_weights=(0.5, 0.7),
    lambdas=(0.5,),
    deltas=(0.0, 0.5, 2.0),
    adversarial_weights=(0.3,),
    tradeoff_lambdas=(0.25, 0.5, 0.75, 1.0),
)

TOL = 1e-9  # slack for exact guarantees (float rounding of exact quantities; HiGHS runs at 1e-10)


# -- instances and predictions ------------------------------------------------------------------------------
def draw_instances(cfg: Config, rng: np.random.Generator) -> list[dict]:
    """One truth pmf per family member, with parameters jittered by ``rng``."""
    b, n = cfg.buy_cost, cfg.horizon

    def jit() -> float:
        return float(np.exp(rng.uniform(-cfg.jitter, cfg.jitter)))

    out = []
    for m in cfg.gaussian_means:
        mu = m * b * jit()
        out.append({"family": "gaussian", "name": f"gauss(mu={mu:.1f})", "P": discretized_gaussian(mu, mu / 4, n)})
    for m in cfg.geometric_means:
        mean = m * b * jit()
        out.append({"family": "geometric", "name": f"geom(mean={mean:.1f})", "P": geometric(1.0 / mean, n)})
    m1, s1, m2, s2 = cfg.bimodal_modes
    for w in cfg.bimodal_weights:
        w = float(np.clip(w + rng.uniform(-0.1, 0.1), 0.05, 0.95))
        mu1, mu2 = m1 * b * jit(), m2 * b * jit()
        P = bimodal(mu1, s1 * b, mu2, s2 * b, n, weight=w)
        out.append({"family": "bimodal", "name": f"bimodal(w={w:.2f},{mu1:.0f}/{mu2:.0f})", "P": P})
    return out


def predictions(cfg: Config, P: np.ndarray, sign: int) -> list[tuple[str, np.ndarray]]:
    """``[(label, P_hat), ...]``: shifts by ``sign * delta * B`` days, then adversarial mixtures."""
    b, n = cfg.buy_cost, cfg.horizon
    out = [(f"delta={d:g}", shift(P, sign * int(round(d * b)))) for d in cfg.deltas]
    far = point_mass(n, n) if point_prediction(P) < b else point_mass(1, n)  # the other side of B
    out += [(f"eps={e:g}", (1 - e) * P + e * far) for e in cfg.adversarial_weights]
    return out


def _score(policy, inst, P, P_hat) -> dict:
    r = evaluate(policy, inst, P, P_hat)
    return {"ecr": r["ecr"], "worst": r["worst_case"]}


def measure(cfg: Config, seed: int, progress=None) -> dict:
    """One seed's replicate, all exact: ``records`` (one per instance x prediction) and the trade-off sweep."""
    rng = seed_everything(seed)
    inst = SkiRental(cfg.buy_cost, cfg.horizon)
    records, tradeoff = [], []
    for i, ins in enumerate(draw_instances(cfg, rng)):
        P = ins["P"]
        sign = int(rng.choice([-1, 1]))
        fixed = {
            "oracle": _score(OptimalThreshold(), inst, P, P),
            "break_even": _score(BreakEven(), inst, P, None),
            "karlin": _score(KarlinRandomized(), inst, P, None),
        }
        for label, P_hat in predictions(cfg, P, sign):
            rec = {"seed": seed, "instance": f"s{seed}-{i}", "family": ins["family"], "name": ins["name"]}
            rec.update(error=label, sign=sign, **fixed)
            rec["opt_threshold"] = _score(OptimalThreshold(), inst, P, P_hat)
            rec["cui_dinitz"] = _score(CuiDinitz(), inst, P, P_hat)
            for lam in cfg.lambdas:
                psk_r = _score(PSKRandomized(lam, cfg.point), inst, P, P_hat)
                lp_psk = RobustStoppingDistribution(psk_r["worst"]).fit(inst, P_hat)
                rec[f"lam={lam:g}"] = d = {
                    "clamp": _score(ClampPolicy(lam), inst, P, P_hat),
                    "range_argmin": _score(ClampPolicy(lam, mode="range_argmin"), inst, P, P_hat),
                    "psk_det": _score(PSKDeterministic(lam, cfg.point), inst, P, P_hat),
                    "psk_rand": psk_r,
                    "lp_psk": {**_score(lp_psk.distribution_, inst, P, P_hat), "gamma": psk_r["worst"]},
                }
                if label == "delta=0":  # the Clamp-matched LP at a perfect prediction only (LP time budget)
                    d["lp_clamp"] = _score(RobustStoppingDistribution(1 + 1 / lam), inst, P, P_hat)
            records.append(rec)
        for lam in cfg.tradeoff_lambdas:  # consistency (delta = 0) against robustness, per lambda
            row = {"instance": f"s{seed}-{i}", "lam": lam}
            for name, pol in (
                ("clamp", ClampPolicy(lam)),
                ("range_argmin", ClampPolicy(lam, mode="range_argmin")),
                ("psk_det", PSKDeterministic(lam, cfg.point)),
                ("psk_rand", PSKRandomized(lam, cfg.point)),
            ):
                row[name] = _score(pol, inst, P, P)
            tradeoff.append(row)
    return {"records": records, "tradeoff": tradeoff}


# -- the run ------------------------------------------------------------------------------------------------
METHODS = ("clamp", "range_argmin", "psk_det", "psk_rand", "lp_clamp", "lp_psk")  # per-lambda policies at delta = 0
SWEPT = ("clamp", "range_argmin", "psk_det", "psk_rand", "lp_psk")  # per-lambda policies scored at every prediction
TRADEOFF = ("clamp", "range_argmin", "psk_det", "psk_rand")  # cheap policies swept over a fine lambda grid


FAMILIES = ("bimodal", "geometric", "gaussian")  # the paper's three families of season-length laws
GAIN = 0.01  # every size-of-gain claim asks for >= 0.01 ECR: the margin of the precondition on main, not refit
_PHRASE = {
    "clamp": "Clamp(lambda={lam:g}) (the global argmin clamped into the safe range)",
    "range_argmin": "Clamp(lambda={lam:g}, mode=range_argmin) (the argmin within the safe range)",
}
_NAMES = {"clamp": "Clamp", "range_argmin": "range-argmin", "psk_det": "PSK-det", "oracle": "oracle"}


def _gain_claim(cid: str, statement: str, rows: list[dict], key: str, method: str, baseline: str, **kw):
    """Seeds as units: the instances of each seed are averaged per seed before the paired one-sided t test."""

    def vals(m: str) -> list[float]:
        return [r["oracle"]["ecr"] if m == "oracle" else r[key][m]["ecr"] for r in rows]

    return judge_superiority(
        cid,
        statement,
        (f"{_NAMES[method]} ECR", vals(method)),
        {f"{_NAMES[baseline]} ECR": vals(baseline)},
        higher_is_better=False,  # lower ECR is better: the advantage is baseline ECR - method ECR
        test="ttest",  # 5 seeds (3 on quick): a signed-rank test could never reach p < 0.05 on 3
        units=[r["seed"] for r in rows],
        **kw,
    )


def judge(config: Config, seed_records: list[dict], report: Report) -> None:
    cfg = config
    seeds = report.seeds or list(range(len(seed_records)))
    records = [r for out in seed_records for r in out["records"]]
    tradeoff = [t for out in seed_records for t in out["tradeoff"]]
    exact = [r for r in records if r["error"] == "delta=0"]
    n_inst = len(exact)
    c_b = minimax_ratio(cfg.buy_cost)
    by_family = {f: [r for r in exact if r["family"] == f] for f in FAMILIES}

    for lam in cfg.lambdas:
        key, lam_s = f"lam={lam:g}", f"lam{lam:g}"
        pre_point, pre_bind = f"point_prediction_loses_{lam_s}", f"clamp_binds_{lam_s}"
        # (0) the setting: a point prediction loses something a distribution could recover ...
        report.add_claim(
            _gain_claim(
                pre_point,
                f"The setting leaves room for distributional advice: at a correct prediction the oracle threshold "
                f"has a lower ECR than PSK-deterministic(lambda={lam:g}) by >= {GAIN:g} on average",
                exact,
                key,
                "oracle",
                "psk_det",
                min_effect=GAIN,
                kind="precondition",
            )
        )
        # ... and the safe range costs Clamp something (else both readings of Clamp are the oracle).
        report.add_claim(
            _gain_claim(
                pre_bind,
                f"The safe range binds: at a correct prediction the unconstrained oracle threshold has a lower ECR "
                f"than Clamp(lambda={lam:g}) by >= {GAIN:g} on average (so a better point of the range can matter)",
                exact,
                key,
                "oracle",
                "clamp",
                min_effect=GAIN,
                kind="precondition",
            )
        )
        # (a) Clamp vs PSK-deterministic at a perfect prediction, all families pooled (the paper's headline).
        report.add_claim(
            _gain_claim(
                f"clamp_beats_psk_det_{lam_s}",
                f"With a correct distributional prediction (delta=0), Clamp(lambda={lam:g}) has a lower "
                f"expected competitive ratio than the point-prediction baseline PSK-deterministic"
                f"(lambda={lam:g}), at the same robustness 1+1/lambda={1 + 1 / lam:g}",
                exact,
                key,
                "clamp",
                "psk_det",
                requires=[pre_point],
            )
        )
        # (b) the size of the gain, per family: both Clamp readings against PSK-det, and range-argmin vs clamp.
        for fam in FAMILIES:
            rows = by_family[fam]
            if not rows:
                continue
            for m in ("clamp", "range_argmin"):
                report.add_claim(
                    _gain_claim(
                        f"{m}_beats_psk_det_{fam}_{lam_s}",
                        f"On {fam} season lengths with a correct prediction (delta=0), {_PHRASE[m].format(lam=lam)} "
                        f"has a lower ECR than PSK-deterministic(lambda={lam:g}) by >= {GAIN:g} on average over seeds",
                        rows,
                        key,
                        m,
                        "psk_det",
                        min_effect=GAIN,
                        requires=[pre_point],
                    )
                )
            report.add_claim(
                _gain_claim(
                    f"range_argmin_beats_clamp_{fam}_{lam_s}",
                    f"On {fam} season lengths with a correct prediction (delta=0), the argmin of the predicted "
                    f"ECR within the safe range has a lower ECR than the clamped global argmin (lambda={lam:g}) "
                    f"by >= {GAIN:g} on average over seeds",
                    rows,
                    key,
                    "range_argmin",
                    "clamp",
                    min_effect=GAIN,
                    requires=[pre_bind],
                )
            )
    ties = {
        lam: sum(abs(r[f"lam={lam:g}"]["clamp"]["ecr"] - r[f"lam={lam:g}"]["psk_det"]["ecr"]) <= 1e-12 for r in exact)
        for lam in cfg.lambdas
    }
    differ = {
        lam: sum(
            abs(r[f"lam={lam:g}"]["clamp"]["ecr"] - r[f"lam={lam:g}"]["range_argmin"]["ecr"]) > 1e-12 for r in exact
        )
        for lam in cfg.lambdas
    }
    report.add_note(
        "Clamp and PSK-det have the same ECR (to 1e-12) on "
        + ", ".join(f"{t} of {n_inst} instances at lambda={lam:g}" for lam, t in ties.items())
        + "; the two Clamp readings differ on "
        + ", ".join(f"{t} at lambda={lam:g}" for lam, t in differ.items())
        + ". Every gain claim runs a paired one-sided t test over per-seed means of the instances (seeds are "
        f"the unit); the per-family claims ask for a mean gain >= {GAIN:g} at the lower end of the one-sided 95% "
        "interval (table gain_by_family)."
    )
    for arm in ("Clamp", "range-argmin", "PSK-det", "oracle"):
        report.set_tuning(
            arm, configs=1, steps=0, note="a closed-form rule at the grid's lambda: nothing is tuned on the truth"
        )

    # (c) invariants of our code, true by construction (checks).
    diffs = [
        r[f"lam={lam:g}"]["lp_psk"]["ecr"] - r[f"lam={lam:g}"]["psk_rand"]["ecr"] for r in exact for lam in cfg.lambdas
    ]
    report.add_claim(
        judge_every(
            "lp_never_worse_than_psk_rand",
            "At equal robustness (gamma = PSK-randomized's own worst-case ratio) the robust stopping "
            "distribution (LP water-filling) has an expected competitive ratio no larger than PSK-randomized "
            "on every instance and lambda (delta=0)",
            ("LP ECR - PSK-rand ECR", diffs),
            bound=0.0,
            sense="<=",
            tol=TOL,
            baselines={"PSK-rand ECR": [r[f"lam={lam:g}"]["psk_rand"]["ecr"] for r in exact for lam in cfg.lambdas]},
            kind="check",  # the LP is the exact optimum at that gamma and PSK-rand is feasible: by construction
        )
    )
    report.add_claim(
        judge_every(
            "range_argmin_never_worse_than_clamp",
            "With a correct prediction (delta=0) the argmin within the safe range never has a larger ECR than "
            "the clamped global argmin, on every instance and lambda",
            (
                "range-argmin ECR - Clamp ECR",
                [
                    r[f"lam={lam:g}"]["range_argmin"]["ecr"] - r[f"lam={lam:g}"]["clamp"]["ecr"]
                    for r in exact
                    for lam in cfg.lambdas
                ],
            ),
            bound=0.0,
            sense="<=",
            tol=TOL,
            kind="check",  # at delta=0 P_hat is the truth and the clamped day lies in the range: by construction
        )
    )
    for m, name in (("clamp", "Clamp"), ("range_argmin", "range-argmin Clamp")):
        report.add_claim(
            judge_every(
                f"{m}_robust",
                f"{name}(lambda)'s worst-case ratio never exceeds 1 + 1/lambda, whatever the prediction",
                (
                    f"{name} worst case - (1+1/lambda)",
                    [r[f"lam={lam:g}"][m]["worst"] - (1 + 1 / lam) for r in records for lam in cfg.lambdas],
                ),
                bound=0.0,
                sense="<=",
                tol=TOL,
                kind="check",  # every buy day of the safe range is (1 + 1/lambda)-competitive
            )
        )
    lp_excess = []
    for r in records:
        for lam in cfg.lambdas:
            d = r[f"lam={lam:g}"]
            lp_excess.append(d["lp_psk"]["worst"] - d["lp_psk"]["gamma"])
            if "lp_clamp" in d:
                lp_excess.append(d["lp_clamp"]["worst"] - (1 + 1 / lam))
    report.add_claim(
        judge_every(
            "lp_robust",
            "The robust stopping distribution's worst-case ratio never exceeds its gamma, whatever the "
            "prediction (gamma = 1+1/lambda and gamma = PSK-randomized's worst case)",
            ("LP worst case - gamma", lp_excess),
            bound=0.0,
            sense="<=",
            tol=TOL,
            kind="check",  # a constraint of the LP
        )
    )

    _tables(report, cfg, records, exact, tradeoff, c_b)
    _figures(report, cfg, records, tradeoff)
    report.metrics = {
        "n_instances": n_inst,
        "n_records": len(records),
        "minimax_ratio": c_b,
        "clamp_modes_differ_at_delta0": {f"lam={lam:g}": n for lam, n in differ.items()},
    }
    report.add_note(
        f"{n_inst} paired instances ({len(seeds)} seeds x {n_inst // max(len(seeds), 1)} family members), "
        f"B={cfg.buy_cost}, horizon N={cfg.horizon}; every number is an exact expectation (no sampling)."
    )
    report.add_note(
        "Clamp (both readings: the clamped global argmin and the argmin within the safe range), the ECR "
        "objective and the water-filling LP are our reading of the paper (its body was not available). The "
        "robustness bounds, the LP's optimality against PSK-randomized and the range argmin's edge over the "
        "clamp under a correct prediction hold by construction: they are checks of our code, not claims."
    )


def _mean(xs) -> float:
    return float(np.mean(xs)) if len(xs) else float("nan")


def _tables(report: Report, cfg: Config, records, exact, tradeoff, c_b: float) -> None:
    rows = []
    for name in ("oracle", "opt_threshold", "cui_dinitz", "break_even", "karlin"):
        v = [r[name]["ecr"] for r in exact]
        w = [r[name]["worst"] for r in exact]
        rows.append(
            {
                "method": name,
                "lambda": "-",
                "mean ECR": _mean(v),
                "std": float(np.std(v, ddof=1)),
                "mean worst case": _mean(w),
                "max worst case": max(w),
                "guarantee": _guarantee(name, None, cfg, c_b),
            }
        )
    for lam in cfg.lambdas:
        for name in METHODS:
            v = [r[f"lam={lam:g}"][name]["ecr"] for r in exact]
            w = [r[f"lam={lam:g}"][name]["worst"] for r in exact]
            rows.append(
                {
                    "method": name,
                    "lambda": lam,
                    "mean ECR": _mean(v),
                    "std": float(np.std(v, ddof=1)),
                    "mean worst case": _mean(w),
                    "max worst case": max(w),
                    "guarantee": _guarantee(name, lam, cfg, c_b),
                }
            )
    report.add_table(
        "consistency",
        rows,
        f"Correct prediction (delta=0), {len(exact)} instances: expected competitive ratio under the truth "
        "and worst case over all season lengths. opt_threshold = argmin ECR of the prediction without a "
        "clamp; oracle = the same fed the truth; lp_clamp: gamma = 1+1/lambda; lp_psk: gamma = PSK-rand's "
        "worst case.",
    )
    fam_rows = []
    for fam in sorted({r["family"] for r in exact}):
        sub = [r for r in exact if r["family"] == fam]
        for lam in cfg.lambdas:
            k = f"lam={lam:g}"
            fam_rows.append(
                {
                    "family": fam,
                    "lambda": lam,
                    "n": len(sub),
                    "oracle": _mean([r["oracle"]["ecr"] for r in sub]),
                    **{m: _mean([r[k][m]["ecr"] for r in sub]) for m in METHODS},
                    "clamp < psk_det (share)": _mean(
                        [r[k]["clamp"]["ecr"] < r[k]["psk_det"]["ecr"] - 1e-12 for r in sub]
                    ),
                    "range_argmin < clamp (share)": _mean(
                        [r[k]["range_argmin"]["ecr"] < r[k]["clamp"]["ecr"] - 1e-12 for r in sub]
                    ),
                }
            )
    report.add_table("consistency_by_family", fam_rows, "Mean ECR at delta=0 per family of season-length laws.")
    gains = []
    seeds = list(dict.fromkeys(r["seed"] for r in exact))
    for lam in cfg.lambdas:
        k = f"lam={lam:g}"
        for fam in sorted({r["family"] for r in exact}):
            sub = [r for r in exact if r["family"] == fam]
            row = {"lambda": lam, "family": fam, "instances": len(sub)}
            for m, b in (("clamp", "psk_det"), ("range_argmin", "psk_det"), ("range_argmin", "clamp")):
                per_seed = [_mean([r[k][b]["ecr"] - r[k][m]["ecr"] for r in sub if r["seed"] == s]) for s in seeds]
                row[f"{b} - {m}: mean"] = _mean(per_seed)
                row[f"{b} - {m}: min seed"] = min(per_seed)
                row[f"{b} - {m}: instances > 0"] = sum(r[k][b]["ecr"] - r[k][m]["ecr"] > 1e-12 for r in sub)
            gains.append(row)
    report.add_table(
        "gain_by_family",
        gains,
        "ECR gain at delta=0 (baseline - method, > 0 favours the method) per family: the mean over seeds of "
        "the per-seed mean, the smallest per-seed mean, and the number of instances with a strict gain.",
    )

    errors = list(dict.fromkeys(r["error"] for r in records))
    sweep, loses = [], []
    for lam in cfg.lambdas:
        k = f"lam={lam:g}"
        for e in errors:
            sub = [r for r in records if r["error"] == e]
            row = {"lambda": lam, "error": e, "n": len(sub)}
            for m in ("oracle", "opt_threshold", "cui_dinitz", "break_even", "karlin"):
                row[m] = _mean([r[m]["ecr"] for r in sub])
            for m in SWEPT:
                row[m] = _mean([r[k][m]["ecr"] for r in sub])
            sweep.append(row)
            c = np.array([r[k]["clamp"]["ecr"] for r in sub])
            loses.append(
                {
                    "lambda": lam,
                    "error": e,
                    "n": len(sub),
                    "mean(clamp - psk_det)": float(np.mean(c - [r[k]["psk_det"]["ecr"] for r in sub])),
                    "clamp worse than psk_det": _share(c, [r[k]["psk_det"]["ecr"] for r in sub]),
                    "clamp worse than break_even": _share(c, [r["break_even"]["ecr"] for r in sub]),
                    "clamp worse than karlin": _share(c, [r["karlin"]["ecr"] for r in sub]),
                    "range_argmin worse than psk_det": _share(
                        [r[k]["range_argmin"]["ecr"] for r in sub], [r[k]["psk_det"]["ecr"] for r in sub]
                    ),
                    "range_argmin worse than clamp": _share([r[k]["range_argmin"]["ecr"] for r in sub], c),
                    "lp_psk worse than psk_rand": _share(
                        [r[k]["lp_psk"]["ecr"] for r in sub], [r[k]["psk_rand"]["ecr"] for r in sub]
                    ),
                }
            )
    report.add_table(
        "error_sweep",
        sweep,
        "Mean ECR under the truth as the prediction degrades (shift by delta*B days "
        "in a random direction per instance; eps = weight of an adversarial point mass on the far side "
        "of B).",
    )
    report.add_table(
        "where_clamp_loses",
        loses,
        "Share of instances where a policy is strictly worse (by > 1e-12) "
        "than a baseline, per prediction error. Clamp's edge over PSK-det needs a good prediction.",
    )
    trade = []
    for lam in cfg.tradeoff_lambdas:
        sub = [t for t in tradeoff if t["lam"] == lam]
        trade.append(
            {
                "lambda": lam,
                **{f"{m} ECR": _mean([t[m]["ecr"] for t in sub]) for m in TRADEOFF},
                **{f"{m} max worst": max(t[m]["worst"] for t in sub) for m in TRADEOFF},
            }
        )
    report.add_table(
        "tradeoff",
        trade,
        "Consistency (mean ECR at delta=0) and robustness (max worst case) against lambda. The LP's "
        "points are in the consistency table (lp_clamp, lp_psk).",
    )


def _share(a, b) -> float:
    return float(np.mean(np.asarray(a) > np.asarray(b) + 1e-12))


def _guarantee(name: str, lam: float | None, cfg: Config, c_b: float) -> float | str:
    b = cfg.buy_cost
    if name == "break_even":
        return (2 * b - 1) / b
    if name == "karlin":
        return c_b
    if name in ("clamp", "range_argmin", "psk_det", "lp_clamp"):
        return 1 + 1 / lam
    if name == "psk_rand":
        return 1 / (1 - math.exp(-(lam - 1 / b)))
    if name == "lp_psk":
        return "PSK-rand's"
    return "none"


_STYLE = {
    "clamp": ("Clamp (clamped argmin)", "C0", "-o"),
    "range_argmin": ("Clamp (range argmin)", "C9", "-.o"),
    "psk_det": ("PSK-det", "C1", "--s"),
    "psk_rand": ("PSK-rand", "C2", "--^"),
    "lp_clamp": ("LP (gamma=1+1/lambda)", "C3", "-D"),
    "lp_psk": ("LP (gamma=PSK-rand)", "C4", "-v"),
    "opt_threshold": ("argmin ECR (no clamp)", "C5", ":x"),
    "cui_dinitz": ("Cui-Dinitz", "C6", ":+"),
    "break_even": ("break-even", "0.4", ":"),
    "karlin": ("Karlin", "0.6", "-."),
    "oracle": ("oracle", "k", ":"),
}


def _figures(report: Report, cfg: Config, records, tradeoff) -> None:
    from matplotlib.figure import Figure

    errors = list(dict.fromkeys(r["error"] for r in records))
    fig = Figure(figsize=(5.2 * len(cfg.lambdas), 4.2))
    axes = fig.subplots(1, len(cfg.lambdas), squeeze=False)[0]
    xs = np.arange(len(errors))
    for ax, lam in zip(axes, cfg.lambdas):
        k = f"lam={lam:g}"
        for m in ("oracle", "break_even", "karlin", "opt_threshold", "cui_dinitz"):
            label, color, fmt = _STYLE[m]
            ax.plot(
                xs,
                [_mean([r[m]["ecr"] for r in records if r["error"] == e]) for e in errors],
                fmt,
                color=color,
                label=label,
                lw=1,
            )
        for m in SWEPT:
            label, color, fmt = _STYLE[m]
            ax.plot(
                xs,
                [_mean([r[k][m]["ecr"] for r in records if r["error"] == e]) for e in errors],
                fmt,
                color=color,
                label=label,
            )
        ax.set_xticks(xs, errors, rotation=45, fontsize=8)
        n_shift = sum(e.startswith("delta") for e in errors)
        if 0 < n_shift < len(errors):  # shifts on the left, adversarial mixtures on the right
            ax.axvline(n_shift - 0.5, color="0.7", lw=0.8)
        ax.set_title(f"lambda = {lam:g}")
        ax.set_xlabel("prediction error")
        ax.set_ylabel("mean expected competitive ratio (truth)")
        ax.grid(alpha=0.3)
    handles, labels = axes[-1].get_legend_handles_labels()  # one legend for all panels, below them, off the data
    fig.legend(handles, labels, loc="outside lower center", ncol=5, fontsize=8, title="policy")
    fig.suptitle("Expected competitive ratio as the prediction degrades (lower is better)")
    fig.set_layout_engine("constrained")
    report.add_figure(
        "error_sweep",
        fig,
        "Mean ECR as the prediction degrades; Clamp's and the LP's advantage "
        "shrinks and reverses against prediction-free baselines at large errors.",
    )

    fig = Figure(figsize=(10, 4.2))
    ax1, ax2 = fig.subplots(1, 2)
    lams = list(cfg.tradeoff_lambdas)
    for m in TRADEOFF:
        label, color, fmt = _STYLE[m]
        ecr = [_mean([t[m]["ecr"] for t in tradeoff if t["lam"] == lam]) for lam in lams]
        worst = [max(t[m]["worst"] for t in tradeoff if t["lam"] == lam) for lam in lams]
        ax1.plot(lams, ecr, fmt, color=color, label=label)
        ax2.plot(worst, ecr, fmt, color=color, label=label)
    exact = [r for r in records if r["error"] == "delta=0"]
    for m in ("lp_clamp", "lp_psk"):  # the LPs at the experiment's lambdas (delta = 0)
        label, color, fmt = _STYLE[m]
        ecr = [_mean([r[f"lam={lam:g}"][m]["ecr"] for r in exact]) for lam in cfg.lambdas]
        worst = [max(r[f"lam={lam:g}"][m]["worst"] for r in exact) for lam in cfg.lambdas]
        ax1.plot(cfg.lambdas, ecr, fmt, color=color, label=label)
        ax2.plot(worst, ecr, fmt, color=color, label=label)
    ax1.set_xlabel("lambda")
    ax1.set_ylabel("mean ECR at delta=0 (consistency)")
    ax2.set_xlabel("max worst-case ratio over instances (robustness)")
    ax2.set_ylabel("mean ECR at delta=0")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    ax1.legend(fontsize=8)
    report.add_figure("tradeoff", fig, "Consistency against robustness as lambda varies (lower-left is better).")


EXPERIMENT = register(
    Experiment(
        slug="ski_rental",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 5},
        measure=measure,
        judge=judge,
        threads=1,  # small LPs and numpy: one BLAS thread, so the numbers do not depend on the caller's setting
    )
)
