"""Baselines: OGM-GE really modulates (the self-division bug is caught), MMPareto's combination, PMR, MLA-lite."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from icml26.monet import (
    OGMGE,
    PMR,
    Joint,
    JointConcat,
    MLALite,
    MLPEncoder,
    MMPareto,
    UnimodalEnsemble,
    accuracy,
    class_prototypes,
    fit,
    make_imbalanced_bimodal,
    mmpareto_combine,
    ogm_coefficients,
    pmr_coefficients,
)


def _joint(dims=(6, 5), feat=(8, 8)):
    torch.manual_seed(0)
    enc = {"audio": MLPEncoder(dims[0], feat[0], 16), "visual": MLPEncoder(dims[1], feat[1], 16)}
    return JointConcat(enc, {"audio": feat[0], "visual": feat[1]}, 3)


def _batch(n=24, strong_audio=True):
    g = torch.Generator().manual_seed(0)
    y = torch.arange(n) % 3
    a = torch.randn(n, 6, generator=g)
    if strong_audio:
        a[torch.arange(n), y] += 4.0  # audio is far more informative
    return {"audio": a, "visual": torch.randn(n, 5, generator=g)}, y


def _buggy_ogm(scores, alpha):
    """The public-implementation bug: the ratio divides a modality's score by itself (always 1 -> no modulation)."""
    return {m: 1.0 - math.tanh(alpha * s / s) if s / s > 1 else 1.0 for m, s in scores.items()}


def test_ogm_coefficients_use_the_other_modalitys_score():
    k = ogm_coefficients({"audio": 2.0, "visual": 1.0}, alpha=0.5)
    assert k["visual"] == 1.0
    assert k["audio"] == pytest.approx(1.0 - math.tanh(0.5 * 2.0))
    assert ogm_coefficients({"audio": 1.0, "visual": 1.0}, 0.5) == {"audio": 1.0, "visual": 1.0}
    # the known bug gives k = 1 for every modality: the assertion above would fail for it
    assert _buggy_ogm({"audio": 2.0, "visual": 1.0}, 0.5)["audio"] == 1.0


def test_ogm_ge_step_scales_dominant_encoder_weight_grads_and_leaves_biases():
    model = _joint()
    # train the fused model a little so the audio branch dominates the fused prediction
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, y = _batch()
    for _ in range(30):
        Joint().step(model, opt, inputs, y, 0)
    ogm = OGMGE(alpha=0.5, ge=False)
    ogm.setup(model, torch.Generator().manual_seed(0))
    feats = model.features(inputs)
    model.zero_grad()
    F.cross_entropy(model.fused_logits(feats), y).backward()
    raw = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    scores = ogm.scores(model, feats, y)
    assert scores["audio"] > scores["visual"]
    k = ogm_coefficients(scores, 0.5)
    assert k["audio"] < 1.0 and k["visual"] == 1.0
    ogm.modulate(model, k)
    for n, p in model.named_parameters():
        if n not in raw:
            continue
        if n.startswith("encoders.audio") and p.ndim >= 2:
            torch.testing.assert_close(p.grad, k["audio"] * raw[n])
            assert not torch.allclose(p.grad, raw[n])  # a non-modulating implementation fails here
        else:
            torch.testing.assert_close(p.grad, raw[n])


def test_ogm_ge_noise_has_the_gradients_std():
    model = _joint(dims=(6, 5), feat=(64, 8))
    ogm = OGMGE(alpha=0.5, ge=True)
    ogm.setup(model, torch.Generator().manual_seed(0))
    inputs, y = _batch()
    model.zero_grad()
    F.cross_entropy(model.fused_logits(model.features(inputs)), y).backward()
    w = model.encoders["audio"].net[2].weight
    g = w.grad.clone()
    ogm.modulate(model, {"audio": 0.5, "visual": 1.0})
    noise = w.grad - 0.5 * g
    assert float(noise.std()) == pytest.approx(float(g.std()), rel=0.15)  # 1024 draws: se of the std ~ 2%
    assert abs(float(noise.mean())) < 0.15 * float(g.std())


def test_ogm_training_logs_coefficients_and_respects_its_window():
    data = make_imbalanced_bimodal(0, n_train=128, n_val=10, n_test=64)
    torch.manual_seed(0)
    model = JointConcat({m: MLPEncoder(32, 8, 16) for m in "ab"}, {"a": 8, "b": 8}, 10)
    hist = fit(model, data.train, OGMGE(alpha=1.0, start=0, end=1), epochs=2, optimizer="sgd", lr=0.05)
    assert "k_a" in hist[0] and "k_a" not in hist[1]
    assert min(hist[0]["k_a"], hist[0]["k_b"]) < 1.0


def test_mmpareto_agreeing_gradients_are_summed():
    a, b = torch.tensor([1.0, 2.0, 0.0]), torch.tensor([0.5, 1.0, 1.0])
    g, cos = mmpareto_combine(a, b)
    assert cos > 0
    torch.testing.assert_close(g, a + b)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=3, max_size=3), st.lists(st.floats(-3, 3), min_size=3, max_size=3))
def test_mmpareto_conflict_gives_a_common_descent_direction_of_the_summed_norm(u, v):
    a, b = torch.tensor(u, dtype=torch.float64), torch.tensor(v, dtype=torch.float64)
    if a.norm() < 1e-3 or b.norm() < 1e-3:
        return
    g, cos = mmpareto_combine(a, b)
    if cos > 0:
        torch.testing.assert_close(g, a + b)
        return
    if (a - b).norm() < 1e-6 or g.norm() < 1e-9:
        return
    assert float(g @ a) >= -1e-9 and float(g @ b) >= -1e-9
    assert float(g.norm()) == pytest.approx(float((a + b).norm()), rel=1e-9, abs=1e-12)


def test_pmr_prototypes_and_coefficients():
    feats = torch.tensor([[1.0, 0.0], [3.0, 2.0], [0.0, 5.0]])
    y = torch.tensor([0, 0, 2])
    c = class_prototypes(feats, y, 3)
    torch.testing.assert_close(c, torch.tensor([[2.0, 1.0], [0.0, 0.0], [0.0, 5.0]]))
    coef = pmr_coefficients({"audio": 30.0, "visual": 10.0})
    assert coef == {"audio": 0.0, "visual": 1.0}  # rho - 1 = 2 clipped at 1
    coef = pmr_coefficients({"audio": 12.0, "visual": 10.0})
    assert coef["audio"] == 0.0 and coef["visual"] == pytest.approx(0.2)
    assert pmr_coefficients({"audio": 1.0, "visual": 1.0}) == {"audio": 0.0, "visual": 0.0}


def test_every_strategy_trains_and_beats_chance():
    data = make_imbalanced_bimodal(1, n_train=256, n_val=10, n_test=256, scale_b=2.0, noise_b=0.4)
    for method in (Joint(), OGMGE(0.5), PMR(1.0), MMPareto(), MLALite(), UnimodalEnsemble()):
        torch.manual_seed(0)
        model = JointConcat({m: MLPEncoder(32, 16, 32) for m in "ab"}, {"a": 16, "b": 16}, 10)
        fit(model, data.train, method, epochs=6, optimizer="sgd", lr=0.05, seed=0)
        assert accuracy(model, data.test) > 0.2, type(method).__name__  # chance: 0.1


def test_bad_inputs():
    with pytest.raises(ValueError, match="feature_dims keys must equal encoders keys"):
        JointConcat({"a": MLPEncoder(3, 4)}, {"b": 4}, 3)
    with pytest.raises(ValueError, match="alpha"):
        OGMGE(alpha=-1.0)
    with pytest.raises(ValueError, match="end"):
        OGMGE(start=5, end=2)
    with pytest.raises(ValueError, match="alpha"):
        PMR(alpha=-0.1)
    model = _joint(feat=(8, 4))
    with pytest.raises(ValueError, match="equal feature_dims"):
        MLALite().setup(model, torch.Generator())
    with pytest.raises(ValueError, match="same shape"):
        mmpareto_combine(torch.zeros(3), torch.zeros(4))
    data = make_imbalanced_bimodal(0, n_train=16, n_val=4, n_test=4, dim_a=6, dim_b=5, names=("audio", "visual"))
    with pytest.raises(ValueError, match="epochs"):
        fit(_joint(), data.train, Joint(), epochs=0)
    with pytest.raises(ValueError, match="optimizer"):
        fit(_joint(), data.train, Joint(), optimizer="rmsprop")
    with pytest.raises(TypeError, match="method"):
        fit(_joint(), data.train, None)
    with pytest.raises(TypeError, match="train"):
        fit(_joint(), (data.train.x, data.train.y), Joint())
