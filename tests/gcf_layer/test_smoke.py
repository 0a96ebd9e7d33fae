"""The quick preset runs end to end and writes a well-formed result (every claim controlled, held-out seeds, the
ledger); the breaks of issue 49 move the claims they name."""

import json

import pytest

pytest.importorskip("ot")

from icml26.core import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, VERDICTS, judge_records  # noqa: E402
from icml26.gcf_layer.claims import MV_TARGET, UD_TARGET  # noqa: E402
from icml26.gcf_layer.experiment import EXPERIMENT, MV_OPT, QUICK, UNIT_DEMAND_POSTED  # noqa: E402

KINDS = {
    "auction_ir": "check",
    "auction_revenue_upper_bound": "check",
    "auction_one_item_upper": "check",
    "auction_exact_revenue": "check",
    "ot_weak_duality": "check",
    "mv_bundling_gap": "precondition",
    "ot_2d_affine_fails": "precondition",
    "ot_cost_matters": "precondition",
    "auction_one_item": "claim",
    "auction_two_items": "claim",
    "auction_beats_bundling": "claim",
    "auction_mussa_rosen": "claim",
    "auction_sqrt_kernel": "claim",
    "auction_unit_demand": "claim",
    "ot_2d_uvp": "claim",
    "ot_learned_uvp": "claim",
    "ot_learned_dual": "claim",
    "auction_two_items_restarts1": "control",
    "auction_beats_bundling_restarts1": "control",
    "auction_mussa_rosen_no_cost": "control",
    "auction_sqrt_kernel_linear": "control",
    "auction_unit_demand_restarts1": "control",
    "ot_2d_uvp_quantile": "control",
    "ot_2d_uvp_quadratic": "control",
    "ot_learned_uvp_quantile": "control",
    "ot_learned_uvp_frozen": "control",
    "ot_learned_dual_frozen": "control",
}
REQUIRES = {
    "auction_two_items": ["mv_bundling_gap"],
    "auction_beats_bundling": ["mv_bundling_gap"],
    "ot_2d_uvp": ["ot_2d_affine_fails", "ot_cost_matters"],
    "ot_learned_uvp": ["ot_2d_affine_fails", "ot_cost_matters"],
}
SEEDS = [100, 101, 102]


@pytest.fixture(scope="module")
def quick_run(quick_run):  # the session-wide quick run (tests/conftest.py), unpacked
    run_dir = quick_run("gcf_layer")
    out = run_dir.parent.parent
    records = [
        json.loads(p.read_text())["record"] for p in sorted((out / "gcf_layer" / ".records").rglob("seed*.json"))
    ]
    return run_dir, json.loads((run_dir / "result.json").read_text()), records


def test_quick_preset_smoke(quick_run):
    run_dir, result, records = quick_run
    assert result["slug"] == "gcf_layer" and result["preset"] == "quick" and result["seeds"] == SEEDS
    assert not set(result["seeds"]) & set(result["dev_seeds"]) and set(range(5)) <= set(result["dev_seeds"])
    assert result["tuning"] and all(set(t["seeds"]) <= set(result["dev_seeds"]) for t in result["tuning"])
    claims = {c["id"]: c for c in result["claims"]}
    assert {k: c["kind"] for k, c in claims.items()} == KINDS
    assert all(c["verdict"] in VERDICTS for c in claims.values())
    for cid, req in REQUIRES.items():
        assert claims[cid]["requires"] == req
    for cid, c in claims.items():
        if c["kind"] == "claim":  # every claim is controlled, or checked against a closed form and says why
            assert c["controls"] or c["no_control"], cid
            assert all(claims[k]["kind"] == "control" for k in c["controls"]), cid
        if c["kind"] == "check":  # guarantees by construction: they must hold at any scale
            assert c["verdict"] == "holds", cid
    assert claims["auction_one_item"]["no_control"] and result["counts"]["uncontrolled"][HOLDS] == 0
    assert (run_dir / "mv_menu.png").exists() and (run_dir / "ot_maps.png").exists()
    aucs = result["metrics"]["auctions"]
    assert all(0.0 < r["gcf_exact"] <= MV_OPT + 1e-9 for r in aucs["mv"])
    assert result["metrics"]["cross_machine_margin"]["margin"] is not None
    assert set(result["metrics"]["transport"]["cases"]) == set(QUICK.ot_cases)
    assert len(records) == 3 and all(set(r["transport"]["cases"]) == set(QUICK.ot_cases) for r in records)


def _judge(records):
    return judge_records(EXPERIMENT, QUICK, records, SEEDS).by_id()


def _copy(records):
    return json.loads(json.dumps(records))


def test_checks_fail_on_broken_records(quick_run):
    """Records a bug would produce: a buyer left with negative utility, a revenue above the optimum, a dual above the
    OT cost, an exact revenue that disagrees with sampling (the code mutants are in test_checks.py)."""
    _, _, records = quick_run
    broken = _copy(records)
    broken[2]["auctions"]["mv"]["min_utility"] = -0.01
    broken[0]["transport"]["cases"]["2d-norm-p3"]["dual_gap"] = -0.01
    broken[1]["auctions"]["mv"]["rochetnet_exact"] = 0.56
    broken[1]["auctions"]["sqrt"]["gcf_exact"] += 0.05
    by_id = _judge(broken)
    for cid in ("auction_revenue_upper_bound", "auction_ir", "ot_weak_duality", "auction_exact_revenue"):
        assert by_id[cid].verdict == DOES_NOT_HOLD, cid
    broken = _copy(records)
    for r in broken:
        r["auctions"]["one_item"]["gcf_exact"] = 0.27
    assert _judge(broken)["auction_one_item_upper"].verdict == DOES_NOT_HOLD


def _passing_two_items(records, r1_gap):
    """Records where the 8-start menu is 0.0002 below the optimum in every seed and the one-start arm ``r1_gap``."""
    broken = _copy(records)
    for r in broken:
        a = r["auctions"]["mv"]
        a["gcf_exact"], a["r1_exact"] = MV_OPT - 0.0002, MV_OPT - r1_gap
        a["gcf"], a["gcf_se"] = a["gcf_exact"], 1e-3
        a["one_option_exact"] = 0.5443
        u = r["auctions"]["unit_demand"]
        u["gcf_exact"], u["r1_exact"], u["rerun_exact"] = 0.3848, UNIT_DEMAND_POSTED - r1_gap, 0.3848
        u["gcf"], u["gcf_se"] = 0.3848, 1e-3
    return broken


def test_restart_break_makes_the_restart_claims_inconclusive(quick_run):
    """Issue 49: restarts = 1 giving the same menus as 8 starts leaves nothing credited to the restarts."""
    _, _, records = quick_run
    held = _judge(_passing_two_items(records, r1_gap=0.01))  # one start falls short: the claims can hold
    assert held["auction_two_items"].verdict == HOLDS and held["auction_two_items_restarts1"].verdict == HOLDS
    assert held["auction_unit_demand"].verdict == HOLDS
    same = _judge(_passing_two_items(records, r1_gap=0.0002))  # the referee's break: one start is as good
    for cid in ("auction_two_items", "auction_unit_demand"):
        assert same[cid].verdict == INCONCLUSIVE and same[cid].reason.startswith("control passes"), cid


def test_unit_demand_verdict_is_judged_beyond_the_cross_machine_margin(quick_run):
    """Issue 49: unit demand seed 2 gave 0.3790 on another CPU (reference 0.3834, floor 0.3829)."""
    _, _, records = quick_run
    base = _passing_two_items(records, r1_gap=0.01)
    assert _judge(base)["auction_unit_demand"].verdict == HOLDS
    other_cpu = _copy(base)
    other_cpu[1]["auctions"]["unit_demand"]["gcf_exact"] = 0.3790
    assert _judge(other_cpu)["auction_unit_demand"].verdict == DOES_NOT_HOLD
    # 0.3834 clears the floor, but its reversed-order rerun gives 0.3790: the measured margin (0.0044) covers it
    near = _copy(base)
    near[1]["auctions"]["unit_demand"]["gcf_exact"] = near[1]["auctions"]["unit_demand"]["rerun_exact"] = 0.3834
    near[1]["auctions"]["unit_demand"]["gcf"] = 0.3834
    assert 0.3834 >= UD_TARGET and _judge(near)["auction_unit_demand"].verdict == HOLDS
    near[1]["auctions"]["unit_demand"]["rerun_exact"] = 0.3790
    by = _judge(near)
    assert by["auction_unit_demand"].verdict == DOES_NOT_HOLD
    assert by["auction_unit_demand"].test["decisive"]["bound"] == pytest.approx(UNIT_DEMAND_POSTED - UD_TARGET - 0.0044)
    assert MV_OPT - 0.0002 >= MV_TARGET


def test_quantile_break_makes_the_transport_claims_inconclusive(quick_run):
    """Issue 49: if the cost-blind quantile map met the bound (as it did in the old separable settings, 1.31-1.93 %),
    the transport claims would not separate the GCF map from it."""
    _, _, records = quick_run
    broken = _copy(records)
    for r in broken:
        for row in r["transport"]["cases"].values():
            row["gcf_soft"], row["lc_soft"], row["quantile"] = 1.5, 2.5, 1.31
            row["quadratic"], row["lc_frozen_soft"], row["affine"] = 20.0, 20.0, 20.0
        r["transport"]["cost_gap"] = 20.0
    by = _judge(broken)
    for cid, ctl in (("ot_2d_uvp", "ot_2d_uvp_quantile"), ("ot_learned_uvp", "ot_learned_uvp_quantile")):
        assert by[ctl].verdict == DOES_NOT_HOLD
        assert by[cid].verdict == INCONCLUSIVE and ctl in by[cid].reason, cid
    for r in broken:
        for row in r["transport"]["cases"].values():
            row["quantile"] = 96.0
    by = _judge(broken)
    assert by["ot_2d_uvp"].verdict == HOLDS and by["ot_learned_uvp"].verdict == HOLDS


def test_precondition_gates_the_transport_claims(quick_run):
    """If the exact maps of the two costs were the same, a cost-blind map could meet both: 'setting invalid'."""
    _, _, records = quick_run
    broken = _copy(records)
    for r in broken:
        r["transport"]["cost_gap"] = 1.0
    by = _judge(broken)
    assert by["ot_cost_matters"].verdict == DOES_NOT_HOLD
    assert by["ot_2d_uvp"].verdict == INCONCLUSIVE and by["ot_2d_uvp"].reason.startswith("setting invalid")
