"""FOCUS: evict non-decodable tokens from block-diffusion LLM decoding (Liang et al., ICML 2026).

A block-diffusion LM denoises a block of [MASK] tokens in parallel, but only a few of them pass the
confidence threshold at any step, so most of each step's compute is spent on tokens that stay masked.  FOCUS
scores every masked token after the first two layers by how much the attention it receives from the other
masked tokens grows from layer 0 to layer 1 (``dI = I^(1) - I^(0)``), keeps about ``alpha`` times the recent
number of decoded tokens per step plus a few structural fills, and runs the remaining layers only on those.
The evicted tokens simply stay masked for the next step, so quality is kept while deep-layer work shrinks.

Notation -> names:
    B (block size), tau (threshold), alpha        -> DllmConfig.block_size, .threshold, .focus_alpha
    I^(l)_j, dI_j                                 -> focus_importance(...) on layer l's Q, K
    K = min(|M|, max(1, ceil(alpha * avg)))       -> focus_budget(num_masked, avg_tokens, alpha)
    top-K / mean+std set + structural rules       -> focus_select(delta, masked_positions, target, block_progress)
    neighbour-aware delayed cache                 -> mark_cached(uncached, block_tokens, mask_id)
    the model / the decoding engine               -> BlockDiffusionLM, BlockDiffusionDecoder(model, config)
"""

from .decoder import BlockDiffusionDecoder, DecodeStats, DllmConfig
from .focus import (
    apply_rules,
    focus_budget,
    focus_importance,
    focus_select,
    mark_cached,
    nearest_decoded_distance,
    threshold_count,
)
from .model import BlockDiffusionLM, block_causal_mask
from .train import TrainConfig, load_or_train, pretrain_autoregressive, train_block_diffusion

__all__ = [
    "BlockDiffusionLM",
    "block_causal_mask",
    "DllmConfig",
    "DecodeStats",
    "BlockDiffusionDecoder",
    "focus_importance",
    "focus_budget",
    "focus_select",
    "mark_cached",
    "threshold_count",
    "nearest_decoded_distance",
    "pretrain_autoregressive",
    "apply_rules",
    "TrainConfig",
    "train_block_diffusion",
    "load_or_train",
]
