"""The shipped reference run (results/monet/, what the README and docs quote) keeps the evidence-v3 contract, reports
the best single modality as a baseline, and every claim's controls are the arms that remove what it credits."""

from icml26.monet.claims import CONTROLS
from icml26.monet.experiment import EXPERIMENT, FULL


def test_the_shipped_reference_run_keeps_the_v3_contract(v3_reference):
    r = v3_reference("monet", EXPERIMENT, FULL)
    by_id = {c["id"]: c for c in r["claims"]}
    for claim, arms in CONTROLS.items():
        assert by_id[f"{claim}_s1"]["controls"] == [f"{claim}_s1_ctl_{a}" for a in arms]
    names = {row["name"] for row in by_id["monet_beats_baselines_s1"]["baselines"]}
    assert "Best single modality test acc (s1)" in names
    assert {"fusion_helps_s1", "weak_undertrained_s1"} <= set(by_id)
    # the referee's items: the best single modality's budget is stated, every arm (and control arm) has the same lr
    # grid, and the two direct comparisons with the control arms are there
    assert "Best single modality" in r["budgets"]
    assert len({tuple(v) for _, _, v in r["config"]["grids"]}) == 1
    assert {"monet_decoupled_probe_s1", "monet_beats_naive_fusion_s1"} <= set(by_id)
