"""Temper-then-tilt (T3) unlearning (after Block, Mohri, Mokhtari and Shakkottai, ICML 2026, arXiv 2602.10217).

The idea: a base model trained on retain and forget data samples from the mixture ``p = (1 - gamma) p_r +
gamma p_f``; the retain distribution is ``p_r ∝ p · P(R | z)``, so a classifier ``f_hat ≈ P(R | z)`` can
"tilt" the frozen base model towards it (classifier guidance).  When the forget data is memorised (``p_f``
sharply concentrated) small classifier errors are multiplied by large base probabilities, so T3 first
*tempers* the base distribution, ``p_hat ∝ p^(1/T) f_hat``, and only then tilts it.  Nothing in the base
model is fine-tuned: for a language model, T3 is a logits processor plus a classifier with ~1% of the
parameters.

Notation -> names
-----------------
=================================  ===============================================================================
paper                              here
=================================  ===============================================================================
base model p (frozen)              ``T3Unlearner(base_model, ...)`` (a ``TinyLM`` or Hugging Face causal LM)
temperature T, tilt weight         ``temperature``, ``guidance`` (lambda; 1 in the paper's form)
f_hat ≈ P(R | x, y_<t, v)          ``T3Unlearner.fit(retain, forget)`` -> ``classifier_`` (``TiltClassifier``)
p_hat ∝ p^(1/T) f_hat              ``TemperThenTiltLogitsProcessor`` (``.logits_processor()``), ``.token_logprobs``,
                                   ``.generate``
classifier guidance (CG)           ``temperature=1``
GA, GradDiff, NPO                  ``unlearn.gradient_ascent``, ``unlearn.grad_diff``, ``unlearn.npo``
TOFU metrics                       ``metrics.tofu``: ``truth_ratio``, ``forget_quality`` (KS p-value),
                                   ``prob_score``, ``rouge_l_recall``, ``model_utility``
TOFU-like data                     ``data.make_fictitious_authors``, ``data.split_forget``
exact finite toy                   ``toy.mixture_experiment`` (``toy.tilt``, ``toy.make_toy``)
=================================  ===============================================================================

Example (any Hugging Face causal LM)
------------------------------------
>>> u = T3Unlearner(model, temperature=2.0).fit(retain_pairs, forget_pairs)      # doctest: +SKIP
>>> proc = u.logits_processor(attention_mask=mask)  # the prompt batch's mask (left padding)   # doctest: +SKIP
>>> model.generate(ids, attention_mask=mask, logits_processor=LogitsProcessorList([proc]))  # doctest: +SKIP

The processor keeps its own KV cache: one single-token base forward per generated token (plus one prefill).
"""

from . import data, metrics, toy, unlearn
from .data import make_fictitious_authors, split_forget
from .evaluation import evaluate_unlearning
from .metrics import forget_quality, model_utility, prob_score, rouge_l_recall, truth_ratio, truth_ratio_values
from .toy import mixture_experiment
from .unlearn import PlainLM, grad_diff, gradient_ascent, npo
from .unlearner import T3Unlearner, TemperThenTiltLogitsProcessor, TiltClassifier

__all__ = [
    "T3Unlearner",
    "TemperThenTiltLogitsProcessor",
    "TiltClassifier",
    "PlainLM",
    "gradient_ascent",
    "grad_diff",
    "npo",
    "truth_ratio",
    "truth_ratio_values",
    "forget_quality",
    "prob_score",
    "rouge_l_recall",
    "model_utility",
    "evaluate_unlearning",
    "make_fictitious_authors",
    "split_forget",
    "mixture_experiment",
    "data",
    "metrics",
    "toy",
    "unlearn",
]
