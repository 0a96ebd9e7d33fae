"""Temper-then-tilt for a causal language model: a frozen base, a small classifier, and a logits processor.

For a prompt ``x`` and a partial answer ``y_<t`` the unlearned next-token distribution is

    p_hat(v | x, y_<t) = softmax_v( l_t(v) / T + lambda * log f_hat(x, y_<t, v) )

where ``l_t`` are the frozen base model's logits, ``T >= 1`` the temperature (``T = 1``: plain classifier
guidance), ``lambda`` the guidance weight (1 in the paper's form) and ``f_hat ~ P(retain | x, y_<t, v)`` a small
classifier:

    f_hat(x, y_<t, v) = sigmoid( w_2 . relu( W_h h_bar + W_e e(v) + b_1 ) + b_2 )

with ``h_bar`` the mean over positions ``<= t`` of the base model's hidden states at ``feature_layer`` and
``e(v)`` the base model's frozen input embedding of the candidate token.  Splitting the first layer into
``W_h h_bar + W_e e(v)`` lets one call score every vocabulary entry at once.  (The classifier's exact form is
not public; this design is inferred, see ``docs/t3_unlearning.md``.)

Training ``f_hat``: every (prefix, next answer token) of a retain example is labelled 1 and of a forget example
0; binary cross-entropy on the natural class proportions, so the sigmoid estimates ``P(R | .)``.  The base
model's features are computed once and cached, so fitting costs seconds; the base is never changed.

Greedy decoding under ``p_hat`` picks ``argmax l/T + lambda log f_hat = argmax l + T lambda log f_hat``, so for
generated text ``T`` acts as a guidance strength; for likelihood metrics it also flattens the distribution.
"""

from __future__ import annotations

import inspect
import math
import numbers
import time
import warnings
import weakref
from collections.abc import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["T3Unlearner", "TemperThenTiltLogitsProcessor", "TiltClassifier", "BaseFeatures", "answer_features"]

Pair = tuple[Sequence[int], Sequence[int]]


class BaseFeatures:
    """Read logits, hidden states and input embeddings from a frozen causal LM.

    Works with :class:`icml26.common.tinylm.TinyLM` (hidden state after ``model.blocks[feature_layer]``) and with
    Hugging Face causal LMs (``output_hidden_states=True``; ``feature_layer`` indexes ``hidden_states``, so
    ``-1`` is the last layer).
    """

    def __init__(self, model: nn.Module, feature_layer: int = -1) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"base_model must be a torch.nn.Module, got {type(model).__name__}")
        self.model = model
        self.is_hf = hasattr(model, "config") and hasattr(model, "get_input_embeddings")
        n_layers = self._n_layers()
        if not isinstance(feature_layer, int) or not -n_layers <= feature_layer < n_layers:
            raise ValueError(
                f"feature_layer must be an integer in [{-n_layers}, {n_layers - 1}], got {feature_layer!r}"
            )
        self.feature_layer = feature_layer

    def _n_layers(self) -> int:
        if self.is_hf:
            return int(self.model.config.num_hidden_layers) + 1  # hidden_states includes the embeddings
        if hasattr(self.model, "blocks"):
            return len(self.model.blocks)
        raise TypeError("base_model must be a TinyLM (with .blocks) or a Hugging Face causal LM")

    @property
    def embedding(self) -> torch.Tensor:
        """The input embedding matrix ``[V, d_emb]`` (candidate features ``e(v)``)."""
        emb = self.model.get_input_embeddings() if self.is_hf else self.model.tok_emb
        return emb.weight.detach()

    @property
    def vocab_size(self) -> int:
        return int(self.embedding.shape[0])

    @property
    def device(self) -> torch.device:
        return self.embedding.device

    @property
    def max_length(self) -> int | None:
        """The longest sequence the base accepts (TinyLM ``block_size``; HF ``n_positions`` or
        ``max_position_embeddings``), ``None`` if the model does not say."""
        if self.is_hf:
            for name in ("n_positions", "max_position_embeddings", "n_ctx"):
                v = getattr(self.model.config, name, None)
                if isinstance(v, int) and v > 0:
                    return v
            return None
        return int(self.model.cfg.block_size)

    @torch.no_grad()
    def step(self, ids: torch.Tensor, key_mask: torch.Tensor, past=None) -> tuple[torch.Tensor, torch.Tensor, object]:
        """One incremental forward with a KV cache: ``(logits of the last position [B, V], hidden states of the new
        positions [B, n, d], new cache)`` for new ids ``[B, n]``; ``key_mask [B, past + n]`` (bool) marks the real
        (not padding) positions of the whole sequence so far.  Positions count real tokens only, so a left-padded
        row gets the same states as the unpadded prompt."""
        pos = (key_mask.long().cumsum(1) - 1).clamp_min(0)[:, key_mask.shape[1] - ids.shape[1] :]
        was_training = self.model.training
        self.model.eval()
        try:
            if self.is_hf:
                params = inspect.signature(self.model.forward).parameters
                cache_kw = "cache" if "cache" in params else "past_key_values"  # transformers >= 5.24 renames it
                out = self.model(
                    input_ids=ids,
                    attention_mask=key_mask.long(),
                    position_ids=pos,
                    use_cache=True,
                    output_hidden_states=True,
                    **{cache_kw: past},
                )
                new = getattr(out, "cache", None)
                new = out.past_key_values if new is None else new
                return out.logits[:, -1].float(), out.hidden_states[self.feature_layer].float(), new
            return _tinylm_step(self.model, ids, key_mask, pos, past, self.feature_layer % len(self.model.blocks))
        finally:
            self.model.train(was_training)

    @torch.no_grad()
    def __call__(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits [B, T, V], hidden [B, T, d])`` for token ids ``[B, T]``."""
        was_training = self.model.training
        self.model.eval()
        try:
            if self.is_hf:
                out = self.model(input_ids=ids, output_hidden_states=True)
                return out.logits.float(), out.hidden_states[self.feature_layer].float()
            store: dict[str, torch.Tensor] = {}
            hook = self.model.blocks[self.feature_layer].register_forward_hook(
                lambda _m, _i, o: store.__setitem__("h", o)
            )
            try:
                logits = self.model(ids)
            finally:
                hook.remove()
            return logits.float(), store["h"].float()
        finally:
            self.model.train(was_training)


def _tinylm_step(model, ids, key_mask, pos, past, layer):
    """:class:`~icml26.common.tinylm.TinyLM`'s forward over new positions only, attending to a KV cache ``past``
    (one ``(k, v)`` per block) and to the real positions of ``key_mask``; returns ``(last logits, hidden after
    block `layer` for the new positions, new cache)``.  Equal to ``model(ids)`` up to float rounding when nothing
    is padded."""
    B, n = ids.shape
    P = key_mask.shape[1] - n
    if int(pos.max()) >= model.cfg.block_size:
        raise ValueError(f"sequence length {int(pos.max()) + 1} exceeds block_size {model.cfg.block_size}")
    k_idx = torch.arange(P + n, device=ids.device)
    q_idx = P + torch.arange(n, device=ids.device)
    allowed = (k_idx[None, :] <= q_idx[:, None])[None] & key_mask[:, None, :]
    allowed |= (k_idx[None, :] == q_idx[:, None])[None]  # a padding query attends to itself (its output is unused)
    x = model.tok_emb(ids) + model.pos_emb(pos)
    C = x.shape[-1]
    new_past, hidden = [], None
    for j, block in enumerate(model.blocks):
        a = block.attn
        q, k, v = a.qkv(block.ln1(x)).split(C, dim=2)
        q, k, v = (z.view(B, n, a.n_head, C // a.n_head).transpose(1, 2) for z in (q, k, v))
        if past is not None:
            k, v = torch.cat([past[j][0], k], dim=2), torch.cat([past[j][1], v], dim=2)
        new_past.append((k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed[:, None])
        x = x + a.proj(y.transpose(1, 2).reshape(B, n, C))
        x = x + block.mlp(block.ln2(x))
        if j == layer:
            hidden = x
    return model.lm_head(model.ln_f(x[:, -1])).float(), hidden.float(), new_past


class _Decoder:
    """Incremental decoding state of the frozen base: a KV cache and the running sum / count of the hidden states
    of the real positions, so ``h_bar`` (the mask-aware mean over positions ``<= t``) costs nothing extra and every
    new token costs one single-token forward."""

    def __init__(self, features: BaseFeatures, ids: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        self.features = features
        self.mask = torch.ones_like(ids, dtype=torch.bool) if mask is None else mask.bool()
        self.logits, hidden, self.past = features.step(ids, self.mask)
        m = self.mask[..., None].to(hidden.dtype)
        self.sum, self.count = (hidden * m).sum(1), m.sum(1).clamp_min(1.0)
        self.ids = ids

    @property
    def h_bar(self) -> torch.Tensor:
        return self.sum / self.count

    def select(self, parent: torch.Tensor) -> None:
        """Keep row ``parent[i]`` as row ``i`` (beam search reorders and duplicates rows between steps)."""
        if torch.equal(parent, torch.arange(len(parent), device=parent.device)):
            return
        self.ids, self.mask, self.sum, self.count = (z[parent] for z in (self.ids, self.mask, self.sum, self.count))
        if hasattr(self.past, "reorder_cache"):  # a transformers Cache
            self.past.reorder_cache(parent.to(self.features.device))
        else:  # TinyLM: one (k, v) per block, batch first
            self.past = [(k[parent], v[parent]) for k, v in self.past]

    def advance(self, new: torch.Tensor) -> torch.Tensor:
        """Append one token per row (``new [B]``); returns the next-token logits ``[B, V]``."""
        self.ids = torch.cat([self.ids, new[:, None]], dim=1)
        self.mask = torch.cat([self.mask, self.mask.new_ones((len(new), 1))], dim=1)
        self.logits, hidden, self.past = self.features.step(new[:, None], self.mask, self.past)
        self.sum, self.count = self.sum + hidden[:, -1], self.count + 1.0
        return self.logits

    def prefixes(self) -> list[torch.Tensor]:
        """Each row's ids without its padding."""
        return [row[m] for row, m in zip(self.ids, self.mask, strict=True)]


def _check_ids(name: str, ids, features: BaseFeatures) -> torch.Tensor:
    """``ids`` as a 2-d integer tensor inside the vocabulary and the context (TypeError / ValueError naming it)."""
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of token ids [batch, time], got {type(ids).__name__}")
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer token ids, got dtype {ids.dtype}")
    if ids.dim() != 2 or ids.shape[1] == 0:
        raise ValueError(f"{name} must have shape [batch, time] with time >= 1, got {tuple(ids.shape)}")
    V = features.vocab_size
    if int(ids.min()) < 0 or int(ids.max()) >= V:
        raise ValueError(f"{name} holds token ids outside the base model's vocabulary [0, {V})")
    limit = features.max_length
    if limit is not None and ids.shape[1] > limit:
        raise ValueError(f"{name} has {ids.shape[1]} positions but the base model's context is {limit}")
    return ids


def prefix_means(hidden: torch.Tensor) -> torch.Tensor:
    """``h_bar[:, t] = mean_{s <= t} hidden[:, s]`` for ``hidden [B, T, d]`` (a running mean)."""
    counts = torch.arange(1, hidden.shape[1] + 1, device=hidden.device, dtype=hidden.dtype)
    return hidden.cumsum(dim=1) / counts[None, :, None]


@torch.no_grad()
def answer_features(
    features: BaseFeatures,
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    batch_size: int = 64,
    keep_prefixes: bool = False,
) -> dict:
    """Run the base model once over every (prompt, answer) pair (batched by total length) and collect, for every
    answer position in pair order: the base logits row that predicts the answer token (``logits``), the pooled
    state of the prefix (``h_bar``), the pooled state including the answer token (``h_incl``), the answer token
    (``targets``) and, with ``keep_prefixes``, the prefix ids (``prefixes``).  ``spans[j]`` are pair ``j``'s rows."""
    logits_rows, h_rows, h_incl, targets, prefixes = [], [], [], [], []
    groups: dict[int, list[int]] = {}
    for j in sorted(range(len(pairs)), key=lambda j: len(pairs[j][0]) + len(pairs[j][1])):
        groups.setdefault(len(pairs[j][0]) + len(pairs[j][1]), []).append(j)
    spans: list = [None] * len(pairs)
    pos = 0
    for members in groups.values():
        for s in range(0, len(members), batch_size):
            chunk = members[s : s + batch_size]
            ids = torch.tensor([list(pairs[j][0]) + list(pairs[j][1]) for j in chunk], device=features.device)
            logits, hidden = features(ids)
            h_bar = prefix_means(hidden)
            for r, j in enumerate(chunk):
                lx, ly = len(pairs[j][0]), len(pairs[j][1])
                sl = slice(lx - 1, lx - 1 + ly)  # positions whose next token is an answer token
                logits_rows.append(logits[r, sl])
                h_rows.append(h_bar[r, sl])
                h_incl.append(h_bar[r, lx : lx + ly])
                targets.append(ids[r, lx : lx + ly])
                if keep_prefixes:
                    prefixes.extend(ids[r, : lx + t] for t in range(ly))
                spans[j] = (pos, pos + ly)
                pos += ly
    return {
        "logits": torch.cat(logits_rows),
        "h_bar": torch.cat(h_rows),
        "h_incl": torch.cat(h_incl),
        "targets": torch.cat(targets),
        "prefixes": prefixes,
        "spans": spans,
    }


class TiltClassifier(nn.Module):
    """``f_hat(h_bar, v)``: a one-hidden-layer MLP on the pooled prefix state and the candidate's embedding.

    Inputs are standardised with fixed statistics of the training features (``set_scaling``).
    """

    def __init__(self, d_hidden: int, d_emb: int, hidden: int = 64) -> None:
        super().__init__()
        self.w_h = nn.Linear(d_hidden, hidden)
        self.w_e = nn.Linear(d_emb, hidden, bias=False)
        self.out = nn.Linear(hidden, 1)
        self.register_buffer("h_mean", torch.zeros(d_hidden))
        self.register_buffer("h_std", torch.ones(d_hidden))
        self.register_buffer("e_mean", torch.zeros(d_emb))
        self.register_buffer("e_std", torch.ones(d_emb))

    def set_scaling(self, h: torch.Tensor, e: torch.Tensor) -> None:
        self.h_mean.copy_(h.mean(0))
        self.h_std.copy_(h.std(0).clamp_min(1e-6))
        self.e_mean.copy_(e.mean(0))
        self.e_std.copy_(e.std(0).clamp_min(1e-6))

    def _h(self, h: torch.Tensor) -> torch.Tensor:
        return self.w_h((h - self.h_mean) / self.h_std)

    def _e(self, e: torch.Tensor) -> torch.Tensor:
        return self.w_e((e - self.e_mean) / self.e_std)

    def forward(self, h: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        """Logit of ``f_hat`` for paired rows ``h [N, d]``, ``e [N, d_emb]`` -> ``[N]``."""
        return self.out(F.relu(self._h(h) + self._e(e))).squeeze(-1)

    def all_candidates(self, h: torch.Tensor, emb: torch.Tensor, chunk: int = 64) -> torch.Tensor:
        """``log f_hat`` for every row of ``h [P, d]`` and every candidate of ``emb [V, d_emb]`` -> ``[P, V]``."""
        ev = self._e(emb)  # [V, H]
        hv = self._h(h)  # [P, H]
        w, b = self.out.weight[0], self.out.bias
        outs = []
        for i in range(0, h.shape[0], chunk):
            z = (hv[i : i + chunk, None, :] + ev[None, :, :]).clamp_min_(0.0)  # relu, in place: [chunk, V, H]
            outs.append(F.logsigmoid(z @ w + b))
        return torch.cat(outs, dim=0) if outs else h.new_zeros((0, emb.shape[0]))


class TemperThenTiltLogitsProcessor:
    """Hugging Face ``LogitsProcessor``-compatible: ``processor(input_ids, scores) -> scores``.

    ``input_ids [B, t]`` is the whole sequence so far (prompt and generated tokens) and ``scores [B, V]`` the base
    model's next-token logits (the ones ``generate`` already computed); the result is ``scores / T + lambda *
    log f_hat(h_bar, v)``.  Only the next-token scores change; ``input_ids`` are read, never written.  Duck-typed,
    so transformers is not needed (pass it in a ``transformers.LogitsProcessorList``).

    Cost (``share_forward=True``, the default, for a Hugging Face base): the processor reads the hidden states of
    the forward ``generate`` itself runs on the base model (forward hooks ask that forward for
    ``output_hidden_states`` and keep the feature layer's states of the new positions; the hooks go when the
    processor is garbage-collected or :meth:`close` is called), so the base model runs **once per new token in
    all**.  It uses them only when the hooked forward's ``input_ids`` are exactly the new tail of the call's
    ``input_ids``; otherwise (another model generates, a TinyLM base, ``share_forward=False``) it runs its own
    KV-cached forward: one prefill plus one single-token forward per further token.  ``n_forwards_`` counts the
    processor's own forwards only.

    Beam search and ``num_return_sequences``: ``generate`` repeats each prompt row ``k`` times and reorders the
    beams between steps without telling processors; a prompt ``attention_mask`` of ``B / k`` rows is repeated the
    same way, and each row's running state is taken from the row of the previous call that it extends.

    ``attention_mask [B, L]``: the mask of the *prompt* batch (left padding); ``h_bar`` then averages the real
    positions only and positions count real tokens, so a left-padded row gets exactly the scores of the unpadded
    prompt.  With ``share_forward`` the mask ``generate`` received is read from its forward, so passing it to
    ``generate`` alone is enough.  Generated tokens are always real.  With no mask at all every position is real;
    if some row then starts with the model's pad token the processor warns once (those pad tokens would count as
    text).
    """

    def __init__(
        self, unlearner: T3Unlearner, attention_mask: torch.Tensor | None = None, share_forward: bool = True
    ) -> None:
        if unlearner.classifier_ is None:
            raise RuntimeError("the T3Unlearner is not fitted; call .fit(retain, forget) first")
        if attention_mask is not None:
            if not isinstance(attention_mask, torch.Tensor) or attention_mask.dim() != 2:
                raise TypeError("attention_mask must be a [batch, prompt_length] tensor of 0/1 (or None)")
            if not bool(((attention_mask == 0) | (attention_mask == 1)).all()):
                raise ValueError("attention_mask must hold only 0 and 1")
            if bool((attention_mask.sum(1) == 0).any()):
                raise ValueError("attention_mask has a row with no real token")
        if not isinstance(share_forward, bool):
            raise TypeError(f"share_forward must be True or False, got {share_forward!r}")
        self.unlearner = unlearner
        self.attention_mask = attention_mask
        self._decoder: _Decoder | None = None
        self._pooled: _Pooled | None = None
        self._seen: tuple | None = None  # (input_ids, attention_mask, hidden) of the last hooked base forward
        self._warned = False
        self._busy = False  # True while the processor runs its own forward (the hooks then record nothing)
        self.n_forwards_ = 0  # the processor's own base forwards (prefills + single-token steps)
        self._hooks: list = []
        if share_forward and unlearner.features.is_hf:
            self._hooks = _watch_forward(unlearner.features, weakref.ref(self))
            weakref.finalize(self, _remove_hooks, list(self._hooks))

    def close(self) -> None:
        """Remove the forward hooks from the base model (also done when the processor is garbage-collected)."""
        _remove_hooks(self._hooks)
        self._hooks = []

    def reset(self) -> None:
        """Forget the cached state (the next call starts from its ``input_ids``)."""
        self._decoder, self._pooled, self._seen = None, None, None

    def _prompt_mask(self, B: int, t: int, device, seen_mask: torch.Tensor | None = None) -> torch.Tensor | None:
        """The prompt mask (given, else the one ``generate`` used) extended with real generated positions, its rows
        repeated to ``B`` when ``generate`` expanded the batch (beams, several returned sequences)."""
        am = self.attention_mask if self.attention_mask is not None else seen_mask
        if am is None:
            return None
        am = am.to(device)
        if am.shape[0] != B and am.shape[0] > 0 and B % am.shape[0] == 0 and self.attention_mask is not None:
            am = am.repeat_interleave(B // am.shape[0], dim=0)  # generate's own expansion order
        if am.shape[0] != B or am.shape[1] > t:
            raise ValueError(
                f"attention_mask has shape {tuple(am.shape)} but input_ids has shape {(B, t)}: pass the mask of "
                "the prompt batch given to generate"
            )
        return torch.cat([am.bool(), am.new_ones((B, t - am.shape[1]), dtype=torch.bool)], dim=1)

    def _warn_if_padded(self, input_ids: torch.Tensor, mask: torch.Tensor | None) -> None:
        pad = getattr(getattr(self.unlearner.base_model, "config", None), "pad_token_id", None)
        if self._warned or mask is not None or not isinstance(pad, int):
            return
        if bool((input_ids[:, 0] == pad).any()):
            self._warned = True
            warnings.warn(
                f"some input_ids rows start with the pad token ({pad}) and no attention_mask was given: those pad "
                "tokens count as text in T3's pooled state; pass the prompt batch's attention_mask to generate "
                "(or to logits_processor)",
                UserWarning,
                stacklevel=3,
            )

    def _shared(self, input_ids: torch.Tensor) -> torch.Tensor | None:
        """``h_bar`` from the hidden states of ``generate``'s own forward, or ``None`` when that forward does not
        belong to this call (then the processor runs its own)."""
        seen, self._seen = self._seen, None
        if seen is None:
            return None
        ids, seen_mask, hidden = seen
        B, t = input_ids.shape
        n = ids.shape[1]
        if ids.shape[0] != B or n > t or not torch.equal(ids.to(input_ids.device), input_ids[:, t - n :]):
            return None
        p = self._pooled
        if n == t:  # a prefill: the whole prompt
            mask = self._prompt_mask(B, t, input_ids.device, seen_mask)
            self._warn_if_padded(input_ids, mask)
            self._pooled = _Pooled.start(input_ids, hidden.to(input_ids.device), mask)
        elif p is not None and (parent := _parents(p.ids, input_ids[:, : t - n])) is not None:
            self._pooled = p.extend(parent, input_ids, hidden.to(input_ids.device))
        else:
            return None
        return self._pooled.h_bar

    def _state(self, input_ids: torch.Tensor) -> _Decoder:
        self._busy = True
        try:
            return self._own_forward(input_ids)
        finally:
            self._busy = False

    def _own_forward(self, input_ids: torch.Tensor) -> _Decoder:
        d = self._decoder
        B, t = input_ids.shape
        if d is not None and d.ids.shape[1] == t - 1 and (parent := _parents(d.ids, input_ids[:, :-1])) is not None:
            d.select(parent)  # beam search reorders rows; identity for greedy and sampling
            d.advance(input_ids[:, -1])
            self.n_forwards_ += 1
            return d
        mask = self._prompt_mask(B, t, input_ids.device)
        self._warn_if_padded(input_ids, mask)
        self._decoder = _Decoder(self.unlearner.features, input_ids, mask)
        self.n_forwards_ += 1
        return self._decoder

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        u = self.unlearner
        _check_ids("input_ids", input_ids, u.features)
        if not isinstance(scores, torch.Tensor) or not scores.dtype.is_floating_point:
            raise TypeError(f"scores must be a floating-point torch.Tensor [batch, vocab], got {type(scores).__name__}")
        if scores.dim() != 2 or input_ids.shape[0] != scores.shape[0]:
            raise ValueError(
                f"expected input_ids [B, t] and scores [B, V] with the same B, got {tuple(input_ids.shape)} "
                f"and {tuple(scores.shape)}"
            )
        if scores.shape[1] != u.features.vocab_size:
            raise ValueError(
                f"scores have {scores.shape[1]} entries but the base model's vocabulary has "
                f"{u.features.vocab_size}: the tokenizer does not match the base model"
            )
        h_bar = self._shared(input_ids)
        if h_bar is not None:
            self._decoder = None
            prefixes = self._pooled.prefixes() if u.scorer == "rescore" and self._pooled is not None else None
        else:
            self._pooled = None
            d = self._state(input_ids)
            h_bar = d.h_bar
            prefixes = d.prefixes() if u.scorer == "rescore" else None
        return u._tilt(scores.float(), h_bar, prefixes).to(scores.dtype)


class _Pooled:
    """The running sum / count of the feature layer's hidden states over the real positions (no KV cache: the
    states come from ``generate``'s own forward)."""

    def __init__(self, ids: torch.Tensor, mask: torch.Tensor, total: torch.Tensor, count: torch.Tensor) -> None:
        self.ids, self.mask, self.sum, self.count = ids, mask, total, count

    @classmethod
    def start(cls, ids: torch.Tensor, hidden: torch.Tensor, mask: torch.Tensor | None) -> _Pooled:
        mask = torch.ones_like(ids, dtype=torch.bool) if mask is None else mask
        m = mask[..., None].to(hidden.dtype)
        return cls(ids, mask, (hidden * m).sum(1), m.sum(1).clamp_min(1.0))

    def extend(self, parent: torch.Tensor, ids: torch.Tensor, hidden: torch.Tensor) -> _Pooled:
        n = hidden.shape[1]
        mask = torch.cat([self.mask[parent], self.mask.new_ones((len(parent), n))], dim=1)
        return _Pooled(ids, mask, self.sum[parent] + hidden.sum(1), self.count[parent] + float(n))

    @property
    def h_bar(self) -> torch.Tensor:
        return self.sum / self.count

    def prefixes(self) -> list[torch.Tensor]:
        return [row[m] for row, m in zip(self.ids, self.mask, strict=True)]


def _parents(old: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor | None:
    """For each row of ``prefix [B, t]`` the index of an equal row of ``old [B', t]`` (beam search reorders and
    duplicates rows), or ``None`` when some row extends none of them."""
    if old.shape[1] != prefix.shape[1]:
        return None
    same = (prefix[:, None, :] == old[None, :, :].to(prefix.device)).all(-1)  # [B, B']
    if not bool(same.any(1).all()):
        return None
    return same.float().argmax(1)


def _watch_forward(features: BaseFeatures, ref) -> list:
    """Hooks on a Hugging Face base that ask each forward for hidden states and hand the feature layer's states of
    that forward's new positions to the processor ``ref()`` (a weak reference: the hooks keep nothing alive)."""
    model = features.model

    def before(module, args, kwargs):
        if ref() is None:
            return None
        kwargs["output_hidden_states"] = True
        return args, kwargs

    def after(module, args, kwargs, out):
        proc = ref()
        ids = kwargs.get("input_ids", args[0] if args else None)
        hs = getattr(out, "hidden_states", None)
        if proc is None or proc._busy or not isinstance(ids, torch.Tensor) or hs is None:
            return None
        mask = kwargs.get("attention_mask")
        proc._seen = (
            ids.detach(),
            mask.detach() if isinstance(mask, torch.Tensor) else None,
            hs[features.feature_layer].detach().float(),
        )
        return None

    return [
        model.register_forward_pre_hook(before, with_kwargs=True),
        model.register_forward_hook(after, with_kwargs=True),
    ]


def _remove_hooks(hooks: list) -> None:
    for h in hooks:
        h.remove()


class T3Unlearner:
    """Temper-then-tilt unlearning of a frozen causal LM (see the module docstring for the rule).

    Parameters
    ----------
    base_model: a :class:`~icml26.common.tinylm.TinyLM` or a Hugging Face causal LM; never modified.
    feature_layer: which hidden state feeds the classifier (negative counts from the end).
    temperature: ``T >= 1`` tempers the base distribution (``T = 1`` is classifier guidance); must be > 0.
    guidance: ``lambda``, the weight of ``log f_hat``; must be >= 0.
    hidden: width of the classifier's hidden layer.
    candidates: ``"all"`` scores every vocabulary entry with the classifier; an integer ``k`` scores only the
        base model's top-``k`` tokens and gives every other token the mean of those ``k`` scores (cheaper for
        large vocabularies).
    seed: classifier initialisation and minibatch order.
    scorer: ``"embedding"`` (default) scores candidate ``v`` from the prefix's pooled state and ``v``'s input
        embedding, all candidates in one call; ``"rescore"`` runs the base model on ``prefix + v`` for each
        candidate and pools that state instead (exact per-candidate features; one extra forward per candidate,
        so use it with ``candidates=k`` or a small vocabulary).

    Fitted attributes: ``classifier_``, ``n_trainable_params_``, ``fit_time_`` (classifier training, seconds),
    ``feature_time_`` (computing the cached base features, seconds), ``losses_``.
    """

    def __init__(
        self,
        base_model: nn.Module,
        feature_layer: int = -1,
        temperature: float = 2.0,
        guidance: float = 1.0,
        hidden: int = 64,
        candidates: str | int = "all",
        seed: int = 0,
        scorer: str = "embedding",
    ) -> None:
        self.features = BaseFeatures(base_model, feature_layer)
        self.base_model = base_model
        self.temperature = temperature
        self.guidance = guidance
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 1:
            raise ValueError(f"hidden must be a positive integer, got {hidden!r}")
        if not (
            candidates == "all"
            or (isinstance(candidates, int) and not isinstance(candidates, bool) and candidates >= 1)
        ):
            raise ValueError(f"candidates must be 'all' or a positive integer, got {candidates!r}")
        if scorer not in ("embedding", "rescore"):
            raise ValueError(f"scorer must be 'embedding' or 'rescore', got {scorer!r}")
        self.hidden, self.candidates, self.seed, self.scorer = hidden, candidates, int(seed), scorer
        self.classifier_: TiltClassifier | None = None

    # -- knobs ---------------------------------------------------------------------------------------------
    @property
    def temperature(self) -> float:
        return self._temperature

    @temperature.setter
    def temperature(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or not math.isfinite(value):
            raise ValueError(f"temperature must be a finite number > 0, got {value!r}")
        self._temperature = float(value)

    @property
    def guidance(self) -> float:
        return self._guidance

    @guidance.setter
    def guidance(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or not math.isfinite(value):
            raise ValueError(f"guidance must be a finite number >= 0, got {value!r}")
        self._guidance = float(value)

    # -- features ------------------------------------------------------------------------------------------
    def _check_pairs(self, name: str, pairs: Sequence[Pair]) -> list[tuple[list[int], list[int]]]:
        if pairs is None or len(pairs) == 0:
            raise ValueError(f"{name} must be a non-empty sequence of (prompt_ids, answer_ids) pairs")
        out = []
        V = self.features.vocab_size
        for j, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(f"{name}[{j}] must be a (prompt_ids, answer_ids) pair")
            for part in pair:
                if isinstance(part, (str, bytes)):
                    raise TypeError(f"{name}[{j}] holds a string: pass token ids (tokenize the text first)")
            x, y = (p.tolist() if isinstance(p, torch.Tensor) else list(p) for p in pair)
            if not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in x + y):
                raise TypeError(f"{name}[{j}] must hold integer token ids")
            x, y = [int(i) for i in x], [int(i) for i in y]
            if not x or not y:
                raise ValueError(f"{name}[{j}] has an empty prompt or answer")
            limit = self.features.max_length
            if limit is not None and len(x) + len(y) > limit:
                raise ValueError(
                    f"{name}[{j}] has {len(x) + len(y)} tokens, more than the base model's context of {limit}"
                )
            bad = [i for i in x + y if not 0 <= i < V]
            if bad:
                raise ValueError(
                    f"{name}[{j}] holds token ids {bad[:3]} outside the base model's vocabulary [0, {V}): "
                    "the tokenizer does not match the base model"
                )
            out.append((x, y))
        return out

    def _answer_features(self, pairs: list[tuple[list[int], list[int]]]) -> dict:
        return answer_features(self.features, pairs, keep_prefixes=self.scorer == "rescore")

    # -- fitting -------------------------------------------------------------------------------------------
    def fit(
        self,
        retain: Sequence[Pair],
        forget: Sequence[Pair],
        epochs: int = 100,
        lr: float = 1e-3,
        batch_size: int = 256,
    ) -> T3Unlearner:
        """Train ``f_hat`` on (prefix, next answer token) pairs: retain -> 1, forget -> 0 (natural proportions).

        ``retain`` and ``forget`` are sequences of ``(prompt_ids, answer_ids)``; every answer token is one
        training example.  The base model is only read.
        """
        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
            raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr!r}")
        r_pairs = self._check_pairs("retain", retain)
        f_pairs = self._check_pairs("forget", forget)
        t0 = time.perf_counter()
        fr, ff = self._answer_features(r_pairs), self._answer_features(f_pairs)
        which = "h_incl" if self.scorer == "rescore" else "h_bar"
        h = torch.cat([fr[which], ff[which]])
        v = torch.cat([fr["targets"], ff["targets"]])
        y = torch.cat([torch.ones(len(fr["targets"])), torch.zeros(len(ff["targets"]))])
        emb = self.features.embedding
        e = emb[v]
        self.feature_time_ = time.perf_counter() - t0

        t0 = time.perf_counter()
        gen = torch.Generator().manual_seed(self.seed)
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            clf = TiltClassifier(h.shape[1], emb.shape[1], self.hidden).to(h.device)
        clf.set_scaling(h, emb)
        opt = torch.optim.Adam(clf.parameters(), lr=lr)
        n = len(y)
        self.losses_ = []
        for _ in range(epochs):
            perm = torch.randperm(n, generator=gen)
            total = 0.0
            for s in range(0, n, batch_size):
                b = perm[s : s + batch_size]
                loss = F.binary_cross_entropy_with_logits(clf(h[b], e[b]), y[b])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(b)
            self.losses_.append(total / n)
        clf.eval()
        for p in clf.parameters():
            p.requires_grad_(False)
        self.fit_time_ = time.perf_counter() - t0
        self.classifier_ = clf
        self._memo = {}
        self.n_trainable_params_ = sum(p.numel() for p in clf.parameters())
        return self

    def _require_fit(self) -> TiltClassifier:
        if self.classifier_ is None:
            raise RuntimeError("the T3Unlearner is not fitted; call .fit(retain, forget) first")
        return self.classifier_

    # -- the rule ------------------------------------------------------------------------------------------
    def log_f_hat(self, h_bar: torch.Tensor) -> torch.Tensor:
        """``log f_hat`` for pooled states ``h_bar [P, d]`` and every vocabulary entry -> ``[P, V]``."""
        return self._require_fit().all_candidates(h_bar, self.features.embedding)

    @torch.no_grad()
    def _rescore(self, prefixes: Sequence[torch.Tensor], h_bar: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
        """``log f_hat`` of candidates ``cand [P, k]`` by running the base model on each ``prefix + v``.

        Appending ``v`` leaves the prefix's hidden states unchanged (causal attention), so the pooled state of
        ``prefix + v`` is ``(L h_bar + h_v) / (L + 1)`` with ``h_v`` the new last hidden state.
        """
        clf = self._require_fit()
        emb = self.features.embedding
        out = []
        for i, prefix in enumerate(prefixes):
            L, c = prefix.shape[0], cand[i]
            ids = torch.cat([prefix[None, :].expand(len(c), L), c[:, None]], dim=1)
            _, hidden = self.features(ids)
            pooled = (h_bar[i] * L + hidden[:, -1]) / (L + 1)
            out.append(F.logsigmoid(clf(pooled, emb[c])))
        return torch.stack(out)

    @torch.no_grad()
    def _tilt_term(
        self, logits: torch.Tensor, h_bar: torch.Tensor, prefixes: Sequence[torch.Tensor] | None = None
    ) -> torch.Tensor:
        """The tilt ``log f_hat(h_bar, v)`` of every candidate for rows ``logits [P, V]`` (with ``candidates=k``:
        the base's top-``k`` get their own score, the rest the mean of those ``k``).  It depends on neither ``T``
        nor ``lambda`` (dividing by ``T > 0`` keeps the top-``k``)."""
        clf = self._require_fit()
        if self.candidates == "all" and self.scorer == "embedding":
            return self.log_f_hat(h_bar)
        k = logits.shape[1] if self.candidates == "all" else min(int(self.candidates), logits.shape[1])
        top = logits.topk(k, dim=1).indices  # [P, k]
        if self.scorer == "rescore":
            if prefixes is None or len(prefixes) != logits.shape[0]:
                raise ValueError("scorer='rescore' needs the prefix ids of every row")
            scores = self._rescore(prefixes, h_bar, top)
        else:
            ev = clf._e(self.features.embedding)  # [V, H]
            z = F.relu(clf._h(h_bar)[:, None, :] + ev[top])  # [P, k, H]
            scores = F.logsigmoid(clf.out(z).squeeze(-1))  # [P, k]
        tilt = scores.mean(dim=1, keepdim=True).expand_as(logits).clone()
        tilt.scatter_(1, top, scores)
        return tilt

    @torch.no_grad()
    def _tilt(
        self, logits: torch.Tensor, h_bar: torch.Tensor, prefixes: Sequence[torch.Tensor] | None = None
    ) -> torch.Tensor:
        """``logits / T + lambda log f_hat`` for rows ``logits [P, V]`` with pooled states ``h_bar [P, d]``
        (``prefixes``: the ids of each row's prefix, needed by ``scorer="rescore"``)."""
        self._require_fit()
        out = logits / self.temperature
        if self.guidance == 0.0:
            return out
        return out + self.guidance * self._tilt_term(logits, h_bar, prefixes)

    def logits_processor(
        self, attention_mask: torch.Tensor | None = None, share_forward: bool = True
    ) -> TemperThenTiltLogitsProcessor:
        """A Hugging Face-compatible logits processor applying this unlearner (for ``model.generate``): greedy,
        sampling, beam search and ``num_return_sequences``.  Left-padded prompts need their ``attention_mask``
        (given to ``generate``; to this call too when ``share_forward=False``).  ``share_forward`` reuses
        ``generate``'s own forward of the base model (one base forward per token in all); see
        :class:`TemperThenTiltLogitsProcessor`.  Use a new one per ``generate`` call."""
        return TemperThenTiltLogitsProcessor(self, attention_mask, share_forward)

    @torch.no_grad()
    def _likelihood_pieces(self, pairs: list[tuple[list[int], list[int]]]) -> dict:
        """Base logits, targets, spans and the tilt of every answer position: everything ``token_logprobs`` needs
        that does not depend on ``T`` or ``lambda``, kept for the last few pair lists (a grid over ``T`` and
        ``lambda`` then costs one base pass per list; the base is frozen and the memo is cleared by ``fit``)."""
        key = hash(tuple((tuple(x), tuple(y)) for x, y in pairs))
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            feats = self._answer_features(pairs)
            logits, h_bar = feats["logits"], feats["h_bar"]
            tilt = torch.empty_like(logits)
            for s in range(0, len(logits), 1024):
                prefixes = feats["prefixes"][s : s + 1024] if self.scorer == "rescore" else None
                tilt[s : s + 1024] = self._tilt_term(logits[s : s + 1024], h_bar[s : s + 1024], prefixes)
            if len(memo) >= 4:
                memo.pop(next(iter(memo)))
            memo[key] = {"logits": logits, "tilt": tilt, "targets": feats["targets"], "spans": feats["spans"]}
        return memo[key]

    @torch.no_grad()
    def token_logprobs(self, x_ids: Sequence[Sequence[int]], y_ids: Sequence[Sequence[int]]) -> list[torch.Tensor]:
        """``log p_hat(y_t | x, y_<t)`` for each answer token; one tensor per (prompt, answer) pair."""
        if len(x_ids) != len(y_ids):
            raise ValueError(f"x_ids and y_ids must have the same length, got {len(x_ids)} and {len(y_ids)}")
        pairs = self._check_pairs("x_ids/y_ids", list(zip(x_ids, y_ids, strict=True)))
        self._require_fit()
        pieces = self._likelihood_pieces(pairs)
        logits, tilt, targets = pieces["logits"], pieces["tilt"], pieces["targets"]
        out = torch.empty(len(targets))
        for s in range(0, len(targets), 1024):
            z = logits[s : s + 1024] / self.temperature
            if self.guidance != 0.0:
                z = z + self.guidance * tilt[s : s + 1024]
            out[s : s + 1024] = F.log_softmax(z, dim=1).gather(1, targets[s : s + 1024, None]).squeeze(1)
        return [out[a:b] for a, b in pieces["spans"]]

    @torch.no_grad()
    def generate(
        self, x_ids: Sequence[Sequence[int]], max_new_tokens: int, eos_id: int | None = None
    ) -> list[list[int]]:
        """Greedy decoding under ``p_hat``; returns the generated ids of each prompt (up to ``eos_id``).  One
        cached base forward per generated token: its logits and hidden state feed the tilt directly."""
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be a positive integer, got {max_new_tokens!r}")
        self._require_fit()
        prompts = _check_prompts("x_ids", x_ids, self.features, max_new_tokens)
        return greedy_generate(self.features, prompts, max_new_tokens, eos_id, tilt=self._tilt)


def _check_prompts(name: str, x_ids, features: BaseFeatures, max_new_tokens: int = 0) -> list[list[int]]:
    """Prompts as lists of ints inside the vocabulary and (with the generated tokens) the context."""
    if isinstance(x_ids, (str, bytes)) or not isinstance(x_ids, Sequence | torch.Tensor):
        raise TypeError(f"{name} must be a sequence of token-id sequences, got {type(x_ids).__name__}")
    out = []
    V, limit = features.vocab_size, features.max_length
    for j, x in enumerate(x_ids):
        if isinstance(x, (str, bytes)):
            raise TypeError(f"{name}[{j}] is a string: pass token ids (tokenize the text first)")
        row = x.tolist() if isinstance(x, torch.Tensor) else list(x)
        if not row:
            raise ValueError(f"{name}[{j}] is empty")
        bad = [i for i in row if not isinstance(i, numbers.Integral) or isinstance(i, bool)]
        if bad:
            raise TypeError(f"{name}[{j}] must hold integer token ids, got {type(bad[0]).__name__}")
        row = [int(i) for i in row]
        if min(row) < 0 or max(row) >= V:
            raise ValueError(f"{name}[{j}] holds token ids outside the base model's vocabulary [0, {V})")
        if limit is not None and len(row) + max_new_tokens > limit:
            raise ValueError(
                f"{name}[{j}] has {len(row)} tokens; with max_new_tokens={max_new_tokens} that exceeds the base "
                f"model's context of {limit}"
            )
        out.append(row)
    return out


@torch.no_grad()
def greedy_generate(
    features: BaseFeatures,
    prompts,
    max_new_tokens: int,
    eos_id: int | None,
    processor=None,
    batch_size: int = 128,
    tilt=None,
) -> list[list[int]]:
    """Greedy generation for prompts of any lengths (batched by length) with a KV cache: one prefill, then one
    single-token base forward per generated token.  ``tilt(logits, h_bar, prefixes)`` rewrites the next-token
    logits from the base's own pooled state (T3); ``processor(ids, scores)`` is any logits processor."""
    outs: list[list[int]] = [[] for _ in prompts]
    groups: dict[int, list[int]] = {}
    for j, p in enumerate(prompts):
        groups.setdefault(len(p), []).append(j)
    rescore = tilt is not None and getattr(getattr(tilt, "__self__", None), "scorer", "") == "rescore"
    for _length, members in groups.items():
        for s in range(0, len(members), batch_size):
            chunk = members[s : s + batch_size]
            ids = torch.tensor([list(prompts[j]) for j in chunk], device=features.device)
            dec = _Decoder(features, ids)
            done = torch.zeros(len(chunk), dtype=torch.bool)
            for i in range(max_new_tokens):
                scores = dec.logits
                if tilt is not None:
                    scores = tilt(scores, dec.h_bar, dec.prefixes() if rescore else None)
                if processor is not None:
                    scores = processor(dec.ids, scores)
                nxt = scores.argmax(dim=-1)
                if eos_id is not None:
                    nxt = torch.where(done, torch.full_like(nxt, eos_id), nxt)
                    done |= nxt == eos_id
                if i == max_new_tokens - 1 or (eos_id is not None and bool(done.all())):
                    dec.ids = torch.cat([dec.ids, nxt[:, None]], dim=1)
                    break
                dec.advance(nxt)
            for r, j in enumerate(chunk):
                gen = dec.ids[r, len(prompts[j]) :].tolist()
                if eos_id is not None and eos_id in gen:
                    gen = gen[: gen.index(eos_id)]
                outs[j] = gen
    return outs
