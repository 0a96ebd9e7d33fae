"""FaPS on a ``diffusers`` DiT: a token-dropping adapter for ``diffusers.DiTTransformer2DModel``.

:class:`FaPSTrainer` talks to its denoiser through one small protocol (the one :class:`TinyDiT` implements):
``denoiser(x_t, t, y)`` predicts the noise of whole images ``[B, C, H, W]`` and
``denoiser(x_t, t, y, keep_idx, keep_mask=None)`` predicts it for the kept patch tokens only, ``[B, k, C p p]``
(row-major patches flattened channel-first, see :func:`~icml26.faps.patchify`), with ``patch_size`` as an
attribute.  :class:`DiffusersDiT` gives a ``diffusers`` DiT that protocol without copying it: the full call is the
model's own ``forward``; the token-dropping call runs the model's own modules on fewer tokens -- its patch
embedding (with its fixed 2-D sin-cos positions, so a kept token keeps its place), a gather of the kept tokens,
its transformer blocks (``keep_mask`` becomes their additive attention mask), its adaLN-Zero output head -- and
reads the head's ``(p, p, C_out)`` token layout back into ``(C, p, p)``.  With every token kept the result equals
the plain forward (tested).  A DiT that learns its variance (``out_channels = 2 C``) is trained on its noise
half, as FaPS's loss is the noise MSE.

    from diffusers import DiTTransformer2DModel
    dit = DiTTransformer2DModel(in_channels=4, sample_size=16, patch_size=2, num_layers=4,
                                num_attention_heads=4, attention_head_dim=24, num_embeds_ada_norm=10)
    trainer = FaPSTrainer(DiffusersDiT(dit), DDIMScheduler(1000), FrequencyGate(2, keep_ratio=0.5), total_steps=...)

Built from a config (random weights), nothing is downloaded.  Needs the ``[diffusers]`` extra.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

__all__ = ["DiffusersDiT"]


class DiffusersDiT(nn.Module):
    """Wrap a ``diffusers.DiTTransformer2DModel`` (``norm_type="ada_norm_zero"``) for :class:`FaPSTrainer`.

    ``y=None`` uses the null class (index ``num_embeds_ada_norm``; the DiT must have been built with a class
    dropout, as ``diffusers``' DiT is by default).  The wrapped model stays reachable as ``.transformer`` (save it
    with its own ``save_pretrained``).
    """

    def __init__(self, transformer: nn.Module) -> None:
        super().__init__()
        needed = ("pos_embed", "transformer_blocks", "norm_out", "proj_out_1", "proj_out_2", "config")
        missing = [a for a in needed if not hasattr(transformer, a)]
        if missing:
            raise TypeError(
                f"transformer must be a diffusers DiTTransformer2DModel (missing {', '.join(missing)}); got "
                f"{type(transformer).__name__}"
            )
        cfg = transformer.config
        if getattr(cfg, "norm_type", "ada_norm_zero") != "ada_norm_zero":
            raise ValueError(f"only the adaLN-Zero DiT is supported, got norm_type={cfg.norm_type!r}")
        self.transformer = transformer
        self.patch_size = int(cfg.patch_size)
        self.in_ch = int(cfg.in_channels)
        self.out_ch = int(cfg.out_channels or cfg.in_channels)
        self.img_size = int(cfg.sample_size)
        self.num_classes = int(cfg.num_embeds_ada_norm)
        self.num_patches = (self.img_size // self.patch_size) ** 2

    def _labels(self, y: Tensor | None, b: int, device) -> Tensor:
        if y is None:
            return torch.full((b,), self.num_classes, dtype=torch.long, device=device)
        if y.numel() and (int(y.min()) < 0 or int(y.max()) > self.num_classes):
            raise ValueError(f"y must hold labels in [0, {self.num_classes}] (the last is the null class)")
        return y

    def forward(
        self,
        x_t: Tensor,
        t: Tensor,
        y: Tensor | None = None,
        keep_idx: Tensor | None = None,
        keep_mask: Tensor | None = None,
    ) -> Tensor:
        """The noise prediction: images ``[B, C, H, W]`` if ``keep_idx`` is None, else kept tokens ``[B, k, C p
        p]`` (``keep_idx``, ``keep_mask`` as in :meth:`TinyDiT.forward`)."""
        b, c, h, w = x_t.shape
        if (c, h, w) != (self.in_ch, self.img_size, self.img_size):
            raise ValueError(
                f"x_t must have shape [B, {self.in_ch}, {self.img_size}, {self.img_size}], got {tuple(x_t.shape)}"
            )
        tr = self.transformer
        t = torch.as_tensor(t, device=x_t.device)
        t = t.expand(b) if t.dim() == 0 else t
        y = self._labels(y, b, x_t.device)
        if keep_idx is None:
            if keep_mask is not None:
                raise ValueError("keep_mask needs keep_idx")
            return tr(x_t, timestep=t, class_labels=y).sample[:, :c]
        if keep_idx.dim() != 2 or keep_idx.shape[0] != b:
            raise ValueError(f"keep_idx must have shape [B={b}, k], got {tuple(keep_idx.shape)}")
        if keep_idx.numel() and (int(keep_idx.min()) < 0 or int(keep_idx.max()) >= self.num_patches):
            raise ValueError(f"keep_idx entries must lie in [0, {self.num_patches}), got out-of-range values")
        tokens = tr.pos_embed(x_t)  # [B, N, D]: the patch embedding plus its fixed positions
        tokens = tokens.gather(1, keep_idx[..., None].expand(-1, -1, tokens.shape[-1]))
        bias = None
        if keep_mask is not None:
            if keep_mask.shape != keep_idx.shape or keep_mask.dtype != torch.bool:
                raise ValueError("keep_mask must be a BoolTensor shaped like keep_idx")
            if not bool(keep_mask.any(1).all()):
                raise ValueError("keep_mask must keep at least one token per image")
            bias = ((~keep_mask).to(tokens.dtype) * -10000.0)[:, None, :]  # diffusers' additive key mask [B, 1, k]
        for block in tr.transformer_blocks:
            tokens = block(tokens, attention_mask=bias, timestep=t, class_labels=y)
        cond = tr.transformer_blocks[0].norm1.emb(t, y, hidden_dtype=tokens.dtype)
        shift, scale = tr.proj_out_1(F.silu(cond)).chunk(2, dim=1)
        out = tr.proj_out_2(tr.norm_out(tokens) * (1 + scale[:, None]) + shift[:, None])  # [B, k, p p C_out]
        p = self.patch_size
        out = out.reshape(b, -1, p, p, self.out_ch)[..., :c]  # the noise half of a variance-learning DiT
        return out.permute(0, 1, 4, 2, 3).reshape(b, -1, c * p * p)  # (p, q, C) -> (C, p, q)
