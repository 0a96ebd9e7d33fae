"""The quick preset runs end to end and writes a well-formed result."""

import json

import pytest

pytest.importorskip("ot")

from icml26.core import VERDICTS, run_experiment  # noqa: E402

EXPECTED = {
    "auction_one_item",
    "auction_two_items",
    "auction_beats_bundling",
    "auction_mussa_rosen",
    "auction_sqrt_kernel",
    "auction_unit_demand",
    "rochetnet_agreement",
    "ot_1d_uvp",
    "ot_2d_uvp",
}


def test_quick_preset_smoke(tmp_path):
    run_dir = run_experiment("gcf_layer", preset="quick", out=tmp_path)
    result = json.loads((run_dir / "result.json").read_text())
    assert result["slug"] == "gcf_layer" and result["preset"] == "quick" and result["seeds"] == [0, 1, 2]
    assert {c["id"] for c in result["claims"]} == EXPECTED
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for c in result["claims"]:
        assert c["method"]["n"] >= 3
    assert (run_dir / "mv_menu.png").exists() and (run_dir / "ot_maps.png").exists()
    aucs = result["metrics"]["auctions"]
    assert all(r["min_utility"] >= 0 for rs in aucs.values() for r in rs)  # hard menus are IR
    assert all(0.0 < r["gcf"] <= 2.0 for r in aucs["mv"])
    assert set(result["metrics"]["transport"]) == {"1d-exp-p3", "2d-mix-p3"}
