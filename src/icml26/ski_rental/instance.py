"""The ski-rental instance: costs, exact expected competitive ratios, worst-case ratios, distributions.

Conventions (days are 1-based everywhere in the public API):

* renting costs 1 per day, buying costs the integer ``B = buy_cost >= 2``;
* the season lasts ``x`` days, ``x`` in ``{1, ..., N}`` with ``N = horizon``; a prediction or a truth is a pmf
  ``P`` of length ``N`` with ``P[x - 1] = Pr(x)`` (the helpers below lump the tail ``x >= N`` into day ``N``);
* the deterministic policy ``A_k`` rents on days ``1..k-1`` and buys at the start of day ``k``, for buy days
  ``k`` in ``{1, ..., N + 1}``; ``k = N + 1`` means "never buy within the horizon";
* ``ALG_k(x) = x`` if ``x < k`` else ``k - 1 + B``;  ``OPT(x) = min(x, B)``.

For every ``k <= N`` the worst case over ``x`` in ``{1..N}`` is attained at some ``x <= max(k, B) <= N``, so
worst-case ratios of policies that buy within the horizon equal the classical unbounded-horizon ones.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.special import ndtr

__all__ = [
    "SkiRental",
    "minimax_ratio",
    "discretized_gaussian",
    "geometric",
    "bimodal",
    "point_mass",
    "shift",
]

_OBJECTIVES = ("expected_ratio", "ratio_of_expectations")
_PMF_TOL = 1e-9


def minimax_ratio(buy_cost: int) -> float:
    """The optimal randomized competitive ratio ``c_B = 1 / (1 - (1 - 1/B)^B)`` (Karlin et al. 1994).

    It tends to ``e / (e - 1) = 1.58198...`` as ``B -> infinity``; ``B = 10`` gives 1.5353399327876.
    """
    b = _check_buy_cost(buy_cost)
    return 1.0 / (1.0 - (1.0 - 1.0 / b) ** b)


def _check_buy_cost(buy_cost: Any) -> int:
    if isinstance(buy_cost, bool) or not isinstance(buy_cost, Integral):
        raise TypeError(f"buy_cost must be an integer >= 2, got {type(buy_cost).__name__} {buy_cost!r}")
    if buy_cost < 2:
        raise ValueError(f"buy_cost must be an integer >= 2, got {buy_cost}")
    return int(buy_cost)


def _check_horizon(horizon: Any, buy_cost: int | None = None) -> int:
    if isinstance(horizon, bool) or not isinstance(horizon, Integral):
        raise TypeError(f"horizon must be an integer, got {type(horizon).__name__} {horizon!r}")
    if buy_cost is None:
        if horizon < 2:
            raise ValueError(f"horizon must be an integer >= 2, got {horizon}")
    elif horizon < 2 * buy_cost:
        raise ValueError(
            f"horizon must be an integer >= 2 * buy_cost = {2 * buy_cost} (with a shorter season never "
            f"buying is nearly free and the classical ratios no longer apply), got {horizon}"
        )
    return int(horizon)


def check_pmf(P: Any, length: int, name: str = "P") -> np.ndarray:
    """``P`` as a float64 array, after checking it is a pmf over ``{1..length}`` (errors name ``name``)."""
    if P is None:
        raise ValueError(
            f"{name} is required: a 1-D pmf of length horizon={length} (days 1..{length}, non-negative, "
            "summing to 1), got None"
        )
    a = np.asarray(P, dtype=float)
    if a.ndim != 1 or a.shape[0] != length:
        raise ValueError(f"{name} must be a 1-D pmf of length horizon={length} (days 1..{length}), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    if a.min() < -_PMF_TOL:
        raise ValueError(f"{name} must be non-negative (a pmf), got a minimum of {a.min():.3g}")
    if abs(a.sum() - 1.0) > 1e-6:
        raise ValueError(f"{name} must sum to 1 (a pmf), got a sum of {a.sum():.12g}")
    return a


class SkiRental:
    """A discrete ski-rental instance with buy cost ``B`` and season length at most ``N`` days.

    Parameters
    ----------
    buy_cost:
        ``B``, integer >= 2 (renting costs 1 per day).
    horizon:
        ``N``, integer >= ``2 B``: the longest possible season.  Pmfs have length ``N``.
    objective:
        ``"expected_ratio"`` (default): ``ECR_P(k) = E_{x~P}[ALG_k(x) / OPT(x)]`` (Fujiwara and Iwama's
        average-case ratio); ``"ratio_of_expectations"``: ``E_P[ALG_k] / E_P[OPT]``.

    Attributes
    ----------
    buy_days: ``[1, ..., N + 1]`` (the index ``k - 1`` of every per-buy-day array).
    days: ``[1, ..., N]`` (the index ``x - 1`` of every pmf).
    opt: ``OPT(x) = min(x, B)`` for every day.
    """

    def __init__(self, buy_cost: int, horizon: int, objective: str = "expected_ratio") -> None:
        self.buy_cost = _check_buy_cost(buy_cost)
        self.horizon = _check_horizon(horizon, self.buy_cost)
        if objective not in _OBJECTIVES:
            raise ValueError(f"objective must be one of {_OBJECTIVES}, got {objective!r}")
        self.objective = objective
        self.days = np.arange(1, self.horizon + 1)
        self.buy_days = np.arange(1, self.horizon + 2)
        self.opt = np.minimum(self.days, self.buy_cost).astype(float)
        self._ratio_matrix: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"SkiRental(buy_cost={self.buy_cost}, horizon={self.horizon}, objective={self.objective!r})"

    # -- checks --------------------------------------------------------------------------------------------
    def check_pmf(self, P: Any, name: str = "P") -> np.ndarray:
        """``P`` as a float array, after checking it is a pmf over days ``1..N`` (errors name ``name``)."""
        return check_pmf(P, self.horizon, name)

    def check_buy_day(self, k: Any, name: str = "k") -> int:
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"{name} must be an integer buy day in [1, {self.horizon + 1}], got {k!r}")
        if not 1 <= k <= self.horizon + 1:
            raise ValueError(f"{name} must be a buy day in [1, horizon + 1 = {self.horizon + 1}], got {k}")
        return int(k)

    def check_distribution(self, pi: Any, name: str = "pi") -> np.ndarray:
        """A pmf over buy days ``1..N+1``; shorter vectors are padded with zeros (buy days never used)."""
        a = np.asarray(pi, dtype=float)
        if a.ndim != 1 or not 1 <= a.shape[0] <= self.horizon + 1:
            raise ValueError(
                f"{name} must be a 1-D pmf over buy days 1..{self.horizon + 1} "
                f"(length <= {self.horizon + 1}), got shape {a.shape}"
            )
        a = check_pmf(a, a.shape[0], name)
        return np.concatenate([a, np.zeros(self.horizon + 1 - a.shape[0])])

    # -- costs ---------------------------------------------------------------------------------------------
    @property
    def ratio_matrix(self) -> np.ndarray:
        """``R[k-1, x-1] = ALG_k(x) / OPT(x)``, shape ``(N+1, N)``, built on first use (O(N^2) memory)."""
        if self._ratio_matrix is None:
            self._ratio_matrix = self.cost_matrix() / self.opt[None, :]
        return self._ratio_matrix

    def cost_matrix(self) -> np.ndarray:
        """``ALG_k(x)`` for every buy day ``k`` (rows) and day ``x`` (columns)."""
        k = self.buy_days[:, None].astype(float)
        x = self.days[None, :].astype(float)
        return np.where(x < k, x, k - 1 + self.buy_cost)

    def expected_cost_all(self, P: Any) -> np.ndarray:
        """``E_{x~P}[ALG_k(x)]`` for every buy day ``k`` in ``1..N+1`` (prefix/suffix sums, O(N))."""
        P = self.check_pmf(P)
        below = np.concatenate([[0.0], np.cumsum(P * self.days)])  # sum_{x<k} x P(x)
        tail = 1.0 - np.concatenate([[0.0], np.cumsum(P)])  # sum_{x>=k} P(x)
        return below + (self.buy_days - 1 + self.buy_cost) * np.clip(tail, 0.0, None)

    def ecr_all(self, P: Any) -> np.ndarray:
        """The objective for every buy day ``k`` in ``1..N+1`` (index ``k-1``), exactly, in O(N).

        ``ECR_P(k) = sum_{x<k} P(x) x / min(x,B) + (k - 1 + B) sum_{x>=k} P(x) / min(x,B)`` (expected ratio),
        or ``E_P[ALG_k] / E_P[OPT]`` with ``objective="ratio_of_expectations"``.
        """
        P = self.check_pmf(P)
        if self.objective == "ratio_of_expectations":
            return self.expected_cost_all(P) / float(P @ self.opt)
        return self.ratio_matrix_times(P)

    def ratio_matrix_times(self, w: np.ndarray) -> np.ndarray:
        """``R @ w`` for any weights ``w`` over days, in O(N) without building ``R``:
        ``sum_{x<k} w(x) x / OPT(x) + (k - 1 + B) sum_{x>=k} w(x) / OPT(x)``."""
        v = np.asarray(w, dtype=float) / self.opt
        below = np.concatenate([[0.0], np.cumsum(v * self.days)])
        suffix = np.concatenate([np.cumsum(v[::-1])[::-1], [0.0]])  # sum_{x>=k} w(x)/OPT(x)
        return below + (self.buy_days - 1 + self.buy_cost) * suffix

    def ecr(self, k: int, P: Any) -> float:
        """``ECR_P(k)`` for one buy day ``k`` in ``1..N+1``."""
        k = self.check_buy_day(k)
        return float(self.ecr_all(P)[k - 1])

    def optimal_threshold(self, P: Any) -> tuple[int, float]:
        """``(k*, ECR_P(k*))`` with ``k* = argmin_k ECR_P(k)`` (smallest ``k`` on ties)."""
        e = self.ecr_all(P)
        i = int(np.argmin(e))
        return i + 1, float(e[i])

    # -- worst case ----------------------------------------------------------------------------------------
    def ratio_profile(self, pi: Any) -> np.ndarray:
        """``E_{k~pi}[ALG_k(x)] / OPT(x)`` for every day ``x`` (O(N) via the CDF ``F`` of ``pi``).

        ``E[ALG(x)] = x + (B - 1) F(x) - S(x-1)`` with ``F(x) = sum_{k<=x} pi_k`` and
        ``S(x) = sum_{j<=x} F(j)``.
        """
        pi = self.check_distribution(pi)
        F = np.cumsum(pi[: self.horizon])
        S_prev = np.concatenate([[0.0], np.cumsum(F)[:-1]])
        return (self.days + (self.buy_cost - 1) * F - S_prev) / self.opt

    def worst_case_ratio(self, policy_or_distribution: Any) -> float:
        """``max_x E_{k~pi}[ALG_k(x)] / OPT(x)`` over ``x`` in ``1..N``.

        Accepts a buy day (int), a pmf over buy days ``1..N+1`` (array), or a fitted estimator with a
        ``distribution_`` attribute (e.g. :class:`RobustStoppingDistribution`).  Policies that need a
        prediction are evaluated with :func:`evaluate`.
        """
        p = policy_or_distribution
        if hasattr(p, "distribution_"):
            p = p.distribution_
        if isinstance(p, Integral) and not isinstance(p, bool):
            k = self.check_buy_day(p, "policy_or_distribution")
            if k == self.horizon + 1:
                return self.horizon / self.buy_cost
            return (k - 1 + self.buy_cost) / min(k, self.buy_cost)
        if isinstance(p, (list, tuple, np.ndarray)):
            return float(self.ratio_profile(self.check_distribution(p, "policy_or_distribution")).max())
        raise TypeError(
            "policy_or_distribution must be a buy day (int), a pmf over buy days (array) or a fitted "
            f"estimator with distribution_, got {type(policy_or_distribution).__name__}"
        )


# -- distributions over days 1..N ---------------------------------------------------------------------------
def _check_positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number > 0, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite real number > 0, got {value}")
    return float(value)


def discretized_gaussian(mu: float, sigma: float, horizon: int) -> np.ndarray:
    """``N(mu, sigma^2)`` rounded to days ``1..N``: ``P(x) = Phi((x+.5-mu)/sigma) - Phi((x-.5-mu)/sigma)``.

    Mass below day 1 goes to day 1 and mass above day ``N`` to day ``N`` (the tail bucket).
    """
    if isinstance(mu, bool) or not isinstance(mu, Real) or not math.isfinite(mu):
        raise TypeError(f"mu must be a finite real number, got {mu!r}")
    sigma = _check_positive(sigma, "sigma")
    n = _check_horizon(horizon)
    edges = np.arange(1, n, dtype=float) + 0.5  # boundaries between consecutive days
    cdf = np.concatenate([[0.0], ndtr((edges - mu) / sigma), [1.0]])
    return np.diff(cdf)


def geometric(q: float, horizon: int) -> np.ndarray:
    """``P(x) = (1 - q)^(x-1) q`` for ``x < N`` and the tail ``(1 - q)^(N-1)`` on day ``N`` (mean ``1/q``)."""
    q = _check_positive(q, "q")
    if q > 1:
        raise ValueError(f"q must lie in (0, 1], got {q}")
    n = _check_horizon(horizon)
    x = np.arange(1, n + 1)
    P = (1.0 - q) ** (x - 1) * q
    P[-1] = (1.0 - q) ** (n - 1)
    return P


def bimodal(mu1: float, sigma1: float, mu2: float, sigma2: float, horizon: int, weight: float = 0.5) -> np.ndarray:
    """``weight * N(mu1, sigma1^2) + (1 - weight) * N(mu2, sigma2^2)``, each discretised as above."""
    if isinstance(weight, bool) or not isinstance(weight, Real) or not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must lie in [0, 1], got {weight!r}")
    return weight * discretized_gaussian(mu1, sigma1, horizon) + (1 - weight) * discretized_gaussian(
        mu2, sigma2, horizon
    )


def point_mass(day: int, horizon: int) -> np.ndarray:
    """All mass on one day ``day`` in ``1..N``."""
    n = _check_horizon(horizon)
    if isinstance(day, bool) or not isinstance(day, Integral) or not 1 <= day <= n:
        raise ValueError(f"day must be an integer in [1, horizon={n}], got {day!r}")
    P = np.zeros(n)
    P[day - 1] = 1.0
    return P


def shift(P: Any, days: int) -> np.ndarray:
    """``P`` moved by ``days`` (positive: later), mass pushed past either end kept on day 1 or day ``N``."""
    a = np.asarray(P, dtype=float)
    if a.ndim != 1 or a.size < 2:
        raise ValueError(f"P must be a 1-D pmf with at least 2 days, got shape {a.shape}")
    a = check_pmf(a, a.size, "P")
    if isinstance(days, bool) or not isinstance(days, Integral):
        raise TypeError(f"days must be an integer, got {days!r}")
    n = a.size
    idx = np.clip(np.arange(n) + int(days), 0, n - 1)
    return np.bincount(idx, weights=a, minlength=n)
