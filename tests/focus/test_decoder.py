"""Decoder equivalences and invariants (spec section 7) on a small random model with peaked logits."""

import math

import pytest
import torch

from icml26.focus import BlockDiffusionDecoder, BlockDiffusionLM, DllmConfig, block_causal_mask

MASK, V, P, G, B = 1, 24, 6, 16, 8


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = BlockDiffusionLM(V, n_layer=4, n_embd=32, n_head=4, n_kv_head=2, max_len=P + G)
    with torch.no_grad():
        m.wte.weight.mul_(12.0)  # peaked, input-dependent predictions: at tau=0.2 some steps decode several
        m.wte.weight[MASK].mul_(0.05)
    return m.eval()


@pytest.fixture(scope="module")
def prompts():
    g = torch.Generator().manual_seed(1)
    return torch.randint(2, V, (5, P), generator=g)


def _cfg(**kw):
    return DllmConfig(block_size=B, threshold=0.2, mask_id=MASK, **kw)


def _reference_full_recompute(model, prompt, cfg):
    """Textbook decoding: re-run the whole sequence (no cache of any kind) every step."""
    x = torch.cat((prompt, torch.full((G,), MASK)))
    for b in range(G // B):
        lo, hi = P + b * B, P + (b + 1) * B
        while (x[lo:hi] == MASK).any():
            with torch.no_grad():
                lg = model(x[None, :hi], block_causal_mask(P, hi, B))[0, lo:hi].float()
            lg[:, MASK] = -math.inf
            conf, pred = lg.softmax(-1).max(-1)
            conf = torch.where(x[lo:hi] == MASK, conf, -1.0)
            un = conf > cfg.threshold
            if not un.any():
                un[conf.argmax()] = True
            x[lo:hi] = torch.where(un, pred, x[lo:hi])
    return x[P:]


def test_full_recompute_equals_textbook_decoding(model, prompts):
    cfg = _cfg(enable_delayed_cache=False)
    toks, _ = BlockDiffusionDecoder(model, cfg).generate(prompts, G)
    for i in range(len(prompts)):
        assert torch.equal(toks[i], _reference_full_recompute(model, prompts[i], cfg))


def test_cached_prefix_blocks_equal_recompute(model, prompts):
    x = torch.cat((prompts, torch.randint(2, V, (len(prompts), G))), 1)
    with torch.no_grad():
        full = model(x, block_causal_mask(P, P + G, B))
        _, cache = model.extend(x[:, :P], None)
        _, cache = model.extend(x[:, P : P + B], cache)
        last, _ = model.extend(x[:, P + B :], cache)
    torch.testing.assert_close(last, full[:, P + B :], rtol=1e-5, atol=1e-5)


def test_unlimited_budget_equals_delayed_cache_bit_for_bit(model, prompts):
    base, bs = BlockDiffusionDecoder(model, _cfg()).generate(prompts, G)
    foc, fs = BlockDiffusionDecoder(model, _cfg(enable_focus=True, focus_alpha=math.inf)).generate(prompts, G)
    assert torch.equal(base, foc)
    assert fs.decoded_per_step == bs.decoded_per_step
    assert fs.processed_token_layers == bs.processed_token_layers


def test_focus_evicts_and_saves_token_layers(model, prompts):
    _, bs = BlockDiffusionDecoder(model, _cfg()).generate(prompts, G)
    _, fs = BlockDiffusionDecoder(model, _cfg(enable_focus=True, focus_alpha=1.0)).generate(prompts, G)
    assert sum(map(sum, fs.kept_per_step)) < sum(map(sum, fs.processed_per_step))
    per_step = sum(fs.processed_token_layers) / sum(fs.steps)
    assert per_step < sum(bs.processed_token_layers) / sum(bs.steps)


@pytest.mark.parametrize(
    "kw",
    [
        {"enable_delayed_cache": False},
        {},
        {"enable_focus": True},
        {"enable_focus": True, "eviction": "random"},
        {"enable_focus": True, "eviction": "no_rules"},
        {"enable_focus": True, "fixed_budget": 2, "eviction": "bottom"},
        {"enable_focus": True, "eviction": "rightmost"},
        {"enable_focus": True, "eviction": "nearest_decoded", "tokens_per_step": 2},
        {"threshold": 1.0, "tokens_per_step": 3},
    ],
)
def test_decoding_invariants(model, prompts, kw):
    cfg = DllmConfig(**{"block_size": B, "threshold": 0.2, "mask_id": MASK, **kw})
    toks, st = BlockDiffusionDecoder(model, cfg).generate(prompts, G)
    L = model.n_layer
    assert toks.shape == (len(prompts), G)
    assert not (toks == MASK).any()
    for i in range(len(prompts)):
        assert min(st.decoded_per_step[i]) >= 1
        assert sum(st.decoded_per_step[i]) == G
        assert st.steps[i] == len(st.decoded_per_step[i])
        assert all(k <= p for k, p in zip(st.kept_per_step[i], st.processed_per_step[i]))
        early = 2 if cfg.enable_focus else L
        want = sum(early * p + (L - early) * k for p, k in zip(st.processed_per_step[i], st.kept_per_step[i]))
        assert st.processed_token_layers[i] == want
    assert st.commit_token_layers == len(prompts) * G * L


@pytest.mark.parametrize("kw", [{}, {"enable_focus": True}])
def test_batched_equals_one_by_one(model, prompts, kw):
    dec = BlockDiffusionDecoder(model, _cfg(**kw))
    batch, _ = dec.generate(prompts, G)
    for i in range(len(prompts)):
        single, _ = dec.generate(prompts[i], G)
        assert torch.equal(single, batch[i])


def test_fixture_decodes_several_tokens_in_some_steps(model, prompts):
    _, st = BlockDiffusionDecoder(model, _cfg()).generate(prompts, G)
    assert max(max(d) for d in st.decoded_per_step) > 1  # otherwise the equivalence tests would be too easy


def test_record_labels_match_decoding(model, prompts):
    _, st = BlockDiffusionDecoder(model, _cfg()).generate(prompts, G, record=True)
    r = st.records
    assert len(r["I0"]) == len(r["I1"]) == len(r["decoded"]) == len(r["pos"])
    assert sum(r["decoded"]) == len(prompts) * G  # every token is decoded exactly once while masked
    layers = torch.tensor(r["I_layers"])
    assert layers.shape == (len(r["I0"]), model.n_layer)
    torch.testing.assert_close(layers[:, 0], torch.tensor(r["I0"]), check_dtype=False)
    torch.testing.assert_close(layers[:, 1], torch.tensor(r["I1"]), check_dtype=False)


def test_errors_name_the_argument(model, prompts):
    dec = BlockDiffusionDecoder(model, _cfg())
    with pytest.raises(ValueError, match="max_len"):
        dec.generate(torch.randint(2, V, (P + 1,)), G)
    with pytest.raises(ValueError, match="block_size"):
        dec.generate(prompts, 12)
    with pytest.raises(ValueError, match="alpha"):
        _cfg(focus_alpha=0.0)
    with pytest.raises(ValueError, match="alpha"):
        _cfg(focus_alpha=-2)
    with pytest.raises(ValueError, match="threshold"):
        DllmConfig(threshold=1.5)
    with pytest.raises(ValueError, match="eviction"):
        _cfg(eviction="lru")
    with pytest.raises(ValueError, match="max_new_tokens"):
        dec.generate(prompts, 0)
    with pytest.raises(TypeError, match="model"):
        BlockDiffusionDecoder(torch.nn.Linear(2, 2), _cfg())
    with pytest.raises(ValueError, match="n_kv_head"):
        BlockDiffusionLM(V, n_head=4, n_kv_head=3)


def test_decoder_selection_is_focus_select(model):
    import numpy as np

    from icml26.focus import focus_budget, focus_select

    dec = BlockDiffusionDecoder(model, _cfg(enable_focus=True, focus_alpha=1.5))
    rng = np.random.default_rng(0)
    for _ in range(30):
        m = int(rng.integers(1, 9))
        pos = np.sort(rng.choice(8, m, replace=False))
        i0, i1 = rng.random(m), rng.random(m)
        avg, prog = float(rng.uniform(0, 4)), int(rng.integers(-1, 8))
        want = focus_select(torch.from_numpy(i1 - i0), torch.from_numpy(pos), focus_budget(m, avg, 1.5), prog)
        assert dec._select(i0, i1, pos, avg, prog).tolist() == want.tolist()


@pytest.mark.parametrize("k", [1, 3])
def test_tokens_per_step_at_threshold_one_decodes_exactly_k(model, prompts, k):
    """LLaDA-style low-confidence remasking: nothing passes tau = 1, so exactly k tokens (fewer at a block's end)."""
    _, st = BlockDiffusionDecoder(model, _cfg_k(k)).generate(prompts, G)
    want = [k] * (B // k) + ([B % k] if B % k else [])
    assert all(d == want * (G // B) for d in st.decoded_per_step)


def _cfg_k(k, **kw):
    return DllmConfig(block_size=B, threshold=1.0, tokens_per_step=k, mask_id=MASK, **kw)


def test_tokens_per_step_one_is_the_floor_rule(model, prompts):
    a, sa = BlockDiffusionDecoder(model, _cfg()).generate(prompts, G)
    b, sb = BlockDiffusionDecoder(model, _cfg(tokens_per_step=1)).generate(prompts, G)
    assert torch.equal(a, b) and sa.decoded_per_step == sb.decoded_per_step
    with pytest.raises(ValueError, match="tokens_per_step"):
        _cfg(tokens_per_step=0)
    with pytest.raises(ValueError, match="tokens_per_step"):
        _cfg(tokens_per_step=1.5)


def test_unlimited_budget_equals_baseline_on_the_xor_task():
    """The main setting: reset-XOR prompts, one token per step; alpha = inf gives B1's tokens and steps."""
    import numpy as np

    from icml26.focus.tasks import ANSWER_LEN, EOS, PAD, sample_xor_chain
    from icml26.focus.train import TrainConfig

    torch.manual_seed(3)
    m = TrainConfig(n_layer=3, n_embd=16, n_head=2, n_kv_head=1, block_size=32, family="xor").model().eval()
    p = torch.from_numpy(sample_xor_chain(np.random.default_rng(0), 4)["prompt"])
    base = DllmConfig(block_size=32, threshold=1.0, suppress_ids=(PAD, EOS))
    t0, s0 = BlockDiffusionDecoder(m, base).generate(p, ANSWER_LEN)
    t1, s1 = BlockDiffusionDecoder(
        m, DllmConfig(**{**base.__dict__, "enable_focus": True, "focus_alpha": math.inf})
    ).generate(p, ANSWER_LEN)
    assert torch.equal(t0, t1) and s0.decoded_per_step == s1.decoded_per_step
    assert s0.processed_token_layers == s1.processed_token_layers
    assert all(d == [1] * 32 for d in s0.decoded_per_step)
