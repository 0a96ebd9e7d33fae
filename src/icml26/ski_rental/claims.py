"""Reproduction, the evidence: ``judge(config, records, report)`` turns the per-seed records of
:func:`icml26.ski_rental.experiment.measure` into judged statements, tables and figures.

Per lambda, at a correct prediction (``delta = 0``), with seeds as units (the instances of a seed are averaged first,
then a paired one-sided t test over seeds):

* preconditions ``point_prediction_loses_*`` (at equal robustness, the oracle within the safe range -- the range
  argmin fed the truth -- beats the same range-argmin policy fed the strongest point-only advice by >= ``GAIN``)
  and ``clamp_binds_*`` (the oracle beats Clamp by >= ``GAIN``);
* claims ``clamp_beats_psk_det_*`` (pooled) and, per family, ``clamp_beats_psk_det_<family>_*``,
  ``range_argmin_beats_psk_det_<family>_*`` and ``range_argmin_beats_clamp_<family>_*`` (lower ECR by >= ``GAIN``);
  ``lp_beats_psk_rand_*`` (pooled, sweep instances): the robust stopping distribution at PSK-rand's own worst case
  beats PSK-randomized by >= ``GAIN``;
* one **control** per claim, ``<claim>_ctl_point_advice``: the claim's own rule applied to the method's policy fed
  the strongest *point-only advice* instead of the distribution: a law built from one number of ``P_hat`` (its
  mean, median or mode, as a point mass or as the max-entropy geometric law with that mean), the configuration
  chosen per family and policy on the dev seeds by the lowest mean ECR at ``delta = 0`` (``Config.point_advice``,
  table ``point_advice_selection``), with the budget PSK's point had.  Each claim credits distributional advice;
  the control arm is the same policy (same safe range or gamma, same rule, same lambda) without it.  It holds when
  that arm fails the rule; a claim whose control arm passes too is inconclusive ("control passes").
  ``range_argmin_beats_psk_det_*`` also has ``<claim>_ctl_clamp_point_advice``: Clamp fed its strongest point-only
  advice (the referee's break, in its strongest form);
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

__all__ = [
    "judge",
    "GAIN",
    "TOL",
    "CONTROL_SUFFIX",
    "CLAMP_CONTROL_SUFFIX",
    "POINTS",
    "FAMILIES",
    "ADVICE",
    "ADVISED",
    "control_ids",
]

GAIN = 0.01  # every size-of-gain claim asks for >= 0.01 ECR (set while seeds 0-4 were seen: see the tuning ledger)
TOL = 1e-9  # slack for exact guarantees (float rounding of exact quantities; HiGHS runs at 1e-10)
CONTROL_SUFFIX = "_ctl_point_advice"
CLAMP_CONTROL_SUFFIX = "_ctl_clamp_point_advice"  # the second control of range_argmin_beats_psk_det_*
POINTS = ("mean", "median", "mode")  # the point summaries of P_hat PSK may use (the spec allows all three)
# point-only advice: a point summary x {a point mass at it, the max-entropy (geometric) law with that mean}
ADVICE = tuple(f"{p}_{form}" for p in POINTS for form in ("mass", "geometric"))
ADVISED = ("clamp", "range_argmin", "lp_psk")  # the policies fed point-only advice in the control arms
FAMILIES = ("bimodal", "geometric", "gaussian")  # the paper's three families of season-length laws
METHODS = ("clamp", "range_argmin", "psk_det", "psk_rand", "lp_clamp", "lp_psk")  # per-lambda policies at delta = 0
SWEPT = ("clamp", "range_argmin", "psk_det", "psk_rand", "lp_psk")  # per-lambda policies scored at every prediction
TRADEOFF = ("clamp", "range_argmin", "psk_det", "psk_rand")  # cheap policies swept over a fine lambda grid
_PHRASE = {
    "clamp": "Clamp(lambda={lam:g}) (the global argmin clamped into the safe range)",
    "range_argmin": "Clamp(lambda={lam:g}, mode=range_argmin) (the argmin within the safe range)",
    "lp_psk": "the robust stopping distribution (LP, gamma = PSK-randomized(lambda={lam:g})'s worst case)",
}
_NAMES = {
    "clamp": "Clamp",
    "range_argmin": "range-argmin",
    "psk_det": "PSK-det",
    "oracle": "oracle",
    "psk_rand": "PSK-rand",
    "lp_psk": "LP at PSK-rand's robustness",
    "range_oracle": "oracle within the safe range",
    "clamp_point_advice": "Clamp fed point-only advice",
    "range_argmin_point_advice": "range-argmin fed point-only advice",
    "lp_psk_point_advice": "LP fed point-only advice",
}


def _vals(rows: list[dict], key: str, m: str) -> list[float]:
    if m == "oracle":
        return [r["oracle"]["ecr"] for r in rows]
    if m == "range_oracle":  # at delta = 0 the range argmin is fed the truth: the best day of the safe range
        return [r[key]["range_argmin"]["ecr"] for r in rows]
    return [r[key][m]["ecr"] for r in rows]


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
    """Add ``claim`` and its controls: the same rule applied to ``method`` fed its strongest point-only advice, and,
    for the range-argmin reading, also to Clamp fed its own (the referee's break: a policy with no distributional
    advice at all must fail the rule too, or the claim does not credit the advice)."""
    c = report.add_claim(claim)
    arms = [method] + (["clamp"] if method == "range_argmin" else [])
    for m, cid in zip(arms, claim.controls):  # range_argmin_beats_clamp_* has the first control only
        arm = f"{m}_point_advice"
        report.add_claim(
            c.control(
                cid,
                f"Control ({_PHRASE[m].format(lam=lam)} fed point-only advice) for {claim.id}: given only the "
                f"strongest point-only advice (one number of the prediction as a point mass or a max-entropy law, "
                f"chosen per family on the dev seeds) instead of the distribution, it does not pass the claim's "
                f"rule {what}",
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
    lp_rows = [r for r in exact if "lp_psk" in r[f"lam={cfg.lambdas[0]:g}"]]  # the sweep instances

    for lam in cfg.lambdas:
        key, lam_s = f"lam={lam:g}", f"lam{lam:g}"
        pre_point, pre_bind = f"point_prediction_loses_{lam_s}", f"clamp_binds_{lam_s}"
        # (0) the setting: at equal robustness, point-only advice loses something a distribution could recover ...
        report.add_claim(
            _gain(
                pre_point,
                f"The setting leaves room for distributional advice at equal robustness: at a correct prediction "
                f"the oracle within the safe range of lambda={lam:g} (the range argmin fed the truth) has a lower "
                f"ECR than the same range-argmin policy fed the strongest point-only advice (dev-chosen per family) "
                f"by >= {GAIN:g} on average",
                exact,
                key,
                "range_oracle",
                "range_argmin_point_advice",
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
        # (c) the paper's randomized method against the point-prediction randomized baseline, equal robustness
        cid = f"lp_beats_psk_rand_{lam_s}"
        _controlled(
            report,
            _gain(
                cid,
                f"With a correct distributional prediction (delta=0), the robust stopping distribution (LP "
                f"water-filling) at gamma = PSK-randomized(lambda={lam:g})'s own worst-case ratio has a lower "
                f"expected competitive ratio than PSK-randomized(lambda={lam:g}) by >= {GAIN:g} on average over "
                f"seeds (all families pooled, the sweep instances)",
                lp_rows,
                key,
                "lp_psk",
                "psk_rand",
                controls=[cid + CONTROL_SUFFIX],
            ),
            lp_rows,
            key,
            "lp_psk",
            lam,
            "(beat PSK-rand by >= GAIN, all families pooled)",
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
    report.set_tuning("PSK-rand", configs=len(POINTS), steps=1, note="told PSK-det's dev-chosen point summary")
    report.set_tuning("LP at PSK-rand's robustness", configs=1, steps=0, note="an exact LP at gamma: nothing tuned")
    for arm in ("Clamp", "range-argmin", "LP"):
        report.set_tuning(
            f"{arm} fed point-only advice",
            configs=len(ADVICE),
            steps=1,
            note="point summary (mean / median / mode) x {point mass, max-entropy geometric law with that mean}, "
            "chosen per family and policy on the dev seeds by the lowest mean ECR at delta=0 (table "
            "point_advice_selection)",
        )

    _checks(report, cfg, records, exact, sweep)
    _tables(report, cfg, sweep, exact, tradeoff, c_b)
    _figures(report, cfg, sweep, tradeoff)
    report.metrics = {
        "n_instances": n_inst,
        "n_sweep_instances": sum(r.get("sweep", True) for r in exact),
        "n_records": len(records),
        "minimax_ratio": c_b,
        "psk_point": points,
        "point_advice": {f: {m: a for g, m, a in cfg.point_advice if g == f} for f in families},
    }
    report.add_note(
        f"{n_inst} paired instances at delta=0 ({len(seeds)} seeds x {n_inst // max(len(seeds), 1)} truths, "
        f"{cfg.per_family} per family), B={cfg.buy_cost}, horizon N={cfg.horizon}; every number is an exact "
        "expectation (no sampling). The prediction sweep, the LPs and the trade-off use the first draw of each "
        f"grid point ({sum(r.get('sweep', True) for r in exact)} instances)."
    )
    report.add_note(
        "Controls: every claim credits distributional advice, so its control arm is the same policy (same safe "
        "range or gamma, rule and lambda) fed the strongest point-only advice: one number of P_hat (mean, median or "
        "mode) as a point mass at floor(y) or as the max-entropy geometric law with mean y, the configuration chosen "
        "per family and policy on the dev seeds 0-9 by the lowest mean ECR at delta=0 (6 configurations; table "
        "point_advice_selection), as PSK's point was. It replaces the v3 control (a point mass at PSK's own point), "
        "which the referee found weaker than PSK-det on Gaussian and geometric laws."
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
    pm = count("clamp_point_advice", "psk_det", True)
    n = len(exact)
    report.add_note(
        "Clamp and PSK-det have the same ECR (to 1e-12) on "
        + ", ".join(f"{t} of {n} instances at lambda={lam:g}" for lam, t in ties.items())
        + "; Clamp fed its point-only advice ties PSK-det on "
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
                "prediction of every instance, and the point-only advice fed to the control arms)",
                (
                    f"{name} worst case - (1+1/lambda)",
                    [
                        r[f"lam={lam:g}"][arm]["worst"] - (1 + 1 / lam)
                        for r in records
                        for lam in cfg.lambdas
                        for arm in (m, f"{m}_point_advice")
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
            if "lp_psk_point_advice" in d:
                lp_excess.append(d["lp_psk_point_advice"]["worst"] - d["lp_psk_point_advice"]["gamma"])
            if "lp_clamp" in d:
                lp_excess.append(d["lp_clamp"]["worst"] - (1 + 1 / lam))
    report.add_claim(
        judge_every(
            "lp_robust",
            "The robust stopping distribution's worst-case ratio never exceeds its gamma, whatever the "
            "prediction (gamma = 1+1/lambda and gamma = PSK-randomized's worst case, the latter also fed the "
            "control arm's point-only advice)",
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
        for name in (*METHODS, *(f"{m}_point_advice" for m in ADVISED)):
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
        "lp_psk: gamma = PSK-rand's worst case; *_point_advice: the control arms (the policy fed its dev-chosen "
        "point-only advice).",
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
                        m: _mean([r[k][m]["ecr"] for r in sub])
                        for m in ("clamp_point_advice", "range_argmin_point_advice")
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
                ("clamp_point_advice", "psk_det"),
                ("range_argmin", "psk_det"),
                ("range_argmin_point_advice", "psk_det"),
                ("range_argmin", "clamp"),
                ("range_argmin_point_advice", "clamp"),
                ("range_argmin", "range_argmin_point_advice"),
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
    advice = []
    for fam in families:
        sub = [r for r in exact if r["family"] == fam]
        for m in ADVISED:

            def cells(rows, m=m):  # the (instance, lambda) cells where policy m was fed point-only advice
                out = [r[f"lam={lam:g}"]["point_advice_by_config"] for r in rows for lam in cfg.lambdas]
                return [c for c in out if m in c[ADVICE[0]]]

            if not cells(sub):
                continue
            by_adv = {a: _mean([c[a][m]["ecr"] for c in cells(sub)]) for a in ADVICE}
            per_seed_best = []
            for s in seeds:
                mine = cells([r for r in sub if r["seed"] == s])
                per_seed_best.append(min(ADVICE, key=lambda a, mine=mine: _mean([c[a][m]["ecr"] for c in mine])))
            used = {(g, p): a for g, p, a in cfg.point_advice}.get((fam, m), "?")
            advice.append(
                {
                    "family": fam,
                    "policy": m,
                    "n": len(cells(sub)),
                    **{f"{a} ECR": v for a, v in by_adv.items()},
                    "best on these seeds": min(by_adv, key=by_adv.get),
                    "best per seed": " ".join(per_seed_best),
                    "used (point_advice)": used,
                }
            )
    report.add_table(
        "point_advice_selection",
        advice,
        "Each policy's mean ECR at delta=0 (over instances and lambdas) fed each point-only advice: a point summary "
        "of P_hat as a point mass at floor(y) (*_mass) or as the max-entropy geometric law with mean y (*_geometric). "
        "On a --dev run this is how point_advice (the control arms' advice) was chosen, per family and policy (the "
        "lowest mean); on a reported run it shows whether the choice is still the strongest on held-out seeds.",
    )
    report.add_table("consistency_by_family", fam_rows, "Mean ECR at delta=0 per family of season-length laws.")
    report.add_table(
        "gain_by_family",
        gains,
        "ECR gain at delta=0 (baseline - arm, > 0 favours the arm) per family: the mean over seeds of the per-seed "
        "mean and the smallest per-seed mean, for each claim's method and its control arm (fed point-only advice); "
        "the last pair (range_argmin_point_advice - range_argmin) is the precondition's gain on that family.",
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
    if name in ("clamp", "range_argmin", "psk_det", "lp_clamp", "clamp_point_advice", "range_argmin_point_advice"):
        return 1 + 1 / lam
    if name == "psk_rand":
        return 1 / (1 - math.exp(-(lam - 1 / b)))
    if name in ("lp_psk", "lp_psk_point_advice"):
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
