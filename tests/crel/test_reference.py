"""The shipped reference run (results/crel/, what the README and docs quote) keeps the evidence-v3 contract: every
claim controlled by a control statement, reported seeds held out from the dev seeds, a ledger, every check passing;
the interpretability claims stand on their premise (matched average quality) and coverage / the grid are checks."""

from icml26.crel.experiment import EXPERIMENT, FULL


def test_the_shipped_reference_run_keeps_the_v3_contract(v3_reference):
    r = v3_reference("crel", EXPERIMENT, FULL)
    by_id = {c["id"]: c for c in r["claims"]}
    assert {c["id"] for c in r["claims"] if c["kind"] == "check"} == {
        "conformal_rank",
        "coverage",
        "coverage_upper",
        "optimizer_grid",
        "optimizer_linear",
        "optimizer_below_in_set_samples",
        *(f"coverage{up}_{st}" for up in ("", "_upper") for st in ("ball", "hull", "pcp")),
    }
    for cid in ("informativeness", "informativeness_oracle", "informativeness_digits"):
        assert by_id[cid]["controls"] == [f"{cid}_ball", f"{cid}_global"]
    for cid in ("interpretability_synthetic", "interpretability_digits"):
        assert by_id[cid]["controls"] == [f"{cid}_centre"]
        assert any(p.startswith("average_matched") for p in by_id[cid]["requires"])
        assert "alpha-quantile separation" in {b["name"] for b in by_id[cid]["baselines"]}
