"""Baseline gates with the same ``select`` interface as :class:`~icml26.faps.FrequencyGate`.

* :class:`RandomPatchGate` -- random patch dropping at the same keep ratio (MaskDiT-style, no learning).
* :class:`HighFrequencyGate` -- a fixed heuristic: keep the ``k`` patches with the most high-band DCT energy
  (bands ``>= n_bands // 2``); with ``t_switch`` set, keep the most low-band energy when ``t >= t_switch T``
  (the spec's switch, ``late="low"``) or patches chosen uniformly at random (``late="random"``: "high-frequency
  only at small t", the fixed t-scheduled rule of issue 19).
* Full training is ``FaPSTrainer(..., gate=None)``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .frequency import dct_band_energies, patchify
from .gate import GateDecision, check_keep_ratio, num_keep

__all__ = ["RandomPatchGate", "HighFrequencyGate"]


class RandomPatchGate(nn.Module):
    """Keep ``ceil(keep_ratio N)`` patches chosen uniformly at random, independently per image."""

    def __init__(self, patch_size: int = 2, keep_ratio: float = 0.5) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.keep_ratio = check_keep_ratio(keep_ratio)

    def select(self, x0: Tensor, t: Tensor, tau: float = 0.0, generator: torch.Generator | None = None):
        b, _, h, w = x0.shape
        n = (h // self.patch_size) * (w // self.patch_size)
        scores = torch.rand((b, n), generator=generator).to(x0.device)
        return GateDecision(scores.topk(num_keep(self.keep_ratio, n), dim=1).indices)


class HighFrequencyGate(nn.Module):
    """Deterministic frequency heuristic ("gating without learning"); ties are broken at random."""

    def __init__(
        self,
        patch_size: int = 2,
        keep_ratio: float = 0.5,
        n_bands: int = 4,
        t_switch: float | None = None,
        num_train_timesteps: int = 1000,
        late: str = "low",
    ) -> None:
        super().__init__()
        if t_switch is not None and not 0.0 <= t_switch <= 1.0:
            raise ValueError(f"t_switch must be None or lie in [0, 1], got {t_switch}")
        if late not in ("low", "random"):
            raise ValueError(f"late must be 'low' or 'random', got {late!r}")
        self.late = late
        self.patch_size, self.n_bands, self.t_switch = patch_size, n_bands, t_switch
        self.num_train_timesteps = num_train_timesteps
        self.keep_ratio = check_keep_ratio(keep_ratio)

    def select(self, x0: Tensor, t: Tensor, tau: float = 0.0, generator: torch.Generator | None = None):
        b, c, h, w = x0.shape
        p = self.patch_size
        with torch.no_grad():
            e = dct_band_energies(patchify(x0, p).reshape(b, -1, c, p, p), self.n_bands).sum(2)  # [B, N, bands]
            high = e[..., self.n_bands // 2 :].sum(-1)
            score = high
            if self.t_switch is not None:
                if self.late == "low":
                    alt = e[..., : self.n_bands // 2].sum(-1)
                else:  # uniform: random scores dominate the tie-break noise below
                    alt = torch.rand(score.shape, generator=generator).to(x0.device) * 1e6
                late = (t.to(x0.device) >= self.t_switch * self.num_train_timesteps)[:, None]
                score = torch.where(late, alt, high)
            score = score + 1e-6 * torch.rand(score.shape, generator=generator).to(x0.device)
        return GateDecision(score.topk(num_keep(self.keep_ratio, score.shape[1]), dim=1).indices)
