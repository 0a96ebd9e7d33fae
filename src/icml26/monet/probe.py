"""Linear probes of frozen modality encoders: how much of the label a modality's features carry."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
from torch import nn

from .data import BimodalSplit

__all__ = ["modality_probe_accuracy", "probe_features"]


def _as_split(data, name: str) -> tuple[Mapping[str, torch.Tensor], torch.Tensor]:
    if isinstance(data, BimodalSplit):
        return data.x, data.y
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], Mapping):
        return data[0], torch.as_tensor(data[1])
    raise TypeError(f"{name} must be a BimodalSplit or an (inputs, y) tuple, got {type(data).__name__}")


@torch.no_grad()
def probe_features(model: nn.Module, modality: str, x: torch.Tensor) -> np.ndarray:
    """``model.encode(modality, x)`` in eval mode, as a float64 numpy array."""
    if not hasattr(model, "encode"):
        raise TypeError(f"model must have an encode(modality, x) method, got {type(model).__name__}")
    was = model.training
    model.eval()
    try:
        z = model.encode(modality, x)
    finally:
        model.train(was)
    return z.detach().double().numpy()


def modality_probe_accuracy(model: nn.Module, modality: str, train, test, C: float = 0.1, max_iter: int = 500) -> float:
    """Test accuracy of a multinomial logistic-regression probe (scikit-learn, L2 strength ``1/C``, on standardised
    features) fitted on the frozen features ``model.encode(modality, x)`` of ``train`` and scored on ``test``.

    ``train`` and ``test`` are :class:`~icml26.monet.data.BimodalSplit` or ``(inputs, y)`` tuples.  The probe is
    deterministic (lbfgs)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    xtr, ytr = _as_split(train, "train")
    xte, yte = _as_split(test, "test")
    if not isinstance(modality, str) or modality not in xtr or modality not in xte:
        raise ValueError(f"modality must be one of the data's modalities {sorted(xtr)}, got {modality!r}")
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C!r}")
    ftr, fte = probe_features(model, modality, xtr[modality]), probe_features(model, modality, xte[modality])
    scaler = StandardScaler().fit(ftr)
    clf = LogisticRegression(C=C, max_iter=max_iter).fit(scaler.transform(ftr), ytr.numpy())
    return float((clf.predict(scaler.transform(fte)) == yte.numpy()).mean())
