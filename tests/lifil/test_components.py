"""Masking, the upload pipeline (selection, mixup, privatization, epsilon), generators, decoupling."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from icml26.lifil import (
    DecoupledNet,
    FeatureGenerator,
    FILConfig,
    GaussianFeatureGenerator,
    LiFILClient,
    clip_norm,
    feature_mixup,
    gaussian_epsilon,
    privatize,
    select_high_confidence,
)
from icml26.lifil.model import get_state


def test_masking_never_picks_unseen_and_ce_finite():
    torch.manual_seed(0)
    m = DecoupledNet(8, 4, 6)
    x = torch.randn(50, 8)
    seen = [1, 4]
    z = m(x, seen)
    assert torch.isinf(z[:, [0, 2, 3, 5]]).all() and torch.isfinite(z[:, seen]).all()
    assert set(z.argmax(1).tolist()) <= set(seen)
    loss = torch.nn.functional.cross_entropy(z, torch.tensor([1, 4] * 25))
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in m.parameters())
    assert torch.allclose(m.features(x).norm(dim=1), torch.ones(50), atol=1e-5)
    with pytest.raises(ValueError, match="seen_classes"):
        m(x, [7])
    with pytest.raises(ValueError, match="feature_dim"):
        DecoupledNet(8, 0, 6)


def test_high_confidence_filter_exact():
    probs = torch.tensor([[0.95, 0.05], [0.6, 0.4], [0.02, 0.98], [0.91, 0.09], [0.97, 0.03], [0.05, 0.95]])
    y = torch.tensor([0, 0, 1, 1, 0, 1])
    got = select_high_confidence(probs, y, tau=0.9, m=5).tolist()
    assert sorted(got) == [0, 2, 4, 5]  # 1: not confident, 3: wrong
    assert select_high_confidence(probs, y, tau=0.9, m=1).tolist() == [4, 2]  # top-1 per class
    with pytest.raises(ValueError, match="tau"):
        select_high_confidence(probs, y, tau=1.5)
    with pytest.raises(ValueError, match="m must"):
        select_high_confidence(probs, y, m=0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 6), alpha=st.floats(0.1, 3.0))
def test_mixup_is_convex_and_intra_class(seed, n, alpha):
    rng = np.random.default_rng(seed)
    H = torch.as_tensor(rng.normal(size=(2 * n, 3)), dtype=torch.float64)
    y = torch.tensor([0] * n + [1] * n)
    Hm, ym = feature_mixup(H, y, n_per_class=7, alpha=alpha, rng=rng)
    assert ym.tolist() == [0] * 7 + [1] * 7
    for h, c in zip(Hm, ym.tolist(), strict=True):
        P = H[y == c]
        best = math.inf  # distance from h to the nearest segment between two same-class rows
        for a in P:
            for b in P:
                d = a - b
                t = 0.0 if float(d @ d) == 0 else float(((h - b) @ d) / (d @ d))
                best = min(best, float((h - (b + min(max(t, 0.0), 1.0) * d)).norm()))
        assert best < 1e-9


def test_privatization_clip_noise_and_epsilon():
    rng = np.random.default_rng(0)
    H = torch.as_tensor(rng.normal(size=(4000, 8)) * 3, dtype=torch.float64)
    C = clip_norm(H, 1.0)
    assert (C.norm(dim=1) <= 1.0 + 1e-9).all()
    small = torch.full((1, 8), 0.01, dtype=torch.float64)
    assert torch.equal(clip_norm(small, 1.0), small)
    assert torch.equal(privatize(H, sigma=0.0, R=1.0), C)
    noise = privatize(H, sigma=0.5, R=2.0, rng=rng) - clip_norm(H, 2.0)
    # chi-square test of the noise variance (sigma R)^2 = 1 on 32000 coordinates
    s2 = float(noise.pow(2).sum())
    dof = noise.numel()
    p = 2 * min(stats.chi2.cdf(s2, dof), stats.chi2.sf(s2, dof))
    assert p > 1e-3
    # analytic Gaussian mechanism: delta(eps) equals the target; tighter than the classical bound
    for sigma in (0.5, 1.0, 3.0):
        eps = gaussian_epsilon(sigma, 1e-5, sensitivity=2.0)
        r = 2.0 / sigma
        delta = stats.norm.cdf(r / 2 - eps / r) - math.exp(eps) * stats.norm.cdf(-r / 2 - eps / r)
        assert delta == pytest.approx(1e-5, rel=1e-6)
        if eps < 1:
            assert eps <= 2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / sigma
    assert gaussian_epsilon(1.0) > gaussian_epsilon(2.0) > gaussian_epsilon(4.0)
    assert gaussian_epsilon(0.0) == math.inf
    with pytest.raises(ValueError, match="delta"):
        gaussian_epsilon(1.0, delta=0.0)
    with pytest.raises(ValueError, match="sigma"):
        privatize(H, sigma=-1.0)


def _two_classes(rng, n=200):
    H = np.concatenate([rng.normal(0.0, 0.3, (n, 4)) + [2, 0, 0, 0], rng.normal(0.0, 0.3, (n, 4)) + [-2, 0, 1, 0]])
    return H.astype(np.float32), np.repeat([0, 1], n)


def test_generator_fits_means_and_keeps_old_classes():
    rng = np.random.default_rng(0)
    H, y = _two_classes(rng)
    g = FeatureGenerator(4, 4, steps=300, lr=3e-3, seed=0).fit(H, y, rng=rng)
    assert g.loss_history_[-1] < 0.5 * g.loss_history_[0]
    for c in (0, 1):
        assert float((g.sample(np.full(500, c), rng).mean(0) - torch.as_tensor(H[y == c].mean(0))).norm()) < 0.1
    # new classes 2, 3 with self-replay of 0, 1 from a frozen copy
    import copy

    H2 = np.concatenate([rng.normal(0, 0.3, (200, 4)) + [0, 2, 0, 0], rng.normal(0, 0.3, (200, 4)) + [0, -2, 0, 1]])
    prev = copy.deepcopy(g)
    g.fit(H2.astype(np.float32), np.repeat([2, 3], 200), previous=prev, old_classes=[0, 1], rng=rng)
    for c in (0, 1):
        assert float((g.sample(np.full(500, c), rng).mean(0) - torch.as_tensor(H[y == c].mean(0))).norm()) < 0.15
    assert g.classes_ == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="previous"):
        FeatureGenerator(4, 4, steps=2).fit(H, y, old_classes=[3])


def test_replay_shape_is_checked():
    c, g, _ = _client(1, 1)
    with pytest.raises(ValueError, match="replay"):
        c.fit(g, (np.zeros((3, 32), np.float32), np.zeros(4, np.int64)), 0)


def test_gaussian_generator_and_noise_removal():
    rng = np.random.default_rng(1)
    H, y = _two_classes(rng, 2000)
    noisy = H + rng.normal(0, 0.5, H.shape).astype(np.float32)
    g = GaussianFeatureGenerator(4, 4, noise_var=0.25).fit(noisy, y)
    assert torch.allclose(g.vars_[0], torch.full((4,), 0.09), atol=0.03)  # 0.3^2 recovered from 0.3^2 + 0.5^2
    g2 = GaussianFeatureGenerator(4, 4).fit(H[:5], y[:5] + 2, previous=g, old_classes=[0, 1])
    assert torch.equal(g2.means_[0], g.means_[0])
    with pytest.raises(ValueError, match="not fitted"):
        g.sample([3])


def _client(local_epochs, classifier_epochs, lambda_fd=1.0):
    from icml26.lifil import load_digits_tasks

    tasks = load_digits_tasks(2, 1, 1.0, seed=0)
    cfg = FILConfig(local_epochs=local_epochs, classifier_epochs=classifier_epochs, lambda_fd=lambda_fd)
    c = LiFILClient(0, lambda: DecoupledNet(64, 32, 10), cfg, seed=0)
    torch.manual_seed(0)
    g = get_state(DecoupledNet(64, 32, 10))
    c.set_task(0, *tasks[0][0], tasks.seen_classes(0))
    g, _ = c.fit(g, None, 0)
    c.end_task(g)
    c.set_task(1, *tasks[1][0], tasks.seen_classes(1), new_classes=tasks.classes[1])
    return c, g, tasks


def test_decoupling_freezes_the_other_part():
    c, g, _ = _client(2, 0)  # encoder regularization only
    new, _ = c.fit(g, None, 0)
    assert all(np.array_equal(new[k], g[k]) for k in g if k.startswith("head."))
    assert any(not np.array_equal(new[k], g[k]) for k in g if k.startswith("encoder."))
    c, g, _ = _client(0, 2)  # classifier stabilization only
    replay = (np.random.default_rng(0).normal(size=(10 * len(c.old), 32)).astype(np.float32), np.repeat(c.old, 10))
    new, _ = c.fit(g, replay, 0)
    assert all(np.array_equal(new[k], g[k]) for k in g if k.startswith("encoder."))
    assert any(not np.array_equal(new[k], g[k]) for k in g if k.startswith("head."))


def test_large_lambda_fd_keeps_features():
    from icml26.lifil.model import set_state

    drift = {}
    for lam in (0.0, 100.0):
        c, g, tasks = _client(2, 0, lambda_fd=lam)
        c.cfg = FILConfig(local_epochs=2, classifier_epochs=0, lambda_fd=lam, lr=0.003, momentum=0.0)
        new, _ = c.fit(g, None, 0)
        X = torch.as_tensor(tasks[1][0][0])
        h0 = set_state(DecoupledNet(64, 32, 10), g).features(X)
        h1 = set_state(DecoupledNet(64, 32, 10), new).features(X)
        drift[lam] = float((h1 - h0).detach().norm(dim=1).max())
    assert drift[100.0] < 0.1 < 0.2 * drift[0.0]  # lambda_fd * lr well inside the stable range


def test_config_validation():
    with pytest.raises(ValueError, match="rounds_per_task"):
        FILConfig(rounds_per_task=0)
    with pytest.raises(ValueError, match="generator"):
        FILConfig(generator="gan")
    with pytest.raises(ValueError, match="tau"):
        FILConfig(tau=2.0)
