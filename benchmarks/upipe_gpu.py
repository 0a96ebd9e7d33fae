"""UPipe vs Ulysses vs Ring on CUDA: peak memory (torch.cuda.max_memory_allocated) and step time per rank.

Run on N GPUs with NCCL::

    torchrun --nproc-per-node N benchmarks/upipe_gpu.py --seq-lens 32768 65536 131072

or on one GPU without torchrun (then C = 1: UPipe is the headwise-chunked single-device case).  For each
method and sequence length it measures, for one attention layer (forward + backward, fp32 or bf16): the
forward peak and the whole-step peak above the memory allocated before the forward, the bytes still held
after the forward (saved for backward plus the output), and the median wall time of ``--repeats`` steps;
then prints one markdown table with ratios against Ulysses.  Every method uses the same local kernel (on
CUDA the pure-torch blockwise kernel of ``icml26.upipe._kernel``, whose score blocks count as scratch).

Not measured in this repository: no GPU was available when it was written (see docs/upipe.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import timedelta

import torch
import torch.distributed as dist

from icml26.upipe import RingAttention, UlyssesAttention, UPipeAttention

METHODS = {"ulysses": UlyssesAttention, "upipe": UPipeAttention, "ring": RingAttention}
MiB = 2**20


def measure(method: str, u, s: int, args, device, world: int, rank: int) -> dict:
    dtype = getattr(torch, args.dtype)
    mod = METHODS[method](args.dim, args.heads, args.kv_heads, args.head_dim, None, u, True).to(device, dtype)
    t = s // world
    x = torch.randn(1, t, args.dim, device=device, dtype=dtype, requires_grad=True)
    dy = torch.randn(1, t, args.dim, device=device, dtype=dtype)
    pos = torch.arange(rank * t, (rank + 1) * t, device=device)
    times, fwd, total, held = [], 0, 0, 0
    for k in range(args.repeats + 1):
        x.grad = None
        for p in mod.parameters():
            p.grad = None
        torch.cuda.synchronize()
        if world > 1:
            dist.barrier()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        t0 = time.perf_counter()
        y = mod(x, pos)
        torch.cuda.synchronize()
        fwd = torch.cuda.max_memory_allocated() - base
        held = torch.cuda.memory_allocated() - base
        y.backward(dy)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        total = torch.cuda.max_memory_allocated() - base
        del y
        if k > 0:
            times.append(dt)
    vals = torch.tensor([fwd, held, total, statistics.median(times)], dtype=torch.float64, device=device)
    if world > 1:
        dist.all_reduce(vals, op=dist.ReduceOp.MAX)
    fwd, held, total, med = vals.tolist()
    return {"fwd_peak_MiB": fwd / MiB, "after_fwd_MiB": held / MiB, "step_peak_MiB": total / MiB, "time_s": med}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq-lens", type=int, nargs="+", default=[16384, 32768, 65536])
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=16)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--methods", nargs="+", default=["ulysses", "upipe", "upipe2", "ring"], help="upipe: U = C; upipe2: U = 2C"
    )
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("this benchmark needs a CUDA GPU (the CPU reproduction is `icml26 run upipe`)")
    if "RANK" in os.environ:
        dist.init_process_group("nccl", timeout=timedelta(seconds=600))
        rank, world = dist.get_rank(), dist.get_world_size()
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    else:
        rank, world = 0, 1
    device = torch.device("cuda", torch.cuda.current_device())
    rows = []
    for s in args.seq_lens:
        base = None
        for name in args.methods:
            method, u = ("upipe", 2 * world) if name == "upipe2" else (name, None)
            if name == "upipe2" and args.heads % (2 * world):
                continue
            try:
                r = measure(method, u, s, args, device, world, rank)
            except torch.OutOfMemoryError:
                r = {
                    "fwd_peak_MiB": float("nan"),
                    "after_fwd_MiB": float("nan"),
                    "step_peak_MiB": float("nan"),
                    "time_s": float("nan"),
                    "note": "OOM",
                }
                torch.cuda.empty_cache()
            if name == "ulysses":
                base = r
            ratios = {}
            if base is not None and name != "ulysses":
                ratios = {f"{k}/ulysses": r[k] / base[k] for k in ("fwd_peak_MiB", "step_peak_MiB", "time_s")}
            rows.append({"S": s, "C": world, "method": name, **r, **ratios})
    if rank == 0:
        cols = list(dict.fromkeys(k for r in rows for k in r))
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for r in rows:
            print(
                "| "
                + " | ".join(f"{r[c]:.4g}" if isinstance(r.get(c), float) else str(r.get(c, "")) for c in cols)
                + " |"
            )
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
