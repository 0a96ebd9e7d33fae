"""Seconds per training epoch of CountICA at n=150, T=20, K=12, d=5 (full batch, float32); target <= 0.08 s on 2
cores.  Usage: PYTHONPATH=src python benchmarks/count_ica_epoch.py [--threads 2] [--epochs 50]"""

import argparse
import time

import torch

from icml26.count_ica import CountICA, make_arpln_data

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=50)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    X, _ = make_arpln_data(n=150, T=20, n_features=12, n_components=5, seed=0)
    for variational in ("ar", "mf"):
        CountICA(5, max_epochs=3, variational=variational).fit(X)  # warm-up
        t = time.perf_counter()
        m = CountICA(5, max_epochs=a.epochs, tol=0.0, variational=variational).fit(X)
        s = (time.perf_counter() - t) / m.n_iter_
        print(f"{variational}: {s:.4f} s/epoch ({a.threads} threads, target 0.08) -> {'ok' if s <= 0.08 else 'SLOW'}")
