"""The claims separate CREATOR from what they credit (evidence v3), on dev seeds (design, never the reported ones):

* the issue's named break, ``intersect`` returning its input (the disentanglement step gone), moves
  ``disentanglement_gain_d*`` from holds (d=7) to does not hold (d=5 and d=7);
* env-0 ICA (one environment's ICA, empty graph) put in CREATOR's place fails every recovery claim;
* a setting where one environment's ICA already recovers the latents makes the claims "setting invalid";
* every claim names control statements, and a control arm that passes makes its claim inconclusive;
* every control rejects because its arm FAILS the rule (arm verdict "does not hold"), not for lack of power;
* each control arm put in CREATOR's place fails its claim (random non-child intersection: disentanglement_gain_d*;
  random pruning and no pruning: lower_shd).
"""

import copy
from dataclasses import replace

import pytest

from icml26.core import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, judge_records
from icml26.core.testing import mutant
from icml26.linear_crl.claims import control_id
from icml26.linear_crl.experiment import EXPERIMENT, QUICK, measure

SEEDS = list(EXPERIMENT.dev_seeds[:5])
CFG = replace(QUICK, dims=(5, 7), env_factors=(2,), regimes=("env",), lingam=False)
RECOVERY = ("recovery_mcc", "beats_ica_mcc", "lower_shd")


@pytest.fixture(scope="module")
def records():
    return [measure(CFG, s) for s in SEEDS]


def _judged(records):
    return judge_records(EXPERIMENT, CFG, records, SEEDS).by_id()


def test_claims_hold_and_controls_reject_on_dev_seeds(records):
    got = _judged(records)
    claims = [c for c in got.values() if c.kind == "claim"]
    assert claims and all(c.controls for c in claims)
    for c in claims:
        assert all(got[k].kind == "control" for k in c.controls), c.id
    assert got["disentanglement_gain_d7"].verdict == HOLDS  # d=5 has little slack: see docs
    assert got["disentanglement_gain_d5"].verdict != DOES_NOT_HOLD
    for d in CFG.dims:
        assert got[f"single_env_ica_fails_d{d}"].verdict == HOLDS
        for cid in RECOVERY:
            c = got[f"{cid}_d{d}"]
            if cid == "lower_shd":  # margin 0.32 of the node pairs: 5 seeds rarely clear it (full --dev run: holds)
                assert c.verdict != DOES_NOT_HOLD, c.test
            else:
                assert c.verdict == HOLDS, c.test
            assert all(got[k].verdict == HOLDS for k in c.controls)


def test_no_intersection_mutant_moves_the_disentanglement_claim(records):
    with mutant("icml26.linear_crl.creator.intersect", lambda A, B, tol: (A, None)):
        broken = [measure(CFG, s) for s in SEEDS]
    got = _judged(broken)
    assert _judged(records)["disentanglement_gain_d7"].verdict == HOLDS
    for d in CFG.dims:
        assert got[f"disentanglement_gain_d{d}"].verdict == DOES_NOT_HOLD
    # the ablation arm is then CREATOR itself: identical features on every seed
    for r in broken:
        for c in r["cells"]:
            assert c["creator"]["node_locr2"] == c["no_intersection"]["node_locr2"]


def test_env0_ica_fails_every_recovery_claim(records):
    fake = copy.deepcopy(records)
    for r in fake:
        for c in r["cells"]:
            c["creator"].update(copy.deepcopy(c["env0_ica"]))  # its scores and graph (diagnostics kept for tables)
    got = _judged(fake)
    for d in CFG.dims:
        for cid in RECOVERY:
            c = got[f"{cid}_d{d}"]
            assert HOLDS not in (c.verdict, c.measured_verdict), (cid, d)  # fails the rule (or cannot pass it)
        assert got[f"disentanglement_gain_d{d}"].verdict == DOES_NOT_HOLD


def test_a_setting_where_one_environment_suffices_is_invalid(records):
    easy = copy.deepcopy(records)
    for r in easy:
        for c in r["cells"]:
            c["env0_ica"] = copy.deepcopy(c["creator"])
    got = _judged(easy)
    for d in CFG.dims:
        assert got[f"single_env_ica_fails_d{d}"].verdict == DOES_NOT_HOLD
        c = got[f"recovery_mcc_d{d}"]
        assert c.verdict == INCONCLUSIVE and c.reason == f"setting invalid: single_env_ica_fails_d{d}"


def test_a_passing_control_arm_makes_its_claim_inconclusive(records):
    strong = copy.deepcopy(records)
    for r in strong:
        for c in r["cells"]:
            c["lingcrel"]["mcc"] = c["creator"]["mcc"]  # the control arm of recovery_mcc now recovers too
    got = _judged(strong)
    d = CFG.dims[0]
    assert got[control_id(f"recovery_mcc_d{d}", "lingcrel")].verdict == DOES_NOT_HOLD
    assert got[f"recovery_mcc_d{d}"].verdict == INCONCLUSIVE
    assert got[f"recovery_mcc_d{d}"].reason.startswith("control passes")


def test_controls_reject_because_the_arm_fails_not_for_lack_of_power(records):
    got = _judged(records)
    controls = [c for c in got.values() if c.kind == "control"]
    assert controls
    for c in controls:
        assert c.verdict == HOLDS, c.id
        assert c.test["arm_verdict"] == DOES_NOT_HOLD, (c.id, c.test.get("decisive"))


@pytest.mark.parametrize(
    ("arm", "claims"),
    [
        ("random_intersection", [f"disentanglement_gain_d{d}" for d in CFG.dims]),
        ("random_pruning", [f"lower_shd_d{d}" for d in CFG.dims]),
        ("no_pruning", [f"lower_shd_d{d}" for d in CFG.dims]),
        ("lingcrel", [f"recovery_mcc_d{d}" for d in CFG.dims] + [f"beats_ica_mcc_d{d}" for d in CFG.dims]),
    ],
)
def test_a_control_arm_in_creators_place_fails_its_claims(records, arm, claims):
    fake = copy.deepcopy(records)
    for r in fake:
        for c in r["cells"]:
            c["creator"].update(copy.deepcopy(c[arm]))
    got = _judged(fake)
    for cid in claims:
        assert HOLDS not in (got[cid].verdict, got[cid].measured_verdict), cid
