"""Issue 53's usability findings: named errors for feature_dims, labels and negative OGM scores; fit takes a
DataLoader; what the adaptive weights do with a pure-noise modality."""

import pytest
import torch
from torch import nn

from icml26.monet import MLPEncoder, MoNet, fit, make_imbalanced_bimodal
from icml26.monet.baselines import Joint, JointConcat, accuracy, ogm_coefficients


def _monet(**kw):
    torch.manual_seed(0)
    return MoNet({m: MLPEncoder(8, 16, 32) for m in "ab"}, {"a": 16, "b": 16}, 3, **kw)


def test_feature_dims_that_disagree_with_an_encoder_fail_at_construction():
    with pytest.raises(ValueError, match=r"feature_dims\['b'\] = 12"):
        MoNet({m: MLPEncoder(8, 16, 32) for m in "ab"}, {"a": 16, "b": 12}, 3)


def test_feature_dims_of_an_encoder_without_in_dim_fail_on_the_first_batch():
    enc = {"a": nn.Linear(8, 16), "b": nn.Linear(8, 5)}  # no in_dim: checked when it first runs
    model = MoNet(enc, {"a": 16, "b": 16}, 3)
    model.configure_optimizers(0.1)
    with pytest.raises(ValueError, match=r"feature_dims\['b'\]"):
        model.training_step(({"a": torch.zeros(4, 8), "b": torch.zeros(4, 8)}, torch.zeros(4, dtype=torch.long)))


def test_labels_out_of_range_or_not_integers_are_named():
    model = _monet()
    model.configure_optimizers(0.1)
    x = {"a": torch.zeros(4, 8), "b": torch.zeros(4, 8)}
    with pytest.raises(ValueError, match=r"y \(the labels\) must lie in \[0, n_classes=3\)"):
        model.training_step((x, torch.tensor([0, 1, 2, 3])))
    with pytest.raises(ValueError, match="y"):
        model.training_step((x, torch.tensor([0, -1, 2, 1])))
    with pytest.raises(TypeError, match="y"):
        model.training_step((x, torch.zeros(4)))


def test_negative_or_nan_ogm_scores_are_named():
    with pytest.raises(ValueError, match="scores must be finite and >= 0"):
        ogm_coefficients({"a": -1.0, "b": 2.0}, 0.5)
    with pytest.raises(ValueError, match="scores"):
        ogm_coefficients({"a": float("nan"), "b": 2.0}, 0.5)


class _Pairs(torch.utils.data.Dataset):
    def __init__(self, split):
        self.split = split

    def __len__(self):
        return len(self.split)

    def __getitem__(self, i):
        return {m: v[i] for m, v in self.split.x.items()}, self.split.y[i]


@pytest.mark.parametrize("kind", ["monet", "joint"])
def test_fit_accepts_a_dataloader(kind):
    data = make_imbalanced_bimodal(0, n_train=256, n_val=64, n_test=256, scale_b=2.0, noise_b=0.4)
    loader = torch.utils.data.DataLoader(
        _Pairs(data.train), batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0)
    )
    torch.manual_seed(0)
    enc = {m: MLPEncoder(32, 16, 32) for m in "ab"}
    model = MoNet(enc, {"a": 16, "b": 16}, 10) if kind == "monet" else JointConcat(enc, {"a": 16, "b": 16}, 10)
    hist = fit(model, loader, None if kind == "monet" else Joint(), epochs=3, lr=0.05, optimizer="sgd")
    assert len(hist) == 3
    key = "loss_fused" if kind == "monet" else "loss"
    assert hist[-1][key] < hist[0][key]
    assert accuracy(model, data.test) > 0.2  # chance 0.1


def test_fit_rejects_a_one_shot_iterator_and_bad_batches():
    data = make_imbalanced_bimodal(0, n_train=64, n_val=8, n_test=8)
    model = _monet()
    with pytest.raises(TypeError, match="one-shot iterator"):
        fit(model, iter([(dict(data.train.x), data.train.y)]), epochs=1)
    model = MoNet({m: MLPEncoder(32, 16, 32) for m in "ab"}, {"a": 16, "b": 16}, 10)
    with pytest.raises(TypeError, match=r"\(inputs, y\) batches"):
        fit(model, [data.train.y], epochs=1)
    with pytest.raises(ValueError, match="y"):
        fit(model, [(dict(data.train.x), data.train.y + 10)], epochs=1)


def test_a_pure_noise_modality_gets_the_largest_weight():
    """What the adaptive weights do (documented, not changed): they follow the streams' fit scores only, so a
    modality that carries no label information, whose score stays at chance, is up-weighted like an under-trained
    one. A fixed weight on a LayerNorm-ed input is a scale the fusion's first layer can absorb, so this changes the
    fusion's input scale, not what it can learn."""
    torch.manual_seed(0)
    n, k = 512, 4
    y = torch.randint(0, k, (n,))
    xa = torch.nn.functional.one_hot(y, k).float().repeat(1, 2) * 3 + 0.1 * torch.randn(n, 2 * k)
    xb = torch.randn(n, 2 * k)  # pure noise
    model = MoNet({m: MLPEncoder(2 * k, 16, 32) for m in "ab"}, {"a": 16, "b": 16}, k)
    model.configure_optimizers(0.05, torch.optim.SGD, momentum=0.9)
    for _ in range(3):
        for i in range(0, n, 64):
            logs = model.training_step(({"a": xa[i : i + 64], "b": xb[i : i + 64]}, y[i : i + 64]))
    assert logs["s_a"] > 0.7 and logs["s_b"] < 0.4  # chance is 0.25
    assert logs["w_b"] > 1.2 > 0.8 > logs["w_a"]
    assert abs(logs["w_a"] + logs["w_b"] - 2) < 1e-5


def test_non_finite_inputs_are_refused_before_they_reach_the_scores():
    """The referee's NaN batch: refused with a named error, and the fit scores / weights stay finite."""
    model = _monet()
    model.configure_optimizers(0.1)
    y = torch.zeros(4, dtype=torch.long)
    bad = {"a": torch.full((4, 8), float("nan")), "b": torch.zeros(4, 8)}
    with pytest.raises(ValueError, match=r"inputs\['a'\] holds non-finite values"):
        model.training_step((bad, y))
    with pytest.raises(ValueError, match=r"inputs\['a'\] holds non-finite values"):
        model(bad)
    model.training_step(({"a": torch.zeros(4, 8), "b": torch.zeros(4, 8)}, y))
    assert torch.isfinite(model.scores).all() and torch.isfinite(model.weights).all()


def test_non_finite_scores_and_mismatched_batches_are_named():
    from icml26.monet import adaptive_weights

    with pytest.raises(ValueError, match="scores must be finite"):
        adaptive_weights(torch.tensor([float("nan"), 0.9]), 2.0)
    model = _monet()
    model.configure_optimizers(0.1)
    with pytest.raises(ValueError, match="same batch size for every modality"):
        model.training_step(({"a": torch.zeros(4, 8), "b": torch.zeros(3, 8)}, torch.zeros(4, dtype=torch.long)))
    with pytest.raises(ValueError, match=r"and as y \(5\)"):
        model.training_step(({"a": torch.zeros(4, 8), "b": torch.zeros(4, 8)}, torch.zeros(5, dtype=torch.long)))
    with pytest.raises(ValueError, match=r"inputs\['b'\] must have shape \(batch, 8\)"):
        model({"a": torch.zeros(4, 8), "b": torch.zeros(4, 7)})


def test_a_diverging_configuration_is_a_named_error_and_a_failed_configuration_in_the_experiment():
    from dataclasses import replace

    from icml26.monet import TrainingDiverged
    from icml26.monet.experiment import QUICK, _select, _train_arm, make_data

    model = _monet()
    model.configure_optimizers(0.1)
    with torch.no_grad():
        model.heads["a"].weight.fill_(float("inf"))
    with pytest.raises(TrainingDiverged, match="not finite"):
        model.training_step(({"a": torch.ones(4, 8), "b": torch.ones(4, 8)}, torch.zeros(4, dtype=torch.long)))
    cfg = replace(QUICK, s1_sizes=(128, 64, 128), epochs=2, probe_every=2)
    data = make_data(cfg, "s1", 0)
    runs = [_train_arm(cfg, "joint", {"lr": lr}, data, 0, "s1") for lr in (0.05, 1e6)]  # lr 1e6 diverges
    assert "diverged" in runs[1] and runs[1]["val_acc"] == 0.0 and "diverged" not in runs[0]
    assert _select(runs) == 0
