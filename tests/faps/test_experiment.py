"""Smoke test: the quick preset runs end to end and writes judged claims; mutants move the verdicts."""

import copy
import json
import math

import pytest

from icml26.core import VERDICTS, judge_records
from icml26.faps.experiment import QUICK

PRE = "frequency_rule_beats_random"
KINDS = {
    PRE: "precondition",
    "speed": "claim",
    "equal_wallclock_vs_full": "claim",
    "equal_wallclock_vs_random": "claim",
    "equal_wallclock_heldout_vs_random": "claim",
    "faps_fixed_rule_gain": "claim",
    "equal_steps_heldout_vs_random": "claim",
    "equal_steps": "claim",
    "band_r2_exact_filters": "check",
    "band_r2_known_low_pass": "check",
    "band_r2_detects_low_pass": "check",
    "dual_spectral_bias_training_r2": "claim",
    "dual_spectral_bias_timesteps_r2": "claim",
    "dual_spectral_bias_training_r2_digits": "claim",
    "dual_spectral_bias_timesteps_r2_digits": "claim",
    "limited_data": "claim",
    "equal_budget_charged": "check",
}
REQUIRES_PRE = (
    "equal_wallclock_vs_random", "equal_wallclock_heldout_vs_random", "faps_fixed_rule_gain",
    "equal_steps_heldout_vs_random",
)  # fmt: skip


@pytest.fixture(scope="module")
def quick(quick_run):
    run_dir = quick_run("faps")
    return run_dir, json.loads((run_dir / "result.json").read_text())


def test_quick_preset_writes_claims(quick):
    run_dir, result = quick
    by_id = {c["id"]: c for c in result["claims"]}
    assert {i: c["kind"] for i, c in by_id.items()} == KINDS
    assert result["claims"][0]["id"] == PRE  # the precondition is judged first
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    checks = ("equal_budget_charged", "band_r2_exact_filters", "band_r2_known_low_pass", "band_r2_detects_low_pass")
    for check in checks:
        assert by_id[check]["verdict"] == "holds"  # the checks
    for cid in REQUIRES_PRE:
        c = by_id[cid]
        assert c["requires"] == [PRE]
        if by_id[PRE]["verdict"] != "holds":
            assert c["verdict"] == "inconclusive" and c["reason"] == f"setting invalid: {PRE}"
    for name in ("fd_vs_wallclock", "heldout_and_gate", "band_r2_vs_step", "band_r2_vs_t", "samples"):
        assert (run_dir / f"{name}.png").exists()
    records = result["records"]
    assert len(records) == len(result["seeds"])
    assert list((run_dir.parent / ".artifacts").glob("fd-classifier-*.pt"))  # shared by the seeds
    budget, f = result["config"]["budget_steps"], result["config"]["full_finetune_frac"]
    for r in records:
        arms = r["arms"]
        assert set(arms) == {"full", "faps", "random", "fixed", "heuristic"}
        assert all(math.isfinite(arms[a]["fd"]) and arms[a]["fd"] >= 0 for a in arms)
        assert all(math.isfinite(arms[a]["held_loss"]) and arms[a]["held_loss"] > 0 for a in arms)
        # equal wall-clock: a dropping arm's steps follow from its amortised cost ratio c and the fine-tune share f
        assert arms["full"]["steps"] == budget and r["cost"]["ratio"]["full"] == 1.0
        for a in ("faps", "random", "fixed", "heuristic"):
            assert arms[a]["steps"] == max(1, math.floor(budget / ((1 - f) * r["cost"]["ratio"][a] + f)))
        assert set(r["limited"]) == {"full", "random", "faps"}
        assert set(r["digits16"]) == {"random", "fixed", "faps"}  # the secondary v1 setting (equal steps)
        assert all(r["digits16"][a]["steps"] == result["config"]["digits16_steps"] for a in r["digits16"])
        assert r["equal_steps_faps"]["steps"] == r["equal_steps_random"]["steps"] == budget
        # gate diagnostics over training: logit spread and keep-probability correlations at small and large t
        curve = arms["faps"]["gate_curve"]
        assert len(curve) >= 2 and curve[0]["step"] == 0
        assert curve[0]["logit_sd_t100"] == 0.0  # zero-initialised output layer: uniform at the start
        assert all(-1.0 <= pt["corr_keep_prob_high_share_t100"] <= 1.0 for pt in curve)
        spectral = r["spectral"]
        assert len(spectral["r2_train"]) == len(spectral["r2_steps"]) >= 2
        assert all(v <= 1.0 for row in spectral["r2_by_t"].values() for v in row)  # R^2 <= 1 by definition


def test_precondition_moves_the_faps_vs_random_claims(quick):
    """Mutant: a fixed rule that beats random dropping in every seed lets the FaPS-vs-random claims be judged; one
    that loses makes them inconclusive."""
    result = quick[1]
    for fixed_loss, expect in ((0.0, "holds"), (1e9, "does not hold")):
        records = copy.deepcopy(result["records"])
        for r in records:
            r["arms"]["fixed"]["held_loss"] = fixed_loss
        c = judge_records("faps", QUICK, records, result["seeds"]).by_id()
        assert c[PRE].verdict == expect
        for cid in REQUIRES_PRE:
            assert (c[cid].reason == "") == (expect == "holds")


def test_a_faps_arm_no_better_than_random_fails_the_gain_claim(quick):
    """Mutant: FaPS with random dropping's held-out loss (a gate that learned nothing) cannot reach 80% of a positive
    fixed-rule gain; with the fixed rule's own loss it does."""
    result = quick[1]
    for faps_from, expect in (("random", "does not hold"), ("fixed", "holds")):
        records = copy.deepcopy(result["records"])
        for i, r in enumerate(records):  # a 10-12% fixed-rule gain (varying: equal gains would make no test)
            r["arms"]["fixed"]["held_loss"] = (0.9 - 0.01 * i) * r["arms"]["random"]["held_loss"]
            r["arms"]["faps"]["held_loss"] = r["arms"][faps_from]["held_loss"]
        c = judge_records("faps", QUICK, records, result["seeds"]).by_id()
        assert c[PRE].verdict == "holds"
        assert c["faps_fixed_rule_gain"].verdict == expect


def test_a_predictor_that_is_not_low_pass_fails_the_validation_check(quick):
    """Mutant (issue 19 item 5): the recovery statistic must tell a low-pass predictor from one that is not.  With an
    oracle that returns the exact upper bands of x0 and nothing of the lowest band (high-pass), the validation value
    moves to the other sign and `band_r2_detects_low_pass` fails; the known low-pass denoiser passes."""
    import torch

    from icml26.faps import DDIMScheduler, band_index, dct2, dct_matrix, spectral_tensors
    from icml26.faps.experiment import spectral_validation

    x, _ = spectral_tensors(200, 16, seed=0)
    xp, yp = spectral_tensors(32, 16, seed=1)
    mu = x.mean(0, keepdim=True)
    spec = {"x0": xp, "y": yp, "noise": torch.randn(xp.shape, generator=torch.Generator().manual_seed(0)), "mu": mu}
    m, high = dct_matrix(16), (band_index(16, 16, 4) >= 2).float()

    def high_pass(x_t, abar, x0):
        return (m.T @ (dct2((x0 - mu)[:, 0]) * high) @ m)[:, None] + mu

    good = spectral_validation(x, spec, DDIMScheduler(1000), QUICK)
    bad = spectral_validation(x, spec, DDIMScheduler(1000), QUICK, predictor=high_pass)
    assert good["recovery_gap"] >= 100 and bad["recovery_gap"] < 0
    result = quick[1]
    records = copy.deepcopy(result["records"])
    for r in records:
        r["spectral"]["validation"] = {**r["spectral"]["validation"], "recovery_gap": bad["recovery_gap"]}
    c = judge_records("faps", QUICK, records, result["seeds"]).by_id()
    assert c["band_r2_detects_low_pass"].verdict == "does not hold"
