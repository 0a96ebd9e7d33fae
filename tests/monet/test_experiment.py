"""Smoke test of the quick preset through the core runner; thread-independence; mutants move verdicts."""

import copy
import json
from dataclasses import replace

import torch

from icml26.core import VERDICTS, judge_records
from icml26.core.runner import limited_threads
from icml26.monet import MLPEncoder, MoNet, fit, make_imbalanced_bimodal, modality_probe_accuracy
from icml26.monet.experiment import EXPERIMENT, QUICK, measure

KINDS = {
    "weak_undertrained_s1": "precondition",
    "weak_undertrained_digits": "precondition",
    **{
        f"monet_{c}_{ds}": "claim"
        for ds in ("s1", "digits")
        for c in ("beats_joint", "weak_probe", "beats_balancing", "beats_ensemble")
    },
    **{
        c: "check"
        for c in (
            "decoupled_streams",
            "stable_memory_exact",
            "coordination_weights_sum",
            "ogm_modulates_gradients",
            "cms_periods_respected",
            "equal_encoder_updates",
        )
    },
}
TINY = replace(
    QUICK,
    datasets=("s1",),
    s1_sizes=(128, 64, 128),
    epochs=2,
    arms=("joint", "monet", "ogm_ge"),
    probe_every=2,
    ablations=(),
)


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("monet")  # the session-wide quick run (tests/conftest.py)
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":
            ds = cid.rsplit("_", 1)[1]
            assert by_id[cid]["requires"] == [f"weak_undertrained_{ds}"]
    assert by_id["monet_beats_joint_s1"]["test"]["min_effect"] == 0.02
    names = {"MoNet", "Joint", "OGM-GE", "PMR", "MMPareto", "MLA-lite", "Unimodal ensemble"}
    assert names <= set(result["budgets"])
    assert len({(t["configs"], t["steps"]) for a, t in result["budgets"].items() if a in names}) == 1  # parity
    assert {"accuracy", "learned_diagnostics", "ablations", "unimodal_models"} <= set(result["tables"])
    for name in ("probe_curves.png", "monet_diagnostics.png", "report.md"):
        assert (run_dir / name).exists()
    rec = result["records"][0]["s1"]["arms"]
    for arm in ("monet", "joint", "ensemble"):
        assert rec[arm]["test_acc"] > 0.2  # chance is 0.1


def test_measure_is_identical_under_one_and_two_threads():
    before = torch.get_num_threads()
    out = []
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            with limited_threads(EXPERIMENT.threads):
                torch.manual_seed(0)
                out.append(json.dumps(measure(TINY, 3), sort_keys=True, default=float))
    finally:
        torch.set_num_threads(before)
    assert out[0] == out[1]


def _records():
    base = measure(TINY, 0)
    recs = []
    for s in range(5):  # five synthetic seeds with a clear effect, from one measured record
        r = copy.deepcopy(base)
        a = r["s1"]["arms"]
        a["joint"]["test_acc"], a["monet"]["test_acc"] = 0.70 + 0.001 * s, 0.76 + 0.002 * s
        a["joint"]["probe"]["b"], a["monet"]["probe"]["b"] = 0.40 + 0.001 * s, 0.60 + 0.003 * s
        a["ensemble"] = copy.deepcopy(a["joint"])
        a["ensemble"]["probe"]["b"] = 0.62 + 0.002 * s
        a["ensemble"]["test_acc"] = 0.74
        a["ensemble"]["unimodal_acc"] = {"a": 0.6, "b": 0.6}
        recs.append(r)
    return recs


def test_mutants_move_verdicts():
    cfg = replace(TINY, arms=("joint", "monet", "ogm_ge", "ensemble"))
    recs = _records()
    for r in recs:
        r["s1"]["arms"]["ogm_ge"]["test_acc"] = 0.71
    got = judge_records("monet", cfg, recs).by_id()
    assert got["weak_undertrained_s1"].verdict == "holds"
    assert got["monet_beats_joint_s1"].verdict == "holds" and got["monet_weak_probe_s1"].verdict == "holds"
    # (1) MoNet no better than joint: the claim turns
    bad = copy.deepcopy(recs)
    for r in bad:
        r["s1"]["arms"]["monet"]["test_acc"] = r["s1"]["arms"]["joint"]["test_acc"] - 0.01
    assert judge_records("monet", cfg, bad).by_id()["monet_beats_joint_s1"].verdict == "does not hold"
    # (2) joint not under-training the weak modality: the claims become "setting invalid"
    easy = copy.deepcopy(recs)
    for r in easy:
        r["s1"]["arms"]["ensemble"]["probe"]["b"] = r["s1"]["arms"]["joint"]["probe"]["b"]
    c = judge_records("monet", cfg, easy).by_id()["monet_beats_joint_s1"]
    assert c.verdict == "inconclusive" and c.reason == "setting invalid: weak_undertrained_s1"


def test_dropping_the_weak_stream_step_lowers_its_probe():
    """Method mutant: MoNet without its weak modality's own optimizer step (lr 0) learns no weak features."""
    data = make_imbalanced_bimodal(0, n_train=600, n_val=50, n_test=600, scale_b=2.0, noise_b=0.4, flip_b=0.5)
    probes = {}
    for mutant in (False, True):
        torch.manual_seed(0)
        model = MoNet({m: MLPEncoder(32, 32, 64) for m in "ab"}, {"a": 32, "b": 32}, 10, ema_tau=0.9)
        if mutant:
            orig = model.configure_optimizers

            def frozen_b(*a, _orig=orig, _m=model, **k):
                out = _orig(*a, **k)
                for g in _m.modality_optimizers["b"].param_groups:
                    g["lr"] = 0.0
                return out

            model.configure_optimizers = frozen_b
        fit(model, data.train, epochs=8, lr=0.05, optimizer="sgd")
        probes[mutant] = modality_probe_accuracy(model, "b", data.train, data.test)
    assert probes[False] > probes[True] + 0.05, probes
