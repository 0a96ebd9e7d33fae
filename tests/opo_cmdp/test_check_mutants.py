"""Every check can fail (evidence v3): each check's judge fails when the code it guards is broken on purpose (a
mutant), measured on one seed of the quick preset."""

import numpy as np
import pytest

from icml26.core import DOES_NOT_HOLD, HOLDS, judge_records
from icml26.core.testing import mutant
from icml26.opo_cmdp import opo, tabular
from icml26.opo_cmdp.experiment import EXPERIMENT, QUICK, measure

SEED = EXPERIMENT.seeds["quick"][0]
_step = opo.OPOCMDP._step
_evaluate = tabular.evaluate_policy


def _off_by_one_step(self, logpi, n, rows, j, kf, kp):  # the bonus's beta_j read one episode late
    return _step(self, logpi, n, rows, j + 1, kf, kp)


def _counts_of_pi(self, logpi, n, rows, j, kf, kp):  # counts n += pi instead of the occupancy q (referee's mutant)
    new_logpi, _, width = _step(self, logpi, n, rows, j, kf, kp)
    return new_logpi, n + np.exp(logpi), width


def _half_future(pi, f, P):  # policy evaluation with the next layer's value halved (the unchecked kernel: the
    return tabular._evaluate_policy(pi, f, 0.5 * P)  # public one rejects P rows that do not sum to 1)


MUTANTS = {
    "cmab_equivalence": ("icml26.opo_cmdp.opo.OPOCMDP._step", _off_by_one_step),
    "mdp_reference": ("icml26.opo_cmdp.opo.OPOCMDP._step", _counts_of_pi),
    "optimal_regret_zero": ("icml26.opo_cmdp.tabular.evaluate_policy", _half_future),
}


def _checks():
    report = judge_records(EXPERIMENT, QUICK, [measure(QUICK, SEED)], [SEED])
    return {c.id: c for c in report.claims if c.kind == "check"}


def test_every_check_has_a_mutant_and_holds_unbroken():
    checks = _checks()
    assert set(checks) == set(MUTANTS)
    assert all(c.verdict == HOLDS for c in checks.values())


@pytest.mark.parametrize("check", sorted(MUTANTS))
def test_each_check_fails_under_a_mutant_of_the_code_it_guards(check):
    target, broken = MUTANTS[check]
    with mutant(target, broken):
        checks = _checks()
    assert checks[check].verdict == DOES_NOT_HOLD, checks[check].test
    assert checks[check].test["n_violations"] > 0
    assert opo.OPOCMDP._step is _step and tabular.evaluate_policy is _evaluate  # the originals are back


def _replay_counts_of_pi(self, logpi, n, rows):  # the replay kernel (contexts first seen late) with n += pi
    out_lp, out_n = logpi, n
    for j, (kf, kp) in enumerate(self.history, start=1):
        new_lp, _, _ = _step(self, out_lp, out_n, rows, j, kf, kp)
        out_lp, out_n = new_lp, out_n + np.exp(out_lp)
    return out_lp, out_n


def test_mdp_reference_also_guards_the_replay_kernel():
    """A context's first policy in the check is a replay (it is first seen after episode 1), so a broken replay
    kernel fails ``mdp_reference`` too."""
    with mutant("icml26.opo_cmdp.opo.OPOCMDP._replay", _replay_counts_of_pi):
        checks = _checks()
    assert checks["mdp_reference"].verdict == DOES_NOT_HOLD, checks["mdp_reference"].test
