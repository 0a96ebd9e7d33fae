"""Threshold controllers: ``(C_t, s_hat) -> C_{t+1}``, fed only the noised slack indicator.

Both are geometric (multiplicative) updates in the style of Andrew et al. (2021); they differ in the target
share of unclipped samples.  A controller is any callable with this signature, so users can plug their own.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["SlaClipController", "SlaClipQController"]


def _real_in(value: object, name: str, low: float, high: float, *, open_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    ok = math.isfinite(value) and (value > low if open_low else value >= low) and value <= high
    if not ok:
        bracket = "(" if open_low else "["
        close = "]" if math.isfinite(high) else ")"  # a finite number: inf itself is refused (referee 2, item 8)
        raise ValueError(f"{name} must be a finite number in {bracket}{low:g}, {high:g}{close}, got {value}")
    return value


def _check_bounds(c_min: float, c_max: float) -> tuple[float, float]:
    c_min = _real_in(c_min, "c_min", 0.0, math.inf, open_low=True)
    c_max = _real_in(c_max, "c_max", 0.0, math.inf, open_low=True)
    if c_min >= c_max:
        raise ValueError(f"c_min must be < c_max, got c_min={c_min}, c_max={c_max}")
    return c_min, c_max


def _as_indicator(s_hat: torch.Tensor | np.ndarray | Sequence[float]) -> np.ndarray:
    if isinstance(s_hat, torch.Tensor):
        s_hat = s_hat.detach().cpu().tolist()
    a = np.asarray(s_hat, dtype=float)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"s_hat must be a non-empty 1-D vector (one value per slot), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("s_hat must be finite")
    return a


class SlaClipController:
    r"""Full SlaClip threshold update (Appendix C, Eq. 28-30).

    .. math::
        r_t = \mathrm{clip}(\hat s_{K-1} / C_t,\, 0,\, 1),\qquad
        \gamma_t = 1 - \beta (1 - r_t),\qquad
        C_{t+1} = \mathrm{clip}\big(C_t\, e^{\eta(\gamma_t - \hat s_0)},\ c_{\min},\ c_{\max}\big).

    ``s_hat[0]`` estimates the share of unclipped samples and ``s_hat[K-1]`` the share of near-zero
    gradients; the target share ``gamma_t`` rises with the latter, so the threshold tracks the median of the
    non-negligible gradients instead of shrinking when many gradients vanish.

    Parameters
    ----------
    eta: step size of the geometric update (> 0).
    beta: weight of the unclipped target, in [0, 1]; ``beta = 0.5`` gives ``gamma_t = (1 + r_t) / 2``.
    c_min, c_max: clamp of the threshold, ``0 < c_min < c_max``.
    tail_clip: ``"r"`` clips ``r_t`` to [0, 1] (appendix); ``"gamma"`` clips ``gamma_t`` to [0, 1]
        (Algorithm 1). They differ only when noise makes ``s_hat[K-1]`` negative or large.
    tail_normalization: ``"paper"`` divides ``s_hat[K-1]`` by ``C_t`` as the paper and its code do;
        ``"fraction"`` uses ``s_hat[K-1]`` as a share directly.
    """

    def __init__(
        self,
        eta: float = 0.2,
        beta: float = 0.5,
        c_min: float = 0.1,
        c_max: float = 20.0,
        *,
        tail_clip: str = "r",
        tail_normalization: str = "paper",
    ) -> None:
        self.eta = _real_in(eta, "eta", 0.0, math.inf, open_low=True)
        self.beta = _real_in(beta, "beta", 0.0, 1.0)
        self.c_min, self.c_max = _check_bounds(c_min, c_max)
        if tail_clip not in ("r", "gamma"):
            raise ValueError(f"tail_clip must be 'r' or 'gamma', got {tail_clip!r}")
        if tail_normalization not in ("paper", "fraction"):
            raise ValueError(f"tail_normalization must be 'paper' or 'fraction', got {tail_normalization!r}")
        self.tail_clip = tail_clip
        self.tail_normalization = tail_normalization

    def target(self, clip: float, s_hat: torch.Tensor | np.ndarray | Sequence[float]) -> float:
        """The target unclipped share ``gamma_t`` for the current threshold and indicator."""
        clip = _real_in(clip, "clip", 0.0, math.inf, open_low=True)
        return self._target(clip, _as_indicator(s_hat))

    def _target(self, clip: float, s: np.ndarray) -> float:
        r = float(s[-1]) / clip if self.tail_normalization == "paper" else float(s[-1])
        if self.tail_clip == "r":
            return 1.0 - self.beta * (1.0 - min(max(r, 0.0), 1.0))
        return min(max(1.0 - self.beta * (1.0 - r), 0.0), 1.0)

    def __call__(self, clip: float, s_hat: torch.Tensor | np.ndarray | Sequence[float]) -> float:
        clip = _real_in(clip, "clip", 0.0, math.inf, open_low=True)
        s = _as_indicator(s_hat)
        new = clip * math.exp(self.eta * (self._target(clip, s) - float(s[0])))
        return min(max(new, self.c_min), self.c_max)

    def __repr__(self) -> str:
        return (
            f"SlaClipController(eta={self.eta}, beta={self.beta}, c_min={self.c_min}, c_max={self.c_max}, "
            f"tail_clip={self.tail_clip!r}, tail_normalization={self.tail_normalization!r})"
        )


class SlaClipQController:
    r"""SlaClip-Q (Eq. 12, the ablation): a fixed target quantile fed by the free ``s_hat[0]``.

    .. math:: C_{t+1} = \mathrm{clip}\big(C_t\, e^{\eta(\gamma - \hat s_0)},\ c_{\min},\ c_{\max}\big)

    This is the Andrew et al. (2021) geometric quantile rule with the unclipped share read from the slack
    indicator instead of a second private count.
    """

    def __init__(self, eta: float = 0.2, gamma: float = 0.5, c_min: float = 0.1, c_max: float = 20.0) -> None:
        self.eta = _real_in(eta, "eta", 0.0, math.inf, open_low=True)
        self.gamma = _real_in(gamma, "gamma", 0.0, 1.0)
        self.c_min, self.c_max = _check_bounds(c_min, c_max)

    def target(self, clip: float, s_hat: torch.Tensor | np.ndarray | Sequence[float]) -> float:
        return self.gamma

    def __call__(self, clip: float, s_hat: torch.Tensor | np.ndarray | Sequence[float]) -> float:
        clip = _real_in(clip, "clip", 0.0, math.inf, open_low=True)
        s0 = float(_as_indicator(s_hat)[0])
        new = clip * math.exp(self.eta * (self.gamma - s0))
        return min(max(new, self.c_min), self.c_max)

    def __repr__(self) -> str:
        return f"SlaClipQController(eta={self.eta}, gamma={self.gamma}, c_min={self.c_min}, c_max={self.c_max})"
