"""Tokenizer round trips, model shapes and gradients, rewards and the GRPO step."""

import numpy as np
import pytest
import torch

from icml26.ovisocr.data import SyntheticPages
from icml26.ovisocr.metrics import evaluate
from icml26.ovisocr.model import PageTokenizer, TinyPageParser
from icml26.ovisocr.rl import CategoryReward, group_advantages, grpo_step, page_reward


def _with_tokens(els):
    return [dict(e, tokens=e["content"].split()) if e["type"] == "text" else e for e in els]


def test_tokenizer_round_trip_scores_perfectly():
    ds = SyntheticPages(8, 5)
    tok = PageTokenizer()
    mds = [tok.decode(tok.encode(_with_tokens(ds[i]["elements"]))) for i in range(8)]
    assert mds == [ds[i]["markdown"] for i in range(8)]


def test_decode_tolerates_malformed_sequences():
    tok = PageTokenizer()
    s = tok.stoi
    ids = [s["<t>"], s["<td>"], s["1"], s["<tr>"], s["<td>"], s["2"], s["<p>"], s["cat"]]  # unclosed
    md = tok.decode(ids)
    assert "<table>" in md and md.endswith("cat")
    assert tok.decode([s["</p>"], s["dog"], tok.eos]) == ""


def test_model_shapes_and_bad_inputs():
    torch.manual_seed(0)
    tok = PageTokenizer()
    m = TinyPageParser(len(tok))
    assert sum(p.numel() for p in m.parameters()) < 1_000_000
    x = torch.rand(2, 1, 128, 128)
    y = torch.randint(0, len(tok), (2, 7))
    assert m(x, y).shape == (2, 7, len(tok))
    out = m.generate(x, max_len=5)
    assert out.shape[0] == 2 and out.shape[1] <= 5
    with pytest.raises(ValueError, match="images"):
        m(torch.rand(2, 128, 128), y)
    with pytest.raises(ValueError, match="image_size"):
        TinyPageParser(len(tok), image_size=100)
    with pytest.raises(ValueError, match="temperature"):
        m.generate(x, temperature=-1)


def test_decoder_is_causal():
    torch.manual_seed(0)
    m = TinyPageParser(len(PageTokenizer()))
    x = torch.rand(1, 1, 128, 128)
    y = torch.randint(3, 20, (1, 6))
    y2 = y.clone()
    y2[0, 4:] = 5
    torch.testing.assert_close(m(x, y)[:, :4], m(x, y2)[:, :4])


def test_sequence_logprob_matches_forward_and_has_gradients():
    torch.manual_seed(0)
    tok = PageTokenizer()
    m = TinyPageParser(len(tok)).double()
    x = torch.rand(1, 1, 128, 128, dtype=torch.float64)
    toks = torch.tensor([[5, 6, tok.eos, tok.eos]])
    logp, mask = m.sequence_logprob(x, toks)
    assert mask.tolist() == [[1.0, 1.0, 1.0, 0.0]]
    full = torch.log_softmax(m(x, torch.tensor([[tok.bos, 5, 6, tok.eos]])), -1)
    torch.testing.assert_close(logp[0, 1], full[0, 1, 6])
    (logp * mask).sum().backward()
    assert m.tok_emb.weight.grad is not None and m.tok_emb.weight.grad.abs().sum() > 0


def test_category_reward_and_advantages():
    els = [
        {"type": "text", "content": "cat dog"},
        {"type": "text", "content": "sun"},
        {"type": "table", "content": "<table><tr><td>12</td></tr></table>"},
    ]
    r = CategoryReward()("sun\n\ncat dog\n\n<table><tr><td>12</td></tr></table>", els)
    assert r == {"text": 1.0, "order": 0.0, "table": 1.0}
    assert page_reward("a", [{"type": "text", "content": "a"}]) == {"page": 1.0}
    A = group_advantages([[{"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 0.0}]])
    np.testing.assert_allclose(A, [[0.5, -0.5]], atol=1e-5)  # b has no spread: contributes nothing
    with pytest.raises(ValueError, match="weights"):
        CategoryReward({"figure": 1.0})


def test_grpo_step_runs_and_changes_parameters():
    torch.manual_seed(0)
    tok = PageTokenizer()
    ds = SyntheticPages(2, 0)
    m, ref = TinyPageParser(len(tok), max_len=12), TinyPageParser(len(tok), max_len=12)
    ref.load_state_dict(m.state_dict())
    with torch.no_grad():  # a reference that differs from the policy: the KL term has a gradient
        ref.tok_emb.weight.mul_(1.5)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.tensor(ds.images())[:, None]
    before = m.tok_emb.weight.detach().clone()
    st = grpo_step(
        m,
        ref,
        x,
        [ds[i]["elements"] for i in range(2)],
        tok,
        opt,
        group_size=3,
        generator=torch.Generator().manual_seed(0),
    )
    assert "text" in st and np.isfinite(st["loss"])
    assert not torch.equal(before, m.tok_emb.weight)
    with pytest.raises(ValueError, match="group_size"):
        grpo_step(m, ref, x, [[], []], tok, opt, group_size=1)


def test_trained_arm_beats_untrained_on_structure():
    """A mutant check of the metric pipeline: the truth beats an empty prediction on every key."""
    ds = SyntheticPages(4, 1)
    gt = [ds[i]["elements"] for i in range(4)]
    good, bad = evaluate(gt, [ds[i]["markdown"] for i in range(4)]), evaluate(gt, [""] * 4)
    assert good["Overall"] > bad["Overall"]
