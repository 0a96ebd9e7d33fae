"""The shared tiny decoder LM: shapes, causality, greedy decoding, and that train_lm learns."""

import pytest
import torch

from icml26.common.tinylm import TinyLM, TinyLMConfig, length_bucketed_batches, train_lm


def _model(**kw):
    torch.manual_seed(0)
    cfg = dict(vocab_size=13, n_layer=2, n_head=2, n_embd=16, block_size=12)
    cfg.update(kw)
    return TinyLM(TinyLMConfig(**cfg)).eval()


def test_forward_shape_and_weight_tying():
    m = _model()
    assert m(torch.randint(0, 13, (3, 7))).shape == (3, 7, 13)
    assert m.lm_head.weight is m.tok_emb.weight


def test_causality_future_tokens_do_not_change_past_logits():
    m = _model()
    x = torch.randint(0, 13, (1, 8))
    y = x.clone()
    y[0, 5:] = (y[0, 5:] + 1) % 13
    with torch.no_grad():
        assert torch.allclose(m(x)[0, :5], m(y)[0, :5], atol=1e-6)


def test_generate_is_greedy_and_respects_eos():
    m = _model()
    x = torch.randint(2, 13, (2, 3))
    out = m.generate(x, 4)
    assert out.shape == (2, 7) and torch.equal(out[:, :3], x)
    with torch.no_grad():
        assert torch.equal(out[:, 3], m(x)[:, -1].argmax(-1))
    # with eos: after the first eos a row only produces eos
    nxt = int(m(x)[0, -1].argmax())
    out = m.generate(x, 4, eos_id=nxt)
    assert torch.all(out[0, 3:] == nxt)


def test_train_lm_memorises_a_tiny_corpus():
    m = _model(n_layer=1)
    seqs = [[2, 3, 4, 5, 1], [2, 6, 7, 8, 1], [9, 10, 11, 1]]
    batches = length_bucketed_batches(seqs, batch_size=2, n_batches=80, pad_id=0, seed=0)
    assert all(b.shape[0] <= 2 for b in batches)
    losses = train_lm(m, batches, steps=80, lr=2e-2, seed=0, pad_id=0, warmup=10)
    assert losses[-1] < 0.5 * losses[0]
    out = m.generate(torch.tensor([[2, 3]]), 3, eos_id=1)
    assert out[0, 2:].tolist() == [4, 5, 1]


def test_train_lm_from_a_tensor_is_deterministic():
    data = torch.randint(2, 13, (20, 6))
    a = train_lm(_model(), data, steps=5, seed=3, batch_size=4)
    b = train_lm(_model(), data, steps=5, seed=3, batch_size=4)
    assert a == b


def test_errors():
    with pytest.raises(ValueError, match="n_embd .* must be divisible by n_head"):
        TinyLMConfig(vocab_size=5, n_embd=10, n_head=3)
    with pytest.raises(ValueError, match="vocab_size must be a positive integer"):
        TinyLMConfig(vocab_size=0)
    m = _model()
    with pytest.raises(ValueError, match="exceeds block_size"):
        m(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match="exceeds block_size"):
        m.generate(torch.zeros(1, 10, dtype=torch.long), 5)
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        train_lm(m, torch.zeros(2, 3, dtype=torch.long), steps=0)
