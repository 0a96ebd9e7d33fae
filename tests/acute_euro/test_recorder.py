"""ActivationRecorder: hooks on any nn.Module, masked mean pooling, clean removal of hooks."""

import pytest
import torch
import torch.nn as nn

from icml26.acute_euro import ActivationRecorder
from icml26.common.tinylm import TinyLM, TinyLMConfig


def _lm():
    torch.manual_seed(0)
    return TinyLM(TinyLMConfig(vocab_size=11, n_layer=3, n_head=2, n_embd=8, block_size=10)).eval()


def test_records_every_block_of_a_tiny_lm_by_default():
    m = _lm()
    x = torch.randint(0, 11, (2, 5))
    with ActivationRecorder(m) as rec:
        m(x)
    assert rec.names == ["blocks.0", "blocks.1", "blocks.2"]
    h = rec.stacked()
    assert h.shape == (2, 5, 3, 8)
    # the last block's output, through the final norm and head, gives the logits
    assert torch.allclose(m.lm_head(m.ln_f(h[:, :, -1])), m(x), atol=1e-5)


def test_pooled_mask_ignores_padding():
    m = _lm()
    x = torch.randint(0, 11, (2, 6))
    mask = torch.tensor([[0, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=torch.bool)
    with ActivationRecorder(m) as rec:
        m(x)
    h = rec.stacked()
    p = rec.pooled(mask)
    assert torch.allclose(p[0], h[0, 1:3].mean(0))
    assert torch.allclose(p[1], h[1].mean(0))
    assert torch.allclose(rec.pooled(), h.mean(1))


def test_hooks_are_removed_and_tuple_outputs_supported():
    class TupleBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return (self.lin(x), "cache")  # like a Hugging Face decoder layer

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([TupleBlock(), TupleBlock()])

        def forward(self, x):
            for b in self.layers:
                x = b(x)[0]
            return x

    m = Model()
    x = torch.randn(3, 2, 4)
    with ActivationRecorder(m) as rec:
        m(x)
    assert rec.stacked().shape == (3, 2, 2, 4)
    assert all(len(b._forward_hooks) == 0 for b in m.layers)


def test_named_layers_on_a_plain_mlp():
    mlp = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 7), nn.ReLU(), nn.Linear(7, 2))
    with ActivationRecorder(mlp, layers=["1", mlp[3]]) as rec:
        mlp(torch.randn(4, 5))
    assert rec.names == ["1", "3"]
    assert rec.pooled().shape == (4, 2, 7)


def test_errors():
    mlp = nn.Sequential(nn.Linear(5, 7), nn.ReLU())
    with pytest.raises(ValueError, match="found none"):
        ActivationRecorder(mlp)
    with pytest.raises(ValueError, match="not a submodule name"):
        ActivationRecorder(mlp, layers=["9"])
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        ActivationRecorder("model")
    m = _lm()
    rec = ActivationRecorder(m)
    with pytest.raises(RuntimeError, match="no activations recorded"):
        rec.stacked()
    with rec:
        m(torch.randint(0, 11, (2, 4)))
    with pytest.raises(ValueError, match="mask must have shape"):
        rec.pooled(torch.ones(2, 5))
    with pytest.raises(ValueError, match="selects no position"):
        rec.pooled(torch.zeros(2, 4))


def test_works_with_a_hugging_face_model():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=8, vocab_size=20, n_positions=16)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    with ActivationRecorder(model) as rec:
        model(torch.randint(0, 20, (2, 5)))
    assert rec.names == ["transformer.h.0", "transformer.h.1"]
    assert rec.pooled().shape == (2, 2, 8)
