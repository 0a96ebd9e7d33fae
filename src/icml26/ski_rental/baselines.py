"""What the distributional policies are compared against.

* :class:`BreakEven` -- buy on day ``B`` (deterministic ratio ``2 - 1/B``), no prediction.
* :class:`KarlinRandomized` -- Karlin, Manasse, McGeoch and Owicki (1994): ``pi_k ∝ (1 - 1/B)^(B - k)`` on
  ``k = 1..B``, worst-case ratio ``c_B = 1/(1 - (1 - 1/B)^B)``, no prediction.
* :class:`PSKDeterministic`, :class:`PSKRandomized` -- Purohit, Svitkina and Kumar (NeurIPS 2018) with a point
  prediction ``y`` taken from ``P_hat`` (median by default).
* :class:`CuiDinitz` -- Cui and Dinitz (arXiv 2602.21104): a distributional policy for expected *cost* with a
  tail cut-off.
* The oracle is :class:`~icml26.ski_rental.policies.OptimalThreshold` fed the true pmf.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .instance import SkiRental
from .policies import _ceil, _check_inst, _floor, check_lam, check_prediction

__all__ = [
    "BreakEven",
    "KarlinRandomized",
    "PSKDeterministic",
    "PSKRandomized",
    "CuiDinitz",
    "point_prediction",
]

_POINTS = ("median", "mean", "mode")


def point_prediction(P_hat: np.ndarray, point: str = "median") -> float:
    """A point summary of a pmf over days ``1..N``: the median (smallest x with CDF >= 1/2), mean or mode."""
    P_hat = np.asarray(P_hat, dtype=float) if not isinstance(P_hat, np.ndarray) else P_hat
    if P_hat.ndim != 1 or P_hat.size == 0 or not np.all(np.isfinite(P_hat)) or np.any(P_hat < 0):
        raise ValueError(f"P_hat must be a non-empty 1-D pmf of non-negative numbers, got shape {P_hat.shape}")
    if abs(float(P_hat.sum()) - 1.0) > 1e-6:
        raise ValueError(f"P_hat must sum to 1 (a pmf over days 1..N), got {float(P_hat.sum()):.6g}")
    days = np.arange(1, P_hat.size + 1)
    if point == "median":
        return float(days[int(np.searchsorted(np.cumsum(P_hat), 0.5 - 1e-12))])
    if point == "mean":
        return float(P_hat @ days)
    if point == "mode":
        return float(days[int(np.argmax(P_hat))])
    raise ValueError(f"point must be one of {_POINTS}, got {point!r}")


def _check_point(point: Any) -> str:
    if point not in _POINTS:
        raise ValueError(f"point must be one of {_POINTS}, got {point!r}")
    return point


class BreakEven:
    """Buy on day ``B``: worst-case ratio ``(2B - 1)/B``, the best deterministic one without predictions."""

    def buy_day(self, inst: SkiRental, P_hat: Any = None) -> int:
        return _check_inst(inst).buy_cost

    def __repr__(self) -> str:
        return "BreakEven()"


class KarlinRandomized:
    """Buy on day ``k`` in ``1..B`` with probability ``(1 - 1/B)^(B - k) / (B (1 - (1 - 1/B)^B))``.

    Every day ``x <= B`` is tight: ``E[ALG(x)] / OPT(x) = c_B``, the optimal randomized ratio.
    """

    def distribution(self, inst: SkiRental, P_hat: Any = None) -> np.ndarray:
        b = _check_inst(inst).buy_cost
        pi = np.zeros(inst.horizon + 1)
        pi[:b] = _truncated_exponential(b, b)
        return pi

    def __repr__(self) -> str:
        return "KarlinRandomized()"


def _truncated_exponential(b: int, k: int) -> np.ndarray:
    """``q_i = ((B-1)/B)^(k-i) / (B (1 - (1 - 1/B)^k))`` for ``i = 1..k`` (sums to 1)."""
    r = (b - 1) / b
    i = np.arange(1, k + 1)
    q = r ** (k - i) / (b * (1.0 - r**k))
    return q / q.sum()  # removes float rounding only; the closed form already sums to 1


class PSKDeterministic:
    """Purohit, Svitkina and Kumar's deterministic rule with point prediction ``y``.

    ``y >= B``: buy on day ``ceil(lam B)``; otherwise on day ``ceil(B / lam)`` (capped at ``N + 1``).
    Robust ``1 + 1/lam``, consistent ``1 + lam``.  ``y`` is the ``point`` summary of ``P_hat``.
    """

    def __init__(self, lam: float, point: str = "median") -> None:
        self.lam = check_lam(lam)
        self.point = _check_point(point)

    def buy_day(self, inst: SkiRental, P_hat: Any) -> int:
        inst = _check_inst(inst)
        y = point_prediction(check_prediction(inst, P_hat, repr(self)), self.point)
        b = inst.buy_cost
        k = max(1, _ceil(self.lam * b)) if y >= b else _ceil(b / self.lam)
        return min(k, inst.horizon + 1)

    def __repr__(self) -> str:
        return f"PSKDeterministic(lam={self.lam:g}, point={self.point!r})"


class PSKRandomized:
    """Purohit, Svitkina and Kumar's randomized rule with point prediction ``y``.

    ``k = floor(lam B)`` if ``y >= B`` else ``ceil(B / lam)``; buy on day ``i`` in ``1..k`` with probability
    ``((B-1)/B)^(k-i) / (B (1 - (1 - 1/B)^k))``.  Robust ``1/(1 - e^{-(lam - 1/B)})``, consistent
    ``lam / (1 - e^{-lam})``.  Days after ``N`` are "never buy" here (the season ends by day ``N``).
    """

    def __init__(self, lam: float, point: str = "median") -> None:
        self.lam = check_lam(lam)
        self.point = _check_point(point)

    def distribution(self, inst: SkiRental, P_hat: Any) -> np.ndarray:
        inst = _check_inst(inst)
        y = point_prediction(check_prediction(inst, P_hat, repr(self)), self.point)
        b, n = inst.buy_cost, inst.horizon
        k = max(1, _floor(self.lam * b)) if y >= b else _ceil(b / self.lam)
        q = _truncated_exponential(b, k)
        pi = np.zeros(n + 1)
        m = min(k, n + 1)
        pi[:m] = q[:m]
        pi[n] += q[m:].sum()  # buying after day N == never buying
        return pi

    def __repr__(self) -> str:
        return f"PSKRandomized(lam={self.lam:g}, point={self.point!r})"


class CuiDinitz:
    """Cui and Dinitz's algorithm for distributional predictions of unknown quality (expected-cost objective).

    With ``A_K`` = "rent ``K`` days, buy on day ``K + 1``":  ``K_hat = argmin_K E_{P_hat}[cost(A_K)]``;
    ``U = min{t >= 0 : P_hat(x > t) <= 1/sqrt(B)}``; run ``A_{K*}`` with
    ``K* = min(K_hat, U) + floor(sqrt(B))``, i.e. buy on day ``K* + 1`` (capped at ``N + 1``).
    Additive guarantee ``OPT + O(min(sqrt(B) max(eta, 1), B log B))`` with ``eta = W1(P, P_hat)``.
    """

    def buy_day(self, inst: SkiRental, P_hat: Any) -> int:
        inst = _check_inst(inst)
        P_hat = check_prediction(inst, P_hat, repr(self))
        b, n = inst.buy_cost, inst.horizon
        k_hat = int(np.argmin(inst.expected_cost_all(P_hat))) + 1  # buy day; K_hat = k_hat - 1
        tail = 1.0 - np.concatenate([[0.0], np.cumsum(P_hat)])  # tail[t] = P_hat(x > t), t = 0..N
        u = int(np.argmax(tail <= 1.0 / math.sqrt(b) + 1e-12))
        k_star = min(k_hat - 1, u) + math.isqrt(b)
        return min(k_star + 1, n + 1)

    def __repr__(self) -> str:
        return "CuiDinitz()"
