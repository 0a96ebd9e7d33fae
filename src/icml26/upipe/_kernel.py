"""The one local attention kernel every method calls, so that methods differ only in their schedule.

Layout is ``[B, h, S, d]``.  ``attention_forward`` returns ``(out, lse)`` with ``lse[b, h, i] =
log sum_j exp(q_i . k_j / sqrt(d))`` over the visible keys; ``attention_backward`` returns ``(dq, dk, dv)``
from ``(dout, q, k, v, out, lse)``.  Passing the *global* ``out`` and ``lse`` of a merged (ring) attention to
the backward of one key block gives that block's exact share of the gradient, which is what Ring attention
relies on.

The kernel is PyTorch's CPU flash attention (``aten::_scaled_dot_product_flash_attention_for_cpu`` and its
backward), a private op.  If it is missing, or for CUDA tensors, a pure-torch blockwise kernel with the same
contract is used instead (its score blocks are scratch memory); :func:`kernel_name` says which one runs.
Grouped-query attention (fewer K/V heads than query heads) is handled here by repeating K/V heads for the
call and summing their gradients.
"""

from __future__ import annotations

import math

import torch

__all__ = ["attention_forward", "attention_backward", "kernel_name", "FLASH_CPU_AVAILABLE"]

FLASH_CPU_AVAILABLE = hasattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu") and hasattr(
    torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu_backward"
)
_BLOCK = 1024  # at most this many query rows per block in the fallback kernel
_SCORES = 1 << 26  # and at most this many score elements per block (bounds its scratch memory)


def _rows_per_block(q: torch.Tensor, k: torch.Tensor) -> int:
    return max(1, min(_BLOCK, _SCORES // max(1, q.shape[0] * q.shape[1] * k.shape[2])))


def kernel_name(device: torch.device | str = "cpu") -> str:
    """Which kernel :func:`attention_forward` uses for tensors on ``device``."""
    if torch.device(device).type == "cpu" and FLASH_CPU_AVAILABLE:
        return "aten flash-attention (cpu)"
    return "pure-torch blockwise (fallback)"


def _expand_kv(k: torch.Tensor, h: int) -> torch.Tensor:
    hk = k.shape[1]
    if hk == h:
        return k
    if h % hk:
        raise ValueError(f"query heads ({h}) must be a multiple of key/value heads ({hk})")
    return k.repeat_interleave(h // hk, dim=1)


def _reduce_kv(dk: torch.Tensor, hk: int) -> torch.Tensor:
    b, h, s, d = dk.shape
    if h == hk:
        return dk
    return dk.view(b, hk, h // hk, s, d).sum(2)


def _use_flash(q: torch.Tensor) -> bool:
    return FLASH_CPU_AVAILABLE and q.device.type == "cpu"


def attention_forward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """``out = softmax(q k^T / sqrt(d) + mask) v`` and its row log-sum-exp; ``causal`` masks ``j > i``."""
    h = q.shape[1]
    ke, ve = _expand_kv(k, h), _expand_kv(v, h)
    if _use_flash(q):
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, ke, ve, 0.0, causal)
        return out, lse
    return _blockwise_forward(q, ke, ve, causal)


def attention_backward(
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    causal: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of ``sum(dout * out)`` for the attention above, using the stored ``out`` and ``lse``."""
    h, hk = q.shape[1], k.shape[1]
    ke, ve = _expand_kv(k, h), _expand_kv(v, h)
    if _use_flash(q):
        dq, dk, dv = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
            dout.contiguous(), q, ke, ve, out, lse, 0.0, causal
        )
    else:
        dq, dk, dv = _blockwise_backward(dout, q, ke, ve, out, lse, causal)
    return dq, _reduce_kv(dk, hk), _reduce_kv(dv, hk)


def _scores(q: torch.Tensor, k: torch.Tensor, i0: int, causal: bool) -> torch.Tensor:
    s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        rows = torch.arange(i0, i0 + q.shape[2], device=q.device)[:, None]
        cols = torch.arange(k.shape[2], device=q.device)[None, :]
        s = s.masked_fill(cols > rows, float("-inf"))
    return s


def _blockwise_forward(q, k, v, causal):
    out = torch.empty_like(q)
    lse = q.new_empty(q.shape[:3], dtype=torch.float32 if q.dtype != torch.float64 else q.dtype)
    n = _rows_per_block(q, k)
    for i0 in range(0, q.shape[2], n):
        s = _scores(q[:, :, i0 : i0 + n], k, i0, causal)
        m = torch.logsumexp(s, dim=-1)
        out[:, :, i0 : i0 + n] = torch.exp(s - m[..., None]) @ v
        lse[:, :, i0 : i0 + n] = m
    return out, lse


def _blockwise_backward(dout, q, k, v, out, lse, causal):
    dq, dk, dv = torch.empty_like(q), torch.zeros_like(k), torch.zeros_like(v)
    n = _rows_per_block(q, k)
    for i0 in range(0, q.shape[2], n):
        sl = slice(i0, i0 + n)
        p = torch.exp(_scores(q[:, :, sl], k, i0, causal) - lse[:, :, sl, None].to(q.dtype))
        do = dout[:, :, sl]
        dv += p.transpose(-1, -2) @ do
        dp = do @ v.transpose(-1, -2)
        delta = (do * out[:, :, sl]).sum(-1, keepdim=True)
        ds = p * (dp - delta) * (1.0 / math.sqrt(q.shape[-1]))
        dq[:, :, sl] = ds @ k
        dk += ds.transpose(-1, -2) @ q[:, :, sl]
    return dq, dk, dv
