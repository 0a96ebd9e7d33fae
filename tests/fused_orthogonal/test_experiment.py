"""Smoke test of the quick preset (statement ids, kinds, requires), and a mutant with too-narrow intervals."""

import json

import numpy as np

from icml26.core import VERDICTS, run_experiment

KINDS = {
    "tasks_heterogeneous": "precondition",
    "pooling_has_room": "precondition",
    "recovery_separated": "claim",
    "pooling_gain": "claim",
    "pooling_gain_every_cell": "claim",
    "pooling_ratio": "claim",
    "oracle_match": "claim",
    "misspecified_k": "claim",
    "inference": "claim",
    "inference_matches_oracle": "check",
}


def _claims(run_dir):
    return {c["id"]: c for c in json.loads((run_dir / "result.json").read_text())["claims"]}


def test_quick_preset_writes_claims(quick_run):
    run_dir = quick_run("fused_orthogonal")
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    by_id = _claims(run_dir)
    assert by_id["inference_matches_oracle"]["verdict"] == "holds"
    assert by_id["pooling_gain"]["requires"] == ["tasks_heterogeneous", "pooling_has_room"]
    assert by_id["inference"]["requires"] == []
    assert by_id["pooling_gain"]["test"]["unit"] == "seed"
    assert by_id["pooling_gain"]["test"]["n_units"] == len(result["seeds"])
    assert (run_dir / "fusion_path.png").exists() and (run_dir / "rmse_per_cell.png").exists()
    per_study = result["metrics"]["per_study"]
    (cell,) = per_study
    assert len(per_study[cell]) == len(result["seeds"])
    for study in per_study[cell]:
        assert study["oracle"]["ari"] == 1.0 and study["personalized"]["ari"] == 0.0
        assert 0.0 <= study["ada"]["coverage"] <= 1.0
        assert 0.0 <= study["personalized"]["i2"] <= 1.0


def test_mutant_narrow_intervals_fail_inference(tmp_path, monkeypatch):
    """Standard errors of the adaptive estimator scaled by 0.3: the absolute coverage claim must not hold and
    the oracle-match check must fail (the old relative statement could not see a wrong SE shared with the
    oracle)."""
    from scipy.stats import norm

    from icml26.fused_orthogonal.estimator import AdaptiveFusedOrthogonal

    def narrow(self, alpha=0.05):
        z = norm.ppf(1.0 - alpha / 2.0)
        return np.column_stack([self.coef_ - 0.3 * z * self.se_, self.coef_ + 0.3 * z * self.se_])

    monkeypatch.setattr(AdaptiveFusedOrthogonal, "confint", narrow)
    bad = _claims(run_experiment("fused_orthogonal", preset="quick", out=tmp_path))
    assert bad["inference"]["verdict"] == "does not hold"
    assert bad["inference_matches_oracle"]["verdict"] == "does not hold"


def test_i_squared_extremes():
    from icml26.fused_orthogonal.experiment import i_squared

    se = np.full(10, 0.1)
    assert i_squared(np.zeros(10), se) == 0.0  # identical estimates: no heterogeneity
    assert i_squared(np.repeat([0.0, 5.0], 5), se) > 0.99  # two far-apart groups: all heterogeneity
