"""Baselines: linear latent interpolation, linear interpolation projected once, kNN-graph shortest paths.

All return ``(K+1, l)`` paths from ``z_a`` to ``z_b`` with ``K = n_steps`` segments, so every method is scored on
the same number of nodes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = [
    "linear_interpolation",
    "projected_linear_interpolation",
    "knn_graph_path",
    "resample_polyline",
    "spline_energy_path",
]


def _pts(z_a, z_b, n_steps) -> tuple[np.ndarray, np.ndarray, int]:
    a = np.asarray(z_a, dtype=np.float64).ravel()
    b = np.asarray(z_b, dtype=np.float64).ravel()
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"z_a and z_b must be points of the same dimension, got {a.shape} and {b.shape}")
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 2:
        raise ValueError(f"n_steps must be an integer >= 2, got {n_steps!r}")
    return a, b, int(n_steps)


def linear_interpolation(z_a, z_b, n_steps: int = 16) -> np.ndarray:
    """``z_k = (1 - k/K) z_a + (k/K) z_b``: the straight latent line."""
    a, b, K = _pts(z_a, z_b, n_steps)
    s = np.linspace(0.0, 1.0, K + 1)[:, None]
    return (1 - s) * a + s * b


def projected_linear_interpolation(z_a, z_b, n_steps: int, project: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The straight line with every interior node mapped once by ``project`` (e.g. ``LatentProjector.project``)."""
    path = linear_interpolation(z_a, z_b, n_steps)
    if not callable(project):
        raise TypeError("project must be a callable (n, l) array -> (n, l) array")
    path[1:-1] = np.asarray(project(path[1:-1]), dtype=np.float64)
    return path


def resample_polyline(points: np.ndarray, n_steps: int) -> np.ndarray:
    """``n_steps + 1`` points equally spaced by arc length along the polyline ``points`` (``(m, l)``)."""
    P = np.asarray(points, dtype=np.float64)
    seg = np.linalg.norm(np.diff(P, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    if s[-1] == 0:
        return np.repeat(P[:1], n_steps + 1, axis=0)
    t = np.linspace(0.0, s[-1], n_steps + 1)
    return np.column_stack([np.interp(t, s, P[:, j]) for j in range(P.shape[1])])


def knn_graph_path(codes, z_a, z_b, n_steps: int = 16, k: int = 10, return_polyline: bool = False):
    """Isomap-style geodesic: Dijkstra shortest path from ``z_a`` to ``z_b`` in the symmetrised ``k``-nearest-neighbour
    graph of ``codes`` (plus the two endpoints; edge weight = Euclidean distance), resampled to ``n_steps + 1``
    nodes equally spaced by arc length.  Raises ``ValueError`` when the endpoints are not connected."""
    from scipy.sparse.csgraph import dijkstra
    from sklearn.neighbors import kneighbors_graph

    a, b, K = _pts(z_a, z_b, n_steps)
    C = np.asarray(codes, dtype=np.float64)
    if C.ndim != 2 or C.shape[1] != a.size or C.shape[0] < 2:
        raise ValueError(f"codes must have shape (n, {a.size}) with n >= 2, got {C.shape}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k < C.shape[0] + 1:
        raise ValueError(f"k must be an integer in [1, n_codes], got {k!r}")
    X = np.vstack([a, b, C])
    G = kneighbors_graph(X, n_neighbors=k, mode="distance")
    G = G.maximum(G.T)
    dist, pred = dijkstra(G, directed=False, indices=0, return_predecessors=True)
    if not np.isfinite(dist[1]):
        raise ValueError(f"z_a and z_b are not connected in the {k}-nearest-neighbour graph of the codes; raise k")
    idx = [1]
    while idx[-1] != 0:
        idx.append(int(pred[idx[-1]]))
    poly = X[idx[::-1]]
    path = resample_polyline(poly, K)
    return (path, poly) if return_polyline else path


def spline_energy_path(
    z_a,
    z_b,
    n_steps: int,
    zeta: Callable,
    init=None,
    n_ctrl: int = 4,
    penalty: float = 100.0,
    max_iter: int = 500,
) -> np.ndarray:
    """A curve-energy baseline in the spirit of stochman's ``connecting_geodesic``: a natural cubic spline through
    ``z_a``, ``n_ctrl`` free control points (at equally spaced times) and ``z_b``, sampled at ``n_steps + 1`` times,
    minimising ``E^K + penalty * sum_k |zeta(c(t_k))|^2`` (a pure penalty: no multipliers, few degrees of freedom)
    by BFGS.  ``init``: a ``(m, l)`` path the control points start on (the kNN path; else the straight line)."""
    import torch
    from scipy.interpolate import CubicSpline
    from scipy.optimize import minimize

    a, b, K = _pts(z_a, z_b, n_steps)
    if isinstance(n_ctrl, bool) or not isinstance(n_ctrl, int) or n_ctrl < 1:
        raise ValueError(f"n_ctrl must be an integer >= 1, got {n_ctrl!r}")
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    if not callable(zeta):
        raise TypeError("zeta must be a callable (n, l) tensor -> (n, m) tensor")
    knots = np.linspace(0.0, 1.0, n_ctrl + 2)
    t = np.linspace(0.0, 1.0, K + 1)
    basis = np.column_stack(
        [CubicSpline(knots, np.eye(n_ctrl + 2)[j], bc_type="natural")(t) for j in range(n_ctrl + 2)]
    )  # (K+1, n_ctrl+2): the curve's samples are linear in the knots' values
    start = linear_interpolation(a, b, K) if init is None else resample_polyline(np.asarray(init, float), K)
    ctrl0 = np.array([start[int(round(s * K))] for s in knots[1:-1]])
    B = torch.as_tensor(basis)
    A, Bp = torch.as_tensor(a[None, :]), torch.as_tensor(b[None, :])

    def fun(x: np.ndarray):
        c = torch.as_tensor(x.reshape(n_ctrl, a.size)).requires_grad_(True)
        path = B @ torch.cat([A, c, Bp], 0)
        val = K * ((path[1:] - path[:-1]) ** 2).sum() + penalty * (zeta(path[1:-1]) ** 2).sum()
        (g,) = torch.autograd.grad(val, c)
        return float(val.detach()), g.numpy().ravel().astype(np.float64)

    res = minimize(fun, ctrl0.ravel(), jac=True, method="BFGS", options={"maxiter": max_iter, "gtol": 1e-8})
    ctrl = res.x.reshape(n_ctrl, a.size)
    return basis @ np.vstack([a, ctrl, b])
