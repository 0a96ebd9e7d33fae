import dataclasses
import json

import pytest
import torch

from icml26.core import (
    VERDICTS,
    judge_records,  # noqa: E402
)
from icml26.upipe.train import main as train_main

KINDS = {
    "exactness": "check",
    "loss-curves": "check",
    "memory-formula": "check",
    "smax-fit-agrees": "check",
    "attention_dominates_step": "precondition",
    "memory-forward": "claim",
    "memory-saved": "claim",
    "memory-forward-gqa": "claim",
    "memory-saved-gqa": "claim",
    "memory-forward-allocator": "claim",
    "memory-knob": "claim",
    "memory-step": "claim",
    "longest-sequence": "claim",
    "speed": "claim",
    "speed-matches": "claim",
}
REQUIRES = {"memory-step": ["attention_dominates_step"], "longest-sequence": ["attention_dominates_step"]}


@pytest.mark.slow
def test_quick_preset_runs_and_reports_claims(quick_run):
    run_dir = quick_run("upipe")  # the quick preset shrunk to UPIPE_SMALL (tests/conftest.py), one seed
    res = json.loads((run_dir / "result.json").read_text())
    by_id = {c["id"]: c for c in res["claims"]}
    assert {k: c["kind"] for k, c in by_id.items()} == KINDS
    assert all(c["verdict"] in VERDICTS for c in res["claims"])
    for cid, req in REQUIRES.items():
        assert by_id[cid]["requires"] == req
    # checks are exact properties of our code: they hold at any scale (speed is machine-dependent, not asserted)
    for cid in ("exactness", "loss-curves", "memory-formula", "smax-fit-agrees"):
        assert by_id[cid]["verdict"] == "holds", by_id[cid]
    assert by_id["memory-saved"]["verdict"] == "holds", by_id["memory-saved"]
    assert by_id["memory-saved-gqa"]["verdict"] == "holds", by_id["memory-saved-gqa"]
    # the deterministic byte counts are one checkpointed artifact shared by the seeds
    assert list((run_dir.parent / ".artifacts").glob("memory-*.pt"))
    assert (run_dir / "memory_vs_seq.png").exists() and (run_dir / "step_timeline.png").exists()


def test_train_entry_runs_single_process():
    losses = train_main(
        [
            "--attention",
            "upipe",
            "--seq-len",
            "64",
            "--steps",
            "2",
            "--layers",
            "1",
            "--dim",
            "32",
            "--heads",
            "4",
            "--kv-heads",
            "2",
            "--head-dim",
            "8",
            "--ffn-dim",
            "64",
        ]
    )
    assert len(losses) == 2 and all(loss > 0 for loss in losses)


def _fake_record(seed: int, step_peaks: tuple[float, float], layer_peak: float) -> dict:
    layers = [
        {"C": 2, "S": 512, "Hkv": hkv, "method": m, "fwd_peak": f, "saved": sv, "bwd_peak": 1.0, "total_peak": 2.0,
         "fwd_alloc": f, "bwd_alloc": 1.0, **({"fwd_formula": f, "saved_formula": sv} if m != "ring" else {})}
        for m, f, sv in (("ulysses", 4.0, 3.0), ("upipe U=C", 1.0, 0.5), ("upipe U=2C", 2.0, 0.5), ("ring", 5.0, 3.0))
        for hkv in (8, 2)
    ]  # fmt: skip
    steps = {m: {"step_peak": p, "timeline": [[0, 0, "forward"], [1, p, "backward"]]} for m, p in
             zip(("ulysses", "upipe"), step_peaks)}  # fmt: skip
    return {
        "exactness": [{"method": "upipe", "worst": 0.0}],
        "curves": {m: [1.0, 0.5] for m in ("reference", "upipe", "ulysses", "ring")},
        "memory": {
            "layers": layers,
            "steps": steps,
            "ulysses_layer_at_step_seq": {"total_peak": layer_peak},
            "smax": {  # step peak = 1 MiB + S * 1 KiB (Ulysses) or 0.6 KiB (UPipe), budget 2 MiB
                "ulysses": {"s_max": 1024, "probes": {"512": 1.5 * 2**20, "1024": 2 * 2**20, "2048": 3 * 2**20}},
                "upipe": {"s_max": 1536, "probes": {str(k): 2**20 + 0.6 * 1024 * k for k in (512, 1024, 2048)}},
            },
        },
        "speed": {"ulysses": 1.0, "upipe": 1.0 + 0.01 * seed},
        "kernel": "test",
    }


def test_precondition_gates_the_step_claims():
    """When attention is a negligible share of the step, memory-step and longest-sequence are 'setting invalid'."""
    from icml26.upipe.experiment import QUICK

    cfg = dataclasses.replace(QUICK, mem_seq=(512,), mem_world_sizes=(2,), budget_mib=2.0)
    for layer_peak, expect in ((8.0, "holds"), (0.5, "does not hold")):
        by_id = judge_records("upipe", cfg, [_fake_record(s, (10.0, 7.0), layer_peak) for s in (0, 1)]).by_id()
        assert by_id["attention_dominates_step"].verdict == expect
        if expect == "holds":
            assert by_id["memory-step"].verdict == "holds" and by_id["longest-sequence"].verdict == "holds"
        else:
            for cid in ("memory-step", "longest-sequence"):
                assert by_id[cid].verdict == "inconclusive" and by_id[cid].reason.startswith("setting invalid")


def test_train_device_resolution_and_argument_errors():
    from icml26.upipe.train import parse_args, resolve_device

    assert resolve_device("auto", "gloo").type == "cpu" and resolve_device("cpu", "gloo").type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
            resolve_device("auto", "nccl")
    with pytest.raises(SystemExit):
        parse_args(["--backend", "nccl", "--device", "cpu"])
    assert parse_args(["--dtype", "bfloat16"]).dtype == "bfloat16"


def test_smax_fit_is_the_budget_crossing_of_a_least_squares_line():
    from icml26.upipe.experiment import smax_fit

    probes = {str(s): 3e6 + 1500.0 * s for s in (1024, 2048, 4096, 3072)}
    fit = smax_fit(probes, budget=9e6)
    assert fit["s_max_fit"] == pytest.approx(4000.0) and fit["r2"] == pytest.approx(1.0)
    assert fit["slope"] == pytest.approx(1500.0) and fit["intercept"] == pytest.approx(3e6)
    with pytest.raises(ValueError, match="probes"):
        smax_fit({"1024": 1.0}, 2.0)


def test_longest_sequence_verdict_follows_the_fitted_ratio():
    """A UPipe whose step peak grows like Ulysses's (no saving) must fail longest-sequence; the grid value alone
    (1536 / 1024 = 1.5) would have let it hold."""
    from icml26.upipe.experiment import QUICK

    cfg = dataclasses.replace(QUICK, mem_seq=(512,), mem_world_sizes=(2,), budget_mib=2.0)
    good = [_fake_record(s, (10.0, 7.0), 8.0) for s in (0, 1)]
    assert judge_records("upipe", cfg, good).by_id()["longest-sequence"].verdict == "holds"
    bad = [_fake_record(s, (10.0, 7.0), 8.0) for s in (0, 1)]
    for rec in bad:
        rec["memory"]["smax"]["upipe"]["probes"] = dict(rec["memory"]["smax"]["ulysses"]["probes"])
    by_id = judge_records("upipe", cfg, bad).by_id()
    assert by_id["longest-sequence"].verdict == "does not hold"
    assert by_id["smax-fit-agrees"].verdict == "does not hold"  # the bisection (1536) disagrees with its probes
