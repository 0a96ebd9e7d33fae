"""Smoke test of the quick preset (statement ids and kinds; checks hold) and an off-by-one rank mutant."""

import json

from icml26.core import VERDICTS, run_experiment

KINDS = {
    "risky_generator_worse_synthetic": "precondition",
    "risky_generator_worse_digits": "precondition",
    "coverage_e2e": "claim",
    "coverage_e2e_upper": "claim",
    "informativeness": "claim",
    "optimizer_grid": "claim",
    "interpretability_synthetic": "claim",
    "interpretability_digits": "claim",
    "coverage": "check",
    "optimizer_linear": "check",
    "optimizer_below_in_set_samples": "check",
}

SMALL = dict(
    digits=False,
    n_train=300,
    train_steps=50,
    n_cal=100,
    n_test=50,
    n_interp_x=2,
    n_volume_x=4,
    n_mc=100,
    n_grid_instances=1,
    n_linear_instances=1,
    n_splits=5,
    e2e_calibrations=40,
    e2e_n_test=50,
)


def _claims(run_dir):
    return {c["id"]: c for c in json.loads((run_dir / "result.json").read_text())["claims"]}


def test_quick_preset_runs_and_judges_every_claim(quick_run):
    run_dir = quick_run("crel")
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] == "holds" for c in result["claims"] if c["kind"] == "check")
    assert by_id["interpretability_synthetic"]["requires"] == ["risky_generator_worse_synthetic"]
    assert by_id["interpretability_digits"]["requires"] == ["risky_generator_worse_digits"]
    assert by_id["coverage_e2e"]["test"]["unit"] == "seed" and by_id["coverage_e2e"]["test"]["n_units"] == 3
    assert (run_dir / "prediction_set_2d.png").exists()
    assert (run_dir / "coverage_vs_alpha.png").exists()
    assert len(result["metrics"]["s1"]) == len(result["seeds"])


def test_rank_off_by_one_fails_the_coverage_check_and_claim(tmp_path, monkeypatch):
    """The threshold taken one rank too low (k - 1): the exact rank check and the end-to-end claim both fail,
    while the correct code passes both (the old +/-0.01 band over re-splits let this through)."""
    import icml26.crel._reliability as rel

    good = _claims(run_experiment("crel", preset="quick", seeds=2, out=tmp_path / "good", overrides=SMALL))
    orig = rel._rank
    monkeypatch.setattr(rel, "_rank", lambda n, alpha: orig(n, alpha) - 1)
    bad = _claims(run_experiment("crel", preset="quick", seeds=2, out=tmp_path / "bad", overrides=SMALL))
    assert good["coverage"]["verdict"] == "holds" and bad["coverage"]["verdict"] == "does not hold"
    assert good["coverage_e2e"]["verdict"] != "does not hold"
    assert bad["coverage_e2e"]["verdict"] == "does not hold"
    assert bad["coverage_e2e"]["method"]["mean"] < 0.9
