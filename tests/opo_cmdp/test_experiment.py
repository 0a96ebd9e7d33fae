"""Smoke test of the quick preset through the core runner: the statements, their kinds, controls and tables."""

import json

import pytest

from icml26.core import VERDICTS
from icml26.opo_cmdp.claims import ARMS, CONTROLS
from icml26.opo_cmdp.experiment import EXPERIMENT, QUICK

KINDS = {
    "nobonus_linear": "precondition",
    "opo_beats_baselines": "claim",
    "optimism_pays": "claim",
    "opo_competitive": "claim",
    "opo_sublinear": "claim",
    "opo_late_level": "claim",
    "cmab_equivalence": "check",
    "mdp_reference": "check",
    "optimal_regret_zero": "check",
    **{cid: "control" for ctl in CONTROLS.values() for cid, _ in ctl},
}


@pytest.fixture(scope="module")
def quick(quick_run):
    run_dir = quick_run("opo_cmdp")
    return run_dir, json.loads((run_dir / "result.json").read_text())


def test_quick_preset_end_to_end(quick):
    run_dir, result = quick
    assert result["slug"] == "opo_cmdp" and result["preset"] == "quick"
    assert result["seeds"] == list(EXPERIMENT.seeds["quick"]) and len(result["seeds"]) >= 3
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":
            assert by_id[cid]["requires"] == ["nobonus_linear"]
            assert by_id[cid]["controls"] == [c for c, _ in CONTROLS[cid]]
            assert by_id[cid]["test"]["n_units"] == len(result["seeds"])
    t = result["budgets"]
    assert t["OPO-CMDP"]["budget"] == t["epsilon-greedy"]["budget"] == t["optimistic greedy"]["budget"] > 0
    assert {"regret", "horizons", "rate_windows", "doubling_windows", "size_sweep", "learned_diagnostics"} <= set(
        result["tables"]
    )
    assert set(result["records"][0]["arms"]) == set(ARMS)
    assert len(result["records"][0]["sweep"]) == len(QUICK.sweep_sizes)
    for name in ("cumulative_regret.png", "report.md"):
        assert (run_dir / name).exists()
