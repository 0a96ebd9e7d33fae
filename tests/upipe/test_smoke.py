import json

from icml26.core import VERDICTS, run_experiment

CLAIMS = {"exactness", "loss-curves", "memory-forward", "memory-saved", "memory-formula", "memory-knob",
          "memory-step", "longest-sequence", "speed", "speed-matches"}


def test_quick_preset_runs_and_reports_claims(tmp_path):
    run_dir = run_experiment("upipe", preset="quick", seeds=1, out=tmp_path)
    res = json.loads((run_dir / "result.json").read_text())
    assert {c["id"] for c in res["claims"]} == CLAIMS
    assert all(c["verdict"] in VERDICTS for c in res["claims"])
    by_id = {c["id"]: c for c in res["claims"]}
    # exact properties must hold even at quick scale (speed depends on the machine and is not asserted)
    for cid in ("exactness", "loss-curves", "memory-formula", "memory-saved"):
        assert by_id[cid]["verdict"] == "holds", by_id[cid]
    assert (run_dir / "memory_vs_seq.png").exists() and (run_dir / "step_timeline.png").exists()
