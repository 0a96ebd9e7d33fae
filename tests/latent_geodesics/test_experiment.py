"""Smoke test of the quick preset through the core runner; mutants move verdicts."""

import copy
import json
from dataclasses import replace

from icml26.core import VERDICTS, judge_records
from icml26.latent_geodesics import experiment as exp_mod
from icml26.latent_geodesics.experiment import QUICK, measure

KINDS = {
    "linear_leaves_manifold_s2": "precondition",
    "graph_path_poor_s2": "precondition",
    "linear_leaves_manifold_digits": "precondition",
    "beats_half_linear_s2": "claim",
    "identity_half_linear_s2": "control",
    "tuned_identity_half_linear_s2": "control",
    "beats_knn_s2": "claim",
    "identity_knn_s2": "control",
    "length_error_s2": "claim",
    "identity_length_s2": "control",
    "tuned_identity_length_s2": "control",
    "exp_learned_accurate_s2": "claim",
    "exp_v2_control_s2": "control",
    "exp_dim0_control_s2": "control",
    "digits_closer_than_linear": "claim",
    "identity_digits_closer_than_linear": "control",
    "tuned_identity_digits_closer_than_linear": "control",
    "digits_pullback_closer_than_linear": "claim",
    "identity_digits_pullback_closer_than_linear": "control",
    "tuned_identity_digits_pullback_closer_than_linear": "control",
    "digits_beats_knn": "claim",
    "identity_digits_beats_knn": "control",
    "digits_angles_in_order": "claim",
    "identity_digits_angles_in_order": "control",
    "tuned_identity_digits_angles_in_order": "control",
    "log_matches_sphere": "check",
    "exp_matches_sphere": "check",
    "antipodal_flagged": "check",
    "sphere_on_great_circle": "check",
    "sphere_length_second_order": "check",
    "torus_matches_chart": "check",
}


def test_quick_preset_end_to_end_and_mutated_records(quick_run):
    run_dir = quick_run("latent_geodesics")
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
    for cid in ("beats_half_linear_s2", "beats_knn_s2", "length_error_s2"):
        assert by_id[cid]["requires"] == ["linear_leaves_manifold_s2", "graph_path_poor_s2"]
        assert by_id[cid]["test"]["unit"] == "seed" and by_id[cid]["test"]["n_units"] == len(result["seeds"])
    assert by_id["digits_closer_than_linear"]["requires"] == ["linear_leaves_manifold_digits"]
    assert set(result["budgets"]) >= {"learned-zeta geodesic", "linear interpolation", "kNN graph", "projected kNN"}
    for name in ("sphere_paths.png", "digit_strips.png", "projector_training.png", "report.md"):
        assert (run_dir / name).exists()

    # mutant records: a precondition that fails makes the claims "setting invalid"; a geodesic no better than
    # the straight line makes the 0.5x claim fail
    records = result["records"]
    bad = copy.deepcopy(records)
    for r in bad:
        r["learned"]["manifolds"]["s2"]["residual_on_manifold"] = 1.0
    got = judge_records("latent_geodesics", QUICK, bad, result["seeds"]).by_id()["beats_half_linear_s2"]
    assert got.verdict == "inconclusive" and got.reason.startswith("setting invalid")
    assert "linear_leaves_manifold_s2" in got.reason
    # the setting does not need the solver when a tuned graph path is already near the arc (dense codes): the
    # precondition graph_path_poor fails and the solver claims are "setting invalid"
    bad = copy.deepcopy(records)
    for r in bad:
        for arc in r["learned"]["manifolds"]["s2"]["arcs"].values():
            arc["knn"]["geo_err"] = 0.5 * QUICK.graph_bar
    got = judge_records("latent_geodesics", QUICK, bad, result["seeds"]).by_id()
    assert got["graph_path_poor_s2"].verdict == "does not hold"
    for cid in ("beats_half_linear_s2", "beats_knn_s2", "length_error_s2"):
        assert got[cid].verdict == "inconclusive" and "graph_path_poor_s2" in got[cid].reason, cid
    bad = copy.deepcopy(records)
    for r in bad:
        r["learned"]["manifolds"]["s2"]["residual_on_manifold"] = 1e-4
        for i, arc in enumerate(r["learned"]["manifolds"]["s2"]["arcs"].values()):
            arc["geodesic"].update({k: arc["linear"][k] for k in ("geo_err", "len_err", "off_manifold")})
            for arm in ("knn", "projected_knn"):  # poor graph paths: the setting needs the solver
                arc[arm]["geo_err"] = 1.0 + 0.1 * i
    got = judge_records("latent_geodesics", QUICK, bad, result["seeds"]).by_id()["beats_half_linear_s2"]
    assert got.verdict == "does not hold"


def test_dropped_constraint_fails_the_exactness_checks(monkeypatch):
    """Mutant: the solver ignores the constraint (zeta = 0 everywhere): straight chords, the checks fail."""
    cfg = replace(QUICK, parts=("exact",))
    zero = lambda z: 0.0 * z[..., :1]  # noqa: E731
    monkeypatch.setattr(exp_mod, "sphere_zeta", zero)
    monkeypatch.setattr(exp_mod, "torus_zeta", zero)
    records = [measure(cfg, 0)]
    got = judge_records("latent_geodesics", cfg, records, [0]).by_id()
    assert got["sphere_on_great_circle"].verdict == "does not hold"
    assert got["torus_matches_chart"].verdict == "does not hold"
