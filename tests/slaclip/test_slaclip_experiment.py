"""Smoke test: the quick preset runs end to end and writes every statement with its kind and a computed verdict."""

import json

import pytest

from icml26.core import judge_records  # noqa: E402

pytest.importorskip("opacus")

from icml26.core import VERDICTS  # noqa: E402
from icml26.slaclip.experiment import QUICK  # noqa: E402

KINDS = {
    "vanilla_c0_sensitive-digits": "precondition",
    "many_gradients_vanish": "precondition",
    "A1": "check",
    "A2": "claim",
    "A3-digits": "claim",
    "A3-superiority-digits": "claim",
    "A3-synthetic": "claim",
    "A3-superiority-synthetic": "claim",
    "A4": "claim",
}
REQUIRES = {
    "A2": ["vanilla_c0_sensitive-digits"],
    "A3-digits": ["vanilla_c0_sensitive-digits"],
    "A3-superiority-digits": ["vanilla_c0_sensitive-digits"],
    "A4": ["many_gradients_vanish"],
}


@pytest.fixture(scope="module")
def quick_run(quick_run):  # the session-wide quick run (tests/conftest.py), unpacked
    run_dir = quick_run("slaclip")
    return run_dir, json.loads((run_dir / "result.json").read_text())


def test_quick_preset_writes_all_statements(quick_run):
    run_dir, result = quick_run
    claims = {c["id"]: c for c in result["claims"]}
    assert {k: c["kind"] for k, c in claims.items()} == KINDS
    assert all(c["verdict"] in VERDICTS for c in claims.values())
    for cid, req in REQUIRES.items():
        assert claims[cid]["requires"] == req
    # A1 is an exact guarantee of our wiring (a check): it must hold at any scale.
    assert claims["A1"]["verdict"] == "holds"
    assert claims["A1"]["test"]["n_violations"] == 0
    # seeds are the unit: the (C0, seed) cells are averaged per seed before the test
    for cid in ("A2", "A3-digits", "A3-superiority-synthetic"):
        assert claims[cid]["test"]["unit"] == "seed" and claims[cid]["test"]["n_units"] == 3
        assert claims[cid]["test"]["values_per_unit"] == len(QUICK.c0_grid)
    eps = {r["epsilon"] for r in result["tables"]["accuracy-digits"]}
    assert len(eps) == 1  # every DP method reports the same epsilon
    assert abs(eps.pop() - 3.0) < 0.05
    for name in ("accuracy-vs-c0.png", "clip-trajectories.png", "clip-vanishing.png"):
        assert (run_dir / name).stat().st_size > 1000


def test_judge_moves_when_the_method_is_broken(quick_run):
    """Mutant: give SlaClip vanilla's accuracies (no adaptation) and A2 can no longer hold; give vanilla a flat
    C0 profile and the precondition fails, so A2 becomes 'setting invalid'."""
    run_dir, result = quick_run
    records = [json.loads(p.read_text())["record"] for p in sorted((run_dir.parent / ".records").rglob("seed*.json"))]
    assert len(records) == 3
    for r in records:
        for c0 in QUICK.c0_grid:
            r["runs"]["digits"][f"slaclip@{c0:g}"]["acc"] = r["runs"]["digits"][f"vanilla@{c0:g}"]["acc"]
    a2 = judge_records("slaclip", QUICK, records).by_id()["A2"]
    assert a2.verdict == "does not hold" or a2.measured_verdict == "does not hold"
    for r in records:
        for c0 in QUICK.c0_grid:
            r["runs"]["digits"][f"vanilla@{c0:g}"]["acc"] = 90.0
    by_id = judge_records("slaclip", QUICK, records).by_id()
    assert by_id["vanilla_c0_sensitive-digits"].verdict == "does not hold"
    assert by_id["A2"].verdict == "inconclusive" and by_id["A2"].reason.startswith("setting invalid")
