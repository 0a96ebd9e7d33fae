"""v3f design probe for opo_cmdp's sublinearity claims (DEV seeds only; see the tuning ledger).

ONE run per seed of ``T`` episodes (the step set once for that T): OPO-CMDP at the seed's chosen step (the v3c/v3e
tuning picks below) and its 5% linear floor; per-episode exact regret saved to ``--out``, then per arm and seed the
candidate statistics (the last doubling window [T/2, T] over [T/8, T/4), over [T/4, T/2) (adopted: the rate ratio),
over [T/8, T/2), each earlier window read as at least 1e-3 per episode) and the late level (mean on [T/2, T]),
with the mean and 95% t-interval over seeds.

    ICML26_NUM_THREADS=1 PYTHONPATH=src python benchmarks/opo_cmdp_rate_probe.py 8000 0 1 200 201 202 203 204 \\
        310 311 312 313 314
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy import stats

from icml26.opo_cmdp.experiment import FULL, _agent, _make
from icml26.opo_cmdp.opo import run

PICKS = {  # (eta_scale, gamma) chosen by the experiment's tuning on each dev seed (v3c and v3e runs)
    0: (10000.0, 0.3),
    1: (1000.0, 0.3),
    200: (10000.0, 0.3),
    201: (100.0, 0.3),
    202: (1000.0, 0.3),
    203: (10000.0, 0.3),
    204: (1000.0, 0.3),
    310: (10000.0, 0.3),
    311: (1000.0, 0.3),
    312: (3000.0, 0.3),
    313: (10000.0, 0.3),
    314: (1000.0, 0.3),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("T", type=int)
    ap.add_argument("seeds", type=int, nargs="+")
    ap.add_argument("--out", default="/tmp/opo6-probe")
    args = ap.parse_args()
    T, out = args.T, Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stat: dict[str, list] = {}
    for seed in args.seeds:
        path = out / f"gaps_T{T}_{seed}.npz"
        if not path.exists():
            env, F, P, _ = _make(FULL, seed)
            gaps = {}
            for name in ("opo", "opo_floor"):
                t0 = time.time()
                gaps[name] = run(env, _agent(FULL, name, F, P, env, T, PICKS[seed], opo=PICKS[seed]), T, seed)
                gaps[name] = gaps[name].per_episode_gap
                print(seed, name, f"{time.time() - t0:.1f} s, R_T = {gaps[name].sum():.1f}", flush=True)
            np.savez(path, **gaps)
        d = np.load(path)
        for name in ("opo", "opo_floor"):
            g = d[name]

            def w(lo: float, hi: float, g=g) -> float:
                return float(np.mean(g[int(lo * T) : int(hi * T)]))

            late = w(0.5, 1)
            stat.setdefault(name, []).append(
                (
                    late / max(w(1 / 8, 1 / 4), 1e-3),
                    late / max(w(1 / 4, 1 / 2), 1e-3),
                    late / max(w(1 / 8, 1 / 2), 1e-3),
                    late,
                )
            )
    for name, v in stat.items():
        v = np.array(v)
        for j, what in enumerate(("last/[T/8,T/4)", "last/[T/4,T/2) (rate ratio)", "last/[T/8,T/2)", "late level")):
            x = v[:, j]
            m = x.mean()
            h = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
            print(
                f"{name:9s} {what:28s} "
                + " ".join(f"{a:.3g}" for a in x)
                + f"  mean {m:.3g} [{m - h:.3g}, {m + h:.3g}]"
            )


if __name__ == "__main__":
    main()
