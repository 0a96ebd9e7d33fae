"""Smoke test of the quick preset through the core runner, and judge-level mutants that move verdicts."""

import copy
import json

from icml26.core import VERDICTS, judge_records
from icml26.lifil.experiment import QUICK

KINDS = {
    "finetune_forgets": "precondition",
    "beats_finetune": "claim",
    "beats_lwf_ewc": "claim",
    "no_raw_samples_on_clients": "check",
    "uplink_below_exemplar": "claim",
    "storage_below_exemplar": "claim",
    "flower_matches_simulation": "check",
}


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("lifil")  # the session-wide quick run (tests/conftest.py)
    result = json.loads((run_dir / "result.json").read_text())
    kinds = {c["id"]: c["kind"] for c in result["claims"]}
    want = dict(KINDS)
    if "flower_matches_simulation" not in kinds:  # flwr not installed
        want.pop("flower_matches_simulation")
    assert kinds == want
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in want.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":
            assert by_id[cid]["requires"] == ["finetune_forgets"]
    assert by_id["finetune_forgets"]["verdict"] == "holds"
    assert by_id["beats_finetune"]["test"]["min_effect"] == 0.2
    assert set(result["budgets"]) == {"FedAvg-FT", "FedEWC", "FedLwF", "Exemplar", "Joint", "Li-FIL"}
    assert len({t["budget"] for t in result["budgets"].values()}) == 1  # the same budget for every arm
    assert {"methods", "vs_exemplar", "privatization", "generator_fit"} <= set(result["tables"])
    for name in (
        "accuracy_matrix.png",
        "average_accuracy.png",
        "privatization_curve.png",
        "old_accuracy_over_rounds.png",
        "report.md",
    ):
        assert (run_dir / name).exists()

    records = result["records"]
    # mutant 1: Li-FIL no better than fine-tuning -> the claim does not hold
    mut = copy.deepcopy(records)
    for r in mut:
        r["runs"]["lifil"]["final_acc"] = r["runs"]["finetune"]["final_acc"]
    assert judge_records("lifil", QUICK, mut).by_id()["beats_finetune"].verdict == "does not hold"
    # mutant 2: a setting where fine-tuning does not forget -> claims are 'setting invalid'
    mut = copy.deepcopy(records)
    for r in mut:
        r["runs"]["finetune"]["old_acc"] = 0.6
    got = judge_records("lifil", QUICK, mut).by_id()
    assert got["finetune_forgets"].verdict == "does not hold"
    assert got["beats_finetune"].verdict == "inconclusive" and got["beats_finetune"].reason.startswith("setting")
    # mutant 3: a client that keeps raw samples fails the check
    mut = copy.deepcopy(records)
    mut[0]["runs"]["lifil"]["raw_samples_stored"] = 3
    assert judge_records("lifil", QUICK, mut).by_id()["no_raw_samples_on_clients"].verdict == "does not hold"
