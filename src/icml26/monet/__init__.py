"""MoNet: multimodal nested learning for decoupled and coordinated optimization (inferred design).

When one modality is easier, joint training lets it fit the labels first and the other modality's encoder stays
under-trained.  MoNet (ICML 2026) casts multimodal training as nested optimization: an outer level (DMSM) gives
every modality its own optimization stream with a slow, stable memory of its encoder, and an inner level (AMCF)
fuses those memories through a chain of MLP blocks updated at several timescales, weighting the lagging modality
up.  The paper's equations were not available: this is our reading of its abstract in the vocabulary of Nested
Learning (Behrouz et al., 2025); every piece has a switch.

Notation to names:

=======================================  =============================================================
paper / spec                             here
=======================================  =============================================================
modality encoders ``phi_m``, heads h_m     ``MoNet.encoders``, ``MoNet.heads``
stable memory ``phi_bar_m`` (EMA, tau)      ``MoNet.ema_encoders``, ``ema_tau``
coordination weights ``w_m``, scores s_m   ``MoNet.weights``, ``MoNet.scores``, :func:`adaptive_weights`
CMS chain, periods ``C_l``                 :class:`ContinuumMemoryMLP` ``(dim, periods)``
fusion-gradient leak ``lambda``            ``encoder_fusion_grad``
=======================================  =============================================================

Example::

    from icml26.monet import MoNet, MLPEncoder, make_imbalanced_bimodal, fit, accuracy, modality_probe_accuracy
    data = make_imbalanced_bimodal(seed=0)
    enc = {"a": MLPEncoder(32, 64), "b": MLPEncoder(32, 64)}
    model = MoNet(encoders=enc, feature_dims={"a": 64, "b": 64}, n_classes=10)
    fit(model, data.train, epochs=40)          # or: model.configure_optimizers(1e-3); model.training_step(batch)
    accuracy(model, data.test), modality_probe_accuracy(model, "b", data.train, data.test)
"""

from .baselines import (
    OGMGE,
    PMR,
    Joint,
    JointConcat,
    MLALite,
    MMPareto,
    Strategy,
    UnimodalEnsemble,
    accuracy,
    class_prototypes,
    fit,
    mmpareto_combine,
    ogm_coefficients,
    pmr_coefficients,
    predict,
)
from .cms import ContinuumMemoryMLP, ResidualMLPBlock
from .data import BimodalData, BimodalSplit, make_imbalanced_bimodal, make_two_view_digits
from .model import MLPEncoder, MoNet, TrainingDiverged, adaptive_weights, check_modalities
from .probe import modality_probe_accuracy, probe_features

__all__ = [
    "MoNet",
    "ContinuumMemoryMLP",
    "ResidualMLPBlock",
    "MLPEncoder",
    "adaptive_weights",
    "TrainingDiverged",
    "check_modalities",
    "JointConcat",
    "Strategy",
    "Joint",
    "OGMGE",
    "PMR",
    "MMPareto",
    "MLALite",
    "UnimodalEnsemble",
    "fit",
    "predict",
    "accuracy",
    "ogm_coefficients",
    "pmr_coefficients",
    "mmpareto_combine",
    "class_prototypes",
    "make_imbalanced_bimodal",
    "make_two_view_digits",
    "BimodalData",
    "BimodalSplit",
    "modality_probe_accuracy",
    "probe_features",
]
