"""FaPS step-time ratio vs full training at two TinyDiT sizes (CPU or CUDA).

For each size, one trainer per arm (full training, FaPS at keep ratio 0.5 with its policy update, random
patch dropping at 0.5) takes single training steps in round-robin order; we report the amortised MEAN time
per step (every gate update included) and the ratio to full training measured in the same run.  Interleaving
exposes every arm to the same machine state (other jobs, clocks, caches), so the ratio is fair even when
absolute times are noisy.  On CUDA every step is bracketed by ``torch.cuda.synchronize()``.

    PYTHONPATH=src python benchmarks/faps_speed.py                 # CPU, one thread
    PYTHONPATH=src python benchmarks/faps_speed.py --device cuda   # GPU
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from icml26.faps import DDIMScheduler, FaPSTrainer, FrequencyGate, RandomPatchGate, TinyDiT

SIZES = {
    # name: (img_size, patch_size, width, depth, heads, batch)
    "tiny (spec: 16x16, 64 tokens, w96 d4)": (16, 2, 96, 4, 4, 128),
    "small (32x32, 256 tokens, w256 d8)": (32, 2, 256, 8, 8, 128),
}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bench(size: tuple, device: torch.device, rounds: int, warmup: int, keep_ratio: float, batch=None) -> dict:
    img, p, width, depth, heads, default_batch = size
    batch = batch or default_batch
    gates = {
        "full": None,
        "faps": FrequencyGate(p, keep_ratio=keep_ratio).to(device),
        "random": RandomPatchGate(p, keep_ratio),
    }
    trainers = {}
    for name, gate in gates.items():
        torch.manual_seed(0)
        model = TinyDiT(img, p, 3, width, depth, heads, num_classes=10).to(device)
        trainers[name] = FaPSTrainer(model, DDIMScheduler(1000), gate, total_steps=10**9)
    x = torch.randn(batch, 3, img, img, device=device).clamp(-1, 1)
    y = torch.randint(0, 10, (batch,), device=device)
    times: dict[str, list[float]] = {a: [] for a in trainers}
    names = list(trainers)
    for r in range(warmup + rounds):
        for a in names if r % 2 == 0 else names[::-1]:
            _sync(device)
            t0 = time.perf_counter()
            trainers[a].train_step(x, y)
            _sync(device)
            if r >= warmup:
                times[a].append(time.perf_counter() - t0)
    med = {a: statistics.fmean(v) for a, v in times.items()}  # amortised mean (issue 19), not the median
    return {a: (1000 * med[a], med[a] / med["full"]) for a in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--keep-ratio", type=float, default=0.5)
    ap.add_argument("--batch", type=int, default=None, help="override the batch size (e.g. 8 for a CPU check)")
    ap.add_argument("--threads", type=int, default=1, help="CPU intra-op threads (ignored on CUDA)")
    args = ap.parse_args()
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    print(f"device={device} torch={torch.__version__} keep_ratio={args.keep_ratio} rounds={args.rounds}")
    print(f"{'size':42s} {'arm':8s} {'ms/step':>9s} {'ratio to full':>14s}")
    for name, size in SIZES.items():
        for arm, (ms, ratio) in bench(size, device, args.rounds, args.warmup, args.keep_ratio, args.batch).items():
            print(f"{name:42s} {arm:8s} {ms:9.2f} {ratio:14.3f}")


if __name__ == "__main__":
    main()
