"""OPO-CMDP with fresh continuous contexts (issue 52, Deliver item 5: "2,000 fresh continuous contexts take < 60 s").

``N`` episodes on the reproduction's lock (H = 6, S = 3, A = 4, 15 decoys), each with a Gaussian context the agent
has never seen: every new context is replayed through all past updates when first asked for (exactly the update
the tracked contexts ran: a late-seen context's policy equals tracking it from the start, bitwise; see
``tests/opo_cmdp/test_learners.py``), so the cost grows like ``N^2`` single-context updates.  Prints wall and CPU
seconds (on a shared machine CPU seconds are the steadier number) and the ratio to the 60 s target: a number, not an
assertion (timings depend on the machine and its load).

    ICML26_NUM_THREADS=1 PYTHONPATH=src python benchmarks/opo_fresh_contexts.py          # N = 2000
    ICML26_NUM_THREADS=1 PYTHONPATH=src python benchmarks/opo_fresh_contexts.py --n 500
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from icml26.opo_cmdp import OPOCMDP, ContextualCombinationLock, make_lock_classes
from icml26.opo_cmdp.experiment import FULL

TARGET_S = 60.0


def fresh(n: int, seed: int = 0) -> tuple[float, float]:
    """(wall, CPU) seconds for ``n`` episodes, each with a context the agent has not seen."""
    env = ContextualCombinationLock(FULL.n_layers, FULL.n_states, FULL.n_actions, FULL.context_dim, 10, seed=seed)
    F, P, _ = make_lock_classes(env, n_decoys=FULL.n_decoys, seed=seed)
    H, S, A = env.n_layers, env.n_states, env.n_actions
    agent = OPOCMDP(F, P, H, S, A, T=n, eta_scale=1000.0, gamma=0.3)
    rng = np.random.default_rng(seed)
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        c = rng.normal(size=env.context_dim)
        pi = agent.policy(c)
        s, traj = 0, []
        for h in range(H):
            a = int(rng.choice(A, p=pi[h, s]))
            s2 = int(rng.integers(S)) if h + 1 < H else -1
            traj.append((h, s, a, float(rng.random()), s2))
            s = s2
        agent.observe(c, traj)
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="fresh contexts (= episodes)")
    args = ap.parse_args()
    wall, cpu = fresh(args.n)
    print(
        f"{args.n} fresh contexts: {wall:.1f} s wall, {cpu:.1f} s CPU; CPU / {TARGET_S:g} s target = "
        f"{cpu / TARGET_S:.2f} (wall {wall / TARGET_S:.2f})"
    )


if __name__ == "__main__":
    main()
