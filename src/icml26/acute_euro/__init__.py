"""EURO and ACUTE: score confidence estimators by the utility of trusting them, and learn confidence from activations.

Subramani, Goyal, Song, Malek, Xue, Pfister, Palangi, "The ACUTE Protocol: Operationalizing Language Model
Activations for Better Calibration, Utility, and Trust", ICML 2026 (arXiv 2606.07822).

The idea in three sentences.  A confidence estimator is only useful if trusting the outputs it scores highly
pays off, and calibration alone cannot tell (predicting the base rate is perfectly calibrated and useless).
EURO measures, at a risk level ``u_ca``, the utility of the Bayes decision "trust iff confidence > u_ca"
relative to an oracle that trusts exactly the correct outputs, and auc-EURO averages it over all risk levels.
ACUTE gets better confidences from the model itself: pool its hidden states over the generated tokens, take
one "view" of them (a layer's mean, cross-layer cosines or per-layer PCA), append the raw confidence and fit
a small random forest on a few labelled outputs.

Notation -> names:

==========================================  =====================================================
paper                                       here
==========================================  =====================================================
EURO_C(u_ca), u_ct = 1 - u_ca               :func:`euro` (one level), :func:`euro_curve` (grid)
auc-euro = int_0^1 EURO(u) du               :func:`auc_euro` (trapezoid, 101 points)
smECE (Blasiok & Nakkiran)                  :func:`smooth_ece`; binned ECE: :func:`binned_ece`
H^(j) = [h_1^(j) ... h_T^(j)], h_bar^(j)    :class:`ActivationRecorder` (``.pooled(mask)`` -> [n, L, d])
views mean (early/mid/late), cosine, pcaM  ``ACUTEConfidenceEstimator(view=..., layer=..., n_components=M)``
Raw Conf, Platt, isotonic, NWKR             raw ``p_hat``; :class:`PlattCalibrator`, :class:`IsotonicCalibrator`,
                                            :class:`NWKRCalibrator`
logistic probe (ablation of the forest)     :func:`logistic_probe`
==========================================  =====================================================
"""

from .baselines import IsotonicCalibrator, NWKRCalibrator, PlattCalibrator, logistic_probe
from .estimator import (
    ACUTEConfidenceEstimator,
    as_pooled,
    layer_index,
    pack_features,
    select_forest_cv,
    select_view,
    select_view_cv,
    truncated_tree_proba,
)
from .metrics import auc_euro, base_rate_euro_curve, binned_ece, euro, euro_curve, smooth_ece
from .recorder import ActivationRecorder

__all__ = [
    "euro",
    "euro_curve",
    "auc_euro",
    "base_rate_euro_curve",
    "smooth_ece",
    "binned_ece",
    "ACUTEConfidenceEstimator",
    "ActivationRecorder",
    "PlattCalibrator",
    "IsotonicCalibrator",
    "NWKRCalibrator",
    "logistic_probe",
    "as_pooled",
    "layer_index",
    "select_view",
    "select_view_cv",
    "select_forest_cv",
    "truncated_tree_proba",
    "pack_features",
]
