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
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .stats import Estimate, mean_ci, paired_bootstrap, paired_wilcoxon

__all__ = [
    "HOLDS",
    "DOES_NOT_HOLD",
    "INCONCLUSIVE",
    "VERDICTS",
    "Claim",
    "Table",
    "Figure",
    "Report",
    "judge_superiority",
    "judge_non_inferiority",
    "judge_threshold",
    "judge_every",
    "judge_k_of_n",
]

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE)

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

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "statement": self.statement,
            "verdict": self.verdict,
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


def _combine(verdicts: list[str]) -> str:
    if any(v == DOES_NOT_HOLD for v in verdicts):
        return DOES_NOT_HOLD
    if verdicts and all(v == HOLDS for v in verdicts):
        return HOLDS
    return INCONCLUSIVE


def _paired(method: tuple[str, Values], baselines: Mapping[str, Values]) -> tuple[str, np.ndarray, dict]:
    if not isinstance(method, tuple) or len(method) != 2:
        raise TypeError("method must be a (name, values) tuple")
    if not baselines:
        raise ValueError("baselines must name at least one baseline with its values")
    name, m = method[0], np.asarray(method[1], dtype=float).ravel()
    bs = {}
    for bname, bv in baselines.items():
        b = np.asarray(bv, dtype=float).ravel()
        if b.shape != m.shape:
            raise ValueError(
                f"baseline {bname!r} has {b.size} values but method {name!r} has {m.size}; claims compare "
                "paired runs (same seeds / instances)"
            )
        bs[bname] = b
    return name, m, bs


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
) -> Claim:
    """Claim "the method beats each baseline" from paired values (see module docstring for the rule).

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
    name, m, bs = _paired(method, baselines)
    sign = 1.0 if higher_is_better else -1.0
    rows, verdicts = [], []
    for bname, b in bs.items():
        d = sign * (m - b)
        mean_d = float(d.mean())
        if test == "wilcoxon":
            _, p = paired_wilcoxon(d, np.zeros_like(d), alternative="greater")
        elif test == "ttest":
            if np.ptp(d) == 0.0:  # no spread: the sign decides exactly
                p = 0.0 if d[0] > 0 else 1.0
            else:
                p = float(st.ttest_1samp(d, 0.0, alternative="greater").pvalue)
        else:
            p = paired_bootstrap(d, np.zeros_like(d))[3]
        if mean_d <= 0.0:
            v = DOES_NOT_HOLD
        elif mean_d > min_effect and p < alpha:
            v = HOLDS
        else:
            v = INCONCLUSIVE
        verdicts.append(v)
        rows.append({**_summary(bname, b), "mean_advantage": mean_d, "p_value": p, "verdict": v})
    rule = (
        f"paired one-sided {test}; holds if mean advantage > {min_effect:g} and p < {alpha:g} against every "
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
            "higher_is_better": higher_is_better,
            "p_value": max(r["p_value"] for r in rows),
        },
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
) -> Claim:
    """Claim "the method is no worse than each baseline by more than ``margin``" (paired bootstrap CI)."""
    _check_id(id, statement)
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    name, m, bs = _paired(method, baselines)
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
        },
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
) -> Claim:
    """Claim "the measured value is ``sense`` ``threshold``" from values over seeds (t interval rule)."""
    _check_id(id, statement)
    if sense not in (">=", "<="):
        raise ValueError(f"sense must be '>=' or '<=', got {sense!r}")
    name, values = method
    est: Estimate = mean_ci(values, confidence)
    if _satisfies(est.ci_low if sense == ">=" else est.ci_high, threshold, sense):
        v = HOLDS
    elif not _satisfies(est.mean, threshold, sense):
        v = DOES_NOT_HOLD
    else:
        v = INCONCLUSIVE
    rule = (
        f"holds if the whole {confidence:.0%} t interval is {sense} {threshold:g}; does not hold if the mean is "
        "not; otherwise inconclusive"
    )
    return Claim(
        id=id,
        statement=statement,
        verdict=v,
        method=_summary(name, values),
        baselines=[],
        test={"name": f"t interval vs threshold ({sense} {threshold:g})", "rule": rule, "threshold": threshold},
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
) -> Claim:
    """Claim an exact guarantee: every value is ``sense`` ``bound`` (within ``tol``).

    ``baselines`` are reported next to the method for context; the verdict depends on the method's values only.
    """
    _check_id(id, statement)
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
        },
    )


def judge_k_of_n(
    id: str,
    statement: str,
    method: tuple[str, Values],
    baselines: Mapping[str, Values],
    *,
    k: int,
    higher_is_better: bool = True,
) -> Claim:
    """Claim "the method beats each baseline in at least ``k`` of the ``n`` paired runs" (an exact count).

    A pair counts as a win only if the method is strictly better (ties are not wins).  *holds* if the count
    reaches ``k`` against every baseline, otherwise *does not hold*; there is no test, so no *inconclusive*.
    """
    _check_id(id, statement)
    name, m, bs = _paired(method, baselines)
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
        },
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
    """Everything a run produced.  Filled by an experiment's ``run``; written by :func:`icml26.core.io.write_run`."""

    claims: list[Claim] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_claim(self, claim: Claim) -> Claim:
        if not isinstance(claim, Claim):
            raise TypeError("claim must be a Claim made by one of the judge_* helpers")
        if any(c.id == claim.id for c in self.claims):
            raise ValueError(f"claim id {claim.id!r} is already in this report")
        self.claims.append(claim)
        return claim

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

    def claims_table(self) -> Table:
        rows = []
        for c in self.claims:
            rows.append(
                {
                    "id": c.id,
                    "verdict": c.verdict,
                    "statement": c.statement,
                    "method": f"{c.method['name']}: {_estimate_str(c.method)}",
                    "baselines": "; ".join(f"{b['name']}: {_estimate_str(b)}" for b in c.baselines) or "-",
                    "test": c.test["name"] + (f", p={c.test['p_value']:.3g}" if "p_value" in c.test else ""),
                }
            )
        return Table("claims", rows)

    def to_markdown(self, title: str, header: Mapping[str, Any], figure_dir: str = ".") -> str:
        out = [f"# {title}\n"]
        out += [f"- **{k}**: {v}" for k, v in header.items()]
        out.append("\n## Claims\n")
        out.append(self.claims_table().to_markdown() if self.claims else "_no claims_\n")
        for c in self.claims:
            out.append(f"- `{c.id}` rule: {c.test['rule']}")
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


def _estimate_str(d: Mapping[str, Any]) -> str:
    if d["n"] == 1 or d["std"] == 0.0:
        return f"{_fmt(d['mean'])} (n={d['n']})"
    return f"{_fmt(d['mean'])} ± {_fmt(d['std'])} (n={d['n']})"
