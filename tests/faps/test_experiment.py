"""Smoke test: the quick preset runs end to end and writes judged claims."""

import copy
import json
import math

import pytest

from icml26.core import (
    VERDICTS,
    judge_records,  # noqa: E402
)
from icml26.faps.experiment import QUICK

KINDS = {
    "frequency_rule_beats_random": "precondition",
    "speed": "claim",
    "equal_wallclock_vs_full": "claim",
    "equal_wallclock_vs_random": "claim",
    "equal_steps": "claim",
    "dual_spectral_bias_training": "claim",
    "dual_spectral_bias_timesteps": "claim",
    "dual_spectral_bias_training_digits": "claim",
    "dual_spectral_bias_timesteps_digits": "claim",
    "limited_data": "claim",
    "equal_budget_charged": "check",
}


@pytest.fixture(scope="module")
def quick(quick_run):
    run_dir = quick_run("faps")
    return run_dir, json.loads((run_dir / "result.json").read_text())


def test_quick_preset_writes_claims(quick):
    run_dir, result = quick
    by_id = {c["id"]: c for c in result["claims"]}
    assert {i: c["kind"] for i, c in by_id.items()} == KINDS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    assert by_id["equal_budget_charged"]["verdict"] == "holds"  # the check
    rand = by_id["equal_wallclock_vs_random"]
    assert rand["requires"] == ["frequency_rule_beats_random"]
    if by_id["frequency_rule_beats_random"]["verdict"] != "holds":
        assert rand["verdict"] == "inconclusive" and rand["reason"] == "setting invalid: frequency_rule_beats_random"
    assert rand["test"]["tuning"]["baselines"]["random drop FD"]["under_tuned"]  # recorded budgets
    for name in ("fd_vs_wallclock", "band_error_vs_step", "band_share_vs_t", "samples"):
        assert (run_dir / f"{name}.png").exists()
    records = result["records"]
    assert len(records) == len(result["seeds"])
    assert list((run_dir.parent / ".artifacts").glob("fd-classifier-*.pt"))  # shared by the seeds
    for r in records:
        arms = r["arms"]
        assert all(math.isfinite(arms[a]["fd"]) and arms[a]["fd"] >= 0 for a in arms)
        # equal wall-clock: a dropping arm's steps follow from its measured cost ratio c and the fine-tune share f
        budget, f = result["config"]["budget_steps"], result["config"]["full_finetune_frac"]
        assert arms["full"]["steps"] == budget and r["cost"]["ratio"]["full"] == 1.0
        for a in ("faps", "random", "heuristic"):
            assert arms[a]["steps"] == max(1, math.floor(budget / ((1 - f) * r["cost"]["ratio"][a] + f)))
        assert arms["min_snr"]["steps"] == budget  # same network work as a full step
        spectral = r["spectral"]
        assert len(spectral["band_errors_moderate"]) == len(spectral["band_steps"]) >= 2
        assert all(0.0 <= v <= 1.0 for v in spectral["high_share_by_t"].values())


def test_precondition_moves_the_random_claim(quick):
    """Mutant: a frequency rule that beats random dropping in every seed lets the FaPS-vs-random claim be judged;
    one that loses makes it inconclusive."""
    result = quick[1]
    for heuristic_fd, expect in ((0.0, "holds"), (1e9, "does not hold")):
        records = copy.deepcopy(result["records"])
        for r in records:
            r["arms"]["heuristic"]["fd"] = heuristic_fd
        c = judge_records("faps", QUICK, records, result["seeds"]).by_id()
        assert c["frequency_rule_beats_random"].verdict == expect
        assert (c["equal_wallclock_vs_random"].reason == "") == (expect == "holds")
