"""The distributional policies: optimal threshold, Clamp, the robust stopping distribution (LP), evaluation.

A policy either decides one buy day (``buy_day(inst, P_hat) -> int``, deterministic) or a distribution over
buy days (``distribution(inst, P_hat) -> array of length N + 1``, randomized).  :func:`evaluate` scores any of
them exactly against the true pmf.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .instance import SkiRental, minimax_ratio

__all__ = [
    "OptimalThreshold",
    "ClampPolicy",
    "RobustStoppingDistribution",
    "WaterFilling",
    "evaluate",
]


def _ceil(x: float) -> int:
    """``ceil`` that ignores float noise (``0.3 * 100 = 30.000000000000004`` -> 30)."""
    return int(math.ceil(x - 1e-9))


def _floor(x: float) -> int:
    return int(math.floor(x + 1e-9))


def check_lam(lam: Any) -> float:
    if isinstance(lam, bool) or not isinstance(lam, Real):
        raise TypeError(f"lam must be a real number in (0, 1], got {lam!r}")
    if not (0.0 < lam <= 1.0):
        raise ValueError(f"lam must lie in (0, 1], got {lam}")
    return float(lam)


def _check_inst(inst: Any) -> SkiRental:
    if not isinstance(inst, SkiRental):
        raise TypeError(f"inst must be a SkiRental instance, got {type(inst).__name__}")
    return inst


_CLAMP_MODES = ("clamp", "range_argmin")


def check_prediction(inst: SkiRental, P_hat: Any, who: str) -> np.ndarray:
    """``P_hat`` checked as a pmf over days ``1..N``; a missing one raises an error that says what is expected."""
    if P_hat is None:
        n = inst.horizon
        raise ValueError(
            f"{who} decides from a prediction: P_hat is required, a pmf over season lengths 1..{n} (a 1-D "
            f"array of length horizon={n}, non-negative, summing to 1), got None; pass it as "
            f"evaluate(policy, inst, P_true, P_hat) or policy.buy_day(inst, P_hat)"
        )
    return inst.check_pmf(P_hat, "P_hat")


class OptimalThreshold:
    """Buy on ``k* = argmin_k ECR_{P_hat}(k)``: the best deterministic policy if ``P_hat`` is the truth.

    Fed the true pmf, this is the *oracle* (a lower bound for every deterministic policy); fed a prediction,
    it is the unprotected distributional policy (no robustness guarantee).
    """

    def buy_day(self, inst: SkiRental, P_hat: Any) -> int:
        inst = _check_inst(inst)
        return inst.optimal_threshold(check_prediction(inst, P_hat, repr(self)))[0]

    def __repr__(self) -> str:
        return "OptimalThreshold()"


class ClampPolicy:
    """A buy day from ``P_hat`` restricted to the safe range ``[lo, hi] = [ceil(lam B), ceil(B / lam)]``.

    Two readings of "restrict the threshold to a safe range" (``mode``):

    * ``"clamp"`` (default): clamp the global optimum into the range,
      ``k_hat = argmin_{1 <= k <= N+1} ECR_{P_hat}(k)``, ``k = min(max(k_hat, lo), hi)``;
    * ``"range_argmin"``: the optimum over the range itself, ``k = argmin_{lo <= k <= hi} ECR_{P_hat}(k)``
      (smallest ``k`` on ties).

    ``hi`` is capped at ``N + 1`` ("never buy").  Every buy day in the range has worst-case ratio at most
    ``1 + 1/lam`` (``k <= B``: ``(k - 1 + B)/k``; ``k > B``: ``(k - 1 + B)/B``), whatever the prediction, so
    both modes have the same guarantee.  Both agree when ``k_hat`` lies in the range (then, with ``P_hat``
    right, they are as good as the optimal threshold).  Otherwise the clamp lands on the end of the range
    nearer ``k_hat``, while the range argmin is never worse under ``P_hat``:
    ``ECR_{P_hat}(range_argmin) <= ECR_{P_hat}(clamp)`` always (the ECR need not be unimodal in ``k``, so
    the nearer end is not always the best point of the range).  ``lam = 1`` is the break-even policy (buy
    on day ``B``) in both modes; ``lam -> 0`` recovers the unconstrained optimal threshold.

    Parameters
    ----------
    lam: trust parameter in ``(0, 1]`` (small: trust the prediction more).
    mode: ``"clamp"`` or ``"range_argmin"`` (see above).
    """

    def __init__(self, lam: float, mode: str = "clamp") -> None:
        self.lam = check_lam(lam)
        if not isinstance(mode, str) or mode not in _CLAMP_MODES:
            raise ValueError(
                f"mode must be one of {_CLAMP_MODES} ('clamp': clamp the global argmin of the predicted ECR "
                f"into the safe range; 'range_argmin': the argmin within the safe range), got {mode!r}"
            )
        self.mode = mode

    @property
    def robustness(self) -> float:
        """The guaranteed worst-case ratio ``1 + 1/lam``."""
        return 1.0 + 1.0 / self.lam

    def safe_range(self, inst: SkiRental) -> tuple[int, int]:
        """``(ceil(lam B), min(ceil(B / lam), N + 1))``."""
        b = _check_inst(inst).buy_cost
        return max(1, _ceil(self.lam * b)), min(_ceil(b / self.lam), inst.horizon + 1)

    def buy_day(self, inst: SkiRental, P_hat: Any) -> int:
        inst = _check_inst(inst)
        e = inst.ecr_all(check_prediction(inst, P_hat, repr(self)))
        lo, hi = self.safe_range(inst)
        if self.mode == "range_argmin":
            return lo + int(np.argmin(e[lo - 1 : hi]))
        k_hat = int(np.argmin(e)) + 1
        return min(max(k_hat, lo), hi)

    def __repr__(self) -> str:
        return f"ClampPolicy(lam={self.lam:g}, mode={self.mode!r})"


class RobustStoppingDistribution:
    """The best randomized buy-day distribution for ``P_hat`` subject to a worst-case ratio ``gamma``.

    Solves the linear program over ``pi`` (a pmf over buy days ``1..N+1``)::

        minimize    sum_k pi_k ECR_{P_hat}(k)
        subject to  sum_k pi_k ALG_k(x) / OPT(x) <= gamma     for every day x in 1..N   (robustness)
                    sum_k pi_k = 1,  pi >= 0

    with HiGHS (``scipy.optimize.linprog(method="highs")``), in the sparse form
    ``(B - 1) F(x) - S(x - 1) <= gamma min(x, B) - x`` where ``F`` is the CDF of ``pi`` and ``S`` its
    running sum (O(N) non-zeros).  The dual explains the name "water-filling": with multipliers
    ``mu_x >= 0`` on the robustness constraints, every buy day has the effective cost
    ``c_k + sum_x mu_x ALG_k(x)/OPT(x)``;
    ``pi`` puts mass only on days whose effective cost equals the lowest level ``nu`` (the water level), and
    ``mu_x > 0`` only on days whose constraint is tight.  ``gamma = c_B`` leaves only the classical
    distribution ``pi_k ∝ (1 - 1/B)^(B - k)``; a large ``gamma`` gives the point mass on ``argmin ECR``
    (when that point mass already meets ``gamma`` it is returned without calling the solver: it is optimal).

    Parameters
    ----------
    gamma: the robustness level, a real ``>= c_B = 1/(1 - (1 - 1/B)^B)`` (checked at ``fit``).

    Attributes (after ``fit``)
    --------------------------
    distribution_: ``pi``, shape ``(N + 1,)``, ``pi[k-1]`` = probability of buying on day ``k``.
    objective_: ``sum_k pi_k ECR_{P_hat}(k)``.
    multipliers_: ``mu``, shape ``(N,)``, duals of the robustness constraints (ratio scale, ``>= 0``).
    effective_cost_: ``c_k + (R mu)_k`` for every buy day.
    water_level_: ``nu = min_k effective_cost_`` (equals the effective cost of every day in the support).
    dual_objective_: ``nu - gamma sum_x mu_x`` (equals ``objective_`` at optimality).
    """

    def __init__(self, gamma: float) -> None:
        if isinstance(gamma, bool) or not isinstance(gamma, Real) or not math.isfinite(gamma):
            raise TypeError(f"gamma must be a finite real number >= c_B (about 1.58), got {gamma!r}")
        if gamma < 1.0:
            raise ValueError(f"gamma must be >= c_B = 1/(1 - (1 - 1/B)^B) > 1, got {gamma}")
        self.gamma = float(gamma)

    def __repr__(self) -> str:
        return f"RobustStoppingDistribution(gamma={self.gamma:g})"

    def fit(self, inst: SkiRental, P_hat: Any) -> RobustStoppingDistribution:
        inst = _check_inst(inst)
        P_hat = check_prediction(inst, P_hat, repr(self))
        b, n = inst.buy_cost, inst.horizon
        c_b = minimax_ratio(b)
        if self.gamma < c_b - 1e-12:
            raise ValueError(
                f"gamma must be >= c_B = 1/(1 - (1 - 1/B)^B) = {c_b:.10f} for buy_cost={b} (no "
                f"distribution has a smaller worst-case ratio), got {self.gamma}"
            )
        c = inst.ecr_all(P_hat)
        best = np.flatnonzero(c == c.min())  # the unconstrained optima (point masses)
        worst = np.array([inst.worst_case_ratio(int(k) + 1) for k in best])
        if worst.min() <= self.gamma:
            # The cheapest point mass already meets the bound: it is optimal over all distributions (no
            # distribution beats min_k c_k), with all multipliers zero.  Exact, and it skips the LP.
            pi = np.zeros(n + 1)
            pi[best[int(np.argmin(worst))]] = 1.0
            mu = np.zeros(n)
            self.n_iter_ = 0
        else:
            res = _solve_lp(c, b, n, self.gamma)
            pi = np.clip(res.x[: n + 1], 0.0, None)
            pi /= pi.sum()
            mu = -np.asarray(res.ineqlin.marginals) * inst.opt  # back to the ratio-scale constraints
            mu = np.clip(mu, 0.0, None)
            self.n_iter_ = int(getattr(res, "nit", -1))
        eff = c + inst.ratio_matrix_times(mu)
        self.distribution_ = pi
        self.objective_ = float(pi @ c)
        self.multipliers_ = mu
        self.effective_cost_ = eff
        self.water_level_ = float(eff.min())
        self.dual_objective_ = float(self.water_level_ - self.gamma * mu.sum())
        return self

    def distribution(self, inst: SkiRental, P_hat: Any) -> np.ndarray:
        """Fit and return ``distribution_`` (the policy interface used by :func:`evaluate`)."""
        return self.fit(inst, P_hat).distribution_


#: The paper's name for the method.
WaterFilling = RobustStoppingDistribution


def _solve_lp(c: np.ndarray, b: int, n: int, gamma: float):
    """HiGHS on variables ``z = [pi (N+1), F (N), S (N)]``; F, S are the CDF of pi and its running sum."""
    n_pi = n + 1
    eye = sp.identity(n, format="csr")
    lower = sp.eye(n, k=-1, format="csr")  # (lower @ v)[x] = v[x-1]
    zeros_pi = sp.csr_matrix((n, n_pi))
    pi_block = sp.hstack([eye, sp.csr_matrix((n, 1))])  # picks pi_1..pi_N
    # F_x - F_{x-1} - pi_x = 0 ;  S_x - S_{x-1} - F_x = 0 ;  sum pi = 1
    a_f = sp.hstack([-pi_block, eye - lower, sp.csr_matrix((n, n))])
    a_s = sp.hstack([zeros_pi, -eye, eye - lower])
    a_sum = sp.hstack([sp.csr_matrix(np.ones((1, n_pi))), sp.csr_matrix((1, 2 * n))])
    a_eq = sp.vstack([a_f, a_s, a_sum], format="csr")
    b_eq = np.concatenate([np.zeros(2 * n), [1.0]])
    # (B - 1) F_x - S_{x-1} <= gamma * min(x, B) - x
    a_ub = sp.hstack([zeros_pi, (b - 1) * eye, -lower], format="csr")
    x = np.arange(1, n + 1)
    b_ub = gamma * np.minimum(x, b) - x
    cost = np.concatenate([c, np.zeros(2 * n)])
    assert a_eq.shape[1] == a_ub.shape[1] == cost.size == n_pi + 2 * n
    res = linprog(
        cost,
        A_ub=a_ub,
        b_ub=b_ub,
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=(0, None),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if res.status != 0:
        raise RuntimeError(f"HiGHS did not solve the robust stopping LP (gamma={gamma}): {res.message}")
    return res


def evaluate(policy: Any, inst: SkiRental, P_true: Any, P_hat: Any = None) -> dict:
    """Score ``policy`` exactly: it decides from ``P_hat``; the season length follows ``P_true``.

    Returns ``{"ecr": E_{k~pi} ECR_{P_true}(k), "worst_case": max_x E_{k~pi}[ALG_k(x)]/OPT(x),
    "expected_cost": E_{k~pi} E_{x~P_true}[ALG_k(x)], "buy_day": k or None}``.  ``policy`` is an object with
    ``buy_day(inst, P_hat)`` or ``distribution(inst, P_hat)``, a buy day (int) or a pmf over buy days.
    """
    inst = _check_inst(inst)
    P_true = inst.check_pmf(P_true, "P_true")
    if P_hat is not None:
        P_hat = inst.check_pmf(P_hat, "P_hat")
    k = None
    if hasattr(policy, "distribution"):
        pi = inst.check_distribution(policy.distribution(inst, P_hat), "distribution")
    elif hasattr(policy, "buy_day"):
        k = inst.check_buy_day(policy.buy_day(inst, P_hat), "buy_day")
    elif isinstance(policy, (int, np.integer)) and not isinstance(policy, bool):
        k = inst.check_buy_day(policy, "policy")
    elif isinstance(policy, (list, tuple, np.ndarray)):
        pi = inst.check_distribution(policy, "policy")
    else:
        raise TypeError(
            "policy must have buy_day(inst, P_hat) or distribution(inst, P_hat), or be a buy day or a pmf "
            f"over buy days; got {type(policy).__name__}"
        )
    if k is not None:
        return {
            "ecr": inst.ecr(k, P_true),
            "worst_case": inst.worst_case_ratio(k),
            "expected_cost": float(inst.expected_cost_all(P_true)[k - 1]),
            "buy_day": k,
        }
    return {
        "ecr": float(pi @ inst.ecr_all(P_true)),
        "worst_case": inst.worst_case_ratio(pi),
        "expected_cost": float(pi @ inst.expected_cost_all(P_true)),
        "buy_day": None,
    }
