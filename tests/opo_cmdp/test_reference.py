"""The shipped reference run (results/opo_cmdp/, what the README and docs quote) keeps the evidence-v3 contract:
every claim controlled, the controls are control statements, reported seeds held out from the dev seeds, a ledger."""

from icml26.opo_cmdp.experiment import EXPERIMENT, FULL


def test_the_shipped_reference_run_keeps_the_v3_contract(v3_reference):
    v3_reference("opo_cmdp", EXPERIMENT, FULL)
