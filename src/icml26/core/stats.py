"""Statistics over seeds: means with confidence intervals and paired tests.

All functions take plain sequences of floats (one value per seed or per paired instance) and return plain
floats, so they can be written to JSON as they are.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Estimate", "mean_ci", "paired_wilcoxon", "paired_bootstrap"]


def _as_1d(values: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=float).ravel()
    if a.size == 0:
        raise ValueError(f"{name} must hold at least one value, got an empty sequence")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a[~np.isfinite(a)][:3].tolist()}")
    return a


def _paired_diff(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    x, y = _as_1d(a, "a"), _as_1d(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"a and b must be paired (same length), got {x.size} and {y.size}")
    return x - y


@dataclass(frozen=True)
class Estimate:
    """Mean of ``n`` values with their sample standard deviation and a two-sided t confidence interval."""

    mean: float
    std: float
    n: int
    ci_low: float
    ci_high: float
    confidence: float

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:  # "mean ± std", as tables print it
        return f"{self.mean:.4g}" if self.n == 1 or self.std == 0.0 else f"{self.mean:.4g} ± {self.std:.2g}"


def mean_ci(values: ArrayLike, confidence: float = 0.95) -> Estimate:
    """Mean, sample std (ddof=1) and the Student-t interval ``mean ± t_{(1+c)/2, n-1} · std / sqrt(n)``.  With one value
    (or zero spread) the interval collapses to the mean: the number is exact, not estimated."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    a = _as_1d(values, "values")
    n, mean = int(a.size), float(a.mean())
    std = float(a.std(ddof=1)) if n > 1 else 0.0
    if n == 1 or std == 0.0:
        return Estimate(mean, std, n, mean, mean, confidence)
    from scipy import stats as _st  # imported on use: the CLI starts without scipy
    half = float(_st.t.ppf((1 + confidence) / 2, n - 1) * std / np.sqrt(n))
    return Estimate(mean, std, n, mean - half, mean + half, confidence)


def paired_wilcoxon(a: ArrayLike, b: ArrayLike, alternative: str = "greater") -> tuple[float, float]:
    """Wilcoxon signed-rank test on the paired differences ``a - b``; returns ``(statistic, p_value)``.
    ``alternative="greater"`` tests whether ``a`` tends to exceed ``b``.  All-zero differences give ``p = 1`` (no
    evidence either way) instead of scipy's error."""
    if alternative not in ("greater", "less", "two-sided"):
        raise ValueError(f"alternative must be 'greater', 'less' or 'two-sided', got {alternative!r}")
    d = _paired_diff(a, b)
    if np.all(d == 0):
        return 0.0, 1.0
    from scipy import stats as _st
    res = _st.wilcoxon(d, alternative=alternative, zero_method="wilcox")
    return float(res.statistic), float(res.pvalue)


def paired_bootstrap(a: ArrayLike, b: ArrayLike, n_boot: int = 10_000, confidence: float = 0.95,
                     seed: int = 0) -> tuple[float, float, float, float]:
    """Percentile bootstrap of the mean paired difference ``mean(a - b)``, resampling the pairs with replacement.
    Returns ``(mean_diff, ci_low, ci_high, p_greater)`` where ``p_greater`` is the one-sided bootstrap p-value for
    ``mean(a - b) > 0``: the share of resampled means that are ``<= 0``."""
    if n_boot < 100:
        raise ValueError(f"n_boot must be >= 100, got {n_boot}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    d = _paired_diff(a, b)
    boot = d[np.random.default_rng(seed).integers(0, d.size, size=(n_boot, d.size))].mean(axis=1)
    lo, hi = np.quantile(boot, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(d.mean()), float(lo), float(hi), float(np.mean(boot <= 0.0))
