"""The shipped reference run (results/count_ica/, what the README and docs quote) keeps the evidence-v3 contract:
every claim controlled, the controls are control statements, reported seeds held out from the dev seeds, a ledger;
and its main arm is not started from FastICA's answer."""

from icml26.count_ica.experiment import EXPERIMENT, FULL


def test_the_shipped_reference_run_keeps_the_v3_contract(v3_reference):
    r = v3_reference("count_ica", EXPERIMENT, FULL)
    assert "ARPLN-ICA (random start)" in r["budgets"]
    assert "random start" in r["budgets"]["ARPLN-ICA (random start)"]["note"]
    assert {c["id"] for c in r["claims"] if c["kind"] == "check"} == {
        "forward_backward_exact",
        "sample_path_truth_sw",
        "align_planted_exact",
    }
