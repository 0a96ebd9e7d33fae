"""Block-diffusion training of the tiny model on the procedural tasks, with an on-disk checkpoint cache.

Objective (SDAR-style, all blocks at once): the input is ``[prompt | clean answer | noisy answer]``.  Each
answer block ``b`` of the noisy copy has its tokens masked independently with probability ``t_b ~ U(eps, 1]``;
a noisy block attends bidirectionally to itself and to the prompt and clean blocks ``< b``; the clean copy is
block-causal.  Loss: cross-entropy on the masked tokens weighted by ``1 / t_b``, averaged over answer tokens.
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
from .tasks import ANSWER_LEN, MASK, PROMPT_LEN, TASKS, VOCAB_SIZE, sample_tasks

__all__ = ["TrainConfig", "train_block_diffusion", "load_or_train", "training_mask", "default_cache_dir"]


@dataclass(frozen=True)
class TrainConfig:
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

    def model(self) -> BlockDiffusionLM:
        return BlockDiffusionLM(
            VOCAB_SIZE, self.n_layer, self.n_embd, self.n_head, self.n_kv_head, max_len=PROMPT_LEN + ANSWER_LEN
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


def train_block_diffusion(cfg: TrainConfig, log=None) -> tuple[BlockDiffusionLM, dict]:
    """Train a fresh model with ``cfg``; returns ``(model in eval mode, info)`` with the loss curve."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model = cfg.model()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.98))
    P, G, B = PROMPT_LEN, ANSWER_LEN, cfg.block_size
    mask, pos = training_mask(P, G, B)
    nb = G // B
    losses, t0 = [], time.process_time()
    model.train()
    for step in range(cfg.steps):
        lr = cfg.lr * min(1.0, (step + 1) / 50) * 0.5 * (1 + np.cos(np.pi * step / cfg.steps))
        for g in opt.param_groups:
            g["lr"] = lr
        d = sample_tasks(rng, cfg.batch_size, cfg.tasks)
        prompt, ans = torch.from_numpy(d["prompt"]), torch.from_numpy(d["answer"])
        n = ans.shape[0]
        t = cfg.min_t + (1 - cfg.min_t) * torch.rand(n, nb)
        t_tok = t.repeat_interleave(B, dim=1)
        masked = torch.rand(n, G) < t_tok
        noisy = torch.where(masked, MASK, ans)
        ids = torch.cat((prompt, ans, noisy), 1)
        logits = model(ids, mask, pos.expand(n, -1))[:, P + G :]
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ans.reshape(-1), reduction="none").view(n, G)
        loss = (ce * masked / t_tok).sum() / (n * G)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if log is not None and step % 200 == 0:
            log(f"step {step} loss {np.mean(losses[-50:]):.3f}")
    model.eval()
    return model, {
        "loss_curve": losses[::10],
        "final_loss": float(np.mean(losses[-50:])),
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
