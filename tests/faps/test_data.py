import pytest
import torch

from icml26.faps import DDIMScheduler, FaPSTrainer, TinyDiT, band_index, dct2, digits_tensors, spectral_tensors


def _band_shares(x: torch.Tensor, n_bands: int = 4) -> torch.Tensor:
    idx = band_index(x.shape[-2], x.shape[-1], n_bands)
    e = dct2(x[:, 0]).pow(2).sum(0)
    return torch.stack([e[idx == b].sum() for b in range(n_bands)]) / e.sum()


def test_spectral_set_is_deterministic_bounded_and_has_high_frequency_energy():
    x, y = spectral_tensors(64, 16, seed=3)
    x2, y2 = spectral_tensors(64, 16, seed=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert x.shape == (64, 1, 16, 16) and float(x.min()) >= -1 and float(x.max()) <= 1
    assert set(y.tolist()) <= {0, 1, 2}
    shares = _band_shares(x)
    digit_shares = _band_shares(digits_tensors(16)[0][:64])
    assert shares[0] > 0.8  # mostly smooth blobs
    assert shares[2:].sum() > 10 * digit_shares[2:].sum()  # but far more upper-band energy than the digits
    blobs_only = spectral_tensors(64, 16, seed=3, max_gratings=1)[0]
    assert not torch.equal(blobs_only, x)


def test_spectral_set_bad_arguments():
    with pytest.raises(ValueError, match="n"):
        spectral_tensors(0)
    with pytest.raises(ValueError, match="patch"):
        spectral_tensors(4, 16, patch=5)
    with pytest.raises(ValueError, match="max_gratings"):
        spectral_tensors(4, 16, max_gratings=0)


def test_dual_spectral_bias_on_the_spectral_set_low_band_is_fitted_first():
    """Loose inequality on (B): after a short full training the x0-prediction error of the lowest DCT band has
    fallen by at least 40% and is far below the upper bands' (relative to each band's data energy)."""
    torch.manual_seed(0)
    x, y = spectral_tensors(400, 16, seed=0)
    xp, yp = spectral_tensors(64, 16, seed=1)
    sched = DDIMScheduler(1000)
    model = TinyDiT(16, 2, 1, width=32, depth=2, heads=2, num_classes=3)
    tr = FaPSTrainer(model, sched, None, total_steps=10**6, lr=2e-3, generator=torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(2)
    t, noise = torch.randint(0, 500, (64,), generator=g), torch.randn(xp.shape, generator=g)
    idx = band_index(16, 16, 4)
    low, high = (idx == 0).float(), (idx >= 2).float()

    @torch.no_grad()
    def rel_errors():
        a = sched.alphas_cumprod[t].reshape(-1, 1, 1, 1)
        x_t = sched.add_noise(xp, noise, t)
        x0_hat = (x_t - (1 - a).sqrt() * model.eval()(x_t, t, yp)) / a.sqrt()
        e, ref = dct2((x0_hat - xp)[:, 0]).pow(2), dct2(xp[:, 0]).pow(2)
        return float((e * low).sum() / (ref * low).sum()), float((e * high).sum() / (ref * high).sum())

    low0, _ = rel_errors()
    gb = torch.Generator().manual_seed(3)
    for _ in range(100):
        i = torch.randint(0, len(x), (64,), generator=gb)
        tr.train_step(x[i], y[i])
    low1, high1 = rel_errors()
    assert low1 < 0.6 * low0
    assert low1 < 0.25 * high1
