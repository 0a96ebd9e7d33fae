import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from icml26.faps import FeatureFD, frechet_distance


def test_fd_of_a_sample_with_itself_is_zero():
    x = np.random.default_rng(0).normal(size=(500, 16))
    mu, cov = x.mean(0), np.cov(x, rowvar=False)
    assert frechet_distance(mu, cov, mu, cov) < 1e-6


def test_fd_closed_form_for_diagonal_gaussians():
    mu1, mu2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    s1, s2 = np.array([1.0, 2.0, 0.5]), np.array([3.0, 1.0, 0.5])
    expect = np.sum((mu1 - mu2) ** 2) + np.sum((s1 - s2) ** 2)
    assert frechet_distance(mu1, np.diag(s1**2), mu2, np.diag(s2**2)) == pytest.approx(expect, rel=1e-9)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), d=st.integers(1, 6))
def test_fd_closed_form_for_rotated_scaled_gaussians(seed, d):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(d, d))
    cov = a @ a.T + 0.1 * np.eye(d)
    c = 2.5  # cov2 = c^2 cov1 commutes: tr(S1 + S2 - 2 sqrt(S1 S2)) = (1 - c)^2 tr(S1)
    mu1, mu2 = rng.normal(size=d), rng.normal(size=d)
    expect = np.sum((mu1 - mu2) ** 2) + (1 - c) ** 2 * np.trace(cov)
    assert frechet_distance(mu1, cov, mu2, c**2 * cov) == pytest.approx(expect, rel=1e-6, abs=1e-8)


def test_feature_fd_is_permutation_invariant_and_zero_on_identical_sets():
    g = torch.Generator().manual_seed(0)
    real, fake = torch.randn(300, 8, generator=g), torch.randn(300, 8, generator=g) + 0.5
    fd = FeatureFD(nn.Identity())
    fd.update(real, real=True)
    fd.update(real[torch.randperm(300, generator=g)], real=False)
    assert fd.compute() < 1e-6
    fd.reset()
    fd.update(real, real=True)
    fd.update(fake, real=False)
    a = fd.compute()
    fd.reset()
    fd.update(real[torch.randperm(300, generator=g)], real=True)
    fd.update(fake[:150], real=False)
    fd.update(fake[150:], real=False)
    assert fd.compute() == pytest.approx(a, rel=1e-9)
    assert a == pytest.approx(8 * 0.25, rel=0.4)  # mean shift 0.5 per dim, same covariance


def test_feature_fd_bad_inputs():
    fd = FeatureFD(nn.Identity())
    with pytest.raises(ValueError, match="at least 2"):
        fd.compute()
    with pytest.raises(TypeError, match="real"):
        fd.update(torch.zeros(3, 2), real=1)
    with pytest.raises(ValueError, match="features"):
        FeatureFD(nn.Identity()).update(torch.zeros(3, 1, 2, 2), real=True)
    with pytest.raises(TypeError, match="feature_extractor"):
        FeatureFD(None)


def test_kernel_distance_is_unbiased_near_zero_for_one_distribution_and_grows_with_a_shift():
    from icml26.faps import kernel_distance

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(400, 8)), rng.normal(size=(400, 8))
    same, same_sd = kernel_distance(a, b, n_subsets=50, subset_size=100)
    assert abs(same) < 3 * same_sd / np.sqrt(50) + 0.02  # unbiased: can be slightly negative
    shifted, _ = kernel_distance(a, b + 0.5, n_subsets=50, subset_size=100)
    further, _ = kernel_distance(a, b + 1.0, n_subsets=50, subset_size=100)
    assert shifted > 10 * abs(same) and further > shifted
    with pytest.raises(ValueError, match="real and gen"):
        kernel_distance(a, b[:, :3])


def test_feature_fd_compute_kid_uses_the_accumulated_features():
    torch.manual_seed(0)
    m = FeatureFD(nn.Flatten())
    x = torch.randn(300, 1, 2, 2)
    m.update(x, real=True)
    m.update(x.flip(0) + 1.0, real=False)
    kid, sd = m.compute_kid(n_subsets=20, subset_size=50)
    assert kid > 0 and sd >= 0
