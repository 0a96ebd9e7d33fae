"""The judges: every verdict comes out of one of these rules, applied to measured numbers.

Each ``judge_*`` takes the values (one per unit, a seed by default), runs the test and applies the rule its
docstring states, and stores the rule beside the verdict; ``higher_is_better`` flips the sign so that "favours the
method" is always ``d > 0``.  Every judge takes ``kind`` (``"claim"``, ``"check"`` or ``"precondition"``: see
:mod:`icml26.core.report`), for claims ``requires`` (ids of preconditions) and ``controls`` (ids of the control
statements made with :meth:`Claim.control <icml26.core.report.Claim.control>`) or ``no_control="<why>"``.  **Units**:
several values per unit come with ``units=[label of each value]`` and are averaged per unit before testing (25
values from 5 seeds are tested as 5 units); ``unit="instance"`` declares the values independent draws by design.  The
stored test names the unit and ``n``.  A test needs at least 3 units with some spread: with fewer, or with
zero-variance differences, no p-value is computed and a verdict that needs one is *inconclusive*, with the reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from .report import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, KINDS, Claim
from .stats import mean_ci, paired_bootstrap, paired_wilcoxon

__all__ = ["judge_superiority", "judge_non_inferiority", "judge_threshold", "judge_every", "judge_k_of_n"]

Values = Sequence[float] | np.ndarray
Requires = Sequence[str] | str | None
MIN_UNITS = 3  # fewer units than this never make a p-value or a t interval


def _judge(fn: Callable[..., Claim]) -> Callable[..., Claim]:
    """Give a judge ``controls`` / ``no_control`` and the control kind: ``kind="control"`` applies the same rule to a
    control arm and *holds* when the arm fails it, is *inconclusive* when it is undecided (``test["arm_verdict"]``)."""

    @functools.wraps(fn)
    def judge(id: str, statement: str, method: tuple[str, Values], *args, kind: str = "claim",
              controls: Sequence[str] | None = None, no_control: str = "", **kw) -> Claim:
        ctl = tuple(controls or ())
        if any(not isinstance(c, str) or not c for c in ctl) or not isinstance(no_control, str):
            raise ValueError(f"controls must be a list of control ids and no_control a string, got {controls!r}")
        if (ctl or no_control) and (kind != "claim" or (ctl and no_control)):
            raise ValueError(f"{id!r}: only a claim has controls=[...] or no_control='why', and never both")
        if kind == "control" and kw.get("requires"):
            raise ValueError(f"a control is judged on its claim's setting and cannot require a precondition ({id!r})")
        c = fn(id, statement, method, *args, kind="claim" if kind == "control" else kind, **kw)
        if kind == "control":
            flip = {HOLDS: DOES_NOT_HOLD, DOES_NOT_HOLD: HOLDS}.get(c.verdict, c.verdict)  # undecided stays undecided
            c = replace(c, kind="control", verdict=flip, test={**c.test, "arm_verdict": c.verdict, "control_rule":
                        f"holds when the control arm fails the claim's rule ({c.test['rule']}); undecided if it is"})
        rest = {k: v for k, v in kw.items() if k != "requires"}
        return replace(c, controls=ctl, no_control=no_control, rejudge=lambda i, s, arm: judge(
            i, s, arm, *args, kind="control", **rest))

    return judge


def _no_test(d: np.ndarray) -> str:
    """Why paired differences ``d`` cannot be tested ('' when they can; a spread within round-off is none)."""
    return (f"{d.size} unit(s): a test needs >= {MIN_UNITS}" if d.size < MIN_UNITS
            else "zero-variance differences: no test" if np.ptp(d) <= 1e-12 * max(1.0, np.abs(d).max()) else "")


def _summary(name: str, values: Values) -> dict:
    return {"name": name, **mean_ci(values).to_dict()}


def _start(id: str, statement: str, kind: str, requires: Requires, sense: str = ">=") -> tuple[str, ...]:
    if not isinstance(id, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", id):
        raise ValueError(f"id must be a non-empty string of letters, digits, '_', '.', '-'; got {id!r}")
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError("statement must be a non-empty string (the paper's claim in words)")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    req = (requires,) if isinstance(requires, str) else tuple(requires or ())
    if any(not isinstance(r, str) or not r for r in req):
        raise ValueError(f"requires must be a list of precondition ids, got {requires!r}")
    if req and kind == "check":
        raise ValueError("a check holds by construction and cannot require a precondition")
    if sense not in (">=", "<=", ">", "<"):
        raise ValueError(f"sense must be '>=', '<=', '>' or '<', got {sense!r}")
    return req


def _per_unit(values: Values, units: Sequence | None, unit: str) -> tuple[np.ndarray, dict]:
    """One number per unit (the mean over each label of ``units``, first-seen order) and the unit info."""
    a = np.asarray(values, dtype=float).ravel()
    if not isinstance(unit, str) or not unit:
        raise ValueError(f"unit must be a non-empty string such as 'seed' or 'instance', got {unit!r}")
    if units is None:
        return a, {"unit": unit, "n_units": int(a.size)}
    if unit == "instance":
        raise ValueError("units= aggregates values per unit; unit='instance' declares them independent: pick one")
    labels = list(units)
    if len(labels) != a.size:
        raise ValueError(f"units must give one label per value: {len(labels)} labels for {a.size} values")
    order = {u: i for i, u in enumerate(dict.fromkeys(labels))}
    idx = np.array([order[u] for u in labels])
    m = np.bincount(idx, weights=a, minlength=len(order)) / np.bincount(idx, minlength=len(order))
    return m, {"unit": unit, "n_units": len(order), "values_per_unit": a.size / len(order)}


def _paired(method: tuple[str, Values], baselines: Mapping[str, Values], units, unit, higher_is_better: bool):
    """``(name, method per unit, {baseline: (its values per unit, signed advantage d per unit)}, unit info)``."""
    if not isinstance(method, tuple) or len(method) != 2:
        raise TypeError("method must be a (name, values) tuple")
    if not baselines:
        raise ValueError("baselines must name at least one baseline with its values")
    name, raw = method[0], np.asarray(method[1], dtype=float).ravel()
    m, info = _per_unit(raw, units, unit)
    sign = 1.0 if higher_is_better else -1.0
    bs = {}
    for bname, bv in baselines.items():
        b = np.asarray(bv, dtype=float).ravel()
        if b.shape != raw.shape:
            raise ValueError(f"baseline {bname!r} has {b.size} values but method {name!r} has {raw.size}; claims "
                             "compare paired runs (same seeds / instances)")
        b = _per_unit(b, units, unit)[0]
        bs[bname] = b, sign * (m - b)
    return name, m, bs, info


def _combine(rows: list[dict]) -> str:
    v = [r["verdict"] for r in rows]
    return DOES_NOT_HOLD if DOES_NOT_HOLD in v else HOLDS if v and all(x == HOLDS for x in v) else INCONCLUSIVE


@_judge
def judge_superiority(id: str, statement: str, method: tuple[str, Values], baselines: Mapping[str, Values], *,
                      higher_is_better: bool = True, test: str = "wilcoxon", alpha: float = 0.05,
                      min_effect: float = 0.0, kind: str = "claim", requires: Requires = None,
                      units: Sequence | None = None, unit: str = "seed") -> Claim:
    """Claim "the method beats each baseline" (by at least ``min_effect``) from paired ``d = method - baseline``.

    *holds* if ``mean(d) > 0`` and the one-sided test gives ``p < alpha`` against every baseline (with
    ``min_effect``: and the lower end of the one-sided ``1 - alpha`` interval of ``mean(d)`` is ``>= min_effect``);
    *does not hold* if ``mean(d) <= 0`` (or ``< min_effect``) against any; otherwise *inconclusive* -- always so with
    fewer than 3 units or zero-variance differences (no p-value; the row says why).

    ``test``: ``"wilcoxon"`` (one-sided signed-rank), ``"ttest"`` (one-sided paired t) or ``"bootstrap"``.  The
    exact signed-rank p-value is at least ``2**-n`` over ``n`` units, so with fewer than 5 seeds ``"wilcoxon"``
    can never reach ``p < 0.05``: use ``"ttest"`` when only a few seeds are affordable.
    """
    from scipy import stats as st
    req = _start(id, statement, kind, requires)
    if test not in ("wilcoxon", "ttest", "bootstrap"):
        raise ValueError(f"test must be 'wilcoxon', 'ttest' or 'bootstrap', got {test!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if min_effect < 0:
        raise ValueError(f"min_effect must be >= 0, got {min_effect}")
    name, m, bs, info = _paired(method, baselines, units, unit, higher_is_better)
    rows = []
    for bname, (b, d) in bs.items():
        mean_d, why, z = float(d.mean()), _no_test(d), np.zeros_like(d)
        p = lower = None
        if not why:  # p, and the lower end of the one-sided 1 - alpha interval of mean(d) (t, or bootstrap quantile)
            p = (paired_wilcoxon(d, z, alternative="greater")[1] if test == "wilcoxon" else paired_bootstrap(d, z)[3]
                 if test == "bootstrap" else float(st.ttest_1samp(d, 0.0, alternative="greater").pvalue))
            lower = (paired_bootstrap(d, z, confidence=1 - 2 * alpha)[1] if test == "bootstrap"
                     else float(mean_d - st.t.ppf(1 - alpha, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)))
        v = (DOES_NOT_HOLD if mean_d <= 0.0 or mean_d < min_effect
             else HOLDS if p is not None and lower is not None and p < alpha and lower >= min_effect else INCONCLUSIVE)
        rows.append({**_summary(bname, b), "mean_advantage": mean_d, "p_value": p, "verdict": v,
                     "advantage_lower": lower, **({"no_test": why} if why else {})})
    effect = (f" and the lower end of the one-sided {1 - alpha:.0%} interval of the mean advantage is >= "
              f"{min_effect:g}" if min_effect > 0 else " and mean advantage > 0")
    short = f" or < {min_effect:g}" if min_effect > 0 else ""
    rule = (f"paired one-sided {test}; holds if p < {alpha:g}{effect} against every baseline; does not hold if the "
            f"mean advantage is <= 0{short} against any; otherwise inconclusive (also with < {MIN_UNITS} units or "
            "zero-variance differences: no test)")
    ps = [r["p_value"] for r in rows]
    worst = min(rows, key=lambda r: r["mean_advantage"] if r["advantage_lower"] is None else r["advantage_lower"])
    test_info = {"name": f"paired {test} (one-sided)", "rule": rule, "alpha": alpha, "min_effect": min_effect,
                 "higher_is_better": higher_is_better, "p_value": None if None in ps else max(ps),
                 "decisive": _margin(f"lower end of the advantage over {worst['name']}", worst["advantage_lower"],
                                   min_effect), **info}
    return Claim(id, statement, _combine(rows), _summary(name, m), rows, test_info, kind, req)


@_judge
def judge_non_inferiority(id: str, statement: str, method: tuple[str, Values], baselines: Mapping[str, Values], *,
                          margin: float, higher_is_better: bool = True, confidence: float = 0.95, seed: int = 0,
                          kind: str = "claim", requires: Requires = None, units: Sequence | None = None,
                          unit: str = "seed") -> Claim:
    """Claim "no worse than each baseline by more than ``margin``": *holds* if the paired-bootstrap CI of the mean
    advantage lies above ``-margin``, *does not hold* if the mean advantage is below ``-margin``; with fewer than 3
    units or zero-variance differences there is no interval, so at best *inconclusive*."""
    req = _start(id, statement, kind, requires)
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    name, m, bs, info = _paired(method, baselines, units, unit, higher_is_better)
    rows = []
    for bname, (b, d) in bs.items():
        mean_d, lo, hi, _ = paired_bootstrap(d, np.zeros_like(d), confidence=confidence, seed=seed)
        why = _no_test(d)
        v = DOES_NOT_HOLD if mean_d < -margin else HOLDS if lo > -margin and not why else INCONCLUSIVE
        rows.append({**_summary(bname, b), "mean_advantage": mean_d, "advantage_ci": [lo, hi], "verdict": v,
                     **({"no_test": why} if why else {})})
    rule = (f"non-inferiority with margin {margin:g}: holds if the {confidence:.0%} paired-bootstrap CI of the mean "
            f"advantage lies above -{margin:g}; does not hold if the mean advantage is below -{margin:g}; "
            f"otherwise inconclusive (also with < {MIN_UNITS} units or zero-variance differences)")
    worst = min(rows, key=lambda r: r["advantage_ci"][0])
    test_info = {"name": "paired bootstrap non-inferiority", "rule": rule, "margin": margin,
                 "higher_is_better": higher_is_better,
                 "decisive": _margin(f"CI lower end vs {worst['name']}", worst["advantage_ci"][0], -margin),
                 **info}
    return Claim(id, statement, _combine(rows), _summary(name, m), rows, test_info, kind, req)


def _margin(what: str, value: float | None, bound: float) -> dict:
    """The decisive number of a verdict and the bound it is held against (knife edges: :meth:`Report.resolve`)."""
    return {"statistic": what, "value": value, "bound": bound}


def _satisfies(x, bound: float, sense: str, tol: float = 0.0):
    return {">=": x >= bound - tol, ">": x > bound - tol, "<=": x <= bound + tol, "<": x < bound + tol}[sense]


@_judge
def judge_threshold(id: str, statement: str, method: tuple[str, Values], *, threshold: float, sense: str = ">=",
                    confidence: float = 0.95, mc_se: float | Values | None = None, kind: str = "claim",
                    requires: Requires = None, units: Sequence | None = None, unit: str = "seed") -> Claim:
    """Claim "the measured value is ``sense`` ``threshold``" (``>=``, ``>``, ``<=`` or ``<``; with the strict senses a
    value equal to the threshold does not satisfy it): *holds* if the whole interval is on the right side, *does not
    hold* if the mean is not, otherwise *inconclusive*.  ``mc_se``: the Monte-Carlo standard error of each value
    when the values are themselves estimates (a coverage over ``m`` draws: ``sqrt(p(1-p)/m)``), one number for all or
    one per value.  The interval then uses ``se^2 = s^2/n + mean(mc_se^2)/n`` (conservative: the spread over units
    already holds part of the Monte-Carlo error), and with one unit the normal interval ``mean ± z · mc_se``.  Without
    ``mc_se`` a t interval needs at least 3 units: with fewer the verdict is at best *inconclusive*."""
    from scipy import stats as st
    req = _start(id, statement, kind, requires, sense)
    name, raw = method[0], np.asarray(method[1], dtype=float).ravel()
    values, info = _per_unit(raw, units, unit)
    est = mean_ci(values, confidence)
    lo, hi = est.ci_low, est.ci_high
    if mc_se is not None:
        mc = np.broadcast_to(np.asarray(mc_se, dtype=float), raw.shape)
        if not np.all(np.isfinite(mc)) or np.any(mc < 0):
            raise ValueError("mc_se must be finite and >= 0")
        n = values.size
        var = (est.std**2 / n if n > 1 else 0.0) + float(_per_unit(mc**2, units, unit)[0].mean()) / n
        q = st.t.ppf((1 + confidence) / 2, n - 1) if n > 1 else st.norm.ppf((1 + confidence) / 2)
        lo, hi = est.mean - q * np.sqrt(var), est.mean + q * np.sqrt(var)
    few = mc_se is None and values.size < MIN_UNITS
    edge = lo if sense[0] == ">" else hi
    v = (HOLDS if _satisfies(edge, threshold, sense) and not few
         else INCONCLUSIVE if _satisfies(est.mean, threshold, sense) else DOES_NOT_HOLD)
    what = "t interval" if mc_se is None else "interval (spread over units + Monte-Carlo error)"
    rule = (f"holds if the whole {confidence:.0%} {what} is {sense} {threshold:g}; does not hold if the mean is "
            f"not; otherwise inconclusive" + (f" (also with < {MIN_UNITS} units)" if mc_se is None else ""))
    summary = {**_summary(name, values), "ci_low": float(lo), "ci_high": float(hi)}
    test_info = {"name": f"{what} vs threshold ({sense} {threshold:g})", "rule": rule, "threshold": threshold,
                 "decisive": _margin("interval end", float(edge), threshold), **info,
                 **({"no_test": f"{values.size} unit(s): a t interval needs >= {MIN_UNITS}"} if few else {})}
    return Claim(id, statement, v, summary, [], test_info, kind, req)


@_judge
def judge_every(id: str, statement: str, method: tuple[str, Values], *, bound: float, sense: str = "<=",
                tol: float = 0.0, baselines: Mapping[str, Values] | None = None, kind: str = "claim",
                requires: Requires = None, unit: str = "instance") -> Claim:
    """Claim an exact guarantee: *holds* if every value is ``sense`` ``bound`` (within ``tol``; ``<`` and ``>`` are
    strict: a value equal to the bound fails), else *does not hold*.  ``baselines`` are reported for context; the
    verdict depends on the method's values only.  No test: the values count as they are (``unit``: ``"instance"``)."""
    req = _start(id, statement, kind, requires, sense)
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    name, a = method[0], np.asarray(method[1], dtype=float).ravel()
    if a.size == 0:
        raise ValueError("method values must not be empty")
    ok = _satisfies(a, bound, sense, tol)
    worst = float(a.max() if sense[0] == "<" else a.min())
    test_info = {"name": f"every value {sense} {bound:g} (tol {tol:g})",
                 "rule": f"holds if all {a.size} values are {sense} {bound:g} within {tol:g}; otherwise does not hold",
                 "n_violations": int((~ok).sum()), "worst": worst, "decisive": _margin("worst value", worst, bound),
                 "unit": unit, "n_units": int(a.size)}
    return Claim(id, statement, HOLDS if ok.all() else DOES_NOT_HOLD, _summary(name, a),
                 [_summary(k, b) for k, b in (baselines or {}).items()], test_info, kind, req)


@_judge
def judge_k_of_n(id: str, statement: str, method: tuple[str, Values], baselines: Mapping[str, Values], *, k: int,
                 tol: float | None = None, higher_is_better: bool = True, kind: str = "claim",
                 requires: Requires = None, units: Sequence | None = None, unit: str = "seed") -> Claim:
    """Claim "the method beats each baseline in at least ``k`` of the ``n`` paired units" (an exact count).  *holds* if
    the method wins at least ``k`` units against every baseline, else *does not hold*.  A unit counts as a win only if
    the method is better by more than ``tol``, the rerun noise the experiment measured (e.g. the largest change of
    one arm's value when the same seed is rerun on another thread count or order; stored with the verdict).  With
    ``tol=None`` no noise was measured and every strict win counts: the rule says so.  No test, so no *inconclusive*."""
    req = _start(id, statement, kind, requires)
    if tol is not None and not tol >= 0:
        raise ValueError(f"tol must be None or a measured rerun tolerance >= 0, got {tol!r}")
    name, m, bs, info = _paired(method, baselines, units, unit, higher_is_better)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= m.size:
        raise ValueError(f"k must be an integer in [1, {m.size}] (the number of pairs), got {k!r}")
    rows = []
    for bname, (b, d) in bs.items():
        wins = int((d > (tol or 0.0)).sum())
        rows.append({**_summary(bname, b), "wins": wins, "n": int(m.size),
                     "verdict": HOLDS if wins >= k else DOES_NOT_HOLD})
    beyond = f"by more than the measured rerun tolerance {tol:g}" if tol is not None else (
        "strictly (no rerun tolerance measured)")
    test_info = {"name": f"wins in >= {k} of {m.size} pairs",
                 "rule": f"holds if the method is better {beyond} in at least {k} of {m.size} pairs against every "
                 "baseline; otherwise does not hold", "tol": tol,
                 "higher_is_better": higher_is_better, "min_wins": min(r["wins"] for r in rows),
                 "decisive": _margin("fewest wins", float(min(r["wins"] for r in rows)), k), **info}
    return Claim(id, statement, _combine(rows), _summary(name, m), rows, test_info, kind, req)
