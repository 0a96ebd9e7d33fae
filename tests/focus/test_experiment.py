"""Training pieces and the quick-preset smoke test."""

import json

import numpy as np
import pytest
import torch

from icml26.core import VERDICTS, run_experiment
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


def test_quick_preset_smoke(tmp_path):
    torch.set_num_threads(1)
    run_dir = run_experiment("focus", preset="quick", out=tmp_path)
    res = json.loads((run_dir / "result.json").read_text())
    ids = {c["id"] for c in res["claims"]}
    assert ids == {
        "importance_auroc",
        "importance_vs_single_layer",
        "token_layers_half",
        "accuracy_non_inferior",
        "forced_budget_top_beats_random_bottom",
        "throughput_speedup",
    }
    assert all(c["verdict"] in VERDICTS for c in res["claims"])
    assert {"decoders", "auroc", "throughput"} <= set(res["tables"])
    assert len(res["figures"]) == 3
    assert list((tmp_path / "focus" / ".artifacts").glob("blockdiff-*.pt"))  # trained model kept for reruns
