"""The frequency-aware gate (a stochastic policy over patches) and the FaPS trainer.

Selection with an exact budget: keep ``k = ceil(rho N)`` patches by Gumbel-top-k on the gate's logits ``l``,
which samples ``k`` patches without replacement from ``softmax(l)``.  The ordered selection ``S = (s_1..s_k)``
has Plackett-Luce log-probability ``log p(S) = sum_j [l_{s_j} - logsumexp(l over patches not yet chosen)]``,
which REINFORCE differentiates: ``L_psi = -(r - b) log p(S) - c_H H(softmax(l))``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .frequency import patch_features, patchify
from .model import timestep_embedding

__all__ = [
    "FrequencyGate",
    "FaPSTrainer",
    "GateDecision",
    "gumbel_topk",
    "plackett_luce_log_prob",
    "num_keep",
    "check_keep_ratio",
]


class GateDecision(NamedTuple):
    """Kept patch indices ``[B, k]`` (selection order) and, for a stochastic gate, ``log p(S)`` and entropy."""

    keep_idx: Tensor
    log_prob: Tensor | None = None
    entropy: Tensor | None = None


def check_keep_ratio(keep_ratio: float) -> float:
    if isinstance(keep_ratio, bool) or not isinstance(keep_ratio, (int, float)):
        raise TypeError(f"keep_ratio must be a float in (0, 1], got {type(keep_ratio).__name__}")
    if not 0.0 < float(keep_ratio) <= 1.0 or math.isnan(keep_ratio):
        raise ValueError(f"keep_ratio must lie in (0, 1], got {keep_ratio}")
    return float(keep_ratio)


def num_keep(keep_ratio: float, n_patches: int) -> int:
    """Exact budget ``k = ceil(rho N)`` (at least 1)."""
    return max(1, math.ceil(check_keep_ratio(keep_ratio) * n_patches - 1e-9))


def plackett_luce_log_prob(logits: Tensor, order: Tensor, k: int | None = None) -> Tensor:
    """``log p`` of choosing ``order[:, :k]`` in that order without replacement from ``softmax(logits)``.

    ``order`` must be a full permutation ``[B, N]`` (the chosen items first); then the items not yet chosen
    before position ``j`` are exactly ``order[:, j:]`` and the denominators are a reversed ``logcumsumexp``.
    """
    k = order.shape[1] if k is None else k
    ls = logits.gather(1, order)
    tail = torch.logcumsumexp(ls.flip(-1), dim=-1).flip(-1)  # logsumexp(ls[:, j:])
    return (ls[:, :k] - tail[:, :k]).sum(-1)


def gumbel_topk(logits: Tensor, k: int, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Sample ``k`` of ``N`` items without replacement from ``softmax(logits)`` (per row); return the indices
    ``[B, k]`` in selection order and their Plackett-Luce ``log p(S)`` ``[B]`` (differentiable in ``logits``)."""
    n = logits.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must lie in [1, {n}], got {k}")
    dev = generator.device if generator is not None else logits.device
    u = torch.rand(logits.shape, generator=generator, device=dev).to(logits.device).clamp_(1e-20, 1.0 - 1e-7)
    gumbel = -torch.log(-torch.log(u))
    order = torch.argsort(logits.detach() + gumbel, dim=-1, descending=True)
    return order[:, :k], plackett_luce_log_prob(logits, order, k)


class FrequencyGate(nn.Module):
    """Policy ``pi_psi(keep_i | f_i, t, tau)``: an MLP scores each patch from its DCT band features.

    Input per patch: ``f_i`` (``n_bands + 1`` dims, see :func:`~icml26.faps.frequency.patch_features`), a
    ``t_dim``-d sinusoidal embedding of the timestep ``t`` and the training progress ``tau in [0, 1]``.
    Output: logit ``l_i``; :meth:`select` keeps ``ceil(keep_ratio N)`` patches by Gumbel-top-k.
    """

    def __init__(
        self,
        patch_size: int = 2,
        n_bands: int = 4,
        hidden: int = 64,
        keep_ratio: float = 0.5,
        selection: str = "topk",
        t_dim: int = 32,
    ) -> None:
        super().__init__()
        if not isinstance(patch_size, int) or patch_size < 1:
            raise ValueError(f"patch_size must be a positive integer, got {patch_size!r}")
        if not isinstance(n_bands, int) or n_bands < 1:
            raise ValueError(f"n_bands must be a positive integer, got {n_bands!r}")
        if not isinstance(hidden, int) or hidden < 1:
            raise ValueError(f"hidden must be a positive integer, got {hidden!r}")
        if selection != "topk":
            msg = "selection must be 'topk' (exact budget; Bernoulli selection is not implemented)"
            raise ValueError(f"{msg}, got {selection!r}")
        self.patch_size, self.n_bands, self.t_dim = patch_size, n_bands, t_dim
        self.keep_ratio = check_keep_ratio(keep_ratio)
        self.selection = selection
        self.net = nn.Sequential(
            nn.Linear(n_bands + 1 + t_dim + 1, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 1),
        )  # fmt: skip
        nn.init.zeros_(self.net[-1].weight)  # start uniform: every patch equally likely
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, x0: Tensor, t: Tensor, tau: float = 0.0) -> Tensor:
        """Logits ``[B, N]`` for clean images ``x0 [B, C, H, W]`` at timesteps ``t [B]`` and progress ``tau``."""
        with torch.no_grad():
            f = patch_features(x0, self.patch_size, self.n_bands)  # [B, N, n_bands + 1]
        b, n, _ = f.shape
        te = timestep_embedding(t.to(x0.device), self.t_dim)[:, None].expand(b, n, -1)
        tau_col = torch.full((b, n, 1), float(tau), device=x0.device)
        return self.net(torch.cat([f, te, tau_col], dim=-1)).squeeze(-1)

    def select(self, x0: Tensor, t: Tensor, tau: float = 0.0, generator: torch.Generator | None = None) -> GateDecision:
        logits = self(x0, t, tau)
        idx, logp = gumbel_topk(logits, num_keep(self.keep_ratio, logits.shape[1]), generator)
        ent = -(F.softmax(logits, -1) * F.log_softmax(logits, -1)).sum(-1)
        return GateDecision(idx, logp, ent)


class FaPSTrainer:
    """Train a denoiser on the patches a gate selects; train a stochastic gate by REINFORCE.

    One :meth:`train_step`: draw ``t ~ U{0..T-1}``, ``eps ~ N(0, I)``, ``x_t = scheduler.add_noise(x0, eps, t)``;
    the gate picks ``k`` patches from ``x0``'s frequency content; the denoiser sees only those tokens and is
    trained on ``L_theta = mean_{i in S} ||eps_hat_i - eps_i||^2`` (AdamW); its EMA copy (``ema_model``) is kept
    for sampling.  For a stochastic gate (``decision.log_prob`` set) the reward per sample is, by default
    (``reward="signal"``), the mean kept-patch loss (patches that still carry learning signal), normalised by
    running mean/std; the advantage subtracts a running baseline per timestep bin (valid: it does not depend
    on the action), and ``L_psi = -(r - b) log p(S) - entropy_coef H`` is minimised with Adam.  During the
    last ``full_finetune_frac`` of ``total_steps`` every patch is used (closing the train/test gap).
    ``gate=None`` or ``keep_ratio=1`` is plain full training.

    ``reward`` may also be a callable ``(per_patch_loss [B, k], keep_idx [B, k], t [B]) -> [B]``.
    """

    def __init__(
        self,
        denoiser: nn.Module,
        scheduler,
        gate: nn.Module | None,
        *,
        total_steps: int,
        reward: str | Callable[[Tensor, Tensor, Tensor], Tensor] = "signal",
        full_finetune_frac: float = 0.1,
        lr: float = 3e-4,
        policy_lr: float = 1e-3,
        ema: float = 0.999,
        weight_decay: float = 0.0,
        entropy_coef: float = 1e-3,
        baseline_beta: float = 0.9,
        baseline_bins: int = 10,
        generator: torch.Generator | None = None,
    ) -> None:
        if not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(f"total_steps must be a positive integer, got {total_steps!r}")
        if not 0.0 <= full_finetune_frac < 1.0:
            raise ValueError(f"full_finetune_frac must lie in [0, 1), got {full_finetune_frac}")
        if not 0.0 <= ema < 1.0:
            raise ValueError(f"ema must lie in [0, 1), got {ema}")
        if not 0.0 <= baseline_beta < 1.0:
            raise ValueError(f"baseline_beta must lie in [0, 1), got {baseline_beta}")
        for name, v in (("lr", lr), ("policy_lr", policy_lr)):
            if not v > 0:
                raise ValueError(f"{name} must be > 0, got {v}")
        if not (reward == "signal" or callable(reward)):
            raise ValueError(f"reward must be 'signal' or a callable, got {reward!r}")
        self.denoiser, self.scheduler, self.gate = denoiser, scheduler, gate
        self.total_steps, self.reward, self.full_finetune_frac = total_steps, reward, full_finetune_frac
        self.ema, self.entropy_coef, self.baseline_beta = ema, entropy_coef, baseline_beta
        self.generator = generator
        self.patch_size = denoiser.patch_size
        self.opt = torch.optim.AdamW(denoiser.parameters(), lr=lr, weight_decay=weight_decay)
        params = [] if gate is None else [p for p in gate.parameters() if p.requires_grad]
        self.policy_opt = torch.optim.Adam(params, lr=policy_lr) if params else None
        self.ema_model = copy.deepcopy(denoiser).requires_grad_(False).eval()
        self.step_ = 0
        self._r_mean, self._r_var = None, None
        self._baseline = torch.zeros(baseline_bins)
        self._baseline_seen = torch.zeros(baseline_bins, dtype=torch.bool)

    @property
    def in_finetune(self) -> bool:
        return self.step_ >= math.floor(self.total_steps * (1.0 - self.full_finetune_frac))

    def _uses_all_patches(self) -> bool:
        return self.gate is None or self.gate.keep_ratio >= 1.0 or self.in_finetune

    def train_step(self, x0: Tensor, y: Tensor | None = None) -> dict:
        """One denoiser update (and one gate update for a stochastic gate).

        Returns ``dict(loss, policy_loss, keep_frac, reward)`` as floats (``policy_loss`` and ``reward`` are NaN
        when the gate was not updated)."""
        if x0.dim() != 4:
            raise ValueError(f"x0 must have shape [B, C, H, W], got {tuple(x0.shape)}")
        b = x0.shape[0]
        T = self.scheduler.config.num_train_timesteps
        tau = min(self.step_ / self.total_steps, 1.0)
        dev = self.generator.device if self.generator is not None else x0.device  # draw where the generator lives
        t = torch.randint(0, T, (b,), generator=self.generator, device=dev).to(x0.device)
        noise = torch.randn(x0.shape, generator=self.generator, device=dev).to(x0)
        x_t = self.scheduler.add_noise(x0, noise, t)
        decision = None
        self.denoiser.train()
        if self._uses_all_patches():
            pred = patchify(self.denoiser(x_t, t, y), self.patch_size)
            target = patchify(noise, self.patch_size)
        else:
            decision = self.gate.select(x0, t, tau, generator=self.generator)
            pred = self.denoiser(x_t, t, y, decision.keep_idx)
            target = patchify(noise, self.patch_size).gather(
                1, decision.keep_idx[..., None].expand(-1, -1, pred.shape[-1])
            )
        per_patch = (pred - target).pow(2).mean(-1)  # [B, k]
        loss = per_patch.mean()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self._update_ema()
        policy_loss = reward_mean = float("nan")
        if decision is not None and decision.log_prob is not None and self.policy_opt is not None:
            policy_loss, reward_mean = self._policy_step(per_patch.detach(), decision, t)
        self.step_ += 1
        keep_frac = per_patch.shape[1] / patchify(x0[:1], self.patch_size).shape[1]
        return {"loss": float(loss.detach()), "policy_loss": policy_loss, "keep_frac": keep_frac, "reward": reward_mean}

    def _policy_step(self, per_patch: Tensor, decision: GateDecision, t: Tensor) -> tuple[float, float]:
        if self.reward == "signal":
            raw = per_patch.mean(1)
        else:
            raw = self.reward(per_patch, decision.keep_idx, t).detach().reshape(-1)
        beta = self.baseline_beta
        m, v = float(raw.mean()), float(raw.var(unbiased=False)) if raw.numel() > 1 else 0.0
        if self._r_mean is None:
            self._r_mean, self._r_var = m, v
        else:
            self._r_mean = beta * self._r_mean + (1 - beta) * m
            self._r_var = beta * self._r_var + (1 - beta) * v
        r = (raw - self._r_mean) / math.sqrt(self._r_var + 1e-8)
        bins = (t.cpu() * len(self._baseline) // self.scheduler.config.num_train_timesteps).clamp(
            max=len(self._baseline) - 1
        )
        adv = r.cpu() - torch.where(self._baseline_seen[bins], self._baseline[bins], torch.zeros_like(r.cpu()))
        for j in bins.unique():
            sel = bins == j
            rm = float(r.cpu()[sel].mean())
            self._baseline[j] = beta * self._baseline[j] + (1 - beta) * rm if self._baseline_seen[j] else rm
            self._baseline_seen[j] = True
        adv = adv.to(decision.log_prob.device)
        loss = -(adv * decision.log_prob).mean() - self.entropy_coef * decision.entropy.mean()
        self.policy_opt.zero_grad(set_to_none=True)
        loss.backward()
        self.policy_opt.step()
        return float(loss.detach()), float(raw.mean())

    @torch.no_grad()
    def _update_ema(self) -> None:
        d = min(self.ema, (1 + self.step_) / (10 + self.step_))  # warm-up so short runs do not average noise
        for pe, p in zip(self.ema_model.parameters(), self.denoiser.parameters()):
            pe.lerp_(p, 1 - d)
