"""Smoke test: the quick preset runs end to end and writes judged claims."""

import json
import math

from icml26.core import VERDICTS, run_experiment

CLAIMS = {
    "speed",
    "equal_wallclock_vs_full",
    "equal_wallclock_vs_random",
    "equal_steps",
    "dual_spectral_bias_training",
    "dual_spectral_bias_timesteps",
    "dual_spectral_bias_training_digits",
    "dual_spectral_bias_timesteps_digits",
    "limited_data",
}


def test_quick_preset_writes_claims(tmp_path):
    run_dir = run_experiment("faps", preset="quick", out=tmp_path)
    result = json.loads((run_dir / "result.json").read_text())
    assert CLAIMS <= {c["id"] for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for name in ("fd_vs_wallclock", "band_error_vs_step", "band_share_vs_t", "samples"):
        assert (run_dir / f"{name}.png").exists()
    per_seed = result["metrics"]["per_seed"]
    assert len(per_seed) == len(result["seeds"])
    for r in per_seed.values():
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
