"""The slack encoding, the slack indicator and the slot-count rule (pure functions, no Opacus needed).

Notation (paper -> code): ``n_i`` -> ``norms``, ``C_t`` -> ``clip``, ``K`` -> ``num_slots``,
``lambda_t = C_t / sqrt(K)`` -> slot width, ``B`` -> ``batch_size`` (expected logical batch size).
"""

from __future__ import annotations

import math
import numbers

import torch

__all__ = ["encode_slack", "slack_indicator", "recommended_num_slots", "TABLE3_NUM_SLOTS"]

#: The slot counts the paper's Table 3 lists for noise multiplier 1 (batch size -> K).
TABLE3_NUM_SLOTS = {128: 8, 256: 10, 512: 20, 1024: 30, 2048: 50}

#: z-score of the 99% two-sided Gaussian interval used in the K rule (Eq. 14).
_Z99 = 2.576


def _positive_real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number > 0, got {type(value).__name__}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1, got {type(value).__name__}")
    if int(value) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value}")
    return int(value)


def encode_slack(norms: torch.Tensor, clip: float, num_slots: int) -> torch.Tensor:
    r"""Encode each sample's clipping slack as a ``num_slots``-vector (Eq. 6-8, "prefix" encoding).

    With slack ``a_i = max(C - n_i, 0)``, scaled length ``L_i = sqrt(K) a_i`` and slot width
    ``lambda = C / sqrt(K)``, the first ``floor(L_i / lambda)`` slots hold ``lambda``, the next holds the
    remainder, the rest are zero.  In closed form

    .. math:: v_i[k] = \lambda \cdot \mathrm{clip}\big(K (1 - n_i / C) - k,\ 0,\ 1\big),\quad k = 0..K-1.

    Since ``||v_i||^2 <= lambda * L_i = C a_i``, the extended vector ``[clip(g_i); v_i]`` has norm at most
    ``C`` (Lemma 3.2), so appending the slots costs no extra sensitivity.

    Parameters
    ----------
    norms: 1-D tensor of per-sample gradient norms ``n_i >= 0`` (any float dtype / device).
    clip: the clipping threshold ``C > 0``.
    num_slots: the number of slots ``K >= 1``.

    Returns
    -------
    Tensor of shape ``(len(norms), num_slots)``, same dtype and device as ``norms``.
    """
    if not isinstance(norms, torch.Tensor):
        raise TypeError(f"norms must be a torch.Tensor, got {type(norms).__name__}")
    if norms.dim() != 1:
        raise ValueError(f"norms must be 1-D (one norm per sample), got shape {tuple(norms.shape)}")
    if not norms.is_floating_point():
        raise TypeError(f"norms must have a floating dtype, got {norms.dtype}")
    clip = _positive_real(clip, "clip")
    k = _positive_int(num_slots, "num_slots")
    if norms.numel() and (not torch.isfinite(norms).all() or (norms < 0).any()):
        raise ValueError("norms must be finite and >= 0")
    return _encode(norms, clip, k)


def _encode(norms: torch.Tensor, clip: float, k: int) -> torch.Tensor:
    """:func:`encode_slack` without input checks (the optimizer's hot path: its norms are valid)."""
    fill = norms.mul(-k / clip).add_(k)  # = K (1 - n_i / C) = L_i / lambda, negative when clipped
    slots = torch.arange(k, device=norms.device, dtype=norms.dtype)
    return (fill[:, None] - slots).clamp_(0.0, 1.0).mul_(clip / math.sqrt(k))


def slack_indicator(noisy_slack_sum: torch.Tensor, clip: float, num_slots: int, batch_size: float) -> torch.Tensor:
    r"""The Slack Indicator ``s_hat = S_slack / (lambda * B)`` from the noised slot sum (Eq. 10-11).

    ``noisy_slack_sum`` is the last ``K`` coordinates of the joint release
    ``sum_i [clip(g_i); v_i] + N(0, sigma^2 C^2 I)``.  Without noise,
    ``s_hat[k] = (1/B) sum_i clip(K (1 - n_i/C) - k, 0, 1)``: ``s_hat[0]`` is about the share of unclipped
    samples and ``s_hat[K-1]`` the share of near-zero gradients (``n_i < C/K``).  Each coordinate carries
    Gaussian noise of std ``sigma sqrt(K) / B``.

    Only pass the *noised* sum here: the threshold update must read released values only.
    """
    if not isinstance(noisy_slack_sum, torch.Tensor):
        raise TypeError(f"noisy_slack_sum must be a torch.Tensor, got {type(noisy_slack_sum).__name__}")
    k = _positive_int(num_slots, "num_slots")
    if noisy_slack_sum.shape != (k,):
        raise ValueError(f"noisy_slack_sum must have shape ({k},) (num_slots), got {tuple(noisy_slack_sum.shape)}")
    clip = _positive_real(clip, "clip")
    batch_size = _positive_real(batch_size, "batch_size")
    return noisy_slack_sum / (clip / math.sqrt(k) * batch_size)


def recommended_num_slots(
    batch_size: int, noise_multiplier: float, *, mode: str = "formula", strict: bool = False
) -> int:
    r"""Number of slack slots ``K = floor((B / (2 z sigma))^(2/3))``, ``z = 2.576`` (Eq. 14).

    Reading: the 99% noise half-width of one slot, ``z sigma sqrt(K) / B``, stays within half the slot
    resolution ``1 / (2K)``.  ``mode="table"`` returns the paper's Table 3 values (noise multiplier 1 only,
    batch sizes 128..2048).  When the formula gives ``K < 1`` the rule has no solution: ``strict=True``
    raises, otherwise ``K = 1`` is returned (the slots are then mostly noise).
    """
    b = _positive_int(batch_size, "batch_size")
    sigma = _positive_real(noise_multiplier, "noise_multiplier")
    if mode == "table":
        if sigma != 1.0 or b not in TABLE3_NUM_SLOTS:
            raise ValueError(
                f"mode='table' covers noise_multiplier=1 and batch_size in {sorted(TABLE3_NUM_SLOTS)}; "
                f"got batch_size={b}, noise_multiplier={sigma}"
            )
        return TABLE3_NUM_SLOTS[b]
    if mode != "formula":
        raise ValueError(f"mode must be 'formula' or 'table', got {mode!r}")
    k = math.floor((b / (2.0 * _Z99 * sigma)) ** (2.0 / 3.0))
    if k < 1:
        if strict:
            raise ValueError(
                f"no K >= 1 satisfies the slot rule for batch_size={b}, noise_multiplier={sigma} "
                f"(needs batch_size >= {2 * _Z99 * sigma:.3g}); pass strict=False to use K=1"
            )
        return 1
    return k
