"""Smoke test of the quick preset through the core runner; mutants move verdicts."""

import copy
import json

import numpy as np
import pytest

from icml26.core import (
    VERDICTS,
    judge_records,  # noqa: E402
)
from icml26.opo_cmdp import OPOCMDP, GreedyPlugIn, make_classes, run
from icml26.opo_cmdp.experiment import QUICK, _make, _slope

KINDS = {
    "greedy_misled": "precondition",
    "opo_sublinear": "claim",
    "opo_beats_plugin": "claim",
    "cmab_equivalence": "check",
    "optimal_regret_zero": "check",
}


@pytest.fixture(scope="module")
def quick(quick_run):
    run_dir = quick_run("opo_cmdp")
    return run_dir, json.loads((run_dir / "result.json").read_text())


def _judged(cfg, records):
    return judge_records("opo_cmdp", cfg, records).by_id()


def test_quick_preset_end_to_end(quick):
    run_dir, result = quick
    assert result["slug"] == "opo_cmdp" and result["preset"] == "quick"
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":
            assert by_id[cid]["requires"] == ["greedy_misled"]
            assert by_id[cid]["test"]["unit"] == "seed" and by_id[cid]["test"]["n_units"] == len(result["seeds"])
    assert by_id["greedy_misled"]["verdict"] == "holds"
    assert by_id["opo_sublinear"]["verdict"] == "holds"
    t = result["budgets"]
    assert t["OPO-CMDP"]["budget"] == t["epsilon-greedy"]["budget"]
    assert {"regret", "learned_diagnostics"} <= set(result["tables"])
    for name in ("cumulative_regret.png", "report.md"):
        assert (run_dir / name).exists()


def test_mutants_move_verdicts(quick):
    """(1) OPO-CMDP that does not learn (eta -> 0: the uniform policy): the sublinear claim no longer holds and
    it loses the k-of-n comparison. (2) No misleading decoys: greedy plug-in escapes, the precondition fails and
    the claims become 'setting invalid'."""
    _, result = quick
    cfg, records = QUICK, result["records"]
    frozen, honest = copy.deepcopy(records), copy.deepcopy(records)
    for seed, (r1, r2) in enumerate(zip(frozen, honest)):
        env, F, P, _ = _make(cfg, seed)
        cum = run(env, OPOCMDP(F, P, cfg.n_layers, cfg.n_states, cfg.n_actions, eta=1e-9), cfg.T, seed).cum_regret
        r1["arms"]["opo"].update(final=float(cum[-1]), slope=_slope(cum, cfg.slope_from))
        F0, P0, _ = make_classes(env, n_decoys=cfg.n_decoys, seed=seed, mislead="none")
        cum = run(env, GreedyPlugIn(F0, P0, cfg.n_layers, cfg.n_states, cfg.n_actions), cfg.T, seed).cum_regret
        r2["arms"]["greedy"].update(final=float(cum[-1]), slope=_slope(cum, cfg.slope_from))
    got = _judged(cfg, frozen)
    assert got["greedy_misled"].verdict == "holds"
    assert got["opo_sublinear"].verdict == "does not hold"
    assert got["opo_beats_plugin"].verdict == "does not hold"
    got = _judged(cfg, honest)
    assert got["greedy_misled"].verdict == "does not hold"
    assert got["opo_sublinear"].reason == "setting invalid: greedy_misled"
    assert np.mean([r["arms"]["greedy"]["final"] for r in honest]) < np.mean(
        [r["arms"]["greedy"]["final"] for r in records]
    )
