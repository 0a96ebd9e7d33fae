"""Smoke test of the quick preset (statement ids and kinds, controls, held-out seeds; checks hold)."""

import json

import numpy as np

from icml26.core import VERDICTS
from icml26.crel import claims as E

KINDS = {
    "risky_generator_worse_synthetic": "precondition",
    "average_matched_synthetic": "precondition",
    "risky_generator_worse_digits": "precondition",
    "average_matched_digits": "precondition",
    "coverage": "check",
    "coverage_upper": "check",
    "informativeness": "claim",
    "informativeness_ball": "control",
    "informativeness_global": "control",
    "informativeness_oracle": "claim",
    "informativeness_oracle_ball": "control",
    "informativeness_oracle_global": "control",
    "informativeness_digits": "claim",
    "informativeness_digits_ball": "control",
    "informativeness_digits_global": "control",
    "optimizer_grid": "check",
    "interpretability_synthetic": "claim",
    "interpretability_synthetic_centre": "control",
    "interpretability_digits": "claim",
    "interpretability_digits_centre": "control",
    "conformal_rank": "check",
    "optimizer_linear": "check",
    "optimizer_below_in_set_samples": "check",
}


def test_quick_preset_runs_and_judges_every_claim(quick_run):
    run_dir = quick_run("crel")
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] == "holds" for c in result["claims"] if c["kind"] == "check")
    assert by_id["interpretability_synthetic"]["requires"] == [
        "risky_generator_worse_synthetic",
        "average_matched_synthetic",
    ]
    assert by_id["interpretability_digits"]["requires"] == ["risky_generator_worse_digits", "average_matched_digits"]
    # every claim has a control statement (evidence v3); the reported seeds are held out from the dev seeds
    for c in result["claims"]:
        if c["kind"] == "claim":
            assert c["controls"] and all(by_id[k]["kind"] == "control" for k in c["controls"]), c["id"]
    assert not set(result["seeds"]) & set(result["dev_seeds"]) and result["tuning"]
    assert by_id["coverage"]["test"]["unit"] == "calibration" and by_id["coverage"]["test"]["n_units"] == 600
    # interpretability is judged against the trivial rules worst-of-K and the alpha-quantile (and the average metric)
    for cid in ("interpretability_synthetic", "interpretability_digits"):
        assert {b["name"] for b in by_id[cid]["baselines"]} == {
            "worst-of-K separation",
            "average-metric separation",
            "alpha-quantile separation",
        }
    # informativeness is controlled by the ball and by the one-covariance (MAPIE-style) ellipse
    for cid in ("informativeness", "informativeness_oracle", "informativeness_digits"):
        assert by_id[cid]["controls"] == [f"{cid}_ball", f"{cid}_global"]
    assert (run_dir / "prediction_set_2d.png").exists()
    assert (run_dir / "coverage_vs_alpha.png").exists()
    assert len(result["metrics"]["s1"]) == len(result["seeds"])


def test_exact_rank_is_independent_of_the_library():
    for n in range(20, 60):
        for a in (0.05, 0.1, 0.2):
            assert E.exact_rank(n, a) == int(np.ceil(round((n + 1) * (1 - a), 9)))
