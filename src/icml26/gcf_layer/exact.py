"""Exact expected revenue of a finite menu for buyer types uniform on the unit box ``[0, 1]^d`` (``d`` = 1 or 2).

When the buyer's utility for every option is affine in her type, ``u_j(x) = <s_j, x> - p_j`` (a linear kernel,
``s_j = y_j``; the square-root kernel, ``s_j = sqrt(y_j)``), the set of types that choose option ``j`` is the
convex polytope ``{x in [0, 1]^d : u_j(x) >= u_k(x) for all k}``, and the seller's expected profit is

.. math::  R = \\sum_j r_j \\, \\mathrm{vol}\\{x \\in [0,1]^d : j = \\arg\\max_k u_k(x)\\},

with ``r_j`` the profit of option ``j`` (its price minus the seller's cost).  We compute each region by clipping the
box with the ``m - 1`` half-planes (intervals in 1-D) in float64, so the number is the exact revenue of the menu up to
float64 round-off: no Monte-Carlo error and no dependence on a sample, a thread count or the order of a reduction.
Ties between distinct options have measure zero; of two identical options (same slope and price) the first is kept.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_revenue", "menu_regions"]


def _check(slopes, prices, profits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = np.asarray(slopes, dtype=np.float64)
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2 or s.shape[0] < 1 or s.shape[1] not in (1, 2):
        raise ValueError(f"slopes must have shape (m, d) with m >= 1 and d in (1, 2), got {np.shape(slopes)}")
    p = np.asarray(prices, dtype=np.float64).ravel()
    if p.shape[0] != s.shape[0]:
        raise ValueError(f"prices must hold one price per option ({s.shape[0]}), got {p.shape[0]}")
    r = p if profits is None else np.asarray(profits, dtype=np.float64).ravel()
    if r.shape[0] != s.shape[0]:
        raise ValueError(f"profits must hold one profit per option ({s.shape[0]}), got {r.shape[0]}")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(p)) and np.all(np.isfinite(r))):
        raise ValueError("slopes, prices and profits must be finite (no NaN/inf)")
    return s, p, r


def _clip(poly: np.ndarray, a: np.ndarray, c: float) -> np.ndarray:
    """Sutherland-Hodgman step: the part of the convex polygon ``poly`` (``(v, 2)``, in order) with ``<a, x> >= c``."""
    if len(poly) == 0:
        return poly
    h = poly @ a - c
    if np.all(h >= 0):
        return poly
    if np.all(h <= 0):
        return poly[:0]
    out = []
    for i in range(len(poly)):
        j = (i + 1) % len(poly)
        if h[i] >= 0:
            out.append(poly[i])
        if (h[i] >= 0) != (h[j] >= 0):
            t = h[i] / (h[i] - h[j])
            out.append(poly[i] + t * (poly[j] - poly[i]))
    return np.asarray(out).reshape(-1, 2)


def _area(poly: np.ndarray) -> float:
    if len(poly) < 3:
        return 0.0
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def menu_regions(slopes, prices) -> np.ndarray:
    """The probability ``vol{x in [0, 1]^d : option j is chosen}`` of each option under ``U[0, 1]^d`` types (sums to 1).

    ``slopes`` ``(m, d)`` and ``prices`` ``(m,)`` define the utilities ``u_j(x) = <slopes_j, x> - prices_j``; list the
    outside option ``(0, 0)`` among them if the buyer has one."""
    s, p, _ = _check(slopes, prices, None)
    m, d = s.shape
    keep = np.ones(m, dtype=bool)
    for j in range(m):  # identical options: the first one is chosen, the others never
        if keep[j]:
            same = np.all(s[j + 1 :] == s[j], axis=1) & (p[j + 1 :] == p[j])
            keep[j + 1 :] &= ~same
    out = np.zeros(m)
    box = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    idx = np.flatnonzero(keep)
    for j in idx:
        # chosen over k where (s_j - s_k) . x >= p_j - p_k: sort the constraints most binding first (at the centre)
        others = idx[idx != j]
        a, c = s[j] - s[others], p[j] - p[others]
        order = np.argsort(a @ np.full(d, 0.5) - c)
        if d == 1:
            lo, hi = 0.0, 1.0
            for k in order:
                if a[k, 0] > 0:
                    lo = max(lo, c[k] / a[k, 0])
                elif a[k, 0] < 0:
                    hi = min(hi, c[k] / a[k, 0])
                elif c[k] > 0:
                    lo, hi = 1.0, 0.0
                if lo >= hi:
                    break
            out[j] = max(0.0, hi - lo)
        else:
            poly = box
            for k in order:
                poly = _clip(poly, a[k], c[k])
                if len(poly) == 0:
                    break
            out[j] = _area(poly)
    return out


def exact_revenue(slopes, prices, profits=None) -> float:
    """Exact expected profit ``sum_j profits_j vol(region_j)`` of a menu for types uniform on ``[0, 1]^d``, ``d <= 2``.

    ``slopes`` ``(m, d)``, ``prices`` ``(m,)``: the buyer's utility for option ``j`` is ``<slopes_j, x> - prices_j``;
    ``profits`` ``(m,)``: what the seller earns when ``j`` is chosen (default: the price).  Include the outside option
    ``(0, 0)`` (profit 0) to make the menu individually rational."""
    _, _, r = _check(slopes, prices, profits)
    return float(menu_regions(slopes, prices) @ r)
