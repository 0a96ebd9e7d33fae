"""TOFU's evaluation metrics, written from their definitions (Maini et al. 2024; the OpenUnlearning code).

All likelihood metrics take *average per-token negative log-likelihoods* (nats) of answers given their
prompts, so any model that can score text can be evaluated; :meth:`T3Unlearner.token_logprobs` and
:func:`icml26.t3_unlearning.unlearn.answer_nll` produce them.  A length-normalised probability is
``P~ = exp(-L)``.

* Truth-ratio statistic per item: ``R = exp(mean_j L_pert_j - L_para)`` = ``P~_para / geomean_j P~_pert_j``
  (how much more the model believes a paraphrase of the truth than wrong answers).
* Truth ratio, aggregated: on the forget set ``mean min(R, 1/R)``; on every other set ``mean max(0, 1 - 1/R)``
  (the variant of TOFU's ``aggregate_eval_stat.py``; OpenUnlearning issue #138 discusses the paper's text).
* Forget quality: the p-value of the two-sample Kolmogorov-Smirnov test between the forget-set ``R`` values
  of the unlearned model and those of the retain model (trained without the forget set).  High is good:
  the two are indistinguishable.
* Prob: ``mean exp(-L_gt)`` on QA sets; with false options, ``mean P~_true / (P~_true + sum P~_false)``.
* ROUGE-L recall: longest common subsequence of words between the greedy answer and the ground truth,
  divided by the ground truth's length.
* Model utility: the harmonic mean of the nine (here six) {Prob, ROUGE, truth ratio} x {sets} scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.stats import hmean, ks_2samp

__all__ = ["truth_ratio_values", "truth_ratio", "forget_quality", "prob_score", "rouge_l_recall", "model_utility"]


def _as_nll(name: str, values, ndim: int) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim != ndim or a.size == 0:
        shape = "[n]" if ndim == 1 else "[n, n_perturbed]"
        raise ValueError(f"{name} must be a non-empty array of shape {shape}, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{name} must hold finite, non-negative average NLLs")
    return a


def truth_ratio_values(para_nll: Sequence[float], pert_nll: Sequence[Sequence[float]]) -> np.ndarray:
    """Per-item ``R = exp(mean_j L_pert_j - L_para)`` from the paraphrase NLL ``[n]`` and perturbed NLLs
    ``[n, n_perturbed]``."""
    para = _as_nll("para_nll", para_nll, 1)
    pert = _as_nll("pert_nll", pert_nll, 2)
    if pert.shape[0] != para.shape[0]:
        raise ValueError(f"pert_nll has {pert.shape[0]} rows but para_nll has {para.shape[0]} items")
    return np.exp(pert.mean(axis=1) - para)


def truth_ratio(para_nll, pert_nll, split: str = "forget") -> float:
    """Aggregated truth ratio: ``mean min(R, 1/R)`` for ``split="forget"``, else ``mean max(0, 1 - 1/R)``."""
    if split not in ("forget", "retain"):
        raise ValueError(f"split must be 'forget' or 'retain', got {split!r}")
    r = truth_ratio_values(para_nll, pert_nll)
    if split == "forget":
        return float(np.mean(np.minimum(r, 1.0 / r)))
    return float(np.mean(np.maximum(0.0, 1.0 - 1.0 / r)))


def forget_quality(r_unlearned: Sequence[float], r_retain: Sequence[float]) -> float:
    """KS two-sample p-value between forget-set truth-ratio statistics ``R`` of the unlearned and retain models."""
    a = np.asarray(r_unlearned, dtype=float).ravel()
    b = np.asarray(r_retain, dtype=float).ravel()
    if a.size < 1 or b.size < 1:
        raise ValueError("r_unlearned and r_retain must be non-empty")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("r_unlearned and r_retain must be finite")
    return float(ks_2samp(a, b).pvalue)


def prob_score(gt_nll: Sequence[float], false_nll: Sequence[Sequence[float]] | None = None) -> float:
    """``mean exp(-L_gt)``; with ``false_nll [n, n_false]``: ``mean P~_true / (P~_true + sum_j P~_false_j)``."""
    gt = _as_nll("gt_nll", gt_nll, 1)
    if false_nll is None:
        return float(np.mean(np.exp(-gt)))
    false = _as_nll("false_nll", false_nll, 2)
    if false.shape[0] != gt.shape[0]:
        raise ValueError(f"false_nll has {false.shape[0]} rows but gt_nll has {gt.shape[0]} items")
    # P~_true / (P~_true + sum P~_false) = 1 / (1 + sum exp(L_true - L_false)), computed stably
    return float(np.mean(1.0 / (1.0 + np.exp(gt[:, None] - false).sum(axis=1))))


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l_recall(prediction: str | Sequence[str], reference: str | Sequence[str]) -> float:
    """ROUGE-L recall on whitespace words: ``LCS(prediction, reference) / len(reference)``.

    Two strings give one score; two equal-length lists of strings give the mean score.
    """
    if isinstance(prediction, str) != isinstance(reference, str):
        raise TypeError("prediction and reference must both be strings or both be lists of strings")
    if isinstance(prediction, str):
        ref = reference.split()
        if not ref:
            raise ValueError("reference must contain at least one word")
        return _lcs(prediction.split(), ref) / len(ref)
    if len(prediction) != len(reference) or not prediction:
        raise ValueError(
            f"prediction and reference must be non-empty and equally long, got {len(prediction)} and {len(reference)}"
        )
    return float(np.mean([rouge_l_recall(p, r) for p, r in zip(prediction, reference, strict=True)]))


def model_utility(scores: Mapping[str, float] | Sequence[float]) -> float:
    """Harmonic mean of the utility scores (a mapping name -> score, or a list); every score must lie in [0, 1].

    A zero score gives utility 0, as the harmonic mean should.
    """
    vals = np.asarray(list(scores.values()) if isinstance(scores, Mapping) else list(scores), dtype=float)
    if vals.size == 0:
        raise ValueError("scores must not be empty")
    if not np.all((vals >= 0) & (vals <= 1)):
        raise ValueError(f"scores must lie in [0, 1], got {vals.tolist()}")
    if np.any(vals == 0):
        return 0.0
    return float(hmean(vals))
