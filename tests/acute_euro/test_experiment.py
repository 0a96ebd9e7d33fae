"""Smoke test of the quick preset, and the LM task pipeline on a tiny untrained model."""

import json

import numpy as np
import torch

from icml26.core import VERDICTS, run_experiment


def test_quick_preset_end_to_end(tmp_path):
    run_dir = run_experiment("acute_euro", preset="quick", out=tmp_path)
    result = json.loads((run_dir / "result.json").read_text())
    ids = {c["id"] for c in result["claims"]}
    assert {"auc_euro_digits", "smece_digits_max_0.10", "smece_digits_below_raw", "sample_efficiency_digits"} <= ids
    assert {"sanity_oracle", "sanity_anti_oracle", "sanity_base_rate_ece", "sanity_base_rate_auc"} <= ids
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    # the metric sanity checks are exact properties: they must hold on real outputs
    assert all(c["verdict"] == "holds" for c in result["claims"] if c["id"].startswith("sanity_"))
    assert {"euro_curves.png", "reliability.png", "sample_efficiency.png"} <= {p.name for p in run_dir.iterdir()}


def test_lm_tasks_pipeline_on_untrained_model():
    from icml26.acute_euro.experiment import _lm_task
    from icml26.common.facts import DEFAULT_TOOLS, make_fact_world, mcqa_item, tool_call_item
    from icml26.common.tinylm import TinyLM, TinyLMConfig

    world = make_fact_world(8, seed=0, name_words=1)
    tok = world.tokenizer(DEFAULT_TOOLS)
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(vocab_size=len(tok), n_layer=2, n_head=2, n_embd=16, block_size=40)).eval()
    rng = np.random.default_rng(0)
    mc = [mcqa_item(world, i, r.name, rng) for i in range(8) for r in world.relations]
    out = _lm_task(model, tok, [p for p, _, _ in mc], [a for _, a, _ in mc], 1)
    assert out["acts"].shape == (32, 2, 16)
    assert np.all((out["raw"] >= 0) & (out["raw"] <= 1)) and set(np.unique(out["correct"])) <= {0.0, 1.0}
    # raw confidence of a one-word answer is the top next-token probability
    x = tok.batch([mc[0][0]])
    with torch.no_grad():
        top = torch.softmax(model(x)[0, -1], -1).max().item()
    assert np.isclose(out["raw"][0], top, atol=1e-6)
    calls = [tool_call_item(world, i, t) for i in range(8) for t in DEFAULT_TOOLS]
    out = _lm_task(model, tok, [p for p, _ in calls], [c for _, c in calls], 12)
    assert out["acts"].shape == (32, 2, 16)
    assert np.all((out["raw"] >= 0) & (out["raw"] <= 1)) and np.all(out["length"] >= 1)
    assert out["correct"].sum() == 0  # an untrained model does not produce exact calls
