"""Every check can fail (evidence v3): each check's judge fails when the code it guards is broken on purpose (a
mutant: a term dropped, a bound scaled, a step skipped), measured on one seed of the quick preset."""

import numpy as np
import pytest

from icml26.core import DOES_NOT_HOLD, HOLDS, judge_records
from icml26.core.testing import mutant
from icml26.ski_rental import policies
from icml26.ski_rental.experiment import EXPERIMENT, QUICK, measure

SEED = EXPERIMENT.seeds["quick"][0]
_solve_lp = policies._solve_lp
_buy_day = policies.ClampPolicy.buy_day


def _range_argmax(self, inst, P_hat):  # range argmin picks the worst day of the range
    if self.mode != "range_argmin":
        return _buy_day(self, inst, P_hat)
    e = inst.ecr_all(P_hat)
    lo, hi = self.safe_range(inst)
    return lo + int(np.argmax(e[lo - 1 : hi]))


def _unclamped(self, inst, P_hat):  # the clamp step skipped: the global argmin, wherever it is
    if self.mode != "clamp":
        return _buy_day(self, inst, P_hat)
    return inst.optimal_threshold(P_hat)[0]


def _range_ignored(self, inst, P_hat):  # range argmin searches every day instead of the safe range
    if self.mode != "range_argmin":
        return _buy_day(self, inst, P_hat)
    return int(np.argmin(inst.ecr_all(P_hat))) + 1


MUTANTS = {
    # the LP's objective dropped: any feasible distribution, not the cheapest one
    "lp_never_worse_than_psk_rand": (
        "icml26.ski_rental.policies._solve_lp",
        lambda c, b, n, gamma: _solve_lp(np.zeros_like(c), b, n, gamma),
    ),
    "range_argmin_never_worse_than_clamp": ("icml26.ski_rental.policies.ClampPolicy.buy_day", _range_argmax),
    "clamp_robust": ("icml26.ski_rental.policies.ClampPolicy.buy_day", _unclamped),
    "range_argmin_robust": ("icml26.ski_rental.policies.ClampPolicy.buy_day", _range_ignored),
    # the robustness bound scaled: the LP solved at 1.5 gamma
    "lp_robust": ("icml26.ski_rental.policies._solve_lp", lambda c, b, n, gamma: _solve_lp(c, b, n, 1.5 * gamma)),
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
    assert policies._solve_lp is _solve_lp and policies.ClampPolicy.buy_day is _buy_day  # the originals are back
