"""The decoupled model: an encoder ``f_theta: x -> h`` (unit-norm features) and a linear head ``g_phi`` whose logits
of classes not seen yet are masked to ``-inf``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

__all__ = ["DecoupledNet", "get_state", "set_state", "state_bytes"]


class DecoupledNet(nn.Module):
    """``f_theta(x) = u(x) / ||u(x)||`` with ``u`` = MLP(n_features -> hidden -> feature_dim, ReLU), and
    ``g_phi(h) = W (s h) + b`` over ``n_classes`` (``s = logit_scale``: unit-norm features need it for confident
    softmax outputs) with the logits of unseen classes set to ``-inf``, so that
    softmax / cross-entropy / argmax run over the seen classes only (a fixed global class index shared by all
    clients).  ``normalize=False`` drops the L2 normalisation (then privatization's clip is not a no-op)."""

    def __init__(
        self,
        n_features: int = 64,
        feature_dim: int = 32,
        n_classes: int = 10,
        hidden: int = 64,
        normalize: bool = True,
        logit_scale: float = 8.0,
    ) -> None:
        super().__init__()
        for name, v in (
            ("n_features", n_features),
            ("feature_dim", feature_dim),
            ("n_classes", n_classes),
            ("hidden", hidden),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not logit_scale > 0:
            raise ValueError(f"logit_scale must be > 0, got {logit_scale!r}")
        self.n_features, self.feature_dim, self.n_classes, self.normalize = (
            n_features,
            feature_dim,
            n_classes,
            normalize,
        )
        self.logit_scale = float(logit_scale)
        self.encoder = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, feature_dim))
        self.head = nn.Linear(feature_dim, n_classes)
        self._masks: dict[tuple[int, ...], torch.Tensor] = {}  # one logit mask per seen-class set

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """``h = f_theta(x)``, shape ``(n, feature_dim)``."""
        u = self.encoder(x)
        return nn.functional.normalize(u, dim=1) if self.normalize else u

    def classify(self, h: torch.Tensor, seen_classes: Sequence[int] | torch.Tensor | None = None) -> torch.Tensor:
        """``g_phi(h)`` with logits outside ``seen_classes`` masked to ``-inf`` (``None``: no mask)."""
        z = self.head(self.logit_scale * h)
        if seen_classes is None:
            return z
        key = tuple(int(c) for c in np.asarray(seen_classes).ravel())
        mask = self._masks.get(key)
        if mask is None:
            if not key:
                raise ValueError("seen_classes must name at least one class")
            if min(key) < 0 or max(key) >= self.n_classes:
                raise ValueError(f"seen_classes must lie in [0, {self.n_classes - 1}], got {list(key)}")
            mask = torch.ones(self.n_classes, dtype=torch.bool)
            mask[list(key)] = False
            self._masks[key] = mask
        return z.masked_fill(mask, float("-inf"))

    def forward(self, x: torch.Tensor, seen_classes: Sequence[int] | torch.Tensor | None = None) -> torch.Tensor:
        return self.classify(self.features(x), seen_classes)


def get_state(module: nn.Module) -> dict[str, np.ndarray]:
    """The module's ``state_dict`` as float32 numpy copies (the wire format shared by the simulation and Flower)."""
    return {k: v.detach().cpu().numpy().astype(np.float32, copy=True) for k, v in module.state_dict().items()}


def set_state(module: nn.Module, state: dict[str, np.ndarray]) -> nn.Module:
    """Load a :func:`get_state` dict into ``module`` (exact copy)."""
    module.load_state_dict({k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in state.items()})
    return module


def state_bytes(state: dict[str, np.ndarray]) -> int:
    """Bytes of a float32 state (``4 x`` number of entries)."""
    return int(sum(np.asarray(v).size for v in state.values()) * 4)
