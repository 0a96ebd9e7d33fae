"""FaPS step-time ratio vs full training at three TinyDiT sizes and two keep ratios (CPU or CUDA).

For each size and keep ratio, one trainer per arm (full training; FaPS with the v2 reproduction's gate: reads
x_t, per-patch reward, logits capped at +-2, policy updated on 8 images every 2nd step; random patch dropping)
takes BLOCKS of ``--block`` consecutive training steps in round-robin order (order reversed every other round);
we report the amortised MEAN time per step over all timed blocks (every gate update included) and the ratio to
full training measured in the same run.  Interleaving exposes every arm to the same machine state (other jobs,
clocks, caches), so the ratio is fair even when absolute times are noisy.  On CUDA every block is bracketed by
``torch.cuda.synchronize()``; all tensors, models, gates and random draws live on ``--device``.

    PYTHONPATH=src python benchmarks/faps_speed.py                          # CPU, one thread
    PYTHONPATH=src python benchmarks/faps_speed.py --device cuda            # GPU (DiT-S-sized row included)
    PYTHONPATH=src python benchmarks/faps_speed.py --sizes tiny --batch 16  # a quick CPU check
    PYTHONPATH=src python benchmarks/faps_speed.py --model diffusers       # a diffusers DiT (DiffusersDiT)

``--model diffusers`` builds ``diffusers.DiTTransformer2DModel`` from a config of the same size (heads x head dim =
width, random weights, nothing downloaded) and trains it through :class:`icml26.faps.DiffusersDiT`.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from icml26.faps import DDIMScheduler, DiffusersDiT, FaPSTrainer, FrequencyGate, RandomPatchGate, TinyDiT
from icml26.faps.experiment import FULL  # the gate and trainer settings the reproduction measures

SIZES = {
    # name: (img_size, patch_size, width, depth, heads, batch)
    "tiny": (16, 2, 96, 4, 4, 128),  # the spec's DiT: 16x16, 64 tokens, width 96, depth 4
    "small": (32, 2, 256, 8, 8, 128),  # 32x32, 256 tokens, width 256, depth 8
    "dit_s": (32, 2, 384, 12, 6, 128),  # DiT-S/2 on a 32x32 latent: 256 tokens, width 384, depth 12, 6 heads
}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _denoiser(size: tuple, model: str) -> torch.nn.Module:
    img, p, width, depth, heads, _ = size
    if model == "tiny_dit":
        return TinyDiT(img, p, 3, width, depth, heads, num_classes=10)
    from diffusers import DiTTransformer2DModel  # the [diffusers] extra

    dit = DiTTransformer2DModel(num_attention_heads=heads, attention_head_dim=width // heads, in_channels=3,
                                num_layers=depth, sample_size=img, patch_size=p, num_embeds_ada_norm=10)  # fmt: skip
    return DiffusersDiT(dit)


def bench(size: tuple, device: torch.device, rounds: int, warmup: int, keep_ratio: float, batch=None,
          block: int = 4, model: str = "tiny_dit") -> dict:  # fmt: skip
    img, p, width, depth, heads, default_batch = size
    batch = batch or default_batch
    gates = {
        "full": None,
        "faps": FrequencyGate(
            p,
            FULL.n_bands,
            hidden=FULL.faps_hidden,
            keep_ratio=keep_ratio,
            selection=FULL.faps_selection,
            temperature=FULL.faps_temperature,
            logit_cap=FULL.faps_logit_cap,
            inputs=FULL.faps_inputs,
        ).to(device),
        "random": RandomPatchGate(p, keep_ratio),
    }
    trainers = {}
    for name, gate in gates.items():
        torch.manual_seed(0)
        net = _denoiser(size, model).to(device)
        kw = {
            "reward": FULL.faps_reward,
            "policy_batch": FULL.faps_policy_batch,
            "policy_every": FULL.faps_policy_every,
        }
        kw = kw if name == "faps" else {}
        trainers[name] = FaPSTrainer(net, DDIMScheduler(1000), gate, total_steps=10**9, **kw)
    x = torch.randn(batch, 3, img, img, device=device).clamp(-1, 1)
    y = torch.randint(0, 10, (batch,), device=device)
    times: dict[str, list[float]] = {a: [] for a in trainers}
    names = list(trainers)
    for r in range(warmup + rounds):
        for a in names if r % 2 == 0 else names[::-1]:
            _sync(device)
            t0 = time.perf_counter()
            for _ in range(block):
                trainers[a].train_step(x, y)
            _sync(device)
            if r >= warmup:
                times[a].append((time.perf_counter() - t0) / block)
    mean = {a: statistics.fmean(v) for a, v in times.items()}  # amortised mean (issue 19), not the median
    return {a: (1000 * mean[a], mean[a] / mean["full"]) for a in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--block", type=int, default=4, help="steps per timed block (even: gate updates included)")
    ap.add_argument("--keep-ratios", type=float, nargs="+", default=[0.5, 0.25])
    ap.add_argument("--sizes", nargs="+", default=None, choices=list(SIZES),
                    help="default: all on CUDA, tiny and small on CPU")  # fmt: skip
    ap.add_argument("--batch", type=int, default=None, help="override the batch size (e.g. 8 for a CPU check)")
    ap.add_argument("--threads", type=int, default=1, help="CPU intra-op threads (ignored on CUDA)")
    ap.add_argument("--model", default="tiny_dit", choices=["tiny_dit", "diffusers"],
                    help="our TinyDiT or a diffusers DiTTransformer2DModel of the same size")  # fmt: skip
    args = ap.parse_args()
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    sizes = args.sizes or (list(SIZES) if device.type == "cuda" else ["tiny", "small"])
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(
        f"device={device} ({name}) torch={torch.__version__} model={args.model} rounds={args.rounds} block={args.block}"
    )
    print(f"{'size':8s} {'keep':>5s} {'arm':8s} {'ms/step':>9s} {'ratio to full':>14s}")
    for size in sizes:
        for rho in args.keep_ratios:
            res = bench(SIZES[size], device, args.rounds, args.warmup, rho, args.batch, args.block, args.model)
            for arm, (ms, ratio) in res.items():
                print(f"{size:8s} {rho:5.2f} {arm:8s} {ms:9.2f} {ratio:14.3f}")


if __name__ == "__main__":
    main()
