"""Gaussian-mechanism calibration: classic (Dwork & Roth, Thm A.1) and analytic (Balle & Wang, ICML 2018).

For a query of l2-sensitivity ``Delta``, adding ``N(0, sigma^2 I)`` gives ``(epsilon, delta)``-indistinguishability

- classic: ``sigma = Delta * sqrt(2 ln(1.25 / delta)) / epsilon`` (valid for ``0 < epsilon <= 1``);
- analytic: the smallest ``sigma`` with ``Phi(Delta/(2 sigma) - epsilon sigma/Delta)
  - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta) <= delta`` (any ``epsilon > 0``; never larger).

:func:`sensitivity_threshold` inverts either: the largest ``Delta`` a given ``sigma`` covers (SIFU's ``psi*``).
"""

from __future__ import annotations

import math

from scipy.stats import norm

__all__ = ["gaussian_sigma", "analytic_gaussian_sigma", "gaussian_delta", "sensitivity_threshold", "check_privacy"]


def check_privacy(epsilon: float, delta: float, mechanism: str = "classic") -> tuple[float, float]:
    """Validate ``(epsilon, delta)``: ``delta`` in ``(0, 1)``; ``epsilon`` in ``(0, 1]`` (classic) or ``> 0``."""
    if mechanism not in ("classic", "analytic"):
        raise ValueError(f"mechanism must be 'classic' or 'analytic', got {mechanism!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon):
        raise TypeError(f"epsilon must be a finite number, got {epsilon!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)):
        raise TypeError(f"delta must be a number, got {delta!r}")
    if mechanism == "classic" and not 0.0 < epsilon <= 1.0:
        raise ValueError(
            f"epsilon must lie in (0, 1] for the classic Gaussian mechanism, got {epsilon!r} "
            "(use mechanism='analytic' for epsilon > 1)"
        )
    if mechanism == "analytic" and not epsilon > 0.0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    return float(epsilon), float(delta)


def _check_sens(sensitivity: float) -> float:
    if not (isinstance(sensitivity, (int, float)) and math.isfinite(sensitivity) and sensitivity >= 0):
        raise ValueError(f"sensitivity must be a finite number >= 0, got {sensitivity!r}")
    return float(sensitivity)


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Classic calibration ``sigma = sensitivity * sqrt(2 ln(1.25/delta)) / epsilon`` (``0 < epsilon <= 1``)."""
    epsilon, delta = check_privacy(epsilon, delta, "classic")
    return _check_sens(sensitivity) * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """The exact ``delta(epsilon)`` of the Gaussian mechanism (Balle & Wang 2018, Thm 8)."""
    sensitivity = _check_sens(sensitivity)
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma!r}")
    if sensitivity == 0:
        return 0.0
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return float(norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float, tol: float = 1e-12) -> float:
    """Smallest ``sigma`` with ``gaussian_delta(epsilon, sigma, sensitivity) <= delta`` (bisection; ``delta(sigma)``
    decreases in ``sigma``).  Scales linearly in ``sensitivity``."""
    epsilon, delta = check_privacy(epsilon, delta, "analytic")
    sensitivity = _check_sens(sensitivity)
    if sensitivity == 0:
        return 0.0
    lo, hi = 1e-6, 1.0
    while gaussian_delta(epsilon, hi, 1.0) > delta:
        hi *= 2.0
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if gaussian_delta(epsilon, mid, 1.0) <= delta else (mid, hi)
    return hi * sensitivity


def sensitivity_threshold(epsilon: float, delta: float, sigma: float, mechanism: str = "classic") -> float:
    """``psi*``: the largest sensitivity that noise ``sigma`` covers at ``(epsilon, delta)``; classic
    ``psi* = epsilon * sigma / sqrt(2 ln(1.25/delta))``."""
    check_privacy(epsilon, delta, mechanism)
    if not (isinstance(sigma, (int, float)) and sigma >= 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
    per_unit = (
        gaussian_sigma(epsilon, delta, 1.0) if mechanism == "classic" else analytic_gaussian_sigma(epsilon, delta, 1.0)
    )
    return float(sigma) / per_unit
