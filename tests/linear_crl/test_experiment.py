"""Smoke test of the quick preset through the core runner; determinism; a pruning mutant moves a verdict."""

import json
from dataclasses import replace

import numpy as np

from icml26.core import VERDICTS, judge_records
from icml26.linear_crl import CREATOR
from icml26.linear_crl.experiment import EXPERIMENT, QUICK, measure

CLAIMS = ("recovery_mcc", "beats_ica_mcc", "lower_shd")
CONTROLS = {
    "recovery_mcc": ("env0_ica", "lingcrel"),
    "beats_ica_mcc": ("lingcrel",),
    "lower_shd": ("random_pruning",),
}
PAIRS = [(c, d) for d in (3, 5) for c in CLAIMS if not (c == "lower_shd" and d < 5)]  # SHD judged at d >= 5
KINDS = {
    **{f"single_env_ica_fails_d{d}": "precondition" for d in (3, 5)},
    "friendly_baseline_recovers": "precondition",
    **{f"{c}_d{d}": "claim" for c, d in PAIRS},
    **{f"{c}_d{d}_ctl_{a}": "control" for c, d in PAIRS for a in CONTROLS[c]},
    "disentanglement_gain_d5": "claim",
    "disentanglement_gain_d5_ctl_random_intersection": "control",
    "friendly_recovery": "claim",
    "friendly_recovery_ctl_env0_ica": "control",
    "oracle_exact_d3": "check",
    "oracle_exact_d5": "check",
    "post_ica_invariance": "check",
    "metric_closed_forms": "check",
    "same_ica_rows_for_environment_arms": "check",
    "best_relabelling_shd_le_matched": "check",
}


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("linear_crl")
    result = json.loads((run_dir / "result.json").read_text())
    assert result["slug"] == "linear_crl" and result["preset"] == "quick"
    assert result["seeds"] == list(EXPERIMENT.seeds["quick"]) and len(result["seeds"]) >= 3
    assert not set(result["seeds"]) & set(result["dev_seeds"])
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":
            assert by_id[cid]["controls"], cid
    for c, d in PAIRS:
        cid = f"{c}_d{d}"
        assert by_id[cid]["requires"] == [f"single_env_ica_fails_d{d}"]
        assert by_id[cid]["test"]["unit"] == "seed" and by_id[cid]["test"]["n_units"] == len(result["seeds"])
    assert by_id["friendly_recovery"]["requires"] == ["friendly_baseline_recovers"]
    assert by_id["friendly_recovery"]["test"]["n_units"] == len(result["seeds"])  # d values averaged per seed
    assert by_id["beats_ica_mcc_d5"]["test"]["min_effect"] == QUICK.mcc_margin
    assert by_id["lower_shd_d5"]["test"]["min_effect"] == QUICK.shd_margin_pairs * 10  # d=5: 10 node pairs
    assert set(result["budgets"]) >= {"CREATOR", "LiNGCReL-like", "pooled ICA", "env-0 ICA"}
    assert result["budgets"]["CREATOR"]["budget"] == result["budgets"]["LiNGCReL-like"]["budget"]
    assert {"recovery", "disentanglement", "learned_diagnostics"} <= set(result["tables"])
    for name in ("mcc_vs_envs.png", "estimated_vs_true_graph.png", "report.md"):
        assert (run_dir / name).exists()


def test_measure_is_deterministic():
    cfg = replace(QUICK, dims=(3,), env_factors=(2,), lingam=False)
    a, b = measure(cfg, 3), measure(cfg, 3)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_pruning_mutant_moves_the_shd_claim(monkeypatch):
    """Pruning dropped in CREATOR (every earlier node becomes a parent): the exact-rows check fails and CREATOR's
    SHD is no longer shown to be below the complete DAG's in its order and the empty graph's."""
    cfg = replace(QUICK, dims=(5,), env_factors=(2,), regimes=("env",), lingam=False)
    seeds = list(EXPERIMENT.dev_seeds[:5])
    records = [measure(cfg, s) for s in seeds]
    base = judge_records(EXPERIMENT, cfg, records, seeds).by_id()
    assert base["lower_shd_d5"].verdict != "does not hold" and base["oracle_exact_d5"].verdict == "holds"
    with monkeypatch.context() as mp:
        mp.setattr(CREATOR, "_prune", lambda self, C: (list(range(C.shape[1] - 1)), np.zeros(C.shape[1] - 1)))
        mutant = [measure(cfg, s) for s in seeds]
    assert np.mean([c["creator"]["shd_best"] for r in mutant for c in r["cells"]]) > 2
    got = judge_records(EXPERIMENT, cfg, mutant, seeds).by_id()
    assert got["oracle_exact_d5"].verdict == "does not hold"
    assert got["lower_shd_d5"].verdict == "does not hold"  # CREATOR's graph is now the complete-DAG baseline
