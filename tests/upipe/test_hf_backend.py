"""UPipe as a ``transformers`` attention backend: a Llama built from a config with ``attn_implementation="upipe"``
on 2 ranks (gloo, sequence sharded) gives the loss and gradients of the same model on one process with ``sdpa``."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from icml26.upipe import testing  # noqa: E402
from icml26.upipe._checks import hf_batch, hf_llama_on_rank  # noqa: E402

CFG = {
    "B": 2,
    "S": 32,
    "llama": dict(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        attention_dropout=0.0,
    ),
}


def _reference(steps: int, seed: int) -> dict:
    ids, labels = hf_batch(CFG, seed)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(
        transformers.LlamaConfig(**CFG["llama"]), attn_implementation="sdpa"
    )
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses, grads = [], None
    for _ in range(steps):
        opt.zero_grad()
        logits = model(input_ids=ids, use_cache=False).logits
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
        loss.backward()
        losses.append(float(loss.detach()))
        if grads is None:
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        opt.step()
    return {"losses": losses, "grads": grads}


@pytest.mark.parametrize("world", [2])
def test_hf_llama_with_upipe_attention_trains_like_sdpa_on_one_process(world):
    ref = _reference(steps=3, seed=0)
    got = testing.spawn(hf_llama_on_rank, world, args=(CFG, 3, 0), timeout_s=120)
    for r in got:
        assert r["losses"] == pytest.approx(ref["losses"], rel=1e-5, abs=1e-6)
        assert r["grads"].keys() == ref["grads"].keys()
        for name, g in ref["grads"].items():
            torch.testing.assert_close(r["grads"][name], g, rtol=1e-4, atol=1e-6, msg=name)
    assert ref["losses"][-1] < ref["losses"][0]  # three steps train (the comparison covers the updates too)


def test_the_backend_on_one_process_equals_sdpa_and_refuses_padding():
    from icml26.upipe.hf import register_hf_attention

    assert register_hf_attention() == "upipe"
    ids, labels = hf_batch(CFG, 1)
    outs = {}
    for impl in ("sdpa", "upipe"):
        torch.manual_seed(1)
        m = transformers.AutoModelForCausalLM.from_config(
            transformers.LlamaConfig(**CFG["llama"]), attn_implementation=impl
        )
        assert m.config._attn_implementation == impl
        outs[impl] = m(input_ids=ids, use_cache=False).logits
    torch.testing.assert_close(outs["upipe"], outs["sdpa"], rtol=1e-4, atol=1e-5)
    mask = torch.ones_like(ids)
    mask[0, :3] = 0
    with pytest.raises(ValueError, match="padding"):
        m(input_ids=ids, attention_mask=mask, use_cache=False)
    with pytest.raises(ValueError, match="use_cache=False|KV cache"):
        m.generate(ids[:, :4], attention_mask=torch.ones_like(ids[:, :4]), max_new_tokens=2, do_sample=False)
