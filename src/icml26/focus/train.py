"""Block-diffusion training of the tiny model on the procedural tasks, with an on-disk checkpoint cache.

Objective (SDAR-style, all blocks at once): the input is ``[prompt | clean answer | noisy answer]``.  Each
answer block ``b`` of the noisy copy has its tokens masked independently with probability ``t_b ~ U(eps, 1]``;
a noisy block attends bidirectionally to itself and to the prompt and clean blocks ``< b``; the clean copy is
block-causal.  Loss: cross-entropy on the masked tokens weighted by ``1 / t_b``, averaged over answer tokens.
When the answer is a single block no noisy block reads the clean copy, so it is left out (same loss, less work).

AR-then-diffusion (``ar_steps > 0``, the way SDAR models are made from an AR backbone): the model is first
trained as a causal next-token LM on the task text ``[prompt | answer]`` (``ar_steps`` steps, loss
``-log p(w_{t+1} | w_{<=t})`` over every position), then adapted with the block-diffusion objective for ``steps``
more steps (a fresh optimiser and schedule).  Our adaptation keeps the diffusion head unshifted (a masked token
is predicted at its own position), unlike Dream's shifted head.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from icml26.core import atomic_write_bytes

from .model import BlockDiffusionLM
from .tasks import (
    ANSWER_LEN,
    FAMILIES,
    FAMILY_PROMPT_LEN,
    MASK,
    PROMPT_LEN,
    TASKS,
    VOCAB_SIZE,
    sample_family,
)

__all__ = [
    "TrainConfig",
    "train_block_diffusion",
    "pretrain_autoregressive",
    "load_or_train",
    "training_mask",
    "default_cache_dir",
]


@dataclass(frozen=True)
class TrainConfig:
    """Model sizes and training recipe.

    family: training data, ``"eos"`` (the EOS-padded mix of ``tasks``), ``"xor"`` (reset-XOR chains) or
        ``"xor+eos"`` (a chain with probability ``xor_share``, else an EOS-padded task).
    reset_p: reset probability of the chains; chain_rule: ``"xor"`` or ``"hold"`` (:func:`sample_xor_chain`).
    ar_steps: causal next-token pretraining steps before the ``steps`` block-diffusion steps (0: from scratch).
    loss_weight: ``"1/t"`` (the ELBO weight) or ``"none"`` (mean cross-entropy over the masked tokens).
    """

    n_layer: int = 6
    n_embd: int = 128
    n_head: int = 4
    n_kv_head: int = 2
    block_size: int = 16
    steps: int = 1500
    batch_size: int = 64
    lr: float = 2e-3
    weight_decay: float = 0.01
    min_t: float = 0.05
    tasks: tuple[str, ...] = TASKS
    seed: int = 0
    family: str = "eos"
    reset_p: float = 0.15
    chain_rule: str = "xor"
    loss_weight: str = "1/t"
    xor_share: float = 0.75
    ar_steps: int = 0

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        for name in ("steps", "ar_steps"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        if self.loss_weight not in ("1/t", "none"):
            raise ValueError(f"loss_weight must be '1/t' or 'none', got {self.loss_weight!r}")
        if ANSWER_LEN % self.block_size:
            raise ValueError(f"block_size must divide the answer length {ANSWER_LEN}, got {self.block_size}")

    @property
    def prompt_len(self) -> int:
        return PROMPT_LEN if self.family == "eos" else FAMILY_PROMPT_LEN

    def model(self) -> BlockDiffusionLM:
        return BlockDiffusionLM(
            VOCAB_SIZE, self.n_layer, self.n_embd, self.n_head, self.n_kv_head, max_len=self.prompt_len + ANSWER_LEN
        )

    def sample(self, rng: np.random.Generator, n: int, family: str | None = None) -> dict[str, np.ndarray]:
        """``n`` examples of ``family`` (default: the training family), prompts padded to :attr:`prompt_len`."""
        return sample_family(
            family or self.family, rng, n, self.reset_p, self.xor_share, self.prompt_len, self.chain_rule, self.tasks
        )


def training_mask(prompt_len: int, answer_len: int, block_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention mask (S, S) and positions (S,) of the ``[prompt | clean | noisy]`` training sequence."""
    if answer_len % block_size:
        raise ValueError(f"block_size ({block_size}) must divide answer_len ({answer_len})")
    S = prompt_len + 2 * answer_len
    i = torch.arange(S)
    noisy = i >= prompt_len + answer_len
    rel = torch.where(noisy, i - prompt_len - answer_len, i - prompt_len)
    bid = torch.where(i < prompt_len, 0, 1 + rel.div(block_size, rounding_mode="floor"))
    q_b, k_b, q_n, k_n = bid[:, None], bid[None, :], noisy[:, None], noisy[None, :]
    clean_q = ~q_n & ~k_n & (k_b <= q_b)
    noisy_q = q_n & ((~k_n & (k_b < q_b)) | (k_n & (k_b == q_b)))
    pos = torch.where(noisy, i - answer_len, i)
    return clean_q | noisy_q, pos


def _lr(cfg: TrainConfig, step: int, total: int) -> float:
    return cfg.lr * min(1.0, (step + 1) / 50) * 0.5 * (1 + np.cos(np.pi * step / total))


def _update(model, opt, loss) -> float:
    """One AdamW step on ``loss`` with the gradient norm clipped at 1; returns the loss value."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return float(loss.detach())


def pretrain_autoregressive(model: BlockDiffusionLM, cfg: TrainConfig, rng: np.random.Generator, log=None) -> list:
    """``cfg.ar_steps`` steps of causal next-token training on ``[prompt | answer]``; returns the loss curve."""
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.98))
    S = cfg.prompt_len + ANSWER_LEN
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    losses = []
    model.train()
    for step in range(cfg.ar_steps):
        for g in opt.param_groups:
            g["lr"] = _lr(cfg, step, cfg.ar_steps)
        d = cfg.sample(rng, cfg.batch_size)
        ids = torch.from_numpy(np.concatenate((d["prompt"], d["answer"]), 1))
        logits = model(ids, causal)[:, :-1]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
        losses.append(_update(model, opt, loss))
        if log is not None and step % 200 == 0:
            log(f"AR step {step} loss {np.mean(losses[-50:]):.3f}")
    return losses


def train_block_diffusion(cfg: TrainConfig, log=None) -> tuple[BlockDiffusionLM, dict]:
    """Train a fresh model with ``cfg`` (AR pretraining first if ``cfg.ar_steps``); returns ``(model in eval
    mode, info)`` with the loss curves (every 10th step)."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model = cfg.model()
    t0 = time.process_time()
    ar_losses = pretrain_autoregressive(model, cfg, rng, log) if cfg.ar_steps else []
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.98))
    P, G, B = cfg.prompt_len, ANSWER_LEN, cfg.block_size
    nb = G // B
    clean = nb > 1  # a single block never reads the clean copy
    mask, pos = training_mask(P, G, B)
    if not clean:
        keep = torch.cat((torch.arange(P), torch.arange(P + G, P + 2 * G)))
        mask, pos = mask[keep][:, keep], pos[keep]
    losses = []
    model.train()
    for step in range(cfg.steps):
        for g in opt.param_groups:
            g["lr"] = _lr(cfg, step, cfg.steps)
        d = cfg.sample(rng, cfg.batch_size)
        prompt, ans = torch.from_numpy(d["prompt"]), torch.from_numpy(d["answer"])
        n = ans.shape[0]
        t = cfg.min_t + (1 - cfg.min_t) * torch.rand(n, nb)
        t_tok = t.repeat_interleave(B, dim=1)
        masked = torch.rand(n, G) < t_tok
        noisy = torch.where(masked, MASK, ans)
        ids = torch.cat((prompt, ans, noisy) if clean else (prompt, noisy), 1)
        logits = model(ids, mask, pos.expand(n, -1))[:, -G:]
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ans.reshape(-1), reduction="none").view(n, G)
        w = masked / t_tok if cfg.loss_weight == "1/t" else masked.float()
        loss = (ce * w).sum() / (n * G if cfg.loss_weight == "1/t" else masked.sum().clamp(min=1))
        losses.append(_update(model, opt, loss))
        if log is not None and step % 200 == 0:
            log(f"step {step} loss {np.mean(losses[-50:]):.3f}")
    model.eval()
    return model, {
        "loss_curve": losses[::10],
        "final_loss": float(np.mean(losses[-50:])),
        "ar_loss_curve": ar_losses[::10],
        "ar_final_loss": float(np.mean(ar_losses[-50:])) if ar_losses else None,
        "train_cpu_s": time.process_time() - t0,
    }


def default_cache_dir() -> Path:
    """``$ICML26_CACHE`` or ``$XDG_CACHE_HOME/icml26`` or ``~/.cache/icml26``, plus ``/focus``."""
    root = os.environ.get("ICML26_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "icml26"
    return Path(root) / "focus"


def load_or_train(cfg: TrainConfig, cache_dir: str | Path | None = None, log=None) -> tuple[BlockDiffusionLM, dict]:
    """Load the checkpoint for ``cfg`` from ``cache_dir`` (keyed by a hash of the config) or train and store it."""
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = hashlib.sha256(json.dumps(asdict(cfg), sort_keys=True).encode()).hexdigest()[:16]
    path = cache_dir / f"blockdiff-{key}.pt"
    if path.exists():
        blob = torch.load(path, map_location="cpu", weights_only=False)
        model = cfg.model()
        model.load_state_dict(blob["state_dict"])
        model.eval()
        return model, {**blob["info"], "cached": True}
    model, info = train_block_diffusion(cfg, log)
    buf = io.BytesIO()
    torch.save({"state_dict": model.state_dict(), "info": info, "config": asdict(cfg)}, buf)
    atomic_write_bytes(path, buf.getvalue())
    return model, {**info, "cached": False}
