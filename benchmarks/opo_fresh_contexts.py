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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from opo_cmdp_contexts import fresh  # noqa: E402  (the same episode loop: Gaussian contexts, never seen before)

TARGET_S = 60.0


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
