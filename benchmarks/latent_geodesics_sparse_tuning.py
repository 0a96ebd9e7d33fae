"""Dev-seed tuning of the v3c sparse-code setting of latent_geodesics (recorded in the paper's tuning ledger).

For N codes on S^2 (and on S^2 in R^8): train the projector as in the experiment, then on the 60/100-deg arcs score
the geodesic (k = 10 start), its identity path, the kNN path over k in {5, 10, 15, 20, 30, 50, 80, 150} (8 values,
the v3b budget), the projected kNN path over k in {20, 30, 50, 80} (4), the spline over penalty in
{1, 10, 100, 1000, 1e4} (5), and the exp at 60 deg (v3, v2, dim = 0).  Usage (dev seeds only):

    PYTHONPATH=src python benchmarks/latent_geodesics_sparse_tuning.py OUT.jsonl N[,N...] SEED [SEED ...]
"""

import json
import math
import sys
import time
import warnings

import numpy as np
import torch

from icml26.latent_geodesics.baselines import knn_graph_path, spline_energy_path
from icml26.latent_geodesics.data import dist_to_arc, random_embedding, sample_sphere, sphere_exp, sphere_pair
from icml26.latent_geodesics.manifold import EuclideanMetric, ImplicitManifold
from icml26.latent_geodesics.projector import LatentProjector

KNN = (5, 10, 15, 20, 30, 50, 80, 150)
PKNN = (20, 30, 50, 80)
PEN = (1.0, 10.0, 100.0, 1000.0, 1e4)


def err(p, arc):
    a, u, th = arc
    return float(dist_to_arc(p, a, u, th).max())


def lerr(p, th):
    return float(abs(np.linalg.norm(np.diff(p, axis=0), axis=1).sum() - th) / th)


def one(out, seed: int, man: str, N: int) -> None:
    rng = np.random.default_rng([seed, 2, 0 if man == "s2" else 1])
    X = sample_sphere(N, rng)
    Q = None
    if man == "s2r8":
        Q = random_embedding(8, rng)
        Z = X @ Q.T + 0.01 * rng.normal(size=(N, 8))
    else:
        Z = X
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    proj = (
        LatentProjector(Z.shape[1], hidden=64, depth=4)
        .fit(Z, sigma=0.05, steps=2000, batch_size=min(512, N), lr=3e-3, seed=seed)
        .double()
    )
    tsec = time.perf_counter() - t0
    M = ImplicitManifold(proj.zeta, EuclideanMetric(), codes=Z, knn=10, dim=2)
    lift = (lambda x: x) if Q is None else (lambda x: x @ Q.T)
    for deg in (60.0, 100.0):
        th = math.radians(deg)
        a3, b3, u3 = sphere_pair(th, rng)
        a, b, u = lift(a3), lift(b3), lift(u3)
        arc = (a, u, th)
        r = {"seed": seed, "man": man, "N": N, "deg": deg, "train_s": tsec}
        try:
            init = knn_graph_path(Z, a, b, 16, k=10)
        except ValueError:
            r["disconnected_k10"] = True
            out.write(json.dumps(r) + "\n")
            out.flush()
            continue
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            g = M.geodesic(a, b, 16, init=init)
        r.update(
            geo=err(g, arc),
            geo_len=lerr(g, th),
            conv=bool(M.last_info_["converged"]),
            off_codes=bool(M.last_info_.get("off_codes", False)),
            warned=len(w) > 0,
            geo_s=time.perf_counter() - t0,
            ident=err(init, arc),
            ident_len=lerr(init, th),
        )
        for k in KNN:
            try:
                p = knn_graph_path(Z, a, b, 16, k=k)
                r[f"knn{k}"], r[f"knn{k}_len"] = err(p, arc), lerr(p, th)
                if k in PKNN:
                    p[1:-1] = proj.project(p[1:-1])
                    r[f"pknn{k}"] = err(p, arc)
            except ValueError:
                r[f"knn{k}"] = None
        s_init = knn_graph_path(Z, a, b, 16, k=30)
        for pen in PEN:
            s = spline_energy_path(a, b, 16, proj.zeta, init=s_init, n_ctrl=4, penalty=pen)
            r[f"spline{pen:g}"] = err(s, arc)
        out.write(json.dumps(r) + "\n")
        out.flush()
    # exp at 60 deg: v3, v2 (multiplier="full"), dim = 0 (the multiplier over all of Dzeta^T, nothing else changed)
    th = math.radians(60.0)
    a, b, u = sphere_pair(th, rng)
    v = th * u
    truth = lift(sphere_exp(a, v))
    M0 = ImplicitManifold(proj.zeta, EuclideanMetric(), codes=Z, knn=10, dim=0)
    r = {
        "seed": seed,
        "man": man,
        "N": N,
        "exp": True,
        "v3": float(np.linalg.norm(M.exp(lift(v), lift(a), 16) - truth)),
        "v2": float(np.linalg.norm(M.exp_path(lift(v), lift(a), 16, multiplier="full")[-1] - truth)),
        "dim0": float(np.linalg.norm(M0.exp(lift(v), lift(a), 16) - truth)),
    }
    out.write(json.dumps(r) + "\n")
    out.flush()


if __name__ == "__main__":
    torch.set_num_threads(1)
    path, Ns, seeds = sys.argv[1], [int(x) for x in sys.argv[2].split(",")], [int(s) for s in sys.argv[3:]]
    with open(path, "a") as out:
        for N in Ns:
            for seed in seeds:
                for man in ("s2", "s2r8"):
                    one(out, seed, man, N)
