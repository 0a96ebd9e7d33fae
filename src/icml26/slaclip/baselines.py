"""What SlaClip is compared against, built with Opacus the way its users would.

* ``"vanilla"``: Opacus flat clipping at a fixed threshold ``C0`` (``DPOptimizer``).
* ``"adaclip"``: Opacus ``AdaClipDPOptimizer``, the quantile adaptive clipping of Andrew et al. (2021):
  a second noised count of unclipped samples (std ``B/20``), target quantile 0.5, geometric rate ``eta``;
  the gradient noise is raised to ``(sigma^-2 - (2 sigma_b)^-2)^-1/2`` so the accountant's ``sigma`` holds.
* ``"autos"``: AUTO-S automatic clipping (Bu et al., NeurIPS 2023): every per-sample gradient is
  normalised, ``g_i R / (||g_i|| + gamma)`` with ``gamma = 0.01``, and the noise std is ``sigma R``;
  Opacus has no built-in, so :class:`AutoSClipDPOptimizer` overrides ``clip_and_accumulate`` only.
* ``"slaclip"`` / ``"slaclip-q"``: :func:`~icml26.slaclip.make_private_slaclip`.

Control arms (SlaClip minus its controller, everything else the same: the same optimizer, release and slots):

* ``"clamp-only"``: :class:`ClampOnlyController`, ``C_{t+1} = clip(C_t, c_min, c_max)``, blind to the indicator;
* ``"decay"``: :class:`DecayToFloorController`, ``C_{t+1} = clip(C_t e^{-eta}, c_min, c_max)``, a schedule that
  decays to the floor whatever the indicator says;
* ``"centre"``: :class:`CentreController`, ``C_{t+1} = sqrt(c_min c_max)`` (the clamp's geometric centre, 1.41 for
  [0.1, 20]): a data-blind rule that jumps to mid-clamp after the first step (referee, issue 46).
"""

from __future__ import annotations

import math

import torch
from opacus import PrivacyEngine
from opacus.optimizers.optimizer import DPOptimizer, _check_processed_flag, _mark_as_processed
from torch import nn
from torch.optim import Optimizer
from torch.utils.data import DataLoader

from ._slack import _positive_real
from .controllers import _check_bounds
from .optimizer import make_private_slaclip

__all__ = [
    "AutoSClipDPOptimizer",
    "CentreController",
    "ClampOnlyController",
    "DecayToFloorController",
    "make_private_method",
    "METHODS",
]

METHODS = ("vanilla", "adaclip", "autos", "slaclip", "slaclip-q", "clamp-only", "decay", "centre")


class ClampOnlyController:
    """Control arm: ``C_{t+1} = clip(C_t, c_min, c_max)``; the released indicator is ignored."""

    def __init__(self, c_min: float = 0.1, c_max: float = 20.0) -> None:
        self.c_min, self.c_max = _check_bounds(c_min, c_max)

    def __call__(self, clip: float, s_hat) -> float:
        return min(max(float(clip), self.c_min), self.c_max)


class DecayToFloorController:
    """Control arm: ``C_{t+1} = clip(C_t exp(-eta), c_min, c_max)``, a geometric decay to ``c_min`` at SlaClip's own
    rate ``eta`` whatever the indicator says."""

    def __init__(self, eta: float = 0.2, c_min: float = 0.1, c_max: float = 20.0) -> None:
        self.eta = _positive_real(eta, "eta")
        self.c_min, self.c_max = _check_bounds(c_min, c_max)

    def __call__(self, clip: float, s_hat) -> float:
        return min(max(float(clip) * math.exp(-self.eta), self.c_min), self.c_max)


class CentreController:
    """Control arm: ``C_{t+1} = sqrt(c_min c_max)``, the clamp's geometric centre, whatever ``C_t`` and the indicator
    say (data-blind; it differs from vanilla DP-SGD at that fixed threshold only in its first step, taken at C0)."""

    def __init__(self, c_min: float = 0.1, c_max: float = 20.0) -> None:
        self.c_min, self.c_max = _check_bounds(c_min, c_max)

    def __call__(self, clip: float, s_hat) -> float:
        return math.sqrt(self.c_min * self.c_max)


class AutoSClipDPOptimizer(DPOptimizer):
    r"""AUTO-S automatic clipping (Bu, Wang, Zha, Karypis, NeurIPS 2023, arXiv 2206.07136).

    Replaces the clip factor ``min(1, R / n_i)`` by the normalisation ``R / (n_i + gamma)``; every
    per-sample contribution then has norm below ``R`` and the noise ``N(0, sigma^2 R^2)`` is Opacus's.
    """

    def __init__(self, optimizer: Optimizer, *, stability: float = 0.01, **kwargs) -> None:
        super().__init__(optimizer, **kwargs)
        self.stability = _positive_real(stability, "stability")

    def clip_and_accumulate(self) -> None:
        grad_samples = self.grad_samples
        if len(grad_samples[0]) == 0:
            factor = torch.zeros((0,), device=grad_samples[0].device)
        else:
            norms = torch.stack([g.reshape(len(g), -1).norm(2, dim=-1) for g in grad_samples], dim=1).norm(2, dim=1)
            factor = self.max_grad_norm / (norms + self.stability)
        for p, grad_sample in zip(self.params, grad_samples):
            _check_processed_flag(p.grad_sample)
            grad = torch.einsum("i,i...", factor.to(grad_sample.device).to(p.dtype), grad_sample.to(p.dtype))
            p.summed_grad = grad if p.summed_grad is None else p.summed_grad + grad
            _mark_as_processed(p.grad_sample)


def make_private_method(
    method: str,
    privacy_engine: PrivacyEngine,
    module: nn.Module,
    optimizer: Optimizer,
    data_loader: DataLoader,
    noise_multiplier: float,
    max_grad_norm: float,
    *,
    eta: float = 0.2,
    c_min: float = 0.1,
    c_max: float = 20.0,
    **make_private_kwargs,
) -> tuple[nn.Module, DPOptimizer, DataLoader]:
    """One entry point for every DP method compared here, each with its own defaults and the same budget."""
    if method in ("clamp-only", "decay", "centre"):
        control = {
            "clamp-only": lambda: ClampOnlyController(c_min, c_max),
            "decay": lambda: DecayToFloorController(eta, c_min, c_max),
            "centre": lambda: CentreController(c_min, c_max),
        }[method]()
        return make_private_slaclip(
            privacy_engine,
            module,
            optimizer,
            data_loader,
            noise_multiplier,
            max_grad_norm,
            controller=control,
            **make_private_kwargs,
        )
    if method in ("slaclip", "slaclip-q"):
        return make_private_slaclip(
            privacy_engine,
            module,
            optimizer,
            data_loader,
            noise_multiplier,
            max_grad_norm,
            variant=method,
            eta=eta,
            c_min=c_min,
            c_max=c_max,
            **make_private_kwargs,
        )
    common = dict(
        module=module,
        optimizer=optimizer,
        data_loader=data_loader,
        noise_multiplier=noise_multiplier,
        max_grad_norm=max_grad_norm,
        **make_private_kwargs,
    )
    if method == "vanilla":
        return privacy_engine.make_private(clipping="flat", **common)
    if method == "adaclip":
        batch = max(1, round(len(data_loader.dataset) / len(data_loader)))
        return privacy_engine.make_private(
            clipping="adaptive",
            target_unclipped_quantile=0.5,
            clipbound_learning_rate=eta,
            max_clipbound=c_max,
            min_clipbound=c_min,
            unclipped_num_std=batch / 20.0,
            **common,
        )
    if method == "autos":
        model, dp_opt, loader = privacy_engine.make_private(clipping="flat", **common)
        auto = AutoSClipDPOptimizer(
            dp_opt.original_optimizer,
            noise_multiplier=noise_multiplier,
            max_grad_norm=max_grad_norm,
            expected_batch_size=dp_opt.expected_batch_size,
            loss_reduction=dp_opt.loss_reduction,
            generator=dp_opt.generator,
            secure_mode=dp_opt.secure_mode,
        )
        auto.attach_step_hook(privacy_engine.accountant.get_optimizer_hook_fn(sample_rate=1.0 / len(loader)))
        return model, auto, loader
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")
