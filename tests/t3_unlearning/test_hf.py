"""The logits processor plugs into Hugging Face ``generate`` (needs the ``[lm]`` extra; skipped without it)."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from icml26.t3_unlearning import T3Unlearner  # noqa: E402
from icml26.t3_unlearning.data import make_fictitious_authors, split_forget  # noqa: E402


def test_processor_in_hf_generate_matches_t3_generate():
    data = make_fictitious_authors(4, seed=1, n_countries=4)
    tok = data.tokenizer
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(
        n_layer=2,
        n_head=2,
        n_embd=16,
        vocab_size=len(tok),
        n_positions=48,
        bos_token_id=tok.eos_id,
        eos_token_id=tok.eos_id,
        pad_token_id=tok.pad_id,
    )
    model = transformers.GPT2LMHeadModel(cfg).eval()
    sp = split_forget(data, 25, seed=0)

    def pairs(items):
        return [(tok.encode(q.prompt), tok.encode(q.answer)) for q in items]

    u = T3Unlearner(model, temperature=3.0, guidance=2.0, hidden=8, seed=0).fit(
        pairs(sp.retain), pairs(sp.forget), epochs=3
    )
    x = pairs(sp.forget)[0][0]
    ids = torch.tensor([x])
    out = model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=6,
        do_sample=False,
        logits_processor=transformers.LogitsProcessorList([u.logits_processor()]),
        pad_token_id=tok.pad_id,
        eos_token_id=None,
    )
    assert out[0, : len(x)].tolist() == x  # the prompt is untouched
    assert out[0, len(x) :].tolist() == u.generate([x], max_new_tokens=6)[0]
    plain = model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=6,
        do_sample=False,
        pad_token_id=tok.pad_id,
        eos_token_id=None,
    )
    assert plain.shape == out.shape
    # the processor is exactly scores / T + lambda log f_hat on the HF model's own logits
    scores = model(ids).logits[:, -1]
    hidden = model(ids, output_hidden_states=True).hidden_states[-1]
    expected = scores / 3.0 + 2.0 * u.log_f_hat(hidden.mean(1))
    assert torch.allclose(u.logits_processor()(ids, scores), expected, atol=1e-4)
