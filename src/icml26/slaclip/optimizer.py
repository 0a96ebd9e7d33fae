"""``SlaClipDPOptimizer``: Opacus's flat DP-SGD step plus ``K`` slack slots in the same Gaussian release.

Tested against opacus 1.5/1.6.  It uses Opacus's private helpers ``_generate_noise``,
``_check_processed_flag`` and ``_mark_as_processed`` (as Opacus's own ``AdaClipDPOptimizer`` does); the tests
pin their behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from opacus import PrivacyEngine
from opacus.optimizers.optimizer import (
    DPOptimizer,
    _check_processed_flag,
    _generate_noise,
    _mark_as_processed,
)
from torch import nn
from torch.optim import Optimizer
from torch.utils.data import DataLoader

from ._slack import _encode, _positive_real, recommended_num_slots
from .controllers import SlaClipController, SlaClipQController

__all__ = ["SlaClipDPOptimizer", "make_private_slaclip", "make_private_slaclip_with_epsilon"]

Controller = Callable[[float, torch.Tensor], float]


def _scalar(value: object, name: str) -> object:
    """A one-element tensor (as Opacus accepts for ``max_grad_norm``) as a Python float; anything else as is."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise ValueError(
                f"{name} must be a number or a one-element tensor, got a tensor of shape {tuple(value.shape)}"
            )
        return float(value.detach().cpu().reshape(()))
    return value


class SlaClipDPOptimizer(DPOptimizer):
    r"""DP-SGD with adaptive clipping from gradient-norm slacks (SlaClip).

    Implements Zou, Wang, Zhu, Li, Dong, Sassone, Wu, "SlaClip: Gradient Norm Slacks can be Indicator for
    Adaptive Clipping in DP-SGD", ICML 2026.

    Each logical step releases, with one Gaussian mechanism,

    .. math:: S = \sum_i [\,g_i \min(1, C_t/(n_i+\xi))\ ;\ v_i\,] + \mathcal N(0, \sigma^2 C_t^2 I_{d+K}),

    where ``v_i = encode_slack(n_i, C_t, K)`` has ``||[clip(g_i); v_i]|| <= C_t``.  The first ``d``
    coordinates are exactly Opacus's flat DP-SGD noisy sum; the last ``K`` give the slack indicator
    ``s_hat = S[d:] / (lambda_t B)``, and the threshold moves as ``C_{t+1} = controller(C_t, s_hat)``, a
    post-processing of released values.  Noise multiplier and sample rate are unchanged, so Opacus's
    accountant (attached by :func:`make_private_slaclip`) reports the same epsilon as vanilla DP-SGD.

    Overrides ``clip_and_accumulate`` (norms once; also sums the slack vectors over micro-batches),
    ``add_noise`` (Opacus's gradient noise, then ``K`` more draws from the same generator),
    ``zero_grad`` (drops the slack sum with the clipped sums) and ``pre_step`` (threshold update after a
    full step, like ``AdaClipDPOptimizer``).

    Attributes after each ``step()``: ``current_clip`` (the threshold the next step uses),
    ``slack_indicator`` (the released ``s_hat``, a tensor of ``K`` values), ``clip_history`` (the threshold
    each completed step used, oldest first).

    Parameters
    ----------
    optimizer: the wrapped ``torch.optim.Optimizer``.
    noise_multiplier: ``sigma > 0``.
    max_grad_norm: the initial threshold ``C_0 > 0``.
    expected_batch_size: expected logical batch size ``B`` (the slack indicator divides by it).
    num_slots: ``K``; ``None`` uses :func:`recommended_num_slots` ``(B, sigma)``.
    controller: ``(C_t, s_hat) -> C_{t+1}``; default :class:`SlaClipController` ``()``.
    loss_reduction, generator, secure_mode: as in Opacus's ``DPOptimizer``.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        *,
        noise_multiplier: float,
        max_grad_norm: float,
        expected_batch_size: int,
        num_slots: int | None = None,
        controller: Controller | None = None,
        loss_reduction: str = "mean",
        generator: torch.Generator | None = None,
        secure_mode: bool = False,
        **kwargs,
    ) -> None:
        noise_multiplier = _positive_real(noise_multiplier, "noise_multiplier")
        max_grad_norm = _positive_real(_scalar(max_grad_norm, "max_grad_norm"), "max_grad_norm")
        if expected_batch_size is None:
            raise ValueError("expected_batch_size is required: the slack indicator divides by it")
        _positive_real(expected_batch_size, "expected_batch_size")
        super().__init__(
            optimizer,
            noise_multiplier=noise_multiplier,
            max_grad_norm=max_grad_norm,
            expected_batch_size=expected_batch_size,
            loss_reduction=loss_reduction,
            generator=generator,
            secure_mode=secure_mode,
            **kwargs,
        )
        if num_slots is None:
            num_slots = recommended_num_slots(max(1, int(expected_batch_size)), noise_multiplier)
        elif isinstance(num_slots, bool) or not isinstance(num_slots, (int, np.integer)) or num_slots < 1:
            raise ValueError(f"num_slots must be an integer >= 1 or None, got {num_slots!r}")
        if controller is None:
            controller = SlaClipController()
        if not callable(controller):
            raise TypeError(f"controller must be callable (clip, s_hat) -> new clip, got {type(controller).__name__}")
        self.num_slots = int(num_slots)
        self.controller = controller
        self.slack_indicator: torch.Tensor | None = None
        self.clip_history: list[float] = []
        self._slack_sum: torch.Tensor | None = None  # raw, un-noised: never read outside this class
        self._accumulation_clip: float | None = None
        self._released = False

    @property
    def current_clip(self) -> float:
        """The threshold ``C_t`` the next step clips at."""
        return float(self.max_grad_norm)

    def clip_and_accumulate(self) -> None:
        """Clip per-sample gradients at ``C_t`` (as Opacus's flat clipping) and add their slack slots."""
        clip = float(self.max_grad_norm)
        if self._slack_sum is not None and clip != self._accumulation_clip:
            raise ValueError(
                f"max_grad_norm changed from {self._accumulation_clip} to {clip} inside gradient "
                "accumulation; the threshold may only change between logical steps"
            )
        grad_samples = self.grad_samples
        device = grad_samples[0].device
        if len(grad_samples[0]) == 0:  # empty Poisson batch
            norms = torch.zeros((0,), device=device)
        else:
            per_param = [g.reshape(len(g), -1).norm(2, dim=-1).to(device) for g in grad_samples]
            norms = torch.stack(per_param, dim=1).norm(2, dim=1)
        factor = (clip / (norms + 1e-6)).clamp(max=1.0)

        for p, grad_sample in zip(self.params, grad_samples):
            _check_processed_flag(p.grad_sample)
            grad_sample = grad_sample.to(p.dtype)
            grad = torch.einsum("i,i...", factor.to(grad_sample.device).to(p.dtype), grad_sample)
            if p.summed_grad is not None:
                p.summed_grad += grad
            else:
                p.summed_grad = grad
            _mark_as_processed(p.grad_sample)

        slack = _encode(norms.detach(), clip, self.num_slots).sum(dim=0)  # = encode_slack(...).sum(0)
        self._slack_sum = slack if self._slack_sum is None else self._slack_sum + slack
        self._accumulation_clip = clip

    def add_noise(self) -> None:
        """Noise the gradients (Opacus), then the ``K`` slots: same std ``sigma C_t``, same generator."""
        super().add_noise()
        if self._slack_sum is None:
            raise RuntimeError("add_noise called before clip_and_accumulate: no slack sum to release")
        clip = float(self.max_grad_norm)
        noise = _generate_noise(
            std=self.noise_multiplier * clip,
            reference=self._slack_sum,
            generator=self.generator,
            secure_mode=self.secure_mode,
        )
        released = self._slack_sum + noise
        self._slack_sum = None  # drop the raw slack as soon as it is released
        self._accumulation_clip = None
        batch = self.expected_batch_size * self.accumulated_iterations
        self.slack_indicator = released / (clip / math.sqrt(self.num_slots) * batch)  # = slack_indicator(...)
        self._released = True

    def state_dict(self) -> dict:
        """The wrapped optimizer's state plus SlaClip's: ``C_t``, the threshold history, the last released
        indicator and the controller's own ``state_dict()`` if it has one.  Reloading resumes at ``C_t`` (Opacus's
        ``DPOptimizer.state_dict`` alone would restart from ``C_0``)."""
        state = dict(super().state_dict())
        state["slaclip"] = {
            "max_grad_norm": float(self.max_grad_norm),
            "clip_history": list(self.clip_history),
            "slack_indicator": None if self.slack_indicator is None else self.slack_indicator.detach().clone(),
            "num_slots": self.num_slots,
            "controller": self.controller.state_dict() if hasattr(self.controller, "state_dict") else None,
        }
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Inverse of :meth:`state_dict`; a plain ``torch.optim`` state dict (no ``"slaclip"`` entry) loads only
        the wrapped optimizer's state and keeps the current threshold."""
        state_dict = dict(state_dict)
        ours = state_dict.pop("slaclip", None)
        super().load_state_dict(state_dict)
        if ours is None:
            return
        if int(ours["num_slots"]) != self.num_slots:
            raise ValueError(
                f"state_dict was saved with num_slots={ours['num_slots']}, this optimizer has {self.num_slots}"
            )
        self.max_grad_norm = _positive_real(float(ours["max_grad_norm"]), "max_grad_norm")
        self.clip_history = [float(c) for c in ours["clip_history"]]
        s_hat = ours["slack_indicator"]
        self.slack_indicator = None if s_hat is None else torch.as_tensor(s_hat).clone()
        if ours.get("controller") is not None and hasattr(self.controller, "load_state_dict"):
            self.controller.load_state_dict(ours["controller"])

    def zero_grad(self, set_to_none: bool = False) -> None:
        super().zero_grad(set_to_none)
        if not self._is_last_step_skipped:
            self._slack_sum = None
            self._accumulation_clip = None

    def pre_step(self, closure: Callable[[], float] | None = None) -> bool | None:
        clip_used = float(self.max_grad_norm)
        self._released = False
        full_step = super().pre_step(closure)
        if full_step and self._released:
            new = float(self.controller(clip_used, self.slack_indicator))
            if not (math.isfinite(new) and new > 0):
                raise ValueError(f"controller returned an invalid threshold {new}; it must be finite and > 0")
            self.clip_history.append(clip_used)
            self.max_grad_norm = new
        return full_step


def make_private_slaclip(
    privacy_engine: PrivacyEngine,
    module: nn.Module,
    optimizer: Optimizer,
    data_loader: DataLoader,
    noise_multiplier: float,
    max_grad_norm: float,
    *,
    num_slots: int | None = None,
    variant: str = "slaclip",
    eta: float = 0.2,
    beta: float = 0.5,
    gamma: float = 0.5,
    c_min: float = 0.1,
    c_max: float = 20.0,
    tail_clip: str = "r",
    tail_normalization: str = "paper",
    controller: Controller | None = None,
    **make_private_kwargs,
) -> tuple[nn.Module, SlaClipDPOptimizer, DataLoader]:
    """Like ``privacy_engine.make_private(...)`` but returns a :class:`SlaClipDPOptimizer`.

    Calls Opacus's ``make_private(clipping="flat")`` (model wrapping, Poisson data loader), swaps the
    optimizer for SlaClip's and attaches the same accountant hook with the same sample rate, so
    ``privacy_engine.get_epsilon(delta)`` is what vanilla DP-SGD would report.

    ``variant="slaclip"`` uses :class:`SlaClipController` ``(eta, beta, c_min, c_max, tail_clip,
    tail_normalization)``; ``variant="slaclip-q"`` uses :class:`SlaClipQController` ``(eta, gamma, c_min,
    c_max)``; a ``controller`` callable overrides both.  Other keyword arguments go to ``make_private``
    (``poisson_sampling``, ``noise_generator``, ``loss_reduction``, ...).  Flat clipping on one process with
    ``grad_sample_mode="hooks"`` only: distributed, per-layer and ghost clipping are not supported.
    """
    if not isinstance(privacy_engine, PrivacyEngine):
        raise TypeError(f"privacy_engine must be an opacus PrivacyEngine, got {type(privacy_engine).__name__}")
    noise_multiplier = _positive_real(noise_multiplier, "noise_multiplier")
    max_grad_norm = _positive_real(_scalar(max_grad_norm, "max_grad_norm"), "max_grad_norm")
    if controller is None:
        if variant == "slaclip":
            controller = SlaClipController(
                eta, beta, c_min, c_max, tail_clip=tail_clip, tail_normalization=tail_normalization
            )
        elif variant == "slaclip-q":
            controller = SlaClipQController(eta, gamma, c_min, c_max)
        else:
            raise ValueError(f"variant must be 'slaclip' or 'slaclip-q', got {variant!r}")
    for key, allowed in (("clipping", "flat"), ("grad_sample_mode", "hooks")):
        if make_private_kwargs.get(key, allowed) != allowed:
            raise ValueError(f"{key} must be {allowed!r} for SlaClip, got {make_private_kwargs[key]!r}")
    make_private_kwargs.pop("clipping", None)
    model, dp_optimizer, loader = privacy_engine.make_private(
        module=module,
        optimizer=optimizer,
        data_loader=data_loader,
        noise_multiplier=noise_multiplier,
        max_grad_norm=max_grad_norm,
        clipping="flat",
        **make_private_kwargs,
    )
    if type(dp_optimizer) is not DPOptimizer:
        raise ValueError(
            f"SlaClip supports single-process flat clipping only; make_private built {type(dp_optimizer).__name__}"
        )
    sample_rate = 1.0 / len(loader)
    slaclip = SlaClipDPOptimizer(
        dp_optimizer.original_optimizer,
        noise_multiplier=noise_multiplier,
        max_grad_norm=max_grad_norm,
        expected_batch_size=dp_optimizer.expected_batch_size,
        num_slots=num_slots,
        controller=controller,
        loss_reduction=dp_optimizer.loss_reduction,
        generator=dp_optimizer.generator,
        secure_mode=dp_optimizer.secure_mode,
    )
    slaclip.attach_step_hook(privacy_engine.accountant.get_optimizer_hook_fn(sample_rate=sample_rate))
    return model, slaclip, loader


def make_private_slaclip_with_epsilon(
    privacy_engine: PrivacyEngine,
    module: nn.Module,
    optimizer: Optimizer,
    data_loader: DataLoader,
    target_epsilon: float,
    target_delta: float,
    epochs: int,
    max_grad_norm: float,
    **kwargs,
) -> tuple[nn.Module, SlaClipDPOptimizer, DataLoader]:
    """Like ``privacy_engine.make_private_with_epsilon(...)``: solve for ``sigma`` with Opacus's own
    ``get_noise_multiplier`` (the engine's accountant, sample rate ``1 / len(data_loader)``, ``epochs``), then
    :func:`make_private_slaclip`.  SlaClip's slots ride in the same Gaussian release, so the solved ``sigma``
    reaches ``target_epsilon`` exactly as it would for vanilla DP-SGD.  ``kwargs`` go to
    :func:`make_private_slaclip` (``variant``, ``num_slots``, controller settings, ``make_private`` options);
    ``epsilon_tolerance`` goes to ``get_noise_multiplier``.
    """
    from opacus.accountants.utils import get_noise_multiplier

    if not isinstance(privacy_engine, PrivacyEngine):
        raise TypeError(f"privacy_engine must be an opacus PrivacyEngine, got {type(privacy_engine).__name__}")
    target_epsilon = _positive_real(target_epsilon, "target_epsilon")
    target_delta = _positive_real(target_delta, "target_delta")
    if target_delta >= 1:
        raise ValueError(f"target_delta must lie in (0, 1), got {target_delta}")
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 1:
        raise ValueError(f"epochs must be an integer >= 1, got {epochs!r}")
    extra = {"epsilon_tolerance": kwargs.pop("epsilon_tolerance")} if "epsilon_tolerance" in kwargs else {}
    sigma = get_noise_multiplier(
        target_epsilon=target_epsilon,
        target_delta=target_delta,
        sample_rate=1.0 / len(data_loader),
        epochs=int(epochs),
        accountant=privacy_engine.accountant.mechanism(),
        **extra,
    )
    return make_private_slaclip(privacy_engine, module, optimizer, data_loader, sigma, max_grad_norm, **kwargs)
