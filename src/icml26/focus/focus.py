"""FOCUS's pure pieces: importance, budget, selection with structural rules, and the delayed-cache update.

All functions work on one sequence and are testable without a model.  Notation: ``M`` is the list of masked
positions of the current block that are in this step's processing set, in position order.
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = [
    "focus_importance",
    "focus_budget",
    "focus_select",
    "mark_cached",
    "threshold_count",
    "apply_rules",
    "importance_batched",
    "nearest_decoded_distance",
]


def focus_importance(
    q: torch.Tensor,
    k: torch.Tensor,
    masked_idx: torch.Tensor,
    num_heads: int,
    num_kv_heads: int,
    scale: float,
    pool: int = 3,
) -> torch.Tensor:
    """Attention importance of each masked token among the masked tokens.

    ``q`` is (T, num_heads, d) and ``k`` is (T, num_kv_heads, d) for the T processed tokens; ``masked_idx``
    (|M|,) indexes the masked ones.  With head ``h`` reading kv head ``h // (num_heads / num_kv_heads)``::

        S^h_ij = scale * q_i^h . k_j^h                       (i, j in M)
        P^h_ij = softmax_j( max_{|j' - j| <= pool // 2} S^h_ij' )   (max-pool along keys, -inf padding)
        I_j    = sum_h sum_i P^h_ij

    Returns ``I`` (|M|,), float32.  FOCUS uses ``I^(1) - I^(0)`` (layer 1 minus layer 0).
    """
    if q.dim() != 3 or k.dim() != 3:
        raise ValueError(f"q and k must be (T, heads, d), got shapes {tuple(q.shape)} and {tuple(k.shape)}")
    if num_heads < 1 or num_kv_heads < 1 or num_heads % num_kv_heads:
        raise ValueError(f"num_heads must be a positive multiple of num_kv_heads, got {num_heads}, {num_kv_heads}")
    if q.shape[1] != num_heads or k.shape[1] != num_kv_heads:
        raise ValueError(f"q has {q.shape[1]} heads and k {k.shape[1]}; expected {num_heads} and {num_kv_heads}")
    if pool < 1 or pool % 2 == 0:
        raise ValueError(f"pool must be an odd integer >= 1, got {pool}")
    masked_idx = torch.as_tensor(masked_idx, dtype=torch.long)
    if masked_idx.numel() == 0:
        return torch.zeros(0)
    return importance_batched(
        q[masked_idx].transpose(0, 1)[None], k[masked_idx].transpose(0, 1)[None], None, scale, pool
    )[0]


def importance_batched(
    q: torch.Tensor, k: torch.Tensor, valid: torch.Tensor | None, scale: float, pool: int = 3
) -> torch.Tensor:
    """:func:`focus_importance` for a batch of already-compacted masked tokens.

    ``q`` (A, H, M, d), ``k`` (A, Hkv, M, d), ``valid`` (A, M) marks the real tokens of each row (the rest is
    padding at the end; ``None``: all real).  Returns ``I`` (A, M), 0 on padding.
    """
    rep = q.shape[1] // k.shape[1]
    k = k.float().repeat_interleave(rep, dim=1)
    s = scale * q.float() @ k.transpose(-1, -2)  # (A, H, M, M)
    if valid is not None:
        s = s.masked_fill(~valid[:, None, None, :], -torch.inf)
    if pool > 1:
        A, H, M, _ = s.shape
        s = torch.nn.functional.max_pool1d(s.reshape(A * H, M, M), pool, stride=1, padding=pool // 2).view(A, H, M, M)
        if valid is not None:  # pooling spreads real scores into padding columns: mask them again
            s = s.masked_fill(~valid[:, None, None, :], -torch.inf)
    p = s.softmax(dim=-1)
    if valid is not None:
        p = torch.nan_to_num(p) * valid[:, None, :, None]  # sum over real queries only
    return p.sum(dim=(1, 2))


def focus_budget(num_masked: int, avg_tokens: float, alpha: float) -> int:
    """Token budget ``K = min(|M|, max(1, ceil(alpha * max(avg, 1))))``.

    ``avg_tokens`` is the running mean of tokens decoded per step in the current block (1 before the first
    step); ``alpha > 0`` (``math.inf`` keeps every masked token).
    """
    if isinstance(num_masked, bool) or not isinstance(num_masked, int) or num_masked < 0:
        raise ValueError(f"num_masked must be an integer >= 0, got {num_masked!r}")
    if not (isinstance(avg_tokens, (int, float)) and avg_tokens >= 0 and not math.isnan(avg_tokens)):
        raise ValueError(f"avg_tokens must be a number >= 0, got {avg_tokens!r}")
    _check_alpha(alpha)
    if num_masked == 0:
        return 0
    if math.isinf(alpha):
        return num_masked
    return min(num_masked, max(1, math.ceil(alpha * max(float(avg_tokens), 1.0))))


def _check_alpha(alpha: float) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
        raise ValueError(f"alpha must be a number > 0 (math.inf disables eviction), got {alpha!r}")


def threshold_count(delta, target: int) -> int:
    """How many tokens the top-``target`` rule keeps: ``target``, unless ``#{delta >= mean + std}`` (population
    std) is at least ``target``, in which case that count (it can exceed ``target``)."""
    delta = np.asarray(delta, dtype=np.float64)
    n = delta.size
    if target >= n:
        return n
    n_sigma = int((delta >= delta.mean() + delta.std()).sum())
    return n_sigma if n_sigma >= target else target


def _top(scores, n: int) -> np.ndarray:
    """Indices (sorted) of the ``n`` largest scores; ties go to the leftmost (stable sort)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return np.sort(order[:n])


def apply_rules(kept, masked_positions, block_progress: int) -> np.ndarray:
    """FOCUS's structural rules on a boolean ``kept`` over ``masked_positions`` (sorted block positions):

    (a) predecessor: if masked ``p+1`` is kept and masked ``p`` is not, keep ``p`` (one pass, from the
        original keep set);
    (b) if nothing is kept, keep all;
    (c) placeholder: keep every masked position left of the rightmost kept one that is ``> block_progress``
        (never yet run past layer 1, so it has no deep keys/values).

    Returns the new boolean keep mask (numpy).
    """
    pos = np.asarray(masked_positions, dtype=np.int64)
    kept = np.array(kept, dtype=bool)
    if pos.size == 0:
        return kept
    nxt = np.zeros_like(kept)
    nxt[:-1] = kept[1:] & (pos[1:] == pos[:-1] + 1)
    kept |= nxt
    if not kept.any():
        kept[:] = True
    rightmost = pos[kept].max()
    kept |= (pos < rightmost) & (pos > block_progress)
    return kept


def focus_select(delta, masked_positions, target: int, block_progress: int) -> torch.Tensor:
    """Masked block positions FOCUS keeps this step (sorted, a LongTensor).

    Top-``target`` by ``delta`` (ties: leftmost first), or the ``delta >= mean + std`` set when it holds at
    least ``target`` tokens (:func:`threshold_count`), then :func:`apply_rules`.
    """
    pos = np.asarray(torch.as_tensor(masked_positions).cpu(), dtype=np.int64)
    delta = np.asarray(torch.as_tensor(delta).cpu(), dtype=np.float64)
    if delta.shape != pos.shape or pos.ndim != 1:
        raise ValueError(f"delta and masked_positions must be 1-d of equal length, got {delta.shape}, {pos.shape}")
    if pos.size > 1 and not (pos[1:] > pos[:-1]).all():
        raise ValueError("masked_positions must be strictly increasing")
    if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or target < 1:
        raise ValueError(f"target must be an integer >= 1, got {target!r}")
    if pos.size == 0:
        return torch.zeros(0, dtype=torch.long)
    kept = np.zeros(pos.size, dtype=bool)
    kept[_top(delta, threshold_count(delta, int(target)))] = True
    return torch.from_numpy(pos[apply_rules(kept, pos, block_progress)])


def mark_cached(uncached: torch.Tensor, block_tokens: torch.Tensor, mask_id: int) -> torch.Tensor:
    """Neighbour-aware delayed cache: the new ``uncached`` flags of one block.

    Position ``i`` is frozen (its keys/values kept from now on) once token ``i`` and token ``i+1`` are both
    decoded (not ``mask_id``); the last position counts its right neighbour as decoded.  Call it after a step's
    forward pass with the tokens that pass *read*, so a freshly unmasked token is processed once more with its
    real value before it is frozen.
    """
    uncached = torch.as_tensor(uncached, dtype=torch.bool)
    block_tokens = torch.as_tensor(block_tokens)
    if uncached.shape != block_tokens.shape:
        raise ValueError(
            f"uncached and block_tokens must have the same shape, got {uncached.shape}, {block_tokens.shape}"
        )
    done = block_tokens != mask_id
    right = torch.ones_like(done)
    right[..., :-1] = done[..., 1:]
    return uncached & ~(done & right)


def nearest_decoded_distance(masked_positions, block_size: int) -> np.ndarray:
    """Position baseline: for each masked block position ``p``, ``min |p - q|`` over the decoded positions ``q``
    of the block (every position in ``range(block_size)`` not in ``masked_positions``) and ``q = -1`` (the prefix
    just left of the block is always known).  Returns an int array like ``masked_positions``; the score "keep the
    masked tokens next to known ones" is ``-distance``.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    pos = np.asarray(masked_positions, dtype=np.int64)
    if pos.ndim != 1 or (pos.size and (pos.min() < 0 or pos.max() >= block_size)):
        raise ValueError(f"masked_positions must be 1-d block positions in [0, {block_size}), got {pos.tolist()}")
    known = np.ones(block_size + 1, dtype=bool)  # index 0 is the prefix (position -1)
    known[pos + 1] = False
    q = np.flatnonzero(known) - 1  # sorted, always holds -1
    j = np.searchsorted(q, pos)
    left = pos - q[j - 1]  # q[j - 1] < p always exists (-1)
    right = np.where(j < q.size, q[np.minimum(j, q.size - 1)] - pos, np.iinfo(np.int64).max)
    return np.minimum(left, right)
