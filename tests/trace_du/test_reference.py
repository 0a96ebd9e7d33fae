"""The shipped reference run (results/trace_du/, what the README and docs quote) keeps the evidence-v3 contract:
every claim controlled, the controls are control statements, reported seeds held out from the dev seeds, a ledger,
no unlearning claim judged where the rewind does not matter, and the run is not stale against the judge."""

from pathlib import Path

from icml26.core import HOLDS
from icml26.trace_du.claims import PRECONDITIONS
from icml26.trace_du.experiment import EXPERIMENT, FULL

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_reference_run_keeps_the_v3_contract(v3_reference):
    r = v3_reference("trace_du", EXPERIMENT, FULL)
    by_id = {c["id"]: c for c in r["claims"]}
    assert all(c["controls"] and not c["no_control"] for c in by_id.values() if c["kind"] == "claim")
    # the unlearning claims are judged only where TRACE-DU rewinds to t* >= T/4 (issue 51's acceptance)
    T = r["config"]["rounds"]
    for cid in ("unlearned_asr_close_to_retrain", "unlearned_mia_close_to_retrain", "asr_below_fine_tune"):
        assert by_id[cid]["requires"] == list(PRECONDITIONS)
    assert by_id["rewind_deep"]["verdict"] == HOLDS
    assert min(rec["claim_arms"]["trace_du"]["t_star"] for rec in r["records"]) >= 0.25 * T
    # the equal-budget claims rewind to T - R >= T/2 by construction
    for rec in r["records"]:
        for topo in ("ring", "er"):
            for row in rec[topo]["budget"]:
                assert row["graph"]["t_star"] == row["agnostic"]["t_star"] == T - row["R"] >= T / 2
