"""The frequency-aware gate (a stochastic policy over patches) and the FaPS trainer.

Selection with an exact budget: keep ``k = ceil(rho N)`` patches by Gumbel-top-k on the gate's logits ``l``,
which samples ``k`` patches without replacement from ``softmax(l)``.  The ordered selection ``S = (s_1..s_k)``
has Plackett-Luce log-probability ``log p(S) = sum_j [l_{s_j} - logsumexp(l over patches not yet chosen)]``,
which REINFORCE differentiates: ``L_psi = -(r - b) log p(S) - c_H H(softmax(l))``.

Option ``selection="bernoulli"``: every patch is kept independently with probability ``sigmoid(l_i)``,
conditioned on keeping at least one patch; the reward carries a budget penalty
``-lambda (|S| / N - rho)^2`` and ``log p(S) = sum_i log Bern(s_i; sigmoid(l_i)) - log(1 - prod_i (1 -
sigmoid(l_i)))``.  The number of kept patches then varies per image; a batch is padded to the largest
``|S|`` in it and the padding is masked out of attention and loss (so its cost is set by that maximum).
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
    "plackett_luce_terms",
    "plackett_luce_prefix_terms",
    "bernoulli_log_prob",
    "bernoulli_nonempty",
    "num_keep",
    "check_keep_ratio",
]


class GateDecision(NamedTuple):
    """Kept patch indices ``[B, k]`` and, for a stochastic gate, ``log p(S)`` ``[B]`` and entropy ``[B]``.

    ``mask`` (``BoolTensor[B, k]``, or None when every entry is a kept patch) marks the real entries of a
    padded ``keep_idx``; ``penalty`` (``[B]`` or None) is subtracted from the policy's reward; ``inclusion``
    (``[B, k]`` or None) is each listed patch's marginal probability of being kept (for importance weighting;
    exact for Bernoulli selection, a Monte Carlo estimate for Gumbel-top-k); ``step_log_prob`` (``[B, k]`` or
    None) holds the Plackett-Luce term ``l_{s_j} - logsumexp(l over not-yet-chosen)`` of each choice (top-k),
    for per-patch credit (``reward="patch"``).
    """

    keep_idx: Tensor
    log_prob: Tensor | None = None
    entropy: Tensor | None = None
    mask: Tensor | None = None
    penalty: Tensor | None = None
    inclusion: Tensor | None = None
    step_log_prob: Tensor | None = None  # [B, k]: the Plackett-Luce term of every choice (sums to log_prob)


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
    return plackett_luce_terms(logits, order, k).sum(-1)


def plackett_luce_terms(logits: Tensor, order: Tensor, k: int | None = None) -> Tensor:
    """Per-choice terms ``[B, k]``: ``l_{s_j} - logsumexp(l over order[:, j:])`` (their sum is ``log p(S)``)."""
    k = order.shape[1] if k is None else k
    ls = logits.gather(1, order)
    tail = torch.logcumsumexp(ls.flip(-1), dim=-1).flip(-1)  # logsumexp(ls[:, j:])
    return ls[:, :k] - tail[:, :k]


def plackett_luce_prefix_terms(logits: Tensor, idx: Tensor) -> Tensor:
    """Per-choice Plackett-Luce terms ``[B, k]`` of the ordered prefix ``idx`` without the full permutation:
    ``l_{s_j} - log(sum_i exp(l_i) - sum_{m<j} exp(l_{s_m}))`` (equal to :func:`plackett_luce_terms`)."""
    ls = logits.gather(1, idx)
    total = torch.logsumexp(logits, -1, keepdim=True)
    before = F.pad(torch.logcumsumexp(ls, -1)[:, :-1], (1, 0), value=float("-inf"))  # log sum_{m<j} exp(l_{s_m})
    rest = total + torch.log1p(-torch.exp(before - total).clamp(max=1 - 1e-6))
    return ls - rest


def gumbel_topk(logits: Tensor, k: int, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Sample ``k`` of ``N`` items without replacement from ``softmax(logits)`` (per row); return the indices
    ``[B, k]`` in selection order and their Plackett-Luce ``log p(S)`` ``[B]`` (differentiable in ``logits``)."""
    idx, terms = _gumbel_topk_terms(logits, k, generator)
    return idx, terms.sum(-1)


def _gumbel_topk_terms(logits: Tensor, k: int, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    n = logits.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must lie in [1, {n}], got {k}")
    dev = generator.device if generator is not None else logits.device
    u = torch.rand(logits.shape, generator=generator, device=dev).to(logits.device).clamp_(1e-20, 1.0 - 1e-7)
    gumbel = -torch.log(-torch.log(u))
    order = torch.argsort(logits.detach() + gumbel, dim=-1, descending=True)
    return order[:, :k], plackett_luce_terms(logits, order, k)


def bernoulli_log_prob(logits: Tensor, keep: Tensor) -> Tensor:
    """``log p(S | |S| >= 1) = sum_i [s_i log sigmoid(l_i) + (1 - s_i) log sigmoid(-l_i)] - log(1 - prod_i
    sigmoid(-l_i))`` for boolean keeps ``[B, N]`` (independent Bernoulli keeps conditioned on a non-empty set)."""
    k = keep.to(logits.dtype)
    joint = (k * F.logsigmoid(logits) + (1 - k) * F.logsigmoid(-logits)).sum(-1)
    log_empty = F.logsigmoid(-logits).sum(-1)
    return joint - torch.log(-torch.expm1(log_empty).clamp(max=-1e-30))


def bernoulli_nonempty(logits: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """Exact sample ``[B, N]`` (bool) of independent ``Bernoulli(sigmoid(l_i))`` keeps conditioned on ``|S| >= 1``.

    Draw the first kept index ``j`` with probability ``prod_{i<j} (1 - p_i) p_j / (1 - prod_i (1 - p_i))``,
    then keep every ``i > j`` independently with probability ``p_i``.
    """
    dev = generator.device if generator is not None else logits.device
    l = logits.detach()
    log_first = F.pad(torch.cumsum(F.logsigmoid(-l), -1)[:, :-1], (1, 0)) + F.logsigmoid(l)
    u = torch.rand(l.shape, generator=generator, device=dev).to(l.device).clamp(1e-20, 1 - 1e-7)
    gumbel = -torch.log(-torch.log(u))
    first = (log_first + gumbel).argmax(-1, keepdim=True)  # [B, 1]
    u = torch.rand(l.shape, generator=generator, device=dev).to(l.device)
    pos = torch.arange(l.shape[-1], device=l.device)[None]
    return (pos == first) | ((pos > first) & (u < torch.sigmoid(l)))


def _topk_inclusion(logits: Tensor, k: int, idx: Tensor, generator=None, draws: int = 32) -> Tensor:
    """Monte Carlo estimate of ``P(i in S)`` under Gumbel-top-k for the patches ``idx`` (no closed form exists):
    the share of ``draws`` extra draws that keep patch ``i``, counting the actual draw (so it is >= 1/(draws+1))."""
    dev = generator.device if generator is not None else logits.device
    u = torch.rand((draws, *logits.shape), generator=generator, device=dev).to(logits.device).clamp_(1e-20, 1 - 1e-7)
    top = (logits[None] - torch.log(-torch.log(u))).topk(k, dim=-1).indices  # [draws, B, k]
    hits = torch.zeros((draws, *logits.shape), device=logits.device).scatter_(-1, top, 1.0).sum(0)
    return (hits.gather(1, idx) + 1.0) / (draws + 1)


class FrequencyGate(nn.Module):
    """Policy ``pi_psi(keep_i | f_i, t, tau)``: an MLP scores each patch from its DCT band features.

    ``inputs="x_t"`` (default): the trainer hands the gate the NOISY input ``x_t`` (what a gate sees at sampling
    time); ``inputs="x0"``: the clean image (the v1 behaviour).  ``signed_dc=True`` (default) appends the signed
    patch mean to the band features (band energies alone are sign-blind).
    Input per patch: ``f_i`` (``n_bands + 1 (+ 1)`` dims, see :func:`~icml26.faps.frequency.patch_features`), a
    ``t_dim``-d sinusoidal embedding of the timestep ``t`` and the training progress ``tau in [0, 1]``.
    Output: logit ``l_i / temperature``.  :meth:`select` keeps ``ceil(keep_ratio N)`` patches by Gumbel-top-k
    (``selection="topk"``), or each patch independently with probability ``sigmoid(l_i)`` (``"bernoulli"``;
    at least one patch; the decision carries the budget penalty ``budget_penalty (|S| / N - keep_ratio)^2``).
    ``logit_cap=c`` soft-caps the logits, ``l -> c tanh(l / c)``, so the policy stays stochastic.
    With ``"bernoulli"`` the output bias starts at ``logit(keep_ratio)`` so the expected budget holds at init.
    """

    def __init__(
        self,
        patch_size: int = 2,
        n_bands: int = 4,
        hidden: int = 64,
        keep_ratio: float = 0.5,
        selection: str = "topk",
        t_dim: int = 32,
        temperature: float = 1.0,
        budget_penalty: float = 10.0,
        inputs: str = "x_t",
        signed_dc: bool = True,
        logit_cap: float | None = None,
    ) -> None:
        super().__init__()
        if logit_cap is not None and not logit_cap > 0:
            raise ValueError(f"logit_cap must be None or > 0, got {logit_cap}")
        self.logit_cap = None if logit_cap is None else float(logit_cap)
        if inputs not in ("x_t", "x0"):
            raise ValueError(f"inputs must be 'x_t' or 'x0', got {inputs!r}")
        self.inputs, self.signed_dc = inputs, bool(signed_dc)
        if not isinstance(patch_size, int) or patch_size < 1:
            raise ValueError(f"patch_size must be a positive integer, got {patch_size!r}")
        if not isinstance(n_bands, int) or n_bands < 1:
            raise ValueError(f"n_bands must be a positive integer, got {n_bands!r}")
        if not isinstance(hidden, int) or hidden < 1:
            raise ValueError(f"hidden must be a positive integer, got {hidden!r}")
        if selection not in ("topk", "bernoulli"):
            raise ValueError(f"selection must be 'topk' or 'bernoulli', got {selection!r}")
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if not budget_penalty >= 0:
            raise ValueError(f"budget_penalty must be >= 0, got {budget_penalty}")
        self.patch_size, self.n_bands, self.t_dim = patch_size, n_bands, t_dim
        self.keep_ratio = check_keep_ratio(keep_ratio)
        self.selection, self.temperature, self.budget_penalty = selection, float(temperature), float(budget_penalty)
        self.net = nn.Sequential(
            nn.Linear(n_bands + 1 + int(self.signed_dc) + t_dim + 1, hidden), nn.SiLU(), nn.Linear(hidden, hidden),
            nn.SiLU(), nn.Linear(hidden, 1),
        )  # fmt: skip
        nn.init.zeros_(self.net[-1].weight)  # start uniform: every patch equally likely
        nn.init.zeros_(self.net[-1].bias)
        if selection == "bernoulli" and self.keep_ratio < 1.0:
            nn.init.constant_(self.net[-1].bias, math.log(self.keep_ratio / (1.0 - self.keep_ratio)))

    def forward(self, x0: Tensor, t: Tensor, tau: float = 0.0) -> Tensor:
        """Logits ``[B, N]`` for images ``x0 [B, C, H, W]`` (noisy ``x_t`` when ``inputs="x_t"``) at timesteps
        ``t [B]`` and progress ``tau``."""
        with torch.no_grad():
            f = patch_features(x0, self.patch_size, self.n_bands, self.signed_dc)  # [B, N, n_bands + 1 (+ 1)]
        # first layer on [f_i, emb(t), tau], split by columns: the (t, tau) part is computed once per image and
        # broadcast over its patches (the same linear map as concatenating, at a fraction of the cost)
        first, nf = self.net[0], f.shape[-1]
        w = first.weight
        te = timestep_embedding(t.to(x0.device), self.t_dim)  # [B, t_dim]
        cond = te @ w[:, nf : nf + self.t_dim].T + float(tau) * w[:, -1] + first.bias  # [B, hidden]
        h = f @ w[:, :nf].T + cond[:, None]
        logits = self.net[1:](h).squeeze(-1) / self.temperature
        if self.logit_cap is not None:  # soft cap: keeps the policy stochastic (odds between patches <= e^(2 cap))
            logits = self.logit_cap * torch.tanh(logits / self.logit_cap)
        return logits

    def select(
        self,
        x0: Tensor,
        t: Tensor,
        tau: float = 0.0,
        generator: torch.Generator | None = None,
        with_inclusion: bool = False,
    ) -> GateDecision:
        """Sample the kept patches of every image (see the class docstring); ``log_prob`` keeps its graph.

        ``with_inclusion``: also return the kept patches' inclusion probabilities (a Monte Carlo estimate for
        top-k, which costs extra draws; always exact and cheap for Bernoulli)."""
        logits = self(x0, t, tau)
        n = logits.shape[1]
        if self.selection == "topk":
            k = num_keep(self.keep_ratio, n)
            idx, terms = _gumbel_topk_terms(logits, k, generator)
            probs = F.softmax(logits, -1)
            ent = -(probs * F.log_softmax(logits, -1)).sum(-1)
            incl = _topk_inclusion(logits.detach(), k, idx, generator) if with_inclusion else None
            return GateDecision(idx, terms.sum(-1), ent, inclusion=incl, step_log_prob=terms)
        keep = bernoulli_nonempty(logits, generator)
        count = keep.sum(-1)
        order = torch.argsort(keep.to(torch.int8), dim=-1, descending=True, stable=True)  # kept patches first
        k_max = int(count.max())
        mask = torch.arange(k_max, device=keep.device)[None] < count[:, None]
        p = torch.sigmoid(logits)
        ent = -(p * F.logsigmoid(logits) + (1 - p) * F.logsigmoid(-logits)).sum(-1)
        penalty = self.budget_penalty * (count.to(logits.dtype) / n - self.keep_ratio) ** 2
        idx = order[:, :k_max]
        p_empty = torch.exp(F.logsigmoid(-logits.detach()).sum(-1, keepdim=True))
        incl = (p.detach() / (1 - p_empty).clamp_min(1e-12)).gather(1, idx).clamp(max=1.0)  # P(i in S | S nonempty)
        return GateDecision(idx, bernoulli_log_prob(logits, keep), ent, mask, penalty.detach(), incl)


class FaPSTrainer:
    """Train a denoiser on the patches a gate selects; train a stochastic gate by REINFORCE.

    One :meth:`train_step`: draw ``t ~ U{0..T-1}``, ``eps ~ N(0, I)``, ``x_t = scheduler.add_noise(x0, eps, t)``;
    the gate picks patches from ``x0``'s frequency content; the denoiser sees only those tokens and is trained
    on ``L_theta = mean_{i in S} w_t ||eps_hat_i - eps_i||^2`` (AdamW; ``w_t = 1``, or with
    ``loss_weighting="min_snr"`` the Min-SNR-gamma weight ``w_t = min(SNR_t, gamma) / SNR_t``,
    ``SNR_t = abar_t / (1 - abar_t)``); its EMA copy (``ema_model``) is kept for sampling.  With
    ``importance_weighting=True`` a gate that reports inclusion probabilities ``pi_i`` is corrected for its
    preferences: the per-image loss becomes the Horvitz-Thompson estimate of the all-patch mean,
    ``(1/N) sum_{i in S} ||eps_hat_i - eps_i||^2 / max(pi_i, min_inclusion)``.  During the last
    ``full_finetune_frac`` of ``total_steps`` every patch is used (closing the train/test gap).  ``gate=None``
    or ``keep_ratio=1`` is plain full training.

    Gate rewards (for a stochastic gate, i.e. ``decision.log_prob`` set):

    * ``"signal"`` (default): per sample, the mean (unweighted) kept-patch loss -- patches that still carry
      learning signal -- normalised by running mean/std (``baseline_beta``); the advantage subtracts a running
      baseline per timestep bin (it does not depend on the action, so the gradient stays unbiased); the gate
      is updated every step with ``L_psi = -(r - b) log p(S) - entropy_coef H`` (Adam).
    * ``"progress"``: every ``progress_every`` (M) steps, the full-image loss of the current denoiser on a fixed
      probe batch (the first batch seen, with fixed ``t`` and noise) is compared with its value M steps
      earlier; the decrease ``r`` (normalised by a running mean/std over windows) is shared by all actions of
      those M steps: ``L_psi = -(r - b) sum_steps mean_batch log p(S) - entropy_coef H``, one gate update per
      window.
    * ``"patch"`` (per-patch credit; top-k gates): every kept patch ``s_j`` gets its own advantage
      ``a_j = (L_{s_j} - m_t) / s_t`` from its denoising loss ``L_{s_j}``, with ``m_t``, ``s_t^2`` a running mean
      and variance of the per-patch loss in ``t``'s timestep bin (a per-timestep baseline: the loss scale moves
      by orders of magnitude with ``t``); ``L_psi = -mean_{b,j} a_{bj} [l_{s_j} - logsumexp(l over not yet
      chosen)] - entropy_coef H``, updated every step.  Patches whose loss is above their timestep's typical
      loss are the ones the full-image objective still gains most from.  ``policy_batch=m``: the gate is
      updated on the first ``m`` images of each batch only (selection still covers the whole batch), which cuts
      the gate's backward cost on a tiny denoiser; ``policy_every=m``: one gate update every ``m`` steps.
    * a callable ``(per_patch_loss [B, k], keep_idx [B, k], t [B]) -> [B]`` used like ``"signal"``.

    A Bernoulli gate's budget penalty (``decision.penalty``) is subtracted from the normalised reward.
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
        loss_weighting: str = "none",
        min_snr_gamma: float = 5.0,
        progress_every: int = 10,
        importance_weighting: bool = False,
        min_inclusion: float = 0.1,
        generator: torch.Generator | None = None,
        gate_generator: torch.Generator | None = None,
        policy_batch: int | None = None,
        policy_every: int = 1,
    ) -> None:
        if not isinstance(policy_every, int) or policy_every < 1:
            raise ValueError(f"policy_every must be a positive integer, got {policy_every!r}")
        if policy_batch is not None and (not isinstance(policy_batch, int) or policy_batch < 1):
            raise ValueError(f"policy_batch must be None or a positive integer, got {policy_batch!r}")
        if reward != "patch" and (policy_batch is not None or policy_every != 1):
            raise ValueError(
                f"policy_batch and policy_every apply to reward='patch' only (got reward={reward!r}, "
                f"policy_batch={policy_batch!r}, policy_every={policy_every!r})"
            )
        if not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(f"total_steps must be a positive integer, got {total_steps!r}")
        if not 0.0 <= full_finetune_frac < 1.0:
            raise ValueError(f"full_finetune_frac must lie in [0, 1), got {full_finetune_frac}")
        if not 0.0 <= ema < 1.0:
            raise ValueError(f"ema must lie in [0, 1), got {ema}")
        if not 0.0 <= baseline_beta < 1.0:
            raise ValueError(f"baseline_beta must lie in [0, 1), got {baseline_beta}")
        for name, v in (("lr", lr), ("policy_lr", policy_lr), ("min_snr_gamma", min_snr_gamma)):
            if not v > 0:
                raise ValueError(f"{name} must be > 0, got {v}")
        if not (reward in ("signal", "progress", "patch") or callable(reward)):
            raise ValueError(f"reward must be 'signal', 'progress', 'patch' or a callable, got {reward!r}")
        if reward == "patch" and gate is not None and getattr(gate, "selection", "topk") != "topk":
            raise ValueError("reward='patch' needs a top-k gate (selection='topk'): per-choice Plackett-Luce credit")
        gate_p = getattr(gate, "patch_size", None)
        if gate is not None and gate_p is not None and gate_p != denoiser.patch_size:
            raise ValueError(
                f"gate.patch_size must equal the denoiser's patch_size ({denoiser.patch_size}), got {gate_p}: the "
                "gate's patches must be the denoiser's tokens"
            )
        if loss_weighting not in ("none", "min_snr"):
            raise ValueError(f"loss_weighting must be 'none' or 'min_snr', got {loss_weighting!r}")
        if not 0.0 < min_inclusion <= 1.0:
            raise ValueError(f"min_inclusion must lie in (0, 1], got {min_inclusion}")
        if not isinstance(progress_every, int) or progress_every < 1:
            raise ValueError(f"progress_every must be a positive integer, got {progress_every!r}")
        self.denoiser, self.scheduler, self.gate = denoiser, scheduler, gate
        self.total_steps, self.reward, self.full_finetune_frac = total_steps, reward, full_finetune_frac
        self.ema, self.entropy_coef, self.baseline_beta = ema, entropy_coef, baseline_beta
        self.loss_weighting, self.min_snr_gamma, self.progress_every = loss_weighting, min_snr_gamma, progress_every
        self.importance_weighting, self.min_inclusion = bool(importance_weighting), float(min_inclusion)
        self.generator = generator
        # the gate's draws can come from their own stream so that arms share the t / noise draws exactly
        self.gate_generator = generator if gate_generator is None else gate_generator
        self.policy_batch, self.policy_every = policy_batch, policy_every
        self.patch_size = denoiser.patch_size
        self.opt = torch.optim.AdamW(denoiser.parameters(), lr=lr, weight_decay=weight_decay)
        params = [] if gate is None else [p for p in gate.parameters() if p.requires_grad]
        self.policy_opt = torch.optim.Adam(params, lr=policy_lr) if params else None
        self.ema_model = copy.deepcopy(denoiser).requires_grad_(False).eval()
        self.step_ = 0
        self._r_mean, self._r_var = None, None
        self._baseline = torch.zeros(baseline_bins)
        self._baseline_seen = torch.zeros(baseline_bins, dtype=torch.bool)
        self._bin_var = torch.ones(baseline_bins)  # "patch": running variance of the per-patch loss per t bin
        self._probe: dict | None = None  # "progress" reward: fixed probe batch and the window's actions
        self._window: list[GateDecision] = []
        self._probe_loss: float | None = None

    @property
    def in_finetune(self) -> bool:
        return self.step_ >= math.floor(self.total_steps * (1.0 - self.full_finetune_frac))

    def _uses_all_patches(self) -> bool:
        return self.gate is None or self.gate.keep_ratio >= 1.0 or self.in_finetune

    def _n_patches(self, x0: Tensor) -> int:
        """Number of patches ``N`` of an image batch ``x0``."""
        return (x0.shape[-2] // self.patch_size) * (x0.shape[-1] // self.patch_size)

    def _weights(self, t: Tensor) -> Tensor:
        """Per-sample loss weight ``w_t`` (1, or Min-SNR-gamma for eps-prediction)."""
        if self.loss_weighting == "none":
            return torch.ones(t.shape, device=t.device)
        a = self.scheduler.alphas_cumprod.to(t.device)[t.long()].float()
        snr = a / (1 - a).clamp_min(1e-12)
        return snr.clamp(max=self.min_snr_gamma) / snr.clamp_min(1e-12)

    def train_step(self, x0: Tensor, y: Tensor | None = None) -> dict:
        """One denoiser update (and, for a stochastic gate, a gate update or, with ``"progress"``, one action).

        Returns ``dict(loss, policy_loss, keep_frac, reward)`` as floats (``policy_loss`` and ``reward`` are NaN
        when the gate was not updated in this step).  ``loss`` is the (weighted) training loss; ``keep_frac``
        is the mean fraction of patches kept."""
        if x0.dim() != 4:
            raise ValueError(f"x0 must have shape [B, C, H, W], got {tuple(x0.shape)}")
        b = x0.shape[0]
        T = self.scheduler.config.num_train_timesteps
        tau = min(self.step_ / self.total_steps, 1.0)
        if self.reward == "progress" and self._probe is None:
            self._set_probe(x0, y)
            self._probe_loss = self.probe_loss()  # before any update
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
            kw = {"with_inclusion": True} if self.importance_weighting else {}
            src = x_t if getattr(self.gate, "inputs", "x0") == "x_t" else x0  # what the gate reads
            sub_policy = self.policy_batch is not None and self.reward == "patch" and self.policy_opt is not None
            with torch.set_grad_enabled(not sub_policy):  # sub_policy: the graph is rebuilt on a subset below
                decision = self.gate.select(src, t, tau, generator=self.gate_generator, **kw)
            if decision.mask is None:  # a denoiser only needs keep_mask for variable budgets (Bernoulli)
                pred = self.denoiser(x_t, t, y, decision.keep_idx)
            else:
                pred = self.denoiser(x_t, t, y, decision.keep_idx, keep_mask=decision.mask)
            target = patchify(noise, self.patch_size).gather(
                1, decision.keep_idx[..., None].expand(-1, -1, pred.shape[-1])
            )
        per_patch = (pred - target).pow(2).mean(-1)  # [B, k]
        valid = torch.ones_like(per_patch) if decision is None or decision.mask is None else decision.mask.to(per_patch)
        per_sample = (per_patch * valid).sum(1) / valid.sum(1)
        train_loss = per_sample
        if self.importance_weighting and decision is not None and decision.inclusion is not None:
            n_all = self._n_patches(x0)
            train_loss = (per_patch * valid / decision.inclusion.clamp_min(self.min_inclusion)).sum(1) / n_all
        loss = (self._weights(t) * train_loss).mean()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self._update_ema()
        policy_loss = reward_mean = float("nan")
        stochastic = decision is not None and decision.log_prob is not None and self.policy_opt is not None
        full_valid = valid
        if stochastic and self.reward == "progress":
            self._window.append(decision)
        elif stochastic and self.reward == "patch" and self.step_ % self.policy_every != 0:
            pass  # reward="patch": the gate is updated every policy_every-th step only
        elif stochastic and self.reward == "patch":
            if sub_policy:  # re-score the first policy_batch images with grad (the batch order is random)
                j = slice(0, min(self.policy_batch, b))
                logits = self.gate(src[j], t[j], tau)
                ent = -(F.softmax(logits, -1) * F.log_softmax(logits, -1)).sum(-1)
                terms = plackett_luce_prefix_terms(logits, decision.keep_idx[j])
                decision = decision._replace(keep_idx=decision.keep_idx[j], entropy=ent, step_log_prob=terms)
                per_patch, t_pol = per_patch[j], t[j]
            else:
                t_pol = t
            policy_loss, reward_mean = self._patch_policy_step(per_patch.detach(), decision, t_pol)
        elif stochastic:
            if self.reward == "signal":
                raw = per_sample.detach()
            else:
                raw = self.reward(per_patch.detach(), decision.keep_idx, t).detach()
            policy_loss, reward_mean = self._policy_step(raw.detach().reshape(-1), decision, t)
        self.step_ += 1
        if self.reward == "progress" and self.policy_opt is not None and self.step_ % self.progress_every == 0:
            policy_loss, reward_mean = self._progress_step()
        n = patchify(x0[:1], self.patch_size).shape[1]
        keep_frac = float(full_valid.sum(1).mean()) / n
        return {"loss": float(loss.detach()), "policy_loss": policy_loss, "keep_frac": keep_frac, "reward": reward_mean}

    def _normalise(self, raw: Tensor) -> Tensor:
        """``(raw - m) / s`` with running mean ``m`` and variance ``s^2`` (EMA with ``baseline_beta``)."""
        beta = self.baseline_beta
        m = float(raw.mean())
        v = float(raw.var(unbiased=False)) if raw.numel() > 1 else 0.0
        if self._r_mean is None:
            self._r_mean, self._r_var = m, v
        else:
            if raw.numel() == 1:  # one reward per update ("progress"): its spread is across updates
                v = (m - self._r_mean) ** 2
            self._r_mean = beta * self._r_mean + (1 - beta) * m
            self._r_var = beta * self._r_var + (1 - beta) * v
        return (raw - self._r_mean) / math.sqrt(self._r_var + 1e-8)

    def _policy_step(self, raw: Tensor, decision: GateDecision, t: Tensor) -> tuple[float, float]:
        beta = self.baseline_beta
        r = self._normalise(raw).cpu()
        if decision.penalty is not None:
            r = r - decision.penalty.cpu()
        bins = (t.cpu() * len(self._baseline) // self.scheduler.config.num_train_timesteps).clamp(
            max=len(self._baseline) - 1
        )
        adv = r - torch.where(self._baseline_seen[bins], self._baseline[bins], torch.zeros_like(r))
        for j in bins.unique():
            sel = bins == j
            rm = float(r[sel].mean())
            self._baseline[j] = beta * self._baseline[j] + (1 - beta) * rm if self._baseline_seen[j] else rm
            self._baseline_seen[j] = True
        adv = adv.to(decision.log_prob.device)
        loss = -(adv * decision.log_prob).mean() - self.entropy_coef * decision.entropy.mean()
        self.policy_opt.zero_grad(set_to_none=True)
        loss.backward()
        self.policy_opt.step()
        return float(loss.detach()), float(raw.mean())

    def _patch_policy_step(self, per_patch: Tensor, decision: GateDecision, t: Tensor) -> tuple[float, float]:
        """Per-patch credit with a per-timestep-bin baseline (``reward="patch"``, see the class docstring)."""
        if decision.step_log_prob is None:
            raise ValueError("reward='patch' needs a gate decision with step_log_prob (a top-k FrequencyGate)")
        beta, nb = self.baseline_beta, len(self._baseline)
        loss_ = per_patch.cpu()
        bins = (t.cpu() * nb // self.scheduler.config.num_train_timesteps).clamp(max=nb - 1)
        cnt = torch.zeros(nb).index_add_(0, bins, torch.full((len(bins),), float(loss_.shape[1])))
        tot = torch.zeros(nb).index_add_(0, bins, loss_.sum(1))
        sq = torch.zeros(nb).index_add_(0, bins, loss_.pow(2).sum(1))
        present = cnt > 0
        bm = tot / cnt.clamp_min(1)
        bv = (sq / cnt.clamp_min(1) - bm.pow(2)).clamp_min(0)
        new = present & ~self._baseline_seen  # first visit of a bin: initialise from the batch
        self._baseline = torch.where(new, bm, self._baseline)
        self._bin_var = torch.where(new, torch.where(cnt > 1, bv, torch.ones_like(bv)), self._bin_var)
        self._baseline_seen = self._baseline_seen | present
        m, v = self._baseline[bins][:, None], self._bin_var[bins][:, None]
        adv = (loss_ - m) / (v + 1e-12).sqrt()
        d = bm - self._baseline
        self._baseline = torch.where(present, beta * self._baseline + (1 - beta) * bm, self._baseline)
        self._bin_var = torch.where(present, beta * self._bin_var + (1 - beta) * (bv + d * d), self._bin_var)
        adv = adv.to(decision.step_log_prob.device)
        loss = -(adv * decision.step_log_prob).mean() - self.entropy_coef * decision.entropy.mean()
        self.policy_opt.zero_grad(set_to_none=True)
        loss.backward()
        self.policy_opt.step()
        return float(loss.detach()), float(adv.mean())

    def _set_probe(self, x0: Tensor, y: Tensor | None) -> None:
        g = torch.Generator().manual_seed(1234)
        T = self.scheduler.config.num_train_timesteps
        t = torch.randint(0, T, (len(x0),), generator=g).to(x0.device)
        noise = torch.randn(x0.shape, generator=g).to(x0)
        x0, y = x0.detach().clone(), None if y is None else y.clone()
        self._probe = {"x_t": self.scheduler.add_noise(x0, noise, t), "t": t, "y": y, "noise": noise}

    @torch.no_grad()
    def probe_loss(self) -> float:
        """Full-image (weighted) loss of the current denoiser on the fixed probe batch (``reward="progress"``)."""
        if self._probe is None:
            raise ValueError("no probe batch yet: probe_loss needs reward='progress' and one train_step")
        pb = self._probe
        was = self.denoiser.training
        err = (self.denoiser.eval()(pb["x_t"], pb["t"], pb["y"]) - pb["noise"]).pow(2).flatten(1).mean(1)
        self.denoiser.train(was)
        return float((self._weights(pb["t"]) * err).mean())

    def _progress_step(self) -> tuple[float, float]:
        """End of a window of M steps: reward = probe-loss decrease, shared by the window's actions."""
        before, after = self._probe_loss, self.probe_loss()
        self._probe_loss = after
        window, self._window = self._window, []
        if not window:
            return float("nan"), before - after
        raw = torch.tensor([before - after])
        r = float(self._normalise(raw)[0])
        adv = r - (self._baseline[0] if self._baseline_seen[0] else 0.0)
        b0 = float(self._baseline[0])
        self._baseline[0] = self.baseline_beta * b0 + (1 - self.baseline_beta) * r if self._baseline_seen[0] else r
        self._baseline_seen[0] = True
        pg = sum(
            ((float(adv) - (0.0 if d.penalty is None else d.penalty.to(d.log_prob))) * d.log_prob).mean()
            for d in window
        )
        ent = sum(d.entropy.mean() for d in window) / len(window)
        loss = -pg - self.entropy_coef * ent
        self.policy_opt.zero_grad(set_to_none=True)
        loss.backward()
        self.policy_opt.step()
        return float(loss.detach()), before - after

    @torch.no_grad()
    def _update_ema(self) -> None:
        d = min(self.ema, (1 + self.step_) / (10 + self.step_))  # warm-up so short runs do not average noise
        for pe, p in zip(self.ema_model.parameters(), self.denoiser.parameters()):
            pe.lerp_(p, 1 - d)
