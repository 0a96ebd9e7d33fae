"""Evaluation: accuracy, backdoor attack success rate, loss-threshold membership inference, parameter distance."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["accuracy", "backdoor_asr", "mia_auc", "param_distance", "auc"]


def _stack(models: torch.Tensor) -> torch.Tensor:
    w = torch.as_tensor(models, dtype=torch.float64)
    return w.unsqueeze(0) if w.dim() == 1 else w


def accuracy(model, models: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """Per-node accuracy of ``models`` ``(n, p)`` (or one ``(p,)``) on ``(X, y)``."""
    return (model.predict(_stack(models), X) == y).double().mean(1).numpy()


def backdoor_asr(model, models: torch.Tensor, X_triggered: torch.Tensor, target: int) -> np.ndarray:
    """Per-node attack success rate: the fraction of triggered inputs (whose true class is not ``target``) that the
    model assigns to ``target``."""
    if X_triggered.shape[0] < 1:
        raise ValueError("X_triggered must hold at least one triggered input")
    return (model.predict(_stack(models), X_triggered) == int(target)).double().mean(1).numpy()


def auc(members: np.ndarray, non_members: np.ndarray) -> float:
    """``P(score_member > score_non_member) + 0.5 P(tie)`` (the Mann-Whitney form of the ROC AUC)."""
    m, o = np.asarray(members, float).ravel(), np.asarray(non_members, float).ravel()
    if m.size == 0 or o.size == 0:
        raise ValueError("members and non_members must both be non-empty")
    from scipy.stats import rankdata

    r = rankdata(np.concatenate([m, o]))
    return float((r[: m.size].sum() - m.size * (m.size + 1) / 2) / (m.size * o.size))


def mia_auc(
    model,
    models: torch.Tensor,
    members: tuple[torch.Tensor, torch.Tensor],
    non_members: tuple[torch.Tensor, torch.Tensor],
    stratify: bool = True,
) -> np.ndarray:
    """Per-node AUC of the loss-threshold membership attack (score ``-loss``; Yeom et al. 2018): 0.5 when members'
    and non-members' losses are alike, 1 when every member has lower loss than every non-member.

    ``stratify``: compare members with non-members of the same class only and average the per-class AUCs weighted by
    the members' class counts (classes without non-members are skipped), so that a client whose classes are merely
    easier or harder than average does not look like a member (label skew confounds the pooled AUC)."""
    w = _stack(models)
    (Xm, ym), (Xo, yo) = members, non_members
    with torch.no_grad():
        lm = model.losses(w, Xm, ym).numpy()
        lo = model.losses(w, Xo, yo).numpy()
    if not stratify:
        return np.array([auc(-a, -b) for a, b in zip(lm, lo)])
    ym, yo = np.asarray(ym), np.asarray(yo)
    classes = [k for k in np.unique(ym) if (yo == k).any()]
    if not classes:
        raise ValueError("stratify=True needs non-members of at least one of the members' classes")
    wts = np.array([(ym == k).sum() for k in classes], dtype=float)
    out = [[auc(-a[ym == k], -b[yo == k]) for k in classes] for a, b in zip(lm, lo)]
    return np.array(out) @ (wts / wts.sum())


def param_distance(A: torch.Tensor, B: torch.Tensor) -> float:
    """Frobenius distance ``||A - B||_F`` of two stacks of parameters of the same shape."""
    A, B = torch.as_tensor(A), torch.as_tensor(B)
    if A.shape != B.shape:
        raise ValueError(f"A and B must have the same shape, got {tuple(A.shape)} and {tuple(B.shape)}")
    return float((A - B).norm())
