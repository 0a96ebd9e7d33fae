"""UPipe (Untied Ulysses): headwise-chunked context parallelism on ``torch.distributed``.

Ghadia, Abraham, Vorobyov, Ryabinin, "Untied Ulysses: Memory-Efficient Context Parallelism via Headwise
Chunking", ICML 2026, arXiv 2602.21196.

The idea in three sentences.  DeepSpeed-Ulysses context parallelism all-to-alls Q, K and V for *every*
attention head at once, so each rank briefly holds several full-width ``S x H x d / C`` tensors and keeps four
of them for the backward pass.  UPipe instead walks through the heads in ``P = H / U`` stages, projecting,
exchanging and attending only ``U`` heads at a time and writing each stage's output into one preallocated
buffer; a custom autograd function saves only the input, the weights, that buffer and the log-sum-exp, and
recomputes each stage's Q/K/V in the backward pass.  Attention-intermediate memory therefore falls towards
``1 - 1/P`` of Ulysses's while the communication volume and the arithmetic stay the same.

Notation -> names:

=====================  ============================================================================
paper                  here
=====================  ============================================================================
C (CP degree)          ``cp_size``: size of ``process_group`` (:func:`shard_sequence` gives S/C tokens)
H, Hkv, d, E           ``num_heads``, ``num_kv_heads``, ``head_dim``, ``embed_dim``
U (heads per stage)    ``heads_per_stage`` (default C: one head per rank per stage)
P = H / U (pipe deg.)  ``HeadGeometry.num_stages``
GQA head pairing       :class:`HeadGeometry` (``query_head(s, r)``, ``kv_head(s, r)``)
UPipe forward/backward :func:`upipe_attention`, :class:`UPipeAttention`
transformers backend   :func:`register_hf_attention` (``attn_implementation="upipe"``), :func:`upipe_hf_attention`
DeepSpeed-Ulysses      :class:`UlyssesAttention`;  Ring attention: :class:`RingAttention`
peak memory            :class:`memory.LiveTensorBytes` (live tensor bytes, per-phase peaks) and
                       :class:`memory.AllocatorBytes` (the allocator's own events, kernel scratch included)
=====================  ============================================================================
"""

from . import memory, testing
from ._comm import SequenceLengthMismatchError, gather_sequence, shard_sequence
from ._kernel import kernel_name
from ._oom import CollectiveOOMGuard
from .attention import (
    ReferenceAttention,
    RingAttention,
    UlyssesAttention,
    UPipeAttention,
    apply_rope,
    rope_tables,
    upipe_attention,
)
from .geometry import HeadGeometry
from .hf import register_hf_attention, upipe_hf_attention
from .memory import AllocatorBytes, LiveTensorBytes, attention_bytes_formula
from .model import LlamaConfig, TinyLlama, broadcast_parameters

__all__ = [
    "UPipeAttention",
    "UlyssesAttention",
    "RingAttention",
    "ReferenceAttention",
    "upipe_attention",
    "register_hf_attention",
    "upipe_hf_attention",
    "HeadGeometry",
    "shard_sequence",
    "gather_sequence",
    "SequenceLengthMismatchError",
    "rope_tables",
    "apply_rope",
    "memory",
    "testing",
    "LiveTensorBytes",
    "AllocatorBytes",
    "attention_bytes_formula",
    "LlamaConfig",
    "TinyLlama",
    "broadcast_parameters",
    "kernel_name",
    "CollectiveOOMGuard",
]
