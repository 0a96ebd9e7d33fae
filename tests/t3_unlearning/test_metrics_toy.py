import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import hmean

from icml26.t3_unlearning.metrics import (
    forget_quality,
    model_utility,
    prob_score,
    rouge_l_recall,
    truth_ratio,
    truth_ratio_values,
)
from icml26.t3_unlearning.toy import fit_toy_classifier, make_toy, mixture_experiment, prior_corrected, tilt, toy_scores


# -- TOFU metrics ------------------------------------------------------------------------------------------
def test_truth_ratio_matches_hand_computation():
    para = [1.0, 2.0]
    pert = [[2.0, 3.0], [1.0, 1.0]]
    r = truth_ratio_values(para, pert)
    assert np.allclose(r, [np.exp(1.5), np.exp(-1.0)])
    assert truth_ratio(para, pert, "forget") == pytest.approx((np.exp(-1.5) + np.exp(-1.0)) / 2)
    assert truth_ratio(para, pert, "retain") == pytest.approx((1 - np.exp(-1.5) + 0.0) / 2)


def test_identical_truth_ratios_give_forget_quality_one_and_shifted_ones_tiny():
    r = np.random.default_rng(0).lognormal(size=100)
    assert forget_quality(r, r) == 1.0
    assert forget_quality(r * 10, r) < 1e-10


def test_prob_score_and_options_form():
    assert prob_score([0.0, np.log(2)]) == pytest.approx(0.75)
    # true answer twice as likely as each of two false ones: 2 / (2 + 1 + 1)
    assert prob_score([0.0], [[np.log(2), np.log(2)]]) == pytest.approx(0.5)


def test_rouge_l_recall_known_values():
    assert rouge_l_recall("a b c d", "a b c d") == 1.0
    assert rouge_l_recall("a x c", "a b c d") == 0.5  # LCS "a c"
    assert rouge_l_recall("", "a b") == 0.0
    assert rouge_l_recall(["a b", "c"], ["a b", "d"]) == 0.5


def test_model_utility_is_the_harmonic_mean():
    scores = {"a": 0.2, "b": 0.5, "c": 0.9}
    assert model_utility(scores) == pytest.approx(hmean([0.2, 0.5, 0.9]))
    assert model_utility([0.0, 1.0]) == 0.0


def test_metric_errors_name_the_argument():
    with pytest.raises(ValueError, match="pert_nll"):
        truth_ratio_values([1.0], [1.0])
    with pytest.raises(ValueError, match="split"):
        truth_ratio([1.0], [[1.0]], split="test")
    with pytest.raises(ValueError, match="scores must lie in"):
        model_utility([1.5])
    with pytest.raises(ValueError, match="gt_nll"):
        prob_score([-1.0])


# -- the exact toy -----------------------------------------------------------------------------------------
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=30), st.floats(0.2, 20.0), st.floats(0.01, 1.0))
def test_tilt_is_a_distribution_and_a_constant_classifier_changes_nothing_at_T1(ps, T, c):
    p = np.asarray(ps) + 1e-3
    p /= p.sum()
    f = np.full_like(p, c)
    q = tilt(p, f, T)
    assert q.sum() == pytest.approx(1.0)
    assert np.all(q >= 0)
    assert np.allclose(tilt(p, f, 1.0), p)
    if T >= 1:  # tempering never sharpens: the largest probability cannot grow
        assert q.max() <= p.max() + 1e-12


def test_infinite_temperature_with_constant_classifier_is_uniform():
    p = np.array([0.7, 0.2, 0.1])
    assert np.allclose(tilt(p, np.ones(3), 1e9), 1 / 3)


def test_perfect_classifier_guidance_recovers_p_r_exactly():
    prob = make_toy(0.99, seed=3)
    q = tilt(prob.p, prob.posterior_retain, 1.0)
    assert np.allclose(q, prob.p_r, atol=1e-15)
    s = toy_scores(prob, q)
    assert s["forget_mass"] == 0.0 and abs(s["kl"]) < 1e-12 and s["tv"] < 1e-12


def test_prior_corrected_balanced_classifier_also_recovers_p_r():
    prob = make_toy(0.5, seed=1)
    balanced = np.divide(prob.p_r, prob.p_r + prob.p_f, out=np.zeros_like(prob.p), where=prob.p > 0)
    f = prior_corrected(balanced, prob.gamma)
    assert np.allclose(f[prob.p > 0], prob.posterior_retain[prob.p > 0])
    assert np.allclose(tilt(prob.p, f, 1.0), prob.p_r, atol=1e-15)


def test_toy_construction():
    prob = make_toy(0.9, seed=0, n_spikes=5)
    assert prob.p_r.sum() == pytest.approx(1.0) and prob.p_f.sum() == pytest.approx(1.0)
    assert np.all(prob.p_r[prob.forget] == 0) and np.all(prob.p_f[~prob.forget] == 0)
    assert np.sort(prob.p_f)[-5:].sum() == pytest.approx(0.9)  # the spike mass m on 5 atoms
    f_hat = fit_toy_classifier(prob, 2000, seed=0)
    assert f_hat[~prob.forget].mean() > f_hat[prob.forget].mean()  # the classifier has real signal


def test_mixture_experiment_rows_are_paired_and_T1_is_cg():
    rows = mixture_experiment(masses=(0.99,), temperatures=(1.0, 2.0), seeds=(0, 1))
    assert len(rows) == 4
    prob = make_toy(0.99, seed=0)
    cg = toy_scores(prob, tilt(prob.p, fit_toy_classifier(prob, 2000, seed=10_000), 1.0))
    assert rows[0]["forget_mass"] == pytest.approx(cg["forget_mass"])


def test_toy_errors():
    with pytest.raises(ValueError, match="temperature must be > 0"):
        tilt(np.ones(2) / 2, np.ones(2), 0.0)
    with pytest.raises(ValueError, match="m must lie in"):
        make_toy(1.5, seed=0)
    with pytest.raises(ValueError, match="gamma must lie in"):
        prior_corrected(np.ones(2) / 2, 1.0)


def test_retain_like_spikes_create_the_concentrated_forget_failure_mode():
    """With retain-side features on the spike atoms CG's forget mass grows with m and tempering cuts it; with
    forget-side spike features (the old toy) CG already handles them."""
    kw = dict(seeds=range(6), temperatures=(1.0, 2.0), separation=2.0)
    rows = mixture_experiment(masses=(0.1, 0.99), spike_features="retain", **kw)

    def fm(rs, m, T):
        return np.array([r["forget_mass"] for r in rs if r["m"] == m and r["T"] == T])

    assert (fm(rows, 0.99, 1.0) > fm(rows, 0.1, 1.0)).all()
    assert (fm(rows, 0.99, 2.0) < 0.6 * fm(rows, 0.99, 1.0)).all()
    old = mixture_experiment(masses=(0.1, 0.99), spike_features="forget", **kw)
    assert fm(old, 0.99, 1.0).mean() < fm(old, 0.1, 1.0).mean()  # no failure mode without the mimicry
    prob = make_toy(0.99, seed=0, spike_features="retain", separation=2.0)
    spikes = np.flatnonzero(prob.p_f > 0.1)
    u = prob.phi[~prob.forget].mean(0) - prob.phi[prob.forget & (prob.p_f < 0.1)].mean(0)
    assert (prob.phi[spikes] @ u).mean() > 0  # the spikes sit on the retain side
    with pytest.raises(ValueError, match="spike_features must be"):
        make_toy(0.5, seed=0, spike_features="both")
