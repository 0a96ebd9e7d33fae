"""Evaluation metrics: latent recovery up to the ``~sur`` class (LocR^2), MCC and the structural Hamming distance.

Estimated latents carry no labels, so every metric first matches estimated components to true nodes with the
Hungarian algorithm.  ``loc_r2`` matches on its own per-pair R^2 (the matching that makes the estimate look best
within the equivalence class, the same rule for every method); ``mcc`` matches on ``|corr|``.  ``shd`` compares
graphs in the lingam convention (``B[i, j] != 0``: ``j -> i``) after relabelling the estimate with a matching.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from .graphs import check_adjacency, surrounded_sets

__all__ = ["loc_r2", "loc_r2_matrix", "mcc", "shd", "shd_best", "relabel"]


def _pair(y_true, y_est) -> tuple[np.ndarray, np.ndarray]:
    yt = np.asarray(y_true, dtype=float)
    ye = np.asarray(y_est, dtype=float)
    if yt.ndim != 2 or ye.ndim != 2:
        raise ValueError(f"y_true and y_est must be 2-D (n_samples, d); got shapes {yt.shape} and {ye.shape}")
    if yt.shape != ye.shape:
        raise ValueError(f"y_true and y_est must have the same shape, got {yt.shape} and {ye.shape}")
    if yt.shape[0] < yt.shape[1] + 2:
        raise ValueError(f"need at least d + 2 = {yt.shape[1] + 2} samples, got {yt.shape[0]}")
    if not (np.all(np.isfinite(yt)) and np.all(np.isfinite(ye))):
        raise ValueError("y_true and y_est must be finite")
    return yt, ye


def _r2(target: np.ndarray, design: np.ndarray) -> float:
    """R^2 of the least-squares regression of ``target`` on ``design`` with an intercept."""
    t = target - target.mean()
    ss = float(t @ t)
    if ss <= 0.0:
        return 0.0
    X = design - design.mean(axis=0)
    coef, *_ = np.linalg.lstsq(X, t, rcond=None)
    r = t - X @ coef
    return float(np.clip(1.0 - (r @ r) / ss, 0.0, 1.0))


def loc_r2_matrix(y_true, y_est, adjacency) -> np.ndarray:
    """``R[t, i]`` = R^2 of regressing estimated component ``t`` on the true latents ``y_{{i} U sur(i)}``.

    ``adjacency`` is the TRUE graph (lingam convention), which defines ``sur(i)``.
    """
    yt, ye = _pair(y_true, y_est)
    B = check_adjacency(adjacency, "adjacency")
    if B.shape[0] != yt.shape[1]:
        raise ValueError(f"adjacency has {B.shape[0]} nodes but y_true has {yt.shape[1]} columns")
    sur = surrounded_sets(B)
    d = yt.shape[1]
    R = np.empty((d, d))
    for i in range(d):
        design = yt[:, [i, *sur[i]]]
        for t in range(d):
            R[t, i] = _r2(ye[:, t], design)
    return R


def loc_r2(y_true, y_est, adjacency, return_matching: bool = False):
    """Latent recovery up to the surrounded-node class: ``LocR^2 = (1/d) sum_t R^2(y^_t ~ y_{{m(t)} U sur(m(t))})``.

    ``m`` is the one-to-one matching of estimated components to true nodes that maximises the sum of these R^2
    (Hungarian).  LocR^2 is 1 exactly when every ``y^_t = c y_i + sum_{j in sur(i)} a_j y_j`` (+ a constant), and
    it is invariant to permuting, rescaling and sign-flipping the estimated components.  ``y_true``, ``y_est``:
    ``(n_samples, d)`` (pool environments by stacking rows); ``adjacency``: the true graph.
    ``return_matching=True`` also returns ``m`` (``m[t]`` = true node of estimated component ``t``) and the
    matched per-component R^2.
    """
    R = loc_r2_matrix(y_true, y_est, adjacency)
    rows, cols = linear_sum_assignment(R, maximize=True)
    m = np.empty(R.shape[0], dtype=int)
    m[rows] = cols
    per = R[rows, cols]
    score = float(per.mean())
    if return_matching:
        return score, m, per
    return score


def mcc(y_true, y_est) -> float:
    """Mean correlation coefficient: mean ``|corr(y^_t, y_m(t))|`` over the Hungarian matching maximising it.

    1 for any permutation / rescaling / sign flip of the truth; close to 0 for independent components.
    """
    yt, ye = _pair(y_true, y_est)
    d = yt.shape[1]
    C = np.abs(np.corrcoef(ye.T, yt.T)[:d, d:])
    C = np.nan_to_num(C, nan=0.0)
    rows, cols = linear_sum_assignment(C, maximize=True)
    return float(C[rows, cols].mean())


def relabel(B_est, matching: Sequence[int]) -> np.ndarray:
    """The estimated graph with node ``t`` renamed ``matching[t]`` (so it can be compared with the truth)."""
    a = np.asarray(B_est)
    m = np.asarray(matching, dtype=int)
    d = a.shape[0]
    if a.shape != (d, d) or sorted(m.tolist()) != list(range(d)):
        raise ValueError(f"matching must be a permutation of range({d}), got {list(m)}")
    out = np.zeros_like(a)
    out[np.ix_(m, m)] = a
    return out


def shd(B_true, B_est, matching: Sequence[int] | None = None) -> int:
    """Structural Hamming distance between two DAGs (lingam convention): the number of node pairs whose edge
    differs (missing, extra or reversed; a reversal counts once).

    ``matching[t]`` = the true node of estimated node ``t`` (from :func:`loc_r2`); ``None``: same labels.
    """
    bt = check_adjacency(B_true, "B_true")
    be = (np.abs(np.asarray(B_est, dtype=float)) > 0).astype(int)
    if be.shape != bt.shape:
        raise ValueError(f"B_est must have shape {bt.shape}, got {be.shape}")
    if matching is not None:
        be = relabel(be, matching)
    iu = np.triu_indices(bt.shape[0], k=1)
    differ = (bt[iu] != be[iu]) | (bt.T[iu] != be.T[iu])
    return int(differ.sum())


def shd_best(B_true, B_est) -> int:
    """SHD at the best relabelling: ``min over permutations m of shd(B_true, B_est, m)`` (graph recovery judged
    apart from how the latents are matched; exhaustive, so meant for ``d <= 8``)."""
    import itertools

    bt = check_adjacency(B_true, "B_true")
    d = bt.shape[0]
    if d > 8:
        raise ValueError(f"shd_best enumerates permutations: B_true must have d <= 8 nodes, got d={d}")
    be = (np.abs(np.asarray(B_est, dtype=float)) > 0).astype(int)
    if be.shape != bt.shape:
        raise ValueError(f"B_est must have shape {bt.shape}, got {be.shape}")
    inv = np.array(list(itertools.permutations(range(d))), dtype=int).reshape(-1, d)  # relabel(be, m) = be[inv, inv]
    P = be[inv[:, :, None], inv[:, None, :]]
    iu = np.triu_indices(d, k=1)
    differ = (bt[iu] != P[:, iu[0], iu[1]]) | (bt.T[iu] != P[:, iu[1], iu[0]])
    return int(differ.sum(axis=1).min())
