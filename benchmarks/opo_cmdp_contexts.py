"""OPO-CMDP's cost with many contexts (issue 52, item 5: "2,000 fresh continuous contexts take < 60 s").

Two ways contexts reach the learner, both on the reproduction's lock (H = 6, S = 3, A = 4, 15 decoys):

* ``fresh``: a new continuous context every episode that the agent has never been told about.  Each is replayed
  through every past update when first seen (the counterfactual rule needs ``t - 1`` sequential single-context DP
  steps at episode ``t``; v3d: a context the models used so far cannot tell from a tracked one takes its state;
  the replay runs ``_update``, the one update the tracked contexts run too (v3f: through the policy's
  state-to-state kernel, about 2x fewer numpy calls than v3e's), with the models sliced once per epoch), so the cost
  grows like ``N^2``; ``benchmarks/opo_fresh_contexts.py`` times N = 2000 directly; here we time
  ``N`` in ``--fresh`` episodes and
  extrapolate to 2,000 with the fitted exponent (pass 2000 to measure it).  ``--reference`` also times the
  step-by-step replay of v3c (``_step`` per past episode, no cache) in the same process, for the speed-up.
* ``pool``: ``run()``'s path: the env's finite pool (``--pool`` continuous contexts) is tracked up front and every
  tracked context is updated after every episode in one batched step; ``T = --pool`` episodes, so most contexts are
  first played long after they were registered.

Prints wall and CPU seconds per setting (on a shared machine CPU seconds are the steadier number), the extrapolated
seconds for 2,000 fresh contexts and its ratio to the 60 s target (a number, not an assertion: timings depend on the
machine and its load).

    ICML26_NUM_THREADS=1 PYTHONPATH=src python benchmarks/opo_cmdp_contexts.py
    ICML26_NUM_THREADS=1 PYTHONPATH=src python benchmarks/opo_cmdp_contexts.py --fresh 100 200 --pool 500
    ICML26_NUM_THREADS=1 PYTHONPATH=src python benchmarks/opo_cmdp_contexts.py --fresh 200 400 --pool 0 --reference
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np

from icml26.opo_cmdp import OPOCMDP, ContextualCombinationLock, make_lock_classes, run
from icml26.opo_cmdp.experiment import FULL


def _lock(pool: int, seed: int = 0):
    env = ContextualCombinationLock(FULL.n_layers, FULL.n_states, FULL.n_actions, FULL.context_dim, pool, seed=seed)
    F, P, _ = make_lock_classes(env, n_decoys=FULL.n_decoys, seed=seed)
    return env, F, P


@contextlib.contextmanager
def step_by_step():
    """v3c's replay: every past update through ``OPOCMDP._step`` (the batched rule on the new rows), no cache."""

    def replay(self, logpi, n, rows):
        for j, (kf, kp) in enumerate(self.history, start=1):
            logpi, n, _ = self._step(logpi, n, rows, j, kf, kp)
        return logpi, n

    saved = OPOCMDP._replay, OPOCMDP._model_key
    OPOCMDP._replay, OPOCMDP._model_key = replay, lambda self, row, pairs: str(row).encode()
    try:
        yield
    finally:
        OPOCMDP._replay, OPOCMDP._model_key = saved


def fresh(n: int, seed: int = 0) -> tuple[float, float]:
    """(wall, CPU) seconds for ``n`` episodes, each with a context the agent has not seen (Gaussian features)."""
    env, F, P = _lock(10, seed)
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


def pool(n: int, seed: int = 0) -> float:
    """Seconds for ``run()`` of ``n`` episodes on a lock with a pool of ``n`` continuous contexts."""
    env, F, P = _lock(n, seed)
    agent = OPOCMDP(F, P, env.n_layers, env.n_states, env.n_actions, T=n, eta_scale=1000.0, gamma=0.3)
    start = time.perf_counter()
    run(env, agent, n, seed)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fresh", type=int, nargs="+", default=[100, 200, 400], help="fresh-context episode counts")
    ap.add_argument("--pool", type=int, default=2000, help="pool size = episodes for the run() path (0: skip)")
    ap.add_argument("--reference", action="store_true", help="also time v3c's step-by-step replay (no cache)")
    args = ap.parse_args()
    variants = [("fast", contextlib.nullcontext)] + ([("step-by-step", step_by_step)] if args.reference else [])
    for name, ctx in variants:
        ns, secs = [], []
        for n in args.fresh:
            with ctx():
                wall, cpu = fresh(n)
            ns.append(n)
            secs.append(cpu)
            print(f"{name:12s} fresh contexts  N={n:5d}: {wall:7.1f} s wall, {cpu:7.1f} s CPU", flush=True)
        if len(ns) >= 2:
            p = float(np.polyfit(np.log(ns), np.log(secs), 1)[0])
            est = secs[-1] * (2000 / ns[-1]) ** p
            quad = secs[-1] * (2000 / ns[-1]) ** 2
            print(
                f"{name:12s} CPU ~ N^{p:.2f}; N=2000 extrapolated: {est:.0f} s (fitted) to {quad:.0f} s (quadratic) "
                f"= {est / 60:.1f}-{quad / 60:.1f} x the 60 s target"
            )
    if args.pool:
        t = pool(args.pool)
        print(f"pool of {args.pool} contexts tracked up front, T={args.pool}: {t:.1f} s = {t / 60:.2f} x 60 s")


if __name__ == "__main__":
    main()
