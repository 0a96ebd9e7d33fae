import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.core import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    VERDICTS,
    Report,
    judge_every,
    judge_k_of_n,
    judge_non_inferiority,
    judge_superiority,
    judge_threshold,
    mean_ci,
    paired_bootstrap,
    paired_wilcoxon,
)

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(finite, finite), min_size=1, max_size=30),
    st.booleans(),
    st.sampled_from(["wilcoxon", "ttest", "bootstrap"]),
)
def test_superiority_never_holds_when_numbers_favour_baseline(pairs, higher, test):
    m = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    c = judge_superiority("X", "m beats b", ("m", m), {"b": b}, higher_is_better=higher, test=test)
    adv = (m - b).mean() if higher else (b - m).mean()
    assert c.verdict in VERDICTS
    if adv <= 0:
        assert c.verdict == DOES_NOT_HOLD
    if c.verdict == HOLDS:
        assert adv > 0


def test_superiority_holds_on_clear_win_and_flips_with_direction():
    b = np.arange(10, dtype=float)
    m = b + 1.0 + np.random.default_rng(0).normal(0, 0.1, 10)
    assert judge_superiority("a", "s", ("m", m), {"b": b}).verdict == HOLDS
    # Same numbers, but lower is better: the method now loses.
    assert judge_superiority("a", "s", ("m", m), {"b": b}, higher_is_better=False).verdict == DOES_NOT_HOLD


def test_superiority_with_too_few_seeds_is_inconclusive_not_holds():
    # Three paired seeds can never reach p < 0.05 with a one-sided signed-rank test (min p = 1/8).
    c = judge_superiority("a", "s", ("m", [2.0, 3.0, 4.0]), {"b": [1.0, 2.0, 3.0]})
    assert c.verdict == INCONCLUSIVE


def test_superiority_needs_every_baseline():
    m = np.linspace(1, 2, 12)
    noise = np.random.default_rng(1).normal(0, 0.05, 12)
    c = judge_superiority("a", "s", ("m", m), {"weak": m - 1 + noise, "strong": m + 0.5 + noise})
    assert c.verdict == DOES_NOT_HOLD
    assert [r["verdict"] for r in c.baselines] == [HOLDS, DOES_NOT_HOLD]


def test_non_inferiority_rule():
    rng = np.random.default_rng(0)
    b = rng.normal(0.9, 0.01, 20)
    m = b - 0.005 + rng.normal(0, 0.002, 20)
    assert judge_non_inferiority("n", "s", ("m", m), {"b": b}, margin=0.02).verdict == HOLDS
    assert judge_non_inferiority("n", "s", ("m", b - 0.05), {"b": b}, margin=0.02).verdict == DOES_NOT_HOLD


@settings(max_examples=100, deadline=None)
@given(st.lists(finite, min_size=2, max_size=20), finite, st.sampled_from([">=", "<="]))
def test_threshold_never_holds_when_mean_is_on_the_wrong_side(values, thr, sense):
    c = judge_threshold("t", "s", ("m", values), threshold=thr, sense=sense)
    mean = float(np.mean(values))
    wrong = mean < thr if sense == ">=" else mean > thr
    if wrong:
        assert c.verdict == DOES_NOT_HOLD


def test_every_counts_violations():
    c = judge_every("e", "s", ("m", [0.1, 0.2, 1.5]), bound=1.0)
    assert c.verdict == DOES_NOT_HOLD and c.test["n_violations"] == 1 and c.test["worst"] == 1.5
    assert judge_every("e", "s", ("m", [1.0 + 1e-12]), bound=1.0, tol=1e-9).verdict == HOLDS


def test_k_of_n_counts_strict_wins_against_every_baseline():
    m = [3.0, 2.0, 5.0, 1.0, 4.0]
    c = judge_k_of_n("k", "s", ("m", m), {"b": [1.0, 2.0, 4.0, 0.0, 3.0]}, k=4)
    assert c.verdict == HOLDS and c.baselines[0]["wins"] == 4  # the tie at index 1 is not a win
    assert judge_k_of_n("k", "s", ("m", m), {"b": [1.0, 2.0, 4.0, 0.0, 3.0]}, k=5).verdict == DOES_NOT_HOLD
    lower = judge_k_of_n("k", "s", ("m", m), {"b": [4.0, 3.0, 6.0, 2.0, 5.0]}, k=5, higher_is_better=False)
    assert lower.verdict == HOLDS
    two = judge_k_of_n("k", "s", ("m", m), {"b": [0.0] * 5, "c": [9.0] * 5}, k=1)
    assert two.verdict == DOES_NOT_HOLD and two.test["min_wins"] == 0
    with pytest.raises(ValueError, match="k must be an integer in"):
        judge_k_of_n("k", "s", ("m", m), {"b": m}, k=6)


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=8))
def test_k_of_n_never_holds_when_the_baseline_is_never_worse(xs):
    c = judge_k_of_n("k", "s", ("m", xs), {"b": [x + 1.0 for x in xs]}, k=1)
    assert c.verdict == DOES_NOT_HOLD


def test_mean_ci_known_values():
    e = mean_ci([1.0, 2.0, 3.0])
    assert e.mean == 2.0 and e.std == 1.0 and e.n == 3
    # t_{0.975, 2} = 4.302652729911275
    assert e.ci_high - e.mean == pytest.approx(4.302652729911275 / np.sqrt(3), rel=1e-9)
    assert mean_ci([5.0]).ci_low == 5.0


def test_paired_tests_known_values():
    stat, p = paired_wilcoxon([2, 3, 4, 5, 6, 7], [1, 1, 1, 1, 1, 1])
    assert p == pytest.approx(1 / 64)
    assert paired_wilcoxon([1, 2], [1, 2]) == (0.0, 1.0)
    d, lo, hi, pg = paired_bootstrap([1.0] * 10, [0.0] * 10)
    assert (d, lo, hi, pg) == (1.0, 1.0, 1.0, 0.0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: judge_superiority("a b", "s", ("m", [1]), {"b": [0]}), "id"),
        (lambda: judge_superiority("a", "", ("m", [1]), {"b": [0]}), "statement"),
        (lambda: judge_superiority("a", "s", ("m", [1, 2]), {"b": [0]}), "paired"),
        (lambda: judge_superiority("a", "s", ("m", [1]), {}), "baselines"),
        (lambda: judge_superiority("a", "s", ("m", [1]), {"b": [0]}, alpha=2), "alpha"),
        (lambda: judge_superiority("a", "s", ("m", [1]), {"b": [0]}, test="magic"), "test"),
        (lambda: judge_threshold("a", "s", ("m", [1]), threshold=0, sense="=="), "sense"),
        (lambda: judge_non_inferiority("a", "s", ("m", [1]), {"b": [1]}, margin=-1), "margin"),
        (lambda: mean_ci([]), "values"),
        (lambda: mean_ci([1.0, float("nan")]), "finite"),
        (lambda: mean_ci([1.0], confidence=1.5), "confidence"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_report_markdown_and_duplicates():
    rep = Report()
    rep.add_claim(judge_every("e1", "bounded", ("m", [0.5]), bound=1.0))
    with pytest.raises(ValueError, match="already"):
        rep.add_claim(judge_every("e1", "bounded", ("m", [0.5]), bound=1.0))
    rep.add_table("numbers", [{"x": 1, "y": 0.123456}, {"x": 2, "z": "a|b"}])
    with pytest.raises(ValueError, match="name"):
        rep.add_table("Bad Name", [])
    md = rep.to_markdown("T", {"preset": "quick"})
    assert "| e1 | holds (uncontrolled) |" in md and "0.1235" in md and "a\\|b" in md
    json.dumps([c.to_dict() for c in rep.claims])


def test_set_threads_reads_the_environment(monkeypatch):
    import torch

    from icml26.core import set_threads

    before = torch.get_num_threads()
    try:
        monkeypatch.setenv("ICML26_NUM_THREADS", "1")
        assert set_threads() == 1 and torch.get_num_threads() == 1
        monkeypatch.setenv("ICML26_NUM_THREADS", "many")
        with pytest.raises(ValueError, match="ICML26_NUM_THREADS"):
            set_threads()
        with pytest.raises(ValueError, match="n must be"):
            set_threads(0)
    finally:
        torch.set_num_threads(before)


# -- evidence v2: units, min_effect, kinds, preconditions, tuning ----------------------------------------------
@pytest.mark.parametrize("test", ["wilcoxon", "ttest", "bootstrap"])
def test_pseudo_replicates_give_the_p_value_of_the_unit_test(test):
    rng = np.random.default_rng(3)
    per_seed_m, per_seed_b = rng.normal(1.0, 0.5, 5), rng.normal(0.6, 0.5, 5)
    m25 = np.repeat(per_seed_m, 5) + rng.normal(0, 0.01, 25)  # 5 near-copies of each seed's value
    b25 = np.repeat(per_seed_b, 5) + rng.normal(0, 0.01, 25)
    units = np.repeat(np.arange(5), 5).tolist()
    five = judge_superiority("a", "s", ("m", m25.reshape(5, 5).mean(1)), {"b": b25.reshape(5, 5).mean(1)}, test=test)
    agg = judge_superiority("a", "s", ("m", m25), {"b": b25}, units=units, test=test)
    naive = judge_superiority("a", "s", ("m", m25), {"b": b25}, unit="instance", test=test)
    assert agg.test["p_value"] == pytest.approx(five.test["p_value"])
    assert agg.test["n_units"] == 5 and naive.test["n_units"] == 25
    assert naive.test["p_value"] < agg.test["p_value"]  # what pseudo-replication would have claimed


def test_report_refuses_more_seed_values_than_seeds():
    rep = Report(seeds=[0, 1, 2, 3, 4])
    vals = np.linspace(1, 2, 25)
    with pytest.raises(ValueError, match="pseudo-replication|units="):
        rep.add_claim(judge_superiority("a", "s", ("m", vals), {"b": vals - 1}))
    rep.add_claim(judge_superiority("a", "s", ("m", vals), {"b": vals - 1}, units=np.repeat(range(5), 5).tolist()))
    rep.add_claim(judge_superiority("c", "s", ("m", vals), {"b": vals - 1}, unit="instance"))


def test_min_effect_whose_interval_crosses_it_is_not_holds():
    rng = np.random.default_rng(0)
    b = rng.normal(0, 1, 6)
    d = np.array([2.0, 8.0, 3.5, 9.0, 4.0, 7.5])  # mean 5.67 > 5, but the one-sided lower end is ~3.6
    c = judge_superiority("e", "by >= 5", ("m", b + d), {"b": b}, min_effect=5.0, test="ttest")
    assert c.baselines[0]["mean_advantage"] > 5 and c.baselines[0]["p_value"] < 0.05
    assert c.baselines[0]["advantage_lower"] < 5 and c.verdict == INCONCLUSIVE
    tight = judge_superiority("e", "by >= 5", ("m", b + 8 + 0.01 * d), {"b": b}, min_effect=5.0, test="ttest")
    assert tight.verdict == HOLDS
    short = judge_superiority("e", "by >= 5", ("m", b + 3 + 0.01 * d), {"b": b}, min_effect=5.0, test="ttest")
    assert short.verdict == DOES_NOT_HOLD  # a clear effect, smaller than the one claimed


def test_threshold_with_monte_carlo_error_widens_the_interval():
    # one unit: a coverage of 0.795 from 1000 draws is not evidence of >= 0.79 (MC se ~0.013)
    # one number and no Monte-Carlo error: no interval, so not evidence either way (a t interval needs 3 units)
    assert judge_threshold("c", "s", ("cov", [0.795]), threshold=0.79).verdict == INCONCLUSIVE
    c = judge_threshold("c", "s", ("cov", [0.795]), threshold=0.79, mc_se=np.sqrt(0.8 * 0.2 / 1000))
    assert c.verdict == INCONCLUSIVE and c.method["ci_low"] < 0.79 < c.method["ci_high"]
    assert judge_threshold("c", "s", ("cov", [0.85]), threshold=0.79, mc_se=0.013).verdict == HOLDS


def test_kind_and_requires_are_validated():
    with pytest.raises(ValueError, match="kind"):
        judge_every("e", "s", ("m", [0.0]), bound=1.0, kind="fact")
    with pytest.raises(ValueError, match="check"):
        judge_every("e", "s", ("m", [0.0]), bound=1.0, kind="check", requires=["p"])
    rep = Report()
    rep.add_claim(judge_every("c", "s", ("m", [0.0]), bound=1.0, requires=["nope"]))
    with pytest.raises(ValueError, match="not preconditions"):
        rep.resolve()


def test_precondition_overrides_only_its_dependents():
    rep = Report()
    rep.add_claim(judge_every("p", "setting", ("m", [2.0]), bound=1.0, kind="precondition"))  # fails
    rep.add_claim(judge_every("c1", "claim", ("m", [0.0]), bound=1.0, requires="p"))
    rep.add_claim(judge_every("c2", "claim", ("m", [0.0]), bound=1.0))
    rep.resolve()
    by = {c.id: c for c in rep.claims}
    assert by["c1"].verdict == INCONCLUSIVE and by["c1"].reason == "setting invalid: p"
    assert by["c2"].verdict == HOLDS
    from icml26.core import counts

    k = counts(c.to_dict() for c in rep.claims)
    assert k["uncontrolled"] == {HOLDS: 1, DOES_NOT_HOLD: 0, INCONCLUSIVE: 1} and k["precondition"][DOES_NOT_HOLD] == 1
    assert k["claim"] == {HOLDS: 0, DOES_NOT_HOLD: 0, INCONCLUSIVE: 0}  # neither has a control: counted apart


def test_tuning_budget_is_shown_and_an_under_tuned_baseline_flagged():
    rep = Report()
    rep.set_tuning("T3", configs=12, steps=300)
    rep.set_tuning("NPO", configs=3, steps=10)
    c = rep.add_claim(judge_superiority("a", "s", ("T3 forget quality", [2.0, 3.0]), {"NPO": [1.0, 2.0]}))
    t = c.test["tuning"]
    assert t["method"]["budget"] == 3600 and t["baselines"]["NPO"]["under_tuned"] is True
    assert "UNDER-TUNED" in rep.to_markdown("T", {})
    rep.set_tuning("exact OT", configs=1, steps=0, note="closed form")
    c = rep.add_claim(judge_superiority("b", "s", ("T3 forget quality", [2.0, 3.0]), {"exact OT": [1.0, 2.0]}))
    assert c.test["tuning"]["baselines"]["exact OT"]["under_tuned"] is False  # nothing to tune
    with pytest.raises(ValueError, match="configs"):
        rep.set_tuning("x", configs=0, steps=1)
