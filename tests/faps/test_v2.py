"""Issue 19 (v2): the sparse canvas, the t-scheduled fixed rule, the gate on x_t, per-patch credit, validation."""

import pytest
import torch

from icml26.faps import DDIMScheduler, FaPSTrainer, FrequencyGate, HighFrequencyGate, TinyDiT, patch_features
from icml26.faps.data import canvas_digits
from icml26.faps.gate import _gumbel_topk_terms, plackett_luce_prefix_terms


def test_canvas_digits_places_each_digit_on_a_flat_background():
    x, y, off = canvas_digits(32, 16, seed=3)
    assert x.shape == (1797, 1, 32, 32) and y.shape == (1797,) and off.shape == (1797, 2)
    assert int(off.min()) >= 0 and int(off.max()) <= 16
    x2, _, off2 = canvas_digits(32, 16, seed=3)
    assert torch.equal(x, x2) and torch.equal(off, off2)
    r, c = off[0].tolist()
    outside = x[0, 0].clone()
    outside[r : r + 16, c : c + 16] = -1.0
    assert torch.all(outside == -1.0)  # everything outside the digit is background
    with pytest.raises(ValueError, match="digit_size"):
        canvas_digits(16, 32)


def test_plackett_luce_prefix_terms_equal_the_full_permutation_terms():
    g = torch.Generator().manual_seed(0)
    logits = 2 * torch.tanh(torch.randn(6, 10, generator=g))
    idx, terms = _gumbel_topk_terms(logits, 4, torch.Generator().manual_seed(1))
    torch.testing.assert_close(plackett_luce_prefix_terms(logits, idx), terms, atol=1e-5, rtol=1e-5)


def test_signed_dc_feature_breaks_the_sign_symmetry():
    x = torch.randn(2, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    f, fn = patch_features(x, 4, 4, signed_dc=True), patch_features(-x, 4, 4, signed_dc=True)
    assert f.shape == (2, 4, 6)
    torch.testing.assert_close(f[..., :-1], fn[..., :-1])  # band energies are sign-blind
    torch.testing.assert_close(f[..., -1], -fn[..., -1])  # the DC sign is kept
    torch.testing.assert_close(f[..., -1], x.reshape(2, 1, 2, 4, 2, 4).mean((1, 3, 5)).flatten(1))


def test_fixed_rule_is_high_frequency_below_t_switch_and_uniform_above():
    x = torch.full((1, 1, 8, 8), -1.0)
    x[0, 0, :4, :4] = torch.tensor([[1.0, -1.0] * 2, [-1.0, 1.0] * 2] * 2)  # one textured patch of four
    gate = HighFrequencyGate(4, 0.25, 4, t_switch=0.4, late="random")
    early = {tuple(gate.select(x, torch.tensor([100]), 0.0, torch.Generator().manual_seed(s)).keep_idx[0].tolist())
             for s in range(20)}  # fmt: skip
    late = {tuple(gate.select(x, torch.tensor([900]), 0.0, torch.Generator().manual_seed(s)).keep_idx[0].tolist())
            for s in range(40)}  # fmt: skip
    assert early == {(0,)} and len(late) == 4
    with pytest.raises(ValueError, match="late"):
        HighFrequencyGate(4, 0.5, late="high")


def test_gate_patch_size_must_match_the_denoiser_and_labels_must_be_in_range():
    model = TinyDiT(img_size=8, patch_size=4, width=16, depth=1, heads=2, num_classes=10)
    with pytest.raises(ValueError, match="gate.patch_size"):
        FaPSTrainer(model, DDIMScheduler(100), FrequencyGate(patch_size=2), total_steps=5)
    x, t = torch.zeros(2, 1, 8, 8), torch.tensor([1, 2])
    for bad in (torch.tensor([0, 11]), torch.tensor([-1, 0])):
        with pytest.raises(ValueError, match="y must hold labels"):
            model(x, t, bad)
    assert model(x, t, torch.tensor([0, 10])).shape == x.shape  # 10 = the null class


def _textured_canvas(n, g):
    """``n`` 8x8 images, four 4x4 patches, one random patch textured (a checkerboard), the rest flat -1."""
    x = torch.full((n, 1, 8, 8), -1.0)
    pos = torch.randint(0, 4, (n,), generator=g)
    board = torch.tensor([[1.0, -1.0] * 2, [-1.0, 1.0] * 2] * 2)
    for i, p in enumerate(pos.tolist()):
        r, c = divmod(p, 2)
        x[i, 0, 4 * r : 4 * r + 4, 4 * c : 4 * c + 4] = board
    return x, pos


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_per_patch_credit_learns_a_t_dependent_preference_and_a_flipped_reward_reverses_it(sign):
    """A per-patch loss that is high on the textured patch at small t and on flat patches at larger t: the gate,
    conditioned on t, learns both preferences (and the mirror image with the reward's sign flipped: the mutant)."""
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    gate = FrequencyGate(patch_size=4, n_bands=4, hidden=32, keep_ratio=0.5, logit_cap=3.0)
    model = TinyDiT(img_size=8, patch_size=4, width=8, depth=1, heads=2)
    tr = FaPSTrainer(model, DDIMScheduler(1000), gate, total_steps=10**6, reward="patch", policy_lr=1e-2,
                     generator=g)  # fmt: skip
    for _ in range(150):
        x, pos = _textured_canvas(32, g)
        t = torch.randint(0, 1000, (32,), generator=g)
        dec = gate.select(tr.scheduler.add_noise(x, torch.randn(x.shape, generator=g), t), t, 0.0, g)
        textured = (dec.keep_idx == pos[:, None]).float()
        small_t = (t < 400).float()[:, None]
        loss = textured * small_t + (1 - textured) * (1 - small_t)  # which kept patches "still carry signal"
        tr._patch_policy_step(sign * loss + 0.1 * torch.rand(loss.shape, generator=g), dec, t)
    x, pos = _textured_canvas(128, g)
    out = {}
    for tv in (100, 650):  # at t = 900 x_t barely shows the texture (abar ~ 0.02)
        t = torch.full((128,), tv)
        with torch.no_grad():
            logits = gate(tr.scheduler.add_noise(x, torch.randn(x.shape, generator=g), t), t, 0.0)
        out[tv] = float(logits.gather(1, pos[:, None]).mean() - logits.mean())  # textured patch vs average
    assert sign * out[100] > 0.3 and sign * out[650] < -0.1


def test_band_r2_on_known_predictors_of_the_spectral_set():
    """Issue 19 item 5: the redefined statistic, validated on predictors whose answer is known, on set (B)."""
    from icml26.faps import band_index, dct2, dct_matrix, spectral_tensors
    from icml26.faps.metrics import band_r2, censored_level_time

    x, _ = spectral_tensors(64, 16, seed=0)
    mu = x.mean(0, keepdim=True)
    keep = (band_index(16, 16, 4) < 2).to(x.dtype)
    m = dct_matrix(16)
    low_pass = m.T @ (dct2(x - mu) * keep) @ m + mu  # exact low-pass of the mean-removed image (bands 0, 1 kept)
    r2 = band_r2(low_pass, x, 4)
    torch.testing.assert_close(r2[:2], torch.ones(2), atol=1e-4, rtol=0)
    torch.testing.assert_close(r2[2:], torch.zeros(2), atol=1e-4, rtol=0)
    torch.testing.assert_close(band_r2(x.clone(), x, 4), torch.ones(4), atol=1e-6, rtol=0)
    torch.testing.assert_close(band_r2(mu.expand_as(x), x, 4), torch.zeros(4), atol=1e-5, rtol=0)
    # censored level times: reached (interpolated) or not
    assert censored_level_time([0, 10, 20], [0.0, 0.4, 0.8], 0.6) == (15.0, False)
    assert censored_level_time([0, 10, 20], [0.0, 0.1, 0.2], 0.6) == (20.0, True)
    with pytest.raises(ValueError, match="x0_hat and x0"):
        band_r2(x[:, 0], x[:, 0], 4)


def test_linear_mmse_denoiser_matches_its_closed_form_and_recovery_levels():
    """The known low-pass predictor of the validation: measured per-band R^2 (many noise draws) equals the closed form;
    recovery_level_t scans R^2 vs t from the top and censors at both ends."""
    from icml26.faps import band_r2, dct2, linear_mmse_band_r2, linear_mmse_x0, recovery_level_t, spectral_tensors

    x, _ = spectral_tensors(128, 16, seed=0)
    mu = x.mean(0, keepdim=True)
    var = dct2((x - mu)[:, 0]).pow(2).mean(0)
    sched = DDIMScheduler(1000)
    xs = x.repeat(16, 1, 1, 1)
    noise = torch.randn(xs.shape, generator=torch.Generator().manual_seed(0))
    for t in (100, 500, 900):
        a = float(sched.alphas_cumprod[t])
        x_t = sched.add_noise(xs, noise, torch.full((len(xs),), t))
        measured = band_r2(linear_mmse_x0(x_t, a, mu, var), xs, 4, mean=mu)
        torch.testing.assert_close(measured, linear_mmse_band_r2(a, var, 4), atol=0.02, rtol=0)
    torch.testing.assert_close(linear_mmse_band_r2(1.0, var, 4), torch.ones(4))  # no noise: perfect recovery
    assert recovery_level_t([100, 300, 500], [0.9, 0.6, 0.2], 0.5) == (350.0, False)
    assert recovery_level_t([100, 300], [0.1, 0.2], 0.5) == (100.0, True)  # never reached: censored below
    assert recovery_level_t([100, 300], [0.9, 0.8], 0.5) == (300.0, True)  # reached at the top: censored above
    with pytest.raises(ValueError, match="ascending"):
        recovery_level_t([300, 100], [0.1, 0.2], 0.5)
    with pytest.raises(ValueError, match="abar"):
        linear_mmse_x0(x, 0.0, mu, var)


def test_spectral_statistics_name_bad_arguments():
    from icml26.faps.metrics import censored_level_time, linear_mmse_band_r2, recovery_level_t

    with pytest.raises(ValueError, match="steps must be ascending"):
        censored_level_time([0, 20, 10], [0.1, 0.2, 0.3], 0.5)
    with pytest.raises(ValueError, match="values must be finite"):
        censored_level_time([0, 10], [0.1, float("nan")], 0.5)
    with pytest.raises(ValueError, match="t_grid and r2"):
        recovery_level_t([100, 200, 300], [0.9, 0.5], 0.5)
    with pytest.raises(ValueError, match="abar"):
        linear_mmse_band_r2(1.5, torch.ones(8, 8))


def test_idct2_inverts_dct2_on_non_square_blocks():
    from icml26.faps import dct2, idct2

    x = torch.randn(3, 6, 10, dtype=torch.float64)
    torch.testing.assert_close(idct2(dct2(x)), x)


def test_policy_schedule_needs_the_per_patch_reward():
    """policy_batch / policy_every are honoured by reward='patch' only: elsewhere they are refused, not ignored."""
    model = TinyDiT(8, 2, 1, 16, 1, 2, num_classes=10)
    gate = FrequencyGate(2, keep_ratio=0.5)
    with pytest.raises(ValueError, match="reward='patch' only"):
        FaPSTrainer(model, DDIMScheduler(1000), gate, total_steps=10, reward="signal", policy_every=2)
    FaPSTrainer(model, DDIMScheduler(1000), gate, total_steps=10, reward="patch", policy_every=2, policy_batch=4)
