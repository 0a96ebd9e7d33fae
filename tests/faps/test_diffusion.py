import pytest
import torch
from torch import nn

from icml26.faps import DDIMScheduler, ddim_sample


def test_add_noise_with_abar_one_returns_x0_and_keeps_unit_variance():
    s = DDIMScheduler(1000)
    x0 = torch.randn(4, 1, 3, 3)
    noise = torch.randn_like(x0)
    s.alphas_cumprod = torch.ones(1000)
    assert torch.equal(s.add_noise(x0, noise, torch.tensor([0, 10, 500, 999])), x0)
    s = DDIMScheduler(1000, beta_schedule="linear")
    g = torch.Generator().manual_seed(0)
    x0, noise = torch.randn(20000, 1, 1, 1, generator=g), torch.randn(20000, 1, 1, 1, generator=g)
    xt = s.add_noise(x0, noise, torch.full((20000,), 300))
    assert xt.var().item() == pytest.approx(1.0, abs=0.05)  # variance preserving


@pytest.mark.parametrize("schedule", ["squaredcos_cap_v2", "linear"])
def test_schedule_is_monotone_and_ends_near_pure_noise(schedule):
    a = DDIMScheduler(1000, beta_schedule=schedule).alphas_cumprod
    assert torch.all(a[1:] < a[:-1]) and a[0] > 0.99 and a[-1] < 1e-3


class _GaussianOracle(nn.Module):
    """Exact eps-prediction for data x0 ~ N(m, s^2) i.i.d. per pixel: E[eps | x_t]."""

    def __init__(self, sched, m: float, s: float) -> None:
        super().__init__()
        self.dummy = nn.Parameter(torch.zeros(()))
        self.a, self.m, self.s = sched.alphas_cumprod, m, s
        self.in_ch, self.img_size = 1, 2

    def forward(self, x, t, y=None):
        a = self.a[t].reshape(-1, 1, 1, 1)
        return (1 - a).sqrt() * (x - a.sqrt() * self.m) / (a * self.s**2 + 1 - a)


def test_ddim_with_perfect_eps_oracle_reproduces_gaussian_mean_and_variance():
    sched = DDIMScheduler(1000)
    oracle = _GaussianOracle(sched, m=0.7, s=0.3)
    x = ddim_sample(oracle, sched, 20000, steps=50, generator=torch.Generator().manual_seed(0), batch_size=20000)
    assert x.shape == (20000, 1, 2, 2)
    assert x.mean().item() == pytest.approx(0.7, abs=0.02)
    assert x.std().item() == pytest.approx(0.3, rel=0.05)


def test_step_and_set_timesteps():
    s = DDIMScheduler(1000)
    s.set_timesteps(50)
    assert s.timesteps.tolist()[:2] == [980, 960] and s.timesteps[-1] == 0
    x = torch.randn(2, 1, 2, 2)
    out = s.step(torch.zeros_like(x), 0, x)
    assert torch.allclose(out.prev_sample, x / s.alphas_cumprod[0].sqrt())  # last step lands on x0_hat
    with pytest.raises(ValueError, match="num_inference_steps"):
        s.set_timesteps(0)
    with pytest.raises(ValueError, match="beta_schedule"):
        DDIMScheduler(1000, beta_schedule="cubic")
    with pytest.raises(ValueError, match="num_train_timesteps"):
        DDIMScheduler(1)


def test_matches_diffusers_ddim_scheduler():
    diffusers = pytest.importorskip("diffusers")
    ref = diffusers.DDIMScheduler(num_train_timesteps=1000, beta_schedule="squaredcos_cap_v2", clip_sample=False,
                                  set_alpha_to_one=True, steps_offset=0)  # fmt: skip
    ours = DDIMScheduler(1000)
    assert torch.allclose(ref.alphas_cumprod.float(), ours.alphas_cumprod, atol=1e-5)
    x0, noise, t = torch.randn(3, 1, 4, 4), torch.randn(3, 1, 4, 4), torch.tensor([1, 400, 999])
    assert torch.allclose(ref.add_noise(x0, noise, t), ours.add_noise(x0, noise, t), atol=1e-5)
    ref.set_timesteps(20)
    ours.set_timesteps(20)
    assert ref.timesteps.tolist() == ours.timesteps.tolist()
    eps = torch.randn_like(x0)
    assert torch.allclose(ref.step(eps, 500, x0).prev_sample, ours.step(eps, 500, x0).prev_sample, atol=1e-5)
