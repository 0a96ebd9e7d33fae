"""Smoke test: the quick preset runs end to end and writes judged claims."""

import json

from icml26.core import VERDICTS, run_experiment

CLAIMS = {
    "recovery_separated",
    "pooling_gain",
    "pooling_gain_every_cell",
    "pooling_ratio",
    "oracle_match",
    "misspecified_k",
    "inference",
}


def test_quick_preset_writes_claims(tmp_path):
    run_dir = run_experiment("fused_orthogonal", preset="quick", out=tmp_path)
    result = json.loads((run_dir / "result.json").read_text())
    ids = {c["id"] for c in result["claims"]}
    assert CLAIMS <= ids
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    assert (run_dir / "fusion_path.png").exists() and (run_dir / "rmse_per_cell.png").exists()
    per_study = result["metrics"]["per_study"]
    (cell,) = per_study
    assert len(per_study[cell]) == len(result["seeds"])
    for study in per_study[cell]:
        assert study["oracle"]["ari"] == 1.0 and study["personalized"]["ari"] == 0.0
        assert 0.0 <= study["ada"]["coverage"] <= 1.0
