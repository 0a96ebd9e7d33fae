"""A tiny Llama-style decoder whose attention is any of the four attention modules (nanoGPT-sized, one page).

Each rank holds its contiguous chunk of the sequence; every layer other than attention is token-wise, so the
model is context-parallel exactly when its attention is.  Options for long sequences, as in the paper's
memory stack: ``checkpoint=True`` recomputes each block in the backward pass (activation checkpointing), and
``mlp_chunks > 1`` runs the MLP over sequence tiles, saving only its input (a tiled MLP).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from ._comm import group_size
from .attention import ReferenceAttention, RingAttention, UlyssesAttention, UPipeAttention

__all__ = ["LlamaConfig", "TinyLlama", "ATTENTIONS", "cp_loss", "allreduce_grads", "broadcast_parameters"]

ATTENTIONS = {
    "reference": ReferenceAttention,
    "ulysses": UlyssesAttention,
    "ring": RingAttention,
    "upipe": UPipeAttention,
}


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int = 256
    n_layers: int = 4
    dim: int = 256
    n_heads: int = 16
    n_kv_heads: int = 16
    head_dim: int = 16
    ffn_dim: int = 688
    rope_theta: float = 1e4
    norm_eps: float = 1e-6


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class _TiledMLP(torch.autograd.Function):
    """SwiGLU MLP over ``chunks`` sequence tiles; saves only its input and recomputes each tile in backward."""

    @staticmethod
    def forward(ctx, x, w1, w3, w2, chunks):
        ctx.save_for_backward(x, w1, w3, w2)
        ctx.chunks = chunks
        return torch.cat([_swiglu(xc, w1, w3, w2) for xc in x.chunk(chunks, dim=1)], dim=1)

    @staticmethod
    def backward(ctx, dy):
        x, w1, w3, w2 = ctx.saved_tensors
        dx = torch.empty_like(x)
        dws = [torch.zeros_like(w) for w in (w1, w3, w2)]
        start = 0
        for xc, dyc in zip(x.chunk(ctx.chunks, dim=1), dy.chunk(ctx.chunks, dim=1)):
            with torch.enable_grad():
                xc = xc.detach().requires_grad_(True)
                ws = [w.detach().requires_grad_(True) for w in (w1, w3, w2)]
                grads = torch.autograd.grad(_swiglu(xc, *ws), [xc, *ws], dyc)
            dx[:, start : start + xc.shape[1]] = grads[0]
            start += xc.shape[1]
            for acc, g in zip(dws, grads[1:]):
                acc += g
        return dx, *dws, None


def _swiglu(x, w1, w3, w2):
    return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)


class Block(nn.Module):
    def __init__(self, cfg: LlamaConfig, attention: str, process_group, heads_per_stage, mlp_chunks: int) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.attn = ATTENTIONS[attention](
            cfg.dim, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim, process_group, heads_per_stage, True, cfg.rope_theta
        )
        self.mlp_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.w1 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w2 = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)
        self.mlp_chunks = mlp_chunks

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), pos)
        h = self.mlp_norm(x)
        if self.mlp_chunks > 1:
            return x + _TiledMLP.apply(h, self.w1.weight, self.w3.weight, self.w2.weight, self.mlp_chunks)
        return x + _swiglu(h, self.w1.weight, self.w3.weight, self.w2.weight)


class TinyLlama(nn.Module):
    """Embedding, ``n_layers`` pre-norm blocks (RMSNorm, RoPE attention, SwiGLU MLP), final norm, LM head.

    ``forward(tokens_local [B, S/C], position_ids_local [S/C]) -> logits_local [B, S/C, vocab]``.
    """

    def __init__(
        self,
        cfg: LlamaConfig,
        attention: str = "upipe",
        process_group=None,
        heads_per_stage: int | None = None,
        checkpoint: bool = False,
        mlp_chunks: int = 1,
    ) -> None:
        super().__init__()
        if attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {sorted(ATTENTIONS)}, got {attention!r}")
        if isinstance(mlp_chunks, bool) or not isinstance(mlp_chunks, int) or mlp_chunks < 1:
            raise ValueError(f"mlp_chunks must be an int >= 1, got {mlp_chunks!r}")
        self.cfg, self.checkpoint = cfg, bool(checkpoint)
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(
            Block(cfg, attention, process_group, heads_per_stage, mlp_chunks) for _ in range(cfg.n_layers)
        )
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for blk in self.blocks:
            x = checkpoint(blk, x, pos, use_reentrant=False) if self.checkpoint else blk(x, pos)
        return self.head(self.norm(x))


def cp_loss(logits: torch.Tensor, targets: torch.Tensor, n_total: int) -> torch.Tensor:
    """This rank's share of the global mean cross-entropy: ``sum of local token losses / n_total``.

    Summing it over ranks gives the global mean; backpropagating it on every rank and summing the parameter
    gradients over the group (:func:`allreduce_grads`) gives the gradient of the global mean.
    """
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="sum") / n_total


def allreduce_grads(model: nn.Module, group=None) -> None:
    """Sum parameter gradients over the context-parallel group (parameters are replicated on its ranks)."""
    if group_size(group) == 1:
        return
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])  # one collective instead of one per parameter
    dist.all_reduce(flat, group=group)
    offset = 0
    for g in grads:
        g.copy_(flat[offset : offset + g.numel()].view_as(g))
        offset += g.numel()


@torch.no_grad()
def broadcast_parameters(model: nn.Module, group=None, src: int = 0) -> float:
    """Copy group rank ``src``'s parameters and buffers to every rank; return the largest change made here.

    Every rank seeds the same generator before building the model, so the copy should change nothing; the
    returned ``max |before - after|`` (0.0 on rank ``src``) says whether the ranks really started alike.
    """
    if group_size(group) == 1:
        return 0.0
    root = dist.get_global_rank(group, src) if group is not None else src
    change = 0.0
    for t in [*model.parameters(), *model.buffers()]:
        before = t.detach().clone()
        dist.broadcast(t.data, src=root, group=group)  # one collective per tensor: exact in every dtype
        if t.numel():
            change = max(change, float((t.detach() - before).abs().max()))
    return change
