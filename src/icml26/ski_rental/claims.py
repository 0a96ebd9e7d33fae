"""Reproduction, the evidence: ``judge(config, records, report)`` turns the per-seed records of
:func:`icml26.ski_rental.experiment.measure` into judged statements, tables and figures.

Per lambda, at a correct prediction (``delta = 0``), with seeds as units (the instances of a seed are averaged first,
then a paired one-sided t test over seeds):

* preconditions ``point_prediction_loses_*`` (the oracle beats PSK-det by >= ``GAIN``) and ``clamp_binds_*`` (the
  oracle beats Clamp by >= ``GAIN``);
* claims ``clamp_beats_psk_det_*`` (pooled) and, per family, ``clamp_beats_psk_det_<family>_*``,
  ``range_argmin_beats_psk_det_<family>_*`` and ``range_argmin_beats_clamp_<family>_*`` (lower ECR by >= ``GAIN``);
* one **control** per claim, ``<claim>_ctl_point_mass``: the claim's own rule applied to the method's policy *fed a
  point mass* at PSK's point summary of ``P_hat`` (the information a point prediction carries) instead of the
  distribution.  Each claim credits distributional advice; the control arm is the same policy (same safe range, same
  rule, same lambda) without it.  It holds when that arm fails the rule; a claim whose control arm passes too is
  inconclusive ("control passes").  ``range_argmin_beats_psk_det_*`` also has ``<claim>_ctl_clamp_point_mass``:
  Clamp fed that point mass (the referee's break), since on bimodal laws both Clamp readings pick the same day, a
  point-fed Clamp passing the rule means the gain over PSK-det is not the distribution's;
* five checks of our own code (true by construction; each has a mutant test in tests/ski_rental/).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from icml26.core import Report, judge_every, judge_superiority

from .instance import minimax_ratio

if TYPE_CHECKING:
    from .experiment import Config

__all__ = ["judge", "GAIN", "TOL", "CONTROL_SUFFIX", "CLAMP_CONTROL_SUFFIX", "POINTS", "FAMILIES", "control_ids"]

GAIN = 0.01  # every size-of-gain claim asks for >= 0.01 ECR (set while seeds 0-4 were seen: see the tuning ledger)
TOL = 1e-9  # slack for exact guarantees (float rounding of exact quantities; HiGHS runs at 1e-10)
CONTROL_SUFFIX = "_ctl_point_mass"
CLAMP_CONTROL_SUFFIX = "_ctl_clamp_point_mass"  # the second control of range_argmin_beats_psk_det_*
POINTS = ("mean", "median", "mode")  # the point summaries of P_hat PSK may use (the spec allows all three)
FAMILIES = ("bimodal", "geometric", "gaussian")  # the paper's three families of season-length laws
METHODS = ("clamp", "range_argmin", "psk_det", "psk_rand", "lp_clamp", "lp_psk")  # per-lambda policies at delta = 0
SWEPT = ("clamp", "range_argmin", "psk_det", "psk_rand", "lp_psk")  # per-lambda policies scored at every prediction
TRADEOFF = ("clamp", "range_argmin", "psk_det", "psk_rand")  # cheap policies swept over a fine lambda grid
_PHRASE = {
    "clamp": "Clamp(lambda={lam:g}) (the global argmin clamped into the safe range)",
    "range_argmin": "Clamp(lambda={lam:g}, mode=range_argmin) (the argmin within the safe range)",
}
_NAMES = {
    "clamp": "Clamp",
    "range_argmin": "range-argmin",
    "psk_det": "PSK-det",
    "oracle": "oracle",
    "clamp_point_mass": "Clamp fed a point mass",
    "range_argmin_point_mass": "range-argmin fed a point mass",
}


def _vals(rows: list[dict], key: str, m: str) -> list[float]:
    return [r["oracle"]["ecr"] if m == "oracle" else r[key][m]["ecr"] for r in rows]


def _gain(cid: str, statement: str, rows: list[dict], key: str, method: str, baseline: str, **kw):
    """Seeds as units: the instances of each seed are averaged per seed before the paired one-sided t test."""
    return judge_superiority(
        cid,
        statement,
        (f"{_NAMES[method]} ECR", _vals(rows, key, method)),
        {f"{_NAMES[baseline]} ECR": _vals(rows, key, baseline)},
        higher_is_better=False,  # lower ECR is better: the advantage is baseline ECR - method ECR
        test="ttest",  # 10 seeds (3 on quick): a signed-rank test could never reach p < 0.05 on 3
        units=[r["seed"] for r in rows],
        min_effect=GAIN,
        **kw,
    )


def _controlled(report: Report, claim, rows: list[dict], key: str, method: str, lam: float, what: str) -> None:
    """Add ``claim`` and its controls: the same rule applied to ``method`` fed a point mass at PSK's point summary, and,
    for the range-argmin reading, also to Clamp fed that point mass (the referee's break: a policy with no
    distributional advice at all must fail the rule too, or the claim does not credit the advice)."""
    c = report.add_claim(claim)
    arms = [method] + (["clamp"] if method == "range_argmin" else [])
    for m, cid in zip(arms, claim.controls):  # range_argmin_beats_clamp_* has the first control only
        arm = f"{m}_point_mass"
        report.add_claim(
            c.control(
                cid,
                f"Control ({_PHRASE[m].format(lam=lam)} fed a point mass) for {claim.id}: given only a point mass at "
                f"PSK's point summary of the prediction (what PSK-det is told) instead of the distribution, it does "
                f"not pass the claim's rule {what}",
                (f"{_NAMES[arm]} ECR", _vals(rows, key, arm)),
            )
        )


def control_ids(cid: str) -> list[str]:
    """The ids of claim ``cid``'s control statements."""
    return [cid + CONTROL_SUFFIX] + ([cid + CLAMP_CONTROL_SUFFIX] if cid.startswith("range_argmin_beats_psk") else [])


def judge(config: Config, seed_records: list[dict], report: Report) -> None:
    cfg = config
    seeds = report.seeds or list(range(len(seed_records)))
    records = [r for out in seed_records for r in out["records"]]
    tradeoff = [t for out in seed_records for t in out["tradeoff"]]
    exact = [r for r in records if r["error"] == "delta=0"]
    sweep = [r for r in records if r.get("sweep", True)]
    n_inst = len(exact)
    c_b = minimax_ratio(cfg.buy_cost)
    families = _families(exact)
    by_family = {f: [r for r in exact if r["family"] == f] for f in families}
    points = {f: by_family[f][0]["psk_point"] for f in families}

    for lam in cfg.lambdas:
        key, lam_s = f"lam={lam:g}", f"lam{lam:g}"
        pre_point, pre_bind = f"point_prediction_loses_{lam_s}", f"clamp_binds_{lam_s}"
        # (0) the setting: a point prediction loses something a distribution could recover ...
        report.add_claim(
            _gain(
                pre_point,
                f"The setting leaves room for distributional advice: at a correct prediction the oracle threshold "
                f"has a lower ECR than PSK-deterministic(lambda={lam:g}) (with its dev-chosen point summary) by "
                f">= {GAIN:g} on average",
                exact,
                key,
                "oracle",
                "psk_det",
                kind="precondition",
            )
        )
        # ... and the safe range costs Clamp something (else both readings of Clamp are the oracle).
        report.add_claim(
            _gain(
                pre_bind,
                f"The safe range binds: at a correct prediction the unconstrained oracle threshold has a lower ECR "
                f"than Clamp(lambda={lam:g}) by >= {GAIN:g} on average (so a better point of the range can matter)",
                exact,
                key,
                "oracle",
                "clamp",
                kind="precondition",
            )
        )
        # (a) Clamp vs PSK-deterministic at a perfect prediction, all families pooled (the paper's headline).
        cid = f"clamp_beats_psk_det_{lam_s}"
        _controlled(
            report,
            _gain(
                cid,
                f"With a correct distributional prediction (delta=0), Clamp(lambda={lam:g}) has a lower expected "
                f"competitive ratio than the point-prediction baseline PSK-deterministic(lambda={lam:g}), at the same "
                f"robustness 1+1/lambda={1 + 1 / lam:g}, by >= {GAIN:g} on average over seeds (all families pooled)",
                exact,
                key,
                "clamp",
                "psk_det",
                requires=[pre_point],
                controls=[cid + CONTROL_SUFFIX],
            ),
            exact,
            key,
            "clamp",
            lam,
            "(beat PSK-det by >= GAIN, all families pooled)",
        )
        # (b) the size of the gain, per family: both Clamp readings against PSK-det, and range-argmin vs clamp.
        for fam in families:
            rows = by_family[fam]
            for m in ("clamp", "range_argmin"):
                cid = f"{m}_beats_psk_det_{fam}_{lam_s}"
                _controlled(
                    report,
                    _gain(
                        cid,
                        f"On {fam} season lengths with a correct prediction (delta=0), {_PHRASE[m].format(lam=lam)} "
                        f"has a lower ECR than PSK-deterministic(lambda={lam:g}) (point summary: {points[fam]}) by "
                        f">= {GAIN:g} on average over seeds",
                        rows,
                        key,
                        m,
                        "psk_det",
                        requires=[pre_point],
                        controls=control_ids(cid),
                    ),
                    rows,
                    key,
                    m,
                    lam,
                    f"(beat PSK-det on {fam} by >= GAIN)",
                )
            cid = f"range_argmin_beats_clamp_{fam}_{lam_s}"
            _controlled(
                report,
                _gain(
                    cid,
                    f"On {fam} season lengths with a correct prediction (delta=0), the argmin of the predicted ECR "
                    f"within the safe range has a lower ECR than the clamped global argmin (lambda={lam:g}) by "
                    f">= {GAIN:g} on average over seeds",
                    rows,
                    key,
                    "range_argmin",
                    "clamp",
                    requires=[pre_bind],
                    controls=[cid + CONTROL_SUFFIX],
                ),
                rows,
                key,
                "range_argmin",
                lam,
                f"(beat the distribution-fed clamp on {fam} by >= GAIN)",
            )
    _ties_note(report, cfg, exact)
    report.set_tuning("Clamp", configs=1, steps=0, note="a closed-form rule at the grid's lambda: nothing tuned")
    report.set_tuning("range-argmin", configs=1, steps=0, note="a closed-form rule at the grid's lambda: nothing tuned")
    report.set_tuning(
        "PSK-det",
        configs=len(POINTS),
        steps=1,
        note="point summary of P_hat (mean / median / mode) chosen per family on the dev seeds by the lowest mean "
        "ECR at delta=0 (one exact evaluation of each; table psk_point_selection)",
    )
    report.set_tuning("oracle", configs=1, steps=0, note="argmin ECR of the truth: exact")

    _checks(report, cfg, records, exact, sweep)
    _tables(report, cfg, sweep, exact, tradeoff, c_b)
    _figures(report, cfg, sweep, tradeoff)
    report.metrics = {
        "n_instances": n_inst,
        "n_sweep_instances": sum(r.get("sweep", True) for r in exact),
        "n_records": len(records),
        "minimax_ratio": c_b,
        "psk_point": points,
    }
    report.add_note(
        f"{n_inst} paired instances at delta=0 ({len(seeds)} seeds x {n_inst // max(len(seeds), 1)} truths, "
        f"{cfg.per_family} per family), B={cfg.buy_cost}, horizon N={cfg.horizon}; every number is an exact "
        "expectation (no sampling). The prediction sweep, the LPs and the trade-off use the first draw of each "
        f"grid point ({sum(r.get('sweep', True) for r in exact)} instances)."
    )
    report.add_note(
        "Controls: every claim credits distributional advice, so its control arm is the same policy (same safe "
        "range, rule and lambda) fed a point mass at floor(y), y = PSK's point summary of P_hat: the one number PSK "
        "is told. The referee found that with the median the clamp fed that point mass still beats PSK-det on "
        "bimodal laws at every lambda (the clamp rule, not the distribution, earned the gain)."
    )
    report.add_note(
        "Clamp (both readings), the ECR objective and the water-filling LP are our reading of the paper (its body "
        "was not available). The robustness bounds, the LP's optimality against PSK-randomized and the range "
        "argmin's edge over the clamp under a correct prediction hold by construction: they are checks of our "
        "code, not claims."
    )


def _ties_note(report: Report, cfg: Config, exact: list[dict]) -> None:
    def count(a: str, b: str, equal: bool) -> dict:
        return {
            lam: sum((abs(r[f"lam={lam:g}"][a]["ecr"] - r[f"lam={lam:g}"][b]["ecr"]) <= 1e-12) == equal for r in exact)
            for lam in cfg.lambdas
        }

    ties, differ = count("clamp", "psk_det", True), count("clamp", "range_argmin", False)
    pm = count("clamp_point_mass", "psk_det", True)
    n = len(exact)
    report.add_note(
        "Clamp and PSK-det have the same ECR (to 1e-12) on "
        + ", ".join(f"{t} of {n} instances at lambda={lam:g}" for lam, t in ties.items())
        + "; Clamp fed PSK's point mass ties PSK-det on "
        + ", ".join(f"{t} at lambda={lam:g}" for lam, t in pm.items())
        + "; the two Clamp readings differ on "
        + ", ".join(f"{t} at lambda={lam:g}" for lam, t in differ.items())
        + ". Every gain claim runs a paired one-sided t test over per-seed means of the instances (seeds are "
        f"the unit) and asks for a mean gain >= {GAIN:g} at the lower end of the one-sided 95% interval "
        "(table gain_by_family)."
    )


def _checks(report: Report, cfg: Config, records, exact, sweep) -> None:
    """Invariants of our code, true by construction (each has a mutant test in tests/ski_rental/)."""
    lp_rows = [r for r in exact if "lp_psk" in r[f"lam={cfg.lambdas[0]:g}"]]
    diffs = [
        r[f"lam={lam:g}"]["lp_psk"]["ecr"] - r[f"lam={lam:g}"]["psk_rand"]["ecr"]
        for r in lp_rows
        for lam in cfg.lambdas
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
            baselines={"PSK-rand ECR": [r[f"lam={lam:g}"]["psk_rand"]["ecr"] for r in lp_rows for lam in cfg.lambdas]},
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
                f"{name}(lambda)'s worst-case ratio never exceeds 1 + 1/lambda, whatever the prediction (every "
                "prediction of every instance, and the point masses fed to the control arms)",
                (
                    f"{name} worst case - (1+1/lambda)",
                    [
                        r[f"lam={lam:g}"][arm]["worst"] - (1 + 1 / lam)
                        for r in records
                        for lam in cfg.lambdas
                        for arm in (m, f"{m}_point_mass")
                        if arm in r[f"lam={lam:g}"]
                    ],
                ),
                bound=0.0,
                sense="<=",
                tol=TOL,
                kind="check",  # every buy day of the safe range is (1 + 1/lambda)-competitive
            )
        )
    lp_excess = []
    for r in sweep:
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


def _families(rows: list[dict]) -> list[str]:
    """The families present, in the order of :data:`FAMILIES` (then any other, first seen)."""
    seen = set(r["family"] for r in rows)
    return [f for f in FAMILIES if f in seen] + sorted(seen - set(FAMILIES))


def _mean(xs) -> float:
    return float(np.mean(xs)) if len(xs) else float("nan")


def _tables(report: Report, cfg: Config, sweep, exact, tradeoff, c_b: float) -> None:
    rows = []
    for name in ("oracle", "opt_threshold", "cui_dinitz", "break_even", "karlin"):
        v = [r[name]["ecr"] for r in exact]
        w = [r[name]["worst"] for r in exact]
        rows.append(
            {
                "method": name,
                "lambda": "-",
                "n": len(v),
                "mean ECR": _mean(v),
                "std": float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"),
                "mean worst case": _mean(w),
                "max worst case": max(w),
                "guarantee": _guarantee(name, None, cfg, c_b),
            }
        )
    for lam in cfg.lambdas:
        k = f"lam={lam:g}"
        for name in (*METHODS, "clamp_point_mass", "range_argmin_point_mass"):
            v = [r[k][name]["ecr"] for r in exact if name in r[k]]
            w = [r[k][name]["worst"] for r in exact if name in r[k]]
            rows.append(
                {
                    "method": name,
                    "lambda": lam,
                    "n": len(v),
                    "mean ECR": _mean(v),
                    "std": float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"),
                    "mean worst case": _mean(w),
                    "max worst case": max(w),
                    "guarantee": _guarantee(name, lam, cfg, c_b),
                }
            )
    report.add_table(
        "consistency",
        rows,
        f"Correct prediction (delta=0), {len(exact)} instances (the LPs on the sweep instances only, column n): "
        "expected competitive ratio under the truth and worst case over all season lengths. opt_threshold = argmin "
        "ECR of the prediction without a clamp; oracle = the same fed the truth; lp_clamp: gamma = 1+1/lambda; "
        "lp_psk: gamma = PSK-rand's worst case; *_point_mass: the control arms (the policy fed a point mass at PSK's "
        "point summary).",
    )
    families = _families(exact)
    seeds = list(dict.fromkeys(r["seed"] for r in exact))
    fam_rows, gains, select = [], [], []
    for fam in families:
        sub = [r for r in exact if r["family"] == fam]
        for lam in cfg.lambdas:
            k = f"lam={lam:g}"
            fam_rows.append(
                {
                    "family": fam,
                    "lambda": lam,
                    "n": len(sub),
                    "oracle": _mean([r["oracle"]["ecr"] for r in sub]),
                    **{m: _mean([r[k][m]["ecr"] for r in sub]) for m in ("clamp", "range_argmin", "psk_det")},
                    **{
                        m: _mean([r[k][m]["ecr"] for r in sub]) for m in ("clamp_point_mass", "range_argmin_point_mass")
                    },
                    "clamp < psk_det (share)": _mean(
                        [r[k]["clamp"]["ecr"] < r[k]["psk_det"]["ecr"] - 1e-12 for r in sub]
                    ),
                    "range_argmin < clamp (share)": _mean(
                        [r[k]["range_argmin"]["ecr"] < r[k]["clamp"]["ecr"] - 1e-12 for r in sub]
                    ),
                }
            )
            row = {"lambda": lam, "family": fam, "instances": len(sub)}
            for m, b in (
                ("clamp", "psk_det"),
                ("clamp_point_mass", "psk_det"),
                ("range_argmin", "psk_det"),
                ("range_argmin_point_mass", "psk_det"),
                ("range_argmin", "clamp"),
                ("range_argmin_point_mass", "clamp"),
            ):
                per_seed = [_mean([r[k][b]["ecr"] - r[k][m]["ecr"] for r in sub if r["seed"] == s]) for s in seeds]
                row[f"{b} - {m}: mean"] = _mean(per_seed)
                row[f"{b} - {m}: min seed"] = min(per_seed)
            gains.append(row)
            by_point = {p: _mean([r[k]["psk_det_by_point"][p] for r in sub]) for p in POINTS}
            per_seed_best = [
                min(POINTS, key=lambda p, s=s: _mean([r[k]["psk_det_by_point"][p] for r in sub if r["seed"] == s]))
                for s in seeds
            ]
            select.append(
                {
                    "family": fam,
                    "lambda": lam,
                    **{f"PSK-det({p}) ECR": v for p, v in by_point.items()},
                    "best on these seeds": min(by_point, key=by_point.get),
                    "best per seed": " ".join(per_seed_best),
                    "used (psk_point)": sub[0]["psk_point"],
                }
            )
    report.add_table("consistency_by_family", fam_rows, "Mean ECR at delta=0 per family of season-length laws.")
    report.add_table(
        "gain_by_family",
        gains,
        "ECR gain at delta=0 (baseline - arm, > 0 favours the arm) per family: the mean over seeds of the per-seed "
        "mean and the smallest per-seed mean, for each claim's method and its control arm (fed a point mass).",
    )
    report.add_table(
        "psk_point_selection",
        select,
        "PSK-det's mean ECR at delta=0 with each point summary of P_hat, on this run's seeds. On a --dev run this is "
        "how psk_point was chosen (the lowest mean per family); on a reported run it shows whether that choice "
        "is still the strongest on held-out seeds.",
    )

    errors = list(dict.fromkeys(r["error"] for r in sweep))
    rows_sweep, loses = [], []
    for lam in cfg.lambdas:
        k = f"lam={lam:g}"
        for e in errors:
            sub = [r for r in sweep if r["error"] == e]
            row = {"lambda": lam, "error": e, "n": len(sub)}
            for m in ("oracle", "opt_threshold", "cui_dinitz", "break_even", "karlin"):
                row[m] = _mean([r[m]["ecr"] for r in sub])
            for m in SWEPT:
                row[m] = _mean([r[k][m]["ecr"] for r in sub])
            rows_sweep.append(row)
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
        rows_sweep,
        "Mean ECR under the truth as the prediction degrades (sweep instances; shift by delta*B days in a random "
        "direction per instance; eps = weight of an adversarial point mass on the far side of B).",
    )
    report.add_table(
        "where_clamp_loses",
        loses,
        "Share of sweep instances where a policy is strictly worse (by > 1e-12) than a baseline, per prediction "
        "error. Clamp's edge over PSK-det needs a good prediction.",
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
        "Consistency (mean ECR at delta=0, sweep instances) and robustness (max worst case) against lambda. The LP's "
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
    if name in ("clamp", "range_argmin", "psk_det", "lp_clamp", "clamp_point_mass", "range_argmin_point_mass"):
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


def _figures(report: Report, cfg: Config, sweep, tradeoff) -> None:
    from matplotlib.figure import Figure

    errors = list(dict.fromkeys(r["error"] for r in sweep))
    fig = Figure(figsize=(5.2 * len(cfg.lambdas), 4.2))
    axes = fig.subplots(1, len(cfg.lambdas), squeeze=False)[0]
    xs = np.arange(len(errors))
    for ax, lam in zip(axes, cfg.lambdas):
        k = f"lam={lam:g}"
        for m in ("oracle", "break_even", "karlin", "opt_threshold", "cui_dinitz"):
            label, color, fmt = _STYLE[m]
            ys = [_mean([r[m]["ecr"] for r in sweep if r["error"] == e]) for e in errors]
            ax.plot(xs, ys, fmt, color=color, label=label, lw=1)
        for m in SWEPT:
            label, color, fmt = _STYLE[m]
            ax.plot(xs, [_mean([r[k][m]["ecr"] for r in sweep if r["error"] == e]) for e in errors], fmt, color=color,
                    label=label)  # fmt: skip
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
        "Mean ECR as the prediction degrades (sweep instances); Clamp's and the LP's advantage shrinks and reverses "
        "against prediction-free baselines at large errors.",
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
    exact = [r for r in sweep if r["error"] == "delta=0"]
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
