"""Tiny functions guarded by checks, for the mutant machinery's tests (tests/core/test_controls.py)."""

import numpy as np


def clip_to_norm(v: np.ndarray, c: float) -> np.ndarray:
    """Scale ``v`` down to norm at most ``c`` (DP-SGD's per-sample clipping)."""
    n = float(np.linalg.norm(v))
    return v if n <= c else v * (c / n)


def coverage(scores: np.ndarray, q: float) -> float:
    """Share of ``scores`` at or below the ``q`` quantile of themselves (a split-conformal coverage, ~q)."""
    return float(np.mean(scores <= np.quantile(scores, q)))


def mean_estimate(x: np.ndarray) -> float:
    return float(np.mean(x))


def clipped_norms(seed: int, c: float = 1.0) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(np.linalg.norm(clip_to_norm(rng.normal(0, 3, 5), c))) for _ in range(20)]
