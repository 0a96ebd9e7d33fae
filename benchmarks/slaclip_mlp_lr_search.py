"""SlaClip v3c (issue 46, referee 2 item 3): every MLP arm's learning rate chosen on DEV seeds by one rule.

Each C0-grid arm of the digits MLP task (vanilla, AdaClip, SlaClip, clamp-only, decay, centre) runs at every learning
rate of AUTO-S's grid {0.1, 0.2, 0.5, 1, 2} at C0 in {0.1, 1, 10} (the clamped grid without its top value 20; reduced
from the 5-value grid for time, the same for every arm) on the dev seeds given; the pick of an arm is the lr with the
best mean accuracy (ties: the smaller lr).  Also the A3-autos control: clamp-only at C0 = 1 over the same 5 lrs (its
cells are part of the grid above).  Writes one JSON line per run to the output file (resumes from it).

    PYTHONPATH=src ICML26_NUM_THREADS=1 python benchmarks/slaclip_mlp_lr_search.py OUT.jsonl 0 1 2
"""

import json
import os
import sys
import time

import torch

from icml26.slaclip.experiment import FULL, _digits, _noise, _train

ARMS = ("vanilla", "adaclip", "slaclip", "clamp-only", "decay", "centre")
LRS = (0.1, 0.2, 0.5, 1.0, 2.0)
C0S = (0.1, 1.0, 10.0)


def main(out: str, seeds: list[int]) -> None:
    torch.set_num_threads(1)
    done = set()
    if os.path.exists(out):
        for line in open(out):
            r = json.loads(line)
            done.add((r["seed"], r["arm"], r["lr"], r["c0"]))
    cfg = FULL
    with open(out, "a") as f:
        for seed in seeds:
            data = _digits(seed)
            sigma = _noise(len(data[0]), cfg.digits_batch, cfg.mlp_epochs, cfg)["sigma"]
            for lr in LRS:
                for arm in ARMS:
                    for c0 in C0S:
                        if (seed, arm, lr, c0) in done:
                            continue
                        t = time.perf_counter()
                        r = _train(arm, data, "mlp", c0, sigma, cfg.mlp_epochs, cfg.digits_batch, lr, seed, cfg)
                        row = {"seed": seed, "arm": arm, "lr": lr, "c0": c0, "acc": r["acc"], "n_test": len(data[3])}
                        row["s"] = round(time.perf_counter() - t, 2)
                        f.write(json.dumps(row) + "\n")
                        f.flush()


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2:]])
