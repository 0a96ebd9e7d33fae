"""Per-rank measurement functions (memory, time, loss curves) run under :func:`icml26.upipe.testing.spawn`."""

from __future__ import annotations

import gc
import statistics
import time

import torch
import torch.distributed as dist

from ._comm import group_size, shard_sequence
from .attention import RingAttention, UlyssesAttention, UPipeAttention
from .memory import AllocatorBytes, LiveTensorBytes
from .model import LlamaConfig, TinyLlama, allreduce_grads, cp_loss

LAYERS = {"upipe": UPipeAttention, "ulysses": UlyssesAttention, "ring": RingAttention}


def _max_over_ranks(values: dict[str, float]) -> dict[str, float]:
    if group_size(None) == 1:
        return values
    keys = sorted(values)
    t = torch.tensor([float(values[k]) for k in keys], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return dict(zip(keys, t.tolist()))


def _nbytes(t: torch.Tensor) -> int:
    return t.untyped_storage().nbytes()


def layer_memory(
    rank: int,
    world: int,
    method: str,
    u: int | None,
    s: int,
    e: int,
    h: int,
    hkv: int,
    d: int,
    causal: bool = True,
    timeline: bool = False,
) -> dict:
    """Live-tensor bytes of one attention layer's forward and backward on this rank (max over ranks).

    ``fwd_peak``: forward peak minus bytes live at entry.  ``saved``: bytes still live after the forward,
    minus the output.  ``bwd_peak``: backward peak minus bytes live when the backward starts.
    ``fwd_peak_alloc`` / ``total_peak_alloc``: the same peaks from the allocator's own events
    (:class:`AllocatorBytes`; kernel scratch included), measured in a second, identical forward and backward.
    """
    torch.manual_seed(0)
    mod = LAYERS[method](e, h, hkv, d, None, u, causal)
    t = s // world
    x = torch.randn(1, t, e, requires_grad=True)
    dy = torch.randn(1, t, e)
    pos = torch.arange(rank * t, (rank + 1) * t)
    # Live bytes are freed by weakref finalizers; a tensor held only by a reference cycle stays counted until the
    # cyclic GC runs, at a moment that depends on earlier allocations.  Collect before measuring and keep the GC from
    # running inside a phase, so "saved" is the bytes the graph keeps reachable (CI once read Ulysses' saved bytes
    # 0.25 MiB above the formula, one (S/C, H, D) tensor awaiting collection).
    gc.collect()
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        with LiveTensorBytes(record_timeline=timeline) as mem:
            with mem.phase("forward") as f:
                y = mod(x, pos)
            gc.collect()
            saved = mem.current - f["start"] - _nbytes(y)
            with mem.phase("backward") as b:
                y.backward(dy)
    finally:
        if gc_was_on:
            gc.enable()
    del y
    x.grad = None
    for p in mod.parameters():
        p.grad = None
    with AllocatorBytes() as fwd_alloc:
        y = mod(x, pos)
    with AllocatorBytes() as bwd_alloc:
        y.backward(dy)
    out = _max_over_ranks(
        {
            "fwd_peak": f["peak"] - f["start"],
            "saved": saved,
            "bwd_peak": b["peak"] - b["start"],
            "total_peak": max(f["peak"], b["peak"]) - f["start"],
            "fwd_peak_alloc": fwd_alloc.peak,
            "bwd_peak_alloc": bwd_alloc.peak,
        }
    )
    if timeline and rank == 0:
        out["timeline"] = mem.timeline
    return out


def layer_memories(rank: int, world: int, jobs: list[tuple]) -> list[dict]:
    """:func:`layer_memory` for each ``(method, u, s, e, h, hkv, d)`` in ``jobs``, in one process group."""
    import gc

    out = []
    for job in jobs:
        gc.collect()  # nothing left over from the previous job may be freed inside the next measurement
        out.append(layer_memory(rank, world, *job))
    return out


def _batch(rank: int, world: int, s: int, vocab: int, seed: int, step: int, batch: int = 1):
    """A synthetic copy task: a random first half repeated as the second half (the same on every rank)."""
    g = torch.Generator().manual_seed(seed * 100003 + step)
    half = torch.randint(0, vocab, (batch, s // 2 + 1), generator=g)
    seq = torch.cat([half, half], dim=1)[:, : s + 1]
    tokens, targets = seq[:, :-1], seq[:, 1:]
    return shard_sequence(tokens, None, 1), shard_sequence(targets, None, 1), shard_sequence(torch.arange(s), None, 0)


def _model(cfg: dict, method: str, u, checkpoint: bool, mlp_chunks: int, seed: int) -> TinyLlama:
    torch.manual_seed(seed)
    return TinyLlama(
        LlamaConfig(**cfg), "reference" if method == "reference" else method, None, u, checkpoint, mlp_chunks
    )


def step_memory(
    rank: int, world: int, method: str, u, s: int, cfg: dict, checkpoint: bool, mlp_chunks: int, timeline: bool = False
) -> dict:
    """Whole training-step peak (forward, loss, backward) minus the bytes live at its start (max over ranks).

    Gradient buffers exist before the step (as in every step after the first, where backward accumulates into
    them), so the number is the step's activation and temporary memory, not the parameters' gradients.
    """
    model = _model(cfg, method, u, checkpoint, mlp_chunks, 0)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    tok, tgt, pos = _batch(rank, world, s, cfg["vocab_size"], 0, 0)
    with LiveTensorBytes(record_timeline=timeline) as mem:
        with mem.phase("step") as st:
            with mem.phase("forward"):
                loss = cp_loss(model(tok, pos), tgt, s)
            with mem.phase("backward"):
                loss.backward()
                del loss
    out = _max_over_ranks({"step_peak": st["peak"] - st["start"]})
    if timeline and rank == 0:
        out["timeline"] = mem.timeline
        out["phases"] = {k: dict(v) for k, v in mem.phases.items()}
    return out


def train_curve(
    rank: int,
    world: int,
    method: str,
    u,
    s: int,
    cfg: dict,
    steps: int,
    seed: int,
    lr: float = 3e-3,
    checkpoint: bool = False,
) -> list[float]:
    """Global mean loss of ``steps`` AdamW steps on the copy task (identical initialisation on every rank)."""
    model = _model(cfg, method, u, checkpoint, 1, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for k in range(steps):
        tok, tgt, pos = _batch(rank, world, s, cfg["vocab_size"], seed, k)
        loss = cp_loss(model(tok, pos), tgt, s)
        loss.backward()
        allreduce_grads(model)
        total = loss.detach().clone()
        if world > 1:
            dist.all_reduce(total)
        losses.append(float(total))
        opt.step()
        opt.zero_grad(set_to_none=True)
    return losses


def step_time(
    rank: int, world: int, method: str, u, s: int, cfg: dict, steps: int, checkpoint: bool, mlp_chunks: int
) -> dict:
    """Median wall time of ``steps`` training steps after one warm-up (max over ranks of each step)."""
    model = _model(cfg, method, u, checkpoint, mlp_chunks, 0)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    times = []
    for k in range(steps + 1):
        tok, tgt, pos = _batch(rank, world, s, cfg["vocab_size"], 0, k)
        if world > 1:
            dist.barrier()
        t0 = time.perf_counter()
        loss = cp_loss(model(tok, pos), tgt, s)
        loss.backward()
        allreduce_grads(model)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
        if world > 1:
            dist.all_reduce(dt, op=dist.ReduceOp.MAX)
        if k > 0:
            times.append(float(dt))
    return {"median_s": statistics.median(times), "times": times}


def train_curves(rank: int, world: int, methods: list[str], u, s: int, cfg: dict, steps: int, seed: int) -> dict:
    """:func:`train_curve` for each of ``methods`` in turn, in one process group (one spawn instead of several)."""
    return {m: train_curve(rank, world, m, u, s, cfg, steps, seed) for m in methods}


def step_times(
    rank: int, world: int, methods: list[str], u, s: int, cfg: dict, steps: int, checkpoint: bool, mlp_chunks: int
) -> dict:
    """:func:`step_time` for each of ``methods`` in turn (each with its own warm-up step), in one process group."""
    return {m: step_time(rank, world, m, u, s, cfg, steps, checkpoint, mlp_chunks) for m in methods}


def smax_search(
    rank: int, world: int, method: str, start: int, limit: int, budget: float, cfg: dict, mlp_chunks: int
) -> dict:
    """Longest S (a multiple of ``2C * 64``) whose training-step peak (:func:`step_memory`, AC on) fits ``budget``
    bytes: doubling from ``start``, then bisection.  Every probe runs in this one process group; the ranks agree
    on each probe (its peak is max-reduced), so they take the same branches."""
    import gc

    unit = 2 * world * 64
    probes: dict[int, float] = {}

    def fits(s: int) -> bool:
        if s not in probes:
            gc.collect()  # nothing left over from the previous probe may be freed inside the measured step
            probes[s] = step_memory(rank, world, method, None, s, cfg, True, mlp_chunks)["step_peak"]
        return probes[s] <= budget

    lo, hi = 0, start
    while fits(hi):
        lo, hi = hi, hi * 2
        if hi > limit:
            raise RuntimeError(f"S_max search passed smax_limit={limit}; raise budget or limit")
    while hi - lo > unit:
        mid = (lo + hi) // 2 // unit * unit
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return {"s_max": lo, "probes": {str(k): v for k, v in sorted(probes.items())}}
