"""UPipe as a Hugging Face ``transformers`` attention backend.

``transformers`` lets a model call any attention function registered under a name
(``AttentionInterface``); :func:`register_hf_attention` registers UPipe's headwise-chunked all-to-all there, so

    register_hf_attention()                                   # once per process, after init_process_group
    model = AutoModelForCausalLM.from_config(LlamaConfig(...), attn_implementation="upipe")
    out = model(input_ids=shard_sequence(ids), position_ids=shard_sequence(positions), use_cache=False)

runs a ``transformers`` model with context parallelism: every rank feeds its contiguous chunk of the sequence
(:func:`~icml26.upipe.shard_sequence`) with the *global* positions of those tokens, and each attention layer
exchanges query, key and value heads stage by stage (``U`` heads at a time, as in :func:`upipe_attention`),
attends causally over the whole sequence and exchanges the outputs back.  The projections, rotary embedding,
MLPs and the LM head stay local.  What is kept for the backward pass is the layer's local (sequence-sharded)
``q, k, v``, its output and one log-sum-exp per stage; each stage's full-sequence ``q, k, v`` are exchanged
again in the backward pass (the same trade as :class:`UPipeAttention`, minus the in-function projection, which
``transformers`` does itself before it calls the backend).

The loss of a sharded batch: shift the labels on the *whole* sequence first, shard them with the inputs, sum the
token losses on each rank and all-reduce (``examples/torchrun_hf_upipe.py``); gradients are then all-reduced
like data-parallel ones.  Supported: causal self-attention without padding (pack sequences), no KV-cache
decoding (``use_cache=False``), no attention dropout in training.
"""

from __future__ import annotations

import functools
import math

import torch

from . import _kernel
from ._comm import check_local_lengths, group_size, head_to_seq, seq_to_head
from .geometry import HeadGeometry

__all__ = ["register_hf_attention", "upipe_hf_attention"]


class _StagedAttention(torch.autograd.Function):
    """Headwise-chunked context-parallel attention of sequence-sharded ``q [B, T, H, d]``, ``k, v [B, T, Hkv,
    d]`` (``T = S / C`` local tokens); returns ``[B, T, H, d]``."""

    @staticmethod
    def forward(ctx, q, k, v, geo: HeadGeometry, group, causal: bool):
        b, t, h, d = q.shape
        final = q.new_empty(b, t, h, d)
        lse_all = None
        kk = vv = None
        for s in range(geo.num_stages):
            qh = torch.tensor(geo.stage_query_heads(s), device=q.device)
            if geo.stage_starts_kv(s):
                kh = torch.tensor(geo.stage_kv_heads(s), device=q.device)
                kk, vv = seq_to_head(k.index_select(2, kh), group), seq_to_head(v.index_select(2, kh), group)
            out, lse = _kernel.attention_forward(seq_to_head(q.index_select(2, qh), group), kk, vv, causal)
            if lse_all is None:
                lse_all = lse.new_empty((geo.num_stages, *lse.shape))
            lse_all[s].copy_(lse)
            final.index_copy_(2, qh, head_to_seq(out, group))
            del out, lse
            if geo.stage_ends_kv(s):
                kk = vv = None
        ctx.save_for_backward(q, k, v, final, lse_all)
        ctx.geo, ctx.group, ctx.causal = geo, group, causal
        return final

    @staticmethod
    def backward(ctx, dfinal):
        q, k, v, final, lse_all = ctx.saved_tensors
        geo, group, causal = ctx.geo, ctx.group, ctx.causal
        dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
        kk = vv = dkk = dvv = kh = None
        for s in range(geo.num_stages):
            qh = torch.tensor(geo.stage_query_heads(s), device=q.device)
            if geo.stage_starts_kv(s):
                kh = torch.tensor(geo.stage_kv_heads(s), device=q.device)
                kk, vv = seq_to_head(k.index_select(2, kh), group), seq_to_head(v.index_select(2, kh), group)
                dkk, dvv = torch.zeros_like(kk), torch.zeros_like(vv)
            qq = seq_to_head(q.index_select(2, qh), group)
            o = seq_to_head(final.index_select(2, qh), group)
            do = seq_to_head(dfinal.index_select(2, qh).contiguous(), group)
            dq_s, dk_s, dv_s = _kernel.attention_backward(do, qq, kk, vv, o, lse_all[s], causal)
            del qq, o, do
            dq.index_add_(2, qh, head_to_seq(dq_s, group))
            dkk += dk_s
            dvv += dv_s
            del dq_s, dk_s, dv_s
            if geo.stage_ends_kv(s):  # replicated KV heads (Hkv < C) add up in index_add_
                dk.index_add_(2, kh, head_to_seq(dkk, group))
                dv.index_add_(2, kh, head_to_seq(dvv, group))
                kk = vv = dkk = dvv = None
        return dq, dk, dv, None, None, None


def upipe_hf_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    *,
    group=None,
    heads_per_stage: int | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """The ``transformers`` attention-function signature: ``query [B, H, T, d]``, ``key``/``value [B, Hkv, T,
    d]`` of this rank's ``T = S / C`` tokens (already rotated) -> ``([B, T, H, d], None)``.  ``group`` and
    ``heads_per_stage`` are bound by :func:`register_hf_attention`."""
    if attention_mask is not None:
        raise ValueError(
            "UPipe attention is causal over the whole sharded sequence and takes no attention mask: pack the "
            "sequences without padding (a 4-D or padding mask reached the upipe backend)"
        )
    if dropout and module.training:
        raise ValueError(
            f"UPipe attention has no attention dropout; set the model's attention_dropout to 0 (got {dropout})"
        )
    b, h, t, d = query.shape
    if key.dim() == 4 and key.shape[2] != t:
        raise ValueError(
            f"UPipe attention does not decode with a KV cache (queries cover {t} positions, keys {key.shape[2]}): "
            "call the model with use_cache=False, and generate with another attention implementation"
        )
    if key.shape != value.shape or key.shape[0] != b or key.shape[3] != d or h % key.shape[1]:
        raise ValueError(f"query {tuple(query.shape)} and key/value {tuple(key.shape)} do not fit [B, H(kv), T, d]")
    check_local_lengths(query.new_empty(b, t), group, name="the sharded input_ids")
    if scaling is not None and not math.isclose(scaling, d**-0.5, rel_tol=1e-6):
        query = query * (scaling * math.sqrt(d))  # the kernel scales by 1/sqrt(d)
    causal = is_causal if is_causal is not None else bool(getattr(module, "is_causal", True))
    geo = HeadGeometry.build(group_size(group), h, key.shape[1], heads_per_stage)
    out = _StagedAttention.apply(
        query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), geo, group, bool(causal)
    )
    return out, None


def _no_mask(*args, attention_mask: torch.Tensor | None = None, **kwargs) -> None:
    """The backend's mask function: causality is the attention's own (over the global sequence), so no mask is
    built; a padding mask with a zero is refused (padding is not supported)."""
    if attention_mask is not None and not bool(attention_mask.bool().all()):
        raise ValueError("UPipe attention does not support padding: pack the sequences (the attention_mask has zeros)")
    return None


def register_hf_attention(name: str = "upipe", group=None, heads_per_stage: int | None = None) -> str:
    """Register UPipe under ``name`` in ``transformers``' attention and mask interfaces (so
    ``attn_implementation=name`` selects it) over process group ``group`` (``None``: the default group) with
    ``heads_per_stage`` heads exchanged per stage (``None``: ``C``, the least memory).  Returns ``name``."""
    try:
        from transformers import AttentionInterface, AttentionMaskInterface
    except ImportError as e:  # pragma: no cover - exercised only without transformers
        raise ImportError("register_hf_attention needs transformers: pip install 'icml26[lm]'") from e
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be an identifier-like string, got {name!r}")
    if heads_per_stage is not None and (isinstance(heads_per_stage, bool) or not isinstance(heads_per_stage, int)):
        raise TypeError(f"heads_per_stage must be an int or None, got {heads_per_stage!r}")
    fn = functools.partial(upipe_hf_attention, group=group, heads_per_stage=heads_per_stage)
    functools.update_wrapper(fn, upipe_hf_attention)
    AttentionInterface.register(name, fn)
    AttentionMaskInterface.register(name, _no_mask)
    return name
