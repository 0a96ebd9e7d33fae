r"""The worst case of a metric over a prediction set: ``R = min_{z in C} m(z)``.

Every set is a union of pieces ``{c + L u : ||u||_2 <= r}`` (one piece for an :class:`Ellipsoid`, one ball
per sample for a :class:`UnionOfBalls`).  On a piece we minimise ``f(u) = m(c + L u)`` over the ball
``||u|| <= r`` by projected gradient descent,

    ``u <- Pi(u - eta * grad f(u))``,  ``Pi(u) = u * min(1, r / ||u||)``,

with the step ``eta`` found by backtracking (halve until the sufficient-decrease test
``f(u+) <= f(u) + <grad f(u), u+ - u> + ||u+ - u||^2 / (2 eta)`` passes, then try ``2 eta`` at the next
step).  The test makes the objective non-increasing along each run.  For a convex metric the problem is
convex and PGD reaches the global minimum; otherwise it is a local method and we run it from many starts
(all in one batch) and keep the best.  For a linear metric ``m(z) = w^T z + b`` the answer is closed form
(:func:`linear_worst_case`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ._sets import Ellipsoid, UnionOfBalls

__all__ = ["WorstCase", "worst_case", "linear_worst_case"]

Metric = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class WorstCase:
    """Result of :func:`worst_case`: the minimum ``value``, its latent ``argmin`` and solver details."""

    value: float
    argmin: np.ndarray
    method: str
    n_starts: int
    n_iter: int
    converged: bool


def _check_set(S) -> None:
    if not isinstance(S, (Ellipsoid, UnionOfBalls)):
        raise TypeError(f"S must be an Ellipsoid or a UnionOfBalls, got {type(S).__name__}")
    if math.isinf(S.radius):
        raise ValueError("S has an infinite radius: the worst case over the whole space is not defined")


def _evaluate(metric: Metric, z: torch.Tensor) -> torch.Tensor:
    out = metric(z)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"metric must return a torch.Tensor, got {type(out).__name__}")
    if out.shape != (z.shape[0],):
        raise ValueError(
            f"metric must map latent points of shape (n, d) to values of shape (n,); for n={z.shape[0]} it "
            f"returned shape {tuple(out.shape)}"
        )
    return out.to(torch.float64)


def linear_worst_case(w, b: float, S) -> WorstCase:
    r"""Closed form of ``min_{z in S} w^T z + b``.

    Ellipsoid ``{c + L u : ||u|| <= r}``: ``R = w^T c + b - r ||L^T w||``, attained at
    ``c - r L L^T w / ||L^T w||``.  Union of balls: ``R = min_k (w^T z_k + b) - r ||w||``.
    """
    _check_set(S)
    w = np.asarray(w, dtype=float)
    if w.shape != (S.dim,):
        raise ValueError(f"w must have shape ({S.dim},), got {w.shape}")
    best_val, best_z = math.inf, None
    for c, L, r in S.pieces():
        g = L.T @ w
        ng = float(np.linalg.norm(g))
        z = c - (r / ng) * (L @ g) if ng > 0 else c.copy()
        val = float(w @ c + b - r * ng)
        if val < best_val:
            best_val, best_z = val, z
    return WorstCase(best_val, best_z, "closed_form", 0, 0, True)


def _starts(S, metric: Metric, n_random: int, extra, rng: np.random.Generator):
    """Start points per piece, in ``u`` coordinates: centre, +-principal axes, the linearised minimiser,
    ``n_random`` random boundary points and the ``extra`` latent points projected into the piece."""
    piece_idx, U = [], []
    pieces = S.pieces()
    d = S.dim
    zc = torch.tensor(np.stack([c for c, _, _ in pieces]), dtype=torch.float64, requires_grad=True)
    (grad_c,) = torch.autograd.grad(_evaluate(metric, zc).sum(), zc)
    for j, (_, L, r) in enumerate(pieces):
        cand = [np.zeros(d)]
        _, _, Vt = np.linalg.svd(L)
        cand += [r * Vt[i] for i in range(d)] + [-r * Vt[i] for i in range(d)]
        gu = L.T @ grad_c[j].numpy()
        if np.linalg.norm(gu) > 0:
            cand.append(-r * gu / np.linalg.norm(gu))
        if n_random:
            v = rng.standard_normal((n_random, d))
            cand += list(r * v / np.linalg.norm(v, axis=1, keepdims=True))
        U += cand
        piece_idx += [j] * len(cand)
    if extra is not None:
        E = np.atleast_2d(np.asarray(extra, dtype=float))
        if E.shape[1] != d:
            raise ValueError(f"starts must have shape (n, {d}), got {E.shape}")
        from scipy.linalg import solve_triangular

        for e in E:  # into the nearest piece, then clipped to its ball
            best = None
            for j, (c, L, r) in enumerate(pieces):
                u = solve_triangular(L, e - c, lower=True)
                nu = float(np.linalg.norm(u))
                if best is None or nu - r < best[0]:
                    best = (nu - r, j, u * min(1.0, r / nu) if nu > 0 else u)
            U.append(best[2])
            piece_idx.append(best[1])
    return np.asarray(piece_idx), np.asarray(U)


def _screen(metric: Metric, S, n: int, rng: np.random.Generator, starts):
    """The 4 best of ``n`` random points in ``S`` (half inside, half on the boundary), added to ``starts``."""
    pieces = S.pieces()
    per = max(2, n // len(pieces))
    pts = []
    for c, L, r in pieces:
        v = rng.standard_normal((per, S.dim))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        rad = r * np.where(np.arange(per) % 2 == 0, rng.random(per) ** (1.0 / S.dim), 1.0)
        pts.append(c + (rad[:, None] * v) @ L.T)
    P = np.vstack(pts)
    with torch.no_grad():
        vals = _evaluate(metric, torch.as_tensor(P, dtype=torch.float64)).numpy()
    best = P[np.argsort(vals)[:4]]
    return best if starts is None else np.vstack([np.atleast_2d(np.asarray(starts, dtype=float)), best])


def _pgd(
    metric: Metric,
    C,
    Ls,
    R,
    U0,
    max_iter: int,
    tol: float,
    prune: bool = True,
    check_feasible: bool = False,
):
    """Batched projected gradient descent with backtracking; one run per row of ``U0``.

    With ``prune``, at iterations 20, 40, 80 and 160 the worse half of the still-running starts (by current
    value, keeping at least 4) is stopped: a successive-halving heuristic that saves the time spent on starts
    crawling away from saddle points far above the best value found.
    """
    C, Ls, R = (torch.as_tensor(a, dtype=torch.float64) for a in (C, Ls, R))

    def value_grad(v, rows):
        """Project ``v`` into the balls of ``rows`` and return (point, value, gradient)."""
        n = v.norm(dim=1).clamp_min(1e-300)
        v = (v * torch.clamp(R[rows] / n, max=1.0)[:, None]).detach().requires_grad_(True)
        val = _evaluate(metric, C[rows] + torch.einsum("sij,sj->si", Ls[rows], v))
        (g,) = torch.autograd.grad(val.sum(), v)  # rows are independent, so this is each row's gradient
        return v.detach(), val.detach(), g

    all_rows = torch.arange(len(U0))
    u, f, g = value_grad(torch.as_tensor(U0, dtype=torch.float64), all_rows)
    eta = torch.ones(len(u), dtype=torch.float64)
    active = torch.ones(len(u), dtype=torch.bool)
    history = [f.clone()]
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - `it` is reported
        if prune and it in (20, 40, 80, 160):
            idx = active.nonzero().squeeze(1)
            if idx.numel() > 4:
                order = idx[torch.argsort(f[idx])]
                active[order[max(4, (idx.numel() + 1) // 2) :]] = False
        idx = active.nonzero().squeeze(1)
        if idx.numel() == 0:
            break
        u_a, f_a, g_a, eta_a = u[idx], f[idx], g[idx], eta[idx]
        accepted = torch.zeros(len(idx), dtype=torch.bool)
        u_new, f_new, g_new = u_a.clone(), f_a.clone(), g_a.clone()
        for _ in range(60):  # backtracking: halve eta where the sufficient-decrease test fails
            todo = (~accepted).nonzero().squeeze(1)
            if todo.numel() == 0:
                break
            cand, fc, gc = value_grad(u_a[todo] - eta_a[todo, None] * g_a[todo], idx[todo])
            diff = cand - u_a[todo]
            bound = f_a[todo] + (g_a[todo] * diff).sum(1) + (diff**2).sum(1) / (2 * eta_a[todo])
            ok = fc <= bound + 1e-12 * (1.0 + f_a[todo].abs())
            acc = todo[ok]
            u_new[acc], f_new[acc], g_new[acc] = cand[ok], fc[ok], gc[ok]
            accepted[acc] = True
            eta_a[todo[~ok]] *= 0.5
        step = (u_new - u_a).norm(dim=1)
        u[idx], f[idx], g[idx] = u_new, f_new, g_new
        eta[idx] = torch.clamp(eta_a * 2.0, max=1e8)
        active[idx[(step <= tol * (1.0 + R[idx])) | ~accepted]] = False
        if check_feasible and bool((u.norm(dim=1) > R * (1 + 1e-12) + 1e-12).any()):
            raise AssertionError("PGD left the feasible set")
        history.append(f.clone())
    converged = not bool(active.any())
    return u, f, it, converged, torch.stack(history)


def _grid(metric: Metric, S, n_grid: int):
    """Minimum over a polar grid in ``u`` (``n_grid`` radii x ``n_grid`` angles per piece; 2-D sets)."""
    if S.dim != 2:
        raise ValueError(f"method='grid' needs a 2-D set, got dim={S.dim}")
    best_val, best_z = math.inf, None
    rho = np.linspace(0.0, 1.0, n_grid)
    th = np.linspace(0.0, 2 * np.pi, n_grid, endpoint=False)
    P, T = np.meshgrid(rho, th, indexing="ij")
    unit = np.stack([(P * np.cos(T)).ravel(), (P * np.sin(T)).ravel()], axis=1)
    for c, L, r in S.pieces():
        z = c + (r * unit) @ L.T
        with torch.no_grad():
            vals = _evaluate(metric, torch.as_tensor(z, dtype=torch.float64)).numpy()
        k = int(np.argmin(vals))
        if vals[k] < best_val:
            best_val, best_z = float(vals[k]), z[k]
    return best_val, best_z


def worst_case(
    metric: Metric,
    S,
    method: str = "pgd",
    *,
    n_random_starts: int = 8,
    starts=None,
    max_iter: int = 200,
    tol: float = 1e-7,
    prune: bool = True,
    n_grid: int = 400,
    n_screen: int = 0,
    random_state=0,
) -> WorstCase:
    r"""``min_{z in S} metric(z)`` and its argmin (the "worst plausible output" in latent space).

    Parameters
    ----------
    metric : callable
        Maps a float64 tensor of latent points, shape ``(n, d)``, to a tensor of values, shape ``(n,)``;
        higher is better.  Must be differentiable in ``z`` for ``method="pgd"``.
    S : Ellipsoid or UnionOfBalls
        The set; each piece ``{c + L u : ||u|| <= r}`` is searched separately (see module docstring).
    method : {"pgd", "grid"}
        ``"pgd"``: multi-start projected gradient descent.  ``"grid"`` (2-D sets only, a check): minimum over
        a polar grid of ``n_grid`` radii times ``n_grid`` angles per piece, boundary included.
    n_random_starts : int
        Random boundary starts per piece, on top of the centre, the ``2d`` principal-axis boundary points and
        the minimiser of the metric's linearisation at the centre.
    starts : array of shape (n, d), optional
        Extra latent starts (e.g. the generated samples), each projected into its nearest piece.
    max_iter, tol : int, float
        PGD iteration cap, and the step length (in ``u``, relative to ``1 + r``) below which a run stops.
    prune : bool
        Successive halving of the starts at iterations 20, 40, 80, 160 (keeps the better half, >= 4).
    n_screen : int
        If > 0, evaluate the metric at ``n_screen`` random points of the set (half uniform inside each
        piece, half on its boundary) and add the best 4 as starts: a cheap global screen that finds narrow
        basins the structured starts can miss (off by default; the reproduction's full run used 0).
    """
    _check_set(S)
    if method not in ("pgd", "grid"):
        raise ValueError(f"method must be 'pgd' or 'grid', got {method!r}")
    if not callable(metric):
        raise TypeError("metric must be callable: latent tensor (n, d) -> values (n,)")
    if method == "grid":
        if not (isinstance(n_grid, int) and n_grid >= 2):
            raise ValueError(f"n_grid must be an integer >= 2, got {n_grid!r}")
        val, z = _grid(metric, S, n_grid)
        return WorstCase(val, z, "grid", n_grid * n_grid * len(S.pieces()), 0, True)
    if not (isinstance(max_iter, int) and max_iter >= 1):
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if not (isinstance(n_random_starts, int) and n_random_starts >= 0):
        raise ValueError(f"n_random_starts must be an integer >= 0, got {n_random_starts!r}")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    if not (isinstance(n_screen, int) and n_screen >= 0):
        raise ValueError(f"n_screen must be an integer >= 0, got {n_screen!r}")
    rng = np.random.default_rng(random_state)
    if n_screen > 0:
        starts = _screen(metric, S, n_screen, rng, starts)
    piece, U0 = _starts(S, metric, n_random_starts, starts, rng)
    pieces = S.pieces()
    C = np.stack([pieces[j][0] for j in piece])
    Ls = np.stack([pieces[j][1] for j in piece])
    R = np.array([pieces[j][2] for j in piece])
    u, f, it, conv, _ = _pgd(metric, C, Ls, R, U0, max_iter, tol, prune)
    k = int(torch.argmin(f))
    z = C[k] + Ls[k] @ u[k].numpy()
    return WorstCase(float(f[k]), z, "pgd", len(U0), it, conv)
