"""A tiny SDAR/LLaDA-style block-diffusion transformer (one page, nanoGPT style).

Attention is *block-causal*: the prompt is one bidirectional region, then the answer is cut into blocks of
``block_size`` tokens; a token sees every token of its own block and of all earlier blocks.  Finished blocks
therefore have an exact KV cache (:meth:`BlockDiffusionLM.extend`), and the current block is denoised by
repeated bidirectional passes.  Grouped-query attention (``n_kv_head`` key/value heads, query head ``h`` reads
kv head ``h // (n_head / n_kv_head)``), rotary position embeddings, pre-norm blocks, tied embeddings.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["BlockDiffusionLM", "block_causal_mask", "KVCache"]

KVCache = list[tuple[torch.Tensor, torch.Tensor]]  # per layer (k, v), each (N, n_kv_head, T, head_dim)


def block_causal_mask(prompt_len: int, total_len: int, block_size: int, device=None) -> torch.Tensor:
    """Boolean ``(total_len, total_len)`` mask, ``True`` where query ``i`` may attend key ``j``.

    Block id: 0 for positions ``< prompt_len``, else ``1 + (pos - prompt_len) // block_size``;
    ``allowed(i, j) = block(j) <= block(i)``.
    """
    pos = torch.arange(total_len, device=device)
    bid = torch.where(pos < prompt_len, 0, 1 + (pos - prompt_len) // block_size)
    return bid[None, :] <= bid[:, None]


def _rope(x: torch.Tensor, pos: torch.Tensor, base: float) -> torch.Tensor:
    """Rotate pairs of channels of ``x`` (N, heads, T, d) by angle ``pos * base^(-2i/d)``; ``pos`` is (N, T)."""
    d = x.shape[-1]
    inv = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
    ang = pos.to(torch.float32)[:, None, :, None] * inv  # (N, 1, T, d/2)
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return out.flatten(-2)


class _Layer(nn.Module):
    def __init__(self, n_embd: int, n_head: int, n_kv_head: int) -> None:
        super().__init__()
        self.n_head, self.n_kv_head, self.head_dim = n_head, n_kv_head, n_embd // n_head
        self.ln1 = nn.LayerNorm(n_embd)
        self.wq = nn.Linear(n_embd, n_head * self.head_dim, bias=False)
        self.wk = nn.Linear(n_embd, n_kv_head * self.head_dim, bias=False)
        self.wv = nn.Linear(n_embd, n_kv_head * self.head_dim, bias=False)
        self.wo = nn.Linear(n_embd, n_embd, bias=False)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))


class BlockDiffusionLM(nn.Module):
    """Block-diffusion language model.

    Parameters
    ----------
    vocab_size, n_layer, n_embd, n_head, n_kv_head:
        Sizes; ``n_embd`` must be divisible by ``n_head`` and ``n_head`` by ``n_kv_head``.
    max_len:
        The model context (prompt + generated tokens); longer inputs raise ``ValueError``.
    rope_base:
        Rotary base.
    """

    def __init__(
        self,
        vocab_size: int,
        n_layer: int = 6,
        n_embd: int = 128,
        n_head: int = 4,
        n_kv_head: int = 2,
        max_len: int = 128,
        rope_base: float = 10000.0,
    ) -> None:
        super().__init__()
        for name, v in (("vocab_size", vocab_size), ("n_layer", n_layer), ("n_embd", n_embd), ("max_len", max_len)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if n_layer < 2:
            raise ValueError(f"n_layer must be >= 2 (FOCUS reads layers 0 and 1), got {n_layer}")
        if n_head < 1 or n_embd % n_head:
            raise ValueError(f"n_head must be >= 1 and divide n_embd={n_embd}, got {n_head}")
        if n_kv_head < 1 or n_head % n_kv_head:
            raise ValueError(f"n_kv_head must be >= 1 and divide n_head={n_head}, got {n_kv_head}")
        self.vocab_size, self.n_layer, self.n_embd = vocab_size, n_layer, n_embd
        self.n_head, self.n_kv_head, self.head_dim = n_head, n_kv_head, n_embd // n_head
        self.max_len, self.rope_base = max_len, rope_base
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.layers = nn.ModuleList(_Layer(n_embd, n_head, n_kv_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    # -- pieces the decoder calls ---------------------------------------------------------------------------
    def layer_qk(self, layer: int, hidden: torch.Tensor, positions: torch.Tensor):
        """Queries, keys and values of ``layer`` for ``hidden`` (N, T, E) at ``positions`` (N, T).

        Returns ``q`` (N, n_head, T, d) and ``k``, ``v`` (N, n_kv_head, T, d); ``q`` and ``k`` are after RoPE.
        """
        L = self.layers[layer]
        x = L.ln1(hidden)
        N, T, _ = x.shape
        q = L.wq(x).view(N, T, self.n_head, self.head_dim).transpose(1, 2)
        k = L.wk(x).view(N, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        v = L.wv(x).view(N, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        return _rope(q, positions, self.rope_base), _rope(k, positions, self.rope_base), v

    def layer_out(
        self, layer: int, hidden: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """Finish ``layer``: attention of ``q`` over keys ``k``/``v`` (N, n_kv_head, S, d) where ``mask``
        (N, T, S) or (T, S) is ``True``, then the residual MLP.  Returns the new hidden (N, T, E)."""
        L = self.layers[layer]
        rep = self.n_head // self.n_kv_head
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        m = mask[:, None] if mask.dim() == 3 else mask
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        N, _, T, _ = a.shape
        hidden = hidden + L.wo(a.transpose(1, 2).reshape(N, T, self.n_embd))
        return hidden + L.mlp(L.ln2(hidden))

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.ln_f(hidden))

    # -- whole-sequence and cached passes ------------------------------------------------------------------
    def forward(
        self, input_ids: torch.Tensor, attn_mask: torch.Tensor, positions: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits (N, T, V) of ``input_ids`` (N, T) under a boolean ``attn_mask`` ((T, T) or (N, T, T)).

        Use :func:`block_causal_mask` for ordinary block-diffusion inputs; training passes its own mask.
        """
        N, T = input_ids.shape
        if positions is None:
            positions = torch.arange(T, device=input_ids.device).expand(N, T)
        if int(positions.max()) >= self.max_len:
            raise ValueError(f"input_ids reach position {int(positions.max())}, beyond max_len={self.max_len}")
        h = self.wte(input_ids)
        for i in range(self.n_layer):
            q, k, v = self.layer_qk(i, h, positions)
            h = self.layer_out(i, h, q, k, v, attn_mask)
        return self.logits(h)

    def extend(self, input_ids: torch.Tensor, kv_cache: KVCache | None) -> tuple[torch.Tensor, KVCache]:
        """Run one finished chunk (the prompt, or a completed block) on top of ``kv_cache``.

        The chunk sees the whole cache and itself bidirectionally, exactly as in :func:`block_causal_mask`.
        Returns the chunk's logits (N, T, V) and the cache extended by the chunk's keys and values.
        """
        N, T = input_ids.shape
        start = 0 if not kv_cache else kv_cache[0][0].shape[2]
        if start + T > self.max_len:
            raise ValueError(f"context would reach {start + T} tokens, beyond max_len={self.max_len}")
        pos = torch.arange(start, start + T, device=input_ids.device).expand(N, T)
        mask = torch.ones(T, start + T, dtype=torch.bool, device=input_ids.device)
        h = self.wte(input_ids)
        new: KVCache = []
        for i in range(self.n_layer):
            q, k, v = self.layer_qk(i, h, pos)
            if kv_cache:
                k, v = torch.cat((kv_cache[i][0], k), 2), torch.cat((kv_cache[i][1], v), 2)
            new.append((k, v))
            h = self.layer_out(i, h, q, k, v, mask)
        return self.logits(h), new

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.head_dim)
