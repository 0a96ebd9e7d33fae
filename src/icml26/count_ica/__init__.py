"""Regime-adaptive ICA for temporal count data (Chaussard, Bonnet, Le Corff, ICML 2026, arXiv 2601.21696).

Counts ``x_t`` (``K`` features) are Poisson with log-intensity ``o_t + Gamma s_t``: a linear mixing (``Gamma``,
unit columns) of ``d`` independent latent sources, each an AR(1) process whose coefficients switch with its own
hidden Markov regime.  Independence plus the sources' distinct dynamics make ``Gamma`` identifiable up to
permutation and sign, and the model is fitted by amortised variational EM (GRU encoder, closed-form ELBO and
M-step).  Notation: paper ``Gamma`` = ``mixing_``; ``s`` sources (``transform``); ``u`` regimes
(``predict_regimes``); ``(pi, A, B, b, psi)`` = ``initial_, transition_, ar_coef_, ar_bias_, ar_var_``.
"""

from .baselines import fastica_log, pca_log, picard_log, random_mixing
from .data import ARPLNTruth, make_arpln_data
from .estimator import CountICA, viterbi_path
from .metrics import align_mixing, regime_accuracy, sliced_wasserstein, standardized_log_counts
from .model import ARPLNICA

__all__ = [
    "CountICA",
    "ARPLNICA",
    "make_arpln_data",
    "ARPLNTruth",
    "align_mixing",
    "sliced_wasserstein",
    "regime_accuracy",
    "standardized_log_counts",
    "viterbi_path",
    "fastica_log",
    "picard_log",
    "pca_log",
    "random_mixing",
]
