"""SlaClip's optimizer step time vs Opacus's flat ``DPOptimizer`` on the same model and batch, at two model sizes.

Times ``optimizer.step()`` only (clip, noise, scale, update; the per-sample gradients are computed before the
timer starts), alternating the two optimizers so machine load hits both alike, and reports the ratio of
medians for an MLP of ~10k parameters (64-128-10, the digits model) and one of ~200k (784-256-10) in one run.
Target: overhead <= 5% at 200k parameters (SlaClip's extra work is per sample, K slots, not per parameter, so the
ratio shrinks as the model grows).

    PYTHONPATH=src python benchmarks/slaclip_step_time.py [--reps 200] [--batch 256] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch
from opacus import GradSampleModule
from opacus.optimizers import DPOptimizer
from torch import nn

from icml26.slaclip import SlaClipDPOptimizer

warnings.filterwarnings("ignore")

MODELS = ((64, 128), (784, 256))  # (features, hidden): 9,610 and 203,530 parameters


def bench(features: int, hidden: int, batch: int, reps: int) -> dict:
    torch.manual_seed(0)
    x, y = torch.randn(batch, features), torch.randint(0, 10, (batch,))

    def setup(cls):
        torch.manual_seed(0)
        model = GradSampleModule(nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 10)))
        opt = cls(
            torch.optim.SGD(model.parameters(), lr=0.0),
            noise_multiplier=1.0,
            max_grad_norm=1.0,
            expected_batch_size=batch,
            generator=torch.Generator().manual_seed(0),
        )
        return model, opt

    runs = {"flat": setup(DPOptimizer), "slaclip": setup(SlaClipDPOptimizer)}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for rep in range(reps + 10):
        for name, (model, opt) in runs.items():
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            t0 = time.perf_counter()
            opt.step()
            dt = time.perf_counter() - t0
            if rep >= 10:  # warm-up
                times[name].append(dt)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "model": f"{features}-{hidden}-10",
        "params": sum(p.numel() for p in runs["slaclip"][0].parameters()),
        "K": runs["slaclip"][1].num_slots,
        "flat_ms": 1e3 * med["flat"],
        "slaclip_ms": 1e3 * med["slaclip"],
        "ratio": med["slaclip"] / med["flat"],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if args.reps < 1 or args.batch < 1 or args.threads < 1:
        raise SystemExit("--reps, --batch and --threads must be >= 1")
    torch.set_num_threads(args.threads)
    print(f"batch {args.batch}, {args.reps} reps, {args.threads} thread(s), torch {torch.__version__}")
    print("| model | parameters | K | Opacus DPOptimizer step (ms) | SlaClipDPOptimizer step (ms) | ratio |")
    print("|---|---|---|---|---|---|")
    for features, hidden in MODELS:
        r = bench(features, hidden, args.batch, args.reps)
        print(
            f"| {r['model']} | {r['params']:,} | {r['K']} | {r['flat_ms']:.3f} | {r['slaclip_ms']:.3f} | "
            f"{r['ratio']:.3f} |"
        )
    print("target: ratio <= 1.05 at ~200k parameters")


if __name__ == "__main__":
    main()
