"""Generators (determinism, corruption rates, ceilings) and the linear probe (chance on noise, ~1 on prototypes)."""

import numpy as np
import pytest
import torch
from torch import nn

from icml26.monet import BimodalSplit, make_imbalanced_bimodal, make_two_view_digits, modality_probe_accuracy


def test_generator_is_deterministic_and_shaped():
    a, b = (
        make_imbalanced_bimodal(3, n_train=50, n_val=20, n_test=30),
        make_imbalanced_bimodal(3, n_train=50, n_val=20, n_test=30),
    )
    for s in ("train", "val", "test"):
        for m in ("a", "b"):
            assert torch.equal(getattr(a, s).x[m], getattr(b, s).x[m])
        assert torch.equal(getattr(a, s).y, getattr(b, s).y)
    assert (
        a.train.x["a"].shape == (50, 32) and a.test.x["b"].shape == (30, 32) and a.train.x["a"].dtype == torch.float32
    )
    c = make_imbalanced_bimodal(4, n_train=50, n_val=20, n_test=30)
    assert not torch.equal(a.train.x["a"], c.train.x["a"])
    assert (a.strong, a.weak, a.n_classes) == ("a", "b", 10)


def test_corruption_rates_and_ceiling():
    n = 20000
    d = make_imbalanced_bimodal(0, n_train=n, n_val=10, n_test=10, corrupt_a=0.3, corrupt_b=0.1, noise_a=0.0)
    for key, p in (("resampled_a", 0.3), ("resampled_b", 0.1)):
        rate = d.info[key].mean()
        assert abs(rate - p) < 4 * np.sqrt(p * (1 - p) / n)
    # with noise_a = 0 the nearest A prototype is exact: its accuracy is the ceiling 1 - p (K - 1) / K
    x = d.train.x["a"].numpy()
    uniq, inv = np.unique(np.round(x, 5), axis=0, return_inverse=True)
    assert len(uniq) == 10
    # map each prototype to the label it most often carries, then measure the accuracy of that rule
    lab = np.array([np.bincount(d.train.y.numpy()[inv.ravel() == k], minlength=10).argmax() for k in range(10)])
    acc = (lab[inv.ravel()] == d.train.y.numpy()).mean()
    assert abs(acc - d.info["ceiling_a"]) < 4 * np.sqrt(0.25 / n)
    assert d.info["ceiling_a"] == pytest.approx(1 - 0.3 * 0.9)


def test_sign_flip_removes_the_class_means_of_b():
    d = make_imbalanced_bimodal(0, n_train=20000, n_val=10, n_test=10, flip_b=0.5, noise_b=0.1, corrupt_b=0.0)
    x, y = d.train.x["b"], d.train.y
    means = torch.stack([x[y == k].mean(0) for k in range(10)])
    assert float(means.abs().max()) < 0.05  # class information is in |projection|, not in the mean


def test_two_view_digits():
    d = make_two_view_digits(0)
    assert d.feature_dims == {"coarse": 16, "noisy": 64}
    assert len(d.train) == 1000 and len(d.val) == 300 and len(d.test) == 1797 - 1300
    e = make_two_view_digits(0)
    assert torch.equal(d.test.x["noisy"], e.test.x["noisy"])
    assert float(d.train.x["coarse"].min()) >= 0.0 and float(d.train.x["coarse"].max()) <= 1.0
    clean = make_two_view_digits(0, dropout=0.0, noise_std=0.0)
    torch.testing.assert_close(
        clean.train.x["noisy"].reshape(-1, 4, 2, 4, 2).mean((2, 4)).reshape(-1, 16), clean.train.x["coarse"]
    )


def test_bad_inputs():
    with pytest.raises(ValueError, match="corrupt_a"):
        make_imbalanced_bimodal(0, corrupt_a=1.5)
    with pytest.raises(ValueError, match="n_train"):
        make_imbalanced_bimodal(0, n_train=0)
    with pytest.raises(ValueError, match="seed"):
        make_imbalanced_bimodal(-1)
    with pytest.raises(TypeError, match="noise_b"):
        make_imbalanced_bimodal(0, noise_b="x")
    with pytest.raises(ValueError, match="names"):
        make_imbalanced_bimodal(0, names=("a", "a"))
    with pytest.raises(ValueError, match="pool"):
        make_two_view_digits(0, pool=3)
    with pytest.raises(ValueError, match="n_train"):
        make_two_view_digits(0, n_train=1700, n_val=200)
    with pytest.raises(ValueError, match="rows"):
        BimodalSplit({"a": torch.zeros(3, 2)}, torch.zeros(4, dtype=torch.long))


class _Fixed(nn.Module):
    def encode(self, modality, x):
        return x


def _split(x, y):
    return BimodalSplit({"m": torch.tensor(x, dtype=torch.float32)}, torch.tensor(y))


def test_probe_chance_on_noise_and_perfect_on_prototypes():
    rng = np.random.default_rng(0)
    y_tr, y_te = rng.integers(0, 10, 1000), rng.integers(0, 10, 1000)
    noise = _split(rng.normal(size=(1000, 16)), y_tr), _split(rng.normal(size=(1000, 16)), y_te)
    acc = modality_probe_accuracy(_Fixed(), "m", *noise)
    assert abs(acc - 0.1) < 4 * np.sqrt(0.09 / 1000) + 0.02
    protos = rng.normal(size=(10, 16))
    clean = (
        _split(protos[y_tr] + 0.05 * rng.normal(size=(1000, 16)), y_tr),
        _split(protos[y_te] + 0.05 * rng.normal(size=(1000, 16)), y_te),
    )
    assert modality_probe_accuracy(_Fixed(), "m", *clean) > 0.99
    tup = (clean[0].x, clean[0].y)
    assert modality_probe_accuracy(_Fixed(), "m", tup, clean[1]) > 0.99
    with pytest.raises(ValueError, match="modality"):
        modality_probe_accuracy(_Fixed(), "z", *clean)
    with pytest.raises(TypeError, match="train"):
        modality_probe_accuracy(_Fixed(), "m", [1, 2], clean[1])
    with pytest.raises(TypeError, match="encode"):
        modality_probe_accuracy(nn.Linear(2, 2), "m", *clean)
