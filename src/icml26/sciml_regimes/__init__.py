"""Regime-aware diagnostics for scientific ML (Wang, Hu, Zhong, Wang, Lu, Pang, Mahoney, Yan, Ren, Yang, ICML 2026).

The paper sweeps a SciML model over (physical difficulty) x (data availability) and finds three regimes, each with
its own failure mode: Under-Trained (high training loss and high test error: optimization fails), Well-Trained
(both low) and Over-Trained (training loss low, test error high: too little data to pin the solution down).
Performance, training dynamics and loss-landscape metrics (Hessian sharpness and trace, CKA and mode
connectivity between seeds) differ by regime, and so does what helps: easing optimization helps Under-Trained
cells, while Over-Trained cells need more data rather than a better optimizer.

Notation to names:

==========================================  ========================================================================
paper                                       here
==========================================  ========================================================================
PDE coefficient (beta, rho, nu)             :class:`ConvectionProblem` ``beta``, :class:`ReactionProblem` ``rho``,
                                            :class:`DiffusionProblem` ``nu``, :class:`WaveProblem` ``beta``,
                                            :class:`ReactionDiffusionProblem` ``(nu, rho)``
collocation points N_f                      ``n_f`` (:meth:`PDEProblem.sample`)
PINN u_theta(x, t), loss res + bc + ic      :class:`PINN`, :meth:`PDEProblem.loss`
L-BFGS / Adam / Adam+L-BFGS / CL            :func:`fit` ``optimizer="lbfgs" | "adam" | "adam_lbfgs" | "curriculum"``
train loss L, test rel. L2 error E          :class:`TrainLog` ``final_loss``, ``test_error``
top Hessian eigenvalue, Hessian trace       :func:`hessian_top_eigenvalue`, :func:`hessian_trace` (loss closures)
CKA between seeds, mode connectivity mc     :func:`linear_cka`, :func:`mode_connectivity`
regime phase plot                           :class:`RegimeSweep`, :func:`classify_regimes`, :func:`plot_regime_map`
==========================================  ========================================================================

Example::

    from icml26.sciml_regimes import ConvectionProblem, PINN, fit, RegimeSweep, classify_regimes, plot_regime_map
    log = fit(PINN(width=20, depth=3, seed=0), ConvectionProblem(beta=10.0), optimizer="lbfgs", n_f=128, steps=300)
    df = RegimeSweep(lambda b: ConvectionProblem(beta=b), [1, 10, 40], [8, 128], seeds=[0, 1]).run()
    fig = plot_regime_map(classify_regimes(df[df.optimizer == "lbfgs"]))
"""

from .landscape import hessian_top_eigenvalue, hessian_trace, hvp, linear_cka, mode_connectivity, model_loss_closure
from .pinn import OPTIMIZERS, PINN, TrainLog, fit
from .problems import (
    Batch,
    ConvectionProblem,
    DiffusionProblem,
    PDEProblem,
    ReactionDiffusionProblem,
    ReactionProblem,
    WaveProblem,
    relative_l2,
)
from .sweep import REGIMES, RegimeSweep, classify_regime, classify_regimes, plot_regime_map, records_to_frame, run_cell

__all__ = [
    "Batch",
    "PDEProblem",
    "ConvectionProblem",
    "ReactionProblem",
    "DiffusionProblem",
    "WaveProblem",
    "ReactionDiffusionProblem",
    "relative_l2",
    "PINN",
    "TrainLog",
    "fit",
    "OPTIMIZERS",
    "hvp",
    "hessian_top_eigenvalue",
    "hessian_trace",
    "linear_cka",
    "mode_connectivity",
    "model_loss_closure",
    "RegimeSweep",
    "run_cell",
    "classify_regime",
    "classify_regimes",
    "plot_regime_map",
    "records_to_frame",
    "REGIMES",
]
