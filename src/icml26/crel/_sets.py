"""Prediction sets in a latent space: an ellipsoid (convex, CReL's default), a scaled convex hull (convex)
and a union of balls (PCP, not convex).

All sets expose the same small interface: ``contains(z)``, ``log_volume()``, ``project(z)`` and
``sample_boundary(n)``.  The ellipsoid and the union of balls also give ``pieces()``, the list of
``(center, chol, radius)`` triples whose union is the set (each piece ``{c + L u : ||u||_2 <= r}``); the hull
gives its ``vertices``.  The worst-case optimizer works on those.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Ellipsoid", "UnionOfBalls", "HullSet", "log_unit_ball_volume"]

#: Relative slack used by ``contains`` so that points produced by ``project`` count as inside.
_CONTAIN_RTOL = 1e-9


def log_unit_ball_volume(d: int) -> float:
    """``log V_d`` with ``V_d = pi^{d/2} / Gamma(d/2 + 1)``, the volume of the unit ball in ``R^d``."""
    if not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    return 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0)


def _as_points(z, d: int, name: str = "z") -> tuple[np.ndarray, bool]:
    """Return ``z`` as a float array of shape ``(n, d)`` and whether the caller passed a single point."""
    a = np.asarray(z, dtype=float)
    single = a.ndim == 1
    if single:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != d:
        raise ValueError(f"{name} must have shape ({d},) or (n, {d}), got {np.shape(z)}")
    return a, single


def _check_radius(radius) -> float:
    r = float(radius)
    if not (r >= 0.0):  # also rejects NaN
        raise ValueError(f"radius must be >= 0 (or inf), got {radius!r}")
    return r


class Ellipsoid:
    r"""The ellipsoid ``C = { c + L u : ||u||_2 <= r }``.

    Equivalently ``C = { z : ||L^{-1}(z - c)||_2 <= r }``, the Mahalanobis ball of radius ``r`` for the
    covariance ``Sigma = L L^T``.  Its volume is ``r^d |det L| V_d``, i.e.
    ``log vol = d log r + sum_i log |L_ii| + log V_d`` for a triangular ``L``.

    Parameters
    ----------
    center : array of shape (d,)
        ``c``.
    chol : array of shape (d, d)
        ``L``, lower triangular with a positive diagonal (a Cholesky factor of ``Sigma``).
    radius : float
        ``r >= 0`` (``inf`` gives the whole space).
    """

    def __init__(self, center, chol, radius: float) -> None:
        c = np.asarray(center, dtype=float)
        if c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)):
            raise ValueError(f"center must be a finite 1-D array, got shape {np.shape(center)}")
        d = c.size
        L = np.asarray(chol, dtype=float)
        if L.shape != (d, d):
            raise ValueError(f"chol must have shape ({d}, {d}) to match center, got {L.shape}")
        if not np.all(np.isfinite(L)) or np.any(np.triu(L, 1) != 0.0) or np.any(np.diag(L) <= 0.0):
            raise ValueError("chol must be a finite lower-triangular matrix with a positive diagonal")
        self.center = c
        self.chol = L
        self.radius = _check_radius(radius)

    @property
    def dim(self) -> int:
        return self.center.size

    def __repr__(self) -> str:
        return f"Ellipsoid(dim={self.dim}, radius={self.radius:.4g}, log_volume={self.log_volume():.4g})"

    def pieces(self) -> list[tuple[np.ndarray, np.ndarray, float]]:
        return [(self.center, self.chol, self.radius)]

    def whiten(self, z) -> np.ndarray:
        """``u = L^{-1}(z - c)`` for points ``z`` of shape (d,) or (n, d) (same shape back)."""
        from scipy.linalg import solve_triangular

        a, single = _as_points(z, self.dim)
        u = solve_triangular(self.chol, (a - self.center).T, lower=True).T
        return u[0] if single else u

    def contains(self, z) -> np.ndarray | bool:
        """Whether ``||L^{-1}(z - c)|| <= r`` for each point (bool, or a bool array for shape (n, d))."""
        u = np.atleast_2d(self.whiten(z))
        inside = np.linalg.norm(u, axis=1) <= self.radius * (1.0 + _CONTAIN_RTOL) + 1e-12
        return bool(inside[0]) if np.ndim(z) == 1 else inside

    def log_volume(self) -> float:
        """``d log r + sum_i log L_ii + log V_d`` (``-inf`` for ``r = 0``, ``inf`` for ``r = inf``)."""
        if self.radius == 0.0:
            return -math.inf
        if math.isinf(self.radius):
            return math.inf
        d = self.dim
        return d * math.log(self.radius) + float(np.sum(np.log(np.diag(self.chol)))) + log_unit_ball_volume(d)

    def project(self, z) -> np.ndarray:
        r"""Euclidean projection ``argmin_{y in C} ||y - z||_2`` (points inside are returned unchanged).

        With ``Sigma = L L^T = V diag(s) V^T`` and ``w = V^T (z - c)``, the KKT conditions give
        ``y = c + V diag(s / (s + lam)) w`` where ``lam >= 0`` solves
        ``sum_i s_i w_i^2 / (s_i + lam)^2 = r^2``; the left side decreases in ``lam``, so we bisect.
        """
        a, single = _as_points(z, self.dim)
        out = a.copy()
        if math.isinf(self.radius):
            return out[0] if single else out
        s, V = np.linalg.eigh(self.chol @ self.chol.T)
        s = np.maximum(s, 1e-300)
        r2 = self.radius**2
        for i in np.flatnonzero(~np.atleast_1d(self.contains(a))):
            w = V.T @ (a[i] - self.center)
            if self.radius == 0.0:
                out[i] = self.center
                continue

            def g(lam: float, w=w) -> float:
                return float(np.sum(s * w**2 / (s + lam) ** 2)) - r2

            lo, hi = 0.0, max(1.0, float(s.max()))
            while g(hi) > 0.0:
                hi *= 2.0
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if g(mid) > 0.0:
                    lo = mid
                else:
                    hi = mid
                if hi - lo <= 1e-15 * max(1.0, hi):
                    break
            y = self.center + V @ (s / (s + hi) * w)  # hi: the side where the point is inside
            out[i] = y
        return out[0] if single else out

    def sample_boundary(self, n: int, random_state=None) -> np.ndarray:
        """``n`` points ``c + L r v``, ``v`` uniform on the unit sphere (uniform in ``u``, not in area)."""
        rng = np.random.default_rng(random_state)
        v = rng.standard_normal((int(n), self.dim))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return self.center + (self.radius * v) @ self.chol.T

    def sample(self, n: int, random_state=None) -> np.ndarray:
        """``n`` points uniform inside the ellipsoid (uniform in the ball of ``u``, mapped linearly)."""
        rng = np.random.default_rng(random_state)
        v = rng.standard_normal((int(n), self.dim))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        rad = self.radius * rng.random(int(n)) ** (1.0 / self.dim)
        return self.center + (rad[:, None] * v) @ self.chol.T


class UnionOfBalls:
    r"""The union ``C = union_k B(z_k, r)`` of Euclidean balls of one radius (the PCP set).

    PCP (probabilistic conformal prediction, Wang et al., 2023) uses the score ``min_k ||y - z_k||`` over
    ``K`` generated samples ``z_k``; thresholding it at ``r`` gives this set, which is not convex.

    Parameters
    ----------
    centers : array of shape (K, d)
        Ball centres ``z_k``.
    radius : float
        ``r >= 0``.
    """

    def __init__(self, centers, radius: float) -> None:
        Z = np.asarray(centers, dtype=float)
        if Z.ndim != 2 or Z.shape[0] < 1 or Z.shape[1] < 1 or not np.all(np.isfinite(Z)):
            raise ValueError(f"centers must be a finite array of shape (K, d) with K, d >= 1, got {np.shape(centers)}")
        self.centers = Z
        self.radius = _check_radius(radius)

    @property
    def dim(self) -> int:
        return self.centers.shape[1]

    def __repr__(self) -> str:
        return f"UnionOfBalls(n_balls={len(self.centers)}, dim={self.dim}, radius={self.radius:.4g})"

    def pieces(self) -> list[tuple[np.ndarray, np.ndarray, float]]:
        eye = np.eye(self.dim)
        return [(c, eye, self.radius) for c in self.centers]

    def _distances(self, a: np.ndarray) -> np.ndarray:
        return np.linalg.norm(a[:, None, :] - self.centers[None, :, :], axis=2)  # (n, K)

    def contains(self, z) -> np.ndarray | bool:
        """Whether ``min_k ||z - z_k|| <= r`` for each point."""
        a, single = _as_points(z, self.dim)
        inside = self._distances(a).min(axis=1) <= self.radius * (1.0 + _CONTAIN_RTOL) + 1e-12
        return bool(inside[0]) if single else inside

    def log_volume(self, n_mc: int = 4000, random_state=0) -> float:
        r"""Log of an unbiased Monte Carlo estimate of the union's volume.

        Pick a ball uniformly, a point ``z`` uniformly inside it, and weight it by ``1 / N(z)``, the number
        of balls holding ``z``: ``Vol = K V_d r^d E[1 / N(z)]``.  Exact (no sampling) when ``K = 1``.
        """
        if n_mc < 1:
            raise ValueError(f"n_mc must be >= 1, got {n_mc}")
        K, d = self.centers.shape
        if self.radius == 0.0:
            return -math.inf
        if math.isinf(self.radius):
            return math.inf
        base = math.log(K) + log_unit_ball_volume(d) + d * math.log(self.radius)
        if K == 1:
            return base
        rng = np.random.default_rng(random_state)
        k = rng.integers(0, K, size=n_mc)
        v = rng.standard_normal((n_mc, d))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        z = self.centers[k] + (self.radius * rng.random(n_mc) ** (1.0 / d))[:, None] * v
        n_cover = (self._distances(z) <= self.radius).sum(axis=1)
        n_cover = np.maximum(n_cover, 1)  # the point's own ball always holds it (guards rounding)
        return base + math.log(float(np.mean(1.0 / n_cover)))

    def project(self, z) -> np.ndarray:
        """Euclidean projection onto the union: the nearest of the projections onto each ball."""
        a, single = _as_points(z, self.dim)
        D = self._distances(a)
        k = D.argmin(axis=1)
        dist = D[np.arange(len(a)), k]
        out = a.copy()
        far = dist > self.radius * (1.0 + _CONTAIN_RTOL) + 1e-12  # the same slack as ``contains``
        if np.any(far):
            c = self.centers[k[far]]
            out[far] = c + (a[far] - c) * (self.radius / dist[far])[:, None]
        return out[0] if single else out

    def sample_boundary(self, n: int, random_state=None) -> np.ndarray:
        """``n`` points on the spheres ``||z - z_k|| = r`` (ball chosen uniformly; may be inside others)."""
        rng = np.random.default_rng(random_state)
        k = rng.integers(0, len(self.centers), size=int(n))
        v = rng.standard_normal((int(n), self.dim))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return self.centers[k] + self.radius * v


class HullSet:
    r"""The scaled convex hull ``C = { c + r (p - c) : p in conv{z_k} } = conv{ c + r (z_k - c) }``.

    ``c`` is the mean of the ``K`` samples ``z_k`` (an interior point of their hull when the samples span
    ``R^d``).  The non-conformity score of the "hull" set type is the gauge of the centred hull,

        ``g(v) = min { t >= 0 : v in t (conv{z_k} - c) } = min { sum_k lam_k : sum_k lam_k (z_k - c) = v,
        lam >= 0 }``  (a linear program),

    and ``z in C`` if and only if ``g(z - c) <= r``.  When the hull's facets ``a_i^T v <= b_i`` (``b_i > 0``)
    are available from qhull (``d <= 8``), ``g(v) = max(0, max_i a_i^T v / b_i)`` in closed form; otherwise,
    or when the samples do not span ``R^d``, the LP is solved (HiGHS); points outside the samples' span get
    ``g = inf``.  The set is convex, like the ellipsoid, but follows the samples' shape (skew, corners).

    Parameters
    ----------
    samples : array of shape (K, d)
        The latent samples ``z_k`` (``K >= 2``; ``K >= d + 1`` for a full-dimensional hull).
    radius : float
        ``r >= 0``.
    """

    _QHULL_MAX_DIM = 8

    def __init__(self, samples, radius: float) -> None:
        Z = np.asarray(samples, dtype=float)
        if Z.ndim != 2 or Z.shape[0] < 2 or Z.shape[1] < 1 or not np.all(np.isfinite(Z)):
            raise ValueError(f"samples must be a finite array of shape (K, d) with K >= 2, got {np.shape(samples)}")
        self.samples = Z
        self.center = Z.mean(axis=0)
        self.radius = _check_radius(radius)
        self._A = None  # facet normals a_i / b_i of the centred hull (qhull), computed on first need
        self._hull_idx = np.arange(len(Z))
        self._qhull_tried = False

    def _facets(self) -> np.ndarray | None:
        """The centred hull's facets from qhull (``d <= 8`` and full-dimensional samples), else ``None``."""
        Z = self.samples
        if not self._qhull_tried and Z.shape[0] >= Z.shape[1] + 1 and 1 < Z.shape[1] <= self._QHULL_MAX_DIM:
            from scipy.spatial import ConvexHull, QhullError

            self._qhull_tried = True
            try:
                h = ConvexHull(Z - self.center)
            except QhullError:
                return None
            b = -h.equations[:, -1]
            if np.all(b > 1e-12 * max(1.0, float(np.abs(Z - self.center).max()))):
                self._A = h.equations[:, :-1] / b[:, None]
                self._hull_idx = np.asarray(h.vertices)
                self._volume = float(h.volume)
        return self._A

    @property
    def dim(self) -> int:
        return self.samples.shape[1]

    @property
    def vertices(self) -> np.ndarray:
        """The vertices ``c + r (z_k - c)`` of the set (all samples when qhull did not run)."""
        self._facets()
        r = 0.0 if math.isinf(self.radius) else self.radius
        return self.center + r * (self.samples[self._hull_idx] - self.center)

    def __repr__(self) -> str:
        return f"HullSet(n_samples={len(self.samples)}, dim={self.dim}, radius={self.radius:.4g})"

    def gauge(self, v) -> np.ndarray | float:
        """``g(v)`` of the centred hull of the samples, for offsets ``v = z - c`` of shape (d,) or (n, d)."""
        a, single = _as_points(v, self.dim, "v")
        few = len(a) < 4 and self.dim > 3  # a few LPs are cheaper than qhull in d > 3
        A = self._A if (self._A is not None or few) else self._facets()
        if A is not None:
            g = np.maximum(0.0, (a @ A.T).max(axis=1))
        else:
            g = np.array([self._gauge_lp(x) for x in a])
        return float(g[0]) if single else g

    def _gauge_lp(self, v: np.ndarray) -> float:
        from scipy.optimize import linprog

        if not np.any(v):
            return 0.0
        D = (self.samples - self.center).T
        res = linprog(np.ones(D.shape[1]), A_eq=D, b_eq=v, bounds=(0, None), method="highs")
        return float(res.fun) if res.status == 0 else math.inf

    def contains(self, z) -> np.ndarray | bool:
        """Whether ``g(z - c) <= r`` for each point."""
        a, single = _as_points(z, self.dim)
        inside = np.atleast_1d(self.gauge(a - self.center)) <= self.radius * (1.0 + _CONTAIN_RTOL) + 1e-12
        return bool(inside[0]) if single else inside

    def log_volume(self) -> float:
        """``d log r + log vol(conv{z_k})`` (qhull; ``-inf`` when the samples do not span ``R^d``).  Exact, but
        qhull's cost grows fast with ``d`` (seconds for 32 points in ``d = 16``)."""
        if self.radius == 0.0:
            return -math.inf
        if math.isinf(self.radius):
            return math.inf
        self._facets()
        vol = getattr(self, "_volume", None)
        if vol is None:
            from scipy.spatial import ConvexHull, QhullError

            try:
                vol = float(ConvexHull(self.samples).volume) if self.dim > 1 else float(np.ptp(self.samples))
            except QhullError:
                return -math.inf
        return self.dim * math.log(self.radius) + math.log(vol) if vol > 0 else -math.inf

    def project(self, z, max_iter: int = 5000, tol: float = 1e-12) -> np.ndarray:
        r"""Euclidean projection onto the set (points inside are returned unchanged): the weights
        ``lam = argmin_{lam in simplex} ||V^T lam - z||^2`` by accelerated projected gradient (FISTA)."""
        import torch

        from ._optimize import _proj_simplex

        a, single = _as_points(z, self.dim)
        out = a.copy()
        V = self.vertices
        step = 1.0 / max(float(np.linalg.norm(V, 2)) ** 2, 1e-300)
        for i in np.flatnonzero(~np.atleast_1d(self.contains(a))):
            lam = np.full(len(V), 1.0 / len(V))
            y, t = lam.copy(), 1.0
            for _ in range(max_iter):
                g = V @ (V.T @ y - a[i])
                new = _proj_simplex(torch.as_tensor((y - step * g)[None]))[0].numpy()
                t_new = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
                y = new + ((t - 1) / t_new) * (new - lam)
                done = np.linalg.norm(new - lam) <= tol
                lam, t = new, t_new
                if done:
                    break
            out[i] = V.T @ lam
        return out[0] if single else out

    def sample_boundary(self, n: int, random_state=None) -> np.ndarray:
        """``n`` boundary points ``c + r v / g(v)``, ``v`` a uniform random direction."""
        rng = np.random.default_rng(random_state)
        v = rng.standard_normal((int(n), self.dim))
        g = np.atleast_1d(self.gauge(v))
        return self.center + self.radius * v / g[:, None]
