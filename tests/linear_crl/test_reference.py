"""The shipped reference run (results/linear_crl/, what the README and docs quote) keeps the evidence-v3 contract:
every claim controlled, the controls are control statements, reported seeds held out from the dev seeds, a ledger."""

import json
from pathlib import Path

from icml26.linear_crl.experiment import EXPERIMENT, FULL

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_reference_run_keeps_the_v3_contract(v3_reference):
    v3_reference("linear_crl", EXPERIMENT, FULL)


def test_the_reference_run_has_the_issue_55_arms_and_figures():
    r = json.loads((ROOT / "results" / "linear_crl" / "result.json").read_text())
    by_id = {c["id"]: c for c in r["claims"]}
    for d in (5, 7):
        assert by_id[f"disentanglement_gain_d{d}"]["controls"] == [f"disentanglement_gain_d{d}_ctl_random_intersection"]
        assert by_id[f"disentanglement_gain_d{d}"]["requires"] == [f"single_env_ica_fails_d{d}"]
    assert not [i for i in by_id if i.startswith("beats_lingcrel")]  # dropped: its control rejected for lack of power
    for c in by_id.values():  # every control rejects because its arm fails the rule, not for lack of power
        if c["kind"] == "control":
            assert c["test"]["arm_verdict"] == "does not hold", c["id"]
    for d in EXPERIMENT.presets["full"].dims:
        assert by_id[f"recovery_mcc_d{d}"]["requires"] == [f"single_env_ica_fails_d{d}"]
        if d >= 5:  # SHD judged at d >= 5 (docs: no margin exists at d = 3)
            assert by_id[f"lower_shd_d{d}"]["controls"] == [f"lower_shd_d{d}_ctl_random_pruning"]
        else:
            assert f"lower_shd_d{d}" not in by_id
    for name in ("mcc_vs_envs.png", "estimated_vs_true_graph.png", "report.md"):
        assert (ROOT / "results" / "linear_crl" / name).exists()
