"""A tiny class-conditional DiT (adaLN-Zero) that can run on a subset of its patch tokens.

``TinyDiT(x_t, t, y)`` predicts the noise ``eps`` for the whole image; ``TinyDiT(x_t, t, y, keep_idx)`` embeds
all patches but sends only the tokens listed in ``keep_idx`` (each with its fixed 2-D sin-cos position
embedding) through the transformer blocks and returns their noise prediction ``[B, k, C p p]``.  Attention and
MLP cost scale with the number of tokens, which is where token dropping saves compute (MaskDiT-style).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .frequency import _check_patch_size, patchify, unpatchify

__all__ = ["TinyDiT", "timestep_embedding"]


def timestep_embedding(t: Tensor, dim: int, max_period: float = 10000.0) -> Tensor:
    """Sinusoidal embedding ``[cos(t w_j), sin(t w_j)]`` with ``w_j = max_period^(-j / (dim/2))``."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    return F.pad(emb, (0, dim % 2))


def _sincos_2d(grid_h: int, grid_w: int, dim: int) -> Tensor:
    if dim % 4:
        raise ValueError(f"width must be divisible by 4 for the 2-D sin-cos position embedding, got {dim}")
    yy, xx = torch.meshgrid(torch.arange(grid_h), torch.arange(grid_w), indexing="ij")
    e_y = timestep_embedding(yy.flatten(), dim // 2, 10000.0)
    e_x = timestep_embedding(xx.flatten(), dim // 2, 10000.0)
    return torch.cat([e_y, e_x], dim=-1)  # [N, dim]


def _modulate(x: Tensor, shift: Tensor, scale: Tensor) -> Tensor:
    return x * (1 + scale[:, None]) + shift[:, None]


class _Block(nn.Module):
    def __init__(self, width: int, heads: int, mlp_ratio: float) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        hidden = int(width * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.GELU(approximate="tanh"), nn.Linear(hidden, width))
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(width, 6 * width))
        nn.init.zeros_(self.ada[1].weight)  # adaLN-Zero: every block starts as the identity
        nn.init.zeros_(self.ada[1].bias)

    def forward(self, x: Tensor, c: Tensor, attn_mask: Tensor | None = None) -> Tensor:
        s1, g1, a1, s2, g2, a2 = self.ada(c).chunk(6, dim=-1)
        b, n, w = x.shape
        h = _modulate(self.norm1(x), s1, g1)
        q, k, v = self.qkv(h).reshape(b, n, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        h = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask).transpose(1, 2).reshape(b, n, w)
        x = x + a1[:, None] * self.proj(h)
        return x + a2[:, None] * self.mlp(_modulate(self.norm2(x), s2, g2))


class TinyDiT(nn.Module):
    """Diffusion transformer: patch embedding, ``depth`` adaLN-Zero blocks, linear head to ``eps`` per patch.

    Parameters
    ----------
    img_size, patch_size, in_ch:
        Square images ``in_ch x img_size x img_size`` cut into ``N = (img_size / patch_size)^2`` tokens.
    width, depth, heads, mlp_ratio:
        Transformer size (``width`` divisible by ``heads`` and by 4).
    num_classes:
        Labels ``0 .. num_classes - 1``; label ``num_classes`` (or ``y=None``) is the null (unconditional) class.
    """

    def __init__(
        self,
        img_size: int = 16,
        patch_size: int = 2,
        in_ch: int = 1,
        width: int = 96,
        depth: int = 4,
        heads: int = 4,
        num_classes: int = 10,
        mlp_ratio: float = 4.0,
    ) -> None:
        super().__init__()
        _check_patch_size(img_size, img_size, patch_size)
        for name, v in (("in_ch", in_ch), ("width", width), ("depth", depth), ("heads", heads)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if width % heads:
            raise ValueError(f"width must be divisible by heads, got width={width}, heads={heads}")
        if num_classes < 0:
            raise ValueError(f"num_classes must be >= 0, got {num_classes}")
        self.img_size, self.patch_size, self.in_ch = img_size, patch_size, in_ch
        self.num_classes = num_classes
        self.grid = img_size // patch_size
        self.num_patches = self.grid**2
        self.width = width
        d = in_ch * patch_size**2
        self.embed = nn.Linear(d, width)
        self.register_buffer("pos", _sincos_2d(self.grid, self.grid, width), persistent=False)
        self.t_mlp = nn.Sequential(nn.Linear(width, width), nn.SiLU(), nn.Linear(width, width))
        self.y_emb = nn.Embedding(num_classes + 1, width)
        self.blocks = nn.ModuleList(_Block(width, heads, mlp_ratio) for _ in range(depth))
        self.norm = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.head_ada = nn.Sequential(nn.SiLU(), nn.Linear(width, 2 * width))
        self.head = nn.Linear(width, d)
        for m in (self.head_ada[1], self.head):
            nn.init.zeros_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(
        self,
        x_t: Tensor,
        t: Tensor,
        y: Tensor | None = None,
        keep_idx: Tensor | None = None,
        keep_mask: Tensor | None = None,
    ) -> Tensor:
        """Predict ``eps``: images ``[B, C, H, W]`` if ``keep_idx`` is None, else kept tokens ``[B, k, C p p]``.

        ``t``: timesteps ``[B]`` (or a scalar); ``y``: labels ``[B]`` or None (null class); ``keep_idx``:
        ``LongTensor[B, k]`` of token indices in ``[0, N)`` (row-major patches, see :func:`patchify`).
        ``keep_mask``: optional ``BoolTensor[B, k]`` for a variable number of kept patches per image (padded
        ``keep_idx``): tokens with ``False`` are not attended to (their own outputs are meaningless); every row
        needs at least one ``True``.
        """
        b, c, h, w = x_t.shape
        if (c, h, w) != (self.in_ch, self.img_size, self.img_size):
            raise ValueError(
                f"x_t must have shape [B, {self.in_ch}, {self.img_size}, {self.img_size}], got {tuple(x_t.shape)}"
            )
        t = torch.as_tensor(t, device=x_t.device)
        if t.dim() == 0:
            t = t.expand(b)
        if y is None:
            y = torch.full((b,), self.num_classes, dtype=torch.long, device=x_t.device)
        elif y.numel() and (int(y.min()) < 0 or int(y.max()) > self.num_classes):
            raise ValueError(
                f"y must hold labels in [0, {self.num_classes}] ({self.num_classes} = the null class), got values in "
                f"[{int(y.min())}, {int(y.max())}]"
            )
        tokens = self.embed(patchify(x_t, self.patch_size)) + self.pos
        if keep_idx is not None:
            if keep_idx.dim() != 2 or keep_idx.shape[0] != b:
                raise ValueError(f"keep_idx must have shape [B={b}, k], got {tuple(keep_idx.shape)}")
            if keep_idx.numel() and (int(keep_idx.min()) < 0 or int(keep_idx.max()) >= self.num_patches):
                raise ValueError(f"keep_idx entries must lie in [0, {self.num_patches}), got out-of-range values")
            tokens = tokens.gather(1, keep_idx[..., None].expand(-1, -1, self.width))
        attn_mask = None
        if keep_mask is not None:
            if keep_idx is None or keep_mask.shape != keep_idx.shape or keep_mask.dtype != torch.bool:
                raise ValueError("keep_mask must be a BoolTensor shaped like keep_idx (and keep_idx must be given)")
            if not bool(keep_mask.any(1).all()):
                raise ValueError("keep_mask must keep at least one token per image")
            attn_mask = keep_mask[:, None, None, :]  # [B, 1 (heads), 1 (queries), k (keys)]
        cond = self.t_mlp(timestep_embedding(t, self.width)) + self.y_emb(y)
        for blk in self.blocks:
            tokens = blk(tokens, cond, attn_mask)
        shift, scale = self.head_ada(cond).chunk(2, dim=-1)
        out = self.head(_modulate(self.norm(tokens), shift, scale))
        if keep_idx is not None:
            return out
        return unpatchify(out, self.patch_size, c, h, w)
