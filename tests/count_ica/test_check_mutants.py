"""Every check can fail (evidence v3): each check's judge fails when the code it guards is broken on purpose,
measured on one seed of a shrunk quick preset."""

from dataclasses import replace

import numpy as np
import pytest

from icml26.core import DOES_NOT_HOLD, HOLDS, judge_records
from icml26.core.testing import mutant
from icml26.count_ica import estimator, experiment, metrics
from icml26.count_ica.experiment import EXPERIMENT, QUICK, measure

SEED = EXPERIMENT.seeds["quick"][0]
CFG = replace(QUICK, max_epochs=5, n=30, T=8, regime_n=20, n_ppc=200, fastica_restarts=1)
_marginals = estimator.regime_marginals
_simulate = estimator._simulate
_align = metrics.align_mixing


def _filtered_only(log_pi, log_A, L):  # the backward pass dropped: filtering, not smoothing
    T = L.shape[1]
    out = np.stack([_marginals(log_pi, log_A, L[:, : t + 1])[:, -1] for t in range(T)], 1)
    return out


def _no_dynamics(rng, U0, bbar, psibar, A, B, b, psi, T, s0=None):  # the AR coefficient ignored when sampling
    return _simulate(rng, U0, bbar, psibar, A, np.zeros_like(B), b, psi, T, s0=s0)


def _no_matching(E, G):  # the Hungarian step skipped: column i matched to column i
    idx = np.arange(G.shape[1])
    En = np.asarray(E, float)[:, idx] / np.linalg.norm(np.asarray(E, float)[:, idx], axis=0)
    Gn = np.asarray(G, float) / np.linalg.norm(G, axis=0)
    c = (Gn * En).sum(0)
    return En * np.sign(c), idx, np.sign(c), np.abs(c)


MUTANTS = {
    "forward_backward_exact": ("icml26.count_ica.estimator.regime_marginals", _filtered_only),
    "sample_path_truth_sw": ("icml26.count_ica.estimator._simulate", _no_dynamics),
    "align_planted_exact": ("icml26.count_ica.metrics.align_mixing", _no_matching),
}


def _checks():
    report = judge_records(EXPERIMENT, CFG, [measure(CFG, SEED)], [SEED])
    return {c.id: c for c in report.claims if c.kind == "check"}


def test_every_check_has_a_mutant_and_holds_unbroken():
    checks = _checks()
    assert set(checks) == set(MUTANTS)
    assert all(c.verdict == HOLDS for c in checks.values()), {k: c.test for k, c in checks.items()}


@pytest.mark.parametrize("check", sorted(MUTANTS))
def test_each_check_fails_under_a_mutant_of_the_code_it_guards(check):
    target, broken = MUTANTS[check]
    with mutant(target, broken):
        checks = _checks()
    assert checks[check].verdict == DOES_NOT_HOLD, checks[check].test
    assert experiment.regime_marginals is _marginals and estimator._simulate is _simulate
    assert experiment.align_mixing is _align
