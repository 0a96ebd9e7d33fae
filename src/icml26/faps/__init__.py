"""FaPS: frequency-aware patch selection for faster diffusion training (Wang, Han & Ding, ICML 2026).

Diffusion models show a "dual spectral bias": over training they fit low frequencies before high ones, and
along the sampling chain the noisy early steps rebuild low-frequency content while late steps add detail.
FaPS exploits this with a gate that looks at each image patch's frequency content and picks, per training
step, which patches the denoiser computes on; with a transformer denoiser only the kept tokens go through the
network, so a step costs roughly the kept fraction of a full step.  The gate is a stochastic policy trained
end-to-end by policy gradient (its choices are discrete).  Algorithmic details are not public; ours are
documented in ``docs/faps.md`` (inferred, MaskDiT / PatchDrop-style).

Notation to names:

=================================================  ===========================================================
paper / spec                                        here
=================================================  ===========================================================
patches ``x0 -> {x0_i}``, ``N = (H/p)(W/p)``          :func:`patchify`, :func:`unpatchify`
DCT band energies ``e_{i,b}``, features ``f_i``       :func:`dct_band_energies`, :func:`patch_features`
gate ``pi_psi(keep_i | f_i, t, tau)``, logits ``l``   :class:`FrequencyGate`
keep ratio ``rho``, budget ``k = ceil(rho N)``         ``keep_ratio``, :func:`num_keep`
Gumbel-top-k, Plackett-Luce ``log p(S)``              :func:`gumbel_topk`, :func:`plackett_luce_log_prob`
denoiser ``eps_theta`` on kept tokens                :class:`TinyDiT` (``keep_idx``)
REINFORCE + masked DSM loss, EMA, unmasked finetune   :class:`FaPSTrainer` (``train_step``)
schedule ``abar_t``, ``add_noise``, DDIM             :class:`DDIMScheduler`, :func:`ddim_sample`
Bernoulli keeps + budget penalty (option)          ``selection="bernoulli"``, :func:`bernoulli_log_prob`
"progress" reward, Min-SNR-gamma (options)         ``reward="progress"``, ``loss_weighting="min_snr"``
quality (local FD / KID, never "FID")              :class:`FeatureFD`, :func:`frechet_distance`,
                                                   :func:`kernel_distance`
data: digits (A), synthetic spectral set (B)       :func:`digits_tensors`, :func:`spectral_tensors`
sparse digit canvas (v2 main setting)              :func:`canvas_digits`
per-patch credit (v2 reward)                       ``reward="patch"``, :func:`plackett_luce_terms`
=================================================  ===========================================================

Example::

    import torch
    from icml26.faps import TinyDiT, DDIMScheduler, FrequencyGate, FaPSTrainer, ddim_sample
    model, sched = TinyDiT(img_size=16, patch_size=2), DDIMScheduler(1000)
    trainer = FaPSTrainer(model, sched, FrequencyGate(patch_size=2, keep_ratio=0.5), total_steps=1000)
    for x0, y in loader: trainer.train_step(x0, y)        # x0: [B, 1, 16, 16] in [-1, 1]
    samples = ddim_sample(trainer.ema_model, sched, n=64, y=torch.arange(64) % 10, steps=50)
"""

from .baselines import HighFrequencyGate, RandomPatchGate
from .data import canvas_digits, digits_tensors, spectral_tensors
from .diffusers_dit import DiffusersDiT
from .diffusion import DDIMScheduler, SchedulerOutput, ddim_sample
from .frequency import band_index, dct2, dct_band_energies, dct_matrix, idct2, patch_features, patchify, unpatchify
from .gate import (
    FaPSTrainer,
    FrequencyGate,
    GateDecision,
    bernoulli_log_prob,
    bernoulli_nonempty,
    gumbel_topk,
    num_keep,
    plackett_luce_log_prob,
    plackett_luce_prefix_terms,
    plackett_luce_terms,
)
from .metrics import (
    DigitClassifier,
    FeatureFD,
    band_r2,
    censored_level_time,
    frechet_distance,
    kernel_distance,
    linear_mmse_band_r2,
    linear_mmse_x0,
    recovery_level_t,
    train_digit_classifier,
)
from .model import TinyDiT

__all__ = [
    "DiffusersDiT",
    "FrequencyGate",
    "FaPSTrainer",
    "GateDecision",
    "TinyDiT",
    "DDIMScheduler",
    "SchedulerOutput",
    "ddim_sample",
    "patchify",
    "unpatchify",
    "dct_matrix",
    "dct2",
    "idct2",
    "band_index",
    "dct_band_energies",
    "patch_features",
    "gumbel_topk",
    "plackett_luce_log_prob",
    "bernoulli_log_prob",
    "bernoulli_nonempty",
    "num_keep",
    "FeatureFD",
    "frechet_distance",
    "kernel_distance",
    "DigitClassifier",
    "train_digit_classifier",
    "RandomPatchGate",
    "HighFrequencyGate",
    "digits_tensors",
    "spectral_tensors",
    "canvas_digits",
    "plackett_luce_terms",
    "plackett_luce_prefix_terms",
    "band_r2",
    "censored_level_time",
    "linear_mmse_x0",
    "linear_mmse_band_r2",
    "recovery_level_t",
]
