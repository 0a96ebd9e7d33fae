"""Privacy audits through the optimizer (issue 24): SlaClip passes each; three broken variants fail theirs.
Also state_dict round trips, a tensor max_grad_norm and make_private_slaclip_with_epsilon."""

import math
import warnings

import pytest

pytest.importorskip("opacus")  # the [dp] extra

import torch  # noqa: E402
from opacus import PrivacyEngine  # noqa: E402
from opacus.optimizers import DPOptimizer  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from icml26.slaclip import (  # noqa: E402
    SlaClipDPOptimizer,
    audit_controller_inputs,
    audit_release_noise,
    audit_sensitivity,
    audit_slot_noise,
    make_private_slaclip,
    make_private_slaclip_with_epsilon,
)

warnings.filterwarnings("ignore", message=".*Secure RNG.*")
warnings.filterwarnings("ignore", message=".*Full backward hook.*")
warnings.filterwarnings("ignore", message=".*Optimal order.*")

SIGMA, B, K, CLIP = 1.3, 16, 4, 1.5


def _batch(seed=0, n=B, d=5, classes=3):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g) * torch.linspace(0.1, 3.0, n)[:, None]  # norms on both sides of C
    return x, torch.randint(0, classes, (n,), generator=g)


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3))


class NoSlotNoise(SlaClipDPOptimizer):
    """Broken: the slots are released without noise."""

    def add_noise(self):
        DPOptimizer.add_noise(self)
        clip, raw = float(self.max_grad_norm), self._slack_sum
        self._slack_sum = self._accumulation_clip = None
        self.slack_indicator = raw / (clip / math.sqrt(self.num_slots) * self.expected_batch_size)
        self._released = True


class HalfGradNoise(SlaClipDPOptimizer):
    """Broken: the gradient coordinates get half their noise (the slots keep theirs)."""

    def add_noise(self):
        sigma = self.noise_multiplier
        self.noise_multiplier = sigma / 2
        try:
            DPOptimizer.add_noise(self)
        finally:
            self.noise_multiplier = sigma
        clip = float(self.max_grad_norm)
        raw = self._slack_sum + sigma * clip * torch.randn(self._slack_sum.shape, generator=self.generator)
        self._slack_sum = self._accumulation_clip = None
        self.slack_indicator = raw / (clip / math.sqrt(self.num_slots) * self.expected_batch_size)
        self._released = True


class ScaledSlots(SlaClipDPOptimizer):
    """Broken: slots scaled by 1.3, so one sample moves the release by up to 1.3 C."""

    def clip_and_accumulate(self):
        super().clip_and_accumulate()
        self._slack_sum = 1.3 * self._slack_sum


class KeepsRawSlack(SlaClipDPOptimizer):
    """Broken: a copy of the un-noised slack sum stays on the optimizer after the release."""

    def add_noise(self):
        self.raw_slack = self._slack_sum.clone()
        super().add_noise()


class SlotsCopyGradNoise(SlaClipDPOptimizer):
    """Broken: the slot noise is a copy of the first K gradient-noise draws (each coordinate still N(0, sigma^2 C^2)
    marginally, but slots minus those gradient coordinates is noise-free)."""

    def add_noise(self):
        DPOptimizer.add_noise(self)
        p = self.params[0]
        noise = p.grad.reshape(-1)[: self.num_slots] - p.summed_grad.reshape(-1)[: self.num_slots]
        clip, raw = float(self.max_grad_norm), self._slack_sum + noise.to(self._slack_sum.dtype)
        self._slack_sum = self._accumulation_clip = None
        self.slack_indicator = raw / (clip / math.sqrt(self.num_slots) * self.expected_batch_size)
        self._released = True


class ReusedNoise(SlaClipDPOptimizer):
    """Broken: every second release re-draws the noise of the release before (the generator rewound)."""

    def add_noise(self):
        state = getattr(self, "_saved", None)
        if state is None:
            self._saved = self.generator.get_state()
        else:
            self.generator.set_state(state)
            self._saved = None
        super().add_noise()


def _factory(cls=SlaClipDPOptimizer, seed=7):
    def make(params):
        return cls(
            torch.optim.SGD(params, lr=0.1),
            noise_multiplier=SIGMA,
            max_grad_norm=CLIP,
            expected_batch_size=B,
            num_slots=K,
            generator=torch.Generator().manual_seed(seed),
        )

    return make


def _vanishing_batch():
    """Regression targets equal to the model's own outputs for every other sample: those gradients are exactly
    zero, so their slots are full (norm C) and a mis-scaled encoding shows in the sensitivity."""
    x, _ = _batch()
    with torch.no_grad():
        t = _model()(x)
    t[::2] += torch.randn(t[::2].shape, generator=torch.Generator().manual_seed(1)) * 2.0
    return x, t


def _mse(out, t):
    return ((out - t) ** 2).sum(1).mean()


AUDITS = {
    "sensitivity": lambda cls: audit_sensitivity(_factory(cls), _model, *_vanishing_batch(), _mse, n_neighbours=B),
    "slot_noise": lambda cls: audit_slot_noise(_factory(cls), _model, *_batch(), n_releases=300),
    "controller": lambda cls: audit_controller_inputs(_factory(cls), _model, *_batch()),
    "release_noise": lambda cls: audit_release_noise(_factory(cls), _model, *_batch(), n_releases=100),
}


@pytest.mark.parametrize("audit", sorted(AUDITS))
def test_slaclip_passes_every_audit(audit):
    out = AUDITS[audit](SlaClipDPOptimizer)
    assert out["passed"], out
    if audit == "sensitivity":  # tight: a sample inside the threshold moves the release by exactly C
        assert 0.999 <= out["max_change_over_clip"] <= 1.0001
        assert 0 < out["removed_inside_threshold"] < B  # samples on both sides of the threshold were removed


@pytest.mark.parametrize(
    "broken, audit",
    [
        (NoSlotNoise, "slot_noise"),
        (NoSlotNoise, "controller"),
        (NoSlotNoise, "release_noise"),
        (HalfGradNoise, "release_noise"),
        (ScaledSlots, "sensitivity"),
        (KeepsRawSlack, "controller"),
    ],
)
def test_each_broken_variant_fails_its_audit(broken, audit):
    out = AUDITS[audit](broken)
    assert not out["passed"], out
    if broken is ScaledSlots:
        assert out["max_change_over_clip"] > 1.1
    if broken is KeepsRawSlack:
        assert out["leaks"] == ["raw_slack"]
    if broken is HalfGradNoise:  # the slot audit is blind to it; the release audit sees every gradient coordinate
        assert AUDITS["slot_noise"](broken)["passed"]
        assert abs(out["blocks"]["gradients"]["sd_over_sigma_clip"] - 0.5) < 0.05 and out["blocks"]["slots"]["passed"]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_release_audit_independence_has_no_false_alarm(seed):
    out = audit_release_noise(_factory(seed=seed), _model, *_batch(), n_releases=100)
    ind = out["independence"]
    assert out["passed"] and ind["passed"], out
    assert ind["max_abs_corr_slot_gradient"] < ind["corr_bound"] and abs(ind["pooled_lag1_z"]) < ind["lag1_bound"]


@pytest.mark.parametrize("broken", [SlotsCopyGradNoise, ReusedNoise])
def test_release_audit_catches_reused_noise_the_marginals_miss(broken):
    out = audit_release_noise(_factory(broken), _model, *_batch(), n_releases=100)
    assert not out["passed"] and not out["independence"]["passed"], out
    if broken is SlotsCopyGradNoise:  # every marginal test passes: only the cross-correlation sees it
        assert out["flagged"] == 0 and all(b["passed"] for b in out["blocks"].values())
        assert out["independence"]["max_abs_corr_slot_gradient"] > 0.99
    else:
        assert out["independence"]["pooled_lag1_z"] > 10


def test_audits_reject_bad_inputs():
    x, y = _batch()
    with pytest.raises(TypeError, match="make_optimizer"):
        audit_sensitivity(3, _model, x, y)
    with pytest.raises(ValueError, match="n_neighbours"):
        audit_sensitivity(_factory(), _model, x, y, n_neighbours=0)
    with pytest.raises(ValueError, match="n_releases"):
        audit_slot_noise(_factory(), _model, x, y, n_releases=2)
    with pytest.raises(ValueError, match="n_releases"):
        audit_release_noise(_factory(), _model, x, y, n_releases=5)
    with pytest.raises(ValueError, match="level"):
        audit_release_noise(_factory(), _model, x, y, level=1.5)
    with pytest.raises(ValueError, match="x and y"):
        audit_controller_inputs(_factory(), _model, x, y[:3])
    with pytest.raises(TypeError, match="SlaClipDPOptimizer"):
        audit_controller_inputs(lambda p: torch.optim.SGD(p, lr=0.1), _model, x, y)


def _loader(n=240, batch=24):
    x, y = _batch(seed=1, n=n)
    return DataLoader(TensorDataset(x, y), batch_size=batch)


def _private(seed=0, **kw):
    torch.manual_seed(seed)
    engine, model = PrivacyEngine(accountant="rdp"), _model()
    model, opt, loader = make_private_slaclip(
        engine,
        model,
        torch.optim.Adam(model.parameters(), lr=0.01),
        _loader(),
        SIGMA,
        1.0,
        noise_generator=torch.Generator().manual_seed(seed),
        **kw,
    )
    return model, opt, loader


def _epoch(model, opt, loader):
    for xb, yb in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()


def test_state_dict_keeps_the_threshold_and_its_history():
    model, opt, loader = _private()
    _epoch(model, opt, loader)
    state = opt.state_dict()
    assert state["slaclip"]["max_grad_norm"] == opt.current_clip != 1.0
    _, fresh, _ = _private(seed=1)
    assert fresh.current_clip == 1.0
    fresh.load_state_dict(state)
    assert fresh.current_clip == opt.current_clip
    assert fresh.clip_history == opt.clip_history
    torch.testing.assert_close(fresh.slack_indicator, opt.slack_indicator)
    inner_a, inner_b = opt.original_optimizer.state_dict()["state"], fresh.original_optimizer.state_dict()["state"]
    for k in inner_a:  # Adam moments restored too
        torch.testing.assert_close(inner_a[k]["exp_avg"], inner_b[k]["exp_avg"])
    plain = opt.original_optimizer.state_dict()  # a plain torch state dict keeps the current threshold
    _, other, _ = _private(seed=2)
    other.load_state_dict(plain)
    assert other.current_clip == 1.0
    bad = dict(state, slaclip=dict(state["slaclip"], num_slots=opt.num_slots + 1))
    with pytest.raises(ValueError, match="num_slots"):
        fresh.load_state_dict(bad)


def test_max_grad_norm_may_be_a_one_element_tensor():
    params = _model().parameters()
    t = SlaClipDPOptimizer(
        torch.optim.SGD(params, lr=0.1), noise_multiplier=1.0, max_grad_norm=torch.tensor(0.7), expected_batch_size=8
    )
    assert t.current_clip == pytest.approx(0.7)
    with pytest.raises(ValueError, match="max_grad_norm"):
        SlaClipDPOptimizer(
            torch.optim.SGD(_model().parameters(), lr=0.1),
            noise_multiplier=1.0,
            max_grad_norm=torch.ones(2),
            expected_batch_size=8,
        )


def test_make_private_with_epsilon_reaches_the_target_like_opacus():
    def run(make):
        torch.manual_seed(0)
        engine, model = PrivacyEngine(accountant="rdp"), _model()
        model, opt, loader = make(engine, model, torch.optim.SGD(model.parameters(), lr=0.1), _loader())
        for _ in range(3):
            _epoch(model, opt, loader)
        return engine, opt

    e_s, o_s = run(lambda e, m, o, dl: make_private_slaclip_with_epsilon(e, m, o, dl, 3.0, 1e-5, 3, 1.0))
    e_v, o_v = run(
        lambda e, m, o, dl: e.make_private_with_epsilon(
            module=m, optimizer=o, data_loader=dl, target_epsilon=3.0, target_delta=1e-5, epochs=3, max_grad_norm=1.0
        )
    )
    assert isinstance(o_s, SlaClipDPOptimizer)
    assert o_s.noise_multiplier == o_v.noise_multiplier
    assert e_s.get_epsilon(1e-5) == pytest.approx(e_v.get_epsilon(1e-5)) == pytest.approx(3.0, abs=0.05)
    with pytest.raises(ValueError, match="target_delta"):
        make_private_slaclip_with_epsilon(
            PrivacyEngine(), _model(), torch.optim.SGD(_model().parameters(), lr=0.1), _loader(), 3.0, 1.5, 3, 1.0
        )
    with pytest.raises(ValueError, match="epochs"):
        make_private_slaclip_with_epsilon(
            PrivacyEngine(), _model(), torch.optim.SGD(_model().parameters(), lr=0.1), _loader(), 3.0, 1e-5, 0, 1.0
        )
