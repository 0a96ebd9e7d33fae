"""Exact dynamic programming on a layered finite MDP (batched over leading axes).

Shapes: a policy ``pi[..., h, s, a]`` (rows sum to 1), a mean loss ``f[..., h, s, a]`` in [0, 1] and dynamics
``P[..., h, s, a, s']`` (the next layer's state distribution; the last layer's rows are never used).  Any leading
axes (a batch of contexts) broadcast.  Losses are minimised: ``V = E[sum_h f(s_h, a_h)]`` from ``s_0``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["occupancy", "evaluate_policy", "optimal_policy", "check_tabular"]


def check_tabular(pi: np.ndarray | None = None, f: np.ndarray | None = None, P: np.ndarray | None = None) -> None:
    """Raise ``ValueError`` naming the argument when shapes disagree (``pi``/``f``: [..., H, S, A], ``P``:
    [..., H, S, A, S])."""
    ref = None
    for name, x in (("pi", pi), ("f", f)):
        if x is None:
            continue
        if x.ndim < 3:
            raise ValueError(f"{name} must have shape [..., H, S, A], got {x.shape}")
        ref = x.shape[-3:] if ref is None else ref
        if x.shape[-3:] != ref:
            raise ValueError(f"{name} has trailing shape {x.shape[-3:]}, expected {ref}")
    if P is not None:
        if P.ndim < 4 or P.shape[-1] != P.shape[-3]:
            raise ValueError(f"P must have shape [..., H, S, A, S], got {P.shape}")
        if ref is not None and P.shape[-4:-1] != ref:
            raise ValueError(f"P has shape {P.shape}, expected [..., {ref[0]}, {ref[1]}, {ref[2]}, {ref[1]}]")


def _check_stochastic(name: str, x: np.ndarray, what: str, tol: float = 1e-6) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``x`` is non-negative and its last axis sums to 1 (to ``tol``)."""
    if x.size == 0:
        return
    if not np.all(np.isfinite(x)) or np.min(x) < -tol:
        raise ValueError(f"{name} must hold non-negative finite probabilities ({what}), got min {np.min(x):.3g}")
    dev = float(np.max(np.abs(np.sum(x, axis=-1) - 1.0)))
    if dev > tol:
        raise ValueError(f"{name} rows must sum to 1 ({what}), got a row sum off by {dev:.3g}")


def occupancy(pi: np.ndarray, P: np.ndarray, s0: int = 0) -> np.ndarray:
    """State-action occupancy ``q[..., h, s, a] = Pr(s_h = s, a_h = a)`` of ``pi`` under ``P`` from ``s_0``.

    Forward recursion: ``d_0 = e_{s0}``, ``q_h(s, a) = d_h(s) pi_h(a|s)``,
    ``d_{h+1}(s') = sum_{s,a} q_h(s, a) P_h(s'|s, a)``.  Each layer of ``q`` sums to 1.  ``pi`` and the rows of
    ``P`` used (layers ``0..H-2``) must be probability distributions (``ValueError`` naming the argument).
    """
    pi, P = np.asarray(pi, dtype=float), np.asarray(P, dtype=float)
    check_tabular(pi=pi, P=P)
    H, S, _ = pi.shape[-3:]
    if not 0 <= s0 < S:
        raise ValueError(f"s0 must lie in [0, {S}), got {s0}")
    _check_stochastic("pi", pi, "pi[..., h, s, :] over actions")
    _check_stochastic("P", P[..., : H - 1, :, :, :], "P[..., h, s, a, :] over next states, layers 0..H-2")
    return _occupancy(pi, P, s0)


def _occupancy(pi: np.ndarray, P: np.ndarray, s0: int) -> np.ndarray:
    """:func:`occupancy` without the input checks (the learners' inner loop; float arrays of matching shapes)."""
    H, S, _ = pi.shape[-3:]
    batch = np.broadcast_shapes(pi.shape[:-3], P.shape[:-4])
    d = np.zeros(batch + (S,))
    d[..., s0] = 1.0
    q = np.empty(batch + pi.shape[-3:])
    for h in range(H):
        q[..., h, :, :] = d[..., :, None] * pi[..., h, :, :]
        if h + 1 < H:
            d = np.einsum("...sa,...sat->...t", q[..., h, :, :], P[..., h, :, :, :])
    return q


def evaluate_policy(pi: np.ndarray, f: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Policy evaluation by backward induction: ``V[..., h, s]`` and ``Q[..., h, s, a]`` of ``pi``.

    ``Q_h(s, a) = f_h(s, a) + sum_{s'} P_h(s'|s, a) V_{h+1}(s')``, ``V_h(s) = sum_a pi_h(a|s) Q_h(s, a)``,
    ``V_H = 0``.  The value from the start state is ``V[..., 0, s0]``.  ``pi`` and the rows of ``P`` used (layers
    ``0..H-2``) must be probability distributions (``ValueError`` naming the argument).
    """
    pi, f, P = (np.asarray(x, dtype=float) for x in (pi, f, P))
    check_tabular(pi=pi, f=f, P=P)
    H = f.shape[-3]
    _check_stochastic("pi", pi, "pi[..., h, s, :] over actions")
    _check_stochastic("P", P[..., : H - 1, :, :, :], "P[..., h, s, a, :] over next states, layers 0..H-2")
    return _evaluate_policy(pi, f, P)


def _evaluate_policy(pi: np.ndarray, f: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`evaluate_policy` without the input checks (the learners' inner loop)."""
    H = f.shape[-3]
    batch = np.broadcast_shapes(pi.shape[:-3], f.shape[:-3], P.shape[:-4])
    Q = np.empty(batch + f.shape[-3:])
    V = np.empty(batch + f.shape[-3:-1])
    nxt = np.zeros(batch + (f.shape[-2],))
    for h in range(H - 1, -1, -1):
        Q[..., h, :, :] = f[..., h, :, :] + (
            np.einsum("...sat,...t->...sa", P[..., h, :, :, :], nxt) if h + 1 < H else 0.0
        )
        V[..., h, :] = np.sum(pi[..., h, :, :] * Q[..., h, :, :], axis=-1)
        nxt = V[..., h, :]
    return V, Q


def optimal_policy(f: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Optimal (loss-minimising) deterministic policy by backward induction; returns ``(pi, V, Q)``.

    ``Q*_h(s, a) = f_h(s, a) + sum_{s'} P_h(s'|s, a) V*_{h+1}(s')``, ``V*_h(s) = min_a Q*_h(s, a)``; ties go to
    the lowest action index.
    """
    f, P = np.asarray(f, dtype=float), np.asarray(P, dtype=float)
    check_tabular(f=f, P=P)
    H, S, A = f.shape[-3:]
    batch = np.broadcast_shapes(f.shape[:-3], P.shape[:-4])
    Q = np.empty(batch + (H, S, A))
    V = np.empty(batch + (H, S))
    pi = np.zeros(batch + (H, S, A))
    nxt = np.zeros(batch + (S,))
    for h in range(H - 1, -1, -1):
        Q[..., h, :, :] = f[..., h, :, :] + (
            np.einsum("...sat,...t->...sa", P[..., h, :, :, :], nxt) if h + 1 < H else 0.0
        )
        best = np.argmin(Q[..., h, :, :], axis=-1)
        np.put_along_axis(pi[..., h, :, :], best[..., None], 1.0, axis=-1)
        V[..., h, :] = np.take_along_axis(Q[..., h, :, :], best[..., None], axis=-1)[..., 0]
        nxt = V[..., h, :]
    return pi, V, Q
