"""Threshold update rules (Eq. 12, 28-30) and their equivalence with Opacus's AdaClip update."""

import math

import numpy as np
import pytest

pytest.importorskip("opacus")  # the [dp] extra

import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from icml26.slaclip import SlaClipController, SlaClipQController  # noqa: E402


def test_fixed_point_and_direction():
    ctl = SlaClipController(eta=0.2, beta=0.5, c_min=0.01, c_max=100.0, tail_normalization="fraction")
    s = np.array([0.0, 0.1, 0.2, 0.4])  # tail share 0.4 -> target (1 + 0.4) / 2 = 0.7
    assert ctl.target(1.0, s) == pytest.approx(0.7)
    s[0] = 0.7
    assert ctl(1.0, s) == pytest.approx(1.0)  # s_hat[0] == gamma_t: unchanged
    s[0] = 0.9
    assert ctl(1.0, s) == pytest.approx(math.exp(0.2 * (0.7 - 0.9)))  # too many unclipped: decrease
    s[0] = 0.2
    assert ctl(1.0, s) > 1.0


def test_paper_normalization_divides_tail_by_clip():
    ctl = SlaClipController(c_min=0.01, c_max=100.0)  # tail_normalization="paper"
    s = [0.5, 0.3, 0.2]
    assert ctl.target(4.0, s) == pytest.approx(1 - 0.5 * (1 - 0.2 / 4.0))
    assert ctl.target(0.1, s) == pytest.approx(1.0)  # r = 2 clipped to 1


@settings(max_examples=50, deadline=None)
@given(
    tail=st.floats(-0.5, 1.5),
    s0=st.floats(-0.3, 1.3),
    clip=st.floats(0.2, 10.0),
    beta=st.floats(0.0, 1.0),
)
def test_update_rule_closed_form(tail, s0, clip, beta):
    ctl = SlaClipController(eta=0.3, beta=beta, c_min=1e-3, c_max=1e3, tail_normalization="fraction")
    r = min(max(tail, 0.0), 1.0)
    gamma = 1 - beta * (1 - r)
    assert ctl(clip, [s0, tail]) == pytest.approx(clip * math.exp(0.3 * (gamma - s0)))
    if beta == 0.5:
        assert gamma == pytest.approx((1 + r) / 2)
    # tail_clip="gamma" clips the target instead of r; both agree when r already lies in [0, 1].
    ctl_g = SlaClipController(
        eta=0.3, beta=beta, c_min=1e-3, c_max=1e3, tail_clip="gamma", tail_normalization="fraction"
    )
    gamma_g = min(max(1 - beta * (1 - tail), 0.0), 1.0)
    assert ctl_g.target(clip, [s0, tail]) == pytest.approx(gamma_g)
    if 0.0 <= tail <= 1.0:
        assert ctl_g(clip, [s0, tail]) == pytest.approx(ctl(clip, [s0, tail]))


def test_r_clip_and_gamma_clip_differ_on_negative_tail():
    s = [0.5, -0.4]
    r_ctl = SlaClipController(tail_normalization="fraction")
    g_ctl = SlaClipController(tail_clip="gamma", tail_normalization="fraction")
    assert r_ctl.target(1.0, s) == pytest.approx(0.5)
    assert g_ctl.target(1.0, s) == pytest.approx(0.3)


def test_clamps():
    for ctl in (SlaClipController(c_min=0.5, c_max=2.0), SlaClipQController(c_min=0.5, c_max=2.0)):
        assert ctl(0.5, [1.0, 0.0]) == 0.5  # wants to shrink below c_min
        assert ctl(2.0, [0.0, 0.0]) == 2.0  # wants to grow above c_max
        assert ctl(100.0, [0.5, 0.0]) == 2.0  # a C0 outside the clamp is pulled in after one step


def test_slaclip_q_equals_opacus_adaclip_update():
    from opacus.optimizers import AdaClipDPOptimizer

    model = torch.nn.Linear(3, 2)
    for frac, c in [(0.9, 1.0), (0.1, 3.0), (0.5, 0.7)]:
        ada = AdaClipDPOptimizer(
            torch.optim.SGD(model.parameters(), lr=0.1),
            noise_multiplier=1.0,
            target_unclipped_quantile=0.5,
            clipbound_learning_rate=0.2,
            max_clipbound=20.0,
            min_clipbound=0.1,
            unclipped_num_std=5.0,
            max_grad_norm=c,
            expected_batch_size=10,
        )
        ada.sample_size, ada.unclipped_num = 100, torch.tensor(frac * 100)
        ada.update_max_grad_norm()
        q = SlaClipQController(eta=0.2, gamma=0.5, c_min=0.1, c_max=20.0)
        assert q(c, [frac, 0.0]) == pytest.approx(float(ada.max_grad_norm), rel=1e-6)


def test_accepts_tensor_and_rejects_bad_indicator():
    ctl = SlaClipController()
    assert ctl(1.0, torch.tensor([0.5, 0.1])) == pytest.approx(ctl(1.0, [0.5, 0.1]))
    with pytest.raises(ValueError, match="s_hat"):
        ctl(1.0, [])
    with pytest.raises(ValueError, match="s_hat"):
        ctl(1.0, [[0.1, 0.2]])
    with pytest.raises(ValueError, match="s_hat"):
        ctl(1.0, [float("nan")])
    with pytest.raises(ValueError, match="clip"):
        ctl(0.0, [0.5])


@pytest.mark.parametrize(
    "make, word",
    [
        (lambda: SlaClipController(c_min=2.0, c_max=1.0), "c_min"),
        (lambda: SlaClipController(c_min=1.0, c_max=1.0), "c_min"),
        (lambda: SlaClipController(c_min=0.0), "c_min"),
        (lambda: SlaClipController(eta=0.0), "eta"),
        (lambda: SlaClipController(beta=1.5), "beta"),
        (lambda: SlaClipController(tail_clip="x"), "tail_clip"),
        (lambda: SlaClipController(tail_normalization="x"), "tail_normalization"),
        (lambda: SlaClipQController(gamma=-0.1), "gamma"),
        (lambda: SlaClipQController(c_min=5.0, c_max=1.0), "c_min"),
    ],
)
def test_bad_hyperparameters(make, word):
    with pytest.raises(ValueError, match=word):
        make()
    with pytest.raises(TypeError, match="eta"):
        SlaClipController(eta="0.2")


def test_control_controllers_ignore_the_indicator():
    from icml26.slaclip.baselines import ClampOnlyController, DecayToFloorController

    clamp, decay = ClampOnlyController(0.1, 20.0), DecayToFloorController(0.2, 0.1, 20.0)
    for s_hat in ([0.0, 0.0], [1.0, 1.0], [-3.0, 5.0]):
        assert clamp(0.01, s_hat) == 0.1 and clamp(100.0, s_hat) == 20.0 and clamp(3.0, s_hat) == 3.0
        assert decay(1.0, s_hat) == pytest.approx(math.exp(-0.2)) and decay(0.1, s_hat) == 0.1
    with pytest.raises(ValueError, match="c_min"):
        ClampOnlyController(2.0, 1.0)
    with pytest.raises(ValueError, match="eta"):
        DecayToFloorController(-1.0)
