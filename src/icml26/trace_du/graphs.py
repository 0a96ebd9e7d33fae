"""Communication graphs and gossip matrices: ``ring``, ``erdos_renyi``, ``metropolis_weights``, ``remove_nodes``.

Graphs are symmetric 0/1 adjacency matrices (``numpy`` ``(n, n)``, zero diagonal); gossip matrices are
symmetric, nonnegative and doubly stochastic.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

__all__ = ["ring", "erdos_renyi", "metropolis_weights", "remove_nodes", "is_connected", "check_gossip_matrix"]


def _check_n(n: int, low: int = 2) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < low:
        raise ValueError(f"n must be an integer >= {low}, got {n!r}")
    return int(n)


def ring(n: int, chords: int = 0) -> np.ndarray:
    """Adjacency of the ring ``i -- i+1 (mod n)`` plus ``chords`` long-range edges ``i -- i + n//2`` for
    ``i = 0, n//chords, ...`` (``0 <= chords <= n // 2``)."""
    n = _check_n(n)
    if isinstance(chords, bool) or not isinstance(chords, (int, np.integer)) or not 0 <= chords <= n // 2:
        raise ValueError(f"chords must be an integer in [0, {n // 2}], got {chords!r}")
    A = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        A[i, (i + 1) % n] = A[(i + 1) % n, i] = 1
    for k in range(int(chords)):
        i = (k * n) // (2 * max(int(chords), 1))
        j = (i + n // 2) % n
        if i != j:
            A[i, j] = A[j, i] = 1
    return A


def erdos_renyi(n: int, p: float, seed: int = 0, max_tries: int = 1000) -> np.ndarray:
    """Adjacency of a connected Erdos-Renyi graph G(n, p): each edge independently with probability ``p``,
    redrawn (from the same seeded generator) until connected."""
    n = _check_n(n)
    if not 0.0 < float(p) <= 1.0:
        raise ValueError(f"p must lie in (0, 1], got {p!r}")
    rng = np.random.default_rng(seed)
    for _ in range(max_tries):
        U = np.triu(rng.random((n, n)) < p, 1)
        A = (U | U.T).astype(np.int64)
        if is_connected(A):
            return A
    raise ValueError(f"no connected G({n}, {p}) found in {max_tries} draws; raise p")


def is_connected(A: np.ndarray) -> bool:
    """Whether the undirected graph with adjacency (or weight) matrix ``A`` is connected (BFS on ``A > 0``)."""
    A = np.asarray(A)
    n = A.shape[0]
    if n == 0:
        return False
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(A[i] > 0):
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    return len(seen) == n


def metropolis_weights(adjacency: np.ndarray) -> np.ndarray:
    """Metropolis-Hastings gossip matrix: ``W_ij = 1 / (1 + max(deg_i, deg_j))`` on edges,
    ``W_ii = 1 - sum_{j != i} W_ij``; symmetric and doubly stochastic."""
    A = np.asarray(adjacency)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"adjacency must be a square matrix, got shape {A.shape}")
    if not np.array_equal(A, A.T) or np.any((A != 0) & (A != 1)):
        raise ValueError("adjacency must be a symmetric 0/1 matrix")
    A = A.astype(float).copy()
    np.fill_diagonal(A, 0.0)
    deg = A.sum(1)
    W = np.where(A > 0, 1.0 / (1.0 + np.maximum(deg[:, None], deg[None, :])), 0.0)
    np.fill_diagonal(W, 1.0 - W.sum(1))
    return W


def check_gossip_matrix(W: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Return ``W`` as float array after checking it is square, symmetric, nonnegative, rows summing to 1."""
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 1:
        raise ValueError(f"W must be a square (n, n) matrix, got shape {W.shape}")
    if not np.allclose(W, W.T, atol=tol) or np.any(W < -tol) or not np.allclose(W.sum(1), 1.0, atol=1e-8):
        raise ValueError("W must be symmetric, nonnegative and doubly stochastic (rows and columns sum to 1)")
    return W


def _nodes(nodes: Iterable[int], n: int, name: str = "nodes") -> tuple[int, ...]:
    if isinstance(nodes, (int, np.integer)):
        nodes = (int(nodes),)
    out = tuple(sorted({int(c) for c in nodes}))
    if any(c < 0 or c >= n for c in out):
        raise ValueError(f"{name} must be node indices in [0, {n - 1}], got {sorted(out)}")
    return out


def remove_nodes(W: np.ndarray, nodes: Iterable[int]) -> np.ndarray:
    """Gossip matrix on ``V \\ U`` (kept nodes in increasing order): off-diagonal weights unchanged, removed
    weight folded into the diagonal, ``W^{-U}_ii = W_ii + sum_{c in U} W_ic``.  Symmetric and doubly stochastic
    again.  Warns when ``V \\ U`` is disconnected; raises when ``U`` is every node."""
    W = check_gossip_matrix(W)
    n = W.shape[0]
    U = _nodes(nodes, n)
    keep = [i for i in range(n) if i not in U]
    if not keep:
        raise ValueError(f"cannot remove every node: nodes={list(U)} covers all {n} nodes")
    Wk = W[np.ix_(keep, keep)].copy()
    Wk[np.diag_indices(len(keep))] += W[np.ix_(keep, list(U))].sum(1) if U else 0.0
    if len(keep) > 1 and not is_connected(Wk - np.diag(np.diag(Wk))):
        warnings.warn(f"removing nodes {list(U)} disconnects the graph", RuntimeWarning, stacklevel=2)
    return Wk
