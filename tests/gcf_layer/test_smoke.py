"""The quick preset runs end to end and writes a well-formed result; the checks can fail on broken records."""

import json

import pytest

from icml26.core import judge_records  # noqa: E402

pytest.importorskip("ot")

from icml26.core import VERDICTS  # noqa: E402
from icml26.gcf_layer.experiment import QUICK  # noqa: E402

KINDS = {
    "auction_ir": "check",
    "auction_revenue_upper_bound": "check",
    "auction_one_item_upper": "check",
    "ot_weak_duality": "check",
    "mv_bundling_gap": "precondition",
    "ot_1d_affine_fails": "precondition",
    "ot_2d_affine_fails": "precondition",
    "auction_one_item": "claim",
    "auction_two_items": "claim",
    "auction_beats_bundling": "claim",
    "auction_mussa_rosen": "claim",
    "auction_sqrt_kernel": "claim",
    "auction_unit_demand": "claim",
    "ot_1d_uvp": "claim",
    "ot_2d_uvp": "claim",
    "ot_learned_uvp": "claim",
    "ot_learned_dual": "claim",
}
REQUIRES = {
    "auction_two_items": ["mv_bundling_gap"],
    "auction_beats_bundling": ["mv_bundling_gap"],
    "ot_1d_uvp": ["ot_1d_affine_fails"],
    "ot_2d_uvp": ["ot_2d_affine_fails"],
    "ot_learned_uvp": ["ot_1d_affine_fails"],
}


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
    assert result["slug"] == "gcf_layer" and result["preset"] == "quick" and result["seeds"] == [0, 1, 2]
    claims = {c["id"]: c for c in result["claims"]}
    assert {k: c["kind"] for k, c in claims.items()} == KINDS
    assert all(c["verdict"] in VERDICTS for c in claims.values())
    for cid, req in REQUIRES.items():
        assert claims[cid]["requires"] == req
    for cid, c in claims.items():
        assert c["method"]["n"] >= 3
        if c["kind"] == "check":  # guarantees by construction: they must hold at any scale
            assert c["verdict"] == "holds", cid
    assert (run_dir / "mv_menu.png").exists() and (run_dir / "ot_maps.png").exists()
    aucs = result["metrics"]["auctions"]
    assert all(0.0 < r["gcf"] <= 2.0 for r in aucs["mv"])
    assert set(result["metrics"]["transport"]) == {"1d-exp-p3", "2d-mix-p3"}
    assert len(records) == 3 and all(set(r["transport"]) == {"1d-exp-p3", "2d-mix-p3"} for r in records)


def _judge(records):
    return judge_records("gcf_layer", QUICK, records).by_id()


def test_checks_fail_on_broken_records(quick_run):
    """Mutants: an impossible revenue above the optimum, a buyer left with negative utility, a dual above the OT
    cost (fixed- and learned-candidate)."""
    _, _, records = quick_run
    broken = json.loads(json.dumps(records))
    broken[2]["auctions"]["mv"]["min_utility"] = -0.01
    broken[0]["transport"]["1d-exp-p3"]["dual_gap"] = -0.01
    broken[1]["auctions"]["mv"]["rochetnet"] = 0.56
    by_id = _judge(broken)
    for cid in ("auction_revenue_upper_bound", "auction_ir", "ot_weak_duality"):
        assert by_id[cid].verdict == "does not hold", cid
    broken = json.loads(json.dumps(records))
    broken[0]["transport"]["1d-exp-p3"]["lc_dual_gap"] = -0.01
    assert _judge(broken)["ot_weak_duality"].verdict == "does not hold"


def test_one_item_mutant_that_overstates_revenue_fails_the_check(quick_run):
    """An impossible one-item revenue (above 1/4 by far more than the Monte-Carlo error) passes the one-sided
    claim but fails the check: |revenue - 1/4| can no longer hide it."""
    _, _, records = quick_run
    broken = json.loads(json.dumps(records))
    for r in broken:
        r["auctions"]["one_item"]["gcf"] = 0.27
    by_id = _judge(broken)
    assert by_id["auction_one_item_upper"].verdict == "does not hold"
    assert by_id["auction_one_item"].verdict == "holds"  # the claim alone would accept it
    assert _judge(records)["auction_one_item_upper"].verdict == "holds"


def test_precondition_gates_the_transport_claim(quick_run):
    """If the trivial affine map already met the bound, the L2-UVP claim is 'setting invalid', whatever it measured."""
    _, _, records = quick_run
    broken = json.loads(json.dumps(records))
    for r in broken:
        r["transport"]["1d-exp-p3"]["affine"] = 1.0
    by_id = _judge(broken)
    assert by_id["ot_1d_affine_fails"].verdict == "does not hold"
    assert by_id["ot_1d_uvp"].verdict == "inconclusive" and by_id["ot_1d_uvp"].reason.startswith("setting invalid")
