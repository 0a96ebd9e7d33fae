"""Linear-algebra helpers shared by the estimators (private): unit rows, collinearity, rank drops, intersections."""

from __future__ import annotations

import numpy as np

_EPS = 1e-12


def unit_rows(M: np.ndarray) -> np.ndarray:
    """Rows of ``M`` scaled to unit Euclidean norm (zero rows stay zero)."""
    M = np.asarray(M, dtype=float)
    n = np.linalg.norm(M, axis=-1, keepdims=True)
    return M / np.maximum(n, _EPS)


def collinearity(M: np.ndarray) -> float:
    """``1 - sigma_1^2 / sum_k |m_k|^2`` of the rows of ``M`` after scaling them to unit norm.

    0 exactly when all rows are collinear (up to sign and scale); at most ``1 - 1/rank``.
    """
    U = unit_rows(M)
    s = np.linalg.svd(U, compute_uv=False)
    total = float((s**2).sum())
    return float(max(0.0, 1.0 - s[0] ** 2 / total)) if total > 0 else 1.0


def top_direction(M: np.ndarray) -> np.ndarray:
    """The top right-singular vector of the unit-normalised rows of ``M`` (the common direction of near-collinear
    rows, sign-invariant)."""
    return np.linalg.svd(unit_rows(M), full_matrices=False)[2][0]


def rank_drop_parents(C: np.ndarray, tol: float) -> tuple[list[int], np.ndarray]:
    """Parent positions of the node whose unmixing rows have coordinates ``C`` (``K x (t+1)``) in the orthonormal
    basis ``q_0..q_t`` of ``V_t``.

    ``rank(C[:, s:]) = #{j in pa(i) U {i} : pos(j) >= s}`` for generic weights, so position ``s < t`` is a parent
    iff adding column ``s`` raises the rank.  Going from ``s = t-1`` down to 0 with the running rank ``r``
    (starting at 1: the node itself), ``s`` is a parent iff ``sigma_{r+1}(C[:, s:]) / sqrt(K) > tol``.
    Returns the parent positions (ascending) and the statistic ``sigma_{r+1} / sqrt(K)`` per position.
    """
    K, width = C.shape
    t = width - 1
    stat = np.full(t, np.nan)
    r, pa = 1, []
    for s in range(t - 1, -1, -1):
        sv = np.linalg.svd(C[:, s:], compute_uv=False)
        stat[s] = sv[r] / np.sqrt(K) if r < sv.size else 0.0
        if stat[s] > tol:
            pa.append(s)
            r += 1
    return sorted(pa), stat


def row_space(C: np.ndarray, rank: int) -> np.ndarray:
    """Orthonormal basis (columns) of the top-``rank`` right-singular subspace of ``C``."""
    return np.linalg.svd(C, full_matrices=False)[2][:rank].T


def intersect(A: np.ndarray, B: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Approximate intersection of the column spaces of orthonormal ``A`` and ``B`` via principal angles.

    ``A^T B = X diag(cos theta) Y^T``; a principal pair is shared when ``1 - cos theta < tol^2`` (equivalently the
    smallest singular values of ``[A, -B]``, ``sqrt(1 - cos theta)``, are below ``tol``).  The shared directions
    are the normalised midpoints ``(A x_i + B y_i) / 2``; if none passes, the best-aligned pair is kept (the
    intersection always holds the node's own direction).  Returns an orthonormal basis and all cosines.
    """
    X, c, Yt = np.linalg.svd(A.T @ B, full_matrices=False)
    keep = np.flatnonzero(1.0 - c < tol**2)
    if keep.size == 0:
        keep = np.array([0])
    mid = (A @ X[:, keep] + B @ Yt.T[:, keep]) / 2.0
    Qm, _ = np.linalg.qr(mid)
    return Qm, c
