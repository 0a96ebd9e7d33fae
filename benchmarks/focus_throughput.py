"""Throughput of FOCUS vs the neighbour-aware delayed-cache decoder at several batch sizes (CPU or CUDA).

    PYTHONPATH=src python benchmarks/focus_throughput.py --device cuda --batches 1 8 32 64 --repeats 3

Loads the model the full preset trains (from the checkpoint cache; trains it on CPU first if missing, a few
minutes), moves it to ``--device`` and times ``generate`` for both decoders on the same prompts.  Prints
tokens/s, the measured speed ratio and the token-layer ratio (FLOP proxy) per batch size; ``--json`` writes
them to a file.  A speed-up is only claimed where the measured ratio shows one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace

import numpy as np
import torch

from icml26.focus import BlockDiffusionDecoder, DllmConfig, load_or_train
from icml26.focus.experiment import FULL
from icml26.focus.tasks import ANSWER_LEN, PAD, sample_tasks


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32, 64])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=1.5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache-dir", default=None, help="checkpoint cache (default: ~/.cache/icml26/focus)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    model, _ = load_or_train(FULL.train, args.cache_dir)
    model = model.to(args.device).eval()
    base = DllmConfig(block_size=FULL.train.block_size, threshold=FULL.threshold, suppress_ids=(PAD,))
    decoders = {"delayed_cache": base, "focus": replace(base, enable_focus=True, focus_alpha=args.alpha)}
    prompts = torch.from_numpy(sample_tasks(np.random.default_rng(99), max(args.batches))["prompt"]).to(args.device)

    rows = []
    for bs in args.batches:
        res = {}
        for name, cfg in decoders.items():
            dec = BlockDiffusionDecoder(model, cfg)
            dec.generate(prompts[:bs], ANSWER_LEN)  # warm-up (kernels, allocator)
            times = []
            for _ in range(args.repeats):
                _sync(args.device)
                t0 = time.perf_counter()
                _, st = dec.generate(prompts[:bs], ANSWER_LEN)
                _sync(args.device)
                times.append(time.perf_counter() - t0)
            res[name] = (bs * ANSWER_LEN / statistics.median(times), sum(st.processed_token_layers))
        row = {
            "batch": bs,
            "delayed_cache_tok_s": res["delayed_cache"][0],
            "focus_tok_s": res["focus"][0],
            "speed_ratio": res["focus"][0] / res["delayed_cache"][0],
            "token_layer_ratio": res["focus"][1] / res["delayed_cache"][1],
        }
        rows.append(row)
        print(
            f"batch {bs:3d}: delayed cache {row['delayed_cache_tok_s']:8.1f} tok/s | FOCUS {row['focus_tok_s']:8.1f} "
            f"tok/s | speed x{row['speed_ratio']:.2f} | token-layers x{row['token_layer_ratio']:.2f}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "alpha": args.alpha, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
