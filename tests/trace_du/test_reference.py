"""The shipped reference run (results/trace_du/, what the README and docs quote) keeps the evidence-v3 contract:
every claim controlled, the controls are control statements, reported seeds held out from the dev seeds, a ledger,
no unlearning claim judged where the rewind does not matter, and the run is not stale against the judge."""

import json
from pathlib import Path

from icml26.core import HOLDS
from icml26.core.runner import judge_records
from icml26.trace_du.claims import PRECONDITIONS
from icml26.trace_du.experiment import EXPERIMENT, FULL

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_reference_run_keeps_the_v3_contract():
    r = json.loads((ROOT / "results" / "trace_du" / "result.json").read_text())
    assert r["preset"] == "full" and r["seeds"] == list(EXPERIMENT.seeds["full"])
    assert r["dev_seeds"] and not set(r["seeds"]) & set(r["dev_seeds"])
    assert r["tuning"]
    for t in r["tuning"]:  # an entry that saw reported seeds is flagged as such (never hidden)
        saw = sorted(set(t["seeds"]) & set(EXPERIMENT.seeds["full"]) | set(t["seeds"]) & set(EXPERIMENT.seeds["quick"]))
        assert t["saw reported seeds"] == (saw or "no"), t["variant"]
        assert saw or set(t["seeds"]) <= set(r["dev_seeds"]), t["variant"]
    rejudged = judge_records(EXPERIMENT, FULL, r["records"], r["seeds"]).by_id()  # the run is not stale vs the judge
    assert {c["id"]: c["verdict"] for c in r["claims"]} == {i: c.verdict for i, c in rejudged.items()}
    by_id = {c["id"]: c for c in r["claims"]}
    for c in by_id.values():
        if c["kind"] == "claim":
            assert c["controls"] and not c["no_control"], c["id"]
            assert all(by_id[k]["kind"] == "control" for k in c["controls"]), c["id"]
    assert r["counts"]["uncontrolled"] == {"holds": 0, "does not hold": 0, "inconclusive": 0}
    assert all(c["verdict"] == HOLDS for c in by_id.values() if c["kind"] == "check")
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
