"""Small graph helpers in the lingam convention: ``B[i, j] != 0`` means the edge ``j -> i``.

Row ``i`` of ``B`` lists the parents of node ``i``; column ``j`` lists the children of node ``j``.  This is the
convention of ``lingam`` (``DirectLiNGAM().adjacency_matrix_``) and of the structural equation ``y = B y + e``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["check_adjacency", "parents", "children", "surrounded_sets", "is_linear_extension", "topological_order"]


def check_adjacency(B, name: str = "adjacency") -> np.ndarray:
    """``B`` as a binary ``(d, d)`` int array; raise ``ValueError`` naming ``name`` if it is not a square DAG."""
    a = np.asarray(B)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be a square (d, d) matrix, got shape {a.shape}")
    if not np.all(np.isfinite(a.astype(float))):
        raise ValueError(f"{name} must be finite")
    a = (np.abs(a.astype(float)) > 0).astype(int)
    if np.any(np.diag(a)):
        raise ValueError(f"{name} must have a zero diagonal (no self-loops)")
    if topological_order(a) is None:
        raise ValueError(f"{name} must be acyclic (lingam convention: {name}[i, j] != 0 means j -> i)")
    return a


def parents(B: np.ndarray, i: int) -> list[int]:
    """Parents of ``i``: ``{j : B[i, j] != 0}``."""
    return [int(j) for j in np.flatnonzero(np.asarray(B)[i])]


def children(B: np.ndarray, j: int) -> list[int]:
    """Children of ``j``: ``{i : B[i, j] != 0}``."""
    return [int(i) for i in np.flatnonzero(np.asarray(B)[:, j])]


def surrounded_sets(B) -> list[tuple[int, ...]]:
    """``sur(i) = {j in pa(i) : ch(i) subset of ch(j)}`` for every node ``i`` (Varici et al. 2023).

    A parent ``j`` of ``i`` that also points into every child of ``i`` cannot be separated from ``i`` by linear
    causal representation learning: the latent ``y_i`` is identified only up to ``c_i y_i + sum_{j in sur(i)}
    a_ij y_j`` (the ``~sur`` equivalence).  A node without children has ``sur(i) = pa(i)``.
    """
    a = np.abs(np.asarray(B, dtype=float)) > 0
    d = a.shape[0]
    out = []
    for i in range(d):
        ch_i = set(np.flatnonzero(a[:, i]).tolist())
        out.append(tuple(int(j) for j in np.flatnonzero(a[i]) if ch_i <= set(np.flatnonzero(a[:, j]).tolist())))
    return out


def topological_order(B) -> list[int] | None:
    """One causal order of ``B`` (parents before children; Kahn's algorithm, smallest index first), or ``None``
    if ``B`` has a cycle."""
    a = (np.abs(np.asarray(B, dtype=float)) > 0).astype(int)
    d = a.shape[0]
    indeg = a.sum(axis=1).astype(int)
    order, ready = [], sorted(int(i) for i in np.flatnonzero(indeg == 0))
    while ready:
        j = ready.pop(0)
        order.append(j)
        for i in np.flatnonzero(a[:, j]):
            indeg[i] -= 1
            if indeg[i] == 0:
                ready.append(int(i))
                ready.sort()
    return order if len(order) == d else None


def is_linear_extension(order: Sequence[int], B) -> bool:
    """Whether ``order`` (a permutation of the nodes) puts every parent before its children in ``B``."""
    a = np.abs(np.asarray(B, dtype=float)) > 0
    order = [int(o) for o in order]
    if sorted(order) != list(range(a.shape[0])):
        return False
    pos = {v: t for t, v in enumerate(order)}
    return all(pos[j] < pos[i] for i, j in zip(*np.nonzero(a)))
