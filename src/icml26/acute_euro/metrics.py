"""EURO, auc-EURO and calibration errors (smooth ECE, binned ECE) for binary correctness.

Notation: ``p_hat[i]`` is a confidence in [0, 1] that output ``i`` is correct, ``correct[i]`` in {0, 1} says
whether it was; ``n1 = sum(correct)``, ``n0 = n - n1``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["euro", "euro_curve", "auc_euro", "base_rate_euro_curve", "smooth_ece", "binned_ece"]


# --------------------------------------------------------------------------------------------------- validation
def _check_inputs(p_hat, correct) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p_hat, dtype=float) if not isinstance(p_hat, np.ndarray) else p_hat.astype(float, copy=False)
    if p.ndim == 2 and p.shape[1] == 1:
        p = p[:, 0]
    if p.ndim != 1:
        raise ValueError(f"p_hat must be 1-D (one confidence per output), got shape {p.shape}")
    if p.size == 0:
        raise ValueError("p_hat must hold at least one confidence, got an empty array")
    if not np.all(np.isfinite(p)):
        raise ValueError("p_hat must be finite (no NaN or inf)")
    if p.min() < 0.0 or p.max() > 1.0:
        raise ValueError(f"p_hat must lie in [0, 1], got values in [{p.min():.4g}, {p.max():.4g}]")
    y = np.asarray(correct)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"correct must be 1-D, got shape {y.shape}")
    if y.shape[0] != p.shape[0]:
        raise ValueError(f"correct must have the same length as p_hat ({p.shape[0]}), got {y.shape[0]}")
    if y.dtype == bool:
        y = y.astype(float)
    else:
        try:
            y = y.astype(float)
        except (TypeError, ValueError) as e:
            raise TypeError(f"correct must be numeric or boolean, got dtype {y.dtype}") from e
        if not np.all((y == 0.0) | (y == 1.0)):
            bad = np.unique(y[(y != 0.0) & (y != 1.0)])[:5]
            raise ValueError(f"correct must be binary (0/1 or bool), got values such as {bad.tolist()}")
    return p, y


def _check_u(u, name: str = "u_ca") -> np.ndarray:
    a = np.asarray(u, dtype=float)
    if not np.all(np.isfinite(a)) or a.size == 0 or a.min() < 0.0 or a.max() > 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {u!r}")
    return a


# --------------------------------------------------------------------------------------------------- EURO
def _euro_from_counts(u: np.ndarray, n_tp, n_tn, n1: float, n0: float) -> np.ndarray:
    num = (1.0 - u) * n_tp + u * n_tn
    den = (1.0 - u) * n1 + u * n0
    out = np.ones_like(u, dtype=float)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def euro_curve(p_hat, correct, grid: Sequence[float] | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """EURO at every risk level ``u`` of ``grid`` (default: 101 evenly spaced points of [0, 1]).

    At risk level ``u = u_ca`` (utility of rejecting a wrong output; ``u_ct = 1 - u`` that of trusting a right
    one) the Bayes decision trusts output ``i`` iff ``p_hat[i] > u`` (strictly; ties are rejected), and

        EURO(u) = ((1 - u) * N_tp(u) + u * N_tn(u)) / ((1 - u) * n1 + u * n0),

    with ``N_tp`` = #(trusted and correct), ``N_tn`` = #(rejected and incorrect).  The denominator is the
    utility of the oracle (trust exactly the correct outputs); where it is 0 (``n1 = 0`` at ``u = 0`` or
    ``n0 = 0`` at ``u = 1``) EURO is defined as 1.  Returns ``(u, euro)``.
    """
    p, y = _check_inputs(p_hat, correct)
    u = np.linspace(0.0, 1.0, 101) if grid is None else _check_u(grid, "grid").ravel()
    order = np.argsort(p, kind="stable")
    ps, ys = p[order], y[order]
    # number of outputs with p_hat <= u (the rejected ones) and how many of them are correct
    n_rej = np.searchsorted(ps, u, side="right")
    cum_correct = np.concatenate([[0.0], np.cumsum(ys)])
    rej_correct = cum_correct[n_rej]
    n1 = float(ys.sum())
    n0 = float(ys.size - n1)
    n_tp = n1 - rej_correct
    n_tn = n_rej - rej_correct
    return u, _euro_from_counts(u, n_tp, n_tn, n1, n0)


def euro(p_hat, correct, u_ca: float) -> float:
    """EURO at one risk level ``u_ca`` in [0, 1] (see :func:`euro_curve` for the formula)."""
    if np.ndim(u_ca) != 0:
        raise ValueError(f"u_ca must be a scalar in [0, 1]; use euro_curve for several levels, got {u_ca!r}")
    _check_u(u_ca)
    return float(euro_curve(p_hat, correct, np.array([float(u_ca)]))[1][0])


def _trapezoid_mean(u: np.ndarray, v: np.ndarray) -> float:
    width = u[-1] - u[0]
    area = float(np.sum((v[1:] + v[:-1]) * np.diff(u)) / 2.0)
    return area / width


def _check_range(u_range, n_grid) -> np.ndarray:
    if isinstance(n_grid, bool) or not isinstance(n_grid, (int, np.integer)) or n_grid < 2:
        raise ValueError(f"n_grid must be an integer >= 2, got {n_grid!r}")
    if len(u_range) != 2:
        raise ValueError(f"u_range must be a pair (low, high), got {u_range!r}")
    lo, hi = (float(x) for x in u_range)
    if not (0.0 <= lo < hi <= 1.0):
        raise ValueError(f"u_range must satisfy 0 <= low < high <= 1, got {u_range!r}")
    return np.linspace(lo, hi, int(n_grid))


def auc_euro(p_hat, correct, u_range: tuple[float, float] = (0.0, 1.0), n_grid: int = 101) -> float:
    """Area under the EURO curve, averaged over ``u_range``: ``1/(b - a) * integral_a^b EURO(u) du``.

    The integral is the trapezoid rule on ``n_grid`` evenly spaced points.  Over [0, 1] this is the paper's
    auc-EURO; over a sub-range (e.g. the high-risk ``(0.5, 1)``) dividing by the width keeps the oracle at 1.
    """
    u = _check_range(u_range, n_grid)
    _, v = euro_curve(p_hat, correct, u)
    return _trapezoid_mean(u, v)


def base_rate_euro_curve(n1: int, n0: int, a: float, grid=None) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form EURO curve of the constant predictor ``p_hat = a`` on ``n1`` correct and ``n0`` wrong outputs.

    It trusts everything when ``a > u``, giving ``(1 - u) n1 / ((1 - u) n1 + u n0)``, and rejects everything
    otherwise, giving ``u n0 / ((1 - u) n1 + u n0)`` (1 where the denominator is 0).
    """
    if n1 < 0 or n0 < 0 or n1 + n0 == 0:
        raise ValueError(f"n1 and n0 must be >= 0 with n1 + n0 > 0, got n1={n1}, n0={n0}")
    _check_u(a, "a")
    u = np.linspace(0.0, 1.0, 101) if grid is None else _check_u(grid, "grid").ravel()
    trust = a > u
    n_tp = np.where(trust, n1, 0.0)
    n_tn = np.where(trust, 0.0, n0)
    return u, _euro_from_counts(u, n_tp, n_tn, float(n1), float(n0))


# --------------------------------------------------------------------------------------------------- calibration
def binned_ece(p_hat, correct, n_bins: int = 10) -> float:
    """Binned expected calibration error with ``n_bins`` equal-width bins of [0, 1]:

        ECE = sum_b (|B_b| / n) * |mean(correct[B_b]) - mean(p_hat[B_b])|,

    bins ``[0, 1/m), [1/m, 2/m), ..., [(m-1)/m, 1]`` (the last one closed).
    """
    p, y = _check_inputs(p_hat, correct)
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    gap = np.bincount(b, weights=p - y, minlength=n_bins)
    return float(np.abs(gap).sum() / p.size)


def _spread_to_grid(x: np.ndarray, w: np.ndarray, g: int) -> np.ndarray:
    """Put weight ``w_i`` at ``x_i`` in [0, 1] onto ``g`` grid points ``k / (g - 1)``, split linearly between the
    two neighbours (so the grid keeps the mass and the first moment)."""
    pos = x * (g - 1)
    left = np.minimum(pos.astype(int), g - 2)
    frac = pos - left
    out = np.bincount(left, weights=(1.0 - frac) * w, minlength=g)
    out += np.bincount(left + 1, weights=frac * w, minlength=g)
    return out


def _smooth_on_grid(values: np.ndarray, sigma: float) -> np.ndarray:
    """Convolve grid values with a Gaussian of width ``sigma`` (sampled on the grid, window ``[-1/2, 1/2]``), the
    values being mirrored at 0 and 1 first so that no mass leaves [0, 1] (a reflected kernel)."""
    from scipy.signal import fftconvolve

    g = values.size
    t = np.linspace(-0.5, 0.5, g)
    kern = np.exp(-0.5 * (t / sigma) ** 2) / (np.sqrt(2.0 * np.pi) * sigma)
    mirrored = np.concatenate([values[:0:-1], values, values[-2::-1]])
    full = fftconvolve(mirrored, kern, mode="valid")
    return full[g // 2 : g // 2 + g]


def _smece_at(p: np.ndarray, y: np.ndarray, sigma: float) -> float:
    g = max(2000, round(20.0 / sigma)) // 2 + 1
    resid = _smooth_on_grid(_spread_to_grid(p, p - y, g), sigma)  # sum_i K(t, p_i)(p_i - y_i)
    dens = _smooth_on_grid(_spread_to_grid(p, np.ones_like(p), g), sigma) + 1e-4  # sum_i K(t, p_i)
    mesh = np.linspace(0.0, 1.0, max(200, round(10.0 / sigma)))
    grid = np.linspace(0.0, 1.0, g)
    r = np.interp(mesh, grid, resid)
    d = np.interp(mesh, grid, dens)
    # integral of |r_sigma| * delta_sigma over the mesh, normalised by the integral of delta_sigma
    return float(np.sum(np.abs(r)) / np.sum(d))


def smooth_ece(p_hat, correct, sigma: float | None = None) -> float:
    """Smooth ECE (Blasiok & Nakkiran, 2023), our implementation of the definition used by ``relplot.smECE``.

    With a Gaussian kernel ``K_sigma`` reflected at 0 and 1, the smoothed residual is
    ``r(t) = sum_i K(t, p_i)(y_i - p_i) / sum_i K(t, p_i)`` and the smoothed density
    ``delta(t) = sum_i K(t, p_i)``;  ``smECE_sigma = integral |r(t)| delta(t) dt / integral delta(t) dt``.  Without
    ``sigma`` the bandwidth is the fixed point ``sigma* = smECE_{sigma*}`` (bisection on [0, 1]; ``smECE_sigma``
    decreases in sigma), which makes the measure hyperparameter-free.  Like relplot, the confidences are spread
    linearly onto a fine grid (``max(2000, 20 / sigma) / 2`` points) and the kernel is truncated to ``|t| <= 1/2``;
    the tests check agreement with ``relplot.smECE`` (to 1e-3) when it is installed.
    """
    p, y = _check_inputs(p_hat, correct)
    if sigma is not None:
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be > 0 (or None for the fixed point), got {sigma!r}")
        return _smece_at(p, y, float(sigma))
    # bisection for the fixed point of g(s) = smECE_s - s (g decreasing), keeping the upper end (g <= 0)
    if _smece_at(p, y, 1.0) <= 1.0:
        lo, hi = 0.0, 1.0
    else:  # pragma: no cover - smECE <= 1 always
        return _smece_at(p, y, 1.0)
    for _ in range(20):
        mid = 0.5 * (lo + hi)
        if mid < 1e-3 or mid < _smece_at(p, y, mid):
            lo = mid
        else:
            hi = mid
    return _smece_at(p, y, hi)
