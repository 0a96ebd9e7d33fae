"""CReL: conformal reliability, a worst-case evaluation metric for conditional generators.

Gao, Sun, Wang, Shi, Wang, Feng, Fu, "Conformal Reliability: A New Evaluation Metric for Conditional
Generation", ICML 2026 (arXiv 2605.30807).

The idea in three sentences.  An average metric over generated samples hides how bad a *likely* output of a
conditional generator can be.  CReL encodes generated outputs into a latent space, builds a convex
prediction set there whose size is calibrated by split conformal prediction on real held-out pairs, so that
the real output falls inside it with probability at least ``1 - alpha``.  The reliability score is the
worst metric value over that set, found by projected gradient descent; its argmin is the worst plausible
output.

Notation -> names:

=====================================  =====================================================
paper                                  here
=====================================  =====================================================
``G(x, xi)``, ``E``, ``m(x, z)``       ``generator.sample``, ``encoder``, ``metric``
``1 - alpha``                          ``confidence_level``
``K`` samples per condition            ``n_samples``
``C_alpha(x)``                         :meth:`ConformalReliability.predict_set` ->
                                       :class:`Ellipsoid` / :class:`HullSet` / :class:`UnionOfBalls`
``qhat``                               ``ConformalReliability.qhat_``, :func:`conformal_quantile`
``R_alpha(x) = min_{z in C} m(x, z)``  :meth:`ConformalReliability.reliability`, :func:`worst_case`
model score ``E_x R_alpha(x)``         :meth:`ConformalReliability.score`
=====================================  =====================================================

The ellipsoid set (shrunk sample covariance, Mahalanobis score) is our inferred construction, the scaled
convex hull of the samples (``set_type="hull"``) the spec's other convex option; the paper's exact score was
not available (see ``docs/crel.md``).  The latent samples of a condition are shared by ``predict_set``,
``reliability`` and the baselines (``share_samples=True``), so they all describe one set.
"""

from ._optimize import WorstCase, linear_worst_case, worst_case
from ._reliability import SET_TYPES, ConformalReliability, conformal_quantile, min_calibration_size
from ._sets import Ellipsoid, HullSet, UnionOfBalls, log_unit_ball_volume
from .baselines import GlobalCovarianceReliability, average_metric, sample_metrics, worst_of_k

__all__ = [
    "ConformalReliability",
    "Ellipsoid",
    "UnionOfBalls",
    "HullSet",
    "worst_case",
    "linear_worst_case",
    "WorstCase",
    "conformal_quantile",
    "min_calibration_size",
    "log_unit_ball_volume",
    "SET_TYPES",
    "GlobalCovarianceReliability",
    "average_metric",
    "worst_of_k",
    "sample_metrics",
]
