"""UPipe vs Ulysses vs Ring, one attention layer on GPUs: peak memory, step time, equality with Ulysses.

One GPU per rank, NCCL, one process group per (sequence length, method), so an out-of-memory configuration
is one ``OOM`` row and the others still run::

    python benchmarks/upipe_gpu.py --gpus 8 --seq-lens 32768 65536 131072 --out upipe_gpu.json
    python benchmarks/upipe_gpu.py --gpus 1 --seq-lens 65536            # C = 1: headwise chunking alone

Defaults are Llama 3-like (E = 4096, H = 32, Hkv = 8, d = 128, bf16).  ``--device cpu`` runs the same
measurement on gloo CPU ranks (a smoke test; use small sizes).  See :mod:`icml26.upipe.benchmark` for what
each column means.  Not yet measured in this repository: no GPU has been available (see docs/upipe.md).
"""

from __future__ import annotations

import argparse

import torch

from icml26.upipe.benchmark import BenchSpec, markdown_table, run_benchmark, write_json


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq-lens", type=int, nargs="+", default=[16384, 32768, 65536])
    p.add_argument("--methods", nargs="+", default=["ulysses", "upipe", "upipe2", "ring"])
    p.add_argument("--gpus", type=int, default=None, help="ranks (default: every visible GPU; CPU: 2)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout-s", type=float, default=600.0, help="collective timeout of each process group")
    p.add_argument("--out", default=None, help="also write the rows as JSON (atomically)")
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda needs a CUDA GPU (the CPU reproduction is `icml26 run upipe`)")
    world = args.gpus or (torch.cuda.device_count() if args.device == "cuda" else 2)
    spec = BenchSpec(
        dim=args.dim,
        heads=args.heads,
        kv_heads=args.kv_heads,
        head_dim=args.head_dim,
        dtype=args.dtype,
        repeats=args.repeats,
        seed=args.seed,
        device=args.device,
    )
    backend = "nccl" if args.device == "cuda" else "gloo"
    rows = run_benchmark(args.seq_lens, args.methods, world, spec, backend, args.timeout_s)
    print(markdown_table(rows))
    if args.out:
        write_json(args.out, rows, spec, world)
    return rows


if __name__ == "__main__":
    main()
