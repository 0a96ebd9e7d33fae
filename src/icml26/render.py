"""report.md for one run: a :class:`~icml26.core.report.Report` written as Markdown.

Presentation only (it lives outside the core): the header, failing checks first, the counts line, then one table per
statement kind with each statement's rule, the tuning ledger and budgets, the experiment's own tables, figures and
notes.  A claim without a control arm is marked "(uncontrolled)", a verdict within verify's tolerance of flipping
"KNIFE EDGE".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icml26.core.report import HOLDS, Report, Table, _fmt, _uncontrolled, counts, summary_line

__all__ = ["claims_table", "report_markdown"]

_HEADINGS = (("precondition", "Preconditions"), ("claim", "Claims"), ("control", "Controls"), ("check", "Checks"))


def claims_table(report: Report, kind: str | None = None) -> Table:
    """One row per statement of ``kind`` (all when None): verdict (with an override's reason), numbers, test."""
    rows = []
    for c in (c for c in report.claims if kind is None or c.kind == kind):
        verdict = c.verdict + (f" ({c.reason}; measured: {c.measured_verdict})" if c.reason else "")
        verdict += " KNIFE EDGE" if c.test.get("knife_edge") else ""
        verdict += " (uncontrolled)" if _uncontrolled(c.to_dict()) else ""
        if c.kind == "control":
            verdict += f" (the arm's own verdict under the rule: {c.test['arm_verdict']})"
        p = f", p={c.test['p_value']:.3g}" if c.test.get("p_value") is not None else ""
        units = f", n={c.test['n_units']} {c.test['unit']}s" if "n_units" in c.test else ""
        row = {
            "id": c.id,
            "verdict": verdict,
            "statement": c.statement,
            "method": f"{c.method['name']}: {_estimate_str(c.method)}",
            "baselines": "; ".join(f"{b['name']}: {_estimate_str(b)}" for b in c.baselines) or "-",
            "test": c.test["name"] + p + units,
        }
        if c.requires:
            row["requires"] = ", ".join(c.requires)
        if c.controls or c.no_control:
            row["controls"] = ", ".join(c.controls) or f"none: {c.no_control}"
        if c.test.get("tuning"):
            row["tuning (configs x steps)"] = _tuning_str(c.test["tuning"])
        rows.append(row)
    return Table("claims" if kind in (None, "claim") else f"{kind}s", rows)


def report_markdown(report: Report, title: str, header: Mapping[str, Any], figure_dir: str = ".") -> str:
    """The whole report.md of ``report`` (figures linked from ``figure_dir``)."""
    out = [f"# {title}\n", *(f"- **{k}**: {v}" for k, v in header.items())]
    if failing := [c for c in report.claims if c.kind == "check" and c.verdict != HOLDS]:
        out.append("\n## FAILING CHECKS (defects in our code, not findings)\n")
        out += [f"- `{c.id}`: {c.verdict} — {c.statement}" for c in failing]
    out.append("\n" + summary_line(counts(c.to_dict() for c in report.claims)) + "\n")
    for kind, heading in _HEADINGS:
        sub = [c for c in report.claims if c.kind == kind]
        if kind == "claim" or sub:
            out += [f"\n## {heading}\n", claims_table(report, kind).to_markdown() if sub else "_no claims_\n"]
            out += [f"- `{c.id}` rule: {c.test.get('control_rule', c.test['rule'])}" for c in sub]
    if report.ledger:
        out += [
            "\n## Tuning ledger (every variant tried while designing, and the seeds it saw)\n",
            Table("ledger", report.ledger).to_markdown(),
        ]
    if report.tuning:
        rows = [{"arm": a, **t} for a, t in report.tuning.items()]
        out += ["\n## Tuning budgets\n", Table("tuning", rows).to_markdown()]
    for t in report.tables:
        out += [f"\n## {t.name}\n", *([t.caption + "\n"] if t.caption else []), t.to_markdown()]
    for f in report.figures:
        out += [f"\n### Figure: {f.name}\n", f"![{f.name}]({figure_dir}/{f.filename})\n"]
        out += [f.caption + "\n"] if f.caption else []
    if report.notes:
        out += ["\n## Notes\n", *(f"- {n}" for n in report.notes)]
    return "\n".join(out) + "\n"


def _tuning_str(t: Mapping[str, Any]) -> str:
    def one(name: str, b: Mapping[str, Any] | None) -> str:
        flag = " UNDER-TUNED" if b and b.get("under_tuned") else ""
        return f"{name}: {b['configs']}x{_fmt(b['steps'])}{flag}" if b else f"{name}: not recorded"

    method = t["method"]
    arms = [one(method["arm"] if method else "method", method)] + [one(n, b) for n, b in t["baselines"].items()]
    return "; ".join(arms)


def _estimate_str(d: Mapping[str, Any]) -> str:
    spread = "" if d["n"] == 1 or d["std"] == 0.0 else f" ± {_fmt(d['std'])}"
    return f"{_fmt(d['mean'])}{spread} (n={d['n']})"
