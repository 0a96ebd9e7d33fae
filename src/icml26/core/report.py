"""What a reproduction returns: a :class:`Report` of judged statements, tables, figures and metrics.

A :class:`Claim` is never written by hand: it comes out of a judge in :mod:`icml26.core.judges`, which states its
rule next to the verdict.  Every statement has a **kind**:

* ``"claim"`` -- the paper's empirical statement; the only kind counted as "claims hold";
* ``"check"`` -- a guarantee of our own code that holds by construction (accounting identical, a bound never
  violated); a failing check is a defect, not a finding (it heads report.md and ``icml26 run`` exits 3);
* ``"precondition"`` -- the setting shows the phenomenon the method addresses.  A claim with
  ``requires=[ids]`` is *inconclusive* with the reason "setting invalid: <id>" when a required precondition
  does not hold (:meth:`Report.resolve`, which the runner calls after ``judge``).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

__all__ = ["HOLDS", "DOES_NOT_HOLD", "INCONCLUSIVE", "VERDICTS", "KINDS", "Claim", "Table", "Figure", "Report",
           "counts", "summary_line"]

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE)
KINDS = ("claim", "check", "precondition")


@dataclass(frozen=True)
class Claim:
    """A judged statement: the numbers measured for it, the verdict its rule gave, its kind and requirements."""

    id: str
    statement: str
    verdict: str
    method: dict
    baselines: list[dict]
    test: dict
    kind: str = "claim"
    requires: tuple[str, ...] = ()
    reason: str = ""  # why the verdict was overridden (a required precondition failed)
    measured_verdict: str | None = None  # the rule's own verdict before that override

    def to_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "statement": self.statement, "verdict": self.verdict,
                "requires": list(self.requires), "reason": self.reason, "measured_verdict": self.measured_verdict,
                "method": self.method, "baselines": self.baselines, "test": self.test}


@dataclass(frozen=True)
class Table:
    name: str
    rows: list[dict]
    caption: str = ""

    def to_markdown(self) -> str:
        if not self.rows:
            return "_(empty table)_\n"
        cols = list(dict.fromkeys(c for r in self.rows for c in r))  # every row's columns, first-seen order
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(_fmt(r.get(c, "")) for c in cols) + " |" for r in self.rows]
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
        return f"{x:.4g}" if x == 0 or 1e-3 <= abs(x) < 1e5 else f"{x:.3e}"
    return str(x).replace("|", "\\|")


def _check_name(name: str) -> None:
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
        raise ValueError(f"name must be lowercase letters, digits, '_' or '-', got {name!r}")


@dataclass
class Report:
    """Everything a run produced, filled by an experiment's ``judge``.  ``seeds`` (set by the runner) let
    :meth:`add_claim` refuse a seed-unit statement with more values than seeds (pseudo-replication); ``tuning``
    holds each arm's budget (:meth:`set_tuning`), shown beside comparisons, with under-tuned baselines flagged."""

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
            raise ValueError(f"{claim.id!r} is judged on {n} values with unit 'seed' but the run has "
                             f"{len(self.seeds)} seeds (pseudo-replication): pass units=[seed of each value] to "
                             "aggregate per seed, or unit='instance' if the values are independent draws by design")
        m = self._budget(claim.method["name"]) if self.tuning and claim.baselines else None
        rows = {b["name"]: self._budget(b["name"], m) for b in claim.baselines} if self.tuning else {}
        if m or any(rows.values()):
            claim = replace(claim, test={**claim.test, "tuning": {"method": m, "baselines": rows}})
        self.claims.append(claim)
        return claim

    def set_tuning(self, arm: str, configs: int, steps: int | float, note: str = "") -> None:
        """Record ``arm``'s tuning budget: ``configs`` configurations tried, ``steps`` optimiser (or work) steps each
        (``steps=0``: nothing to tune, e.g. a closed form or an exact solver; never flagged as under-tuned).  ``arm`` is
        matched against the names in judged statements (exactly, or as the first word(s) of the name followed by a
        space: arm ``"NPO"`` matches ``"NPO forget quality"``)."""
        if not isinstance(arm, str) or not arm:
            raise ValueError(f"arm must be a non-empty string, got {arm!r}")
        if isinstance(configs, bool) or not isinstance(configs, int) or configs < 1:
            raise ValueError(f"configs must be an integer >= 1, got {configs!r}")
        if not steps >= 0:
            raise ValueError(f"steps must be >= 0, got {steps!r}")
        self.tuning[arm] = {"configs": configs, "steps": steps, "budget": configs * steps, "note": note}

    def _budget(self, name: str, method: dict | None = None) -> dict | None:
        arm = name if name in self.tuning else max((a for a in self.tuning if name.startswith(a + " ")), key=len,
                                                   default=None)
        if arm is None:
            return None
        t = self.tuning[arm]  # a budget of 0 (a closed form, an exact solver) has nothing to tune: never flagged
        return {"arm": arm, **t, **({"under_tuned": 0 < t["budget"] < method["budget"]} if method else {})}

    def resolve(self) -> None:
        """Apply ``requires``: a claim whose required precondition does not hold becomes *inconclusive*."""
        pre = {c.id: c for c in self.claims if c.kind == "precondition"}
        out = []
        for c in self.claims:
            if missing := [r for r in c.requires if r not in pre]:
                raise ValueError(f"{c.id!r} requires {missing}, which are not preconditions of this report")
            if (failed := [r for r in c.requires if pre[r].verdict != HOLDS]) and c.measured_verdict is None:
                c = replace(c, verdict=INCONCLUSIVE, measured_verdict=c.verdict,
                            reason="setting invalid: " + ", ".join(failed))
            out.append(c)
        self.claims = out

    def add_table(self, name: str, rows: list[dict], caption: str = "") -> Table:
        _check_name(name)
        self.tables.append(Table(name, [dict(r) for r in rows], caption))
        return self.tables[-1]

    def add_figure(self, name: str, fig: Any, caption: str = "") -> Figure:
        """Render a matplotlib figure to PNG (and close it)."""
        import matplotlib.pyplot as plt
        _check_name(name)
        if any(f.name == name for f in self.figures):
            raise ValueError(f"figure name {name!r} is already in this report")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        self.figures.append(Figure(name, buf.getvalue(), caption))
        return self.figures[-1]

    def add_note(self, text: str) -> None:
        self.notes.append(str(text))

    def by_id(self) -> dict[str, Claim]:
        return {c.id: c for c in self.claims}

    def claims_table(self, kind: str | None = None) -> Table:
        rows = []
        for c in (c for c in self.claims if kind is None or c.kind == kind):
            verdict = c.verdict + (f" ({c.reason}; measured: {c.measured_verdict})" if c.reason else "")
            row = {"id": c.id, "verdict": verdict, "statement": c.statement,
                   "method": f"{c.method['name']}: {_estimate_str(c.method)}",
                   "baselines": "; ".join(f"{b['name']}: {_estimate_str(b)}" for b in c.baselines) or "-",
                   "test": c.test["name"] + (f", p={c.test['p_value']:.3g}" if "p_value" in c.test else "")
                   + (f", n={c.test['n_units']} {c.test['unit']}s" if "n_units" in c.test else "")}
            if c.requires:
                row["requires"] = ", ".join(c.requires)
            if c.test.get("tuning"):
                row["tuning (configs x steps)"] = _tuning_str(c.test["tuning"])
            rows.append(row)
        return Table("claims" if kind in (None, "claim") else f"{kind}s", rows)

    def to_markdown(self, title: str, header: Mapping[str, Any], figure_dir: str = ".") -> str:
        out = [f"# {title}\n", *(f"- **{k}**: {v}" for k, v in header.items())]
        if failing := [c for c in self.claims if c.kind == "check" and c.verdict != HOLDS]:
            out.append("\n## FAILING CHECKS (defects in our code, not findings)\n")
            out += [f"- `{c.id}`: {c.verdict} — {c.statement}" for c in failing]
        out.append("\n" + summary_line(counts(c.to_dict() for c in self.claims)) + "\n")
        for kind, heading in (("precondition", "Preconditions"), ("claim", "Claims"), ("check", "Checks")):
            sub = [c for c in self.claims if c.kind == kind]
            if kind == "claim" or sub:
                out += [f"\n## {heading}\n", self.claims_table(kind).to_markdown() if sub else "_no claims_\n"]
                out += [f"- `{c.id}` rule: {c.test['rule']}" for c in sub]
        if self.tuning:
            out += ["\n## Tuning budgets\n",
                    Table("tuning", [{"arm": a, **t} for a, t in self.tuning.items()]).to_markdown()]
        for t in self.tables:
            out += [f"\n## {t.name}\n", *([t.caption + "\n"] if t.caption else []), t.to_markdown()]
        for f in self.figures:
            out += [f"\n### Figure: {f.name}\n", f"![{f.name}]({figure_dir}/{f.filename})\n"]
            out += [f.caption + "\n"] if f.caption else []
        if self.notes:
            out += ["\n## Notes\n", *(f"- {n}" for n in self.notes)]
        return "\n".join(out) + "\n"


def counts(claims: Iterable[Mapping]) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` over claim dicts (as stored in result.json; a missing kind counts as claim)."""
    out: dict[str, dict[str, int]] = {k: {v: 0 for v in VERDICTS} for k in KINDS}
    for c in claims:
        out[c.get("kind", "claim")][c["verdict"]] += 1
    return out


def summary_line(k: Mapping[str, Mapping[str, int]]) -> str:
    """"claims: 3/5 hold (1 does not hold, 1 inconclusive); checks: 4/4 pass; preconditions: 1/1 hold"."""

    def part(kind: str, word: str) -> str:
        c = k[kind]
        rest = [f"{c[v]} {v}" for v in (DOES_NOT_HOLD, INCONCLUSIVE) if c[v]]
        return f"{kind}s: {c[HOLDS]}/{sum(c.values())} {word}" + (f" ({', '.join(rest)})" if rest else "")

    return "; ".join(part(kind, w) for kind, w in (("claim", "hold"), ("check", "pass"), ("precondition", "hold")))


def _tuning_str(t: Mapping[str, Any]) -> str:
    def one(name: str, b: Mapping[str, Any] | None) -> str:
        flag = " UNDER-TUNED" if b and b.get("under_tuned") else ""
        return f"{name}: {b['configs']}x{_fmt(b['steps'])}{flag}" if b else f"{name}: not recorded"

    return "; ".join([one(t["method"]["arm"] if t["method"] else "method", t["method"])]
                     + [one(n, b) for n, b in t["baselines"].items()])


def _estimate_str(d: Mapping[str, Any]) -> str:
    spread = "" if d["n"] == 1 or d["std"] == 0.0 else f" ± {_fmt(d['std'])}"
    return f"{_fmt(d['mean'])}{spread} (n={d['n']})"
