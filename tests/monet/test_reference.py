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
    assert {"fusion_helps_s1", "weak_undertrained_s1", "joint_headroom_s1"} <= set(by_id)
    # the referees' items: the best single modality's budget is stated, every arm (and control arm) has the same lr
    # grid, every claim has a control (none exempt), the 2-point claim against joint requires the headroom
    # precondition, and the direct comparisons with the control arms are a table, not claims
    assert "Best single modality" in r["budgets"]
    assert len({tuple(v) for _, _, v in r["config"]["grids"]}) == 1
    claims = [c for c in r["claims"] if c["kind"] == "claim"]
    assert all(c["controls"] and not c["no_control"] for c in claims)
    assert "joint_headroom_s1" in by_id["monet_beats_joint_s1"]["requires"]
    assert "direct_comparisons" in r["tables"]
    assert not set(r["seeds"]) & set(r["dev_seeds"])
