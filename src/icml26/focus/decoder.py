"""Batched block-diffusion decoding: full recompute, neighbour-aware delayed cache, and FOCUS eviction.

One step on the current block of every unfinished sequence:

1. processing set = the block's uncached positions (all positions without the delayed cache);
2. layers 0 and 1 run on the processing set; with FOCUS, importance ``dI = I^(1) - I^(0)`` over the masked
   tokens picks the kept set (:func:`focus_budget`, :func:`focus_select`); unmasked tokens are always kept;
3. layers 2..L-1 and the LM head run on the kept tokens only; their attention sees the prefix cache and the
   block positions that already have deep keys/values (``<= block_progress``);
4. threshold decoding on the kept masked tokens: unmask every one with confidence ``> threshold``; if fewer
   than ``tokens_per_step`` (default 1: the floor rule) pass, unmask the ``tokens_per_step`` most confident
   (``threshold = 1`` with ``tokens_per_step = k`` is LLaDA's low-confidence remasking, k tokens per step);
5. :func:`mark_cached` freezes decoded tokens whose right neighbour is decoded too.

A finished block is re-run once, clean, on top of the prefix cache (:meth:`BlockDiffusionLM.extend`), so the
prefix cache is exact.  Sequences of a batch move block by block together (static batching).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from .focus import (
    _check_alpha,
    _top,
    apply_rules,
    focus_budget,
    importance_batched,
    mark_cached,
    nearest_decoded_distance,
)
from .focus import threshold_count as _threshold_count
from .model import BlockDiffusionLM

__all__ = ["DllmConfig", "DecodeStats", "BlockDiffusionDecoder", "EVICTIONS"]

EVICTIONS = ("focus", "random", "bottom", "single_layer", "no_rules", "rightmost", "nearest_decoded")


@dataclass(frozen=True)
class DllmConfig:
    """Decoding settings (names follow SGLang's DLLM config).

    block_size: tokens per block ``B``; must divide ``max_new_tokens``.
    threshold: confidence ``tau`` in (0, 1]; tokens with ``max softmax > tau`` are unmasked.
    tokens_per_step: ``k >= 1``; when fewer than ``k`` tokens pass ``tau``, the ``k`` most confident masked
        tokens with logits this step are unmasked instead (ties: leftmost first).  ``k = 1`` is the floor rule
        (the single most confident token); ``threshold = 1.0`` (nothing passes) with ``k`` gives LLaDA-style
        low-confidence remasking with exactly ``k`` tokens per step.
    mask_id: the [MASK] token id.
    enable_delayed_cache: neighbour-aware in-block KV cache (off: recompute the whole block every step).
    enable_focus: evict tokens after layer 1.
    focus_alpha: budget multiplier ``alpha > 0`` (``math.inf``: keep every masked token).
    eviction: ``"focus"`` (top ``dI`` + rules), or an ablation at the same kept count: ``"random"``,
        ``"bottom"`` (lowest ``dI``), ``"single_layer"`` (top ``I^(1)``), ``"no_rules"`` (top ``dI``, no
        structural rules), and the position rules ``"rightmost"`` (rightmost masked first) and
        ``"nearest_decoded"`` (masked tokens closest to a decoded one or to the prefix first, see
        :func:`nearest_decoded_distance`), both with the structural rules.
    fixed_budget: if set, force ``K`` to this value (no ``alpha`` rule, no mean+std override).
    suppress_ids: token ids never predicted (the mask id is always suppressed).
    seed: seeds the random eviction ablation.
    """

    block_size: int = 32
    threshold: float = 0.9
    tokens_per_step: int = 1
    mask_id: int = 1
    enable_delayed_cache: bool = True
    enable_focus: bool = False
    focus_alpha: float = 1.5
    eviction: str = "focus"
    fixed_budget: int | None = None
    suppress_ids: tuple[int, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.block_size, bool) or not isinstance(self.block_size, int) or self.block_size < 1:
            raise ValueError(f"block_size must be an integer >= 1, got {self.block_size!r}")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must lie in (0, 1], got {self.threshold!r}")
        if (
            isinstance(self.tokens_per_step, bool)
            or not isinstance(self.tokens_per_step, int)
            or self.tokens_per_step < 1
        ):
            raise ValueError(f"tokens_per_step must be an integer >= 1, got {self.tokens_per_step!r}")
        _check_alpha(self.focus_alpha)
        if self.eviction not in EVICTIONS:
            raise ValueError(f"eviction must be one of {EVICTIONS}, got {self.eviction!r}")
        if self.fixed_budget is not None and (not isinstance(self.fixed_budget, int) or self.fixed_budget < 1):
            raise ValueError(f"fixed_budget must be None or an integer >= 1, got {self.fixed_budget!r}")


@dataclass
class DecodeStats:
    """Per-sequence counters of one :meth:`BlockDiffusionDecoder.generate` call (lists indexed by sequence).

    steps: decoding steps the sequence took (its blocks' steps summed).
    decoded_per_step: tokens unmasked at each of its steps.
    processed_per_step: tokens run through layers 0-1 at each step; kept_per_step: through layers 2..L-1.
    processed_token_layers: sum over steps of ``2 * processed + (L - 2) * kept`` (decode steps only).
    commit_token_layers: token-layers of the clean re-run of finished blocks (the same for every decoder).
    records: with ``record=True``, per step and masked processed token: ``I0``, ``I1``, ``pos`` (block
        position), ``dist`` (:func:`nearest_decoded_distance`), ``decoded`` (1 if unmasked this step),
        ``seq``; without FOCUS also ``I_layers`` (the importance at every layer, one list per token).
    """

    steps: list[int]
    decoded_per_step: list[list[int]]
    processed_per_step: list[list[int]]
    kept_per_step: list[list[int]]
    processed_token_layers: list[int]
    commit_token_layers: int = 0
    records: dict[str, list] = field(default_factory=dict)


class BlockDiffusionDecoder:
    """Greedy block-diffusion decoder for a :class:`BlockDiffusionLM` (``generate`` mirrors HF's).

    >>> dec = BlockDiffusionDecoder(model, DllmConfig(block_size=16, mask_id=1, enable_focus=True))
    >>> tokens, stats = dec.generate(prompt_ids, max_new_tokens=32)   # prompt_ids (P,) or (N, P)
    """

    def __init__(self, model: BlockDiffusionLM, config: DllmConfig) -> None:
        if not isinstance(model, BlockDiffusionLM):
            raise TypeError(f"model must be a BlockDiffusionLM, got {type(model).__name__}")
        if not isinstance(config, DllmConfig):
            raise TypeError(f"config must be a DllmConfig, got {type(config).__name__}")
        if not 0 <= config.mask_id < model.vocab_size:
            raise ValueError(f"config.mask_id must lie in [0, {model.vocab_size}), got {config.mask_id}")
        self.model, self.config = model, config

    @torch.no_grad()
    def generate(
        self, prompt_ids: torch.Tensor, max_new_tokens: int, record: bool = False
    ) -> tuple[torch.Tensor, DecodeStats]:
        """Decode ``max_new_tokens`` tokens after ``prompt_ids`` ((P,) or (N, P); a batch shares one prompt
        length: left-pad with a token the model was trained with).  Returns ``(tokens (N, max_new_tokens),
        stats)`` (tokens is 1-d for a 1-d prompt)."""
        cfg, model = self.config, self.model
        prompt_ids = torch.as_tensor(prompt_ids)
        squeeze = prompt_ids.dim() == 1
        if squeeze:
            prompt_ids = prompt_ids[None]
        if prompt_ids.dim() != 2 or prompt_ids.shape[1] < 1 or prompt_ids.shape[0] < 1:
            raise ValueError(f"prompt_ids must be (P,) or (N, P) with N, P >= 1, got {tuple(prompt_ids.shape)}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be an integer >= 1, got {max_new_tokens!r}")
        if max_new_tokens % cfg.block_size:
            raise ValueError(
                f"block_size ({cfg.block_size}) must divide max_new_tokens ({max_new_tokens}); pick a multiple"
            )
        N, P = prompt_ids.shape
        if P + max_new_tokens > model.max_len:
            raise ValueError(
                f"prompt length {P} + max_new_tokens {max_new_tokens} exceeds the model context max_len={model.max_len}"
            )
        dev = model.wte.weight.device
        prompt_ids = prompt_ids.to(dev)
        self._rng = np.random.default_rng(cfg.seed)
        stats = DecodeStats([0] * N, [[] for _ in range(N)], [[] for _ in range(N)], [[] for _ in range(N)], [0] * N)
        if record:
            stats.records = {k: [] for k in ("I0", "I1", "pos", "dist", "decoded", "seq", "I_layers")}
        _, cache = model.extend(prompt_ids, None)
        out = []
        for _ in range(max_new_tokens // cfg.block_size):
            block = self._decode_block(cache, P + len(out) * cfg.block_size, N, stats, record)
            _, cache = model.extend(block, cache)
            stats.commit_token_layers += N * cfg.block_size * model.n_layer
            out.append(block)
        tokens = torch.cat(out, 1)
        return (tokens[0] if squeeze else tokens), stats

    # -- one block ---------------------------------------------------------------------------------------------
    def _decode_block(self, cache, start: int, N: int, stats: DecodeStats, record: bool) -> torch.Tensor:
        cfg, model = self.config, self.model
        B, L, dev = cfg.block_size, model.n_layer, cache[0][0].device
        x = torch.full((N, B), cfg.mask_id, dtype=torch.long, device=dev)
        uncached = torch.ones(N, B, dtype=torch.bool, device=dev)
        progress = torch.full((N,), -1, dtype=torch.long)  # rightmost block position run past layer 1
        decoded_in_block, steps_in_block = np.zeros(N), np.zeros(N)
        shape = (N, model.n_kv_head, B + 1, model.head_dim)  # slot B is a trash slot for padding rows
        kb = [torch.zeros(shape, device=dev) for _ in range(L)]
        vb = [torch.zeros(shape, device=dev) for _ in range(L)]
        arange_b = torch.arange(B, device=dev)
        while True:
            act = (x == cfg.mask_id).any(1).nonzero().flatten()
            if act.numel() == 0:
                return x
            a_list = act.tolist()
            xa, ua = x[act], uncached[act]
            idx, valid = _pad_rows([arange_b[ua[i]] for i in range(len(a_list))], B)  # (A, T) block positions
            pre = [(cache[l][0][act], cache[l][1][act]) for l in range(L)]
            kba, vba = [t[act] for t in kb], [t[act] for t in vb]
            tok = torch.where(valid, xa.gather(1, idx.clamp(max=B - 1)), cfg.mask_id)
            h = model.wte(tok)
            pos = start + idx
            full_mask = _key_mask(valid, start, torch.full((len(a_list),), B - 1), B)
            qk = []
            n_early = 2 if cfg.enable_focus else L
            for l in range(n_early):
                q, k, v = model.layer_qk(l, h, pos)
                qk.append((q, k))
                kba[l], vba[l] = _scatter(kba[l], idx, k), _scatter(vba[l], idx, v)
                h = model.layer_out(
                    l,
                    h,
                    q,
                    torch.cat((pre[l][0], kba[l][:, :, :B]), 2),
                    torch.cat((pre[l][1], vba[l][:, :, :B]), 2),
                    full_mask,
                )
            n_proc = valid.sum(1)
            if cfg.enable_focus or record:
                is_m = valid & (tok == cfg.mask_id)
                order = torch.sort((~is_m).to(torch.int8), dim=1, stable=True).indices  # masked rows first
                n_m = is_m.sum(1)
                mmax = max(1, int(n_m.max()))
                order = order[:, :mmax]
                valid_m = torch.arange(mmax, device=dev)[None, :] < n_m[:, None]
                imp = []
                for q, k in qk if (record and not cfg.enable_focus) else qk[:2]:
                    o = order[:, None, :, None]
                    qc = q.gather(2, o.expand(-1, q.shape[1], -1, q.shape[3]))
                    kc = k.gather(2, o.expand(-1, k.shape[1], -1, k.shape[3]))
                    imp.append(importance_batched(qc, kc, valid_m, model.scale).cpu().numpy())
                m_pos = idx.gather(1, order).cpu().numpy()
                n_m_list = n_m.tolist()
            if record:
                for r, s in enumerate(a_list):
                    c = n_m_list[r]
                    self._record(stats, s, imp[0][r, :c], imp[1][r, :c], m_pos[r, :c], B)
                    if len(imp) > 2:  # without eviction every layer ran on the processing set
                        stats.records["I_layers"] += np.stack([i[r, :c] for i in imp], 1).tolist()
            if cfg.enable_focus:
                kept_rows = []
                for r, s in enumerate(a_list):
                    c = n_m_list[r]
                    avg = decoded_in_block[s] / steps_in_block[s] if steps_in_block[s] else 1.0
                    keep_pos = self._select(imp[0][r, :c], imp[1][r, :c], m_pos[r, :c], avg, int(progress[s]))
                    keep = np.zeros(B + 1, dtype=bool)
                    keep[keep_pos] = True
                    row_pos = idx[r].cpu().numpy()
                    rows = np.flatnonzero(
                        valid[r].cpu().numpy() & ((tok[r] != cfg.mask_id).cpu().numpy() | keep[row_pos])
                    )
                    kept_rows.append(torch.from_numpy(rows).to(dev))
                    if keep_pos.size:
                        progress[s] = max(int(progress[s]), int(keep_pos.max()))
                krow, kvalid = _pad_rows(kept_rows, 0)
                h = h.gather(1, krow[..., None].expand(-1, -1, h.shape[-1]))
                idx = torch.where(kvalid, idx.gather(1, krow), B)
                valid, pos = kvalid, start + idx
                deep_mask = _key_mask(valid, start, progress[act.cpu()], B)
                for l in range(2, L):
                    q, k, v = model.layer_qk(l, h, pos)
                    kba[l], vba[l] = _scatter(kba[l], idx, k), _scatter(vba[l], idx, v)
                    h = model.layer_out(
                        l,
                        h,
                        q,
                        torch.cat((pre[l][0], kba[l][:, :, :B]), 2),
                        torch.cat((pre[l][1], vba[l][:, :, :B]), 2),
                        deep_mask,
                    )
            for l in range(L):
                kb[l][act], vb[l][act] = kba[l], vba[l]
            # threshold decoding on kept masked tokens
            logits = model.logits(h).float()
            logits[..., cfg.mask_id] = -math.inf
            for t in cfg.suppress_ids:
                logits[..., t] = -math.inf
            prob = logits.softmax(-1)
            conf, pred = prob.max(-1)
            is_m = valid & (xa.gather(1, idx.clamp(max=B - 1)) == cfg.mask_id)
            conf = torch.where(is_m, conf, -1.0)
            unmask = conf > cfg.threshold
            kk = min(cfg.tokens_per_step, conf.shape[1])
            top = torch.sort(conf, dim=1, descending=True, stable=True).indices[:, :kk]  # ties: leftmost first
            top_m = torch.zeros_like(unmask).scatter_(1, top, True) & (conf >= 0)  # masked tokens only
            short = unmask.sum(1) < cfg.tokens_per_step
            unmask |= top_m & short[:, None]
            x_before = xa.clone()
            new_x = xa.clone()
            rr, cc = unmask.nonzero(as_tuple=True)
            new_x[rr, idx[rr, cc]] = pred[rr, cc]
            x[act] = new_x
            if cfg.enable_delayed_cache:
                uncached[act] = mark_cached(ua, x_before, cfg.mask_id)
            n_dec, n_kept = unmask.sum(1), valid.sum(1)
            for r, s in enumerate(a_list):
                d, pr, kp = int(n_dec[r]), int(n_proc[r]), int(n_kept[r])
                stats.steps[s] += 1
                stats.decoded_per_step[s].append(d)
                stats.processed_per_step[s].append(pr)
                stats.kept_per_step[s].append(kp)
                stats.processed_token_layers[s] += n_early * pr + (L - n_early) * kp
                decoded_in_block[s] += d
                steps_in_block[s] += 1
            if record:
                recs = stats.records
                dec_pos = {s: set(idx[r, unmask[r]].tolist()) for r, s in enumerate(a_list)}
                for j in range(len(recs["decoded"]), len(recs["pos"])):
                    recs["decoded"].append(int(recs["pos"][j] in dec_pos[recs["seq"][j]]))

    def _select(self, i0: np.ndarray, i1: np.ndarray, masked_pos: np.ndarray, avg: float, progress: int):
        """Kept masked block positions (numpy) for one sequence: FOCUS or an equal-count ablation."""
        cfg = self.config
        m = masked_pos.size
        if m == 0:
            return masked_pos
        delta = i1 - i0
        if cfg.fixed_budget is not None:
            n = min(cfg.fixed_budget, m)
        else:
            n = _threshold_count(delta, focus_budget(m, avg, cfg.focus_alpha))
        if cfg.eviction == "random":
            score = self._rng.random(m)
        elif cfg.eviction == "rightmost":
            score = masked_pos.astype(np.float64)
        elif cfg.eviction == "nearest_decoded":
            score = -nearest_decoded_distance(masked_pos, cfg.block_size).astype(np.float64)
        else:
            score = {"focus": delta, "no_rules": delta, "bottom": -delta, "single_layer": i1}[cfg.eviction]
        kept = np.zeros(m, dtype=bool)
        kept[_top(score, n)] = True
        if cfg.eviction != "no_rules":
            kept = apply_rules(kept, masked_pos, progress)
        return masked_pos[kept]

    @staticmethod
    def _record(stats: DecodeStats, s: int, i0, i1, pos, block_size: int) -> None:
        recs = stats.records
        recs["I0"] += np.asarray(i0).tolist()
        recs["I1"] += np.asarray(i1).tolist()
        recs["pos"] += np.asarray(pos).tolist()
        recs["dist"] += nearest_decoded_distance(pos, block_size).tolist()
        recs["seq"] += [s] * len(pos)


def _pad_rows(rows: list[torch.Tensor], fill: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack 1-d index tensors into (A, T) padded with ``fill``, plus a validity mask."""
    T = max(1, max(int(r.numel()) for r in rows))
    out = torch.full((len(rows), T), fill, dtype=torch.long, device=rows[0].device)
    valid = torch.zeros(len(rows), T, dtype=torch.bool, device=rows[0].device)
    for i, r in enumerate(rows):
        out[i, : r.numel()] = r
        valid[i, : r.numel()] = True
    return out, valid


def _scatter(buf: torch.Tensor, idx: torch.Tensor, val: torch.Tensor) -> torch.Tensor:
    """Write ``val`` (A, Hkv, T, d) into ``buf`` (A, Hkv, B+1, d) at block slots ``idx`` (A, T)."""
    return buf.scatter(2, idx[:, None, :, None].expand_as(val), val)


def _key_mask(valid: torch.Tensor, start: int, limit: torch.Tensor, B: int) -> torch.Tensor:
    """(A, T, start + B) mask: every prefix key, block keys ``<= limit`` per row; padding rows see the prefix
    only (their output is discarded)."""
    A, T = valid.shape
    dev = valid.device
    blk = torch.arange(B, device=dev)[None, :] <= limit.to(dev)[:, None]  # (A, B)
    m = torch.cat((torch.ones(A, start, dtype=torch.bool, device=dev), blk), 1)[:, None, :].expand(A, T, start + B)
    return m.clone()
