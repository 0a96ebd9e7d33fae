"""SlaClip: adaptive clipping for DP-SGD from gradient-norm slacks (Zou et al., ICML 2026).

Each sample's clipping slack ``max(C - ||g_i||, 0)`` is encoded into ``K`` extra coordinates that ride along
with the clipped gradient, so one Gaussian release (same noise multiplier, same sample rate, same
sensitivity ``C``) yields both the usual DP-SGD gradient and a noisy histogram of how far below the threshold
the gradients sit.  The threshold then follows a geometric rule fed only by that released "slack indicator":
it aims at the median of the non-negligible gradients, so it neither needs a second private query (as
quantile clipping does) nor shrinks when gradients vanish late in training.

Notation (paper -> here):

=====================  ==============================================================
``C_t``                ``optimizer.current_clip`` (``max_grad_norm``); ``C_0`` = ``max_grad_norm`` argument
``sigma``              ``noise_multiplier``
``K``                  ``num_slots`` (default :func:`recommended_num_slots`, Eq. 14)
``v_i``                :func:`encode_slack` ``(norms, clip, num_slots)`` rows (Eq. 6-8)
``s_hat``              :func:`slack_indicator`, ``optimizer.slack_indicator`` (Eq. 10-11)
``eta, beta, gamma``   :class:`SlaClipController` / :class:`SlaClipQController` arguments (Eq. 12, 28-30)
``c_min, c_max``       threshold clamp of the controllers
=====================  ==============================================================

Usage mirrors Opacus's ``make_private``::

    model, optimizer, loader = make_private_slaclip(PrivacyEngine(accountant="rdp"), model, opt, loader,
                                                    noise_multiplier=1.1, max_grad_norm=1.0)
"""

from ._slack import TABLE3_NUM_SLOTS, encode_slack, recommended_num_slots, slack_indicator
from .audit import audit_controller_inputs, audit_release_noise, audit_sensitivity, audit_slot_noise, released_sum
from .controllers import SlaClipController, SlaClipQController
from .optimizer import SlaClipDPOptimizer, make_private_slaclip, make_private_slaclip_with_epsilon

__all__ = [
    "SlaClipDPOptimizer",
    "SlaClipController",
    "SlaClipQController",
    "make_private_slaclip",
    "make_private_slaclip_with_epsilon",
    "audit_release_noise",
    "audit_sensitivity",
    "audit_slot_noise",
    "audit_controller_inputs",
    "released_sum",
    "recommended_num_slots",
    "encode_slack",
    "slack_indicator",
    "TABLE3_NUM_SLOTS",
]
