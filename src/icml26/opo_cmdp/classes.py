"""Finite realizable function classes and the two offline oracles (least squares, log loss).

A class is a list of candidate parameters and one vectorised map ``fn(param, contexts) -> predictions``:
``FiniteFunctionClass`` predicts mean losses ``[n, H, S, A]`` in [0, 1], ``FiniteDynamicsClass`` next-state
distributions ``[n, H, S, A, S]``.  The oracles are pure functions of the class and logged data and return the
index of the minimiser; ties go to the LOWEST index (``np.argmin``), which the experiment uses to place
misleading candidates first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["FiniteFunctionClass", "FiniteDynamicsClass", "least_squares_oracle", "log_loss_oracle"]

LOG_FLOOR = 1e-12  # probabilities are floored here inside the log loss (a zero-probability transition costs 27.6)


class _FiniteClass:
    kind = "function"

    def __init__(
        self, params: Sequence[Any], fn: Callable[[Any, np.ndarray], np.ndarray], context_dim: int | None = None
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable (param, contexts) -> predictions, got {type(fn).__name__}")
        params = list(params)
        if not params:
            raise ValueError("params must hold at least one candidate")
        if context_dim is not None and (
            isinstance(context_dim, bool) or not isinstance(context_dim, int) or context_dim < 1
        ):
            raise ValueError(f"context_dim must be a positive integer or None, got {context_dim!r}")
        self.params, self.fn, self.context_dim = params, fn, context_dim

    def __len__(self) -> int:
        return len(self.params)

    def _contexts(self, contexts: np.ndarray) -> np.ndarray:
        C = np.asarray(contexts, dtype=float)
        if C.ndim != 2:
            raise ValueError(f"contexts must have shape [n, context_dim], got {C.shape}")
        if self.context_dim is not None and C.shape[1] != self.context_dim:
            raise ValueError(f"contexts must have {self.context_dim} features (context_dim), got {C.shape[1]}")
        return C

    def predict(self, contexts: np.ndarray) -> np.ndarray:
        """Predictions of every candidate: ``[K, n, ...]`` for contexts ``[n, context_dim]``."""
        C = self._contexts(contexts)
        out = []
        for k, p in enumerate(self.params):
            y = np.asarray(self.fn(p, C), dtype=float)
            if y.ndim < 1 or y.shape[0] != C.shape[0]:
                raise ValueError(
                    f"fn of candidate {k} returned shape {y.shape}; its first axis must be the {C.shape[0]} contexts"
                )
            if out and y.shape != out[0].shape:
                raise ValueError(f"fn of candidate {k} returned shape {y.shape}, candidate 0 returned {out[0].shape}")
            self._validate(y, k)
            out.append(y)
        return np.stack(out)


class FiniteFunctionClass(_FiniteClass):
    """Finite class ``F`` of mean-loss functions ``f(c, h, s, a) in [0, 1]``: ``fn(param, C) -> [n, H, S, A]``."""

    def _validate(self, y: np.ndarray, k: int) -> None:
        if y.ndim != 4:
            raise ValueError(f"fn of candidate {k} must return [n, H, S, A] mean losses, got shape {y.shape}")
        if not np.all(np.isfinite(y)) or y.min() < 0.0 or y.max() > 1.0:
            raise ValueError(f"fn of candidate {k} returned mean losses outside [0, 1]")


class FiniteDynamicsClass(_FiniteClass):
    """Finite class ``P`` of layered dynamics ``P(s'|c, h, s, a)``: ``fn(param, C) -> [n, H, S, A, S]`` (rows sum
    to 1)."""

    def _validate(self, y: np.ndarray, k: int) -> None:
        if y.ndim != 5 or y.shape[-1] != y.shape[-3]:
            raise ValueError(f"fn of candidate {k} must return [n, H, S, A, S] distributions, got shape {y.shape}")
        if not np.all(np.isfinite(y)) or y.min() < 0.0 or not np.allclose(y.sum(-1), 1.0, atol=1e-8):
            raise ValueError(f"fn of candidate {k} returned rows that are not probability distributions")


def _rows(data: Mapping[str, Any], keys: Sequence[str]) -> dict[str, np.ndarray]:
    missing = [k for k in keys if k not in data]
    if missing:
        raise ValueError(f"data is missing {missing} (needs {list(keys)})")
    out = {k: np.asarray(data[k]) for k in keys}
    n = len(out["h"])
    if any(len(v) != n for v in out.values()):
        raise ValueError(f"data arrays must have equal length, got { {k: len(v) for k, v in out.items()} }")
    return out


def _unique_predictions(cls: _FiniteClass, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    C = np.asarray(contexts, dtype=float)
    if C.ndim != 2:
        raise ValueError(f"data['context'] must have shape [n, context_dim], got {C.shape}")
    U, inv = np.unique(C, axis=0, return_inverse=True)
    return cls.predict(U), inv.ravel()


def least_squares_oracle(F: FiniteFunctionClass, data: Mapping[str, Any]) -> int:
    """``argmin_{f in F} sum_i (f(c_i, h_i, s_i, a_i) - l_i)^2`` (lowest index on ties; index 0 on no data).

    ``data``: arrays ``context [n, d]``, ``h``, ``s``, ``a`` (ints) and ``loss`` (observed losses).
    """
    d = _rows(data, ("context", "h", "s", "a", "loss"))
    if len(d["h"]) == 0:
        return 0
    pred, inv = _unique_predictions(F, d["context"])
    fx = pred[:, inv, d["h"], d["s"], d["a"]]
    return int(np.argmin(np.sum((fx - d["loss"][None].astype(float)) ** 2, axis=1)))


def log_loss_oracle(P: FiniteDynamicsClass, data: Mapping[str, Any]) -> int:
    """``argmax_{P in P} sum_i log P(s'_i | c_i, h_i, s_i, a_i)`` (lowest index on ties; index 0 on no data).

    ``data``: arrays ``context [n, d]``, ``h``, ``s``, ``a``, ``next_state``; rows with ``next_state < 0`` (the
    last layer) are ignored.  Probabilities are floored at ``LOG_FLOOR``.
    """
    d = _rows(data, ("context", "h", "s", "a", "next_state"))
    keep = d["next_state"] >= 0
    if not keep.any():
        return 0
    d = {k: v[keep] for k, v in d.items()}
    pred, inv = _unique_predictions(P, d["context"])
    px = pred[:, inv, d["h"], d["s"], d["a"], d["next_state"]]
    return int(np.argmin(-np.sum(np.log(np.maximum(px, LOG_FLOOR)), axis=1)))
