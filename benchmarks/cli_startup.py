"""Start-up time of the CLI: ``icml26 list`` and ``icml26 --help`` against ``python -c "import torch"``.

The registry reads a static manifest, so listing papers imports no paper module and no torch.  We time each
command as a whole process (median of ``--repeats``) and report it beside the time of importing torch alone in
the same run; the target is ``icml26 list`` < 2 s wall on 2 cores.

    python benchmarks/cli_startup.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time


def wall(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    out = tempfile.mkdtemp()
    cli = [sys.executable, "-c", "from icml26.cli import main; main()"]
    rows = {
        "icml26 list": wall(cli + ["list", "--out", out], args.repeats),
        "icml26 --help": wall(cli + ["--help"], args.repeats),
        "import torch (reference)": wall([sys.executable, "-c", "import torch"], args.repeats),
    }
    ref = rows["import torch (reference)"]
    print(f"{'command':<26} {'median wall (s)':>16} {'ratio to import torch':>22}")
    for name, t in rows.items():
        print(f"{name:<26} {t:>16.3f} {t / ref:>22.2f}")
    print(f"target: icml26 list < 2 s -> {'met' if rows['icml26 list'] < 2.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
