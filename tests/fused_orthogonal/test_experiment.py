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
    "chaining_unguarded": "precondition",
    "recovery_many_tasks": "claim",
    "many_tasks_no_worse": "claim",
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
    assert by_id["recovery_many_tasks"]["requires"] == ["chaining_unguarded"]
    assert by_id["oracle_match"]["test"]["name"] == "paired bootstrap (one-sided)"
    tuning = result["budgets"] if "budgets" in result else result["metrics"].get("tuning", {})
    if tuning:  # equal grids for the method and UniformFusion
        assert tuning["ada"]["configs"] == tuning["uniform"]["configs"] > 1
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
    """Standard errors of the adaptive estimator scaled by 0.3 (through the whole quick preset): the oracle-match
    check must fail.  The quick preset has only ~8 cluster intervals, too few to power the coverage claim; its
    mutant is the >= 200-interval test below."""
    from icml26.fused_orthogonal.estimator import AdaptiveFusedOrthogonal

    fit = AdaptiveFusedOrthogonal._fit_scores

    def narrow(self, scores):
        fit(self, scores)
        self.se_, self.cluster_se_ = 0.3 * self.se_, 0.3 * self.cluster_se_

    monkeypatch.setattr(AdaptiveFusedOrthogonal, "_fit_scores", narrow)
    run_dir = run_experiment("fused_orthogonal", preset="quick", out=tmp_path)
    bad = _claims(run_dir)
    assert bad["inference_matches_oracle"]["verdict"] == "does not hold"
    assert json.loads((run_dir / "result.json").read_text())["metrics"]["cluster_coverage"]["coverage"] < 1.0


def _cluster_intervals(se_scale, n_studies=70):
    """Cluster-level coverage indicators of the adaptive estimator over >= 200 intervals (3 linear clusters)."""
    from sklearn.linear_model import LinearRegression

    from icml26.fused_orthogonal import AdaptiveFusedOrthogonal, PLRScore, TaskData, cross_fit_scores
    from icml26.fused_orthogonal.experiment import cluster_coverage

    covered = []
    for s in range(n_studies):
        rng = np.random.default_rng(s)
        labels = np.arange(6) % 3
        theta = np.array([-1.0, 0.0, 1.0])[labels]
        tasks = []
        for j in range(6):
            x = rng.normal(size=(150, 2))
            d = x[:, 0] + rng.normal(size=150)
            tasks.append(TaskData(theta[j] * d + x[:, 1] + rng.normal(size=150), d, x))
        scores = cross_fit_scores(tasks, PLRScore(LinearRegression(), LinearRegression()), random_state=s)
        est = AdaptiveFusedOrthogonal().fit_scores(scores)
        est.cluster_se_ = se_scale * est.cluster_se_
        covered += cluster_coverage(est, theta)
    return covered


def test_coverage_claim_fails_with_standard_errors_scaled_by_075_and_150():
    """The two-sided coverage judge over >= 200 intervals: correct SEs hold; 0.75 x SE (under-coverage) and
    1.5 x SE (over-coverage) do not."""
    from icml26.fused_orthogonal.experiment import judge_coverage

    verdicts = {}
    for scale in (1.0, 0.75, 1.5):
        cov = _cluster_intervals(scale)
        assert len(cov) >= 200
        verdicts[scale] = judge_coverage("inference", cov).verdict
    assert verdicts == {1.0: "holds", 0.75: "does not hold", 1.5: "does not hold"}


def test_i_squared_extremes():
    from icml26.fused_orthogonal.experiment import i_squared

    se = np.full(10, 0.1)
    assert i_squared(np.zeros(10), se) == 0.0  # identical estimates: no heterogeneity
    assert i_squared(np.repeat([0.0, 5.0], 5), se) > 0.99  # two far-apart groups: all heterogeneity
