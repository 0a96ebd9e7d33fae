"""Li-FIL: lightweight federated class-incremental learning by decoupled feature replay (ICML 2026, poster 66288).

Clients that learn new classes task after task forget the old ones; replaying raw samples costs device storage and
privacy.  Li-FIL's clients upload, once per task, a few privatized features: high-confidence features of the new
classes, densified by intra-class mixup and noised by a Gaussian mechanism; the server fits a conditional feature
generator on them and broadcasts generated features of old classes, which the clients replay to the classifier while
their encoder is kept close to the previous one (local training decoupled into classifier stabilization and encoder
regularization).  Everything beyond the abstract (losses, schedule, generator) is our inferred reading.

Notation -> names: ``f_theta`` -> :meth:`DecoupledNet.features`, ``g_phi`` -> :meth:`DecoupledNet.classify`,
``lambda_fd`` / ``tau`` / ``m`` / ``alpha`` / ``sigma_f`` / ``R`` / ``n_r`` -> :class:`FILConfig` fields
``lambda_fd``, ``tau``, ``m``, ``mixup_alpha``, ``sigma_f``, ``clip_R``, ``n_replay``; ``G_psi`` ->
:class:`FeatureGenerator`; ``a[t, j]`` -> :attr:`FILResult.acc_matrix`.  The Flower adapter lives in
:mod:`icml26.lifil.flower` (needs ``flwr``: ``pip install 'icml26[fl]'``).
"""

from .baselines import EWCClient, ExemplarClient, FineTuneClient, JointClient, LwFClient
from .client import FILClient, LiFILClient
from .config import METHODS, FILConfig
from .data import ClassIncrementalTasks, load_digits_tasks, split_class_incremental
from .features import clip_norm, feature_mixup, gaussian_epsilon, privatize, select_high_confidence
from .generator import FeatureGenerator, GaussianFeatureGenerator, mmd2
from .metrics import (
    accuracy_matrix,
    average_accuracy,
    average_incremental_accuracy,
    backward_transfer,
    forgetting,
    old_task_accuracy,
)
from .model import DecoupledNet
from .server import FILServer, LiFILServer, fedavg
from .simulation import FILResult, run_fil

__all__ = [
    "split_class_incremental",
    "load_digits_tasks",
    "ClassIncrementalTasks",
    "DecoupledNet",
    "FILConfig",
    "METHODS",
    "FILClient",
    "LiFILClient",
    "FineTuneClient",
    "EWCClient",
    "LwFClient",
    "ExemplarClient",
    "JointClient",
    "FILServer",
    "LiFILServer",
    "fedavg",
    "FeatureGenerator",
    "GaussianFeatureGenerator",
    "mmd2",
    "select_high_confidence",
    "feature_mixup",
    "privatize",
    "clip_norm",
    "gaussian_epsilon",
    "run_fil",
    "FILResult",
    "accuracy_matrix",
    "average_accuracy",
    "average_incremental_accuracy",
    "forgetting",
    "backward_transfer",
    "old_task_accuracy",
]
