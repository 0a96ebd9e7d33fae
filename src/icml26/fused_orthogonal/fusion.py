"""Adaptive pairwise fusion weights and the ADMM solver of the pairwise-fused quadratic problem.

The fusion step solves

    min_theta  sum_j A_j ||theta_j - b_j||^2  +  sum_{j < j'} lambda_{jj'} ||theta_j - theta_j'||_2        (1)

(each orthogonal loss is the quadratic ``a_j (theta - b_j)^2`` up to a constant, see ``scores.py``).  Problem
(1) is a convex clustering / graph-fused-lasso problem; a group-lasso penalty on differences fuses tasks
exactly.
We solve it by ADMM on edge variables ``z_e = theta_j - theta_j'`` (Boyd et al. 2011, Sec. 3 and 6.4; Hallac,
Leskovec & Boyd 2015 "network lasso"); every step is closed form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.linalg import cho_factor, cho_solve
from scipy.sparse.csgraph import connected_components

__all__ = [
    "adaptive_fusion_weights",
    "fused_pairwise_admm",
    "FusedSolution",
    "fusion_path",
    "fused_objective",
    "split_chained_clusters",
    "merge_homogeneous_clusters",
    "ChainingWarning",
]


def _as_2d_points(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(f"{name} must have shape (m,) or (m, d) with m >= 1, got {np.shape(x)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def _pairwise_dist(p: np.ndarray) -> np.ndarray:
    diff = p[:, None, :] - p[None, :, :]
    return np.sqrt((diff**2).sum(axis=-1))


def adaptive_fusion_weights(
    pilots,
    c_w: float | np.ndarray = 0.1,
    gamma: float = 2.0,
    tau: float = 10.0,
    eps_n: float = 1e-12,
) -> np.ndarray:
    """Adaptive penalties ``lambda_{jj'}`` from pilot estimates (Algorithm 1, step 2).

    ``w_{jj'} = c_w ||theta_j^init - theta_j'^init||_2^(-gamma)`` and ``lambda_{jj'} = w_{jj'}`` if
    ``w_{jj'} > tau``, else ``eps_n``.  Pairs closer than the fuse radius ``(c_w / tau)^(1/gamma)``
    get a large penalty, the others a negligible one.  ``c_w`` may be a symmetric (m, m) array of
    per-pair constants.  Identical pilots give ``lambda = inf`` (always fused).
    Returns a symmetric (m, m) array with a zero diagonal.
    """
    p = _as_2d_points(pilots, "pilots")
    m = p.shape[0]
    c = np.asarray(c_w, dtype=float)
    if c.ndim == 0:
        if not (np.isfinite(c) and c > 0):
            raise ValueError(f"c_w must be a finite number > 0 (or an (m, m) array of them), got {c_w!r}")
    elif c.shape != (m, m) or not np.all(np.isfinite(c) & (c > 0)) or not np.allclose(c, c.T):
        raise ValueError(f"c_w as an array must be a symmetric ({m}, {m}) array of finite values > 0")
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
    if not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a finite number > 0, got {tau!r}")
    if not (np.isfinite(eps_n) and 0 <= eps_n <= tau):
        raise ValueError(f"eps_n must lie in [0, tau], got {eps_n!r}")
    dist = _pairwise_dist(p)
    with np.errstate(divide="ignore"):
        w = c * np.where(dist > 0, dist, 0.0) ** (-gamma)
    lam = np.where(w > tau, w, eps_n)
    np.fill_diagonal(lam, 0.0)
    return lam


@dataclass(frozen=True)
class FusedSolution:
    """Result of :func:`fused_pairwise_admm`.

    ``theta``: (m,) or (m, d) solution; ``labels``: connected components of the fused edges (``z_e = 0``),
    numbered by first appearance; ``n_iter``, ``converged``, ``objective`` (value of (1) at ``theta``).
    """

    theta: np.ndarray
    labels: np.ndarray
    n_iter: int
    converged: bool
    objective: float


def _check_problem(A, b, lam):
    a = np.asarray(A, dtype=float)
    bb = _as_2d_points(b, "b")
    m = bb.shape[0]
    if a.shape != (m,):
        raise ValueError(f"A must have shape ({m},) to match b, got {a.shape}")
    if not np.all(np.isfinite(a) & (a > 0)):
        raise ValueError("A must contain finite values > 0 (the curvatures of the per-task losses)")
    L = np.asarray(lam, dtype=float)
    if L.ndim == 0:
        L = np.full((m, m), float(L))
        np.fill_diagonal(L, 0.0)
    if L.shape != (m, m):
        raise ValueError(f"lam must be a scalar or an ({m}, {m}) array, got shape {L.shape}")
    if np.any(np.isnan(L)) or np.any(L < 0) or not np.array_equal(L, L.T):
        raise ValueError("lam must be symmetric with values in [0, inf]")
    return a, bb, L


def fused_objective(A, b, lam, theta) -> float:
    """Value of problem (1) at ``theta`` (``lam`` scalar or (m, m); infinite weights on fused pairs add 0)."""
    a, bb, L = _check_problem(A, b, lam)
    th = _as_2d_points(theta, "theta")
    fit = float(np.sum(a * ((th - bb) ** 2).sum(axis=1)))
    dist = _pairwise_dist(th)
    iu = np.triu_indices(len(a), 1)
    with np.errstate(invalid="ignore"):
        pen = np.where(dist[iu] > 0, L[iu] * dist[iu], 0.0)
    return fit + float(pen.sum())


def fused_pairwise_admm(
    A,
    b,
    lam,
    rho: float = 1.0,
    tol: float = 1e-8,
    max_iter: int = 20_000,
    adaptive_rho: bool = True,
) -> FusedSolution:
    """Solve ``min sum_j A_j ||theta_j - b_j||^2 + sum_{j<j'} lam_{jj'} ||theta_j - theta_j'||_2`` by ADMM.

    With the incidence matrix ``D`` (row ``e = (j, j')`` is ``e_j - e_j'``) and edges ``z = D theta``,
    the scaled-form iterations are

    * ``theta <- (2 diag(A) + rho D^T D)^{-1} (2 A b + rho D^T (z - u))``   (a linear solve),
    * ``z_e <- max(0, 1 - lam_e / (rho ||v_e||)) v_e`` with ``v = D theta + u``  (block soft threshold),
    * ``u <- u + D theta - z``.

    Stops when the primal and dual residuals fall below ``tol`` (absolute + relative, Boyd et al. eq. 3.12);
    ``adaptive_rho`` applies residual balancing.  Edges with ``lam = 0`` are dropped; ``lam = inf`` forces
    equality.  ``A``: (m,) positive; ``b``: (m,) or (m, d); ``lam``: scalar or symmetric (m, m).
    """
    a, bb, L = _check_problem(A, b, lam)
    if not (np.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho!r}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    m, d = bb.shape
    vector_out = np.ndim(b) == 2
    iu, ju = np.triu_indices(m, 1)
    keep = L[iu, ju] > 0
    iu, ju = iu[keep], ju[keep]
    lam_e = L[iu, ju]
    n_e = len(iu)
    if n_e == 0:  # no coupling: each task keeps its own minimiser
        theta = bb.copy()
        labels = np.arange(m)
        obj = fused_objective(a, bb, L, theta)
        return FusedSolution(theta if vector_out else theta[:, 0], labels, 0, True, obj)
    rows = np.repeat(np.arange(n_e), 2)
    cols = np.column_stack([iu, ju]).ravel()
    vals = np.tile([1.0, -1.0], n_e)
    D = sparse.csr_matrix((vals, (rows, cols)), shape=(n_e, m))
    Dt = D.T.tocsr()
    lap = (Dt @ D).toarray()

    def factor(r):
        return cho_factor(2.0 * np.diag(a) + r * lap)

    chol = factor(rho)
    theta = bb.copy()
    z = D @ theta
    u = np.zeros_like(z)
    rhs0 = 2.0 * a[:, None] * bb
    converged = False
    it = 0
    for it in range(1, int(max_iter) + 1):
        theta = cho_solve(chol, rhs0 + rho * (Dt @ (z - u)))
        Dth = D @ theta
        v = Dth + u
        nv = np.sqrt((v**2).sum(axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            shrink = np.where(nv > 0, np.maximum(0.0, 1.0 - lam_e / (rho * nv)), 0.0)
        z_old = z
        z = shrink[:, None] * v
        u = u + Dth - z
        r = np.linalg.norm(Dth - z)
        s = rho * np.linalg.norm(Dt @ (z - z_old))
        eps_pri = np.sqrt(n_e * d) * tol + tol * max(np.linalg.norm(Dth), np.linalg.norm(z))
        eps_dual = np.sqrt(m * d) * tol + tol * rho * np.linalg.norm(Dt @ u)
        if r <= eps_pri and s <= eps_dual:
            converged = True
            break
        if adaptive_rho and it % 10 == 0:
            if r > 10.0 * s:
                rho, u = rho * 2.0, u / 2.0
                chol = factor(rho)
            elif s > 10.0 * r:
                rho, u = rho / 2.0, u * 2.0
                chol = factor(rho)
    fused = np.all(z == 0.0, axis=1)
    graph = sparse.csr_matrix((np.ones(int(fused.sum())), (iu[fused], ju[fused])), shape=(m, m))
    _, comp = connected_components(graph, directed=False)
    _, first = np.unique(comp, return_index=True)
    order = np.argsort(np.argsort(first))
    labels = order[comp]
    obj = fused_objective(a, bb, L, theta)
    return FusedSolution(theta if vector_out else theta[:, 0], labels, it, converged, obj)


def fusion_path(A, b, weights, scales, **admm_kwargs) -> np.ndarray:
    """Solutions of (1) with ``lam = s * weights`` for each ``s`` in ``scales``: shape (len(scales), m[, d]).

    With adaptive ``weights`` this traces how the task estimates merge into clusters as the penalty grows.
    """
    return np.stack([fused_pairwise_admm(A, b, float(s) * np.asarray(weights), **admm_kwargs).theta for s in scales])


class ChainingWarning(UserWarning):
    """A fused cluster's pilot range exceeds twice the fuse radius and its tasks are not homogeneous."""


def _segment(b: np.ndarray, w: np.ndarray, k: int) -> list[int]:
    """Exact weighted 1-D k-means of sorted ``b`` by dynamic programming: the ``k - 1`` cut points."""
    n = b.size
    cw = np.concatenate([[0.0], np.cumsum(w)])
    cb = np.concatenate([[0.0], np.cumsum(w * b)])
    cb2 = np.concatenate([[0.0], np.cumsum(w * b * b)])
    i, j = np.triu_indices(n + 1, 1)  # segment b[i:j]
    ss = np.full((n + 1, n + 1), np.inf)
    ss[i, j] = cb2[j] - cb2[i] - (cb[j] - cb[i]) ** 2 / (cw[j] - cw[i])
    cost = ss[0].copy()  # cost[j]: best 1-segment cost of b[:j]
    back = []
    for _ in range(k - 1):
        tot = cost[:, None] + ss  # tot[i, j]: best of b[:i] plus the segment b[i:j]
        arg = np.argmin(tot, axis=0)
        cost = tot[arg, np.arange(n + 1)]
        back.append(arg)
    cuts, j = [], n
    for arg in reversed(back):
        j = int(arg[j])
        cuts.append(j)
    return sorted(cuts)


def split_chained_clusters(labels, pilots, pilot_se, radius, alpha: float = 0.01) -> tuple[np.ndarray, list]:
    """Guard against single-linkage chaining of the fused clusters (1-D targets).

    Exact fusion merges every pair closer than the fuse radius ``r`` and, transitively, their neighbours: with
    many or noisy tasks a chain of close pairs can join clusters whose centres are far apart.  A cluster ``C``
    whose pilot range ``max_C b - min_C b`` exceeds ``2 r`` is *flagged* (no pair of a chain-free cluster is
    more than ``r`` apart).  A flagged cluster that fails Cochran's homogeneity test,
    ``Q = sum_C w_j (b_j - bbar_w)^2 > chi2_{|C|-1, 1-alpha}`` with ``w_j = 1 / se_j^2``, is split into the
    fewest groups ``k = 2, 3, ...`` of its sorted pilots, cut by exact weighted 1-D k-means (dynamic
    programming), whose every group is acceptable: range ``<= 2 r`` or homogeneous by the same test.  A wide
    but homogeneous cluster of noisy tasks is kept.  ``alpha = 1`` accepts a group only by its range (the
    range rule alone).

    ``radius``: a number or an (m, m) array of per-pair radii (the largest pair radius in ``C`` is used).
    Returns ``(labels, flagged)``: labels numbered by first appearance and the list of flagged clusters
    (sorted task indices), split or not.
    """
    from scipy.stats import chi2

    lab = np.asarray(labels).ravel()
    p = np.asarray(pilots, dtype=float).ravel()
    se = np.asarray(pilot_se, dtype=float).ravel()
    m = lab.size
    if p.shape != (m,) or se.shape != (m,):
        raise ValueError(f"pilots and pilot_se must have shape ({m},) like labels, got {p.shape} and {se.shape}")
    if not np.all(np.isfinite(se) & (se > 0)):
        raise ValueError("pilot_se must contain finite values > 0")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha <= 1.0):
        raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
    r = np.asarray(radius, dtype=float)
    if not (r.shape in ((), (m, m)) and np.all(np.isfinite(r) & (r >= 0))):
        raise ValueError(f"radius must be a finite number >= 0 or an ({m}, {m}) array of them")
    w_all = 1.0 / se**2

    def radius_of(idx):
        return float(r) if r.ndim == 0 else float(r[np.ix_(idx, idx)].max())

    def acceptable(idx, r_c):
        if idx.size < 2 or p[idx].max() - p[idx].min() <= 2.0 * r_c:
            return True
        if alpha >= 1.0:
            return False
        w = w_all[idx]
        mu = np.sum(w * p[idx]) / np.sum(w)
        return chi2.sf(float(np.sum(w * (p[idx] - mu) ** 2)), idx.size - 1) >= alpha

    flagged: list = []
    out = np.empty(m, dtype=int)
    n_out = 0
    for c in np.unique(lab):
        idx = np.flatnonzero(lab == c)
        idx = idx[np.argsort(p[idx], kind="stable")]
        r_c = radius_of(idx)
        parts = [idx]
        if idx.size >= 2 and p[idx[-1]] - p[idx[0]] > 2.0 * r_c:
            flagged.append(sorted(idx.tolist()))
            if not acceptable(idx, r_c):  # wide and heterogeneous: the fewest acceptable groups
                for k in range(2, idx.size + 1):
                    parts = np.split(idx, _segment(p[idx], w_all[idx], k))
                    if all(acceptable(g, r_c) for g in parts):
                        break
        for g in parts:
            out[g] = n_out
            n_out += 1
    _, first, inv = np.unique(out, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inv], flagged


def merge_homogeneous_clusters(labels, pilots, pilot_se, alpha: float = 0.01) -> np.ndarray:
    """Undo over-splitting (1-D targets): merge neighbouring clusters while their union is homogeneous.

    Clusters are ordered by their precision-weighted mean pilot.  Repeatedly, among neighbouring pairs whose
    union passes Cochran's test (``Q = sum w_j (b_j - bbar_w)^2 <= chi2_{n-1, 1-alpha}``, ``w_j = 1 / se_j^2``,
    over the union's tasks) the pair with the largest p-value is merged, until no pair passes.  This is the
    mirror image of :func:`split_chained_clusters` (the same test decides both): a cluster the guard split for
    failing the test is never merged back whole, though two of its parts may merge if their union passes.
    Returns labels numbered by first appearance.
    """
    from scipy.stats import chi2

    lab = np.asarray(labels).ravel()
    p = np.asarray(pilots, dtype=float).ravel()
    w = 1.0 / np.asarray(pilot_se, dtype=float).ravel() ** 2
    if p.shape != lab.shape or w.shape != lab.shape:
        raise ValueError(f"pilots and pilot_se must have shape ({lab.size},) like labels")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha <= 1.0):
        raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
    groups = [np.flatnonzero(lab == c) for c in np.unique(lab)]

    def pval(idx):
        mu = np.sum(w[idx] * p[idx]) / np.sum(w[idx])
        return float(chi2.sf(np.sum(w[idx] * (p[idx] - mu) ** 2), idx.size - 1))

    while len(groups) > 1:
        groups.sort(key=lambda g: np.sum(w[g] * p[g]) / np.sum(w[g]))
        ps = [pval(np.concatenate([groups[i], groups[i + 1]])) for i in range(len(groups) - 1)]
        best = int(np.argmax(ps))
        if ps[best] < alpha:
            break
        groups[best : best + 2] = [np.concatenate([groups[best], groups[best + 1]])]
    out = np.empty(lab.size, dtype=int)
    for c, g in enumerate(groups):
        out[g] = c
    _, first, inv = np.unique(out, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inv]
