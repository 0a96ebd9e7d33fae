"""The shipped reference run (results/latent_geodesics/, what the README and docs quote) keeps the evidence-v3
contract, and its claims credit what they name: every path claim is controlled by the identity solver, the exp claim
by the v2 exp, on the ten reported seeds."""

from icml26.latent_geodesics.experiment import EXPERIMENT, FULL


def test_the_shipped_reference_run_keeps_the_v3_contract(v3_reference):
    r = v3_reference("latent_geodesics", EXPERIMENT, FULL)
    assert len(r["seeds"]) == 10
    by_id = {c["id"]: c for c in r["claims"]}
    for c in by_id.values():
        if c["kind"] == "claim":
            want = "exp_v2_control_s2" if c["id"] == "exp_learned_accurate_s2" else "identity_"
            assert all(k.startswith(want) for k in c["controls"]), c["id"]
    exp = [x["learned"]["manifolds"]["s2"]["exp"] for x in r["records"]]
    assert all(e["v2_endpoint_err"] > FULL.exp_tol for e in exp)  # the control arm fails on every seed
