"""MoNet: decoupling (no fused gradient into the streams), exact stable memory, adaptive weights, input errors."""

import copy

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


def test_step_count_is_saved_in_the_state_dict_and_keeps_the_cms_phase():
    """A reloaded model resumes its CMS schedule where it stopped (the v3b referee: step_count was lost, 40 -> 0)."""
    model = _model(cms_periods=(1, 4))
    model.configure_optimizers(0.05, torch.optim.SGD)
    inputs, y = _batch()
    for _ in range(6):
        model.training_step((inputs, y))
    assert model.step_count == 6 and "steps_done" in model.state_dict()
    fresh = _model(cms_periods=(1, 4))
    fresh.load_state_dict(model.state_dict())
    assert fresh.step_count == 6
    fresh.configure_optimizers(0.05, torch.optim.SGD)
    stepped = [fresh.training_step((inputs, y))["cms_stepped"] for _ in range(2)]
    assert stepped == [[True, False], [True, True]]  # steps 7 and 8: the period-4 block steps at 8, not at 4
    assert fresh.step_count == 8


def test_the_coupled_control_arm_is_no_ema_plus_the_exact_fused_gradient():
    """Pins how the experiment builds the ``coupled`` control arm: MoNet's own switches, no_ema's plus
    encoder_fusion_grad = 1 (the two differ in the stop-gradient alone), and one training step moves each encoder by
    the gradient of ``L_m + L_f`` with ``L_f`` computed at the fast features (checked against a hand reference)."""
    from icml26.monet.claims import ABLATIONS
    from icml26.monet.experiment import QUICK, _build, make_data

    assert ABLATIONS["coupled"] == {**ABLATIONS["no_ema"], "encoder_fusion_grad": 1.0}
    assert ABLATIONS["no_ema"] == {"ema_tau": 0.0}
    data = make_data(QUICK, "s1", 0)
    model, method = _build(QUICK, "monet", {}, data, 0, "s1", ABLATIONS["coupled"])
    default, _ = _build(QUICK, "monet", {}, data, 0, "s1")
    assert method is None and (model.encoder_fusion_grad, model.ema_tau) == (1.0, 0.0)
    assert (model.beta, model.cms_periods) == (default.beta, default.cms_periods)
    inputs, y = next(data.train.batches(32, torch.Generator().manual_seed(0)))
    ref = copy.deepcopy(model)
    lr = 0.1
    model.configure_optimizers(lr, torch.optim.SGD)
    model.training_step((inputs, y))
    # hand reference: the fusion reads the fast features themselves, and its loss reaches the encoders
    fast = {m: ref.encoders[m](inputs[m]) for m in ref.modalities}
    logits = {m: ref.heads[m](fast[m]) for m in ref.modalities}
    fits = torch.stack([torch.softmax(logits[m], 1).gather(1, y[:, None]).mean() for m in ref.modalities]).detach()
    w = adaptive_weights(ref.score_momentum * ref.scores + (1 - ref.score_momentum) * fits, ref.beta)
    u = torch.cat([w[i] * ref.norms[m](fast[m]) for i, m in enumerate(ref.modalities)], 1)
    loss_f = F.cross_entropy(ref.classifier(ref.fusion(u)), y)
    total = sum(F.cross_entropy(logits[m], y) for m in ref.modalities) + loss_f
    params = list(ref.encoders.parameters())
    grads = torch.autograd.grad(total, params, retain_graph=True)
    stream_only = torch.autograd.grad(sum(F.cross_entropy(logits[m], y) for m in ref.modalities), params)
    for p, g, q in zip(params, grads, model.encoders.parameters()):
        torch.testing.assert_close(q.detach(), p.detach() - lr * g, rtol=1e-5, atol=1e-6)
    assert max(float((g - g0).abs().max()) for g, g0 in zip(grads, stream_only)) > 1e-4  # the fused loss got in


def test_a_state_dict_saved_before_steps_done_existed_still_loads():
    model = _model()
    old = {k: v for k, v in model.state_dict().items() if k != "steps_done"}
    fresh = _model()
    with pytest.warns(UserWarning, match="steps_done"):  # strict load: the missing counter is read as 0, as before
        fresh.load_state_dict(old)
    assert fresh.step_count == 0


def _batches(n_steps, n=12):
    g = torch.Generator().manual_seed(1)
    return [
        ({"audio": torch.randn(n, 6, generator=g), "visual": torch.randn(n, 5, generator=g)}, torch.arange(n) % 3)
        for _ in range(n_steps)
    ]


@pytest.mark.parametrize("opt", ["sgd", "momentum"])
def test_resuming_mid_period_continues_exactly(tmp_path, opt):
    """The third referee: a model saved at step 10 (mid-period of the period-16 block) and resumed must take the same
    steps as one never interrupted: the CMS chunk gradients and update counts travel in the state_dict (the
    optimizers' own state, momentum here, is saved by the caller as in PyTorch)."""
    kw = {"momentum": 0.9, "weight_decay": 1e-4} if opt == "momentum" else {}
    batches = _batches(20)
    straight = _model()
    straight.configure_optimizers(0.05, torch.optim.SGD, **kw)
    for b in batches:
        straight.training_step(b)
    first = _model()
    opts = first.configure_optimizers(0.05, torch.optim.SGD, **kw)
    for b in batches[:10]:
        first.training_step(b)
    torch.save(
        {"model": first.state_dict(), "opts": {k: o.state_dict() for k, o in opts.items()}}, tmp_path / "ckpt.pt"
    )
    ckpt = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    torch.manual_seed(123)  # a different initialisation, overwritten by the checkpoint
    resumed = MoNet(
        {"audio": MLPEncoder(6, 8, 16), "visual": MLPEncoder(5, 8, 16)}, {"audio": 8, "visual": 8}, n_classes=3
    )
    resumed.load_state_dict(ckpt["model"])
    for k, o in resumed.configure_optimizers(0.05, torch.optim.SGD, **kw).items():
        o.load_state_dict(ckpt["opts"][k])
    assert resumed.fusion.n_updates == [10, 2, 0]
    for b in batches[10:]:
        resumed.training_step(b)
    assert resumed.fusion.n_updates == straight.fusion.n_updates == [20, 5, 1]
    for (name, p), q in zip(straight.named_parameters(), resumed.parameters()):
        torch.testing.assert_close(q, p, rtol=1e-6, atol=1e-7, msg=name)
    inputs, _ = batches[0]
    torch.testing.assert_close(resumed(inputs), straight(inputs), rtol=1e-6, atol=1e-7)


def test_a_state_dict_without_the_cms_chunk_state_loads_with_a_warning():
    model = _model()
    old = {k: v for k, v in model.state_dict().items() if not k.endswith("_extra_state")}
    fresh = _model()
    with pytest.warns(UserWarning, match="not exact"):
        fresh.load_state_dict(old)
    assert fresh.fusion.n_updates == [0, 0, 0]


@pytest.mark.parametrize(
    "value, err",
    [
        (torch.tensor(-5), ValueError),
        (torch.tensor(3.7), ValueError),
        (torch.tensor(float("nan")), ValueError),
        (torch.tensor([1, 2]), TypeError),
        (5, TypeError),
    ],
)
def test_a_bad_steps_done_is_refused_at_load_naming_it(value, err):
    """The third referee: steps_done = -5 was accepted (step_count -5) and 3.7 truncated to 3."""
    state = _model().state_dict()
    state["steps_done"] = value
    with pytest.raises(err, match="steps_done"):
        _model().load_state_dict(state)
    state["steps_done"] = torch.tensor(7.0)  # an integral float is read as the integer
    fresh = _model()
    fresh.load_state_dict(state)
    assert fresh.step_count == 7


def test_a_bad_cms_chunk_state_is_refused_at_load():
    state = _model().state_dict()
    state["fusion._extra_state"] = {"acc": [[None]], "n_updates": [0, 0, 0]}
    with pytest.raises(ValueError, match="acc"):
        _model().load_state_dict(state)
    state["fusion._extra_state"] = {"acc": [[None] * 4] * 3, "n_updates": [0, -1, 0]}
    with pytest.raises(ValueError, match="n_updates"):
        _model().load_state_dict(state)
