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
* **Discrete exponential map** (shooting): ``v <- v / K``; a midpoint first step (``z_0`` is the midpoint of a
  virtual ``z_{-1} = z_0 - v/K`` and ``z_1``), then for ``k >= 1`` solve for ``(z_{k+1}, lambda)`` the discrete
  Euler-Lagrange system

      d_2 W(z_{k-1}, z_k) + d_1 W(z_k, z_{k+1}) - N_k lambda = 0,     N(z_{k+1})^T zeta(z_{k+1}) = 0

  with the multiplier restricted to the normal space ``N_k`` of ``Dzeta(z_k)`` (rank ``l - dim``, or by
  ``rank_tol``): Newton for the Euclidean metric, BFGS otherwise.  ``multiplier="full"`` keeps the v2 scheme
  (the multiplier over all of ``Dzeta^T``, least squares ``min 1/2 |EL|^2 + c/2 |zeta(z_{k+1})|^2`` by BFGS, a
  nearest-point first step) as a control: on a learned ``zeta`` it accumulates the projector's tangential bias.
* **Discrete logarithm**: the tangent part of the first chord ``z_1 - z_0`` of the discrete geodesic from ``z_a``
  to ``z_b``, scaled to the discrete length ``L`` (the chord ``K (z_1 - z_0)`` itself has a normal part of about
  ``theta^2 / (2K)``).
"""

from __future__ import annotations

import math
import warnings
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
    (default) replaces it by its nearest point on the zero set (:meth:`project`) with a ``RuntimeWarning`` and
    records it in ``last_info_`` (``"projected_endpoints"``, ``"endpoint_shift"``); ``"raise"`` raises
    ``ValueError``.  ``endpoint_tol="auto"`` (default) is scale-aware: the largest ``|zeta|`` over the ``codes``
    (a code, or a point no farther off than the worst code, is on the learned manifold and stays where it is;
    a learned ``zeta`` on codes of radius 5 has ``|zeta|`` about 0.1, far above any fixed tolerance), ``1e-6``
    without codes (an exact constraint).  ``dim`` (the intrinsic dimension, used by the exp map and log) must not
    exceed the codes' dimension.
    """

    def __init__(
        self,
        zeta: Zeta,
        metric: EuclideanMetric | PullbackMetric | None = None,
        codes=None,
        endpoint_tol: float | str = "auto",
        off_manifold: str = "project",
        knn: int = 10,
        rank_tol: float = 0.5,
        dim: int | None = None,
        off_codes_tol: float | None = 2.5,
    ) -> None:
        if not callable(zeta):
            raise TypeError(f"zeta must be a callable (n, l) tensor -> (n, m) tensor, got {type(zeta)}")
        metric = EuclideanMetric() if metric is None else metric
        if not hasattr(metric, "sqdist"):
            raise TypeError(f"metric must provide sqdist(a, b) (EuclideanMetric or PullbackMetric), got {metric!r}")
        if off_manifold not in ("project", "raise"):
            raise ValueError(f"off_manifold must be 'project' or 'raise', got {off_manifold!r}")
        if not (
            endpoint_tol == "auto"
            or (isinstance(endpoint_tol, (int, float)) and not isinstance(endpoint_tol, bool) and endpoint_tol > 0)
        ):
            raise ValueError(f"endpoint_tol must be 'auto' or a float > 0, got {endpoint_tol!r}")
        if isinstance(knn, bool) or not isinstance(knn, int) or knn < 1:
            raise ValueError(f"knn must be an integer >= 1, got {knn!r}")
        self.zeta, self.metric = zeta, metric
        self.endpoint_tol = endpoint_tol if endpoint_tol == "auto" else float(endpoint_tol)
        self.off_manifold, self.knn = off_manifold, knn
        if isinstance(rank_tol, bool) or not (isinstance(rank_tol, (int, float)) and 0 < rank_tol < 1):
            raise ValueError(f"rank_tol must be a float in (0, 1), got {rank_tol!r}")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 0):
            raise ValueError(f"dim must be None or an integer >= 0 (the manifold's intrinsic dimension), got {dim!r}")
        self.rank_tol = float(rank_tol)
        self.dim = None if dim is None else int(dim)
        if off_codes_tol is not None and (
            isinstance(off_codes_tol, bool) or not isinstance(off_codes_tol, (int, float)) or not off_codes_tol > 0
        ):
            raise ValueError(f"off_codes_tol must be None or a float > 0, got {off_codes_tol!r}")
        self.off_codes_tol = None if off_codes_tol is None else float(off_codes_tol)
        self._tree = None
        self.codes = None
        if codes is not None:
            c = codes.detach().cpu().numpy() if isinstance(codes, torch.Tensor) else np.asarray(codes, float)
            if c.ndim != 2 or c.shape[0] < 2 or not np.all(np.isfinite(c)):
                raise ValueError(f"codes must be a finite (n, latent_dim) array with n >= 2, got shape {c.shape}")
            self.codes = c.astype(np.float64)
            if self.dim is not None and self.dim > c.shape[1]:
                raise ValueError(
                    f"dim must be <= the codes' latent dimension {c.shape[1]} (the manifold's intrinsic dimension), "
                    f"got {self.dim}"
                )
        self._endpoint_tol_auto: float | None = None
        self.last_info_: dict = {}

    # -- helpers -------------------------------------------------------------------------------------------
    def _zeta(self, z: torch.Tensor) -> torch.Tensor:
        try:
            out = self.zeta(z)
        except RuntimeError as e:
            if "dtype" in str(e) or "Double" in str(e) or "Float" in str(e):
                raise TypeError(
                    "zeta must accept float64 tensors (ImplicitManifold evaluates it in float64); a float32 module "
                    f"fails on them: cast it first, e.g. projector.double() ({e})"
                ) from e
            raise
        if not isinstance(out, torch.Tensor) or out.dtype != torch.float64:
            raise TypeError(
                f"zeta must return a float64 tensor for float64 input, got {getattr(out, 'dtype', type(out))}; "
                "cast the module with .double()"
            )
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

    def endpoint_tolerance(self) -> float:
        """The ``|zeta|`` above which an endpoint is off the manifold: ``endpoint_tol``, or for ``"auto"`` the largest
        ``|zeta(codes)|`` (``1e-6`` without codes)."""
        if self.endpoint_tol != "auto":
            return float(self.endpoint_tol)
        if self._endpoint_tol_auto is None:
            self._endpoint_tol_auto = 1e-6 if self.codes is None else max(1e-6, float(self.violation(self.codes).max()))
        return self._endpoint_tol_auto

    def _endpoint(self, z, name: str, l: int | None) -> np.ndarray:
        p = _as_point(z, l, name)
        v = float(self.violation(p)[0])
        tol = self.endpoint_tolerance()
        if v > tol:
            if self.off_manifold == "raise":
                raise ValueError(
                    f"{name} is off the manifold: |zeta({name})| = {v:.3g} > endpoint_tol = "
                    f"{tol:g} (use off_manifold='project' to project it)"
                )
            q = self.project(p)
            shift = float(np.linalg.norm(q - p))
            self.last_info_.setdefault("projected_endpoints", []).append(name)
            self.last_info_.setdefault("endpoint_shift", []).append(shift)
            warnings.warn(
                f"{name} is off the manifold (|zeta| = {v:.3g} > endpoint_tol = {tol:g}): replaced by its nearest "
                f"zero of zeta, {shift:.3g} away (pass off_manifold='raise' to refuse, or a larger endpoint_tol)",
                RuntimeWarning,
                stacklevel=4,
            )
            p = q
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
        initial_point,
        end_point,
        n_steps: int = 16,
        init="auto",
        mu: float = 10.0,
        alpha: float = 2.0,
        max_mu: float = 3e4,
        tol: float | str = "auto",
        tol_constraint: float | str = "auto",
        max_outer: int = 200,
        spacing_tol: float = 0.25,
        as_callable: bool = False,
    ):
        """Discrete geodesic ``z_0 = initial_point, ..., z_K = end_point`` (``K = n_steps``): a ``(K+1, l)`` array
        (a tensor if ``initial_point`` is one); batched, ``(n, l)`` endpoints (one may be a single point) give
        ``(n, K+1, l)``, each pair solved as on its own.  ``init``: ``"auto"`` (``"knn"`` with codes, else
        ``"linear"``), ``"knn"`` (shortest path in the codes' kNN graph, resampled; needs ``codes``), ``"jump"`` (half
        the nodes at ``initial_point``, half at ``end_point``), ``"linear"`` or an array.  Solver settings as in the
        module docstring.  ``tol`` (the gradient tolerance) ``"auto"``: ``1e-5`` without codes (exact constraints),
        else ``0.1 * tol_constraint``: a learned ``zeta`` has no exact zero set beyond its fixed points, so driving
        the gradient to ``1e-5`` makes the multipliers drag the nodes along the manifold (see docs).

        Degenerate endpoints: a discrete geodesic is equally spaced, so ``E^K = L^2`` (Cauchy-Schwarz: ``E^K >= L^2``,
        with equality iff every step has the same ``W``).  When the solution has ``E^K > (1 + spacing_tol) L^2`` the
        solver is stuck on a path that is not a geodesic (a jump path between antipodal or cut-locus endpoints, a
        spurious zero of ``zeta``): ``last_info_["converged"]`` is ``False``, ``last_info_["degenerate"]`` is ``True``
        and a ``RuntimeWarning`` is issued.  ``last_info_`` holds the solver's record (a list of records for a
        batch, under ``"batch"``; the top level then holds the last pair's).

        ``as_callable=True`` returns, as geomstats does, a function of the time ``t`` in [0, 1] (a scalar or a 1-d
        array) that interpolates the nodes piecewise linearly: ``(l,)`` / ``(len(t), l)`` for one pair, ``(n, l)`` /
        ``(n, len(t), l)`` for a batch (its points are on the manifold only at the nodes ``t = k / K``)."""
        K = _check_steps(n_steps)
        if not isinstance(as_callable, bool):
            raise ValueError(f"as_callable must be True or False, got {as_callable!r}")
        if as_callable:
            nodes = np.asarray(
                self.geodesic(
                    initial_point, end_point, K, init, mu, alpha, max_mu, tol, tol_constraint, max_outer, spacing_tol
                )
            )
            return _path_function(nodes, isinstance(initial_point, torch.Tensor))
        for name, v in (("mu", mu), ("max_mu", max_mu)):
            if not v > 0:
                raise ValueError(f"{name} must be > 0, got {v!r}")
        if not alpha > 1:
            raise ValueError(f"alpha must be > 1, got {alpha!r}")
        if not (tol_constraint == "auto" or (isinstance(tol_constraint, (int, float)) and tol_constraint > 0)):
            raise ValueError(f"tol_constraint must be 'auto' or a float > 0, got {tol_constraint!r}")
        if not (tol == "auto" or (isinstance(tol, (int, float)) and tol > 0)):
            raise ValueError(f"tol must be 'auto' or a float > 0, got {tol!r}")
        if not (isinstance(spacing_tol, (int, float)) and spacing_tol > 0):
            raise ValueError(f"spacing_tol must be a float > 0, got {spacing_tol!r}")
        if isinstance(max_outer, bool) or not isinstance(max_outer, (int, np.integer)) or max_outer < 1:
            raise ValueError(f"max_outer must be an integer >= 1 (outer iterations), got {max_outer!r}")
        kw = dict(
            init=init,
            mu=mu,
            alpha=alpha,
            max_mu=max_mu,
            tol=tol,
            tol_constraint=tol_constraint,
            max_outer=max_outer,
            spacing_tol=float(spacing_tol),
        )
        A, B, batched = _pair_batch(initial_point, end_point, "initial_point", "end_point")
        if not batched:
            path = self._geodesic_one(A[0], B[0], K, **kw)
            return torch.as_tensor(path) if isinstance(initial_point, torch.Tensor) else path
        if not (isinstance(init, str) or np.asarray(init).ndim == 3):
            raise ValueError("init for a batch must be a string or an (n, n_steps+1, latent_dim) array")
        paths, infos = [], []
        for i in range(A.shape[0]):
            kw_i = dict(kw, init=init if isinstance(init, str) else np.asarray(init)[i])
            paths.append(self._geodesic_one(A[i], B[i], K, **kw_i))
            infos.append(dict(self.last_info_))
        self.last_info_["batch"] = infos
        out = np.stack(paths)
        return torch.as_tensor(out) if isinstance(initial_point, torch.Tensor) else out

    def _geodesic_one(self, z_a, z_b, K, init, mu, alpha, max_mu, tol, tol_constraint, max_outer, spacing_tol):
        self.last_info_ = {}
        l = self.codes.shape[1] if self.codes is not None else None
        a = self._endpoint(z_a, "initial_point", l)
        b = self._endpoint(z_b, "end_point", a.size)
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
        e, L = self.energy(path), self.length(path)
        ratio = e / L**2 if L > 0 else 1.0
        self.last_info_["spacing_ratio"] = float(ratio)
        self.last_info_["degenerate"] = bool(ratio > 1.0 + spacing_tol)
        if self.codes is not None and self.off_codes_tol is not None:
            # a learned zeta can have spurious zeros away from the data (near the medial axis): a path that settles
            # on them satisfies the constraint and the spacing test; its nodes are then far from every code
            gap = self._codes_gap(path[1:-1])
            self.last_info_["codes_gap"] = gap
            self.last_info_["off_codes"] = bool(gap > self.off_codes_tol)
            if self.last_info_["off_codes"]:
                self.last_info_["converged"] = False
                warnings.warn(
                    f"geodesic: a node lies {gap:.3g} code spacings from the nearest code (> off_codes_tol = "
                    f"{self.off_codes_tol:g}): the path is stuck off the data, on a spurious zero of zeta; "
                    "converged=False",
                    RuntimeWarning,
                    stacklevel=3,
                )
        if self.last_info_["degenerate"]:
            self.last_info_["converged"] = False
            warnings.warn(
                f"geodesic: the solution is not equally spaced (E^K / L^2 = {ratio:.3g} > 1 + spacing_tol = "
                f"{1 + spacing_tol:g}): the endpoints are degenerate (antipodal / cut locus) or the path is stuck; "
                "converged=False",
                RuntimeWarning,
                stacklevel=3,
            )
        return path

    def _codes_gap(self, nodes: np.ndarray) -> float:
        """Largest distance of ``nodes`` to the nearest code, in units of the codes' median nearest-neighbour
        distance."""
        if self._tree is None:
            from scipy.spatial import cKDTree

            tree = cKDTree(self.codes)
            nn = float(np.median(tree.query(self.codes, 2)[0][:, 1]))
            self._tree = (tree, max(nn, 1e-300))
        tree, nn = self._tree
        if len(nodes) == 0:
            return 0.0
        return float(tree.query(nodes)[0].max() / nn)

    # -- tangent spaces --------------------------------------------------------------------------------------
    def _jacobian(self, z: np.ndarray) -> np.ndarray:
        t = torch.as_tensor(np.asarray(z, dtype=np.float64))
        return torch.autograd.functional.jacobian(lambda x: self._zeta(x[None, :])[0], t).numpy()  # (m, l)

    def normal_basis(self, base_point) -> np.ndarray:
        """Orthonormal basis ``(l, r)`` of the normal space at ``base_point``: the ``r`` leading right singular
        vectors of ``Dzeta(base_point)``.  The rank ``r``: ``l - dim`` when the manifold's intrinsic dimension
        ``dim`` was given (recommended for a learned ``zeta``: the user or the experiment knows it); else the number
        of singular values above ``rank_tol`` times the largest.  For an exact constraint this is the row space of
        ``Dzeta``; for a learned ``zeta = z - Pi(z)`` (``l`` outputs, ``Dzeta ~ I - P_T``) the truncation drops the
        tangent directions where ``Dzeta`` is small but not zero.  ``rank_tol`` alone can miscount in codimension
        > 1: on S^2 in R^8 a normal singular value of 0.45 x the largest falls below 0.5 (docs)."""
        p = _as_point(base_point, None, "base_point")
        J = self._jacobian(p)
        _, sv, Vt = np.linalg.svd(J, full_matrices=False)
        if sv.size == 0 or sv[0] == 0:
            return np.zeros((p.size, 0))
        if self.dim is not None:
            if self.dim > p.size:
                raise ValueError(f"dim = {self.dim} exceeds the latent dimension {p.size}")
            r = min(p.size - self.dim, sv.size)
        else:
            r = int((sv > self.rank_tol * sv[0]).sum())
        return Vt[:r].T

    def normal_rank(self, base_point) -> int:
        """The rank ``r`` of :meth:`normal_basis` at ``base_point`` (the codimension the exp map and log use)."""
        return int(self.normal_basis(base_point).shape[1])

    def to_tangent(self, vector, base_point) -> np.ndarray:
        """``vector`` minus its normal part at ``base_point`` (geomstats' ``to_tangent``); batched like :meth:`exp`."""
        V, P, batched = _pair_batch(vector, base_point, "vector", "base_point")
        out = np.stack([v - (N := self.normal_basis(p)) @ (N.T @ v) for v, p in zip(V, P)])
        return out if batched else out[0]

    # -- exponential and logarithm ---------------------------------------------------------------------------
    def exp(self, tangent_vec, base_point, n_steps: int = 16, **kwargs):
        """Discrete exponential map ``Exp_{base_point}(tangent_vec)`` (geomstats' argument order): the endpoint of
        :meth:`exp_path`.  Batched: ``(n, l)`` inputs (one may be a single vector / point) give ``(n, l)``."""
        V, P, batched = _pair_batch(tangent_vec, base_point, "tangent_vec", "base_point")
        out = np.stack([self.exp_path(v, p, n_steps, **kwargs)[-1] for v, p in zip(V, P)])
        out = out if batched else out[0]
        return torch.as_tensor(out) if isinstance(base_point, torch.Tensor) else out

    def exp_path(
        self,
        tangent_vec,
        base_point,
        n_steps: int = 16,
        multiplier: str = "normal",
        non_tangent: str = "project",
        newton_iters: int = 30,
        constrfact: float = 1.0,
        gtol: float = 1e-10,
        lam_reg: float = 1e-8,
    ) -> np.ndarray:
        """Discrete shooting from ``z_0 = base_point`` with velocity ``v = tangent_vec``: the ``(K+1, l)`` path.

        ``multiplier="normal"`` (default): every step solves the discrete Euler-Lagrange system (module docstring)
        with the multiplier restricted to the normal space ``N_k`` at ``z_k`` (:meth:`normal_basis`) and only the
        normal part of the constraint, ``N(z_{k+1})^T zeta(z_{k+1}) = 0`` (Newton for the Euclidean metric, BFGS
        otherwise).  The first step is the midpoint step: ``z_0`` is the midpoint of a virtual ``z_{-1} = z_0 - v/K``
        and ``z_1``, so ``z_1 = z_0 + v/K + N_0 c``.  A learned projection moves points *along* the manifold by its
        tangential bias; a multiplier over all of ``Dzeta^T`` lets the Euler-Lagrange step absorb that bias as a
        tangential "force", which the shooting recurrence accumulates (about ``bias K^2 / 2``).  Restricting the
        *multiplier* to the normal space is what removes it; restricting the constraint to its normal outputs
        changes nothing measurable (the referee's probe: identical errors to 3 decimals with all outputs).

        ``multiplier="full"``: the v2 scheme, kept as the control of the ``exp_learned_accurate`` claim: the
        multiplier over all of ``Dzeta^T`` (with a tiny Tikhonov term ``lam_reg``), the full constraint, BFGS on
        ``1/2|EL|^2 + c/2|zeta|^2`` (``c = constrfact``, ``gtol``) and a first step to the nearest zero of ``zeta``
        from ``z_0 + v/K``.

        ``non_tangent``: a ``tangent_vec`` with a normal part (relative size > 1e-6) is projected onto the tangent
        space (``"project"``, recorded in ``last_info_["projected_tangent_vec"]``) or rejected (``"raise"``)."""
        K = _check_steps(n_steps)
        if multiplier not in ("normal", "full"):
            raise ValueError(f"multiplier must be 'normal' or 'full', got {multiplier!r}")
        if non_tangent not in ("project", "raise"):
            raise ValueError(f"non_tangent must be 'project' or 'raise', got {non_tangent!r}")
        if not constrfact > 0:
            raise ValueError(f"constrfact must be > 0, got {constrfact!r}")
        if isinstance(newton_iters, bool) or not isinstance(newton_iters, int) or newton_iters < 1:
            raise ValueError(f"newton_iters must be an integer >= 1, got {newton_iters!r}")
        self.last_info_ = {}
        l = self.codes.shape[1] if self.codes is not None else None
        p0 = self._endpoint(base_point, "base_point", l)
        v = _as_point(tangent_vec, p0.size, "tangent_vec")
        N0 = self.normal_basis(p0)
        vn = N0 @ (N0.T @ v)
        if np.linalg.norm(vn) > 1e-6 * max(np.linalg.norm(v), 1e-300):
            if non_tangent == "raise":
                raise ValueError(
                    f"tangent_vec is not tangent at base_point: its normal part has norm {np.linalg.norm(vn):.3g} "
                    f"(of {np.linalg.norm(v):.3g}); project it with to_tangent or pass non_tangent='project'"
                )
            self.last_info_["projected_tangent_vec"] = float(np.linalg.norm(vn))
            v = v - vn
        vv = v / K
        resid_max = 0.0
        if multiplier == "full":
            path = [p0, self.project(p0 + vv)]
            for _ in range(1, K):
                z_next, f = self._exp_step(path[-2], path[-1], constrfact, gtol, lam_reg)
                resid_max = max(resid_max, f)
                path.append(z_next)
        else:
            path = [p0 - vv, p0]  # the virtual z_{-1}: z_0 is the midpoint of z_{-1} and z_1
            for _ in range(K):
                z_next, f = self._normal_step(path[-2], path[-1], newton_iters, gtol)
                resid_max = max(resid_max, f)
                path.append(z_next)
            path = path[1:]
        self.last_info_["max_step_residual"] = resid_max
        return np.array(path)

    def _normal_step(self, z_prev: np.ndarray, z_k: np.ndarray, iters: int, gtol: float) -> tuple[np.ndarray, float]:
        """``z_{k+1}`` with ``d_2 W(z_{k-1}, z_k) + d_1 W(z_k, z_{k+1}) = N_k lam`` and ``N(z_{k+1})^T zeta = 0``."""
        Nk = self.normal_basis(z_k)
        r = Nk.shape[1]
        guess = 2 * z_k - z_prev
        if r == 0:
            return guess, 0.0
        if isinstance(self.metric, EuclideanMetric):
            # EL: 2(z_k - z_{k-1}) - 2(z_{k+1} - z_k) = N_k lam  =>  z_{k+1} = guess + N_k c; Newton on c
            z, res = guess.copy(), np.inf
            for _ in range(iters):
                J = self._jacobian(z)
                Uz = self._normal_outputs(J, r)
                g = Uz.T @ self._zeta(torch.as_tensor(z[None, :]))[0].detach().numpy()
                res = float(np.linalg.norm(g))
                if res < 1e-13:
                    break
                dc = np.linalg.lstsq(Uz.T @ J @ Nk, -g, rcond=None)[0]
                z = z + Nk @ dc
            return z, res**2
        # a general metric: BFGS on the reduced system, the constraint's normal outputs refreshed at the new point
        metric = self.metric
        zp = torch.as_tensor(z_prev[None, :])
        zk = torch.as_tensor(z_k[None, :]).requires_grad_(True)
        (d2,) = torch.autograd.grad(metric.sqdist(zp, zk).sum(), zk)
        Nk_t = torch.as_tensor(Nk)
        z, lam, f = guess.copy(), np.zeros(r), np.inf
        for _ in range(2):
            Uz = torch.as_tensor(self._normal_outputs(self._jacobian(z), r))

            def fun(x: np.ndarray, Uz=Uz):
                t = torch.as_tensor(x).requires_grad_(True)
                zk2 = zk.detach().clone().requires_grad_(True)
                (d1,) = torch.autograd.grad(metric.sqdist(zk2, t[None, : z_k.size]).sum(), zk2, create_graph=True)
                el = d2[0] + d1[0] - Nk_t @ t[z_k.size :]
                c = Uz.T @ self._zeta(t[None, : z_k.size])[0]
                val = 0.5 * (el**2).sum() + 0.5 * (c**2).sum()
                (g,) = torch.autograd.grad(val, t)
                return float(val.detach()), g.numpy().astype(np.float64)

            res = minimize(
                fun, np.concatenate([z, lam]), jac=True, method="BFGS", options={"gtol": gtol, "maxiter": 1000}
            )
            z, lam, f = res.x[: z_k.size], res.x[z_k.size :], float(res.fun)
        return z, f

    @staticmethod
    def _normal_outputs(J: np.ndarray, r: int) -> np.ndarray:
        """The ``r`` leading left singular vectors of ``Dzeta`` ``(m, r)``: the constraint's normal components."""
        U, _, _ = np.linalg.svd(J, full_matrices=False)
        return U[:, :r]

    def log(self, point, base_point, n_steps: int = 16, **kwargs):
        """Discrete logarithm ``Log_{base_point}(point)`` (geomstats' argument order): the tangent vector at
        ``base_point`` along the discrete geodesic to ``point``, with the geodesic's length.

        ``K (z_1 - z_0)`` of the discrete geodesic is a chord: its normal part is about ``theta^2 / (2K)`` (4% of
        ``theta`` at 80 degrees, ``K = 16``).  We return its tangent part (:meth:`to_tangent`), scaled so that its
        length in the metric is the discrete length ``L`` (for the Euclidean metric ``|log| = L``; its error
        against the exact log is ``O(theta^3 / K^2)``).  Batched like :meth:`exp`; ``kwargs`` go to
        :meth:`geodesic`."""
        K = _check_steps(n_steps)
        Q, P, batched = _pair_batch(point, base_point, "point", "base_point")
        out = []
        for q, p in zip(Q, P):
            path = np.asarray(self.geodesic(p, q, K, **kwargs))
            out.append(self._log_from_path(path))
        res = np.stack(out) if batched else out[0]
        return torch.as_tensor(res) if isinstance(base_point, torch.Tensor) else res

    def _log_from_path(self, path: np.ndarray) -> np.ndarray:
        z0, L = path[0], self.length(path)
        u = path[1] - z0
        N = self.normal_basis(z0)
        u = u - N @ (N.T @ u)
        nu = float(np.linalg.norm(u))
        if nu == 0 or L == 0:
            return np.zeros_like(z0)
        u = u / nu
        h = 1e-6
        with torch.no_grad():
            a = torch.as_tensor(z0[None, :])
            speed = math.sqrt(float(self.metric.sqdist(a, a + h * torch.as_tensor(u[None, :]))[0])) / h
        return u * (L / speed if speed > 0 else L)

    def dist(self, point_a, point_b, n_steps: int = 16, **kwargs):
        """Length of the discrete geodesic from ``point_a`` to ``point_b`` (batched: an ``(n,)`` array)."""
        p = np.asarray(self.geodesic(point_a, point_b, n_steps, **kwargs))
        return self.length(p) if p.ndim == 2 else np.array([self.length(x) for x in p])

    def _exp_step(
        self, z_prev: np.ndarray, z_k: np.ndarray, constrfact: float, gtol: float, lam_reg: float
    ) -> tuple[np.ndarray, float]:
        """One v2 shooting step: ``(z_{k+1}, residual)`` from the full discrete Euler-Lagrange system at ``z_k``."""
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


def _path_function(nodes: np.ndarray, as_tensor: bool) -> Callable:
    """``t -> points``: piecewise-linear interpolation of ``(K+1, l)`` or ``(n, K+1, l)`` nodes at times ``k / K``."""
    K = nodes.shape[-2] - 1

    def path(t):
        tt = np.asarray(t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t, dtype=np.float64)
        if tt.ndim > 1 or not np.all(np.isfinite(tt)) or np.any(tt < 0) or np.any(tt > 1):
            raise ValueError(f"t must be a scalar or a 1-d array of times in [0, 1], got {t!r}")
        s = np.atleast_1d(tt) * K
        i = np.clip(np.floor(s).astype(int), 0, K - 1)
        w = (s - i)[:, None]
        out = (1 - w) * nodes[..., i, :] + w * nodes[..., i + 1, :]
        out = out[..., 0, :] if tt.ndim == 0 else out
        return torch.as_tensor(out) if as_tensor else out

    return path


def _pair_batch(x, y, name_x: str, name_y: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """Two point arguments as ``(n, l)`` arrays (a single point broadcast against a batch) and whether either was
    batched; errors name the argument."""
    arrs = []
    for z, name in ((x, name_x), (y, name_y)):
        if isinstance(z, torch.Tensor):
            z = z.detach().cpu().numpy()
        try:
            a = np.asarray(z, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be an array-like of floats, got {type(z)}") from None
        if a.ndim not in (1, 2) or a.size == 0:
            raise ValueError(f"{name} must be a point (latent_dim,) or a batch (n, latent_dim), got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite")
        arrs.append(a)
    a, b = arrs
    batched = a.ndim == 2 or b.ndim == 2
    A, B = np.atleast_2d(a), np.atleast_2d(b)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"{name_x} and {name_y} must have the same latent_dim, got {A.shape[1]} and {B.shape[1]}")
    if A.shape[0] != B.shape[0]:
        if A.shape[0] == 1:
            A = np.repeat(A, B.shape[0], 0)
        elif B.shape[0] == 1:
            B = np.repeat(B, A.shape[0], 0)
        else:
            raise ValueError(f"{name_x} and {name_y} batches differ in size: {A.shape[0]} and {B.shape[0]}")
    return A, B, batched
