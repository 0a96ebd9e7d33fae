"""Metrics for judging any unlearning method (``metrics.tofu``: TOFU's definitions)."""

from .tofu import (
    forget_quality,
    model_utility,
    prob_score,
    rouge_l_recall,
    truth_ratio,
    truth_ratio_values,
)

__all__ = ["truth_ratio", "truth_ratio_values", "forget_quality", "prob_score", "rouge_l_recall", "model_utility"]
