import json

from icml26.core import VERDICTS, run_experiment

CLAIMS = {
    "coverage",
    "informativeness",
    "optimizer_grid",
    "optimizer_linear",
    "interpretability_synthetic",
    "interpretability_digits",
}


def test_quick_preset_runs_and_judges_every_claim(tmp_path):
    run_dir = run_experiment("crel", preset="quick", out=tmp_path)
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"] for c in result["claims"]} == CLAIMS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    assert (run_dir / "prediction_set_2d.png").exists()
    assert (run_dir / "coverage_vs_alpha.png").exists()
    assert len(result["metrics"]["s1"]) == len(result["seeds"])
