"""The one local attention kernel every method calls, so that methods differ only in their schedule.

Layout is ``[B, h, S, d]``.  ``attention_forward`` returns ``(out, lse)`` with ``lse[b, h, i] =
log sum_j exp(q_i . k_j / sqrt(d))`` over the visible keys; ``attention_backward`` returns ``(dq, dk, dv)``
from ``(dout, q, k, v, out, lse)``.  Passing the *global* ``out`` and ``lse`` of a merged (ring) attention to
the backward of one key block gives that block's exact share of the gradient, which is what Ring attention
relies on.

The kernel is chosen by device and dtype (:func:`kernel_name` says which one runs):

* CPU: PyTorch's CPU flash attention (``aten::_scaled_dot_product_flash_attention_for_cpu`` and its backward).
* CUDA, fp16/bf16, head dim a multiple of 8 up to 256, compute capability >= 8.0 and flash SDPA enabled:
  ``aten::_scaled_dot_product_flash_attention`` (FlashAttention-2) and its backward.
* CUDA otherwise (fp32 included), head dim a multiple of 8 and memory-efficient SDPA enabled:
  ``aten::_scaled_dot_product_efficient_attention`` (xFormers-style) with ``compute_log_sumexp=True``; its
  log-sum-exp comes padded to a multiple of 32 rows, which we slice off (and pad back for the backward).
* Anything else (an op missing, an odd head dim, another device): a pure-torch blockwise kernel with the
  same contract (its score blocks are scratch memory).

All are private aten ops with dropout 0, called without their RNG state (which dropout 0 never reads).
``torch.backends.cuda.enable_flash_sdp`` / ``enable_mem_efficient_sdp`` switch the CUDA choices off as they
do for ``scaled_dot_product_attention``.
Grouped-query attention (fewer K/V heads than query heads) is handled here by repeating K/V heads for the
call and summing their gradients.
"""

from __future__ import annotations

import math

import torch

__all__ = ["attention_forward", "attention_backward", "kernel_name", "FLASH_CPU_AVAILABLE"]

_A = torch.ops.aten
FLASH_CPU_AVAILABLE = hasattr(_A, "_scaled_dot_product_flash_attention_for_cpu") and hasattr(
    _A, "_scaled_dot_product_flash_attention_for_cpu_backward"
)
_FLASH_CUDA_OPS = hasattr(_A, "_scaled_dot_product_flash_attention") and hasattr(
    _A, "_scaled_dot_product_flash_attention_backward"
)
_EFFICIENT_OPS = hasattr(_A, "_scaled_dot_product_efficient_attention") and hasattr(
    _A, "_scaled_dot_product_efficient_attention_backward"
)
_LSE_ALIGN = 32  # the memory-efficient kernel pads its log-sum-exp rows to a multiple of this
NAMES = {
    "cpu_flash": "aten flash-attention (cpu)",
    "cuda_flash": "aten flash-attention (cuda)",
    "cuda_efficient": "aten memory-efficient attention (cuda)",
    "blockwise": "pure-torch blockwise (fallback)",
}
_BLOCK = 1024  # at most this many query rows per block in the fallback kernel
_SCORES = 1 << 26  # and at most this many score elements per block (bounds its scratch memory)


def _rows_per_block(q: torch.Tensor, k: torch.Tensor) -> int:
    return max(1, min(_BLOCK, _SCORES // max(1, q.shape[0] * q.shape[1] * k.shape[2])))


def _capability(device: torch.device) -> tuple[int, int]:
    return torch.cuda.get_device_capability(device)


def _select(device: torch.device | str, dtype: torch.dtype, head_dim: int) -> str:
    """The kernel key (one of :data:`NAMES`) for tensors of ``dtype`` and ``head_dim`` on ``device``."""
    dev = torch.device(device)
    if dev.type == "cpu":
        return "cpu_flash" if FLASH_CPU_AVAILABLE else "blockwise"
    if dev.type == "cuda" and head_dim % 8 == 0:
        half = dtype in (torch.float16, torch.bfloat16)
        if (
            half
            and head_dim <= 256
            and _FLASH_CUDA_OPS
            and torch.backends.cuda.flash_sdp_enabled()
            and _capability(dev) >= (8, 0)
        ):
            return "cuda_flash"
        if (half or dtype == torch.float32) and _EFFICIENT_OPS and torch.backends.cuda.mem_efficient_sdp_enabled():
            return "cuda_efficient"
    return "blockwise"


def kernel_name(device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32, head_dim: int = 64) -> str:
    """Which kernel :func:`attention_forward` uses for ``dtype`` tensors with ``head_dim`` on ``device``."""
    return NAMES[_select(device, dtype, head_dim)]


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


def _no_rng(q: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Stand-ins for the RNG tensors of the CUDA backward kernels (``n`` elements, then a scalar): dropout 0
    never reads them, so the forward's RNG state need not travel with ``(out, lse)``."""
    shape = (n,) if n else ()
    return torch.zeros(shape, dtype=torch.int64, device=q.device), torch.zeros((), dtype=torch.int64, device=q.device)


def _cuda_flash_forward(q, k, v, causal):
    out, lse = _A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False)[:2]
    return out, lse


def _cuda_flash_backward(dout, q, k, v, out, lse, causal):
    rng_state, unused = _no_rng(q, 2)
    return _A._scaled_dot_product_flash_attention_backward(
        dout.contiguous(),
        q,
        k,
        v,
        out,
        lse.contiguous(),
        None,
        None,
        q.shape[2],
        k.shape[2],
        0.0,
        causal,
        rng_state,
        unused,
    )


def _cuda_efficient_forward(q, k, v, causal):
    out, lse = _A._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, causal)[:2]
    return out, lse[..., : q.shape[2]]


def _cuda_efficient_backward(dout, q, k, v, out, lse, causal):
    s = q.shape[2]
    padded = -(-s // _LSE_ALIGN) * _LSE_ALIGN
    lse_p = torch.nn.functional.pad(lse.float(), (0, padded - s)).contiguous()
    seed, offset = _no_rng(q, 0)
    dq, dk, dv, _ = _A._scaled_dot_product_efficient_attention_backward(
        dout.contiguous(), q, k, v, None, out, lse_p, seed, offset, 0.0, [True, True, True, False], causal
    )
    return dq, dk, dv


def _cpu_flash_forward(q, k, v, causal):
    out, lse = _A._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal)
    return out, lse


def _cpu_flash_backward(dout, q, k, v, out, lse, causal):
    return _A._scaled_dot_product_flash_attention_for_cpu_backward(dout.contiguous(), q, k, v, out, lse, 0.0, causal)


def attention_forward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """``out = softmax(q k^T / sqrt(d) + mask) v`` and its row log-sum-exp; ``causal`` masks ``j > i``."""
    h = q.shape[1]
    ke, ve = _expand_kv(k, h), _expand_kv(v, h)
    forward, _ = _KERNELS[_select(q.device, q.dtype, q.shape[-1])]
    return forward(q, ke, ve, causal)


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
    _, backward = _KERNELS[_select(q.device, q.dtype, q.shape[-1])]
    dq, dk, dv = backward(dout, q, ke, ve, out, lse, causal)
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


_KERNELS = {  # kernel name -> (forward, backward)
    "cpu_flash": (_cpu_flash_forward, _cpu_flash_backward),
    "cuda_flash": (_cuda_flash_forward, _cuda_flash_backward),
    "cuda_efficient": (_cuda_efficient_forward, _cuda_efficient_backward),
    "blockwise": (_blockwise_forward, _blockwise_backward),
}
