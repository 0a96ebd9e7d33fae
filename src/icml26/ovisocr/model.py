"""TinyPageParser: a whole page image -> a structured token sequence that renders to Markdown (no cropping).

Token grammar (:class:`PageTokenizer`)::

    page    := element* <eos>
    element := <p> word+ </p>                      -> a text paragraph
             | <f> ftok+ </f>                      -> $$ latex $$
             | <t> (<tr> (<td> ctok*)+)+ </t>      -> <table><tr><td>..</td></tr></table>

The sequence order is the reading order, so the model decides order, table structure and content in one pass.
Model (nanoGPT-sized): a 4-stage CNN encoder on the image plus two coordinate channels (CoordConv;
stride 2 each but the last) -> a ``(H/8 * W/8, d)`` memory with a
learned 2-D position embedding, and a causal transformer decoder over tokens (``n_layer`` layers, ``n_head`` heads)
with cross-attention to the memory; ``logits = W_out h`` (tied with the token embedding).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

from .data import FORMULA_TOKENS, WORDS, elements_to_markdown, table_html

__all__ = ["PageTokenizer", "TinyPageParser"]

_SPECIAL = ("<pad>", "<bos>", "<eos>", "<p>", "</p>", "<f>", "</f>", "<t>", "<tr>", "<td>", "</t>")


class PageTokenizer:
    """Elements <-> token ids.  Vocabulary: specials, the lexicon words, digits and formula tokens."""

    def __init__(self, words: Sequence[str] = WORDS):
        syms = list(_SPECIAL) + list(words) + [t for t in FORMULA_TOKENS if t not in words]
        self.itos = syms
        self.stoi = {s: i for i, s in enumerate(syms)}
        self.pad, self.bos, self.eos = 0, 1, 2

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, elements: Sequence[dict]) -> list[int]:
        """Elements (``type`` and ``tokens`` / ``cells`` / ``content``) -> ids ending in ``<eos>``; unknown symbols are
        dropped."""
        s = self.stoi
        out: list[str] = []
        for e in elements:
            if e["type"] == "text":
                out += ["<p>", *e.get("tokens", e["content"].split()), "</p>"]
            elif e["type"] == "formula":
                out += ["<f>", *e["tokens"], "</f>"]
            else:
                out.append("<t>")
                for row in e["cells"]:
                    out.append("<tr>")
                    for c in row:
                        out += ["<td>", *list(c)]
                out.append("</t>")
        return [s[t] for t in out if t in s] + [self.eos]

    def decode_elements(self, ids: Sequence[int]) -> list[dict]:
        """Ids -> elements, tolerant of malformed sequences (an unclosed element is closed at ``<eos>``)."""
        els: list[dict] = []
        cur: dict | None = None

        def close():
            nonlocal cur
            if cur is None:
                return
            if cur["type"] == "text" and cur["tokens"]:
                cur["content"] = " ".join(cur["tokens"])
                els.append(cur)
            elif cur["type"] == "formula" and cur["tokens"]:
                cur["content"] = "".join(cur["tokens"])
                els.append(cur)
            elif cur["type"] == "table":
                rows = [r for r in cur["cells"] if r]
                if rows:
                    cur["cells"] = rows
                    cur["content"] = table_html(rows)
                    els.append(cur)
            cur = None

        for i in ids:
            t = self.itos[int(i)] if 0 <= int(i) < len(self.itos) else "<pad>"
            if t in ("<eos>", "<pad>"):
                break
            if t in ("<p>", "<f>", "<t>"):
                close()
                cur = {"type": {"<p>": "text", "<f>": "formula", "<t>": "table"}[t], "tokens": [], "cells": []}
            elif t in ("</p>", "</f>", "</t>"):
                close()
            elif t == "<bos>" or cur is None:
                continue
            elif cur["type"] == "table":
                if t == "<tr>":
                    cur["cells"].append([])
                elif t == "<td>":
                    if not cur["cells"]:
                        cur["cells"].append([])
                    cur["cells"][-1].append("")
                elif cur["cells"] and cur["cells"][-1]:
                    cur["cells"][-1][-1] += t
            else:
                cur["tokens"].append(t)
        close()
        return els

    def decode(self, ids: Sequence[int]) -> str:
        """Ids -> Markdown."""
        return elements_to_markdown(self.decode_elements(ids))

    def batch(self, seqs: Sequence[Sequence[int]], max_len: int) -> torch.Tensor:
        """Pad ``[bos] + seq`` to a ``(B, max_len + 1)`` long tensor (truncating)."""
        out = torch.full((len(seqs), max_len + 1), self.pad, dtype=torch.long)
        for b, s in enumerate(seqs):
            s = [self.bos, *s][: max_len + 1]
            out[b, : len(s)] = torch.tensor(s)
        return out


class TinyPageParser(nn.Module):
    """Image encoder + transformer decoder.  ``forward(images, tgt_tokens) -> logits`` (teacher forcing;
    ``images``: ``(B, 1, H, W)`` ink-positive floats, ``tgt_tokens``: ``(B, T)`` starting with ``<bos>``);
    ``generate(images, max_len, temperature)`` samples (``temperature=0``: greedy) and returns ``(B, <=max_len)`` ids;
    ``sequence_logprob(images, tokens)`` the summed log-probability of each sequence (for RL)."""

    def __init__(
        self,
        vocab_size: int,
        image_size: int = 128,
        d_model: int = 96,
        n_head: int = 4,
        n_layer: int = 2,
        max_len: int = 96,
        channels: tuple[int, int, int] = (16, 32, 64),
    ):
        super().__init__()
        if vocab_size < 4:
            raise ValueError(f"vocab_size must be >= 4, got {vocab_size}")
        if image_size % 8:
            raise ValueError(f"image_size must be a multiple of 8, got {image_size}")
        if d_model % n_head:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_head ({n_head})")
        c1, c2, c3 = channels
        self.encoder = nn.Sequential(
            nn.Conv2d(3, c1, 3, 2, 1),
            nn.GroupNorm(4, c1),
            nn.GELU(),
            nn.Conv2d(c1, c2, 3, 2, 1),
            nn.GroupNorm(4, c2),
            nn.GELU(),
            nn.Conv2d(c2, c3, 3, 2, 1),
            nn.GroupNorm(4, c3),
            nn.GELU(),
            nn.Conv2d(c3, d_model, 3, 1, 1),
        )
        g = image_size // 8
        self.grid = g
        self.row_emb = nn.Parameter(torch.zeros(g, 1, d_model))
        self.col_emb = nn.Parameter(torch.zeros(1, g, d_model))
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Parameter(torch.zeros(max_len + 1, d_model))
        layer = nn.TransformerDecoderLayer(
            d_model, n_head, 2 * d_model, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"
        )
        self.decoder = nn.TransformerDecoder(layer, n_layer)
        self.ln = nn.LayerNorm(d_model)
        self.max_len, self.vocab_size = max_len, vocab_size
        nn.init.normal_(self.row_emb, std=0.02)
        nn.init.normal_(self.col_emb, std=0.02)
        nn.init.normal_(self.pos_emb, std=0.02)
        nn.init.normal_(self.tok_emb.weight, std=0.02)

    def encode(self, images: torch.Tensor) -> torch.Tensor:
        if not isinstance(images, torch.Tensor) or images.ndim != 4 or images.shape[1] != 1:
            raise ValueError(f"images must be a (B, 1, H, W) tensor, got {getattr(images, 'shape', type(images))}")
        if images.shape[0] == 0:
            raise ValueError("images must hold at least one page")
        B, _, H, W = images.shape
        yy = torch.linspace(-1, 1, H, dtype=images.dtype).view(1, 1, H, 1).expand(B, 1, H, W)
        xx = torch.linspace(-1, 1, W, dtype=images.dtype).view(1, 1, 1, W).expand(B, 1, H, W)
        f = self.encoder(torch.cat([images, yy, xx], 1))  # (B, d, g, g), CoordConv input
        f = f.permute(0, 2, 3, 1) + self.row_emb + self.col_emb
        return f.flatten(1, 2)

    def _decode(self, memory: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        T = tokens.shape[1]
        x = self.tok_emb(tokens) + self.pos_emb[:T]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        h = self.decoder(x, memory, tgt_mask=mask)
        return self.ln(h) @ self.tok_emb.weight.T

    def forward(self, images: torch.Tensor, tgt_tokens: torch.Tensor) -> torch.Tensor:
        return self._decode(self.encode(images), tgt_tokens)

    def loss(self, images: torch.Tensor, tokens: torch.Tensor, pad: int = 0) -> torch.Tensor:
        """Teacher-forced cross-entropy ``-mean_t log p(y_t | y_<t, image)`` over non-pad targets."""
        logits = self(images, tokens[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1), ignore_index=pad)

    @torch.no_grad()
    def generate(
        self,
        images: torch.Tensor,
        max_len: int | None = None,
        temperature: float = 0.0,
        generator: torch.Generator | None = None,
        bos: int = 1,
        eos: int = 2,
    ) -> torch.Tensor:
        """Autoregressive decoding; returns generated ids (without ``<bos>``), ``eos``-padded after the first
        ``eos``."""
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        max_len = min(max_len or self.max_len, self.max_len)
        mem = self.encode(images)
        B = images.shape[0]
        seq = torch.full((B, 1), bos, dtype=torch.long)
        done = torch.zeros(B, dtype=torch.bool)
        for _ in range(max_len):
            logits = self._decode(mem, seq)[:, -1]
            if temperature == 0:
                nxt = logits.argmax(-1)
            else:
                probs = torch.softmax(logits / temperature, -1)
                nxt = torch.multinomial(probs, 1, generator=generator).squeeze(1)
            nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
            seq = torch.cat([seq, nxt[:, None]], 1)
            done |= nxt == eos
            if bool(done.all()):
                break
        return seq[:, 1:]

    def sequence_logprob(
        self, images: torch.Tensor, tokens: torch.Tensor, bos: int = 1, eos: int = 2, memory: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-token log-probabilities ``(B, T)`` of ``tokens`` (generated ids) and the mask of tokens up to and
        including the first ``eos``."""
        mem = self.encode(images) if memory is None else memory
        inp = torch.cat([torch.full((tokens.shape[0], 1), bos, dtype=torch.long), tokens[:, :-1]], 1)
        logp = torch.log_softmax(self._decode(mem, inp), -1).gather(-1, tokens[..., None]).squeeze(-1)
        is_eos = (tokens == eos).long()
        mask = (torch.cumsum(is_eos, 1) - is_eos) == 0
        return logp, mask.float()
