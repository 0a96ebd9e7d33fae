"""What a reproduction returns: a :class:`Report` of judged statements, tables, figures and metrics.

A :class:`Claim` is never written by hand: it comes out of a judge in :mod:`icml26.core.judges`, which states its
rule next to the verdict.  Every statement has a **kind**:

* ``"claim"`` -- the paper's empirical statement; the only kind counted as "claims hold";
* ``"check"`` -- a guarantee of our own code that holds by construction (accounting identical, a bound never
  violated); a failing check is a defect, not a finding (it heads report.md and ``icml26 run`` exits 3);
* ``"precondition"`` -- the setting shows the phenomenon the method addresses.  A claim with
  ``requires=[ids]`` is *inconclusive* with the reason "setting invalid: <id>" when a required precondition
  does not hold (:meth:`Report.resolve`, which the runner calls after ``judge``);
* ``"control"`` -- a claim's own rule applied to a **control arm** (the method without what the claim credits),
  made by :meth:`Claim.control`; it *holds* when the arm fails the rule (inconclusive when the arm's test is).  A claim
  holding while one of its ``controls=[ids]`` does not is *inconclusive* ("control passes / undecided: <id>"): the
  test does not separate the method from that arm.  A claim with neither controls nor ``no_control="<why>"``
  (closed-form truths only) is *uncontrolled* and counted apart.  Every judged statement also stores its
  ``decisive`` number and its bound; :meth:`Report.resolve` flags a margin within verify's tolerance "knife edge".
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

__all__ = ["HOLDS", "DOES_NOT_HOLD", "INCONCLUSIVE", "VERDICTS", "KINDS", "Claim", "Table", "Figure", "Report",
           "counts", "summary_line", "VERIFY_RTOL", "TIMING_RTOL", "CHECK_RTOL"]

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE)
KINDS = ("claim", "check", "precondition", "control")
VERIFY_RTOL, TIMING_RTOL, CHECK_RTOL = 0.1, 0.5, 1e-6  # ``icml26 verify``'s default rtols (numbers; wall clock; checks)


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
    reason: str = ""  # why the verdict was overridden (a required precondition failed, a control passed)
    measured_verdict: str | None = None  # the rule's own verdict before that override
    controls: tuple[str, ...] = ()  # ids of this claim's control statements
    no_control: str = ""  # why a claim checked against a closed-form truth has no control arm
    rejudge: Callable[..., Claim] | None = field(default=None, compare=False, repr=False)  # the rule, for controls

    def to_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "statement": self.statement, "verdict": self.verdict,
                "requires": list(self.requires), "reason": self.reason, "measured_verdict": self.measured_verdict,
                "controls": list(self.controls), "no_control": self.no_control,
                "method": self.method, "baselines": self.baselines, "test": self.test}

    def control(self, id: str, statement: str, arm: tuple[str, Any]) -> Claim:
        """The control statement ``id``: this claim's own rule (its baselines, threshold, test and units) applied to a
        control arm's values ``arm = (name, values)``, measured on the same seeds.  It holds when the arm fails the
        rule.  Name ``id`` in the claim's ``controls=[...]`` and add both to the report."""
        if self.rejudge is None or self.kind != "claim":
            raise ValueError(f"{self.id!r} is not a claim made by a judge, so it has no rule to apply to a control arm")
        return self.rejudge(id, statement, arm)


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
    holds each arm's budget (:meth:`set_tuning`), shown beside comparisons, with under-tuned baselines flagged;
    ``ledger`` (set by the runner from ``Experiment.tuning``) lists every variant tried while designing."""

    claims: list[Claim] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seeds: list[int] | None = None
    tuning: dict[str, dict] = field(default_factory=dict)
    ledger: list[dict] = field(default_factory=list)

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

    def resolve(self, timing: Iterable[str] = ()) -> None:
        """Apply ``requires`` (a failed precondition makes its claims *inconclusive*) and ``controls`` (a claim that
        holds while a control arm passes its rule too is *inconclusive*; "does not hold" stands), check that each
        control applies its claim's rule to as many units, and flag knife edges: ``|value - bound| <= rtol * |value|``
        for ``test["decisive"]``, rtol verify's (:data:`TIMING_RTOL`: ``timing`` ids, :data:`CHECK_RTOL`, else 0.1)."""
        by, out, served = self.by_id(), [], set()
        for c in self.claims:
            if missing := [r for r in c.requires if getattr(by.get(r), "kind", "") != "precondition"]:
                raise ValueError(f"{c.id!r} requires {missing}, which are not preconditions of this report")
            if bad := [r for r in c.controls if getattr(by.get(r), "kind", "") != "control"]:
                raise ValueError(f"{c.id!r} names controls {bad}, which are not control statements of this report")
            for k in (by[r] for r in c.controls):
                served.add(k.id)
                if (k.test["rule"], k.test.get("n_units"), k.test.get("unit")) != (
                        c.test["rule"], c.test.get("n_units"), c.test.get("unit")):
                    raise ValueError(f"control {k.id!r} must apply claim {c.id!r}'s rule to as many units: make "
                                     "it with claim.control(...) on the same seeds")
            failed = [r for r in c.requires if by[r].verdict != HOLDS]
            passing = [f"control {'passes' if by[r].verdict == DOES_NOT_HOLD else 'undecided'}: {r}" for r in c.controls
                       if by[r].verdict != HOLDS]
            if c.measured_verdict is None and (failed or (passing and c.verdict == HOLDS)):
                why = f"setting invalid: {', '.join(failed)}" if failed else "; ".join(passing)
                c = replace(c, verdict=INCONCLUSIVE, measured_verdict=c.verdict, reason=why)
            if (m := c.test.get("decisive")) and m.get("value") is not None:  # a check: round-off, and an exact tie
                tol = TIMING_RTOL if c.id in set(timing) else CHECK_RTOL if c.kind == "check" else VERIFY_RTOL
                gap = abs(m["value"] - m["bound"])  # (a bound met with equality by construction) is no edge
                edge = bool(gap <= 1e-12 + tol * abs(m["value"]) and not (c.kind == "check" and gap == 0))
                c = replace(c, test={**c.test, "knife_edge": edge, "knife_rtol": tol})
            out.append(c)
        if idle := [c.id for c in self.claims if c.kind == "control" and c.id not in served]:
            raise ValueError(f"control statements {idle} are named in no claim's controls=[...]")
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
        from icml26.render import claims_table
        return claims_table(self, kind)

    def to_markdown(self, title: str, header: Mapping[str, Any], figure_dir: str = ".") -> str:
        """report.md (:func:`icml26.render.report_markdown`)."""
        from icml26.render import report_markdown
        return report_markdown(self, title, header, figure_dir)


def _uncontrolled(c: Mapping) -> bool:
    return c.get("kind", "claim") == "claim" and not c.get("controls") and not c.get("no_control")


def counts(claims: Iterable[Mapping]) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` over claim dicts (as stored in result.json; a missing kind counts as claim); claims
    with neither ``controls`` nor ``no_control`` are counted under ``"uncontrolled"``, not ``"claim"``."""
    out: dict[str, dict[str, int]] = {k: {v: 0 for v in VERDICTS} for k in (*KINDS, "uncontrolled")}
    for c in claims:
        out["uncontrolled" if _uncontrolled(c) else c.get("kind", "claim")][c["verdict"]] += 1
    return out


def summary_line(k: Mapping[str, Mapping[str, int]]) -> str:
    """"claims: 3/5 hold (1 does not hold, 1 inconclusive); controls reject 5/6; checks: 4/4 pass; preconditions: 1/1
    hold"; claims without a control arm are counted apart ("uncontrolled claims: 2/4 hold")."""
    n = {kind: sum((k.get(kind) or {}).values()) for kind in (*KINDS, "uncontrolled")}

    def part(kind: str, label: str, word: str) -> str:
        c = k.get(kind) or dict.fromkeys(VERDICTS, 0)
        if kind == "control":
            return f"controls reject {c[HOLDS]}/{n[kind]}"
        rest = [f"{c[v]} {v}" for v in (DOES_NOT_HOLD, INCONCLUSIVE) if c[v]]
        return f"{label}: {c[HOLDS]}/{n[kind]} {word}" + (f" ({', '.join(rest)})" if rest else "")

    parts = [("claim", "claims", "hold")] if n["claim"] or not n["uncontrolled"] else []
    parts += [("uncontrolled", "uncontrolled claims", "hold")] if n["uncontrolled"] else []
    parts += [("control", "", "")] if n["control"] else []
    return "; ".join(part(*p) for p in (*parts, ("check", "checks", "pass"), ("precondition", "preconditions", "hold")))
