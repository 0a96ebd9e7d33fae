"""The logits processor plugs into Hugging Face ``generate`` (needs the ``[lm]`` extra; skipped without it)."""

import warnings

import pytest
import torch

transformers = pytest.importorskip("transformers")

from icml26.t3_unlearning import T3Unlearner  # noqa: E402
from icml26.t3_unlearning.data import make_fictitious_authors, split_forget  # noqa: E402


def test_processor_in_hf_generate_matches_t3_generate():
    data = make_fictitious_authors(4, seed=1, n_countries=4)
    tok = data.tokenizer
    model = _tiny_gpt2(tok)
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


def _tiny_gpt2(tok, seed=0):
    torch.manual_seed(seed)
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
    return transformers.GPT2LMHeadModel(cfg).eval()


def test_left_padded_batched_generate_equals_per_prompt_calls_with_one_forward_per_token():
    data = make_fictitious_authors(4, seed=1, n_countries=4)
    tok = data.tokenizer
    model = _tiny_gpt2(tok)
    sp = split_forget(data, 25, seed=0)
    pairs = [(tok.encode(q.prompt), tok.encode(q.answer)) for q in sp.retain + sp.forget]
    u = T3Unlearner(model, temperature=2.0, guidance=3.0, hidden=8, seed=0).fit(pairs[4:], pairs[:4], epochs=3)
    prompts = sorted({tuple(x) for x, _ in pairs}, key=len)
    prompts = [list(prompts[0]), list(prompts[-1]), list(prompts[len(prompts) // 2])]
    assert len({len(p) for p in prompts}) > 1  # different lengths: the batch needs padding
    L = max(len(p) for p in prompts)
    ids = torch.tensor([[tok.pad_id] * (L - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (L - len(p)) + [1] * len(p) for p in prompts])
    kw = dict(max_new_tokens=6, do_sample=False, pad_token_id=tok.pad_id, eos_token_id=None)
    proc = u.logits_processor(attention_mask=mask)
    with _count_forwards(model) as n:
        out = model.generate(ids, attention_mask=mask, logits_processor=transformers.LogitsProcessorList([proc]), **kw)
    assert n[0] == 6 and proc.n_forwards_ == 0  # generate's own 6 forwards feed the processor too
    own = u.logits_processor(attention_mask=mask, share_forward=False)
    with _count_forwards(model) as n:
        again = model.generate(ids, attention_mask=mask, logits_processor=transformers.LogitsProcessorList([own]), **kw)
    assert torch.equal(again, out)
    assert own.n_forwards_ == 6 and n[0] == 12  # its own cache: one prefill + one single-token forward per token
    for r, p in enumerate(prompts):
        x = torch.tensor([p])
        one = model.generate(
            x,
            attention_mask=torch.ones_like(x),
            logits_processor=transformers.LogitsProcessorList([u.logits_processor()]),
            **kw,
        )
        assert out[r, L:].tolist() == one[0, len(p) :].tolist() == u.generate([p], max_new_tokens=6)[0]
    # the scores themselves (not only the argmax) agree between the padded row and the unpadded prompt
    r = 0
    s_pad = model(ids, attention_mask=mask, position_ids=(mask.cumsum(1) - 1).clamp_min(0)).logits[:, -1]
    s_one = model(torch.tensor([prompts[r]])).logits[:, -1]
    a = u.logits_processor(attention_mask=mask)(ids, s_pad)[r]
    b = u.logits_processor()(torch.tensor([prompts[r]]), s_one)[0]
    assert torch.allclose(a, b, atol=1e-4)


def test_processor_input_errors():
    data = make_fictitious_authors(4, seed=1, n_countries=4)
    tok = data.tokenizer
    model = _tiny_gpt2(tok)
    sp = split_forget(data, 25, seed=0)
    pairs = [(tok.encode(q.prompt), tok.encode(q.answer)) for q in sp.retain + sp.forget]
    u = T3Unlearner(model, hidden=8, seed=0).fit(pairs[4:], pairs[:4], epochs=1)
    proc = u.logits_processor()
    scores = torch.zeros(1, len(tok))
    with pytest.raises(TypeError, match="input_ids"):
        proc("who wrote it", scores)
    with pytest.raises(TypeError, match="input_ids"):
        proc(torch.zeros(1, 3), scores)
    with pytest.raises(ValueError, match="input_ids.*context is 48"):
        proc(torch.zeros(1, 49, dtype=torch.long), scores)
    with pytest.raises(TypeError, match="x_ids"):
        u.generate(["who wrote it"], max_new_tokens=2)
    with pytest.raises(ValueError, match="x_ids.*context of 48"):
        u.generate([[1] * 45], max_new_tokens=4)
    with pytest.raises(ValueError, match="attention_mask"):
        u.logits_processor(attention_mask=torch.tensor([[2, 1]]))


class _count_forwards:
    """Counts the base model's forwards inside a ``with`` block (every caller's: generate's and the processor's)."""

    def __init__(self, model):
        self.model, self.n = model, [0]

    def __enter__(self):
        self.h = self.model.register_forward_hook(lambda *a: self.n.__setitem__(0, self.n[0] + 1))
        return self.n

    def __exit__(self, *exc):
        self.h.remove()


class _FromScratch:
    """Reference processor: recomputes every call from the whole sequence (no cache, no shared forward)."""

    def __init__(self, u, mask):
        self.u, self.mask = u, mask

    def __call__(self, input_ids, scores):
        mask = self.mask
        if mask is not None and mask.shape[0] != input_ids.shape[0]:
            mask = mask.repeat_interleave(input_ids.shape[0] // mask.shape[0], dim=0)
        return self.u.logits_processor(attention_mask=mask, share_forward=False)(input_ids, scores)


def _padded_batch(seed=1):
    data = make_fictitious_authors(4, seed=seed, n_countries=4)
    tok = data.tokenizer
    model = _tiny_gpt2(tok)
    sp = split_forget(data, 25, seed=0)
    pairs = [(tok.encode(q.prompt), tok.encode(q.answer)) for q in sp.retain + sp.forget]
    u = T3Unlearner(model, temperature=2.0, guidance=3.0, hidden=8, seed=0).fit(pairs[4:], pairs[:4], epochs=3)
    prompts = sorted({tuple(x) for x, _ in pairs}, key=len)
    prompts = [list(prompts[0]), list(prompts[-1]), list(prompts[len(prompts) // 2])]
    L = max(len(p) for p in prompts)
    ids = torch.tensor([[tok.pad_id] * (L - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (L - len(p)) + [1] * len(p) for p in prompts])
    return tok, model, u, prompts, ids, mask


@pytest.mark.parametrize("share_forward", [True, False])
@pytest.mark.parametrize("how", ["beams", "beams_and_sequences"])
def test_beam_search_with_a_prompt_mask_equals_the_from_scratch_reference(how, share_forward):
    tok, model, u, prompts, ids, mask = _padded_batch()
    kw = dict(max_new_tokens=5, do_sample=False, pad_token_id=tok.pad_id, eos_token_id=None, num_beams=3)
    if how == "beams_and_sequences":
        kw["num_return_sequences"] = 2
    ref = model.generate(ids, attention_mask=mask, logits_processor=[_FromScratch(u, mask)], **kw)
    proc = u.logits_processor(attention_mask=mask, share_forward=share_forward)  # B rows; generate uses 3B
    with _count_forwards(model) as n:
        out = model.generate(ids, attention_mask=mask, logits_processor=[proc], **kw)
    assert torch.equal(out, ref)
    # one base forward per new token in all when shared; its own cache (no re-prefill after reordering) if not
    assert n[0] == (5 if share_forward else 10) and proc.n_forwards_ == (0 if share_forward else 5)
    plain = model.generate(ids, attention_mask=mask, **kw)
    assert not torch.equal(plain, out)  # the processor changed the beams (so the comparison above shows something)


def test_the_hf_idiom_mask_given_to_generate_only_is_read_from_generates_forward():
    tok, model, u, prompts, ids, mask = _padded_batch()
    kw = dict(max_new_tokens=6, do_sample=False, pad_token_id=tok.pad_id, eos_token_id=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no padding warning: generate had the mask
        out = model.generate(ids, attention_mask=mask, logits_processor=[u.logits_processor()], **kw)
    L = ids.shape[1]
    for r, p in enumerate(prompts):
        assert out[r, L:].tolist() == u.generate([p], max_new_tokens=6)[0]


def test_a_left_padded_batch_without_any_mask_warns_once():
    tok, model, u, prompts, ids, mask = _padded_batch()
    proc = u.logits_processor(share_forward=False)
    scores = torch.zeros(ids.shape[0], len(tok))
    with pytest.warns(UserWarning, match="pad token.*attention_mask"):
        proc(ids, scores)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proc.reset()
        proc(ids, scores)  # once per processor
        u.logits_processor(attention_mask=mask, share_forward=False)(ids, scores)  # a mask: no warning
        u.logits_processor(share_forward=False)(ids[mask.all(1)], scores[: int(mask.all(1).sum())])  # unpadded


def test_a_mask_whose_rows_do_not_divide_the_batch_is_refused_and_hooks_go_with_the_processor():
    import gc

    tok, model, u, prompts, ids, mask = _padded_batch()
    proc = u.logits_processor(attention_mask=mask[:2], share_forward=False)
    with pytest.raises(ValueError, match="attention_mask has shape"):
        proc(ids, torch.zeros(ids.shape[0], len(tok)))
    before = len(model._forward_hooks) + len(model._forward_pre_hooks)
    p = u.logits_processor()
    assert len(model._forward_hooks) + len(model._forward_pre_hooks) == before + 2
    del p
    gc.collect()
    assert len(model._forward_hooks) + len(model._forward_pre_hooks) == before
