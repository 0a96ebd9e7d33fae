"""TOFU-style evaluation of any scorer (an object with ``token_logprobs(x_ids, y_ids)`` and ``generate``).

:func:`evaluate_unlearning` scores the forget set (truth-ratio statistics ``R``, forget truth ratio, ROUGE-L of
greedy answers, Prob) and the utility sets (retain QA and world facts: Prob, truth ratio, ROUGE-L), and returns
the model utility (harmonic mean of the six utility scores) and, given the retain model's forget-set ``R``,
the forget quality.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from icml26.common.facts import WordTokenizer

from .data import QAItem
from .metrics.tofu import forget_quality, model_utility, prob_score, rouge_l_recall, truth_ratio, truth_ratio_values

__all__ = ["evaluate_unlearning", "answer_nll"]


def answer_nll(scorer, tok: WordTokenizer, prompts: Sequence[str], answers: Sequence[str]) -> np.ndarray:
    """Average per-token NLL of each answer given its prompt under ``scorer``."""
    xs = [tok.encode(p) for p in prompts]
    ys = [tok.encode(a) for a in answers]
    return np.array([-float(lp.mean()) for lp in scorer.token_logprobs(xs, ys)])


def _set_scores(scorer, tok, items: Sequence[QAItem], max_new: int) -> dict:
    n, k = len(items), len(items[0].perturbed)
    prompts = [q.prompt for q in items]
    answers = [q.answer for q in items] + [q.paraphrase for q in items] + [p for q in items for p in q.perturbed]
    nll = answer_nll(scorer, tok, prompts + prompts + [q.prompt for q in items for _ in q.perturbed], answers)
    gt, para, pert = nll[:n], nll[n : 2 * n], nll[2 * n :].reshape(n, k)
    gens = scorer.generate([tok.encode(p) for p in prompts], max_new, eos_id=tok.eos_id)
    texts = [tok.decode(g) for g in gens]
    return {
        "gt_nll": gt,
        "para_nll": para,
        "pert_nll": pert,
        "R": truth_ratio_values(para, pert),
        "rouge": rouge_l_recall(texts, [q.answer for q in items]),
        "generations": texts,
    }


def evaluate_unlearning(
    scorer,
    tok: WordTokenizer,
    forget: Sequence[QAItem],
    retain: Sequence[QAItem],
    world: Sequence[QAItem],
    r_retain_model: Sequence[float] | None = None,
    max_new_tokens: int = 16,
) -> dict:
    """All TOFU metrics for ``scorer`` (see the module docstring).  ``retain``/``world`` are the utility sets.

    World-facts Prob compares the true answer (paraphrase wording) with its false options.
    """
    for name, items in (("forget", forget), ("retain", retain), ("world", world)):
        if not items:
            raise ValueError(f"{name} must be a non-empty list of QAItem")
    f = _set_scores(scorer, tok, forget, max_new_tokens)
    r = _set_scores(scorer, tok, retain, max_new_tokens)
    w = _set_scores(scorer, tok, world, max_new_tokens)
    utility = {
        "retain_prob": prob_score(r["gt_nll"]),
        "retain_tr": truth_ratio(r["para_nll"], r["pert_nll"], split="retain"),
        "retain_rouge": r["rouge"],
        "world_prob": prob_score(w["para_nll"], w["pert_nll"]),
        "world_tr": truth_ratio(w["para_nll"], w["pert_nll"], split="retain"),
        "world_rouge": w["rouge"],
    }
    out = {
        **utility,
        "model_utility": model_utility(utility),
        "forget_R": f["R"].tolist(),
        "forget_tr": truth_ratio(f["para_nll"], f["pert_nll"], split="forget"),
        "forget_rouge": f["rouge"],
        "forget_prob": prob_score(f["gt_nll"]),
    }
    if r_retain_model is not None:
        fq = forget_quality(f["R"], r_retain_model)
        out["forget_quality"] = fq
        out["log10_fq"] = float(np.log10(max(fq, 1e-300)))
    return out
