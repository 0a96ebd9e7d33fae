"""What a reproduction returns: a :class:`Report` of claims, tables, figures and metrics.

A :class:`Claim` is never written by hand.  It comes out of one of the ``judge_*`` helpers below, which
take the measured numbers (one value per seed or per paired instance), run the stated test and apply the
stated rule.  The rule is stored with the claim so a reader can check the verdict against the numbers.

Verdict rules (``higher_is_better`` flips the sign so "favours the method" is always ``d > 0``):

* :func:`judge_superiority` -- for each baseline, paired differences ``d = method - baseline``.
  *holds* if ``mean(d) > min_effect`` and the one-sided paired test gives ``p < alpha``; *does not hold* if
  ``mean(d) <= 0`` (the numbers favour the baseline, or tie); otherwise *inconclusive*.  Over several
  baselines: *holds* only if it holds against every one, *does not hold* if it fails against any.
* :func:`judge_non_inferiority` -- *holds* if the lower end of the paired-bootstrap CI of ``mean(d)`` is
  above ``-margin``; *does not hold* if ``mean(d) < -margin``; otherwise *inconclusive*.
* :func:`judge_threshold` -- a measured value against a fixed bound (``>=`` or ``<=``): *holds* if the
  whole t confidence interval is on the right side, *does not hold* if the mean is on the wrong side,
  otherwise *inconclusive*.
* :func:`judge_every` -- an exact guarantee: *holds* if every value satisfies the bound within ``tol``,
  otherwise *does not hold*.
* :func:`judge_k_of_n` -- a count over paired runs: *holds* if the method strictly beats each baseline in at
  least ``k`` of the ``n`` pairs (e.g. "in >= 4 of 5 seeds"), otherwise *does not hold*.

``min_effect`` ("beats it by at least 5 points") holds only when the lower end of the one-sided ``1 - alpha``
interval of the mean advantage is ``>= min_effect``, and does not hold when the mean advantage itself falls
short of it.

Every judged statement has a **kind** (``Claim.kind``):

* ``"claim"`` -- the paper's empirical statement; the only kind counted as "claims hold";
* ``"check"`` -- a guarantee of our own code that holds by construction (accounting identical, a bound never
  violated); a failing check is a defect, not a finding;
* ``"precondition"`` -- the setting shows the phenomenon the method addresses.  A claim that declares
  ``requires=[ids]`` is *inconclusive* with the reason "setting invalid: <id>" when a required precondition
  does not hold (:meth:`Report.resolve`, called by the runner after ``judge``).

**Units.**  Values are one per unit (a seed, by default).  A judge given several values per unit takes
``units=[label per value]`` and averages them per unit before testing, so 25 values from 5 seeds are tested as
5 units.  ``unit="instance"`` declares the values independent draws by design (no aggregation); the stored
test names the unit and ``n``.  :meth:`Report.add_claim` rejects more values than seeds for ``unit="seed"``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .stats import Estimate, mean_ci, paired_bootstrap, paired_wilcoxon

__all__ = [
    "HOLDS",
    "DOES_NOT_HOLD",
    "INCONCLUSIVE",
    "VERDICTS",
    "KINDS",
    "Claim",
    "Table",
    "Figure",
    "Report",
    "judge_superiority",
    "judge_non_inferiority",
    "judge_threshold",
    "judge_every",
    "judge_k_of_n",
    "counts",
    "summary_line",
]

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE)
KINDS = ("claim", "check", "precondition")

Values = Sequence[float]


@dataclass(frozen=True)
class Claim:
    """A paper's statement with the numbers measured for it and the verdict a ``judge_*`` rule gave."""

    id: str
    statement: str
    verdict: str
    method: dict
    baselines: list[dict]
    test: dict
    kind: str = "claim"
    requires: tuple[str, ...] = ()
    reason: str = ""  # why a verdict was overridden (a required precondition failed)
    measured_verdict: str | None = None  # the rule's own verdict before a failed precondition overrode it

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "statement": self.statement,
            "verdict": self.verdict,
            "requires": list(self.requires),
            "reason": self.reason,
            "measured_verdict": self.measured_verdict,
            "method": self.method,
            "baselines": self.baselines,
            "test": self.test,
        }


def _summary(name: str, values: Values) -> dict:
    est = mean_ci(values)
    return {"name": name, **est.to_dict()}


def _check_id(id: str, statement: str) -> None:
    if not isinstance(id, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", id):
        raise ValueError(f"id must be a non-empty string of letters, digits, '_', '.', '-'; got {id!r}")
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError("statement must be a non-empty string (the paper's claim in words)")


def _kind_args(kind: str, requires: Sequence[str] | str | None) -> tuple[str, tuple[str, ...]]:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if requires is None:
        requires = ()
    if isinstance(requires, str):
        requires = (requires,)
    requires = tuple(requires)
    if any(not isinstance(r, str) or not r for r in requires):
        raise ValueError(f"requires must be a list of precondition ids, got {requires!r}")
    if requires and kind == "check":
        raise ValueError("a check holds by construction and cannot require a precondition")
    return kind, requires


def _per_unit(values: Values, units: Sequence | None, unit: str, what: str) -> tuple[np.ndarray, list | None]:
    """Values as one number per unit: the mean over each label of ``units`` (kept in first-seen order)."""
    a = np.asarray(values, dtype=float).ravel()
    if not isinstance(unit, str) or not unit:
        raise ValueError(f"unit must be a non-empty string such as 'seed' or 'instance', got {unit!r}")
    if units is None:
        return a, None
    if unit == "instance":
        raise ValueError("units= aggregates values per unit; unit='instance' declares them independent: pick one")
    labels = list(units)
    if len(labels) != a.size:
        raise ValueError(f"units must give one label per value of {what}: {len(labels)} labels, {a.size} values")
    order = list(dict.fromkeys(labels))
    idx = np.array([order.index(u) for u in labels])
    sums = np.bincount(idx, weights=a, minlength=len(order))
    counts = np.bincount(idx, minlength=len(order))
    return sums / counts, order


def _unit_info(unit: str, n: int, labels: list | None, n_values: int) -> dict:
    info = {"unit": unit, "n_units": int(n)}
    if labels is not None:
        info["values_per_unit"] = n_values / max(n, 1)
    return info


def _combine(verdicts: list[str]) -> str:
    if any(v == DOES_NOT_HOLD for v in verdicts):
        return DOES_NOT_HOLD
    if verdicts and all(v == HOLDS for v in verdicts):
        return HOLDS
    return INCONCLUSIVE


def _paired(
    method: tuple[str, Values], baselines: Mapping[str, Values], units: Sequence | None = None, unit: str = "seed"
) -> tuple[str, np.ndarray, dict, dict]:
    if not isinstance(method, tuple) or len(method) != 2:
        raise TypeError("method must be a (name, values) tuple")
    if not baselines:
        raise ValueError("baselines must name at least one baseline with its values")
    name = method[0]
    raw = np.asarray(method[1], dtype=float).ravel()
    m, labels = _per_unit(raw, units, unit, f"method {name!r}")
    bs = {}
    for bname, bv in baselines.items():
        b = np.asarray(bv, dtype=float).ravel()
        if b.shape != raw.shape:
            raise ValueError(
                f"baseline {bname!r} has {b.size} values but method {name!r} has {raw.size}; claims compare "
                "paired runs (same seeds / instances)"
            )
        bs[bname] = _per_unit(b, units, unit, f"baseline {bname!r}")[0]
    return name, m, bs, _unit_info(unit, m.size, labels, raw.size)


def _lower_bound(d: np.ndarray, test: str, alpha: float, seed: int = 0) -> float:
    """Lower end of the one-sided ``1 - alpha`` interval of ``mean(d)`` (t interval; bootstrap for "bootstrap")."""
    from scipy import stats as st

    if d.size < 2 or np.ptp(d) == 0.0:
        return float(d.mean())
    if test == "bootstrap":
        rng = np.random.default_rng(seed)
        boot = d[rng.integers(0, d.size, size=(10_000, d.size))].mean(axis=1)
        return float(np.quantile(boot, alpha))
    se = float(d.std(ddof=1) / np.sqrt(d.size))
    return float(d.mean() - st.t.ppf(1 - alpha, d.size - 1) * se)


def judge_superiority(
    id: str,
    statement: str,
    method: tuple[str, Values],
    baselines: Mapping[str, Values],
    *,
    higher_is_better: bool = True,
    test: str = "wilcoxon",
    alpha: float = 0.05,
    min_effect: float = 0.0,
    kind: str = "claim",
    requires: Sequence[str] | str | None = None,
    units: Sequence | None = None,
    unit: str = "seed",
) -> Claim:
    """Claim "the method beats each baseline" from paired values (see module docstring for the rule).

    With ``min_effect > 0`` the claim holds only if the lower end of the one-sided ``1 - alpha`` interval of the
    mean advantage (t interval; percentile bootstrap for ``test="bootstrap"``) is ``>= min_effect``, and does
    not hold if the mean advantage is below ``min_effect``.

    ``test`` is ``"wilcoxon"`` (one-sided signed-rank), ``"ttest"`` (one-sided paired t) or ``"bootstrap"``
    (one-sided paired percentile bootstrap).  The exact one-sided signed-rank p-value is at least ``2**-n``
    over ``n`` non-tied pairs, so with fewer than 5 seeds ``"wilcoxon"`` can never reach ``p < 0.05`` and the
    claim comes out inconclusive at best: use ``"ttest"`` when only a few seeds are affordable.
    """
    from scipy import stats as st

    _check_id(id, statement)
    if test not in ("wilcoxon", "ttest", "bootstrap"):
        raise ValueError(f"test must be 'wilcoxon', 'ttest' or 'bootstrap', got {test!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if min_effect < 0:
        raise ValueError(f"min_effect must be >= 0, got {min_effect}")
    kind, requires = _kind_args(kind, requires)
    name, m, bs, uinfo = _paired(method, baselines, units, unit)
    sign = 1.0 if higher_is_better else -1.0
    rows, verdicts = [], []
    for bname, b in bs.items():
        d = sign * (m - b)
        mean_d = float(d.mean())
        lower = _lower_bound(d, test, alpha)
        if test == "wilcoxon":
            _, p = paired_wilcoxon(d, np.zeros_like(d), alternative="greater")
        elif test == "ttest":
            if np.ptp(d) == 0.0:  # no spread: the sign decides exactly
                p = 0.0 if d[0] > 0 else 1.0
            else:
                p = float(st.ttest_1samp(d, 0.0, alternative="greater").pvalue)
        else:
            p = paired_bootstrap(d, np.zeros_like(d))[3]
        if mean_d <= 0.0 or (min_effect > 0 and mean_d < min_effect):
            v = DOES_NOT_HOLD
        elif p < alpha and (min_effect == 0 or lower >= min_effect):
            v = HOLDS
        else:
            v = INCONCLUSIVE
        verdicts.append(v)
        row = {**_summary(bname, b), "mean_advantage": mean_d, "p_value": p, "verdict": v}
        if min_effect > 0:
            row["advantage_lower"] = lower
        rows.append(row)
    if min_effect > 0:
        rule = (
            f"paired one-sided {test}; holds if p < {alpha:g} and the lower end of the one-sided "
            f"{1 - alpha:.0%} interval of the mean advantage is >= {min_effect:g} against every baseline; does "
            f"not hold if the mean advantage is <= 0 or < {min_effect:g} against any; otherwise inconclusive"
        )
    else:
        rule = (
            f"paired one-sided {test}; holds if mean advantage > 0 and p < {alpha:g} against every "
            "baseline; does not hold if the mean advantage is <= 0 against any; otherwise inconclusive"
        )
    return Claim(
        id=id,
        statement=statement,
        verdict=_combine(verdicts),
        method=_summary(name, m),
        baselines=rows,
        test={
            "name": f"paired {test} (one-sided)",
            "rule": rule,
            "alpha": alpha,
            "min_effect": min_effect,
            "higher_is_better": higher_is_better,
            "p_value": max(r["p_value"] for r in rows),
            **uinfo,
        },
        kind=kind,
        requires=requires,
    )


def judge_non_inferiority(
    id: str,
    statement: str,
    method: tuple[str, Values],
    baselines: Mapping[str, Values],
    *,
    margin: float,
    higher_is_better: bool = True,
    confidence: float = 0.95,
    seed: int = 0,
    kind: str = "claim",
    requires: Sequence[str] | str | None = None,
    units: Sequence | None = None,
    unit: str = "seed",
) -> Claim:
    """Claim "the method is no worse than each baseline by more than ``margin``" (paired bootstrap CI)."""
    _check_id(id, statement)
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    kind, requires = _kind_args(kind, requires)
    name, m, bs, uinfo = _paired(method, baselines, units, unit)
    sign = 1.0 if higher_is_better else -1.0
    rows, verdicts = [], []
    for bname, b in bs.items():
        d = sign * (m - b)
        mean_d, lo, hi, _ = paired_bootstrap(d, np.zeros_like(d), confidence=confidence, seed=seed)
        if lo > -margin:
            v = HOLDS
        elif mean_d < -margin:
            v = DOES_NOT_HOLD
        else:
            v = INCONCLUSIVE
        verdicts.append(v)
        rows.append({**_summary(bname, b), "mean_advantage": mean_d, "advantage_ci": [lo, hi], "verdict": v})
    rule = (
        f"non-inferiority with margin {margin:g}: holds if the {confidence:.0%} paired-bootstrap CI of the mean "
        f"advantage lies above -{margin:g}; does not hold if the mean advantage is below -{margin:g}; "
        "otherwise inconclusive"
    )
    return Claim(
        id=id,
        statement=statement,
        verdict=_combine(verdicts),
        method=_summary(name, m),
        baselines=rows,
        test={
            "name": "paired bootstrap non-inferiority",
            "rule": rule,
            "margin": margin,
            "higher_is_better": higher_is_better,
            **uinfo,
        },
        kind=kind,
        requires=requires,
    )


def _satisfies(x: float, bound: float, sense: str, tol: float = 0.0) -> bool:
    return x >= bound - tol if sense == ">=" else x <= bound + tol


def judge_threshold(
    id: str,
    statement: str,
    method: tuple[str, Values],
    *,
    threshold: float,
    sense: str = ">=",
    confidence: float = 0.95,
    mc_se: float | Values | None = None,
    kind: str = "claim",
    requires: Sequence[str] | str | None = None,
    units: Sequence | None = None,
    unit: str = "seed",
) -> Claim:
    """Claim "the measured value is ``sense`` ``threshold``" from values over units (t interval rule).

    ``mc_se``: the Monte-Carlo standard error of each value (one number for all, or one per value) when the
    values are themselves estimates (a coverage rate over ``m`` draws, say).  The interval then uses
    ``se^2 = s^2/n + mean(mc_se^2)/n`` (conservative: the spread over units already contains part of the
    Monte-Carlo error), and with a single unit the normal interval ``mean ± z · mc_se``.
    """
    from scipy import stats as st

    _check_id(id, statement)
    if sense not in (">=", "<="):
        raise ValueError(f"sense must be '>=' or '<=', got {sense!r}")
    kind, requires = _kind_args(kind, requires)
    name, raw = method
    raw = np.asarray(raw, dtype=float).ravel()
    values, labels = _per_unit(raw, units, unit, f"method {name!r}")
    est: Estimate = mean_ci(values, confidence)
    lo, hi = est.ci_low, est.ci_high
    if mc_se is not None:
        mc = np.broadcast_to(np.asarray(mc_se, dtype=float).ravel(), raw.shape) if np.ndim(mc_se) else (
            np.full(raw.shape, float(mc_se))
        )
        if np.any(mc < 0) or not np.all(np.isfinite(mc)):
            raise ValueError("mc_se must be finite and >= 0")
        mc_u = _per_unit(mc**2, units, unit, "mc_se")[0]  # per-unit mean of the squared errors
        n = values.size
        var = (est.std**2 / n if n > 1 else 0.0) + float(mc_u.mean()) / n
        q = st.t.ppf((1 + confidence) / 2, n - 1) if n > 1 else st.norm.ppf((1 + confidence) / 2)
        half = float(q * np.sqrt(var))
        lo, hi = est.mean - half, est.mean + half
    if _satisfies(lo if sense == ">=" else hi, threshold, sense):
        v = HOLDS
    elif not _satisfies(est.mean, threshold, sense):
        v = DOES_NOT_HOLD
    else:
        v = INCONCLUSIVE
    what = "t interval" if mc_se is None else "interval (spread over units + Monte-Carlo error)"
    rule = (
        f"holds if the whole {confidence:.0%} {what} is {sense} {threshold:g}; does not hold if the mean is "
        "not; otherwise inconclusive"
    )
    summary = {**_summary(name, values), "ci_low": lo, "ci_high": hi}
    return Claim(
        id=id,
        statement=statement,
        verdict=v,
        method=summary,
        baselines=[],
        test={
            "name": f"{what} vs threshold ({sense} {threshold:g})",
            "rule": rule,
            "threshold": threshold,
            **_unit_info(unit, values.size, labels, raw.size),
        },
        kind=kind,
        requires=requires,
    )


def judge_every(
    id: str,
    statement: str,
    method: tuple[str, Values],
    *,
    bound: float,
    sense: str = "<=",
    tol: float = 0.0,
    baselines: Mapping[str, Values] | None = None,
    kind: str = "claim",
    requires: Sequence[str] | str | None = None,
    unit: str = "instance",
) -> Claim:
    """Claim an exact guarantee: every value is ``sense`` ``bound`` (within ``tol``).

    ``baselines`` are reported next to the method for context; the verdict depends on the method's values only.
    There is no test, so the values are counted as they are (``unit`` defaults to ``"instance"``).
    """
    _check_id(id, statement)
    kind, requires = _kind_args(kind, requires)
    if sense not in (">=", "<="):
        raise ValueError(f"sense must be '>=' or '<=', got {sense!r}")
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    name, values = method
    a = np.asarray(values, dtype=float).ravel()
    if a.size == 0:
        raise ValueError("method values must not be empty")
    ok = np.array([_satisfies(float(x), bound, sense, tol) for x in a])
    worst = float(a.max() if sense == "<=" else a.min())
    v = HOLDS if ok.all() else DOES_NOT_HOLD
    return Claim(
        id=id,
        statement=statement,
        verdict=v,
        method=_summary(name, a),
        baselines=[_summary(k, b) for k, b in (baselines or {}).items()],
        test={
            "name": f"every value {sense} {bound:g} (tol {tol:g})",
            "rule": f"holds if all {a.size} values are {sense} {bound:g} within {tol:g}; otherwise does not hold",
            "n_violations": int((~ok).sum()),
            "worst": worst,
            "unit": unit,
            "n_units": int(a.size),
        },
        kind=kind,
        requires=requires,
    )


def judge_k_of_n(
    id: str,
    statement: str,
    method: tuple[str, Values],
    baselines: Mapping[str, Values],
    *,
    k: int,
    higher_is_better: bool = True,
    kind: str = "claim",
    requires: Sequence[str] | str | None = None,
    units: Sequence | None = None,
    unit: str = "seed",
) -> Claim:
    """Claim "the method beats each baseline in at least ``k`` of the ``n`` paired runs" (an exact count).

    A pair counts as a win only if the method is strictly better (ties are not wins).  *holds* if the count
    reaches ``k`` against every baseline, otherwise *does not hold*; there is no test, so no *inconclusive*.
    """
    _check_id(id, statement)
    kind, requires = _kind_args(kind, requires)
    name, m, bs, uinfo = _paired(method, baselines, units, unit)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= m.size:
        raise ValueError(f"k must be an integer in [1, {m.size}] (the number of pairs), got {k!r}")
    sign = 1.0 if higher_is_better else -1.0
    rows, verdicts = [], []
    for bname, b in bs.items():
        wins = int((sign * (m - b) > 0).sum())
        v = HOLDS if wins >= k else DOES_NOT_HOLD
        verdicts.append(v)
        rows.append({**_summary(bname, b), "wins": wins, "n": int(m.size), "verdict": v})
    return Claim(
        id=id,
        statement=statement,
        verdict=_combine(verdicts),
        method=_summary(name, m),
        baselines=rows,
        test={
            "name": f"wins in >= {k} of {m.size} pairs",
            "rule": f"holds if the method is strictly better in at least {k} of {m.size} pairs against every "
            "baseline; otherwise does not hold",
            "higher_is_better": higher_is_better,
            "min_wins": min(r["wins"] for r in rows),
            **uinfo,
        },
        kind=kind,
        requires=requires,
    )


@dataclass(frozen=True)
class Table:
    name: str
    rows: list[dict]
    caption: str = ""

    def to_markdown(self) -> str:
        if not self.rows:
            return "_(empty table)_\n"
        cols: list[str] = []
        for r in self.rows:
            cols.extend(c for c in r if c not in cols)
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in self.rows:
            lines.append("| " + " | ".join(_fmt(r.get(c, "")) for c in cols) + " |")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Figure:
    name: str
    png: bytes
    caption: str = ""

    @property
    def filename(self) -> str:
        return f"{self.name}.png"


def _fmt(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if x == 0 or 1e-3 <= abs(x) < 1e5:
            return f"{x:.4g}"
        return f"{x:.3e}"
    return str(x).replace("|", "\\|")


_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


@dataclass
class Report:
    """Everything a run produced: filled by an experiment's ``judge``; written by :func:`icml26.core.io.write_run`.

    ``seeds`` (set by the runner) are the units the records came from; :meth:`add_claim` uses them to refuse a
    seed-unit statement judged on more values than there are seeds (pseudo-replication).  ``tuning`` records
    each arm's tuning budget (:meth:`set_tuning`); comparisons show it and flag a baseline tuned with less than
    the method.
    """

    claims: list[Claim] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seeds: list[int] | None = None
    tuning: dict[str, dict] = field(default_factory=dict)

    def add_claim(self, claim: Claim) -> Claim:
        if not isinstance(claim, Claim):
            raise TypeError("claim must be a Claim made by one of the judge_* helpers")
        if any(c.id == claim.id for c in self.claims):
            raise ValueError(f"claim id {claim.id!r} is already in this report")
        n, unit = claim.test.get("n_units"), claim.test.get("unit")
        if self.seeds is not None and unit == "seed" and n is not None and n > len(self.seeds):
            raise ValueError(
                f"{claim.id!r} is judged on {n} values with unit 'seed' but the run has {len(self.seeds)} seeds: "
                "pass units=[seed of each value] to aggregate per seed, or unit='instance' if the values are "
                "independent draws by design"
            )
        tuned = self._tuning_rows(claim)
        if tuned:
            claim = replace(claim, test={**claim.test, "tuning": tuned})
        self.claims.append(claim)
        return claim

    def set_tuning(self, arm: str, configs: int, steps: int | float, note: str = "") -> None:
        """Record ``arm``'s tuning budget: ``configs`` configurations tried, ``steps`` optimiser (or work) steps each.

        ``arm`` is matched against the names in judged statements (exactly, or as the first word(s) of the
        name followed by a space: arm ``"NPO"`` matches ``"NPO forget quality"``).
        """
        if not isinstance(arm, str) or not arm:
            raise ValueError(f"arm must be a non-empty string, got {arm!r}")
        if isinstance(configs, bool) or not isinstance(configs, int) or configs < 1:
            raise ValueError(f"configs must be an integer >= 1, got {configs!r}")
        if not steps >= 0:
            raise ValueError(f"steps must be >= 0, got {steps!r}")
        self.tuning[arm] = {"configs": configs, "steps": steps, "budget": configs * steps, "note": note}

    def _budget(self, name: str) -> dict | None:
        if name in self.tuning:
            return {"arm": name, **self.tuning[name]}
        best = max((a for a in self.tuning if name.startswith(a + " ")), key=len, default=None)
        return {"arm": best, **self.tuning[best]} if best else None

    def _tuning_rows(self, claim: Claim) -> dict | None:
        if not self.tuning or not claim.baselines:
            return None
        m = self._budget(claim.method["name"])
        rows = {"method": m, "baselines": {}}
        for b in claim.baselines:
            bb = self._budget(b["name"])
            if bb is not None:
                bb["under_tuned"] = bool(m is not None and bb["budget"] < m["budget"])
            rows["baselines"][b["name"]] = bb
        if m is None and not any(rows["baselines"].values()):
            return None
        return rows

    def resolve(self) -> None:
        """Apply ``requires``: a claim whose required precondition does not hold becomes *inconclusive*.

        Raises if a claim requires an id that is not a precondition of this report.
        """
        pre = {c.id: c for c in self.claims if c.kind == "precondition"}
        out = []
        for c in self.claims:
            missing = [r for r in c.requires if r not in pre]
            if missing:
                raise ValueError(f"{c.id!r} requires {missing}, which are not preconditions of this report")
            failed = [r for r in c.requires if pre[r].verdict != HOLDS]
            if failed and c.measured_verdict is None:
                c = replace(
                    c,
                    verdict=INCONCLUSIVE,
                    measured_verdict=c.verdict,
                    reason="setting invalid: " + ", ".join(failed),
                )
            out.append(c)
        self.claims = out

    def add_table(self, name: str, rows: list[dict], caption: str = "") -> Table:
        if not _NAME.fullmatch(name):
            raise ValueError(f"name must be lowercase letters, digits, '_' or '-', got {name!r}")
        t = Table(name, [dict(r) for r in rows], caption)
        self.tables.append(t)
        return t

    def add_figure(self, name: str, fig: Any, caption: str = "") -> Figure:
        """Render a matplotlib figure to PNG (and close it)."""
        import matplotlib.pyplot as plt

        if not _NAME.fullmatch(name):
            raise ValueError(f"name must be lowercase letters, digits, '_' or '-', got {name!r}")
        if any(f.name == name for f in self.figures):
            raise ValueError(f"figure name {name!r} is already in this report")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        f = Figure(name, buf.getvalue(), caption)
        self.figures.append(f)
        return f

    def add_note(self, text: str) -> None:
        self.notes.append(str(text))

    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {verdict: count}}`` over the judged statements."""
        return counts(c.to_dict() for c in self.claims)

    def claims_table(self, kind: str | None = None) -> Table:
        rows = []
        for c in self.claims:
            if kind is not None and c.kind != kind:
                continue
            verdict = c.verdict + (f" ({c.reason}; measured: {c.measured_verdict})" if c.reason else "")
            row = {
                "id": c.id,
                "verdict": verdict,
                "statement": c.statement,
                "method": f"{c.method['name']}: {_estimate_str(c.method)}",
                "baselines": "; ".join(f"{b['name']}: {_estimate_str(b)}" for b in c.baselines) or "-",
                "test": c.test["name"]
                + (f", p={c.test['p_value']:.3g}" if "p_value" in c.test else "")
                + (f", n={c.test['n_units']} {c.test['unit']}s" if "n_units" in c.test else ""),
            }
            if c.requires:
                row["requires"] = ", ".join(c.requires)
            tuning = c.test.get("tuning")
            if tuning:
                row["tuning (configs x steps)"] = _tuning_str(tuning)
            rows.append(row)
        return Table("claims" if kind in (None, "claim") else f"{kind}s", rows)

    def to_markdown(self, title: str, header: Mapping[str, Any], figure_dir: str = ".") -> str:
        out = [f"# {title}\n"]
        out += [f"- **{k}**: {v}" for k, v in header.items()]
        failing = [c for c in self.claims if c.kind == "check" and c.verdict != HOLDS]
        if failing:
            out.append("\n## FAILING CHECKS (defects in our code, not findings)\n")
            out += [f"- `{c.id}`: {c.verdict} — {c.statement}" for c in failing]
        k = counts(c.to_dict() for c in self.claims)
        out.append("\n" + summary_line(k) + "\n")
        for kind, heading in (("precondition", "Preconditions"), ("claim", "Claims"), ("check", "Checks")):
            sub = [c for c in self.claims if c.kind == kind]
            if kind == "claim" or sub:
                out.append(f"\n## {heading}\n")
                out.append(self.claims_table(kind).to_markdown() if sub else "_no claims_\n")
                for c in sub:
                    out.append(f"- `{c.id}` rule: {c.test['rule']}")
        if self.tuning:
            out.append("\n## Tuning budgets\n")
            out.append(Table("tuning", [{"arm": a, **t} for a, t in self.tuning.items()]).to_markdown())
        for t in self.tables:
            out.append(f"\n## {t.name}\n")
            if t.caption:
                out.append(t.caption + "\n")
            out.append(t.to_markdown())
        for f in self.figures:
            out.append(f"\n### Figure: {f.name}\n")
            out.append(f"![{f.name}]({figure_dir}/{f.filename})\n")
            if f.caption:
                out.append(f.caption + "\n")
        if self.notes:
            out.append("\n## Notes\n")
            out += [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"


def counts(claims: Any) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` over claim dicts (as stored in result.json; a missing kind counts as claim)."""
    out: dict[str, dict[str, int]] = {k: {v: 0 for v in VERDICTS} for k in KINDS}
    for c in claims:
        out[c.get("kind", "claim")][c["verdict"]] += 1
    return out


def summary_line(k: Mapping[str, Mapping[str, int]]) -> str:
    """"claims: 3/5 hold (1 does not hold, 1 inconclusive); checks: 4/4 pass; preconditions: 1/1 hold"."""

    def part(kind: str, word: str) -> str:
        c = k[kind]
        n = sum(c.values())
        rest = [f"{c[v]} {v}" for v in (DOES_NOT_HOLD, INCONCLUSIVE) if c[v]]
        return f"{kind}s: {c[HOLDS]}/{n} {word}" + (f" ({', '.join(rest)})" if rest else "")

    return "; ".join(part(kind, w) for kind, w in (("claim", "hold"), ("check", "pass"), ("precondition", "hold")))


def _tuning_str(t: Mapping[str, Any]) -> str:
    def one(name: str, b: Mapping[str, Any] | None) -> str:
        if b is None:
            return f"{name}: not recorded"
        flag = " UNDER-TUNED" if b.get("under_tuned") else ""
        return f"{name}: {b['configs']}x{_fmt(b['steps'])}{flag}"

    parts = [one(t["method"]["arm"] if t["method"] else "method", t["method"])]
    parts += [one(n, b) for n, b in t["baselines"].items()]
    return "; ".join(parts)


def _estimate_str(d: Mapping[str, Any]) -> str:
    if d["n"] == 1 or d["std"] == 0.0:
        return f"{_fmt(d['mean'])} (n={d['n']})"
    return f"{_fmt(d['mean'])} ± {_fmt(d['std'])} (n={d['n']})"
