"""Continual-learning metrics over an accuracy matrix ``a[t, j]`` = accuracy on task ``j`` after training task ``t``.

Definitions as in Chaudhry et al. (2018) and Avalanche: ``A_t = mean_{j<=t} a[t, j]``; average incremental
accuracy ``mean_t A_t``; forgetting ``F = mean_{j<T} max_{j<=l<T} a[l, j] - a[T, j]``; backward transfer
``BWT = mean_{j<T} a[T, j] - a[j, j]`` (``T`` the last task, 0-based ``T - 1`` in code).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "accuracy_matrix",
    "average_accuracy",
    "average_incremental_accuracy",
    "forgetting",
    "backward_transfer",
    "old_task_accuracy",
]


def _square(a) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 1:
        raise ValueError(f"acc_matrix must be a square (T, T) array with T >= 1, got shape {a.shape}")
    return a


def accuracy_matrix(y_true: Sequence[np.ndarray], y_pred: Sequence[Sequence[np.ndarray]]) -> np.ndarray:
    """``a[t, j] = mean(y_pred[t][j] == y_true[j])``: ``y_true[j]`` the labels of task ``j``'s test set and
    ``y_pred[t][j]`` the predictions on it after training task ``t`` (one row per stage, all ``T`` tasks)."""
    T = len(y_true)
    if len(y_pred) != T or any(len(row) != T for row in y_pred):
        raise ValueError(f"y_pred must be a {T} x {T} nested sequence (stage x task) matching y_true")
    a = np.zeros((T, T))
    for t in range(T):
        for j in range(T):
            yt, yp = np.asarray(y_true[j]), np.asarray(y_pred[t][j])
            if yt.shape != yp.shape:
                raise ValueError(f"y_pred[{t}][{j}] has shape {yp.shape} but y_true[{j}] has {yt.shape}")
            a[t, j] = float(np.mean(yt == yp)) if yt.size else float("nan")
    return a


def average_accuracy(acc_matrix, t: int | None = None) -> float:
    """``A_t = mean_{j<=t} a[t, j]`` (default ``t`` = the last task)."""
    a = _square(acc_matrix)
    t = a.shape[0] - 1 if t is None else int(t)
    if not 0 <= t < a.shape[0]:
        raise ValueError(f"t must lie in [0, {a.shape[0] - 1}], got {t}")
    return float(np.mean(a[t, : t + 1]))


def average_incremental_accuracy(acc_matrix) -> float:
    """``mean_t A_t`` over all stages."""
    a = _square(acc_matrix)
    return float(np.mean([average_accuracy(a, t) for t in range(a.shape[0])]))


def forgetting(acc_matrix) -> float:
    """``mean_{j<T} (max_{j<=l<T} a[l, j] - a[T, j])``; 0 for a single task."""
    a = _square(acc_matrix)
    T = a.shape[0] - 1
    if T == 0:
        return 0.0
    return float(np.mean([a[j:T, j].max() - a[T, j] for j in range(T)]))


def backward_transfer(acc_matrix) -> float:
    """``mean_{j<T} (a[T, j] - a[j, j])``; 0 for a single task (negative = forgetting)."""
    a = _square(acc_matrix)
    T = a.shape[0] - 1
    if T == 0:
        return 0.0
    return float(np.mean([a[T, j] - a[j, j] for j in range(T)]))


def old_task_accuracy(acc_matrix) -> float:
    """Accuracy on the old tasks after the last one: ``mean_{j<T} a[T, j]`` (nan for a single task)."""
    a = _square(acc_matrix)
    T = a.shape[0] - 1
    return float(np.mean(a[T, :T])) if T > 0 else float("nan")
