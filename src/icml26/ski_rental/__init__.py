"""Ski rental with distributional advice (after Kim and Fan, ICML 2026, arXiv 2603.29233).

The idea: instead of one predicted season length, the algorithm receives a whole predicted distribution
``P_hat`` over the number of ski days and picks the buy day that minimises the expected competitive ratio
under it.  To stay safe when the prediction is wrong, the deterministic *Clamp* policy restricts that buy
day to a range ``[ceil(lam B), ceil(B / lam)]`` whose every point is ``(1 + 1/lam)``-competitive, and the
randomized *water-filling* policy solves a linear program for the best buy-day distribution whose
worst-case ratio is at most a chosen ``gamma``.  Everything is computed exactly (prefix sums and an LP),
with no Monte Carlo.

Notation -> names
-----------------
=============================  ===========================================================================
paper                          here
=============================  ===========================================================================
B (buy cost), rent = 1/day     ``SkiRental(buy_cost=B, horizon=N)``
x ~ P, prediction P_hat        pmfs of length N (day x at index x - 1): ``discretized_gaussian``,
                               ``geometric``, ``bimodal``, ``point_mass``, ``shift``
A_k: buy at start of day k     buy day ``k`` in ``1..N+1`` (``N + 1``: never buy)
ECR_P(k) = E[ALG_k / OPT]      ``inst.ecr(k, P)``, ``inst.ecr_all(P)`` (all k at once, O(N))
k* = argmin_k ECR_P(k)         ``inst.optimal_threshold(P)``, ``OptimalThreshold()`` (oracle if fed P)
worst-case ratio               ``inst.worst_case_ratio(k | pi | fitted)``
c_B = 1/(1 - (1 - 1/B)^B)      ``minimax_ratio(B)``
Clamp policy, lambda           ``ClampPolicy(lam)`` (clamp the global argmin into the safe range) or
                               ``ClampPolicy(lam, mode="range_argmin")`` (argmin within the range)
water-filling, gamma           ``RobustStoppingDistribution(gamma)`` (alias ``WaterFilling``): ``.fit``,
                               ``.distribution_``, ``.water_level_`` (nu), ``.multipliers_`` (mu)
baselines                      ``BreakEven``, ``KarlinRandomized``, ``PSKDeterministic``,
                               ``PSKRandomized``, ``CuiDinitz``
=============================  ===========================================================================

Example
-------
>>> from icml26.ski_rental import SkiRental, ClampPolicy, bimodal, evaluate
>>> inst = SkiRental(buy_cost=100, horizon=1000)
>>> P = bimodal(10, 3, 300, 40, horizon=1000)
>>> res = evaluate(ClampPolicy(0.5), inst, P_true=P, P_hat=P)
>>> res["worst_case"] <= 1 + 1 / 0.5
True
"""

from .baselines import (
    BreakEven,
    CuiDinitz,
    KarlinRandomized,
    PSKDeterministic,
    PSKRandomized,
    point_prediction,
)
from .instance import (
    SkiRental,
    bimodal,
    discretized_gaussian,
    geometric,
    minimax_ratio,
    point_mass,
    shift,
)
from .policies import ClampPolicy, OptimalThreshold, RobustStoppingDistribution, WaterFilling, evaluate

__all__ = [
    "SkiRental",
    "minimax_ratio",
    "discretized_gaussian",
    "geometric",
    "bimodal",
    "point_mass",
    "shift",
    "OptimalThreshold",
    "ClampPolicy",
    "RobustStoppingDistribution",
    "WaterFilling",
    "evaluate",
    "BreakEven",
    "KarlinRandomized",
    "PSKDeterministic",
    "PSKRandomized",
    "CuiDinitz",
    "point_prediction",
]
