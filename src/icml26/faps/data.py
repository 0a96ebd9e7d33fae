"""Data: scikit-learn's bundled 8x8 digits as tensors in [-1, 1] (optionally upsampled), and a synthetic
"spectral" set of smooth blobs plus high-frequency gratings (for the dual-spectral-bias analysis)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

__all__ = ["digits_tensors", "spectral_tensors", "canvas_digits"]


def digits_tensors(img_size: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """All 1797 digits as ``x [N, 1, img_size, img_size]`` in ``[-1, 1]`` (bilinear upsampling) and labels ``y``."""
    if img_size not in (8, 16, 32):
        raise ValueError(f"img_size must be 8, 16 or 32, got {img_size}")
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32)[:, None] / 8.0 - 1.0
    if img_size != 8:
        x = F.interpolate(x, size=(img_size, img_size), mode="bilinear", align_corners=False).clamp(-1, 1)
    return x, torch.tensor(d.target, dtype=torch.long)


def spectral_tensors(
    n: int, img_size: int = 16, seed: int = 0, patch: int = 4, max_gratings: int = 3
) -> tuple[torch.Tensor, torch.Tensor]:
    """Synthetic "spectral" images with a controlled spectrum: smooth blobs plus a few high-frequency gratings.

    Each image ``[1, img_size, img_size]`` in ``[-1, 1]`` is ``-0.6 + 1.2 * (sum of 1-2 Gaussian blobs, sigma
    in [2, 4] px, peak in [0.5, 1])`` (low frequencies) plus ``g in {1 .. max_gratings}`` ``patch x patch``
    squares (on the patch grid) holding ``0.4 cos(2 pi f (x cos theta + y sin theta) + phi)`` with ``f in [0.35,
    0.5]`` cycles/pixel and ``theta`` one of 0, 45, 90, 135 degrees (high frequencies), clamped to ``[-1, 1]``.
    Label ``y = g - 1``.  Deterministic in ``seed``.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(patch, int) or patch < 2 or img_size % patch:
        raise ValueError(f"patch must be an integer >= 2 dividing img_size={img_size}, got {patch!r}")
    if not isinstance(max_gratings, int) or not 1 <= max_gratings <= (img_size // patch) ** 2:
        raise ValueError(f"max_gratings must lie in [1, {(img_size // patch) ** 2}], got {max_gratings!r}")
    g = torch.Generator().manual_seed(seed)
    coords = torch.arange(img_size, dtype=torch.float32)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    x = torch.zeros(n, 1, img_size, img_size)
    labels = torch.zeros(n, dtype=torch.long)
    cells = (img_size // patch) ** 2
    for i in range(n):
        blobs = torch.zeros(img_size, img_size)
        for _ in range(int(torch.randint(1, 3, (1,), generator=g))):
            cy, cx = (torch.rand(2, generator=g) * (img_size - 1)).tolist()
            sigma = 2.0 + 2.0 * float(torch.rand(1, generator=g))
            peak = 0.5 + 0.5 * float(torch.rand(1, generator=g))
            blobs = blobs + peak * torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * sigma**2))
        img = -0.6 + 1.2 * blobs.clamp(max=1.0)
        n_gr = int(torch.randint(1, max_gratings + 1, (1,), generator=g))
        for cell in torch.randperm(cells, generator=g)[:n_gr].tolist():
            r, c = divmod(cell, img_size // patch)
            f = 0.35 + 0.15 * float(torch.rand(1, generator=g))
            theta = math.pi / 4 * int(torch.randint(0, 4, (1,), generator=g))
            phi = 2 * math.pi * float(torch.rand(1, generator=g))
            sl = (slice(r * patch, (r + 1) * patch), slice(c * patch, (c + 1) * patch))
            wave = torch.cos(2 * math.pi * f * (xx[sl] * math.cos(theta) + yy[sl] * math.sin(theta)) + phi)
            img[sl] = img[sl] + 0.4 * wave
        x[i, 0] = img.clamp(-1, 1)
        labels[i] = n_gr - 1
    return x, labels


def canvas_digits(
    canvas: int = 32, digit_size: int = 16, seed: int = 12345, background: float = -1.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sparse canvas: every digit (upsampled to ``digit_size``) pasted at a random offset on a ``canvas``-square
    background of value ``background``; most patches are flat background and carry no high frequencies.

    Returns ``x [1797, 1, canvas, canvas]`` in ``[-1, 1]``, labels ``y`` and the offsets ``[1797, 2]`` (row,
    column of the digit's top-left pixel; uniform on ``0 .. canvas - digit_size``, deterministic in ``seed``).
    """
    if not isinstance(canvas, int) or not isinstance(digit_size, int) or digit_size < 8 or canvas < digit_size:
        raise ValueError(f"need integers 8 <= digit_size <= canvas, got digit_size={digit_size!r}, canvas={canvas!r}")
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32)[:, None] / 8.0 - 1.0
    if digit_size != 8:
        x = F.interpolate(x, size=(digit_size, digit_size), mode="bilinear", align_corners=False).clamp(-1, 1)
    g = torch.Generator().manual_seed(seed)
    off = torch.randint(0, canvas - digit_size + 1, (len(x), 2), generator=g)
    out = torch.full((len(x), 1, canvas, canvas), float(background))
    for i, (r, c) in enumerate(off.tolist()):
        out[i, :, r : r + digit_size, c : c + digit_size] = x[i]
    return out, torch.tensor(d.target, dtype=torch.long), off
