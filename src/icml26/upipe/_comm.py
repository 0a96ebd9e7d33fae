"""Sequence/head all-to-all and sequence sharding over a process group.

Two layouts occur.  *Sequence-sharded*: ``[B, T, h, d]`` where ``T = S / C`` are this rank's contiguous tokens
and ``h`` heads are all heads (or a stage's heads).  *Head-sharded*: ``[B, h / C, S, d]``, the full sequence
for this rank's share of the heads, in the ``[B, heads, seq, dim]`` layout the attention kernel wants.

``seq_to_head`` sends head block ``r`` of every rank's tokens to rank ``r``; ``head_to_seq`` is its inverse.
With ``group=None`` and no initialised process group, ``C = 1`` and both are pure layout changes.
"""

from __future__ import annotations

import time

import torch
import torch.distributed as dist

__all__ = [
    "group_size",
    "group_rank",
    "seq_to_head",
    "head_to_seq",
    "SeqToHead",
    "HeadToSeq",
    "shard_sequence",
    "gather_sequence",
    "SequenceLengthMismatchError",
    "check_local_lengths",
]


def group_size(group) -> int:
    """World size of ``group`` (1 when torch.distributed is not initialised and ``group`` is None)."""
    if group is None and not (dist.is_available() and dist.is_initialized()):
        return 1
    return dist.get_world_size(group)


def group_rank(group) -> int:
    if group is None and not (dist.is_available() and dist.is_initialized()):
        return 0
    return dist.get_rank(group)


def _exchange(buf: torch.Tensor, group) -> torch.Tensor:
    """all_to_all_single along dim 0 of a contiguous ``[C, ...]`` buffer (returns a new tensor).

    Under ``torch.compile`` the functional collective (traceable, so ``fullgraph=True`` holds) replaces the eager
    ``async_op`` call, and the wait for gloo's worker thread (a host-side memory-accounting nicety) is skipped."""
    if group_size(group) == 1:
        return buf
    if torch.compiler.is_compiling():
        from torch.distributed import _functional_collectives as funcol

        return funcol.wait_tensor(funcol.all_to_all_single(buf, None, None, group or dist.group.WORLD))
    out = torch.empty_like(buf)
    work = dist.all_to_all_single(out, buf, group=group, async_op=True)
    work.wait()
    del work
    if buf.device.type == "cpu":  # gloo's worker thread; on CUDA (NCCL) the host never waits on it in the hot path
        _until_released(buf, out)
    return out


def _until_released(*tensors: torch.Tensor, limit_s: float = 1.0) -> None:
    """Wait (briefly) until the backend's worker thread has dropped its references to ``tensors``.

    gloo completes a collective before its worker thread lets go of the buffers, so without this the send
    buffer may outlive the caller's ``del`` by a moment, which makes peak memory depend on thread timing.
    """
    deadline = time.perf_counter() + limit_s
    while any(t._use_count() > 1 for t in tensors) and time.perf_counter() < deadline:
        time.sleep(0)


class SequenceLengthMismatchError(ValueError):
    """The ranks of a context-parallel group hold different local shapes (raised on every rank at once)."""


def check_local_lengths(x: torch.Tensor, group, name: str = "x_local") -> None:
    """Raise :class:`SequenceLengthMismatchError` on every rank unless all ranks hold the same ``[B, S/C]``.

    One tiny all-gather of two integers, so that a mismatch is a Python error on every rank before the
    all-to-all (with unequal buffers gloo aborts the process in C++ and NCCL hangs until its timeout).
    """
    c = group_size(group)
    if c == 1:
        return
    mine = torch.tensor([x.shape[0], x.shape[1]], dtype=torch.int64, device=x.device)
    every = [torch.empty_like(mine) for _ in range(c)]
    dist.all_gather(every, mine, group=group)
    _until_released(mine, *every)  # freed when this returns, not whenever gloo's thread lets go (memory timelines)
    shapes = [tuple(t.tolist()) for t in every]
    if len(set(shapes)) > 1:
        per_rank = ", ".join(f"rank {r}: B={b}, S/C={t}" for r, (b, t) in enumerate(shapes))
        raise SequenceLengthMismatchError(
            f"{name} must have the same batch size and local sequence length on every rank of the group "
            f"(shard the global sequence into C equal chunks with shard_sequence); got {per_rank}"
        )


def seq_to_head(x: torch.Tensor, group) -> torch.Tensor:
    """``[B, T, h, d]`` (tokens of this rank, all h heads) -> ``[B, h/C, C*T, d]`` (all tokens, h/C heads)."""
    c = group_size(group)
    b, t, h, d = x.shape
    if h % c:
        raise ValueError(f"the number of heads sent ({h}) must be divisible by the group size ({c})")
    buf = x.reshape(b, t, c, h // c, d).permute(2, 0, 1, 3, 4).contiguous()  # [C, B, T, h/C, d]
    got = _exchange(buf, group)  # got[src] = tokens of rank src, my heads
    del buf
    return got.permute(1, 3, 0, 2, 4).reshape(b, h // c, c * t, d)


def head_to_seq(x: torch.Tensor, group) -> torch.Tensor:
    """Inverse of :func:`seq_to_head`: ``[B, h', C*T, d]`` -> ``[B, T, C*h', d]``."""
    c = group_size(group)
    b, hh, s, d = x.shape
    if s % c:
        raise ValueError(f"the sequence length ({s}) must be divisible by the group size ({c})")
    t = s // c
    buf = x.reshape(b, hh, c, t, d).permute(2, 0, 3, 1, 4).contiguous()  # [C(dst), B, T, h', d]
    got = _exchange(buf, group)  # got[src] = my tokens, heads of rank src
    del buf
    return got.permute(1, 2, 0, 3, 4).reshape(b, t, c * hh, d)


class SeqToHead(torch.autograd.Function):
    """Autograd-aware :func:`seq_to_head` (its backward is :func:`head_to_seq`); saves nothing."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return seq_to_head(x, group)

    @staticmethod
    def backward(ctx, g):
        return head_to_seq(g, ctx.group), None


class HeadToSeq(torch.autograd.Function):
    """Autograd-aware :func:`head_to_seq` (its backward is :func:`seq_to_head`); saves nothing."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return head_to_seq(x, group)

    @staticmethod
    def backward(ctx, g):
        return seq_to_head(g, ctx.group), None


def shard_sequence(x: torch.Tensor, group=None, dim: int = 1) -> torch.Tensor:
    """This rank's contiguous chunk of ``x`` along ``dim``: chunk ``r`` of ``C`` equal chunks (a view)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    c, r = group_size(group), group_rank(group)
    n = x.shape[dim]
    if n % c:
        raise ValueError(f"x.shape[{dim}] ({n}) must be divisible by the group size ({c})")
    return x.narrow(dim, r * (n // c), n // c)


def gather_sequence(x: torch.Tensor, group=None, dim: int = 1) -> torch.Tensor:
    """Concatenate every rank's chunk along ``dim`` in rank order (inverse of :func:`shard_sequence`).

    Differentiable when ``x`` requires grad (each rank receives the gradient of its own chunk).
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    c = group_size(group)
    if c == 1:
        return x
    if x.requires_grad:
        import torch.distributed.nn.functional as dnn

        parts = dnn.all_gather(x.contiguous(), group=group)
    else:
        parts = [torch.empty_like(x) for _ in range(c)]
        dist.all_gather(parts, x.contiguous(), group=group)
    return torch.cat(list(parts), dim=dim)
