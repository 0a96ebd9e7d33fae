"""TRACE-DU: certified unlearning of a client from decentralized (gossip) training, from its recorded trajectory.

Nodes train locally (``K`` SGD steps) and average with their graph neighbours through a doubly stochastic matrix
``W``; the run records every node's checkpoints and the distances between neighbours' models.  To forget a client,
TRACE-DU propagates how far each kept node can have drifted because of that client (a recursion over the recorded
distances, contracted by the SGD-stability factor ``rho`` of the loss and mixed through the graph), rewinds to the
latest round where that bound is small enough for Gaussian noise of the chosen size to hide it, adds the noise and
resumes training without the client, with an ``(epsilon, delta)`` certificate (heuristic for non-convex losses).

Notation to names:

===========================================  ==========================================================
paper / spec                                 here
===========================================  ==========================================================
graph ``G``, gossip matrix ``W``               :func:`ring`, :func:`erdos_renyi`, :func:`metropolis_weights`
``W^{-U}`` (removed weight on the diagonal)    :func:`remove_nodes`
D-PSGD with ``K`` local steps, trajectory      :class:`DecentralizedSGD` ``.run()`` -> :class:`Trajectory`
edge distances ``d_ij^t``, checkpoints ``X^t``  ``Trajectory.distances``, ``Trajectory.checkpoints``
``a_i^t``, ``Delta_U(t)``                       :meth:`TraceDU.sensitivity` (``per_node``, ``delta``)
``rho`` (Hardt et al. 2016)                    :func:`expansiveness`
``psi*``, Gaussian calibration                 :func:`sensitivity_threshold`, :func:`gaussian_sigma`,
                                               :func:`analytic_gaussian_sigma`
``t*``, noise, resumed branch, certificate     :meth:`TraceDU.unlearn` -> :class:`UnlearnResult`, :class:`Certificate`
gloo engine                                    :func:`icml26.trace_du.distributed.run_gossip`
===========================================  ==========================================================

Example::

    from icml26.trace_du import (ring, metropolis_weights, DecentralizedSGD, TraceDU, SoftmaxRegression,
                                make_backdoor_digits)
    data = make_backdoor_digits(seed=0, n_nodes=8, forget=(3,))
    model = SoftmaxRegression(data.n_features, 10, l2=1e-3)
    W = metropolis_weights(ring(8, chords=2))
    traj = DecentralizedSGD(model, data.node_data, W, local_steps=5, lr=0.5, rounds=60, seed=0).run()
    tdu = TraceDU(traj, regime="strongly_convex")
    res = tdu.unlearn(forget={3}, epsilon=1.0, delta=1e-4, sigma=0.5)
    res.models, res.certificate.statement
"""

from .baselines import fine_tune, last_plus_noise, retrain
from .data import BackdoorData, add_trigger, make_backdoor_digits
from .graphs import check_gossip_matrix, erdos_renyi, is_connected, metropolis_weights, remove_nodes, ring
from .mechanisms import analytic_gaussian_sigma, gaussian_delta, gaussian_sigma, sensitivity_threshold
from .metrics import accuracy, auc, backdoor_asr, mia_auc, param_distance
from .models import MLP, SoftmaxRegression
from .training import DecentralizedSGD, Trajectory, batch_indices
from .unlearning import REGIMES, Certificate, Sensitivity, TraceDU, UnlearnResult, expansiveness

__all__ = [
    "ring",
    "erdos_renyi",
    "metropolis_weights",
    "remove_nodes",
    "is_connected",
    "check_gossip_matrix",
    "DecentralizedSGD",
    "Trajectory",
    "batch_indices",
    "TraceDU",
    "Certificate",
    "Sensitivity",
    "UnlearnResult",
    "expansiveness",
    "REGIMES",
    "gaussian_sigma",
    "analytic_gaussian_sigma",
    "gaussian_delta",
    "sensitivity_threshold",
    "mia_auc",
    "backdoor_asr",
    "accuracy",
    "auc",
    "param_distance",
    "SoftmaxRegression",
    "MLP",
    "make_backdoor_digits",
    "BackdoorData",
    "add_trigger",
    "retrain",
    "last_plus_noise",
    "fine_tune",
]
