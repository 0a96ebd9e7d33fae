"""One call seeds every random source an experiment touches."""

from __future__ import annotations

import os
import random

import numpy as np

__all__ = ["seed_everything", "set_threads", "default_threads"]


def seed_everything(seed: int) -> np.random.Generator:
    """Seed python's ``random``, numpy's legacy global state and torch; return a fresh numpy ``Generator``.  Prefer the
    returned generator (and ``torch.Generator`` objects) over global state in new code."""
    import torch  # imported on use: core imports without torch
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def default_threads() -> int:
    """``ICML26_NUM_THREADS`` if set, else the number of CPUs, at most 4."""
    env = os.environ.get("ICML26_NUM_THREADS")
    try:
        return int(env) if env else min(os.cpu_count() or 1, 4)
    except ValueError:
        raise ValueError(f"ICML26_NUM_THREADS must be a positive integer, got {env!r}") from None


def set_threads(n: int | None = None) -> int:
    """Set torch's intra-op threads to ``n`` (default :func:`default_threads`; set ``ICML26_NUM_THREADS=1`` on a
    machine shared with other jobs: tiny models slow down badly when threads are oversubscribed) and return it."""
    import torch
    n = default_threads() if n is None else n
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    torch.set_num_threads(n)
    return n
