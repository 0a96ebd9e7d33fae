"""Throughput of FOCUS vs the neighbour-aware delayed-cache decoder at several batch sizes (CPU or CUDA).

    PYTHONPATH=src python benchmarks/focus_throughput.py --device cuda --batches 16 32 64 128 256 --repeats 3

One process, seeded.  Loads the from-scratch model of the full preset (from the checkpoint cache; trains it on
CPU first if missing, a few minutes; ``--untrained`` skips training and times a randomly initialised model of
the same size, which decodes the same number of steps because the main schedule unmasks exactly one token per
step), moves it to ``--device`` and decodes the same reset-XOR prompts with both decoders under the main
schedule (``threshold = 1.0``, one token per step).  Per batch size it first checks that FOCUS with an
unlimited budget (``alpha = inf``) returns exactly the delayed cache's tokens, then times ``generate``
(``--repeats`` runs each, decoders interleaved, the median kept).  Prints tokens/s, the measured speed ratio and
the token-layer ratio (FLOP proxy); ``--json`` writes them to a file.  A speed-up is only claimed where the
measured ratio shows one.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from dataclasses import replace

import numpy as np
import torch

from icml26.focus import BlockDiffusionDecoder, BlockDiffusionLM, DllmConfig, load_or_train
from icml26.focus.experiment import FULL, _base
from icml26.focus.tasks import ANSWER_LEN


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def benchmark(
    model: BlockDiffusionLM,
    prompts: torch.Tensor,
    base: DllmConfig,
    batches: list[int],
    repeats: int = 3,
    alpha: float = 1.5,
    seed: int = 0,
) -> dict:
    """Time ``generate`` of the delayed cache and of FOCUS (``alpha``) on ``prompts[:bs]`` for each ``bs`` in
    ``batches``, on the model's device.  Returns ``{"rows": [...], "exact": bool}``: ``exact`` is True when, at
    every batch size, FOCUS with ``alpha = inf`` decoded exactly the delayed cache's tokens."""
    if max(batches) > len(prompts):
        raise ValueError(f"batches must be <= the number of prompts ({len(prompts)}), got {max(batches)}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
    device = model.wte.weight.device
    prompts = prompts.to(device)
    torch.manual_seed(seed)
    decoders = {
        "delayed_cache": BlockDiffusionDecoder(model, replace(base, seed=seed)),
        "focus": BlockDiffusionDecoder(model, replace(base, enable_focus=True, focus_alpha=alpha, seed=seed)),
    }
    unlimited = BlockDiffusionDecoder(model, replace(base, enable_focus=True, focus_alpha=math.inf, seed=seed))
    rows, exact = [], True
    for bs in batches:
        p = prompts[:bs]
        ref, _ = decoders["delayed_cache"].generate(p, ANSWER_LEN)  # also the warm-up (kernels, allocator)
        same, _ = unlimited.generate(p, ANSWER_LEN)
        exact &= bool(torch.equal(ref, same))
        decoders["focus"].generate(p, ANSWER_LEN)  # warm-up
        times: dict[str, list[float]] = {n: [] for n in decoders}
        tl = {}
        for _ in range(repeats):
            for name, dec in decoders.items():  # interleaved, so drifts of a shared machine hit both
                _sync(device)
                t0 = time.perf_counter()
                _, st = dec.generate(p, ANSWER_LEN)
                _sync(device)
                times[name].append(time.perf_counter() - t0)
                tl[name] = sum(st.processed_token_layers)
        tok_s = {n: bs * ANSWER_LEN / statistics.median(t) for n, t in times.items()}
        rows.append(
            {
                "batch": bs,
                "delayed_cache_tok_s": tok_s["delayed_cache"],
                "focus_tok_s": tok_s["focus"],
                "speed_ratio": tok_s["focus"] / tok_s["delayed_cache"],
                "token_layer_ratio": tl["focus"] / tl["delayed_cache"],
            }
        )
    return {"rows": rows, "exact": exact}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batches", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=1.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--untrained", action="store_true", help="time a randomly initialised model (no training)")
    ap.add_argument("--cache-dir", default=None, help="checkpoint cache (default: ~/.cache/icml26/focus)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tc = FULL.model_config("scratch")
    if args.untrained:
        torch.manual_seed(args.seed)
        model = tc.model().eval()
    else:
        model, _ = load_or_train(tc, args.cache_dir)
    model = model.to(args.device).eval()
    prompts = torch.from_numpy(tc.sample(np.random.default_rng(99 + args.seed), max(args.batches), "xor")["prompt"])
    res = benchmark(model, prompts, _base(FULL), args.batches, args.repeats, args.alpha, args.seed)
    for row in res["rows"]:
        print(
            f"batch {row['batch']:4d}: delayed cache {row['delayed_cache_tok_s']:9.1f} tok/s | FOCUS "
            f"{row['focus_tok_s']:9.1f} tok/s | speed x{row['speed_ratio']:.2f} | "
            f"token-layers x{row['token_layer_ratio']:.2f}"
        )
    print(f"unlimited-budget FOCUS == delayed cache at every batch: {res['exact']}")
    if args.json:
        with open(args.json, "w") as f:
            name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
            json.dump({"device": args.device, "device_name": name, "alpha": args.alpha, **res}, f, indent=2)
    if not res["exact"]:
        raise SystemExit("FOCUS with an unlimited budget did not reproduce the delayed-cache tokens")


if __name__ == "__main__":
    main()
