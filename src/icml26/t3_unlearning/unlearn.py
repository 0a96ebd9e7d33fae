"""Fine-tuning baselines for unlearning, and a scorer that evaluates any plain causal LM like a T3Unlearner.

Each baseline copies the model and fine-tunes the copy on answer tokens only (the prompt is context):

* gradient ascent (GA): maximise the forget NLL, ``L = -NLL_forget``;
* GradDiff: ``L = -NLL_forget + NLL_retain``;
* NPO (Zhang et al. 2024): ``L = (2 / beta) E_forget log(1 + (pi_theta(y|x) / pi_ref(y|x))^beta) + alpha NLL_retain``
  with ``pi`` the sequence probability of the answer and ``pi_ref`` the frozen starting model.  At
  ``pi_theta = pi_ref`` each forget term is ``(2 / beta) log 2``; as ``beta -> 0`` its gradient tends to GA's.

Batches are drawn from the forget set (``epochs`` passes over it); GradDiff and NPO pair each forget batch with a
retain batch of the same size.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

from .unlearner import BaseFeatures, answer_features, greedy_generate

__all__ = ["gradient_ascent", "grad_diff", "npo", "npo_loss", "answer_logprobs", "PlainLM"]

Pair = tuple[Sequence[int], Sequence[int]]


def _batch(pairs: Sequence[Pair], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``ids [B, L]`` of prompt + answer and a mask ``[B, L - 1]`` of positions predicting answer
    tokens."""
    seqs = [list(x) + list(y) for x, y in pairs]
    L = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), L), pad_id, dtype=torch.long)
    mask = torch.zeros(len(seqs), L - 1)
    for r, ((x, y), s) in enumerate(zip(pairs, seqs, strict=True)):
        ids[r, : len(s)] = torch.tensor(s)
        mask[r, len(x) - 1 : len(x) - 1 + len(y)] = 1.0
    return ids, mask


def answer_logprobs(model: nn.Module, pairs: Sequence[Pair]) -> torch.Tensor:
    """Sum of ``log pi(y_t | x, y_<t)`` over answer tokens, per pair ``[B]`` (differentiable)."""
    ids, mask = _batch(pairs)
    logits = model(ids[:, :-1])
    logp = F.log_softmax(logits.float(), dim=-1).gather(2, ids[:, 1:, None]).squeeze(2)
    return (logp * mask).sum(1)


def _mean_nll(model: nn.Module, pairs: Sequence[Pair]) -> torch.Tensor:
    ids, mask = _batch(pairs)
    logits = model(ids[:, :-1])
    nll = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
    return (nll.view_as(mask) * mask).sum() / mask.sum()


def npo_loss(logp_theta: torch.Tensor, logp_ref: torch.Tensor, beta: float = 0.1) -> torch.Tensor:
    """``(2 / beta) mean log(1 + exp(beta (log pi_theta - log pi_ref)))`` over forget sequences."""
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    return (2.0 / beta) * F.softplus(beta * (logp_theta - logp_ref)).mean()


def _check(forget, retain, lr, epochs, batch_size, need_retain: bool):
    if not forget:
        raise ValueError("forget must be a non-empty sequence of (prompt_ids, answer_ids) pairs")
    if need_retain and not retain:
        raise ValueError("retain must be a non-empty sequence of (prompt_ids, answer_ids) pairs")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr!r}")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")


def _finetune(model, forget, retain, loss_fn, lr, epochs, batch_size, seed, callback=None):
    student = copy.deepcopy(model)
    student.train()
    for p in student.parameters():
        p.requires_grad_(True)
    opt = torch.optim.AdamW(student.parameters(), lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(int(seed))
    t0 = time.perf_counter()
    for epoch in range(epochs):
        perm = torch.randperm(len(forget), generator=gen).tolist()
        for s in range(0, len(forget), batch_size):
            fb = [forget[j] for j in perm[s : s + batch_size]]
            rb = None
            if retain:
                rb = [retain[j] for j in torch.randint(0, len(retain), (len(fb),), generator=gen).tolist()]
            loss = loss_fn(student, fb, rb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            opt.step()
        if callback is not None:
            elapsed = time.perf_counter() - t0
            student.eval()
            callback(epoch + 1, student, elapsed)
            student.train()
            t0 = time.perf_counter() - elapsed  # evaluation time is not training time
    student.eval()
    student.train_time_ = time.perf_counter() - t0
    return student


def gradient_ascent(
    model,
    forget: Sequence[Pair],
    retain: Sequence[Pair] | None = None,
    *,
    lr: float = 1e-4,
    epochs: int = 5,
    batch_size: int = 32,
    seed: int = 0,
    callback=None,
) -> nn.Module:
    """GA: a fine-tuned copy of ``model`` after ``epochs`` passes of ascent on the forget answers' NLL.

    ``callback(epoch, model, train_seconds)`` is called after every epoch (for per-epoch evaluation).
    ``retain`` is accepted for a uniform signature and unused.
    """
    _check(forget, retain, lr, epochs, batch_size, need_retain=False)
    return _finetune(model, forget, None, lambda m, fb, rb: -_mean_nll(m, fb), lr, epochs, batch_size, seed, callback)


def grad_diff(
    model,
    forget: Sequence[Pair],
    retain: Sequence[Pair],
    *,
    lr: float = 1e-4,
    epochs: int = 5,
    batch_size: int = 32,
    seed: int = 0,
    callback=None,
) -> nn.Module:
    """GradDiff: ascent on the forget NLL plus descent on the retain NLL (equal weights)."""
    _check(forget, retain, lr, epochs, batch_size, need_retain=True)
    return _finetune(
        model,
        forget,
        retain,
        lambda m, fb, rb: _mean_nll(m, rb) - _mean_nll(m, fb),
        lr,
        epochs,
        batch_size,
        seed,
        callback,
    )


def npo(
    model,
    forget: Sequence[Pair],
    retain: Sequence[Pair],
    *,
    lr: float = 1e-4,
    epochs: int = 5,
    batch_size: int = 32,
    seed: int = 0,
    beta: float = 0.1,
    alpha: float = 1.0,
    callback=None,
) -> nn.Module:
    """NPO with a retain term: ``npo_loss(forget) + alpha NLL_retain``; the reference is the starting model."""
    _check(forget, retain, lr, epochs, batch_size, need_retain=alpha > 0)
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    ref = copy.deepcopy(model).eval()

    def loss(m, fb, rb):
        with torch.no_grad():
            lref = answer_logprobs(ref, fb)
        out = npo_loss(answer_logprobs(m, fb), lref, beta)
        return out + alpha * _mean_nll(m, rb) if alpha > 0 else out

    return _finetune(model, forget, retain if alpha > 0 else None, loss, lr, epochs, batch_size, seed, callback)


class PlainLM:
    """A plain causal LM with the evaluation interface of :class:`T3Unlearner` (``token_logprobs``, ``generate``)."""

    def __init__(self, model: nn.Module) -> None:
        self.features = BaseFeatures(model)

    @torch.no_grad()
    def token_logprobs(self, x_ids, y_ids) -> list[torch.Tensor]:
        """``log p(y_t | x, y_<t)`` for each answer token; one tensor per (prompt, answer) pair."""
        f = answer_features(self.features, list(zip(x_ids, y_ids, strict=True)), batch_size=256)
        logp = F.log_softmax(f["logits"], dim=-1).gather(1, f["targets"][:, None]).squeeze(1)
        return [logp[a:b] for a, b in f["spans"]]

    def generate(self, x_ids, max_new_tokens: int, eos_id: int | None = None) -> list[list[int]]:
        return greedy_generate(self.features, list(x_ids), max_new_tokens, eos_id)
