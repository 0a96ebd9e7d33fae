"""Every check can fail (evidence v3): each check's judge fails when the code it guards is broken on purpose (a
mutant), measured on three seeds of a small configuration (10 clients, 16 rounds) so that the test stays cheap."""

from dataclasses import replace

import pytest
import torch

from icml26.core import HOLDS, judge_records
from icml26.core.testing import mutant
from icml26.trace_du import unlearning
from icml26.trace_du.claims import CHECKS
from icml26.trace_du.experiment import EXPERIMENT, QUICK, measure

SEEDS = list(EXPERIMENT.seeds["quick"])
SMALL = replace(
    QUICK, n_nodes=10, rounds=16, budgets=(4, 8), sigmas=(64.0,), mlp_rounds=1, max_per_node=30, weak_budget=4
)
_propagate = unlearning._propagate
_expansiveness = unlearning.expansiveness
_noise = unlearning._noise


class _OneRoundTooMany(unlearning.DecentralizedSGD):
    """A resumed segment trains one round more than the certificate states."""

    def __init__(self, *a, **kw):
        if kw.get("start_round", 0) > 0:
            kw["rounds"] = kw["rounds"] + 1
        super().__init__(*a, **kw)


MUTANTS = {
    # the first injection halved: the bound no longer covers round 1 (where it is an equality)
    "bound_valid_strongly_convex": (
        "icml26.trace_du.unlearning._propagate",
        lambda a, W, s, inj, b: _propagate(a, W, s, 0.5 * inj, b),
    ),
    # the graph bound's mixing step scaled up: no longer below the scalar bound
    "graph_bound_tighter_pointwise": (
        "icml26.trace_du.unlearning._propagate",
        lambda a, W, s, inj, b: _propagate(a, 1.5 * W, s, inj, b) if b == "graph" else _propagate(a, W, s, inj, b),
    ),
    # the referee's break: a bound that ignores the mixing matrix (per node a_i only collects its own injections)
    "sequential_bound_valid": (
        "icml26.trace_du.unlearning._propagate",
        lambda a, W, s, inj, b: s * a + inj if b == "graph" else _propagate(a, W, s, inj, b),
    ),
    # the referee's break: the noise drawn but never added to the released checkpoint
    "released_noise_matches_certificate": ("icml26.trace_du.unlearning._release", lambda X, noise: X),
    # a non-convex loss no longer reported as an assumption the certificate lacks
    "certificates_flag_heuristic": (
        "icml26.trace_du.unlearning.expansiveness",
        lambda regime, lr, b, g=0.0: (_expansiveness(regime, lr, b, g)[0], []),
    ),
    # a resumed segment trains one round more than its certificate says
    "sequential_rounds_within_two_retrains": ("icml26.trace_du.unlearning.DecentralizedSGD", _OneRoundTooMany),
    # the referee's break: every request reuses request 0's noise (all six other checks still hold)
    "fresh_noise_per_request": (
        "icml26.trace_du.unlearning._noise",
        lambda seed, request, node, p: _noise(seed, 0, node, p),
    ),
}


def _checks(records=None):
    records = records or [measure(SMALL, s, None) for s in SEEDS]
    report = judge_records(EXPERIMENT, SMALL, records, SEEDS)
    return {c.id: c for c in report.claims if c.kind == "check"}


@pytest.fixture(scope="module")
def unbroken():
    return _checks()


def test_every_check_has_a_mutant_and_holds_unbroken(unbroken):
    assert set(unbroken) == set(CHECKS) == set(MUTANTS)
    assert all(c.verdict == HOLDS for c in unbroken.values()), {i: c.verdict for i, c in unbroken.items()}


@pytest.mark.parametrize("check", sorted(MUTANTS))
def test_the_mutant_fails_its_check(check):
    target, broken = MUTANTS[check]
    with mutant(target, broken):
        checks = _checks()
    assert checks[check].verdict != HOLDS, (check, checks[check].method)


def test_zeroed_noise_fails_the_noise_check():
    """The referee's other noise break: the Gaussian draw zeroed (a unit test of the returned noise alone would not
    see that nothing reaches the released model)."""
    with mutant(
        "icml26.trace_du.unlearning._noise", lambda seed, request, node, p: torch.zeros(p, dtype=torch.float64)
    ):
        checks = _checks()
    assert checks["released_noise_matches_certificate"].verdict != HOLDS


def test_reused_noise_breaks_only_the_fresh_noise_check():
    """The referee found that reusing request 0's noise for later requests passed every v2 check."""
    with mutant("icml26.trace_du.unlearning._noise", MUTANTS["fresh_noise_per_request"][1]):
        checks = _checks()
    assert {i for i, c in checks.items() if c.verdict != HOLDS} == {"fresh_noise_per_request"}


def test_no_mixing_matrix_also_fails_the_per_node_bound_on_the_original_run():
    with mutant("icml26.trace_du.unlearning._propagate", MUTANTS["sequential_bound_valid"][1]):
        checks = _checks()
    assert checks["bound_valid_strongly_convex"].verdict != HOLDS
