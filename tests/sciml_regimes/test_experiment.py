"""Smoke test of the quick preset (the session-wide run), and mutants that must move verdicts."""

import copy
import json

from icml26.core import VERDICTS, judge_records
from icml26.sciml_regimes.experiment import QUICK

KINDS = {
    "lbfgs_easy_corner": "precondition",
    "three_regimes_appear": "claim",
    "regime_map_stable": "claim",
    "curriculum_helps_under": "claim",
    "curriculum_halves_error_under": "claim",
    "more_data_beats_optimizer_over": "claim",
    "cka_well_above_over": "claim",
    "sharper_under_than_well": "claim",
    "exact_solutions_zero_residual": "check",
    "hessian_closed_forms": "check",
    "cka_invariances": "check",
    "equal_budget": "check",
}


def _result(quick_run):
    run_dir = quick_run("sciml_regimes")
    return run_dir, json.loads((run_dir / "result.json").read_text())


def test_quick_preset_end_to_end(quick_run):
    run_dir, result = _result(quick_run)
    assert result["slug"] == "sciml_regimes" and result["preset"] == "quick"
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":
            assert by_id[cid]["requires"] == ["lbfgs_easy_corner"]
    assert by_id["lbfgs_easy_corner"]["verdict"] == "holds"
    assert by_id["curriculum_helps_under"]["test"]["unit"] == "seed"
    assert by_id["curriculum_helps_under"]["test"]["n_units"] == len(result["seeds"])
    tuning = result["budgets"]
    assert {"L-BFGS", "Adam", "Adam+L-BFGS", "curriculum"} <= set(tuning)
    assert len({tuning[a]["budget"] for a in ("L-BFGS", "Adam", "Adam+L-BFGS", "curriculum")}) == 1
    assert {"cells", "regimes", "sharpness_misleads", "sharpness_vs_error"} <= set(result["tables"])
    for name in ("regime_map.png", "metric_heatmaps.png", "loss_curves.png", "report.md"):
        assert (run_dir / name).exists()


def _records(result):
    return [r["record"] if "record" in r else r for r in result["records"]]


def test_mutants_move_the_verdicts(quick_run):
    _, result = _result(quick_run)
    records = copy.deepcopy(_records(result))
    seeds = result["seeds"]
    base = {c["id"]: c for c in result["claims"]}

    # a broken trainer in the easy corner: the precondition fails and every claim becomes inconclusive
    broken = copy.deepcopy(records)
    for r in broken:
        for c in r["cells"]:
            if c["coefficient"] == min(QUICK.betas) and c["n_f"] == max(QUICK.n_fs):
                c["arms"]["lbfgs"]["train_loss"] = 1e-2
    out = judge_records("sciml_regimes", QUICK, broken, seeds).by_id()
    assert out["lbfgs_easy_corner"].verdict == "does not hold"
    assert all(out[c].verdict == "inconclusive" for c, k in KINDS.items() if k == "claim")

    # a curriculum that is 10x worse than L-BFGS everywhere cannot "help"; a CKA blind to the regime (all equal)
    # cannot separate Well from Over
    worse = copy.deepcopy(records)
    for r in worse:
        for c in r["cells"]:
            c["arms"]["curriculum"]["test_error"] = 10 * c["arms"]["lbfgs"]["test_error"]
            c["metrics"]["cka"] = 0.5
    out = judge_records("sciml_regimes", QUICK, worse, seeds).by_id()
    assert out["curriculum_helps_under"].verdict == "does not hold"
    assert out["cka_well_above_over"].verdict == "does not hold"
    # and one that is 100x better does (when Under-Trained cells exist)
    better = copy.deepcopy(records)
    for i, r in enumerate(better):
        for c in r["cells"]:
            c["arms"]["curriculum"]["test_error"] = c["arms"]["lbfgs"]["test_error"] / (100 + i)
    assert "(0 by" not in base["curriculum_helps_under"]["statement"]  # the quick grid has Under-Trained cells
    assert judge_records("sciml_regimes", QUICK, better, seeds).by_id()["curriculum_helps_under"].verdict == "holds"
