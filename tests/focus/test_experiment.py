"""Training pieces and the quick-preset smoke test."""

import copy
import json

import numpy as np
import pytest

from icml26.core import (
    VERDICTS,
    judge_records,  # noqa: E402
)
from icml26.focus.experiment import QUICK, decoded_shares, importance_scores
from icml26.focus.tasks import (
    ANSWER_LEN,
    EOS,
    FAMILY_PROMPT_LEN,
    PAD,
    PROMPT_LEN,
    sample_family,
    sample_tasks,
    sample_xor_chain,
)
from icml26.focus.train import TrainConfig, train_block_diffusion, training_mask


def test_tasks_shapes_and_answers():
    d = sample_tasks(np.random.default_rng(0), 50)
    assert d["prompt"].shape == (50, PROMPT_LEN) and d["answer"].shape == (50, ANSWER_LEN)
    assert (d["answer"][:, -1] == EOS).all()
    with pytest.raises(ValueError, match="tasks"):
        sample_tasks(np.random.default_rng(0), 3, ("nope",))


def test_xor_chain_closed_form_and_content_only():
    d = sample_xor_chain(np.random.default_rng(0), 200, reset_p=0.15)
    assert d["prompt"].shape == (200, FAMILY_PROMPT_LEN) and d["answer"].shape == (200, ANSWER_LEN)
    assert not (d["answer"] == EOS).any() and d["scored"].all()  # content only: no EOS fill
    sym = d["prompt"][:, 1:] - 28
    x, r = sym % 2, sym // 2
    assert (r[:, 0] == 1).all() and 0.1 < r[:, 1:].mean() < 0.2
    y = d["answer"] - 10
    for i in range(1, ANSWER_LEN):  # y_i = x_i after a reset, else y_{i-1} XOR x_i
        np.testing.assert_array_equal(y[:, i], np.where(r[:, i] == 1, x[:, i], y[:, i - 1] ^ x[:, i]))
    # a hand-made chain: x = 1 0 1 1, resets at 0 and 2 -> y = 1 1 1 0
    assert [1 ^ 0, (1 ^ 0) ^ 1] == [1, 0]
    with pytest.raises(ValueError, match="reset_p"):
        sample_xor_chain(np.random.default_rng(0), 2, reset_p=1.5)


def test_sample_family_pads_and_mixes():
    e = sample_family("eos", np.random.default_rng(0), 20)
    assert e["prompt"].shape == (20, FAMILY_PROMPT_LEN)
    assert (e["prompt"][:, : FAMILY_PROMPT_LEN - PROMPT_LEN] == PAD).all() and (e["task"] >= 1).all()
    m = sample_family("xor+eos", np.random.default_rng(0), 400, xor_share=0.75)
    assert 0.65 < (m["task"] == 0).mean() < 0.85
    assert not (m["answer"][m["task"] == 0] == EOS).any()
    with pytest.raises(ValueError, match="family"):
        sample_family("nope", np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="prompt_len"):
        sample_family("xor", np.random.default_rng(0), 2, prompt_len=PROMPT_LEN)


def test_ar_then_diffusion_training_learns_and_records_both_phases():
    cfg = TrainConfig(
        n_layer=2, n_embd=16, n_head=2, n_kv_head=1, block_size=32, steps=30, batch_size=8, family="xor", ar_steps=30
    )
    _, info = train_block_diffusion(cfg)
    assert len(info["ar_loss_curve"]) == 3 and len(info["loss_curve"]) == 3
    assert info["ar_loss_curve"][-1] < info["ar_loss_curve"][0]  # the causal LM phase learns
    with pytest.raises(ValueError, match="family"):
        TrainConfig(family="nope")
    with pytest.raises(ValueError, match="ar_steps"):
        TrainConfig(ar_steps=-1)


def test_position_baselines_on_a_hand_made_case():
    # one step of a block of 6: positions 1, 3, 4 masked (0, 2, 5 decoded); position 3 is decoded this step
    recs = {"I0": [0.3, 0.1, 0.2], "I1": [0.2, 0.9, 0.1], "pos": [1, 3, 4], "dist": [1, 1, 1], "decoded": [0, 1, 0]}
    from icml26.focus import nearest_decoded_distance

    assert nearest_decoded_distance([1, 3, 4], 6).tolist() == [1, 1, 1]
    s = importance_scores(recs, 0)
    np.testing.assert_allclose(s["dI"], [-0.1, 0.8, -0.1])
    np.testing.assert_allclose(s["-I0"], [-0.3, -0.1, -0.2])
    assert s["rightmost"].tolist() == [1, 3, 4] and s["nearest_decoded"].tolist() == [-1, -1, -1]
    from sklearn.metrics import roc_auc_score

    y = recs["decoded"]
    assert roc_auc_score(y, s["dI"]) == 1.0 and roc_auc_score(y, s["-I0"]) == 1.0  # -I0 ranks 3 first too
    assert roc_auc_score(y, s["I0"]) == 0.0 and roc_auc_score(y, s["rightmost"]) == 0.5


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
    "importance_vs_position": "claim",
    "ar_importance_auroc": "claim",
    "ar_importance_vs_position": "claim",
    "token_layers_half": "claim",
    "redundancy_half": "claim",
    "accuracy_non_inferior": "claim",
    "ar_accuracy_non_inferior": "claim",
    "forced_budget_top_beats_random_bottom": "claim",
    "eviction_beats_position_rules": "claim",
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
    for cid in ("token_layers_half", "redundancy_half", "accuracy_non_inferior", "ar_accuracy_non_inferior"):
        assert by_id[cid]["requires"] == waste
        if any(by_id[p]["verdict"] != "holds" for p in waste):  # a failed precondition makes them inconclusive
            assert by_id[cid]["verdict"] == "inconclusive" and by_id[cid]["reason"].startswith("setting invalid")
    assert by_id["accuracy_non_inferior"]["test"]["unit"] == "seed"
    assert by_id["accuracy_non_inferior"]["test"]["n_units"] == len(res["seeds"]) == 3  # prompts averaged per seed
    assert {"decoders_scratch", "decoders_ar", "auroc_scratch", "auroc_ar", "eos_padded", "throughput"} <= set(
        res["tables"]
    )
    assert len(res["figures"]) == 3
    arts = tmp_path / "focus" / ".artifacts"
    for m in ("scratch", "ar"):  # one model of each kind for all seeds
        assert len(list(arts.glob(f"blockdiff-{m}-*.pt"))) == 1
    assert res["records"][0]["train"]["ar"]["ar_final_loss"] is not None  # the AR model had its causal-LM phase
    assert all("throughput" in r for r in res["records"])  # the speed probe runs per seed


def test_judge_moves_when_the_baseline_stops_wasting(quick):
    """Mutant: records whose baseline decodes every masked token per step fail the waste preconditions."""
    res = quick[1]
    records = copy.deepcopy(res["records"])
    for r in records:
        r["scratch"]["delayed_cache"]["decoded_share"] = 1.0
        r["scratch"]["delayed_cache"]["redundancy"] = 1.0
    by_id = judge_records("focus", QUICK, records, res["seeds"]).by_id()
    assert by_id["baseline_decodes_few"].verdict == "does not hold"
    assert by_id["baseline_redundancy"].verdict == "does not hold"
    assert by_id["token_layers_half"].verdict == "inconclusive"
    assert by_id["forced_budget_top_beats_random_bottom"].reason == "setting invalid: baseline_decodes_few"


def test_importance_verdict_moves_with_a_perfect_signal(quick):
    """Mutant: a dI that separates decoded tokens perfectly makes the AUROC claims hold."""
    res = quick[1]
    records = copy.deepcopy(res["records"])
    for i, r in enumerate(records):
        for m in ("scratch", "ar"):
            r[m]["auroc"]["dI"] = 0.99 - 0.01 * i
    by_id = judge_records("focus", QUICK, records, res["seeds"]).by_id()
    for cid in ("importance_auroc", "importance_vs_position", "ar_importance_auroc", "ar_importance_vs_position"):
        assert by_id[cid].verdict == "holds", cid


def test_redundancy_verdict_moves_when_the_budget_is_mis_scaled(quick):
    """Method mutant: FOCUS run with its budget mis-scaled (alpha x 1e6, so nothing is evicted) has the baseline's
    redundancy on the same model and prompts, and ``redundancy_half`` no longer holds; the real budget evicts."""
    from dataclasses import replace

    from icml26.focus.experiment import _decoders, decode_all

    res = quick[1]
    a = f"focus_a{QUICK.alpha:g}"
    assert judge_records("focus", QUICK, res["records"], res["seeds"]).by_id()["redundancy_half"].verdict == "holds"
    torch_model = QUICK.train.model().eval()
    data = QUICK.train.sample(np.random.default_rng(0), 8, "xor")
    decs = _decoders(QUICK)
    arms = {"delayed_cache": decs["delayed_cache"], a: decs[a], "mutant": replace(decs[a], focus_alpha=1.5e6)}
    out = decode_all(torch_model, arms, data, 8, np.random.default_rng(0), None)
    real, mutant = (out[n]["redundancy"] / out["delayed_cache"]["redundancy"] for n in (a, "mutant"))
    assert real < 0.9 and mutant == pytest.approx(1.0)
    records = copy.deepcopy(res["records"])
    for r in records:
        r["scratch"][a]["redundancy"] = r["scratch"]["delayed_cache"]["redundancy"] * mutant
    assert judge_records("focus", QUICK, records, res["seeds"]).by_id()["redundancy_half"].verdict == "does not hold"
