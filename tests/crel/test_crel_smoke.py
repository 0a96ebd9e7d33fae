"""Smoke test of the quick preset (statement ids and kinds; checks hold) and off-by-one rank mutants."""

import json
from dataclasses import replace

import numpy as np
import pytest

from icml26.core import VERDICTS
from icml26.crel import experiment as E

KINDS = {
    "risky_generator_worse_synthetic": "precondition",
    "risky_generator_worse_digits": "precondition",
    "coverage": "claim",
    "coverage_upper": "claim",
    "informativeness": "claim",
    "informativeness_oracle": "claim",
    "informativeness_digits": "claim",
    "optimizer_grid": "claim",
    "interpretability_synthetic": "claim",
    "interpretability_digits": "claim",
    "conformal_rank": "check",
    "optimizer_linear": "check",
    "optimizer_below_in_set_samples": "check",
}


def test_quick_preset_runs_and_judges_every_claim(quick_run):
    run_dir = quick_run("crel")
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    by_id = {c["id"]: c for c in result["claims"]}
    assert all(c["verdict"] == "holds" for c in result["claims"] if c["kind"] == "check")
    assert by_id["interpretability_synthetic"]["requires"] == ["risky_generator_worse_synthetic"]
    assert by_id["interpretability_digits"]["requires"] == ["risky_generator_worse_digits"]
    assert by_id["coverage"]["test"]["unit"] == "seed" and by_id["coverage"]["test"]["n_units"] == 3
    # interpretability is judged against the trivial rule worst-of-K (and the average metric)
    assert {b["name"] for b in by_id["interpretability_digits"]["baselines"]} == {
        "worst-of-K separation",
        "average-metric separation",
    }
    assert (run_dir / "prediction_set_2d.png").exists()
    assert (run_dir / "coverage_vs_alpha.png").exists()
    assert len(result["metrics"]["s1"]) == len(result["seeds"])


class _Normal:
    """A cheap exchangeable setting: y ~ N(0, I_2) whatever x, and a generator that samples the same law."""

    def draw(self, n, rng):
        return np.zeros(n), rng.standard_normal((n, 2))

    def sample(self, x, n, rng):
        return rng.standard_normal((n, 2))


def _coverage_verdicts(units: int = 3, per_unit: int = 80):
    """End-to-end coverage (fresh calibrations, n_cal in 24-49, fresh test pairs through contains()), judged by
    the claim's own judge; ``per_unit`` calibrations per unit."""
    cfg = replace(E.QUICK, e2e_calibrations=per_unit, e2e_n_test=50)
    recs = [
        E.e2e_coverage(cfg, _Normal(), _Normal(), lambda x, z: z.sum(-1), np.random.default_rng([u, 5]))
        for u in range(units)
    ]
    return {c.id: c for c in E.coverage_claims(cfg, list(range(units)), recs)}


@pytest.fixture(scope="module")
def correct_coverage():
    return _coverage_verdicts()


def test_correct_rank_is_not_rejected(correct_coverage):
    assert correct_coverage["coverage"].verdict != "does not hold"
    assert correct_coverage["coverage_upper"].verdict != "does not hold"
    assert abs(correct_coverage["coverage"].method["mean"]) < 0.01


@pytest.mark.parametrize("shift", [-1, 1])
def test_rank_off_by_one_fails_the_end_to_end_coverage_claim(monkeypatch, shift):
    """The threshold taken one rank too low (k - 1) or too high (k + 1), fed through predict_set().contains()
    and the claim's judge: one side of the two-sided claim does not hold, while the correct rank is not
    rejected on either side (test above; the v1 +/-0.01 band over re-splits let an off-by-one through)."""
    import icml26.crel._reliability as rel

    orig = rel._rank
    monkeypatch.setattr(rel, "_rank", lambda n, alpha: orig(n, alpha) + shift)
    bad = _coverage_verdicts()
    failing = "coverage" if shift < 0 else "coverage_upper"
    assert bad[failing].verdict == "does not hold", bad[failing].method
    assert (bad["coverage"].method["mean"] < 0) == (shift < 0)


def test_exact_rank_is_independent_of_the_library():
    for n in range(20, 60):
        for a in (0.05, 0.1, 0.2):
            assert E.exact_rank(n, a) == int(np.ceil(round((n + 1) * (1 - a), 9)))
