r"""The worst case of a metric over a prediction set: ``R = min_{z in C} m(z)``.

Ellipsoids and unions of balls are unions of pieces ``{c + L u : ||u||_2 <= r}`` (one piece for an
:class:`Ellipsoid`, one ball per sample for a :class:`UnionOfBalls`).  On a piece we minimise
``f(u) = m(c + L u)`` over the ball ``||u|| <= r`` by projected gradient descent,

    ``u <- Pi(u - eta * grad f(u))``,  ``Pi(u) = u * min(1, r / ||u||)``;

on a :class:`HullSet` ``conv{v_k}`` the parameter is a weight vector ``lam`` on the simplex, ``z = lam @ V``,
and ``Pi`` is the Euclidean projection onto the simplex.  The step ``eta`` is found by backtracking (halve
until the sufficient-decrease test ``f(u+) <= f(u) + <grad f(u), u+ - u> + ||u+ - u||^2 / (2 eta)`` passes,
then try ``2 eta`` at the next step), which makes the objective non-increasing along each run.  For a convex
metric the problem is convex and PGD reaches the global minimum; otherwise it is a local method and we run it
from many starts (all in one batch) and keep the best: structured starts (centre, principal axes, the
linearised minimiser, the generated samples) plus a global screen that keeps one good point per basin
(:func:`worst_case`).  For a linear metric ``m(z) = w^T z + b`` the answer is closed form
(:func:`linear_worst_case`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ._sets import Ellipsoid, HullSet, UnionOfBalls

__all__ = ["WorstCase", "worst_case", "linear_worst_case"]

Metric = Callable[[torch.Tensor], torch.Tensor]

#: Step-size growth after an accepted step (backtracking halves it again where needed).
_ETA_GROWTH = 1.25


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
    if not isinstance(S, (Ellipsoid, UnionOfBalls, HullSet)):
        raise TypeError(f"S must be an Ellipsoid, a UnionOfBalls or a HullSet, got {type(S).__name__}")
    if math.isinf(S.radius):
        raise ValueError("S has an infinite radius: the worst case over the whole space is not defined")


def _evaluate(metric: Metric, z: torch.Tensor) -> torch.Tensor:
    try:
        out = metric(z)
    except RuntimeError as e:  # e.g. z.numpy() on a tensor that requires grad
        if "numpy" not in str(e) and "requires grad" not in str(e):
            raise
        raise TypeError(
            "metric must compute its value from the latent tensor z with torch operations (it is differentiated "
            f"in z); it failed with: {e}"
        ) from e
    if not isinstance(out, torch.Tensor):
        raise TypeError(
            f"metric must return a torch.Tensor of shape (n,) computed from z with torch operations, got "
            f"{type(out).__name__}"
        )
    if not out.is_floating_point():
        raise TypeError(f"metric must return a real floating-point tensor, got dtype {out.dtype}")
    if out.shape != (z.shape[0],):
        raise ValueError(
            f"metric must map latent points of shape (n, d) to values of shape (n,); for n={z.shape[0]} it "
            f"returned shape {tuple(out.shape)}"
        )
    return out.to(torch.float64)


def linear_worst_case(w, b: float, S) -> WorstCase:
    r"""Closed form of ``min_{z in S} w^T z + b``.

    Ellipsoid ``{c + L u : ||u|| <= r}``: ``R = w^T c + b - r ||L^T w||``, attained at
    ``c - r L L^T w / ||L^T w||``.  Union of balls: ``R = min_k (w^T z_k + b) - r ||w||``.  Hull
    ``conv{v_k}``: a linear function is minimised at a vertex, ``R = min_k w^T v_k + b``.
    """
    _check_set(S)
    w = np.asarray(w, dtype=float)
    if w.shape != (S.dim,):
        raise ValueError(f"w must have shape ({S.dim},), got {w.shape}")
    if isinstance(S, HullSet):
        vals = S.vertices @ w + b
        k = int(np.argmin(vals))
        return WorstCase(float(vals[k]), S.vertices[k].copy(), "closed_form", 0, 0, True)
    best_val, best_z = math.inf, None
    for c, L, r in S.pieces():
        g = L.T @ w
        ng = float(np.linalg.norm(g))
        z = c - (r / ng) * (L @ g) if ng > 0 else c.copy()
        val = float(w @ c + b - r * ng)
        if val < best_val:
            best_val, best_z = val, z
    return WorstCase(best_val, best_z, "closed_form", 0, 0, True)


def _value_grad(metric: Metric, z: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``metric(z)`` and its gradient with respect to ``v`` (``z`` is a differentiable function of ``v``).

    Raises ``TypeError`` naming ``metric`` when its value does not depend on ``z`` through torch operations
    (computed with numpy, detached, or built with ``torch.tensor(...)``), instead of torch's own error.
    """
    val = _evaluate(metric, z)
    if not val.requires_grad:
        raise TypeError(
            "metric must be differentiable in z for method='pgd': its output has no gradient with respect to the "
            "latent points (was it computed with numpy, .detach(), .item() or torch.tensor(...)?); write it with "
            "torch operations on z, or use method='grid' for a 2-D set"
        )
    (g,) = torch.autograd.grad(val.sum(), v, allow_unused=True)  # rows are independent: each row's gradient
    if g is None:
        raise TypeError("metric must be differentiable in z for method='pgd': its output does not depend on z")
    if not bool(torch.isfinite(g).all()):
        raise ValueError("metric has a NaN or infinite gradient at a point of the set; it must be differentiable there")
    return val.detach(), g


def _proj_simplex(v: torch.Tensor) -> torch.Tensor:
    """Rows of ``v`` projected onto the probability simplex (Duchi et al., 2008: sort, threshold, clip)."""
    s, _ = torch.sort(v, dim=1, descending=True)
    css = s.cumsum(1) - 1.0
    k = torch.arange(1, v.shape[1] + 1, dtype=v.dtype)
    rho = (s - css / k > 0).sum(1).clamp_min(1)
    theta = css.gather(1, (rho - 1)[:, None]).squeeze(1) / rho.to(v.dtype)
    return torch.clamp(v - theta[:, None], min=0.0)


class _BallParam:
    """Starts ``i`` search the piece ``{C_i + L_i u : ||u|| <= R_i}``: parameter ``u``, projection = clip."""

    def __init__(self, C, Ls, R) -> None:
        self.C, self.Ls, self.R = (torch.as_tensor(a, dtype=torch.float64) for a in (C, Ls, R))
        self.scale = self.R

    def project(self, v: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        n = v.norm(dim=1).clamp_min(1e-300)
        return v * torch.clamp(self.R[rows] / n, max=1.0)[:, None]

    def embed(self, v: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        return self.C[rows] + torch.einsum("sij,sj->si", self.Ls[rows], v)

    def feasible(self, v: torch.Tensor) -> bool:
        return bool((v.norm(dim=1) <= self.R * (1 + 1e-12) + 1e-12).all())


class _HullParam:
    """The polytope ``conv{v_k}``: parameter ``lam`` on the simplex, ``z = lam @ V``."""

    def __init__(self, V, n: int) -> None:
        self.V = torch.as_tensor(V, dtype=torch.float64)
        self.scale = torch.ones(n, dtype=torch.float64)

    def project(self, v: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        return _proj_simplex(v)

    def embed(self, v: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        return v @ self.V

    def feasible(self, v: torch.Tensor) -> bool:
        return bool((v >= -1e-12).all() and ((v.sum(1) - 1).abs() <= 1e-9).all())


def _whitener(S) -> tuple[np.ndarray, float]:
    """A matrix ``W`` and a length ``r`` such that ``||W (z1 - z2)|| / r`` is a shape-free distance in ``S``."""
    if isinstance(S, Ellipsoid):
        return np.linalg.inv(S.chol), max(S.radius, 1e-300)
    if isinstance(S, UnionOfBalls):
        return np.eye(S.dim), max(S.radius, 1e-300)
    V = S.vertices
    cov = np.cov(V, rowvar=False).reshape(S.dim, S.dim) + 1e-12 * np.eye(S.dim)
    return np.linalg.inv(np.linalg.cholesky(cov)), 1.0


def _diverse(P: np.ndarray, vals: np.ndarray, W: np.ndarray, r: float, n_keep: int, sep: float) -> np.ndarray:
    """Greedy "one start per basin": the best point, then the next best that lies at least ``sep * r`` (in
    whitened distance) from every point kept so far, and so on up to ``n_keep`` points."""
    order = np.argsort(vals, kind="stable")
    Pw = P @ W.T
    keep: list[int] = []
    for i in order:
        if len(keep) >= n_keep:
            break
        if not keep or np.min(np.linalg.norm(Pw[keep] - Pw[i], axis=1)) >= sep * r:
            keep.append(int(i))
    return np.asarray(keep, dtype=int)


def _screen_points(S, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random points of ``S`` (about half uniform inside a piece, half on its boundary)."""
    if isinstance(S, (Ellipsoid, UnionOfBalls)):
        pieces = S.pieces()
        per = max(2, n // len(pieces))
        pts = []
        for c, L, r in pieces:
            v = rng.standard_normal((per, S.dim))
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            rad = r * np.where(np.arange(per) % 2 == 0, rng.random(per) ** (1.0 / S.dim), 1.0)
            pts.append(c + (rad[:, None] * v) @ L.T)
        return np.vstack(pts)
    K = len(S.vertices)
    conc = np.where(np.arange(n) % 2 == 0, 1.0, 0.1)[:, None]  # 0.1: sparse weights, near the boundary
    lam = rng.gamma(np.broadcast_to(conc, (n, K)))
    lam /= lam.sum(1, keepdims=True)
    return lam @ S.vertices


def _ball_starts(S, metric: Metric, n_random: int, extra, rng: np.random.Generator):
    """Start points per piece, in ``u`` coordinates: centre, +-principal axes, the linearised minimiser,
    ``n_random`` random boundary points and the ``extra`` latent points projected into the nearest piece."""
    piece_idx, U = [], []
    pieces = S.pieces()
    d = S.dim
    zc = torch.tensor(np.stack([c for c, _, _ in pieces]), dtype=torch.float64, requires_grad=True)
    _, grad_c = _value_grad(metric, zc, zc)
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
        from scipy.linalg import solve_triangular

        for e in extra:  # into the nearest piece, then clipped to its ball
            best = None
            for j, (c, L, r) in enumerate(pieces):
                u = solve_triangular(L, e - c, lower=True)
                nu = float(np.linalg.norm(u))
                if best is None or nu - r < best[0]:
                    best = (nu - r, j, u * min(1.0, r / nu) if nu > 0 else u)
            U.append(best[2])
            piece_idx.append(best[1])
    return np.asarray(piece_idx), np.asarray(U)


def _hull_starts(S, metric: Metric, n_random: int, extra, rng: np.random.Generator) -> np.ndarray:
    """Start weights ``lam``: the centre (uniform weights), every vertex, ``n_random`` random points, and the
    ``extra`` latent points as weights (a point ``c + (z - c)`` of the unscaled hull is ``c + (v - c) / r``)."""
    K = len(S.vertices)
    lam = [np.full(K, 1.0 / K), *np.eye(K)]
    if n_random:
        g = rng.gamma(np.full((n_random, K), 0.1))
        lam += list(g / g.sum(1, keepdims=True))
    if extra is not None:
        from scipy.optimize import nnls

        big = 1e3 * (1.0 + float(np.abs(S.vertices).max()))  # weights the sum-to-one row
        A = np.vstack([S.vertices.T, np.full((1, K), big)])
        for e in extra:  # the nearest convex combination of the vertices (exact when e is inside)
            w, _ = nnls(A, np.append(e, big))
            lam.append(w / w.sum() if w.sum() > 0 else np.full(K, 1.0 / K))
    return np.asarray(lam)


def _pgd(
    metric: Metric,
    param,
    V0,
    max_iter: int,
    tol: float,
    prune: bool = True,
    check_feasible: bool = False,
):
    """Batched projected gradient descent with backtracking; one run per row of ``V0``.

    ``param`` maps parameters to latent points (``embed``) and projects them onto the feasible set
    (``project``): :class:`_BallParam` (``u`` in a ball, ``z = c + L u``) or :class:`_HullParam` (weights on
    the simplex, ``z = lam @ V``).  With ``prune``, at iterations 20, 40, 80 and 160 the worse half of the
    still-running starts (by current value, keeping at least 4) is stopped: a successive-halving heuristic that
    saves the time spent on starts crawling away from saddle points far above the best value found.
    """

    def value_grad(v, rows):
        """Project ``v`` onto the feasible set of ``rows`` and return (point, value, gradient)."""
        v = param.project(v, rows).detach().requires_grad_(True)
        val, g = _value_grad(metric, param.embed(v, rows), v)
        return v.detach(), val, g

    all_rows = torch.arange(len(V0))
    u, f, g = value_grad(torch.as_tensor(np.asarray(V0), dtype=torch.float64), all_rows)
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
        eta[idx] = torch.clamp(eta_a * _ETA_GROWTH, max=1e8)
        active[idx[(step <= tol * (1.0 + param.scale[idx])) | ~accepted]] = False
        if check_feasible and not param.feasible(u):
            raise AssertionError("PGD left the feasible set")
        history.append(f.clone())
    converged = not bool(active.any())
    return u, f, it, converged, torch.stack(history)


def _grid(metric: Metric, S, n_grid: int):
    """Minimum over a dense grid of a 2-D set: a polar grid in ``u`` (``n_grid`` radii x ``n_grid`` angles) per
    ball piece; for a hull, ``n_grid`` x ``n_grid`` points of its bounding box kept if inside, plus its edges."""
    if S.dim != 2:
        raise ValueError(f"method='grid' needs a 2-D set, got dim={S.dim}")
    if isinstance(S, HullSet):
        lo, hi = S.vertices.min(0), S.vertices.max(0)
        gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], n_grid), np.linspace(lo[1], hi[1], n_grid))
        P = np.stack([gx.ravel(), gy.ravel()], 1)
        P = P[S.contains(P)]
        t = np.linspace(0.0, 1.0, n_grid)[:, None]
        Vx = S.vertices
        edges = [Vx[i] * (1 - t) + Vx[j] * t for i in range(len(Vx)) for j in range(i + 1, len(Vx))]
        E = np.vstack(edges)
        zs = [np.vstack([P, E[S.contains(E)], Vx])]
    else:
        rho = np.linspace(0.0, 1.0, n_grid)
        th = np.linspace(0.0, 2 * np.pi, n_grid, endpoint=False)
        Pp, T = np.meshgrid(rho, th, indexing="ij")
        unit = np.stack([(Pp * np.cos(T)).ravel(), (Pp * np.sin(T)).ravel()], axis=1)
        zs = [c + (r * unit) @ L.T for c, L, r in S.pieces()]
    best_val, best_z = math.inf, None
    for z in zs:
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
    n_screen: int = 256,
    n_diverse: int = 8,
    separation: float = 0.5,
    random_state=0,
) -> WorstCase:
    r"""``min_{z in S} metric(z)`` and its argmin (the "worst plausible output" in latent space).

    Parameters
    ----------
    metric : callable
        Maps a float64 tensor of latent points, shape ``(n, d)``, to a torch tensor of values, shape ``(n,)``;
        higher is better.  Must be differentiable in ``z`` (torch operations) for ``method="pgd"``: a metric
        that returns numpy, or a tensor without a gradient, raises ``TypeError``.
    S : Ellipsoid, UnionOfBalls or HullSet
        The set.  Ellipsoid / union of balls: each piece ``{c + L u : ||u|| <= r}`` is searched in ``u`` with a
        ball projection; hull ``conv{v_k}``: weights ``lam`` on the simplex, ``z = sum_k lam_k v_k``.
    method : {"pgd", "grid"}
        ``"pgd"``: multi-start projected gradient descent.  ``"grid"`` (2-D sets only, a check): minimum over
        a dense grid of ``n_grid x n_grid`` points per piece, boundary included.
    n_random_starts : int
        Random boundary starts per piece (random sparse weights for a hull), on top of the structured starts:
        the centre, the ``2d`` principal-axis boundary points and the minimiser of the metric's linearisation
        at the centre (for a hull: the centre and every vertex).
    starts : array of shape (n, d), optional
        Extra latent starts (e.g. the generated samples), each projected into the set.
    max_iter, tol : int, float
        PGD iteration cap, and the step length (in the parameter, relative to ``1 + r``) below which a run stops.
    prune : bool
        Successive halving of the starts at iterations 20, 40, 80, 160 (keeps the better half, >= 4).
    n_screen, n_diverse, separation : int, int, float
        The global screen (on by default): the metric is evaluated at ``n_screen`` random points of the set
        (half uniform inside each piece, half on its boundary), and up to ``n_diverse`` of them become starts,
        chosen greedily "one per basin": best value first, then the next best that lies at least
        ``separation`` (in units of the radius, after whitening by the set's shape) from every start kept.
        Keeping the top few points instead puts them all in the basin of the best screened value and can miss
        a narrow global basin (issue 22).  ``n_screen=0`` turns the screen off.
    random_state : int or None
        Seed of the random starts and the screen.
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
        return WorstCase(val, z, "grid", n_grid * n_grid * (len(S.pieces()) if hasattr(S, "pieces") else 1), 0, True)
    if not (isinstance(max_iter, int) and max_iter >= 1):
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if not (isinstance(n_random_starts, int) and n_random_starts >= 0):
        raise ValueError(f"n_random_starts must be an integer >= 0, got {n_random_starts!r}")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    if not (isinstance(n_screen, int) and n_screen >= 0):
        raise ValueError(f"n_screen must be an integer >= 0, got {n_screen!r}")
    if not (isinstance(n_diverse, int) and n_diverse >= 1):
        raise ValueError(f"n_diverse must be an integer >= 1, got {n_diverse!r}")
    if not separation >= 0:
        raise ValueError(f"separation must be >= 0, got {separation!r}")
    rng = np.random.default_rng(random_state)
    extra = None
    if starts is not None:
        extra = np.atleast_2d(np.asarray(starts, dtype=float))
        if extra.shape[1] != S.dim:
            raise ValueError(f"starts must have shape (n, {S.dim}), got {extra.shape}")
    if n_screen > 0:
        P = _screen_points(S, n_screen, rng)
        with torch.no_grad():
            vals = _evaluate(metric, torch.as_tensor(P, dtype=torch.float64)).numpy()
        W, r = _whitener(S)
        best = P[_diverse(P, vals, W, r, n_diverse, separation)]
        extra = best if extra is None else np.vstack([extra, best])
    if isinstance(S, HullSet):
        V0 = _hull_starts(S, metric, n_random_starts, extra, rng)
        param = _HullParam(S.vertices, len(V0))
    else:
        piece, V0 = _ball_starts(S, metric, n_random_starts, extra, rng)
        pieces = S.pieces()
        param = _BallParam(
            np.stack([pieces[j][0] for j in piece]),
            np.stack([pieces[j][1] for j in piece]),
            np.array([pieces[j][2] for j in piece]),
        )
    u, f, it, conv, _ = _pgd(metric, param, V0, max_iter, tol, prune)
    k = int(torch.argmin(f))
    with torch.no_grad():
        z = param.embed(u[k : k + 1], torch.tensor([k]))[0].numpy()
    return WorstCase(float(f[k]), z, "pgd", len(V0), it, conv)
