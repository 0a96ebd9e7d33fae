"""Smoke test: the quick preset runs end to end and writes every claim with a computed verdict."""

import json

import pytest

pytest.importorskip("opacus")

from icml26.core import VERDICTS, run_experiment  # noqa: E402


def test_quick_preset_writes_all_claims(tmp_path):
    run_dir = run_experiment("slaclip", preset="quick", out=tmp_path)
    result = json.loads((run_dir / "result.json").read_text())
    claims = {c["id"]: c for c in result["claims"]}
    expected = {
        "A1",
        "A2",
        "A3-digits",
        "A3-superiority-digits",
        "A3-synthetic",
        "A3-superiority-synthetic",
        "A4",
    }
    assert set(claims) == expected
    assert all(c["verdict"] in VERDICTS for c in claims.values())
    # A1 is an exact guarantee, not a statistical claim: it must hold at any scale.
    assert claims["A1"]["verdict"] == "holds"
    assert claims["A1"]["test"]["n_violations"] == 0
    eps = {r["epsilon"] for r in result["tables"]["accuracy-digits"]}
    assert len(eps) == 1  # every DP method reports the same epsilon
    assert abs(eps.pop() - 3.0) < 0.05
    for name in ("accuracy-vs-c0.png", "clip-trajectories.png", "clip-vanishing.png"):
        assert (run_dir / name).stat().st_size > 1000
    assert not list((tmp_path / "slaclip" / ".cache").glob("*"))  # the resume cache is cleaned up
