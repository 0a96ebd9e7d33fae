"""A tiny decoder-only transformer (nanoGPT style) and a small training loop, shared by the LM papers.

The whole model fits on one page: token + position embeddings, ``n_layer`` pre-LayerNorm blocks of causal
self-attention and an MLP, a final LayerNorm and a language-model head tied to the token embedding.
``forward(idx)`` returns logits of shape ``[B, T, vocab_size]``; ``generate`` decodes greedily.

The blocks live in ``model.blocks`` (an ``nn.ModuleList``), so forward hooks on ``model.blocks[j]`` see the
hidden state after layer ``j`` (shape ``[B, T, n_embd]``), the same place Hugging Face models expose theirs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["TinyLMConfig", "TinyLM", "train_lm", "length_bucketed_batches"]


@dataclass(frozen=True)
class TinyLMConfig:
    """Size of a :class:`TinyLM`.  ``block_size`` is the longest sequence (prompt + generation) it accepts."""

    vocab_size: int
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 48
    dropout: float = 0.0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_layer", "n_head", "n_embd", "block_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.n_embd % self.n_head != 0:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must lie in [0, 1), got {self.dropout}")


class CausalSelfAttention(nn.Module):
    """Multi-head attention where position ``t`` attends to positions ``<= t``."""

    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.dropout = cfg.dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (z.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for z in (q, k, v))
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    """``x + attn(ln(x))`` then ``x + mlp(ln(x))``, with a 4x GELU MLP."""

    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.n_embd, 4 * cfg.n_embd),
            nn.GELU(),
            nn.Linear(4 * cfg.n_embd, cfg.n_embd),
            nn.Dropout(cfg.dropout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    """Decoder-only transformer language model; see the module docstring."""

    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        if not isinstance(cfg, TinyLMConfig):
            raise TypeError(f"cfg must be a TinyLMConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.pos_emb = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight  # weight tying
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2 scaled init of the residual projections
            if name.endswith("proj.weight") or name.endswith("mlp.2.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, T, vocab_size]`` for token ids ``idx`` of shape ``[B, T]`` (``T <= block_size``)."""
        if idx.dim() != 2:
            raise ValueError(f"idx must have shape [batch, time], got {tuple(idx.shape)}")
        T = idx.shape[1]
        if T > self.cfg.block_size:
            raise ValueError(f"sequence length {T} exceeds block_size {self.cfg.block_size}")
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, eos_id: int | None = None) -> torch.Tensor:
        """Greedy decoding: append ``argmax`` of the next-token logits ``max_new_tokens`` times.

        Rows that have produced ``eos_id`` keep producing ``eos_id`` (so the output stays rectangular), and
        decoding stops early once every row has.  Returns ``[B, T + new]`` token ids (prompt included).
        """
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
        if idx.shape[1] + max_new_tokens > self.cfg.block_size:
            raise ValueError(
                f"prompt length {idx.shape[1]} + max_new_tokens {max_new_tokens} exceeds block_size "
                f"{self.cfg.block_size}"
            )
        was_training = self.training
        self.eval()
        done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
        for _ in range(max_new_tokens):
            nxt = self(idx)[:, -1, :].argmax(dim=-1)
            if eos_id is not None:
                nxt = torch.where(done, torch.full_like(nxt, eos_id), nxt)
                done |= nxt == eos_id
            idx = torch.cat([idx, nxt[:, None]], dim=1)
            if eos_id is not None and bool(done.all()):
                break
        self.train(was_training)
        return idx


def train_lm(
    model: nn.Module,
    token_batches: torch.Tensor | Iterable[torch.Tensor],
    steps: int,
    lr: float = 3e-3,
    seed: int = 0,
    progress: Callable[[int, float], None] | None = None,
    *,
    batch_size: int = 64,
    pad_id: int | None = None,
    weight_decay: float = 0.01,
    warmup: int = 50,
) -> list[float]:
    """Train ``model`` on next-token prediction with AdamW and a warmup + cosine learning-rate schedule.

    Parameters
    ----------
    token_batches:
        Either a LongTensor ``[N, T]`` of right-padded sequences, from which minibatches of ``batch_size``
        rows are drawn uniformly with a ``torch.Generator`` seeded by ``seed``; or an iterable of ``[B, T]``
        LongTensors used in order (cycled if shorter than ``steps``).
    steps: number of optimiser steps.
    lr: peak learning rate.
    progress: optional ``progress(step, loss)`` callback, called every step.
    pad_id: targets equal to ``pad_id`` are left out of the loss (``None``: every target counts).

    Loss: mean over non-pad targets of ``-log softmax(logits[:, t])[idx[:, t + 1]]``.  Returns the loss per step.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    gen = torch.Generator().manual_seed(int(seed))
    torch.manual_seed(int(seed))
    if isinstance(token_batches, torch.Tensor):
        data = token_batches
        if data.dim() != 2 or data.shape[0] < 1 or data.shape[1] < 2:
            raise ValueError(f"token_batches must have shape [N >= 1, T >= 2], got {tuple(data.shape)}")

        def batches():
            while True:
                yield data[torch.randint(0, data.shape[0], (batch_size,), generator=gen)]

        stream = batches()
    else:
        stored = list(token_batches)
        if not stored:
            raise ValueError("token_batches must not be empty")
        stream = (stored[i % len(stored)] for i in range(steps))
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr=lr
    )

    def lr_at(step: int) -> float:
        if step < warmup:
            return lr * (step + 1) / warmup
        frac = (step - warmup) / max(1, steps - warmup)
        return lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac)))

    model.train()
    losses = []
    for step in range(steps):
        batch = next(stream)
        x, y = batch[:, :-1], batch[:, 1:]
        logits = model(x)
        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100 if pad_id is None else pad_id
        )
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress(step, losses[-1])
    model.eval()
    return losses


def length_bucketed_batches(
    sequences: Sequence[Sequence[int]], batch_size: int, n_batches: int, pad_id: int, seed: int = 0
) -> list[torch.Tensor]:
    """``n_batches`` right-padded LongTensor batches for :func:`train_lm`, each of sequences of similar length.

    Each pass over the data sorts a fresh random permutation by length, cuts it into batches of ``batch_size``
    and shuffles the batches: every sequence is used once per pass, and little compute goes to padding.
    """
    if not sequences:
        raise ValueError("sequences must not be empty")
    if batch_size < 1 or n_batches < 1:
        raise ValueError(f"batch_size and n_batches must be >= 1, got {batch_size} and {n_batches}")
    rng = torch.Generator().manual_seed(int(seed))
    lengths = torch.tensor([len(s) for s in sequences])
    out: list[torch.Tensor] = []
    while len(out) < n_batches:
        perm = torch.randperm(len(sequences), generator=rng)
        order = perm[torch.argsort(lengths[perm], stable=True)].tolist()
        chunks = [order[j : j + batch_size] for j in range(0, len(order), batch_size)]
        for c in torch.randperm(len(chunks), generator=rng).tolist():
            rows = [sequences[i] for i in chunks[c]]
            batch = torch.full((len(rows), max(len(r) for r in rows)), pad_id, dtype=torch.long)
            for r, seq in enumerate(rows):
                batch[r, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
            out.append(batch)
    return out[:n_batches]
