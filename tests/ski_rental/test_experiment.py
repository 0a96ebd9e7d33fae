"""Smoke test of the quick preset through the core runner, and determinism of one seed's exact scores."""

import json

import matplotlib

matplotlib.use("Agg")

from icml26.core import VERDICTS  # noqa: E402
from icml26.ski_rental.experiment import QUICK, measure  # noqa: E402

FAMILIES = ("bimodal", "geometric", "gaussian")
KINDS = {
    "point_prediction_loses_lam0.5": "precondition",
    "clamp_binds_lam0.5": "precondition",
    "clamp_beats_psk_det_lam0.5": "claim",
    **{
        f"{cid}_{fam}_lam0.5": "claim"
        for fam in FAMILIES
        for cid in ("clamp_beats_psk_det", "range_argmin_beats_psk_det", "range_argmin_beats_clamp")
    },
    "lp_never_worse_than_psk_rand": "check",
    "range_argmin_never_worse_than_clamp": "check",
    "clamp_robust": "check",
    "range_argmin_robust": "check",
    "lp_robust": "check",
}
CHECKS = [cid for cid, kind in KINDS.items() if kind == "check"]


def _requires(cid):
    if KINDS[cid] != "claim":
        return []
    return ["clamp_binds_lam0.5"] if cid.startswith("range_argmin_beats_clamp") else ["point_prediction_loses_lam0.5"]


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("ski_rental")
    result = json.loads((run_dir / "result.json").read_text())
    assert result["slug"] == "ski_rental" and result["preset"] == "quick"
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    # exact guarantees: these can only fail if the implementation is wrong
    by_id = {c["id"]: c for c in result["claims"]}
    for cid in CHECKS:
        assert by_id[cid]["verdict"] == "holds", by_id[cid]
    for cid in KINDS:
        assert by_id[cid]["requires"] == _requires(cid), cid
        if KINDS[cid] != "check":
            assert by_id[cid]["test"]["n_units"] == 3, cid  # seeds are the unit, not instances
    # the per-family gain claims ask for a gain of >= 0.01; Clamp ties PSK-det on every quick Gaussian
    assert by_id["range_argmin_beats_clamp_gaussian_lam0.5"]["test"]["min_effect"] == 0.01
    assert by_id["clamp_beats_psk_det_gaussian_lam0.5"]["verdict"] == "does not hold"
    assert by_id["range_argmin_beats_clamp_bimodal_lam0.5"]["verdict"] == "does not hold"  # the modes agree there
    assert result["metrics"]["n_instances"] == 3 * 6
    for name in ("error_sweep.png", "tradeoff.png", "report.md"):
        assert (run_dir / name).exists()
    assert {"where_clamp_loses", "gain_by_family", "consistency_by_family"} <= set(result["tables"])


def test_measure_is_deterministic():
    a, b = measure(QUICK, 1), measure(QUICK, 1)
    assert json.dumps(a, sort_keys=True, default=float) == json.dumps(b, sort_keys=True, default=float)
    assert len(a["records"]) == 6 * (len(QUICK.deltas) + len(QUICK.adversarial_weights))


def _judged(records):
    from icml26.core import judge_records

    return judge_records("ski_rental", QUICK, records).by_id()


def test_verdicts_move_when_the_method_or_the_setting_is_broken():
    import copy

    records = [measure(QUICK, s) for s in range(3)]
    base = _judged(records)
    assert base["point_prediction_loses_lam0.5"].verdict == "holds"
    # mutant 1: Clamp made slightly worse than PSK-det everywhere -> the claim must not hold
    worse = copy.deepcopy(records)
    for out in worse:
        for r in out["records"]:
            d = r["lam=0.5"]
            d["clamp"]["ecr"] = d["psk_det"]["ecr"] + 1e-3
    assert _judged(worse)["clamp_beats_psk_det_lam0.5"].verdict == "does not hold"
    # mutant 2: a setting where the point prediction already is optimal -> the claim is "setting invalid"
    easy = copy.deepcopy(records)
    for out in easy:
        for r in out["records"]:
            r["oracle"]["ecr"] = r["lam=0.5"]["psk_det"]["ecr"]
    c = _judged(easy)["clamp_beats_psk_det_lam0.5"]
    assert c.verdict == "inconclusive" and c.reason == "setting invalid: point_prediction_loses_lam0.5"


def test_gain_verdicts_move_when_range_argmin_is_broken():
    import copy

    records = [measure(QUICK, s) for s in range(3)]
    cid = "range_argmin_beats_psk_det_bimodal_lam0.5"
    assert _judged(records)[cid].verdict == "holds"
    # mutant: range-argmin degenerates to PSK-det's buy day (no gain left) -> the size claim must not hold
    broken = copy.deepcopy(records)
    for out in broken:
        for r in out["records"]:
            d = r["lam=0.5"]
            d["range_argmin"] = dict(d["psk_det"])
    judged = _judged(broken)
    assert judged[cid].verdict == "does not hold"
    # ... and the check that range-argmin is never worse than the clamp at delta=0 now fails
    assert judged["range_argmin_never_worse_than_clamp"].verdict == "does not hold"
    # a setting where the clamp costs nothing against the oracle -> range-vs-clamp claims are "setting invalid"
    free = copy.deepcopy(records)
    for out in free:
        for r in out["records"]:
            r["oracle"]["ecr"] = r["lam=0.5"]["clamp"]["ecr"]
    c = _judged(free)["range_argmin_beats_clamp_gaussian_lam0.5"]
    assert c.verdict == "inconclusive" and c.reason == "setting invalid: clamp_binds_lam0.5"


def test_range_argmin_check_catches_a_broken_implementation(monkeypatch):
    """Code mutant: range_argmin picks the range's worst day; the by-construction check must fail."""
    import numpy as np

    from icml26.ski_rental import policies

    def worst_in_range(self, inst, P_hat):
        e = inst.ecr_all(P_hat)
        lo, hi = self.safe_range(inst)
        if self.mode == "range_argmin":
            return lo + int(np.argmax(e[lo - 1 : hi]))
        return min(max(int(np.argmin(e)) + 1, lo), hi)

    monkeypatch.setattr(policies.ClampPolicy, "buy_day", worst_in_range)
    judged = _judged([measure(QUICK, s) for s in range(3)])
    assert judged["range_argmin_never_worse_than_clamp"].verdict == "does not hold"
    assert judged["range_argmin_robust"].verdict == "holds"  # still inside the safe range
    assert judged["range_argmin_beats_clamp_gaussian_lam0.5"].verdict == "does not hold"
