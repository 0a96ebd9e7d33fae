"""SlaClipDPOptimizer in Opacus: same gradient release, noised slots, accounting, accumulation, hygiene."""

import math
import warnings

import pytest

pytest.importorskip("opacus")  # the [dp] extra

import torch  # noqa: E402
from opacus import GradSampleModule, PrivacyEngine  # noqa: E402
from opacus.optimizers import DPOptimizer  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from icml26.slaclip import (  # noqa: E402
    SlaClipController,
    SlaClipDPOptimizer,
    encode_slack,
    make_private_slaclip,
    recommended_num_slots,
)

warnings.filterwarnings("ignore", message=".*Secure RNG.*")
warnings.filterwarnings("ignore", message=".*Full backward hook.*")
warnings.filterwarnings("ignore", message=".*Optimal order.*")

SIGMA, B, K = 1.3, 16, 4


def _batch(seed=0, n=B, d=5, classes=3):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g) * torch.linspace(0.1, 3.0, n)[:, None]  # a spread of gradient norms
    y = torch.randint(0, classes, (n,), generator=g)
    return x, y


def _model(seed=0, d=5, classes=3):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(d, 4), nn.Tanh(), nn.Linear(4, classes))


def _backward(model, x, y):
    nn.functional.cross_entropy(model(x), y).backward()


def _norms(gsm):
    per = [p.grad_sample.reshape(len(p.grad_sample), -1).norm(2, dim=-1) for p in gsm.parameters()]
    return torch.stack(per, 1).norm(2, dim=1)


def _slaclip(model, clip=0.5, seed=7, controller=None, sigma=SIGMA, lr=0.1, **kw):
    return SlaClipDPOptimizer(
        torch.optim.SGD(model.parameters(), lr=lr),
        noise_multiplier=sigma,
        max_grad_norm=clip,
        expected_batch_size=B,
        num_slots=K,
        controller=controller,
        generator=torch.Generator().manual_seed(seed),
        **kw,
    )


class Spy:
    """A controller that records what it is fed and leaves the threshold unchanged."""

    def __init__(self):
        self.fed = []

    def __call__(self, clip, s_hat):
        self.fed.append((clip, s_hat.clone()))
        return clip


def test_gradient_coordinates_equal_opacus_flat_release():
    x, y = _batch()
    m1, m2 = GradSampleModule(_model()), GradSampleModule(_model())
    flat = DPOptimizer(
        torch.optim.SGD(m1.parameters(), lr=0.1),
        noise_multiplier=SIGMA,
        max_grad_norm=0.5,
        expected_batch_size=B,
        generator=torch.Generator().manual_seed(7),
    )
    ours = _slaclip(m2)
    for m, opt in ((m1, flat), (m2, ours)):
        opt.zero_grad()
        _backward(m, x, y)
        opt.step()
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        assert torch.equal(p1.grad, p2.grad)  # same noise draws, same clipping: bitwise equal
        assert torch.equal(p1.data, p2.data)


def test_controller_is_fed_the_noised_release_and_raw_slack_is_dropped():
    x, y = _batch()
    model = GradSampleModule(_model())
    spy = Spy()
    opt = _slaclip(model, controller=spy)
    opt.zero_grad()
    _backward(model, x, y)
    clean_sum = encode_slack(_norms(model).detach(), 0.5, K).sum(0)
    shapes = [p.shape for p in model.parameters()]
    opt.step()
    # Rebuild the exact noise: Opacus draws the gradient noise first, then our K slots, from one generator.
    g = torch.Generator().manual_seed(7)
    for shape in shapes:
        torch.normal(0.0, SIGMA * 0.5, size=shape, generator=g)
    slot_noise = torch.normal(0.0, SIGMA * 0.5, size=(K,), generator=g)
    width = 0.5 / math.sqrt(K)
    expected = (clean_sum + slot_noise) / (width * B)
    clean = clean_sum / (width * B)
    ((clip_fed, s_fed),) = spy.fed
    assert clip_fed == 0.5
    torch.testing.assert_close(s_fed, expected)
    torch.testing.assert_close(opt.slack_indicator, expected)
    assert (s_fed - clean).abs().max() > 0.05  # the controller never sees the un-noised slack
    assert opt._slack_sum is None  # raw slack is dropped once released


def test_noise_free_limit_gives_the_mean_encoding():
    x, y = _batch()
    model = GradSampleModule(_model())
    opt = _slaclip(model, sigma=1e-12, controller=Spy())
    opt.zero_grad()
    _backward(model, x, y)
    expected = encode_slack(_norms(model).detach(), 0.5, K).mean(0) / (0.5 / math.sqrt(K))
    opt.step()
    torch.testing.assert_close(opt.slack_indicator, expected, atol=1e-6, rtol=0)


def test_monte_carlo_mean_and_variance_of_the_indicator():
    x, y = _batch()
    model = GradSampleModule(_model())
    opt = _slaclip(model, controller=Spy(), lr=0.0)
    draws, expected = [], None
    for _ in range(2000):
        opt.zero_grad()
        _backward(model, x, y)
        if expected is None:
            expected = encode_slack(_norms(model).detach(), 0.5, K).mean(0) / (0.5 / math.sqrt(K))
        opt.step()
        draws.append(opt.slack_indicator)
    s = torch.stack(draws).double()
    sd = SIGMA * math.sqrt(K) / B  # per-coordinate noise std of s_hat
    z = (s.mean(0) - expected.double()) / (sd / math.sqrt(len(s)))
    assert bool((z.abs() < 4.5).all()), z
    ratio = s.var(0) / sd**2  # chi-square / (n-1): sd of the ratio is about sqrt(2/1999) = 0.032
    assert bool(((ratio > 0.85) & (ratio < 1.15)).all()), ratio


def test_two_micro_batches_equal_one_logical_batch():
    x, y = _batch()
    m1, m2 = GradSampleModule(_model()), GradSampleModule(_model())
    whole, split = _slaclip(m1, controller=Spy()), _slaclip(m2, controller=Spy())
    whole.zero_grad()
    _backward(m1, x, y)
    whole.step()
    split.zero_grad()
    _backward(m2, x[:6], y[:6])
    split.signal_skip_step(True)
    split.step()  # accumulates only
    assert split.slack_indicator is None and split.clip_history == []
    split.zero_grad()
    _backward(m2, x[6:], y[6:])
    split.step()
    torch.testing.assert_close(split.slack_indicator, whole.slack_indicator)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        torch.testing.assert_close(p1.grad, p2.grad)
    assert whole.clip_history == split.clip_history == [0.5]


def test_changing_the_threshold_inside_accumulation_raises():
    x, y = _batch()
    model = GradSampleModule(_model())
    opt = _slaclip(model)
    opt.zero_grad()
    _backward(model, x[:6], y[:6])
    opt.signal_skip_step(True)
    opt.step()
    opt.zero_grad()
    opt.max_grad_norm = 2.0
    _backward(model, x[6:], y[6:])
    with pytest.raises(ValueError, match="inside gradient accumulation"):
        opt.step()


def test_empty_poisson_batch_still_releases_noise_and_updates():
    x, _ = _batch()
    model = GradSampleModule(_model())
    spy = Spy()
    opt = _slaclip(model, controller=spy)
    opt.zero_grad()
    model(x[:0]).sum().backward()  # what an empty Poisson batch gives
    opt.step()
    assert len(spy.fed) == 1 and opt.clip_history == [0.5]
    assert opt.slack_indicator.abs().sum() > 0  # pure noise, but a real release
    assert all(p.grad.abs().sum() > 0 for p in model.parameters())


def test_history_and_threshold_update_after_each_step():
    x, y = _batch()
    model = GradSampleModule(_model())
    ctl = SlaClipController(c_min=1e-3, c_max=1e3)
    opt = _slaclip(model, controller=ctl)
    for t in range(3):
        before = opt.current_clip
        opt.zero_grad()
        _backward(model, x, y)
        opt.step()
        assert opt.clip_history[-1] == before and len(opt.clip_history) == t + 1
        assert opt.current_clip == pytest.approx(ctl(before, opt.slack_indicator))
        assert opt.slack_indicator.shape == (K,)


def _loader(n=240, batch=24):
    x, y = _batch(seed=1, n=n)
    return DataLoader(TensorDataset(x, y), batch_size=batch)


def _train(make, steps_epochs=3, **kw):
    engine = PrivacyEngine(accountant="rdp")
    model = _model()
    model, opt, loader = make(engine, model, torch.optim.SGD(model.parameters(), lr=0.1), _loader(), **kw)
    for _ in range(steps_epochs):
        for xb, yb in loader:
            opt.zero_grad()
            _backward(model, xb, yb)
            opt.step()
    return engine, opt


def test_accountant_history_and_epsilon_identical_to_flat_clipping():  # claim A1
    def vanilla(engine, model, optimizer, loader):
        return engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=SIGMA, max_grad_norm=1.0
        )

    def slaclip(engine, model, optimizer, loader):
        return make_private_slaclip(engine, model, optimizer, loader, noise_multiplier=SIGMA, max_grad_norm=1.0)

    torch.manual_seed(3)
    e_v, _ = _train(vanilla)
    torch.manual_seed(3)
    e_s, opt = _train(slaclip)
    assert isinstance(opt, SlaClipDPOptimizer)
    assert e_s.accountant.history == e_v.accountant.history
    assert e_s.accountant.history[0][:2] == (SIGMA, 1 / 10)
    assert e_s.get_epsilon(1e-5) == e_v.get_epsilon(1e-5)
    assert len(opt.clip_history) == sum(h[2] for h in e_s.accountant.history)
    assert opt.num_slots == recommended_num_slots(24, SIGMA)


def test_make_private_slaclip_q_variant_and_errors():
    def q(engine, model, optimizer, loader):
        return make_private_slaclip(engine, model, optimizer, loader, SIGMA, 1.0, variant="slaclip-q", num_slots=3)

    _, opt = _train(q, steps_epochs=1)
    assert type(opt.controller).__name__ == "SlaClipQController" and opt.num_slots == 3
    model = _model()
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    bad = [
        (dict(noise_multiplier=0.0), ValueError, "noise_multiplier"),
        (dict(noise_multiplier=-1.0), ValueError, "noise_multiplier"),
        (dict(max_grad_norm=0.0), ValueError, "max_grad_norm"),
        (dict(c_min=5.0, c_max=1.0), ValueError, "c_min"),
        (dict(variant="slaclip-x"), ValueError, "variant"),
        (dict(clipping="per_layer"), ValueError, "clipping"),
        (dict(grad_sample_mode="ghost"), ValueError, "grad_sample_mode"),
    ]
    for extra, exc, word in bad:
        kw = {"noise_multiplier": SIGMA, "max_grad_norm": 1.0, **extra}
        with pytest.raises(exc, match=word):
            make_private_slaclip(PrivacyEngine(), model, sgd, _loader(), **kw)
    with pytest.raises(TypeError, match="privacy_engine"):
        make_private_slaclip(object(), model, sgd, _loader(), SIGMA, 1.0)


def test_optimizer_bad_inputs():
    params = _model().parameters()
    sgd = torch.optim.SGD(params, lr=0.1)
    with pytest.raises(ValueError, match="noise_multiplier"):
        SlaClipDPOptimizer(sgd, noise_multiplier=0.0, max_grad_norm=1.0, expected_batch_size=8)
    with pytest.raises(ValueError, match="max_grad_norm"):
        SlaClipDPOptimizer(sgd, noise_multiplier=1.0, max_grad_norm=-1.0, expected_batch_size=8)
    with pytest.raises(ValueError, match="expected_batch_size"):
        SlaClipDPOptimizer(sgd, noise_multiplier=1.0, max_grad_norm=1.0, expected_batch_size=None, loss_reduction="sum")
    with pytest.raises(ValueError, match="num_slots"):
        SlaClipDPOptimizer(sgd, noise_multiplier=1.0, max_grad_norm=1.0, expected_batch_size=8, num_slots=0)
    with pytest.raises(TypeError, match="controller"):
        SlaClipDPOptimizer(sgd, noise_multiplier=1.0, max_grad_norm=1.0, expected_batch_size=8, controller=3)


def test_threshold_converges_from_both_ends_of_the_grid_on_digits():
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X = torch.tensor(StandardScaler().fit_transform(X), dtype=torch.float32)
    y = torch.tensor(y)
    finals = {}
    for variant in ("slaclip", "slaclip-q"):
        for c0 in (0.01, 100.0):
            torch.manual_seed(0)
            engine = PrivacyEngine(accountant="rdp")
            model = nn.Linear(64, 10)
            model, opt, loader = make_private_slaclip(
                engine,
                model,
                torch.optim.SGD(model.parameters(), lr=0.5),
                DataLoader(TensorDataset(X, y), 180),
                noise_multiplier=1.0,
                max_grad_norm=c0,
                c_min=1e-3,
                c_max=1e3,
                variant=variant,
                noise_generator=torch.Generator().manual_seed(0),
            )
            with torch.no_grad():
                start = nn.functional.cross_entropy(model(X), y).item()
            for _ in range(12):
                for xb, yb in loader:
                    opt.zero_grad()
                    _backward(model, xb, yb)
                    opt.step()
            with torch.no_grad():
                assert nn.functional.cross_entropy(model(X), y).item() < 0.7 * start  # learns from either end
            finals[variant, c0] = opt.current_clip
            if variant == "slaclip-q" and c0 == 100.0:
                clean = nn.Linear(64, 10)
                clean.load_state_dict(model._module.state_dict())
                gsm = GradSampleModule(clean)
                _backward(gsm, X, y)
                median = float(_norms(gsm).median())  # Opacus rescales grad_sample to per-sample losses
    for variant in ("slaclip", "slaclip-q"):  # the start is forgotten: both ends meet
        assert abs(math.log(finals[variant, 0.01] / finals[variant, 100.0])) < math.log(3), finals
    # SlaClip-Q aims at the median norm; full SlaClip aims higher (the median of non-vanishing gradients).
    assert median / 3 < finals["slaclip-q", 100.0] < 3 * median, (finals, median)
    assert finals["slaclip", 100.0] > finals["slaclip-q", 100.0]
