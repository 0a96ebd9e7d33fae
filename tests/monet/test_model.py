"""MoNet: decoupling (no fused gradient into the streams), exact stable memory, adaptive weights, input errors."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from icml26.monet import MLPEncoder, MoNet, adaptive_weights, fit, make_imbalanced_bimodal


def _model(**kw):
    torch.manual_seed(0)
    enc = {"audio": MLPEncoder(6, 8, 16), "visual": MLPEncoder(5, 8, 16)}
    return MoNet(enc, {"audio": 8, "visual": 8}, n_classes=3, **kw)


def _batch(n=12):
    g = torch.Generator().manual_seed(0)
    return {"audio": torch.randn(n, 6, generator=g), "visual": torch.randn(n, 5, generator=g)}, torch.arange(n) % 3


def test_fused_loss_does_not_reach_encoders_or_memory():
    model = _model()
    inputs, y = _batch()
    fast = {m: model.encoders[m](inputs[m]) for m in model.modalities}
    loss = F.cross_entropy(model.classifier(model.fusion(model.fusion_features(inputs, fast))), y)
    grads = torch.autograd.grad(loss, list(model.encoders.parameters()), allow_unused=True)
    assert all(g is None for g in grads)
    assert not any(p.requires_grad for p in model.ema_encoders.parameters())


def test_fusion_grad_leak_is_lambda_times_the_gradient_and_keeps_memory_values():
    inputs, y = _batch()
    out = {}
    for lam in (0.1, 1.0):
        model = _model(encoder_fusion_grad=lam, ema_tau=0.5)
        fast = {m: model.encoders[m](inputs[m]) for m in model.modalities}
        u = model.fusion_features(inputs, fast)
        torch.testing.assert_close(u, model.fusion_features(inputs))  # value: the stable memory's features
        loss = F.cross_entropy(model.classifier(model.fusion(u)), y)
        out[lam] = torch.autograd.grad(loss, list(model.encoders["audio"].parameters()))
    for a, b in zip(out[0.1], out[1.0]):
        torch.testing.assert_close(a, 0.1 * b)


def test_one_stable_memory_update_is_exact():
    model = _model(ema_tau=0.9)
    model.configure_optimizers(0.1, torch.optim.SGD)
    before = [p.detach().clone() for p in model.ema_encoders.parameters()]
    model.training_step(_batch())
    for pb, b, p in zip(model.ema_encoders.parameters(), before, model.encoders.parameters()):
        torch.testing.assert_close(pb, 0.9 * b + 0.1 * p.detach())


def test_each_stream_steps_on_its_own_loss_only():
    """With SGD (no momentum) the audio encoder's update is exactly -lr * grad of its unimodal loss."""
    model = _model()
    model.configure_optimizers(0.1, torch.optim.SGD)
    inputs, y = _batch()
    loss_a = F.cross_entropy(model.heads["audio"](model.encoders["audio"](inputs["audio"])), y)
    g = torch.autograd.grad(loss_a, list(model.encoders["audio"].parameters()))
    before = [p.detach().clone() for p in model.encoders["audio"].parameters()]
    logs = model.training_step((inputs, y))
    for p, b, gi in zip(model.encoders["audio"].parameters(), before, g):
        torch.testing.assert_close(p.detach(), b - 0.1 * gi)
    assert logs["cms_stepped"] == [True, False, False]
    assert {"loss_fused", "loss_audio", "loss_visual", "w_audio", "w_visual"} <= set(logs)


def test_adaptive_weights_closed_forms():
    assert torch.allclose(adaptive_weights(torch.tensor([0.4, 0.4, 0.4]), 2.0), torch.ones(3))
    w = adaptive_weights(torch.tensor([0.9, 0.3]), 2.0)
    assert w[1] > 1.0 > w[0] and abs(float(w.sum()) - 2.0) < 1e-6
    assert torch.allclose(adaptive_weights(torch.tensor([0.9, 0.3]), 0.0), torch.ones(2))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=5), st.floats(0.0, 10.0))
def test_adaptive_weights_sum_to_m_and_order_reverses(scores, beta):
    s = torch.tensor(scores)
    w = adaptive_weights(s, beta)
    assert abs(float(w.sum()) - len(scores)) < 1e-4
    for i in range(len(scores)):
        for j in range(len(scores)):
            if scores[i] < scores[j] - 1e-6 and beta > 0:
                assert w[i] >= w[j]


def test_monet_learns_and_upweights_the_lagging_stream():
    data = make_imbalanced_bimodal(0, n_train=400, n_val=50, n_test=400, scale_b=2.0, noise_b=0.4)
    torch.manual_seed(0)
    model = MoNet({m: MLPEncoder(32, 32, 64) for m in "ab"}, {"a": 32, "b": 32}, 10)
    hist = fit(model, data.train, epochs=6, lr=0.05, optimizer="sgd")
    assert hist[-1]["loss_fused"] < hist[0]["loss_fused"]
    assert model.fusion.n_updates == [6 * 7, 6 * 7 // 4, 6 * 7 // 16]
    acc = float((model(dict(data.test.x)).argmax(1) == data.test.y).float().mean())
    assert acc > 0.3  # chance is 0.1
    ens = MoNet({m: MLPEncoder(32, 32, 64) for m in "ab"}, {"a": 32, "b": 32}, 10, ensemble=True)
    assert ens(dict(data.test.x)).shape == (400, 10)


def test_bad_inputs_name_the_argument():
    enc = {"audio": MLPEncoder(6, 8), "visual": MLPEncoder(5, 8)}
    with pytest.raises(ValueError, match="feature_dims keys must equal encoders keys"):
        MoNet(enc, {"audio": 8, "video": 8}, 3)
    with pytest.raises(ValueError, match="feature_dims"):
        MoNet(enc, {"audio": 8, "visual": 0}, 3)
    with pytest.raises(TypeError, match="encoders"):
        MoNet({"audio": lambda x: x}, {"audio": 8}, 3)
    with pytest.raises(TypeError, match="encoders"):
        MoNet([], {}, 3)
    with pytest.raises(ValueError, match="n_classes"):
        MoNet(enc, {"audio": 8, "visual": 8}, 1)
    with pytest.raises(ValueError, match="ema_tau"):
        MoNet(enc, {"audio": 8, "visual": 8}, 3, ema_tau=1.0)
    with pytest.raises(ValueError, match="encoder_fusion_grad"):
        MoNet(enc, {"audio": 8, "visual": 8}, 3, encoder_fusion_grad=1.5)
    with pytest.raises(ValueError, match="periods"):
        MoNet(enc, {"audio": 8, "visual": 8}, 3, cms_periods=(1, -4))
    model = MoNet(enc, {"audio": 8, "visual": 8}, 3)
    with pytest.raises(RuntimeError, match="configure_optimizers"):
        model.training_step(_batch())
    with pytest.raises(ValueError, match="inputs"):
        model({"audio": torch.zeros(2, 6)})
    with pytest.raises(ValueError, match="modality"):
        model.encode("text", torch.zeros(2, 6))
    with pytest.raises(ValueError, match="lr"):
        model.configure_optimizers(0.0)
