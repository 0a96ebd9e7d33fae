"""SlaClip's optimizer step time vs Opacus's flat ``DPOptimizer`` on the same model and batch.

Times ``optimizer.step()`` only (clip, noise, scale, update; the per-sample gradients are computed before the
timer starts), alternating the two optimizers so machine load hits both alike, and reports the ratio of
medians.  Target: overhead <= 5%.

    PYTHONPATH=src python benchmarks/slaclip_step_time.py [--reps 200] [--batch 256] [--hidden 256]
        [--features 784]
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--features", type=int, default=784)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x, y = torch.randn(args.batch, args.features), torch.randint(0, 10, (args.batch,))

    def setup(cls, **kw):
        torch.manual_seed(0)
        model = GradSampleModule(
            nn.Sequential(nn.Linear(args.features, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 10))
        )
        opt = cls(
            torch.optim.SGD(model.parameters(), lr=0.0),
            noise_multiplier=1.0,
            max_grad_norm=1.0,
            expected_batch_size=args.batch,
            generator=torch.Generator().manual_seed(0),
            **kw,
        )
        return model, opt

    runs = {"opacus flat DPOptimizer": setup(DPOptimizer), "SlaClipDPOptimizer": setup(SlaClipDPOptimizer)}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for rep in range(args.reps + 10):
        for name, (model, opt) in runs.items():
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            t0 = time.perf_counter()
            opt.step()
            dt = time.perf_counter() - t0
            if rep >= 10:  # warm-up
                times[name].append(dt)
    med = {k: statistics.median(v) for k, v in times.items()}
    n_params = sum(p.numel() for p in runs["SlaClipDPOptimizer"][0].parameters())
    print(
        f"model {args.features}-{args.hidden}-10 ({n_params} parameters), batch {args.batch}, "
        f"{args.reps} reps, "
        f"{args.threads} thread(s); K = {runs['SlaClipDPOptimizer'][1].num_slots}"
    )
    for k, v in med.items():
        print(f"  {k:<26} median step {1e3 * v:.3f} ms")
    ratio = med["SlaClipDPOptimizer"] / med["opacus flat DPOptimizer"]
    print(f"  ratio SlaClip / flat = {ratio:.3f} (overhead {100 * (ratio - 1):+.1f}%; target <= +5%)")


if __name__ == "__main__":
    main()
