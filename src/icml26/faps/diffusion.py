"""Noise schedule and DDIM sampling with the diffusers scheduler interface.

:class:`DDIMScheduler` mirrors ``diffusers.DDIMScheduler`` where the trainer and sampler touch it:
``config.num_train_timesteps``, ``alphas_cumprod``, ``add_noise(original_samples, noise, timesteps)``,
``set_timesteps(num_inference_steps)``, ``timesteps`` and ``step(model_output, timestep, sample, eta)`` returning
an object with ``prev_sample`` and ``pred_original_sample``; a diffusers scheduler can be passed instead.

Forward process (VP / DDPM): ``x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps``.  DDIM update (eta = 0 is
deterministic): ``x0_hat = (x_t - sqrt(1 - abar_t) eps_hat) / sqrt(abar_t)``,
``x_prev = sqrt(abar_prev) x0_hat + sqrt(1 - abar_prev - sigma^2) eps_hat + sigma z`` with
``sigma = eta sqrt((1 - abar_prev) / (1 - abar_t)) sqrt(1 - abar_t / abar_prev)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import Tensor, nn

__all__ = ["DDIMScheduler", "SchedulerOutput", "ddim_sample"]


@dataclass
class SchedulerOutput:
    prev_sample: Tensor
    pred_original_sample: Tensor


class DDIMScheduler:
    """DDPM noise schedule with DDIM sampling steps (diffusers-compatible subset).

    ``beta_schedule="squaredcos_cap_v2"`` is the cosine schedule ``abar(t) = cos^2(((t/T) + s)/(1 + s) pi/2)``
    (s = 0.008, betas capped at 0.999); ``"linear"`` spaces betas from ``beta_start`` to ``beta_end``.
    The last DDIM step goes to ``abar = 1`` (diffusers' ``set_alpha_to_one=True``).
    """

    def __init__(
        self,
        num_train_timesteps: int = 1000,
        beta_schedule: str = "squaredcos_cap_v2",
        beta_start: float = 1e-4,
        beta_end: float = 0.02,
    ) -> None:
        if not isinstance(num_train_timesteps, int) or num_train_timesteps < 2:
            raise ValueError(f"num_train_timesteps must be an integer >= 2, got {num_train_timesteps!r}")
        T = num_train_timesteps
        if beta_schedule == "linear":
            if not 0 < beta_start < beta_end < 1:
                raise ValueError(f"need 0 < beta_start < beta_end < 1, got {beta_start}, {beta_end}")
            betas = torch.linspace(beta_start, beta_end, T, dtype=torch.float64)
        elif beta_schedule == "squaredcos_cap_v2":
            f = [math.cos((i / T + 0.008) / 1.008 * math.pi / 2) ** 2 for i in range(T + 1)]
            betas = torch.tensor([min(1 - f[i + 1] / f[i], 0.999) for i in range(T)], dtype=torch.float64)
        else:
            raise ValueError(f"beta_schedule must be 'linear' or 'squaredcos_cap_v2', got {beta_schedule!r}")
        self.config = SimpleNamespace(num_train_timesteps=T, beta_schedule=beta_schedule)
        self.betas = betas.float()
        self.alphas_cumprod = torch.cumprod(1.0 - betas, 0).float()
        self.final_alpha_cumprod = torch.tensor(1.0)
        self.num_inference_steps: int | None = None
        self.timesteps = torch.arange(T - 1, -1, -1)

    def add_noise(self, original_samples: Tensor, noise: Tensor, timesteps: Tensor) -> Tensor:
        """``x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) noise`` with one timestep per sample."""
        a = self.alphas_cumprod.to(original_samples.device)[timesteps.long()].to(original_samples.dtype)
        a = a.reshape(-1, *([1] * (original_samples.dim() - 1)))
        return a.sqrt() * original_samples + (1 - a).sqrt() * noise

    def set_timesteps(self, num_inference_steps: int, device: torch.device | str | None = None) -> None:
        """Evenly spaced ("leading") timesteps ``(n-1) r, ..., r, 0`` with ``r = T // n``."""
        T = self.config.num_train_timesteps
        if not isinstance(num_inference_steps, int) or not 1 <= num_inference_steps <= T:
            raise ValueError(f"num_inference_steps must be an integer in [1, {T}], got {num_inference_steps!r}")
        self.num_inference_steps = num_inference_steps
        r = T // num_inference_steps
        self.timesteps = (torch.arange(num_inference_steps) * r).flip(0).to(device)

    def step(
        self,
        model_output: Tensor,
        timestep: int | Tensor,
        sample: Tensor,
        eta: float = 0.0,
        generator: torch.Generator | None = None,
        return_dict: bool = True,
    ) -> SchedulerOutput | tuple[Tensor]:
        """One DDIM step from ``timestep`` to ``timestep - T // num_inference_steps`` (eps-prediction)."""
        if self.num_inference_steps is None:
            raise ValueError("call set_timesteps(num_inference_steps) before step()")
        if eta < 0:
            raise ValueError(f"eta must be >= 0, got {eta}")
        t = int(timestep)
        prev = t - self.config.num_train_timesteps // self.num_inference_steps
        a_t = self.alphas_cumprod[t]
        a_prev = self.alphas_cumprod[prev] if prev >= 0 else self.final_alpha_cumprod
        a_t, a_prev = a_t.to(sample), a_prev.to(sample)
        x0 = (sample - (1 - a_t).sqrt() * model_output) / a_t.sqrt()
        sigma = eta * ((1 - a_prev) / (1 - a_t)).sqrt() * (1 - a_t / a_prev).sqrt()
        prev_sample = a_prev.sqrt() * x0 + (1 - a_prev - sigma**2).clamp(min=0).sqrt() * model_output
        if eta > 0:
            z = torch.randn(sample.shape, generator=generator, device=sample.device, dtype=sample.dtype)
            prev_sample = prev_sample + sigma * z
        if not return_dict:
            return (prev_sample,)
        return SchedulerOutput(prev_sample=prev_sample, pred_original_sample=x0)


@torch.no_grad()
def ddim_sample(
    model: nn.Module,
    scheduler,
    n: int,
    y: Tensor | None = None,
    steps: int = 50,
    shape: tuple[int, int, int] | None = None,
    generator: torch.Generator | None = None,
    eta: float = 0.0,
    batch_size: int = 500,
) -> Tensor:
    """Draw ``n`` samples: start from ``x_T ~ N(0, I)`` and apply ``scheduler.step`` at ``steps`` timesteps.

    ``model(x_t, t, y)`` must return ``eps_hat`` shaped like ``x_t``.  ``shape`` (C, H, W) defaults to the
    model's ``(in_ch, img_size, img_size)``.  ``y``: labels ``[n]`` or None.  Returns ``[n, C, H, W]``.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if y is not None and len(y) != n:
        raise ValueError(f"y must hold n={n} labels, got {len(y)}")
    if shape is None:
        shape = (model.in_ch, model.img_size, model.img_size)
    device = next(model.parameters()).device
    scheduler.set_timesteps(steps)
    out = []
    for lo in range(0, n, batch_size):
        m = min(batch_size, n - lo)
        x = torch.randn((m, *shape), generator=generator, device=device)
        yb = None if y is None else y[lo : lo + m].to(device)
        for t in scheduler.timesteps:
            tt = torch.full((m,), int(t), device=device, dtype=torch.long)
            eps = model(x, tt, yb)
            x = scheduler.step(eps, t, x, eta=eta, generator=generator).prev_sample
        out.append(x)
    return torch.cat(out)
