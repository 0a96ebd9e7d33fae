"""Smoke test of the quick preset through the core runner; thread-independence; a method mutant."""

import json
from dataclasses import replace

import torch

from icml26.core import VERDICTS
from icml26.core.runner import limited_threads
from icml26.monet import MLPEncoder, MoNet, fit, make_imbalanced_bimodal, modality_probe_accuracy
from icml26.monet.claims import CONTROLS
from icml26.monet.experiment import EXPERIMENT, QUICK, measure

CHECKS = (
    "decoupled_streams",
    "stable_memory_exact",
    "fused_path_reads_memory",
    "coordination_weights_formula",
    "coordination_weights_sum",
    "ogm_modulates_gradients",
    "cms_periods_respected",
    "equal_encoder_updates",
)
KINDS = {
    "weak_undertrained_s1": "precondition",
    "fusion_helps_s1": "precondition",
    "joint_headroom_s1": "precondition",
    **{f"{c}_s1": "claim" for c in CONTROLS},
    **{f"{c}_s1_ctl_{a}": "control" for c, arms in CONTROLS.items() for a in arms},
    **{c: "check" for c in CHECKS},
}
REQUIRES = {
    "monet_beats_joint_s1": ["weak_undertrained_s1", "fusion_helps_s1", "joint_headroom_s1"],
    "stop_gradient_weak_probe_s1": ["weak_undertrained_s1"],
}
TINY = replace(QUICK, s1_sizes=(128, 64, 128), epochs=2, probe_every=2)


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("monet")  # the session-wide quick run (tests/conftest.py)
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":  # every claim has a control arm (none is exempt: no closed-form truth here)
            assert by_id[cid]["requires"] == REQUIRES.get(cid, ["weak_undertrained_s1", "fusion_helps_s1"])
            assert by_id[cid]["controls"] == [f"{cid}_ctl_{a}" for a in CONTROLS[cid[:-3]]]
            assert not by_id[cid]["no_control"]
    assert by_id["monet_beats_joint_s1"]["test"]["min_effect"] == 0.02
    names = {"MoNet", "Joint", "OGM-GE", "PMR", "MMPareto", "MLA-lite", "Unimodal ensemble"}
    assert names <= set(result["budgets"])
    assert len({(t["configs"], t["steps"]) for a, t in result["budgets"].items() if a in names}) == 1  # parity
    tables = {"accuracy", "direct_comparisons", "learned_diagnostics", "single_modalities", "tuning_grids"}
    assert tables <= set(result["tables"])
    assert any(r["arm"] == "Best single modality" for r in result["tables"]["accuracy"])
    for name in ("probe_curves.png", "monet_diagnostics.png", "report.md"):
        assert (run_dir / name).exists()
    rec = result["records"][0]["s1"]
    for arm in ("monet", "joint", "ensemble"):
        assert rec["arms"][arm]["test_acc"] > 0.2  # chance is 0.1
    assert set(rec["ablations"]) == {"coupled", "no_ema", "single_timescale", "no_adaptive"}


def test_measure_is_identical_under_one_and_two_threads():
    before = torch.get_num_threads()
    out = []
    cfg = replace(TINY, arms=("joint", "monet", "ogm_ge", "ensemble"), ablations=("no_ema",))
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            with limited_threads(EXPERIMENT.threads):
                torch.manual_seed(0)
                out.append(json.dumps(measure(cfg, 3), sort_keys=True, default=float))
    finally:
        torch.set_num_threads(before)
    assert out[0] == out[1]


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
