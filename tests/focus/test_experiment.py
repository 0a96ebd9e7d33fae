"""Training pieces and the quick-preset smoke test."""

import copy
import json

import numpy as np
import pytest

from icml26.core import (
    VERDICTS,
    judge_records,  # noqa: E402
)
from icml26.focus.experiment import QUICK, decoded_shares
from icml26.focus.tasks import ANSWER_LEN, EOS, PROMPT_LEN, sample_tasks
from icml26.focus.train import training_mask


def test_tasks_shapes_and_answers():
    d = sample_tasks(np.random.default_rng(0), 50)
    assert d["prompt"].shape == (50, PROMPT_LEN) and d["answer"].shape == (50, ANSWER_LEN)
    assert (d["answer"][:, -1] == EOS).all()
    with pytest.raises(ValueError, match="tasks"):
        sample_tasks(np.random.default_rng(0), 3, ("nope",))


def test_training_mask_structure():
    mask, pos = training_mask(2, 4, 2)  # prompt 2, clean blocks [2,3],[4,5], noisy blocks [6,7],[8,9]
    assert mask[6, 7] and mask[6, 0] and not mask[6, 2]  # noisy block 1 sees its block and the prompt only
    assert mask[8, 2] and mask[8, 3] and not mask[8, 4] and not mask[8, 6]  # block 2: clean block 1, not itself clean
    assert mask[3, 2] and not mask[2, 4] and mask[4, 3]  # clean copy is block-causal
    assert pos.tolist() == [0, 1, 2, 3, 4, 5, 2, 3, 4, 5]


KINDS = {
    "baseline_decodes_few": "precondition",
    "baseline_redundancy": "precondition",
    "importance_auroc": "claim",
    "importance_vs_single_layer": "claim",
    "token_layers_half": "claim",
    "accuracy_non_inferior": "claim",
    "forced_budget_top_beats_random_bottom": "claim",
    "throughput_speedup": "claim",
    "unlimited_budget_exact": "check",
}


def test_decoded_shares_reset_per_block():
    # block of 4: steps decode 1, 1, 2 (shares 1/4, 1/3, 2/2), then the next block decodes 4 at once
    assert decoded_shares([[1, 1, 2, 4]], 4) == [0.25, 1 / 3, 1.0, 1.0]
    assert decoded_shares([[4], [2, 2]], 4) == [1.0, 0.5, 1.0]


@pytest.fixture(scope="module")
def quick(quick_run):
    run_dir = quick_run("focus")
    out = run_dir.parent.parent
    return out, json.loads((run_dir / "result.json").read_text())


def test_quick_preset_smoke(quick):
    tmp_path, res = quick
    by_id = {c["id"]: c for c in res["claims"]}
    assert {i: c["kind"] for i, c in by_id.items()} == KINDS
    assert all(c["verdict"] in VERDICTS for c in res["claims"])
    assert by_id["unlimited_budget_exact"]["verdict"] == "holds"  # checks must hold
    waste = ["baseline_decodes_few", "baseline_redundancy"]
    for cid in ("token_layers_half", "accuracy_non_inferior", "throughput_speedup"):
        assert by_id[cid]["requires"] == waste
        if any(by_id[p]["verdict"] != "holds" for p in waste):  # a failed precondition makes them inconclusive
            assert by_id[cid]["verdict"] == "inconclusive" and by_id[cid]["reason"].startswith("setting invalid")
    assert by_id["accuracy_non_inferior"]["test"]["unit"] == "seed"
    assert by_id["accuracy_non_inferior"]["test"]["n_units"] == 2  # prompts averaged per seed
    assert {"decoders", "auroc", "throughput"} <= set(res["tables"])
    assert len(res["figures"]) == 3
    assert len(list((tmp_path / "focus" / ".artifacts").glob("blockdiff-*.pt"))) == 1  # one model for all seeds
    assert all("throughput" in r for r in res["records"])  # the speed probe runs per seed


def test_judge_moves_when_the_baseline_stops_wasting(quick):
    """Mutant: records whose baseline decodes every masked token per step fail the waste preconditions."""
    res = quick[1]
    records = copy.deepcopy(res["records"])
    for r in records:
        r["delayed_cache"]["decoded_share"] = 1.0
        r["delayed_cache"]["redundancy"] = 1.0
    by_id = judge_records("focus", QUICK, records, res["seeds"]).by_id()
    assert by_id["baseline_decodes_few"].verdict == "does not hold"
    assert by_id["baseline_redundancy"].verdict == "does not hold"
    assert by_id["token_layers_half"].verdict == "inconclusive"
    assert by_id["forced_budget_top_beats_random_bottom"].reason == "setting invalid: baseline_decodes_few"
