"""Discrete geodesic calculus on an implicitly defined manifold ``M = {z in R^l : zeta(z) = 0}``.

Path energy (Rumpf & Wirth's time-discrete geodesic calculus) of nodes ``z_0..z_K``:

    E^K[z_0..z_K] = K * sum_{k=1..K} W(z_{k-1}, z_k),      L[z_0..z_K] = sum_k sqrt(W(z_{k-1}, z_k)),

with ``W`` a local approximation of the squared Riemannian distance: ``|z_k - z_{k-1}|^2``
(:class:`EuclideanMetric`) or ``|D(z_k) - D(z_{k-1})|^2`` (:class:`PullbackMetric` of a decoder ``D``).

* **Discrete geodesic** (boundary value problem): minimise ``E^K`` over ``z_1..z_{K-1}`` subject to
  ``zeta(z_k) = 0`` with the endpoints fixed, by the augmented Lagrangian

      L_A = E^K - sum_k lam_k . zeta(z_k) + mu/2 sum_k |zeta(z_k)|^2,

  inner BFGS solves with ``gtol = 1/mu``; outer loop: if ``||zeta|| < tolC`` then ``lam <- lam - mu zeta``,
  ``tolC <- tolC / mu^0.9``, ``gtol <- gtol / mu``; else ``mu <- alpha mu``, ``gtol = 1/mu``,
  ``tolC = mu^-0.1``.  Stops when ``max|grad L_A| < tol`` and ``||zeta(interior nodes)|| < tol_constraint``,
  or ``mu >= max_mu``, or after ``max_outer`` outer iterations.
* **Discrete exponential map** (shooting): ``v <- v / K``; ``z_1`` from ``z_0 + v`` (``first_step``), then for
  ``k >= 1`` solve for ``(z_{k+1}, lambda)`` the discrete Euler-Lagrange system

      d_2 W(z_{k-1}, z_k) + d_1 W(z_k, z_{k+1}) - Dzeta(z_k)^T lambda = 0,     zeta(z_{k+1}) = 0

  as the least-squares problem ``min 1/2 |EL|^2 + c/2 |zeta(z_{k+1})|^2`` (BFGS).
* **Discrete logarithm**: ``K (z_1 - z_0)`` of the discrete geodesic from ``z_a`` to ``z_b``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from scipy.optimize import minimize

__all__ = ["EuclideanMetric", "PullbackMetric", "ImplicitManifold", "sphere_zeta", "torus_zeta"]

Zeta = Callable[[torch.Tensor], torch.Tensor]


# -- exact constraints ----------------------------------------------------------------------------------------
def sphere_zeta(z: torch.Tensor, radius: float = 1.0) -> torch.Tensor:
    """The sphere ``|z|^2 - radius^2 = 0`` as an implicit constraint: ``(n, l) -> (n, 1)``."""
    return (z**2).sum(-1, keepdim=True) - radius**2


def torus_zeta(z: torch.Tensor, R: float = 0.8, r: float = 0.2) -> torch.Tensor:
    """The torus ``(sqrt(z_1^2 + z_2^2) - R)^2 + z_3^2 - r^2 = 0`` in ``R^3`` (paper App. C.1): ``(n, 3) -> (n, 1)``."""
    if z.shape[-1] != 3:
        raise ValueError(f"torus_zeta needs points in R^3, got last dimension {z.shape[-1]}")
    rho = torch.sqrt(z[..., 0] ** 2 + z[..., 1] ** 2)
    return ((rho - R) ** 2 + z[..., 2] ** 2 - r**2).unsqueeze(-1)


# -- metrics --------------------------------------------------------------------------------------------------
class EuclideanMetric:
    """``W(a, b) = |a - b|^2`` (rows of ``a`` and ``b`` paired): the latent space's own metric."""

    def sqdist(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ((b - a) ** 2).sum(-1)

    def __repr__(self) -> str:
        return "EuclideanMetric()"


class PullbackMetric:
    """``W(a, b) = |D(a) - D(b)|^2`` for a decoder ``D: R^l -> R^p`` (any differentiable callable or module).

    For small steps this is the squared length in the pullback metric ``g(z) = DD(z)^T DD(z)``.  The decoder
    is evaluated in its own parameter dtype (if it has parameters); results come back in the caller's dtype.
    """

    def __init__(self, decoder: Callable[[torch.Tensor], torch.Tensor]) -> None:
        if not callable(decoder):
            raise TypeError(f"decoder must be callable (z -> x), got {type(decoder)}")
        self.decoder = decoder

    def _decode(self, z: torch.Tensor) -> torch.Tensor:
        dt = z.dtype
        if isinstance(self.decoder, torch.nn.Module):
            p = next(iter(self.decoder.parameters()), None)
            if p is not None:
                return self.decoder(z.to(p.dtype)).to(dt).reshape(z.shape[0], -1)
        return self.decoder(z).reshape(z.shape[0], -1)

    def sqdist(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ((self._decode(b) - self._decode(a)) ** 2).sum(-1)

    def __repr__(self) -> str:
        return f"PullbackMetric({type(self.decoder).__name__})"


# -- the manifold ---------------------------------------------------------------------------------------------
def _as_point(z, l: int | None, name: str) -> np.ndarray:
    if isinstance(z, torch.Tensor):
        z = z.detach().cpu().numpy()
    try:
        a = np.asarray(z, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-d array-like of floats, got {type(z)}") from None
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a 1-d point of shape (latent_dim,), got shape {a.shape}")
    if l is not None and a.size != l:
        raise ValueError(f"{name} must have {l} coordinates (the codes' latent_dim), got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def _check_steps(n_steps) -> int:
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 2:
        raise ValueError(f"n_steps must be an integer >= 2 (the number K of path segments), got {n_steps!r}")
    return int(n_steps)


class ImplicitManifold:
    """The zero set of ``zeta: R^l -> R^m`` with a metric ``W``: geodesics, exponential and log maps, energy.

    ``zeta``: a differentiable batched callable ``(n, l) tensor -> (n, m)`` (exact constraints such as
    :func:`sphere_zeta`, or ``LatentProjector.zeta``); evaluated in float64.  ``metric``:
    :class:`EuclideanMetric` (default) or :class:`PullbackMetric`.  ``codes``: optional ``(n, l)`` training codes,
    used by ``init="knn"`` and by ``tol_constraint="auto"`` (``2 sqrt(K-1) mean|zeta(codes)|``, the natural
    violation level of a learned ``zeta``; ``1e-6`` without codes).

    Endpoints: a point with ``|zeta(z)| > endpoint_tol`` is off the manifold; ``off_manifold="project"``
    (default) replaces it by its nearest point on the zero set (:meth:`project`, recorded in ``last_info_``),
    ``"raise"`` raises ``ValueError``.
    """

    def __init__(
        self,
        zeta: Zeta,
        metric: EuclideanMetric | PullbackMetric | None = None,
        codes=None,
        endpoint_tol: float = 0.05,
        off_manifold: str = "project",
        knn: int = 10,
    ) -> None:
        if not callable(zeta):
            raise TypeError(f"zeta must be a callable (n, l) tensor -> (n, m) tensor, got {type(zeta)}")
        metric = EuclideanMetric() if metric is None else metric
        if not hasattr(metric, "sqdist"):
            raise TypeError(f"metric must provide sqdist(a, b) (EuclideanMetric or PullbackMetric), got {metric!r}")
        if off_manifold not in ("project", "raise"):
            raise ValueError(f"off_manifold must be 'project' or 'raise', got {off_manifold!r}")
        if not endpoint_tol > 0:
            raise ValueError(f"endpoint_tol must be > 0, got {endpoint_tol!r}")
        if isinstance(knn, bool) or not isinstance(knn, int) or knn < 1:
            raise ValueError(f"knn must be an integer >= 1, got {knn!r}")
        self.zeta, self.metric = zeta, metric
        self.endpoint_tol, self.off_manifold, self.knn = float(endpoint_tol), off_manifold, knn
        self.codes = None
        if codes is not None:
            c = codes.detach().cpu().numpy() if isinstance(codes, torch.Tensor) else np.asarray(codes, float)
            if c.ndim != 2 or c.shape[0] < 2 or not np.all(np.isfinite(c)):
                raise ValueError(f"codes must be a finite (n, latent_dim) array with n >= 2, got shape {c.shape}")
            self.codes = c.astype(np.float64)
        self.last_info_: dict = {}

    # -- helpers -------------------------------------------------------------------------------------------
    def _zeta(self, z: torch.Tensor) -> torch.Tensor:
        out = self.zeta(z)
        return out.reshape(z.shape[0], -1)

    def violation(self, z) -> np.ndarray:
        """``|zeta(z)|`` for each row of ``z`` (numpy)."""
        t = torch.as_tensor(np.atleast_2d(np.asarray(z, dtype=np.float64)))
        with torch.no_grad():
            return torch.linalg.norm(self._zeta(t), dim=1).numpy()

    def _auto_tol(self, n_nodes: int) -> float:
        if self.codes is None:
            return 1e-6
        return max(1e-6, 2.0 * math.sqrt(n_nodes) * float(self.violation(self.codes).mean()))

    def _endpoint(self, z, name: str, l: int | None) -> np.ndarray:
        p = _as_point(z, l, name)
        v = float(self.violation(p)[0])
        if v > self.endpoint_tol:
            if self.off_manifold == "raise":
                raise ValueError(
                    f"{name} is off the manifold: |zeta({name})| = {v:.3g} > endpoint_tol = "
                    f"{self.endpoint_tol:g} (use off_manifold='project' to project it)"
                )
            p = self.project(p)
            self.last_info_.setdefault("projected_endpoints", []).append(name)
        return p

    def energy(self, path) -> float:
        """``E^K = K sum_k W(z_{k-1}, z_k)`` of a ``(K+1, l)`` path."""
        t = torch.as_tensor(np.asarray(path, dtype=np.float64))
        with torch.no_grad():
            return float(self._energy(t))

    def _energy(self, t: torch.Tensor) -> torch.Tensor:
        K = t.shape[0] - 1
        return K * self.metric.sqdist(t[:-1], t[1:]).sum()

    def length(self, path) -> float:
        """``L = sum_k sqrt(W(z_{k-1}, z_k))`` of a ``(K+1, l)`` path."""
        t = torch.as_tensor(np.asarray(path, dtype=np.float64))
        with torch.no_grad():
            return float(torch.sqrt(self.metric.sqdist(t[:-1], t[1:]).clamp_min(0)).sum())

    # -- the augmented-Lagrangian solver ---------------------------------------------------------------------
    def _solve(
        self,
        objective: Callable[[torch.Tensor], torch.Tensor],
        x0: np.ndarray,
        tol_constraint: float,
        mu: float,
        alpha: float,
        max_mu: float,
        tol: float,
        max_outer: int,
    ) -> tuple[np.ndarray, dict]:
        """Minimise ``objective(X)`` s.t. ``zeta(X) = 0`` row-wise, ``X`` of shape ``x0.shape`` (see module doc)."""
        shape = x0.shape
        X = torch.as_tensor(x0, dtype=torch.float64)
        m = self._zeta(X).shape[1]
        lam = torch.zeros(shape[0], m, dtype=torch.float64)

        def fun(x: np.ndarray, lam: torch.Tensor, mu: float):
            t = torch.as_tensor(x.reshape(shape)).requires_grad_(True)
            c = self._zeta(t)
            val = objective(t) - (lam * c).sum() + 0.5 * mu * (c**2).sum()
            (g,) = torch.autograd.grad(val, t)
            return float(val.detach()), g.numpy().ravel().astype(np.float64)

        x = x0.ravel().astype(np.float64)
        gtol, tolC = 1.0 / mu, mu**-0.1
        info = {"outer": 0, "inner_iters": 0, "converged": False}
        for it in range(max_outer):
            res = minimize(fun, x, args=(lam, mu), jac=True, method="BFGS", options={"gtol": gtol, "maxiter": 2000})
            x = res.x
            info["inner_iters"] += int(res.nit)
            info["outer"] = it + 1
            with torch.no_grad():
                c = self._zeta(torch.as_tensor(x.reshape(shape)))
            cn = float(torch.linalg.norm(c))
            gmax = float(np.max(np.abs(res.jac))) if res.jac is not None else np.inf
            if cn < tol_constraint and gmax < tol:
                info["converged"] = True
                break
            if cn < tolC:
                lam = lam - mu * c
                tolC, gtol = tolC / mu**0.9, max(gtol / mu, 1e-12)
            else:
                mu *= alpha
                gtol, tolC = 1.0 / mu, mu**-0.1
            if mu >= max_mu:
                # last chance: one more solve at the cap
                res = minimize(fun, x, args=(lam, mu), jac=True, method="BFGS", options={"gtol": gtol, "maxiter": 2000})
                x = res.x
                with torch.no_grad():
                    cn = float(torch.linalg.norm(self._zeta(torch.as_tensor(x.reshape(shape)))))
                info["converged"] = cn < tol_constraint
                break
        info.update({"mu": float(mu), "constraint": cn, "tol_constraint": float(tol_constraint)})
        return x.reshape(shape), info

    def project(
        self,
        z,
        tol_constraint: float | str = "auto",
        mu: float = 10.0,
        alpha: float = 2.0,
        max_mu: float = 3e4,
        tol: float = 1e-6,
    ):
        """Nearest point of the zero set: ``argmin |y - z|^2 s.t. zeta(y) = 0`` (augmented Lagrangian)."""
        p = _as_point(z, None, "z")
        tc = self._auto_tol(1) if tol_constraint == "auto" else float(tol_constraint)
        target = torch.as_tensor(p[None, :])
        y, info = self._solve(lambda t: ((t - target) ** 2).sum(), p[None, :].copy(), tc, mu, alpha, max_mu, tol, 200)
        return y[0]

    # -- geodesics -----------------------------------------------------------------------------------------
    def _init_path(self, a: np.ndarray, b: np.ndarray, K: int, init) -> np.ndarray:
        s = np.linspace(0.0, 1.0, K + 1)[:, None]
        if isinstance(init, str) and init == "auto":
            init = "knn" if self.codes is not None else "linear"
        if isinstance(init, str):
            if init == "linear":
                return (1 - s) * a + s * b
            if init == "jump":
                return np.where(np.arange(K + 1)[:, None] < (K + 1) / 2, a, b).astype(np.float64)
            if init == "knn":
                if self.codes is None:
                    raise ValueError("init='knn' needs the codes: ImplicitManifold(zeta, metric, codes=Z)")
                from .baselines import knn_graph_path

                return knn_graph_path(self.codes, a, b, K, k=self.knn)
            raise ValueError(
                f"init must be 'auto', 'knn', 'jump', 'linear' or a (n_steps+1, latent_dim) array, got {init!r}"
            )
        arr = init.detach().cpu().numpy() if isinstance(init, torch.Tensor) else np.asarray(init, dtype=np.float64)
        if arr.shape != (K + 1, a.size):
            raise ValueError(f"init array must have shape (n_steps+1, latent_dim) = {(K + 1, a.size)}, got {arr.shape}")
        return arr.astype(np.float64).copy()

    def geodesic(
        self,
        z_a,
        z_b,
        n_steps: int = 16,
        init="auto",
        mu: float = 10.0,
        alpha: float = 2.0,
        max_mu: float = 3e4,
        tol: float | str = "auto",
        tol_constraint: float | str = "auto",
        max_outer: int = 200,
    ):
        """Discrete geodesic ``z_0 = z_a, ..., z_K = z_b`` (``K = n_steps``): a ``(K+1, l)`` array (a tensor if
        ``z_a`` is one).  ``init``: ``"auto"`` (``"knn"`` with codes, else ``"linear"``), ``"knn"`` (shortest
        path in the codes' kNN graph, resampled; needs ``codes``), ``"jump"`` (half the nodes at ``z_a``, half
        at ``z_b``), ``"linear"`` or an array.  Solver settings as in the module docstring.  ``tol`` (the
        gradient tolerance) ``"auto"``: ``1e-5`` without codes
        (exact constraints), else ``0.1 * tol_constraint``: a learned ``zeta`` has no exact zero set beyond
        its fixed points, so driving the gradient to ``1e-5`` makes the multipliers drag the nodes along the
        manifold (see docs).  ``last_info_`` holds the solver's record."""
        K = _check_steps(n_steps)
        for name, v in (("mu", mu), ("max_mu", max_mu)):
            if not v > 0:
                raise ValueError(f"{name} must be > 0, got {v!r}")
        if not alpha > 1:
            raise ValueError(f"alpha must be > 1, got {alpha!r}")
        if not (tol_constraint == "auto" or (isinstance(tol_constraint, (int, float)) and tol_constraint > 0)):
            raise ValueError(f"tol_constraint must be 'auto' or a float > 0, got {tol_constraint!r}")
        if not (tol == "auto" or (isinstance(tol, (int, float)) and tol > 0)):
            raise ValueError(f"tol must be 'auto' or a float > 0, got {tol!r}")
        self.last_info_ = {}
        l = self.codes.shape[1] if self.codes is not None else None
        a = self._endpoint(z_a, "z_a", l)
        b = self._endpoint(z_b, "z_b", a.size)
        path = self._init_path(a, b, K, init)
        path[0], path[-1] = a, b
        tc = self._auto_tol(K - 1) if tol_constraint == "auto" else float(tol_constraint)
        if tol == "auto":
            tol = 1e-5 if self.codes is None else 0.1 * tc
        A, B = torch.as_tensor(a[None, :]), torch.as_tensor(b[None, :])

        def objective(t: torch.Tensor) -> torch.Tensor:
            return self._energy(torch.cat([A, t, B], 0))

        inner, info = self._solve(objective, path[1:-1].copy(), tc, mu, alpha, max_mu, tol, max_outer)
        path[1:-1] = inner
        self.last_info_.update(info)
        return torch.as_tensor(path) if isinstance(z_a, torch.Tensor) else path

    def log(self, z_a, z_b, n_steps: int = 16, **kwargs):
        """Discrete logarithm ``K (z_1 - z_0)`` of the discrete geodesic from ``z_a`` to ``z_b``."""
        K = _check_steps(n_steps)
        path = self.geodesic(z_a, z_b, K, **kwargs)
        return K * (path[1] - path[0])

    def dist(self, z_a, z_b, n_steps: int = 16, **kwargs) -> float:
        """Length of the discrete geodesic from ``z_a`` to ``z_b``."""
        return self.length(np.asarray(self.geodesic(z_a, z_b, n_steps, **kwargs)))

    def _exp_step(
        self, z_prev: np.ndarray, z_k: np.ndarray, constrfact: float, gtol: float, lam_reg: float
    ) -> tuple[np.ndarray, float]:
        """One shooting step: ``(z_{k+1}, residual)`` from the discrete Euler-Lagrange system at ``z_k``."""
        metric, n = self.metric, z_k.size
        zp = torch.as_tensor(z_prev[None, :])
        zk = torch.as_tensor(z_k[None, :]).requires_grad_(True)
        (d2,) = torch.autograd.grad(metric.sqdist(zp, zk).sum(), zk)
        J = torch.autograd.functional.jacobian(lambda t: self._zeta(t[None, :])[0], zk[0].detach())  # (m, l)
        zk_d = zk.detach()

        def el(t: torch.Tensor, lam: torch.Tensor, create_graph: bool) -> torch.Tensor:
            zk2 = zk_d.clone().requires_grad_(True)
            (d1,) = torch.autograd.grad(metric.sqdist(zk2, t[None, :]).sum(), zk2, create_graph=create_graph)
            return d2[0] + d1[0] - J.T @ lam

        guess = 2 * z_k - z_prev
        r0 = el(torch.as_tensor(guess), torch.zeros(J.shape[0], dtype=torch.float64), False).detach()
        lam0 = torch.linalg.lstsq(J.T, r0[:, None]).solution[:, 0]

        def fun(x: np.ndarray):
            t = torch.as_tensor(x).requires_grad_(True)
            r = el(t[:n], t[n:], True)
            c = self._zeta(t[:n][None, :])[0]
            val = 0.5 * (r**2).sum() + 0.5 * constrfact * (c**2).sum() + 0.5 * lam_reg * (t[n:] ** 2).sum()
            (g,) = torch.autograd.grad(val, t)
            return float(val.detach()), g.numpy().astype(np.float64)

        res = minimize(
            fun, np.concatenate([guess, lam0.numpy()]), jac=True, method="BFGS", options={"gtol": gtol, "maxiter": 1000}
        )
        return res.x[:n], float(res.fun)

    def exp(
        self,
        z0,
        v,
        n_steps: int = 16,
        first_step: str = "project",
        constrfact: float = 1.0,
        gtol: float = 1e-10,
        lam_reg: float = 1e-8,
    ):
        """Discrete exponential map: shoot ``K = n_steps`` steps from ``z0`` with initial velocity ``v``.

        Returns the ``(K+1, l)`` shooting path (``[-1]`` is ``Exp_{z0}(v)``).  ``first_step``: ``"project"``
        (``z_1`` = the nearest point of the zero set to ``z0 + v/K``; for a tangent ``v``) or ``"linear"``
        (``z_1 = z0 + v/K``; exact when ``v`` is a discrete log).  Each later step solves the discrete
        Euler-Lagrange system (module docstring) by BFGS on ``1/2|EL|^2 + c/2|zeta|^2 + lam_reg/2|lambda|^2``
        (``c = constrfact``; the tiny ``lam_reg`` picks the smallest multiplier when ``Dzeta`` is nearly rank
        deficient, as for a learned ``zeta``).
        """
        K = _check_steps(n_steps)
        if first_step not in ("project", "linear"):
            raise ValueError(f"first_step must be 'project' or 'linear', got {first_step!r}")
        if not constrfact > 0:
            raise ValueError(f"constrfact must be > 0, got {constrfact!r}")
        self.last_info_ = {}
        l = self.codes.shape[1] if self.codes is not None else None
        p0 = self._endpoint(z0, "z0", l)
        vv = _as_point(v, p0.size, "v") / K
        z1 = p0 + vv if first_step == "linear" else self.project(p0 + vv)
        path = [p0, z1]
        resid_max = 0.0
        for _ in range(1, K):
            z_next, f = self._exp_step(path[-2], path[-1], constrfact, gtol, lam_reg)
            resid_max = max(resid_max, f)
            path.append(z_next)
        self.last_info_["max_step_residual"] = resid_max
        out = np.array(path)
        return torch.as_tensor(out) if isinstance(z0, torch.Tensor) else out
