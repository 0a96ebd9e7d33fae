"""The issue's named breaks move the claims they name: re-judge the reference run's records with OPO-CMDP's numbers
replaced by a control arm's (no bonus, flipped bonus, linear floor), and the claims that credit what that arm lacks
no longer hold.  Also: each control statement is the claim's own rule applied to its arm."""

import copy
import json
from pathlib import Path

import pytest

from icml26.core import DOES_NOT_HOLD, HOLDS, judge_records
from icml26.opo_cmdp.claims import CONTROLS
from icml26.opo_cmdp.experiment import EXPERIMENT, FULL

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference():
    return json.loads((ROOT / "results" / "opo_cmdp" / "result.json").read_text())


HORIZON_FIELDS = ("window_ratio_at", "final_at", "window_ratio_max")  # measured for the sublinearity arms only


def _as_opo(records, arm):
    out = copy.deepcopy(records)
    for r in out:
        new = copy.deepcopy(r["arms"][arm])
        for k in HORIZON_FIELDS:  # an arm without the long-horizon runs (flipped) keeps OPO's; it breaks no
            new.setdefault(k, r["arms"]["opo"][k])  # claim that reads them (see BREAKS)
        r["arms"]["opo"] = new
    return out


def _judge(records, seeds):
    return judge_records(EXPERIMENT, FULL, records, seeds).by_id()


BREAKS = {  # the arm put in OPO's place -> the claims it must break
    "opo_nobonus": ("opo_beats_baselines", "optimism_pays", "opo_competitive", "opo_sublinear"),
    "opo_flipped": ("opo_beats_baselines", "optimism_pays", "opo_competitive"),
    "opo_floor": ("opo_sublinear",),
}


@pytest.mark.parametrize("arm", sorted(BREAKS))
def test_named_breaks_move_the_claims_they_name(reference, arm):
    got = _judge(_as_opo(reference["records"], arm), reference["seeds"])
    for cid in BREAKS[arm]:
        rule = got[cid].measured_verdict or got[cid].verdict  # the rule's own verdict, before any override
        assert rule != HOLDS and got[cid].verdict != HOLDS, (cid, rule)


def test_every_claim_arm_pair_is_a_named_break_and_controls_reject(reference):
    pairs = {(cid, arm) for cid, ctl in CONTROLS.items() for _, arm in ctl}
    assert pairs <= {(cid, arm) for arm, cids in BREAKS.items() for cid in cids}
    got = _judge(reference["records"], reference["seeds"])
    for ctl in CONTROLS.values():
        for ctl_id, _ in ctl:
            assert got[ctl_id].kind == "control"
            assert got[ctl_id].verdict == (HOLDS if got[ctl_id].test["arm_verdict"] != HOLDS else DOES_NOT_HOLD)


def test_a_control_arm_that_passes_makes_its_claim_inconclusive(reference):
    records = copy.deepcopy(reference["records"])
    for r, v in zip(records, (0.1, 0.2, 0.15, 0.05, 0.12)):  # OPO made sublinear at both horizons
        r["arms"]["opo"]["window_ratio_max"] = v
    got = _judge(records, reference["seeds"])
    assert got["opo_sublinear"].verdict == HOLDS  # the controls (floor, no bonus) fail the rule
    for r in records:  # the linear floor given OPO's numbers: the sublinearity test cannot separate them
        r["arms"]["opo_floor"]["window_ratio_max"] = r["arms"]["opo"]["window_ratio_max"]
    got = _judge(records, reference["seeds"])
    assert got["opo_sublinear_ctl_floor"].verdict == DOES_NOT_HOLD
    assert got["opo_sublinear"].verdict != HOLDS
