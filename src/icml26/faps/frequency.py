"""Patches and their frequency content: ``patchify`` / ``unpatchify`` and DCT band energies.

A patch's frequency descriptor is the energy of its orthonormal 2-D DCT-II coefficients summed over radial
bands: coefficient ``(u, v)`` of a ``p x p`` patch has radius ``r = sqrt(u^2 + v^2) / (sqrt(2) (p - 1))`` in
``[0, 1]`` and falls in band ``b = min(floor(r B), B - 1)``.  The DCT is orthonormal, so band energies sum to
the patch's squared pixel norm (Parseval).
"""

from __future__ import annotations

import functools
import math

import torch
from torch import Tensor

__all__ = ["patchify", "unpatchify", "dct_matrix", "dct2", "idct2", "band_index", "dct_band_energies", "patch_features"]


def _check_patch_size(h: int, w: int, patch_size: int) -> None:
    if not isinstance(patch_size, int) or isinstance(patch_size, bool) or patch_size < 1:
        raise ValueError(f"patch_size must be a positive integer, got {patch_size!r}")
    if h % patch_size or w % patch_size:
        raise ValueError(
            f"image size must be divisible by patch_size: got height {h}, width {w}, patch_size {patch_size}"
        )


def patchify(x: Tensor, patch_size: int) -> Tensor:
    """Split images ``[B, C, H, W]`` into tokens ``[B, N, C p p]`` with ``N = (H/p)(W/p)`` in row-major order.

    Token ``i = r (W/p) + c`` holds the patch at rows ``r p .. r p + p - 1`` and columns ``c p .. c p + p - 1``,
    flattened channel-first (``C, p, p``).
    """
    if x.dim() != 4:
        raise ValueError(f"x must have shape [B, C, H, W], got {tuple(x.shape)}")
    b, c, h, w = x.shape
    _check_patch_size(h, w, patch_size)
    p = patch_size
    x = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def unpatchify(tokens: Tensor, patch_size: int, channels: int, height: int, width: int) -> Tensor:
    """Inverse of :func:`patchify`: tokens ``[B, N, C p p]`` back to images ``[B, C, H, W]``."""
    _check_patch_size(height, width, patch_size)
    p = patch_size
    b, n, d = tokens.shape
    if n != (height // p) * (width // p) or d != channels * p * p:
        raise ValueError(
            f"tokens must have shape [B, {(height // p) * (width // p)}, {channels * p * p}] for a "
            f"{channels}x{height}x{width} image and patch_size {p}, got {tuple(tokens.shape)}"
        )
    x = tokens.reshape(b, height // p, width // p, channels, p, p).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(b, channels, height, width)


def dct_matrix(n: int, dtype: torch.dtype = torch.float32, device: torch.device | str | None = None) -> Tensor:
    """Orthonormal DCT-II matrix ``M`` (``M @ M.T = I``): ``M[u, i] = a_u cos(pi (2 i + 1) u / (2 n))``."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return _dct_matrix_cached(n, dtype, str(device) if device is not None else None).clone()


@functools.lru_cache(maxsize=64)
def _dct_matrix_cached(n: int, dtype: torch.dtype, device: str | None) -> Tensor:
    i = torch.arange(n, dtype=torch.float64)
    u = i[:, None]
    m = torch.cos(math.pi * (2 * i[None, :] + 1) * u / (2 * n)) * math.sqrt(2.0 / n)
    m[0] = m[0] / math.sqrt(2.0)
    return m.to(dtype=dtype, device=device)


def dct2(x: Tensor) -> Tensor:
    """Orthonormal 2-D DCT-II over the last two dimensions (``M_h x M_w^T``)."""
    mh = _dct_matrix_cached(x.shape[-2], x.dtype, str(x.device))
    mw = _dct_matrix_cached(x.shape[-1], x.dtype, str(x.device))
    return mh @ x @ mw.T


def idct2(d: Tensor) -> Tensor:
    """Inverse of :func:`dct2` over the last two dimensions (``M_h^T d M_w``; the matrices are orthonormal)."""
    mh = _dct_matrix_cached(d.shape[-2], d.dtype, str(d.device))
    mw = _dct_matrix_cached(d.shape[-1], d.dtype, str(d.device))
    return mh.T @ d @ mw


def band_index(height: int, width: int, n_bands: int) -> Tensor:
    """Radial band of every DCT coefficient of a ``height x width`` block: ``LongTensor[height, width]``."""
    if not isinstance(n_bands, int) or n_bands < 1:
        raise ValueError(f"n_bands must be a positive integer, got {n_bands!r}")
    u = torch.arange(height, dtype=torch.float64)[:, None] / max(height - 1, 1)
    v = torch.arange(width, dtype=torch.float64)[None, :] / max(width - 1, 1)
    r = torch.sqrt((u**2 + v**2) / 2.0)
    return torch.clamp((r * n_bands).floor().long(), max=n_bands - 1)


def dct_band_energies(patches: Tensor, n_bands: int = 4) -> Tensor:
    """Energy per radial DCT band: ``e_b = sum_{(u,v) in band b} D[u, v]^2`` for blocks ``[..., p, p]``.

    Returns ``[..., n_bands]``; bands run from low (``0``, the DC term) to high (``n_bands - 1``, the
    checkerboard).  With small ``p`` some middle bands can be empty (``p = 2`` has radii 0, 0.71 and 1 only);
    their energy is 0.  ``sum_b e_b`` equals ``sum patches**2`` over the block (Parseval).
    """
    if patches.dim() < 2:
        raise ValueError(f"patches must have at least 2 dimensions [..., p, p], got {tuple(patches.shape)}")
    idx = band_index(patches.shape[-2], patches.shape[-1], n_bands).to(patches.device).flatten()
    d2 = dct2(patches).pow(2).flatten(-2)
    out = torch.zeros(*d2.shape[:-1], n_bands, dtype=d2.dtype, device=d2.device)
    return out.index_add_(-1, idx, d2)


def patch_features(x0: Tensor, patch_size: int, n_bands: int = 4, signed_dc: bool = False) -> Tensor:
    """Gate input per patch: ``f_i = [log(1e-6 + e_i / sum_b e_ib), log(1e-6 + sum_b e_ib)]`` (``B + 1`` dims).

    With ``signed_dc=True`` the signed DC coefficient over the patch size, ``D_i[0, 0] / p`` (the patch mean, per
    channel summed), is appended (``B + 2`` dims): band energies are sign-blind (``f(x) = f(-x)``), the DC sign
    tells a dark background patch from a bright stroke.  ``x0``: images ``[B, C, H, W]`` (clean or noisy);
    energies are summed over channels.  Returns ``[B, N, n_bands + 1 (+ 1)]``.
    """
    b, c, h, w = x0.shape
    _check_patch_size(h, w, patch_size)
    p = patch_size
    blocks = patchify(x0, p).reshape(b, -1, c, p, p)
    e = dct_band_energies(blocks, n_bands).sum(dim=2)  # [B, N, n_bands]
    total = e.sum(-1, keepdim=True)
    f = [torch.log(1e-6 + e / (total + 1e-12)), torch.log(1e-6 + total)]
    if signed_dc:
        f.append(blocks.mean(dim=(-2, -1)).sum(-1, keepdim=True))  # D[0, 0] / p = patch mean (orthonormal DCT)
    return torch.cat(f, dim=-1)
