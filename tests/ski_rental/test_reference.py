"""The shipped reference run (results/ski_rental/, what the README and docs quote) keeps the evidence-v3 contract:
every claim controlled, the controls are control statements, reported seeds held out from the dev seeds, a ledger."""

from icml26.ski_rental.experiment import EXPERIMENT, FULL


def test_the_shipped_reference_run_keeps_the_v3_contract(v3_reference):
    v3_reference("ski_rental", EXPERIMENT, FULL)
