"""Data: scikit-learn's bundled 8x8 digits as tensors in [-1, 1], optionally upsampled."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

__all__ = ["digits_tensors"]


def digits_tensors(img_size: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """All 1797 digits as ``x [N, 1, img_size, img_size]`` in ``[-1, 1]`` (bilinear upsampling) and labels ``y``."""
    if img_size not in (8, 16, 32):
        raise ValueError(f"img_size must be 8, 16 or 32, got {img_size}")
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32)[:, None] / 8.0 - 1.0
    if img_size != 8:
        x = F.interpolate(x, size=(img_size, img_size), mode="bilinear", align_corners=False).clamp(-1, 1)
    return x, torch.tensor(d.target, dtype=torch.long)
