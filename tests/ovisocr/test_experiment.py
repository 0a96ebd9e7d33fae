"""Smoke test of the quick preset (shared session run) and a mutant showing the verdicts can move."""

import copy
import json

from icml26.core import judge_records

KINDS = {
    "cascade_order_breaks_on_2col": "precondition",
    "cascade_tables_below_0.9": "precondition",
    "category_rewards_improve_teds": "claim",
    "category_rewards_improve_order": "claim",
    "category_rewards_keep_text": "claim",
    "e2e_beats_cascade_order": "claim",
    "e2e_beats_cascade_tables": "claim",
    "metrics_match_worked_examples": "check",
    "bootstrap_keeps_layout": "check",
    "sft_loss_decreases": "check",
}
VERDICTS = {"holds", "does not hold", "inconclusive"}


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("ovisocr")
    result = json.loads((run_dir / "result.json").read_text())
    assert result["slug"] == "ovisocr" and result["preset"] == "quick"
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    assert [c["kind"] for c in result["claims"]][:2] == ["precondition", "precondition"]  # judged first
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":
            assert set(by_id[cid]["requires"]) == {"cascade_order_breaks_on_2col", "cascade_tables_below_0.9"}
    for fig in ("metric_bars.png", "training_curves.png", "examples.png"):
        assert (run_dir / fig).exists()
    rec = result["records"][0] if "records" in result else None
    if rec is not None:
        assert set(rec["scores"]) >= {"cascade", "sft_only", "page_rl", "category_rl"}


def _records(run_dir):
    result = json.loads((run_dir / "result.json").read_text())
    return result, result["records"]


def test_mutant_verdicts_move(quick_run):
    """Break the cascade (a perfect reading order on 2-column pages) and the precondition must stop holding;
    break the method (its tables scored 0) and the table claim cannot hold."""
    from icml26.ovisocr.experiment import QUICK

    result, records = _records(quick_run("ovisocr"))
    bad = copy.deepcopy(records)
    for r in bad:
        r["scores"]["cascade"]["2col"]["ReadingOrder"] = 0.0
        r["scores"]["cascade"]["1col"]["ReadingOrder"] = 0.1
    rep = judge_records("ovisocr", QUICK, bad)
    assert rep.by_id()["cascade_order_breaks_on_2col"].verdict == "does not hold"
    worse = copy.deepcopy(records)
    for r in worse:
        r["scores"]["category_rl"]["TEDS"] = 0.0
        r["scores"]["cascade"]["TEDS"] = 0.5
    rep = judge_records("ovisocr", QUICK, worse)
    assert rep.by_id()["e2e_beats_cascade_tables"].verdict != "holds"
    better = copy.deepcopy(records)
    for r in better:
        r["scores"]["category_rl"]["TEDS"] = 1.0
        r["scores"]["cascade"]["TEDS"] = 0.0
    rep = judge_records("ovisocr", QUICK, better)
    assert rep.by_id()["e2e_beats_cascade_tables"].verdict != "does not hold"
