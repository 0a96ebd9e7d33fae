"""Fit time of AdaptiveFusedOrthogonal vs per-task DML as the number of tasks m grows (20 .. 200).

Both estimators cross-fit the same nuisances (spline + RidgeCV, 2 folds); the adaptive estimator adds the
pairwise weights and the ADMM fusion over m(m-1)/2 edges.  We report, in one run, the wall time of each full
``fit`` and of the fusion stage alone (``fit_scores`` on precomputed scores), as ratios against per-task DML.

    PYTHONPATH=src python benchmarks/fused_orthogonal_fit_time.py [--m 20 50 100 200] [--n 200] [--repeats 1]

Timings on a shared CPU are noisy; the ratios (same process, same data) are what to read.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from icml26.fused_orthogonal import (
    AdaptiveFusedOrthogonal,
    PersonalizedDML,
    PLRScore,
    TaskData,
    cross_fit_scores,
)
from icml26.fused_orthogonal.data import cluster_centres


def make_tasks(m: int, n: int, p: int, seed: int) -> list[TaskData]:
    """PLR tasks of the paper's design with a fixed width p (so only m varies), 3 clusters, delta = 2/3."""
    rng = np.random.default_rng(seed)
    theta = cluster_centres(3, 2 / 3)[rng.integers(0, 3, m)]
    tasks = []
    for j in range(m):
        x = rng.standard_normal((n, p))
        g = (1 / (1 + np.exp(-x))) @ ((-0.8) ** np.arange(1, p + 1))
        d = 0.2 * np.tanh(x.sum(axis=1)) + rng.standard_normal(n)
        tasks.append(TaskData(theta[j] * d + g + rng.standard_normal(n), d, x))
    return tasks


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, nargs="+", default=[20, 50, 100, 200])
    ap.add_argument("--n", type=int, default=200, help="samples per task")
    ap.add_argument("--p", type=int, default=8, help="covariates per task")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    rows = []
    with threadpool_limits(1):
        for m in args.m:
            tasks = make_tasks(m, args.n, args.p, seed=m)
            ada, pers = AdaptiveFusedOrthogonal(random_state=0), PersonalizedDML(random_state=0)
            t_pers = best_of(lambda: pers.fit(tasks), args.repeats)  # noqa: B023
            t_ada = best_of(lambda: ada.fit(tasks), args.repeats)  # noqa: B023
            scores = cross_fit_scores(tasks, PLRScore(), 2, random_state=0)
            f_pers = best_of(lambda: pers.fit_scores(scores), args.repeats)  # noqa: B023
            f_ada = best_of(lambda: ada.fit_scores(scores), args.repeats)  # noqa: B023
            rows.append((m, t_pers, t_ada, t_ada / t_pers, f_pers, f_ada, ada.n_iter_, ada.n_clusters_))
            print(f"m={m} done", flush=True)
    print(
        "\n| m | per-task DML fit (s) | adaptive fit (s) | ratio | per-task fit_scores (s) | "
        "adaptive fit_scores (s) | ADMM iters | clusters |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for m, tp, ta, r, fp, fa, it, k in rows:
        print(f"| {m} | {tp:.2f} | {ta:.2f} | {r:.2f} | {fp:.4f} | {fa:.3f} | {it} | {k} |")


if __name__ == "__main__":
    main()
