"""Every check can fail (evidence v3): each check's judge fails when the code it guards is broken on purpose (a
mutant: a step skipped, a normalisation dropped, a metric scaled), measured on one seed of the quick preset."""

from dataclasses import replace

import numpy as np
import pytest

from icml26.core import DOES_NOT_HOLD, HOLDS, judge_records
from icml26.core.testing import mutant
from icml26.linear_crl import creator as creator_mod
from icml26.linear_crl import metrics
from icml26.linear_crl.baselines import CREATORNoIntersection
from icml26.linear_crl.experiment import EXPERIMENT, QUICK, measure

SEED = EXPERIMENT.seeds["quick"][0]
CFG = replace(QUICK, dims=(3, 5), env_factors=(2,), lingam=False)
_fit_rows = creator_mod._EnvironmentCRL._fit_rows
_mcc, _shd = metrics.mcc, metrics.shd


def _no_parents(self, C):  # pruning skipped: every node becomes a source
    return [], np.zeros(C.shape[1] - 1)


def _unnormalised_fit_unmixing(self, Xs, unmixings):  # the rows' normalisation dropped: scale now leaks in
    Xs = self._validate(Xs)
    Xw = self._whiten(Xs)
    rows = [np.asarray(u, dtype=float) @ self.dewhitening_ for u in unmixings]
    self.ica_ = {"n_iter": [0] * len(Xs), "convergence_warnings": 0, "contrast": [np.nan] * len(Xs)}
    return _fit_rows(self, [r / np.linalg.norm(rows[0]) for r in rows], Xw)


def _own_ica(creator, Xs):  # the ablation refits its own ICA (another random state) instead of CREATOR's rows
    return CREATORNoIntersection(**{**creator.get_params(), "random_state": 12345}).fit(Xs)


MUTANTS = {
    "oracle_exact_d3": ("icml26.linear_crl.creator._EnvironmentCRL._prune", _no_parents),
    "oracle_exact_d5": ("icml26.linear_crl.creator._EnvironmentCRL._prune", _no_parents),
    "post_ica_invariance": ("icml26.linear_crl.creator._EnvironmentCRL.fit_unmixing", _unnormalised_fit_unmixing),
    "metric_closed_forms": ("icml26.linear_crl.metrics.mcc", lambda y, e: 0.99 * _mcc(y, e)),
    "same_ica_rows_for_environment_arms": ("icml26.linear_crl.experiment._without_intersection", _own_ica),
    "best_relabelling_shd_le_matched": (
        "icml26.linear_crl.metrics.shd_best",
        lambda bt, be: _shd(bt, be) + 1,
    ),
}


def _checks():
    report = judge_records(EXPERIMENT, CFG, [measure(CFG, SEED)], [SEED])
    return {c.id: c for c in report.claims if c.kind == "check"}


def test_every_check_has_a_mutant_and_holds_unbroken():
    checks = _checks()
    assert set(checks) == set(MUTANTS)
    assert all(c.verdict == HOLDS for c in checks.values())


@pytest.mark.parametrize("check", sorted(MUTANTS))
def test_the_mutant_fails_its_check(check):
    target, broken = MUTANTS[check]
    with mutant(target, broken):
        got = _checks()[check]
    assert got.verdict == DOES_NOT_HOLD, got.test
