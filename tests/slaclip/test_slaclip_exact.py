"""Verdicts are judged on exact accuracies (referee 2, issue 46): a float32 accuracy 100 k / n_test is snapped to the
count k before any test, so a bootstrap end that is exactly on a margin in counts is not read on its wrong side."""

import numpy as np
import pytest

from icml26.core import HOLDS, INCONCLUSIVE, judge_non_inferiority
from icml26.slaclip.claims import _n_test, exact_accuracy

N_TEST = 360
AUTOS = (332, 340, 344, 334, 338)  # correct predictions of AUTO-S, seeds 100-104 of the v3b reference run
SLACLIP = (335, 337, 338, 337, 338)  # SlaClip's: differences +3, -3, -6, +3, 0 of 360


def _float32_acc(k: int) -> float:
    """What experiment._train stores: 100 x a float32 mean of k ones in n_test."""
    hits = np.zeros(N_TEST, dtype=np.float32)
    hits[:k] = 1
    return 100.0 * float(hits.mean(dtype=np.float32))


def _verdict(snap: bool) -> str:
    def acc(k):
        run = {"acc": _float32_acc(k)}
        return (exact_accuracy(run, N_TEST) if snap else run)["acc"]

    c = judge_non_inferiority(
        "A3-autos", "x", ("SlaClip", [acc(k) for k in SLACLIP]), {"AUTO-S": [acc(k) for k in AUTOS]}, margin=1.0
    )
    return c.verdict, c.baselines[0]["advantage_ci"][0]


def test_the_referees_knife_edge_is_inconclusive_on_exact_counts():
    verdict, lo = _verdict(snap=True)
    assert verdict == INCONCLUSIVE and lo == pytest.approx(-1.0, abs=1e-12)


def test_the_same_case_judged_on_float32_accuracies_held():
    """The mutant: without the snap the lower end reads -0.99999905 and the claim 'held' (v3b)."""
    verdict, lo = _verdict(snap=False)
    assert verdict == HOLDS and -1.0 < lo < -0.9999


def test_exact_accuracy_snaps_measured_values_and_leaves_hand_made_ones():
    assert exact_accuracy({"acc": _float32_acc(335)}, N_TEST)["acc"] == 100.0 * 335 / 360
    run = {"acc": 100.0 * float(np.float32(7) / np.float32(9)), "n_test": 9}  # the run's own n_test wins
    assert exact_accuracy(run, N_TEST)["acc"] == 100.0 * 7 / 9
    assert exact_accuracy({"acc": 90.1}, N_TEST)["acc"] == 90.1  # not a count of 360: a test's value, kept


def test_test_set_size_from_the_training_set_size():
    assert _n_test({"n_train": 1437}) == 360  # digits: 1797 samples, 20% test
    assert _n_test({"n_train": 8000}) == 2000  # synthetic: 10,000 samples
    assert _n_test({"n_train": 2400}) == 600
