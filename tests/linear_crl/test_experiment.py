"""Smoke test of the quick preset through the core runner; determinism; a pruning mutant moves a verdict."""

import copy
import dataclasses
import json
from dataclasses import replace

import numpy as np

from icml26.core import (
    VERDICTS,
    judge_records,  # noqa: E402
)
from icml26.linear_crl import CREATOR
from icml26.linear_crl import experiment as exp_mod
from icml26.linear_crl.experiment import QUICK, measure

KINDS = {
    "pooled_ica_fails_d3": "precondition",
    "pooled_ica_fails_d5": "precondition",
    "friendly_baseline_recovers": "precondition",
    "weak_recovery_d3": "claim",
    "beats_lingcrel_locr2_d3": "claim",
    "lower_shd_d3": "claim",
    "weak_recovery_d5": "claim",
    "beats_lingcrel_locr2_d5": "claim",
    "lower_shd_d5": "claim",
    "friendly_recovery": "claim",
    "friendly_non_inferior": "claim",
    "oracle_exact_d3": "check",
    "oracle_exact_d5": "check",
    "post_ica_invariance": "check",
    "metric_closed_forms": "check",
    "same_ica_for_both_environment_methods": "check",
}


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("linear_crl")
    result = json.loads((run_dir / "result.json").read_text())
    assert result["slug"] == "linear_crl" and result["preset"] == "quick"
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
    for d in (3, 5):
        for cid in (f"weak_recovery_d{d}", f"beats_lingcrel_locr2_d{d}", f"lower_shd_d{d}"):
            assert by_id[cid]["requires"] == [f"pooled_ica_fails_d{d}"]
            assert by_id[cid]["test"]["unit"] == "seed" and by_id[cid]["test"]["n_units"] == len(result["seeds"])
    assert by_id["friendly_non_inferior"]["requires"] == ["friendly_baseline_recovers"]
    assert by_id["friendly_recovery"]["test"]["n_units"] == len(result["seeds"])  # d values averaged per seed
    assert by_id["pooled_ica_fails_d5"]["verdict"] == "holds"
    assert by_id["weak_recovery_d5"]["verdict"] == "holds"
    assert by_id["beats_lingcrel_locr2_d5"]["test"]["min_effect"] == 0.15
    assert set(result["budgets"]) >= {"CREATOR", "LiNGCReL-like", "pooled ICA"}
    assert result["budgets"]["CREATOR"]["budget"] == result["budgets"]["LiNGCReL-like"]["budget"]
    assert {"recovery", "learned_diagnostics"} <= set(result["tables"])
    for name in ("locr2_vs_envs.png", "estimated_vs_true_graph.png", "report.md"):
        assert (run_dir / name).exists()


def test_measure_is_deterministic():
    cfg = replace(QUICK, dims=(3,), env_factors=(2,), lingam=False)
    a, b = measure(cfg, 3), measure(cfg, 3)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _judged(cfg, records):
    return judge_records("linear_crl", cfg, records).by_id()


def test_mutants_move_verdicts(monkeypatch):
    """(1) Pruning dropped in CREATOR (every earlier node becomes a parent): the exact-rows check fails and SHD
    rises. (2) Environment labels shuffled (no heterogeneity left): the recovery claim no longer holds.
    (3) A setting where pooled ICA already succeeds: the claims become 'setting invalid'."""
    cfg = replace(QUICK, dims=(5,), env_factors=(2,), regimes=("env",), lingam=False)
    records = [measure(cfg, s) for s in range(5)]
    base = _judged(cfg, records)
    assert base["lower_shd_d5"].verdict == "holds" and base["pooled_ica_fails_d5"].verdict == "holds"
    assert base["oracle_exact_d5"].verdict == "holds" and base["weak_recovery_d5"].verdict == "holds"

    with monkeypatch.context() as mp:
        mp.setattr(CREATOR, "_prune", lambda self, C: (list(range(C.shape[1] - 1)), np.zeros(C.shape[1] - 1)))
        mutant = [measure(cfg, s) for s in range(5)]
    assert np.mean([c["creator"]["shd"] for r in mutant for c in r["cells"]]) > 2
    assert _judged(cfg, mutant)["oracle_exact_d5"].verdict == "does not hold"

    real = exp_mod.make_linear_crl_data

    def shuffled(**kw):
        Xs, truth = real(**kw)
        idx = np.random.default_rng(0).permutation(sum(len(X) for X in Xs))
        X, Y = np.vstack(Xs)[idx], np.vstack(truth.latents)[idx]
        return np.split(X, len(Xs)), dataclasses.replace(truth, latents=np.split(Y, len(Xs)))

    with monkeypatch.context() as mp:
        mp.setattr(exp_mod, "make_linear_crl_data", shuffled)
        mutant = [measure(cfg, s) for s in range(5)]
    got = _judged(cfg, mutant)
    assert got["pooled_ica_fails_d5"].verdict == "holds" and got["weak_recovery_d5"].verdict == "does not hold"

    easy = copy.deepcopy(records)
    for r in easy:
        for c in r["cells"]:
            c["pooled"]["locr2"] = c["creator"]["locr2"]
    got = _judged(cfg, easy)["weak_recovery_d5"]
    assert got.verdict == "inconclusive" and got.reason == "setting invalid: pooled_ica_fails_d5"
