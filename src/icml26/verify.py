"""Compare a run with a reference run: did every verdict and every judged number reproduce?

``icml26 verify SLUG`` runs a preset and calls :func:`compare` against ``results/SLUG/result.json``.  What is
compared, statement by statement (matched by id):

* the **verdict**, exactly, for every kind (a check that passed must pass; a claim that held must hold);
* the **judged numbers**: the method's mean, each baseline's mean and the mean advantage over it.  A number
  reproduces when ``|now - ref| <= atol + rtol * |ref|``.  Checks use ``check_rtol`` (default ``1e-6``:
  they are deterministic up to floating-point round-off); claims and preconditions use ``rtol`` (default 0.1:
  stochastic training on another machine, BLAS or thread count moves them a little).  Statements whose numbers
  are wall-clock measurements (an experiment's ``timing_statements``: speed ratios, throughput, arms trained
  for an equal wall-clock budget) use ``timing_rtol`` (default 0.5): machine load moves a timing far more than
  round-off moves a loss.  Their verdicts must still match exactly.

A statement present on one side only is a difference too.  p-values are not compared (they move with the
numbers, and the verdict already says whether they crossed ``alpha``).

:func:`knife_edges` lists the statements whose verdict sits within that tolerance of flipping: the decisive number a
judge stores (``test["decisive"]``: an interval end, the fewest wins, the worst value) is closer to its bound than the
tolerance allows a number to move.  ``verify`` prints them even when everything reproduces.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["compare", "numbers_of", "knife_edges"]


def numbers_of(statement: Mapping[str, Any]) -> dict[str, float]:
    """The judged numbers of one stored statement: ``{"method mean": x, "<baseline> mean": y, ...}``."""
    out = {}
    m = statement.get("method") or {}
    if isinstance(m.get("mean"), (int, float)):
        out[f"{m.get('name', 'method')} mean"] = float(m["mean"])
    for b in statement.get("baselines") or []:
        if isinstance(b.get("mean"), (int, float)):
            out[f"{b['name']} mean"] = float(b["mean"])
        if isinstance(b.get("mean_advantage"), (int, float)):
            out[f"advantage over {b['name']}"] = float(b["mean_advantage"])
    return out


def compare(
    reference: Mapping[str, Any],
    result: Mapping[str, Any],
    *,
    rtol: float = 0.1,
    check_rtol: float = 1e-6,
    atol: float = 1e-9,
    timing_statements: tuple[str, ...] | list[str] = (),
    timing_rtol: float = 0.5,
) -> list[dict]:
    """Every difference between two result.json dicts beyond tolerance (empty list: the run reproduces).

    Each difference is ``{"id", "kind", "what", "reference", "now", "tolerance"}``.
    """
    for name, v in (("rtol", rtol), ("check_rtol", check_rtol), ("atol", atol), ("timing_rtol", timing_rtol)):
        if not (isinstance(v, (int, float)) and v >= 0 and math.isfinite(v)):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    ref = {c["id"]: c for c in reference["claims"]}
    now = {c["id"]: c for c in result["claims"]}
    diffs: list[dict] = []
    if reference.get("config") != result.get("config"):
        diffs.append(
            {"id": "-", "kind": "-", "what": "config", "reference": "differs", "now": "differs", "tolerance": "equal"}
        )
    for cid in sorted(ref.keys() | now.keys()):
        a, b = ref.get(cid), now.get(cid)
        kind = (a if a is not None else b or {}).get("kind", "claim")
        if a is None or b is None:
            diffs.append(
                {
                    "id": cid,
                    "kind": kind,
                    "what": "statement",
                    "reference": "present" if a else "absent",
                    "now": "present" if b else "absent",
                    "tolerance": "present on both",
                }
            )
            continue
        if a["verdict"] != b["verdict"]:
            diffs.append(
                {
                    "id": cid,
                    "kind": kind,
                    "what": "verdict",
                    "reference": a["verdict"],
                    "now": b["verdict"],
                    "tolerance": "exact",
                }
            )
        tol = timing_rtol if cid in timing_statements else check_rtol if kind == "check" else rtol
        xa, xb = numbers_of(a), numbers_of(b)
        for what in sorted(xa.keys() | xb.keys()):
            if what not in xa or what not in xb:
                diffs.append(
                    {
                        "id": cid,
                        "kind": kind,
                        "what": what,
                        "reference": xa.get(what),
                        "now": xb.get(what),
                        "tolerance": "present on both",
                    }
                )
            elif abs(xb[what] - xa[what]) > atol + tol * abs(xa[what]):
                diffs.append(
                    {
                        "id": cid,
                        "kind": kind,
                        "what": what,
                        "reference": xa[what],
                        "now": xb[what],
                        "tolerance": f"rel {tol:g}",
                    }
                )
    return diffs


def knife_edges(
    result: Mapping[str, Any],
    *,
    rtol: float = 0.1,
    timing_statements: tuple[str, ...] | list[str] = (),
    timing_rtol: float = 0.5,
    atol: float = 1e-12,
    check_rtol: float = 1e-6,
) -> list[dict]:
    """Statements of ``result`` whose decisive number lies within the verify tolerance of its bound
    (``|value - bound| <= atol + tol * |value|``; a check with ``check_rtol``, and a check that meets its bound
    exactly, by construction, is not listed), each as ``{"id", "kind", "verdict", "statistic", "value", "bound",
    "tolerance"}``."""
    out = []
    for c in result["claims"]:
        m = (c.get("test") or {}).get("decisive") or {}
        if not isinstance(m.get("value"), (int, float)):
            continue
        check = c.get("kind") == "check"
        tol = timing_rtol if c["id"] in timing_statements else check_rtol if check else rtol
        gap = abs(m["value"] - m["bound"])
        if gap <= atol + tol * abs(m["value"]) and not (check and gap == 0):
            out.append(
                {
                    "id": c["id"],
                    "kind": c.get("kind", "claim"),
                    "verdict": c["verdict"],
                    "statistic": m.get("statistic", ""),
                    "value": float(m["value"]),
                    "bound": float(m["bound"]),
                    "tolerance": f"rel {tol:g}",
                }
            )
    return out
