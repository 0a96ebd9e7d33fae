"""The evidence (claims.py): verdicts move when the method, the setting or the information it gets is broken; every
claim has a control arm that the referee's break (Clamp fed a point mass) cannot get past."""

import copy
from dataclasses import replace

import numpy as np
import pytest

from icml26.core import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, judge_records
from icml26.core.testing import mutant
from icml26.ski_rental import ClampPolicy
from icml26.ski_rental.claims import CONTROL_SUFFIX, FAMILIES, control_ids
from icml26.ski_rental.experiment import EXPERIMENT, QUICK, measure, point_mass_advice

SEEDS = list(EXPERIMENT.seeds["quick"])
MEDIAN = replace(QUICK, psk_point=tuple((f, "median") for f in FAMILIES))  # the referee's setting: PSK told the median
BIMODAL_VS_PSK = ["clamp_beats_psk_det_bimodal_lam0.5", "range_argmin_beats_psk_det_bimodal_lam0.5"]


@pytest.fixture(scope="module")
def records():
    return [measure(QUICK, s) for s in SEEDS]


@pytest.fixture(scope="module")
def median_records():
    return [measure(MEDIAN, s) for s in SEEDS]


def _judged(records, cfg=QUICK):
    return judge_records(EXPERIMENT, cfg, records, SEEDS).by_id()


def _edit(records, fn):
    out = copy.deepcopy(records)
    for seed in out:
        for r in seed["records"]:
            fn(r)
    return out


def test_every_claim_names_a_control_statement_with_its_own_rule(records):
    judged = _judged(records)
    claims = [c for c in judged.values() if c.kind == "claim"]
    assert len(claims) == 10
    for c in claims:
        assert list(c.controls) == control_ids(c.id) and not c.no_control
        for k in c.controls:
            ctl = judged[k]
            assert ctl.kind == "control" and ctl.test["rule"] == c.test["rule"] and ctl.test["n_units"] == 3
            assert ctl.baselines[0]["name"] == c.baselines[0]["name"]  # the claim's own baseline, not a new one


def test_verdicts_move_when_the_method_or_the_setting_is_broken(records):
    base = _judged(records)
    assert base["point_prediction_loses_lam0.5"].verdict == HOLDS
    assert base["clamp_beats_psk_det_lam0.5"].verdict == HOLDS
    # Clamp made slightly worse than PSK-det everywhere -> the claim must not hold
    worse = _edit(records, lambda r: r["lam=0.5"]["clamp"].update(ecr=r["lam=0.5"]["psk_det"]["ecr"] + 1e-3))
    assert _judged(worse)["clamp_beats_psk_det_lam0.5"].verdict == DOES_NOT_HOLD
    # a setting where the point prediction already is optimal -> the claim is "setting invalid"
    easy = _edit(records, lambda r: r["oracle"].update(ecr=r["lam=0.5"]["psk_det"]["ecr"]))
    c = _judged(easy)["clamp_beats_psk_det_lam0.5"]
    assert c.verdict == INCONCLUSIVE and c.reason == "setting invalid: point_prediction_loses_lam0.5"


def test_gain_verdicts_move_when_range_argmin_is_broken(records):
    judged = _judged(records)
    cid = "range_argmin_beats_psk_det_bimodal_lam0.5"
    # its own point-fed arm is rejected; the point-fed Clamp passes (the referee's break), so it ends inconclusive
    assert judged[cid].verdict == INCONCLUSIVE and judged[cid].measured_verdict == HOLDS
    assert judged[cid + CONTROL_SUFFIX].verdict == HOLDS

    def degenerate(r):  # range-argmin degenerates to PSK-det's buy day: no gain left
        r["lam=0.5"]["range_argmin"] = dict(r["lam=0.5"]["psk_det"])

    broken = _judged(_edit(records, degenerate))
    assert broken[cid].verdict == DOES_NOT_HOLD
    assert broken["range_argmin_never_worse_than_clamp"].verdict == DOES_NOT_HOLD  # ... and the check fails
    # a setting where the clamp costs nothing against the oracle -> range-vs-clamp claims are "setting invalid"
    free = _judged(_edit(records, lambda r: r["oracle"].update(ecr=r["lam=0.5"]["clamp"]["ecr"])))
    c = free["range_argmin_beats_clamp_gaussian_lam0.5"]
    assert c.verdict == INCONCLUSIVE and c.reason == "setting invalid: clamp_binds_lam0.5"


def test_a_control_arm_that_passes_the_rule_makes_its_claim_inconclusive(records):
    cid = "range_argmin_beats_psk_det_bimodal_lam0.5"

    def informed(r):  # the point-fed arm made as good as the distribution-fed one: the rule no longer separates them
        d = r["lam=0.5"]
        d["range_argmin_point_mass"] = dict(d["range_argmin"])

    c = _judged(_edit(records, informed))[cid]
    assert (
        c.verdict == INCONCLUSIVE
        and c.measured_verdict == HOLDS
        and c.reason.startswith(f"control passes: {cid}_ctl_point_mass")
    )


def test_the_break_clamp_fed_a_point_mass_moves_the_bimodal_claims_to_inconclusive(median_records):
    """Issue 49: the referee fed Clamp only a point mass at the median (PSK's information) and the bimodal claims still
    held.  Measured under that break (a code mutant of ClampPolicy), the bimodal claims still *measure* as holding,
    and their controls now make them inconclusive instead of holding."""
    original = ClampPolicy.buy_day

    def fed_point_mass(self, inst, P_hat):
        return original(self, inst, point_mass_advice(np.asarray(P_hat, dtype=float), "median")[1])

    with mutant("icml26.ski_rental.policies.ClampPolicy.buy_day", fed_point_mass):
        broken = [measure(MEDIAN, s) for s in SEEDS]
    judged = _judged(broken, MEDIAN)
    for cid in BIMODAL_VS_PSK:
        c = judged[cid]
        assert c.measured_verdict == HOLDS and c.verdict == INCONCLUSIVE, (cid, c.verdict, c.reason)
        assert c.reason.startswith(f"control passes: {cid}{CONTROL_SUFFIX}")
    # under the break no claim of a Clamp reading can hold any more: the method arm is its own control arm
    assert not [c.id for c in judged.values() if c.kind == "claim" and c.verdict == HOLDS]
    # the same break as mutated records: the method arms replaced by their point-fed arms
    j = _judged(_edit(median_records, _point_fed), MEDIAN)
    assert all(j[cid].verdict == INCONCLUSIVE and j[cid].measured_verdict == HOLDS for cid in BIMODAL_VS_PSK)


def test_under_the_break_no_claim_holds_with_the_dev_chosen_points(records):
    """With PSK's dev-chosen point summaries the break can make a claim inconclusive or not hold, never hold."""
    j = _judged(_edit(records, _point_fed))
    assert not [c.id for c in j.values() if c.kind == "claim" and c.verdict == HOLDS]
    assert all(j[cid].verdict in (INCONCLUSIVE, DOES_NOT_HOLD) for cid in BIMODAL_VS_PSK)


def _point_fed(r):
    d = r["lam=0.5"]
    if "clamp_point_mass" in d:  # every delta=0 record
        d["clamp"], d["range_argmin"] = dict(d["clamp_point_mass"]), dict(d["range_argmin_point_mass"])


def test_the_referees_median_baseline_is_caught_by_the_control_without_any_break(median_records):
    """With PSK told the median, the clamp fed that median's point mass already beats PSK-det on bimodal laws: the
    rule credits the clamp, not the distribution, and the control says so."""
    c = _judged(median_records, MEDIAN)["clamp_beats_psk_det_bimodal_lam0.5"]
    assert c.measured_verdict == HOLDS and c.verdict == INCONCLUSIVE
