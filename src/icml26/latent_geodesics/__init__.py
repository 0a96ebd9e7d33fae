"""Geodesic calculus on implicitly defined latent manifolds (Hartwig, Sassen, Braunsmann, Rumpf, Wirth).

Straight lines between two latent codes of an autoencoder leave the data manifold.  Hartwig et al. (ICML 2026,
arXiv 2510.09468) describe the latent manifold implicitly, as the zero set of ``zeta(z) = z - Pi(z)`` where
``Pi`` is a projection learned by denoising the codes, and compute time-discrete geodesics (an augmented
Lagrangian on the discrete path energy), exponential maps (discrete Euler-Lagrange shooting) and logarithms on
it, with the latent Euclidean metric or the decoder's pullback metric.

Notation to names:

==============================================  ============================================================
paper                                           here
==============================================  ============================================================
projection ``Pi_sigma``, bandwidth ``sigma``      :class:`LatentProjector` (``.fit(Z, sigma)``)
implicit function ``zeta = id - Pi``              ``LatentProjector.zeta``; exact: ``sphere_zeta``, ``torus_zeta``
``W(z, z')`` ~ squared distance                  :class:`EuclideanMetric`, :class:`PullbackMetric` (``decoder``)
discrete path energy ``E^K``, length             ``ImplicitManifold.energy``, ``.length``
discrete geodesic / Exp / Log                    ``ImplicitManifold.geodesic``, ``.exp``, ``.log`` (geomstats order)
number of time steps ``K``                       ``n_steps``
==============================================  ============================================================

Example::

    from icml26.latent_geodesics import LatentProjector, ImplicitManifold, EuclideanMetric
    proj = LatentProjector(latent_dim=3).fit(Z, sigma=0.05, steps=2000)
    M = ImplicitManifold(proj.zeta, EuclideanMetric(), codes=Z)
    path = M.geodesic(Z[0], Z[1], n_steps=16, init="knn")      # (17, 3); (n, 17, 3) for (n, 3) endpoints
    v = M.log(Z[1], Z[0])                                        # Log_{Z[0]}(Z[1]), a tangent vector at Z[0]
    z = M.exp(1.5 * v, Z[0])                                     # Exp_{Z[0]}(1.5 v): extrapolation
    M.length(path), M.energy(path)

v3 (issue 58) changed the signatures to geomstats' order: ``exp(tangent_vec, base_point)`` returns the endpoint
(the v2 ``exp(z0, v)`` returned the whole path: :meth:`ImplicitManifold.exp_path`), ``log(point, base_point)``
(v2: ``log(z_a, z_b)``), ``geodesic(initial_point, end_point)``.
"""

from .baselines import (
    knn_graph_path,
    linear_interpolation,
    projected_linear_interpolation,
    resample_polyline,
    spline_energy_path,
)
from .manifold import EuclideanMetric, ImplicitManifold, PullbackMetric, sphere_zeta, torus_zeta
from .projector import LatentProjector

__all__ = [
    "LatentProjector",
    "ImplicitManifold",
    "EuclideanMetric",
    "PullbackMetric",
    "sphere_zeta",
    "torus_zeta",
    "linear_interpolation",
    "projected_linear_interpolation",
    "knn_graph_path",
    "resample_polyline",
    "spline_energy_path",
]
