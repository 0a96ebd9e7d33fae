"""Adaptive fused orthogonal estimation for clustered multitask semiparametric models.

Chen & Mukherjee (ICML 2026, arXiv 2605.01907) estimate one low-dimensional target per task (a treatment
effect, an elasticity) when tasks fall into unknown groups that share the target, while every task keeps
its own flexible nuisance functions and even its own covariates. Each task contributes a Neyman-
orthogonal loss built from cross-fitted machine-learning nuisances; pairwise fusion penalties whose size
adapts to how close the tasks' pilot estimates are merge tasks of the same group exactly and leave
different groups apart. Pooling the orthogonal score inside each recovered group then gives estimates
with the oracle (known-groups) rate and asymptotically normal, Wald-type confidence intervals.

Notation to names:

=============================================  ==============================================================
paper                                          here
=============================================  ==============================================================
task data ``D_j = {(Y, T, X)}``                 :class:`TaskData` ``(y, d, x)``
orthogonal loss ``f_j(theta; eta_j)``            :class:`PLRScore`, :class:`IRMScore`: ``a_j (theta - b_j)^2``
nuisances ``eta_j`` (``l, m`` / ``g, m``)        ``ml_l``, ``ml_m`` (sklearn learners, cross-fitted)
pilot ``theta_j^init``                           ``pilot="dml"`` -> ``pilot_``
``w_jj', lambda_jj', c_w, gamma, tau, eps_n``    :func:`adaptive_fusion_weights`, ``weights_``
fused problem (Algorithm 1, stage 2)             :func:`fused_pairwise_admm`
``theta_j``, clusters ``S_k``, ``beta_k``        ``coef_``, ``labels_``, ``cluster_coef_``
chaining guard (ours, issue 23)                 ``chain_guard``, :func:`split_chained_clusters`
repeated cross-fitting (DoubleML ``n_rep``)      ``n_rep``, :func:`aggregate_repetitions`
sandwich variance ``V_k``, Wald CI              ``cluster_se_`` / ``se_``, ``confint(alpha)``
=============================================  ==============================================================

Example::

    from icml26.fused_orthogonal import AdaptiveFusedOrthogonal, make_clustered_tasks
    tasks, theta, labels = make_clustered_tasks("plr", n_tasks=20, delta=2/3, random_state=0)
    est = AdaptiveFusedOrthogonal(model="plr", c_w="auto", random_state=0).fit(tasks)
    est.labels_, est.cluster_coef_, est.confint(0.05); print(est.summary())
"""

from .baselines import ARMULLike, OracleClusterDML, PersonalizedDML, UniformFusion
from .data import TaskData, cluster_centres, make_clustered_tasks
from .estimator import AdaptiveFusedOrthogonal
from .fusion import (
    ChainingWarning,
    FusedSolution,
    adaptive_fusion_weights,
    fused_objective,
    fused_pairwise_admm,
    fusion_path,
    merge_homogeneous_clusters,
    split_chained_clusters,
)
from .scores import (
    CrossFitScores,
    IRMScore,
    PLRScore,
    aggregate_repetitions,
    cross_fit_scores,
    default_classifier,
    default_regressor,
)

__all__ = [
    "TaskData",
    "make_clustered_tasks",
    "cluster_centres",
    "AdaptiveFusedOrthogonal",
    "PersonalizedDML",
    "OracleClusterDML",
    "ARMULLike",
    "UniformFusion",
    "adaptive_fusion_weights",
    "fused_pairwise_admm",
    "fused_objective",
    "fusion_path",
    "FusedSolution",
    "split_chained_clusters",
    "merge_homogeneous_clusters",
    "ChainingWarning",
    "PLRScore",
    "IRMScore",
    "CrossFitScores",
    "cross_fit_scores",
    "aggregate_repetitions",
    "default_regressor",
    "default_classifier",
]
