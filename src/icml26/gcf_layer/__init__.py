"""Generalized convex functions as a layer (Nehzati, ICML 2026, arXiv 2509.04477).

A function is k-convex (generalized convex) when it is a supremum of "kernel pieces"
``f(x) = sup_y [k(x, y) - g(y)]``; a finite maximum of such pieces is k-convex by construction, and these
finite maxima are dense in the k-convex functions, with gradients given by the arg-max piece (Danskin).
So a layer ``max_j [k(x, y_j) - b_j]`` with trainable candidates ``y_j`` and offsets ``b_j`` (a convex
parameter set) turns problems whose solutions are k-convex -- optimal menus in mechanism design (the buyer's
utility) and Kantorovich potentials for general transport costs -- into single-level training problems.

Notation to names:

==========================================  =====================================================
paper                                       here
==========================================  =====================================================
kernel / surplus ``k(x, y)``                 ``linear_kernel``, ``sqrt_value_kernel``, ``neg_lp_cost``
cost ``c(x, y) = h(x - y)``                  ``lp_cost(p)`` (``sum |z_i|^p / p``), ``norm_cost(p)`` (``||z||^p / p``)
finitely Y-convex ``max_j [k(x,y_j)-b_j]``   ``FinitelyConvex`` (``mode="concave"``: min, c-concave)
``(y_j, b_j)``                               ``layer.y``, ``layer.b``; ``layer.options()``
choice ``y*(x) = y_{j*(x)}``                 ``layer(x, selection)[1]``; ``Selection.choice``
soft / hard / straight-through max           ``selection="soft" | "hard" | "ste"``, ``temp``
``grad f(x) = grad_x k(x, y_{j*})``          ``layer.gradient(x)``
k-conjugate / c-transform                    ``layer.transform(z, x_pool, sup=...)``
menu (allocation, price) + outside option    ``MenuMechanism(layer).menu()``, ``default_option=True``
expected revenue for uniform types           ``MenuMechanism.exact_revenue()`` (exact), ``.revenue(types)`` (sampled)
Monge map via twist ``x - (grad h)^-1(grad u)`` ``GeneralCostOT(cost).fit(Xs=Xs, Xt=Xt).transform(Xs)``
n << M learned candidates, inner c-transform    ``LearnedCandidateOT(cost, n_candidates=64)``
L2-UVP (Korotin et al. 2021)                 ``l2_uvp``
==========================================  =====================================================
"""

from .baselines import BarycentricOT, PureBundling, RochetNet, SeparateSales
from .exact import exact_revenue
from .kernels import LpCost, NormCost, linear_kernel, lp_cost, neg_lp_cost, norm_cost, sqrt_value_kernel
from .layer import SELECTIONS, FinitelyConvex, Selection
from .mechanism import MenuMechanism, menu_exact_revenue
from .transport import GeneralCostOT, LearnedCandidateOT, l2_uvp

__all__ = [
    "FinitelyConvex",
    "Selection",
    "SELECTIONS",
    "MenuMechanism",
    "exact_revenue",
    "menu_exact_revenue",
    "GeneralCostOT",
    "LearnedCandidateOT",
    "linear_kernel",
    "sqrt_value_kernel",
    "neg_lp_cost",
    "lp_cost",
    "LpCost",
    "norm_cost",
    "NormCost",
    "l2_uvp",
    "RochetNet",
    "SeparateSales",
    "PureBundling",
    "BarycentricOT",
]
