"""Train the tiny Llama with context-parallel attention: ``torchrun --nproc-per-node N -m icml26.upipe.train``.

Every rank reads the same synthetic batch (a copy task: a random first half repeated), keeps its contiguous
``S / N`` tokens, and runs the model with the chosen attention; parameter gradients are summed over the group.
Every rank seeds the same generator before building the model and then takes rank 0's weights (a broadcast
that should change nothing; the largest change is printed).  With ``--backend nccl`` (or ``--device cuda``)
rank ``LOCAL_RANK`` uses GPU ``LOCAL_RANK``: model and batches live there.  The loop runs under a
:class:`~icml26.upipe._oom.CollectiveOOMGuard`, so a rank that runs out of memory stops every rank within a
second (exit code 75 on the others) instead of leaving them in an all-to-all until the collective timeout.
Rank 0 prints one line per step (loss, step time, peak memory if ``--track-memory``: live tensor bytes, and
on CUDA also the allocator's peak).

Example::

    torchrun --nproc-per-node 2 -m icml26.upipe.train --attention upipe --seq-len 4096 --steps 20
    torchrun --nproc-per-node 8 -m icml26.upipe.train --backend nccl --dtype bfloat16 --seq-len 131072 \
        --dim 4096 --heads 32 --kv-heads 8 --head-dim 128 --ffn-dim 14336 --layers 2 --checkpoint --mlp-chunks 8
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

from ._measure import _batch
from ._oom import CollectiveOOMGuard
from .memory import LiveTensorBytes
from .model import ATTENTIONS, LlamaConfig, TinyLlama, allreduce_grads, broadcast_parameters, cp_loss


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m icml26.upipe.train", description=__doc__.splitlines()[0])
    p.add_argument("--attention", choices=sorted(ATTENTIONS), default="upipe")
    p.add_argument("--heads-per-stage", type=int, default=None, help="UPipe's U (default: the world size)")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=16)
    p.add_argument("--head-dim", type=int, default=16)
    p.add_argument("--ffn-dim", type=int, default=688)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", action="store_true", help="activation checkpointing per block")
    p.add_argument("--mlp-chunks", type=int, default=1, help="tiled MLP over this many sequence tiles")
    p.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    p.add_argument(
        "--device", default="auto", choices=["auto", "cpu", "cuda"], help="auto: cuda with --backend nccl, else cpu"
    )
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--timeout-s", type=float, default=300.0, help="collective timeout")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--track-memory", action="store_true", help="report the peak live tensor bytes of each step")
    args = p.parse_args(argv)
    if args.seq_len < 2 or args.steps < 1:
        p.error("--seq-len must be >= 2 and --steps >= 1")
    if args.backend == "nccl" and args.device == "cpu":
        p.error("--backend nccl needs --device cuda (or auto)")
    return args


def resolve_device(device: str, backend: str, rank: int = 0) -> torch.device:
    """``cuda:LOCAL_RANK`` for ``cuda`` (or ``auto`` with NCCL), else the CPU; sets the current CUDA device.
    Without ``LOCAL_RANK`` (ranks spawned by hand, one machine) the GPU is ``cuda:rank``."""
    if device == "cpu" or (device == "auto" and backend != "nccl"):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError(f"--device {device} with --backend {backend} needs a CUDA GPU, and none is visible")
    local = int(os.environ.get("LOCAL_RANK", rank))
    if local >= torch.cuda.device_count():
        raise RuntimeError(f"local rank {local} but only {torch.cuda.device_count()} CUDA device(s) are visible")
    torch.cuda.set_device(local)
    return torch.device("cuda", local)


def main(argv=None) -> list[float]:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    started_here = False
    # the device first (NCCL binds a rank's communicator to the current CUDA device when the group starts)
    rank = dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", 0))
    device = resolve_device(args.device, args.backend, rank)
    if "RANK" in os.environ and not dist.is_initialized():
        dist.init_process_group(args.backend, timeout=timedelta(seconds=args.timeout_s))
        started_here = True
    world = dist.get_world_size() if dist.is_initialized() else 1
    rank = dist.get_rank() if dist.is_initialized() else 0
    dtype = getattr(torch, args.dtype)
    if args.seq_len % world:
        raise ValueError(f"--seq-len ({args.seq_len}) must be divisible by the number of processes ({world})")
    if args.attention == "reference" and world > 1:
        raise ValueError("--attention reference runs on one process only")
    cfg = LlamaConfig(
        n_layers=args.layers,
        dim=args.dim,
        n_heads=args.heads,
        n_kv_heads=args.kv_heads,
        head_dim=args.head_dim,
        ffn_dim=args.ffn_dim,
    )
    torch.manual_seed(args.seed)  # the same weights on every rank; the broadcast below makes sure
    model = TinyLlama(cfg, args.attention, None, args.heads_per_stage, args.checkpoint, args.mlp_chunks)
    model = model.to(device=device, dtype=dtype)
    changed = broadcast_parameters(model)
    if rank == 0 and world > 1:
        print(f"ranks {world}, device {device}, weights from rank 0 (largest change on rank 0: {changed:.3g})")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    losses = []
    try:
        with CollectiveOOMGuard():
            for step in range(args.steps):
                losses.append(_step(model, opt, args, cfg, rank, world, device, step))
        if started_here:
            dist.barrier()  # no rank tears gloo down while a peer still works (that can abort at exit)
    finally:
        if started_here:
            dist.destroy_process_group()
    return losses


def _step(model, opt, args, cfg, rank: int, world: int, device: torch.device, step: int) -> float:
    tok, tgt, pos = (t.to(device) for t in _batch(rank, world, args.seq_len, cfg.vocab_size, args.seed, step))
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
    t0 = time.perf_counter()
    mem = LiveTensorBytes(record_timeline=False) if args.track_memory else None
    if mem is not None:
        mem.__enter__()
    try:
        loss = cp_loss(model(tok, pos), tgt, args.seq_len)
        loss.backward()
    finally:
        if mem is not None:
            mem.__exit__(None, None, None)
    allreduce_grads(model)
    opt.step()
    opt.zero_grad(set_to_none=True)
    total = loss.detach().float().clone()
    if world > 1:
        dist.all_reduce(total)
    if rank == 0:
        extra = f" peak_live={mem.peak / 2**20:.1f}MiB" if mem is not None else ""
        if cuda and args.track_memory:
            extra += f" cuda_peak={(torch.cuda.max_memory_allocated(device) - base) / 2**20:.1f}MiB"
        print(f"step {step:3d} loss {float(total):.4f} time {time.perf_counter() - t0:.3f}s{extra}", flush=True)
    return float(total)


if __name__ == "__main__":
    main()
