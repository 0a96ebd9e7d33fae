"""The estimator and baselines: recovery, equivariance, the shared surface, and input errors."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.metrics import adjusted_rand_score

from icml26.fused_orthogonal import (
    AdaptiveFusedOrthogonal,
    ARMULLike,
    OracleClusterDML,
    PersonalizedDML,
    PLRScore,
    TaskData,
    UniformFusion,
    cross_fit_scores,
    make_clustered_tasks,
)

LIN = dict(ml_l=LinearRegression(), ml_m=LinearRegression())


def _linear_clustered(seed, m=9, n=1500, centres=(-1.0, 0.0, 1.0)):
    """Linear nuisances, widely separated clusters, tasks with different covariate widths."""
    rng = np.random.default_rng(seed)
    labels = np.arange(m) % len(centres)
    theta = np.asarray(centres)[labels]
    tasks = []
    for j in range(m):
        p = 2 + j % 4
        x = rng.normal(size=(n, p))
        d = x[:, 0] + rng.normal(size=n)
        y = theta[j] * d + x.sum(axis=1) + rng.normal(size=n)
        tasks.append(TaskData(y, d, x))
    return tasks, theta, labels


@pytest.fixture(scope="module")
def linear_study():
    tasks, theta, labels = _linear_clustered(0)
    scores = cross_fit_scores(tasks, PLRScore(LinearRegression(), LinearRegression()), 2, random_state=0)
    return tasks, theta, labels, scores


def test_well_separated_clusters_are_recovered_exactly_and_match_the_oracle(linear_study):
    tasks, theta, labels, _ = linear_study
    ada = AdaptiveFusedOrthogonal(model="plr", random_state=0, **LIN).fit(tasks)
    oracle = OracleClusterDML(labels, model="plr", random_state=0, **LIN).fit(tasks)
    assert adjusted_rand_score(labels, ada.labels_) == 1.0
    np.testing.assert_allclose(ada.coef_, oracle.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ada.se_, oracle.se_, rtol=0, atol=1e-12)
    assert ada.n_clusters_ == 3 and ada.cluster_coef_.shape == (3,)
    assert np.max(np.abs(ada.coef_ - theta)) < 0.05


def test_pooling_shrinks_standard_errors(linear_study):
    _, _, _, scores = linear_study
    ada = AdaptiveFusedOrthogonal(model="plr").fit_scores(scores)
    pers = PersonalizedDML(model="plr").fit_scores(scores)
    assert np.all(ada.se_ < pers.se_)


def test_task_permutation_permutes_the_output(linear_study):
    tasks, _, labels, scores = linear_study
    perm = np.random.default_rng(1).permutation(len(tasks))
    ada = AdaptiveFusedOrthogonal(model="plr").fit_scores(scores)
    permuted = type(scores)(tuple(scores.psi_a[i] for i in perm), tuple(scores.psi_b[i] for i in perm), "plr")
    ada_p = AdaptiveFusedOrthogonal(model="plr").fit_scores(permuted)
    np.testing.assert_allclose(ada_p.coef_, ada.coef_[perm], atol=1e-10)
    assert adjusted_rand_score(ada.labels_[perm], ada_p.labels_) == 1.0


def test_refit_none_and_sum_scale_and_auto_radius_also_recover(linear_study):
    _, _, labels, scores = linear_study
    n = 1500  # all n_j = 1500: c_w, tau scaled by n turn the "sum" problem into n x the "mean" one
    for kw in (
        dict(refit="none", chain_guard="none"),
        dict(loss_scale="sum", c_w=0.1 * n, tau=10.0 * n),
        dict(c_w="auto"),
        dict(pilot=scores.b + 0.001),
    ):
        est = AdaptiveFusedOrthogonal(model="plr", **kw).fit_scores(scores)
        assert adjusted_rand_score(labels, est.labels_) == 1.0, kw


def test_refit_none_with_the_splitting_guard_is_refused(linear_study):
    """v3 referee: refit='none' with chain_guard='split' split the labels but kept one fused coefficient for the
    split clusters; the combination now raises, naming both arguments."""
    *_, scores = linear_study
    with pytest.raises(ValueError, match="refit='none'.*chain_guard"):
        AdaptiveFusedOrthogonal(model="plr", refit="none").fit_scores(scores)
    est = AdaptiveFusedOrthogonal(model="plr", refit="none", chain_guard="warn").fit_scores(scores)
    assert len(np.unique(est.coef_)) == est.n_clusters_


def test_one_cluster_control_fuses_every_task_before_the_guard(linear_study):
    """fusion='one' (the control "one cluster + guard"): without the guard one cluster whose estimate is the oracle's
    pooled estimate with every task in one cluster; with the guard the well-separated clusters are split back."""
    tasks, _, labels, scores = linear_study
    one = AdaptiveFusedOrthogonal(model="plr", fusion="one", chain_guard="none").fit_scores(scores)
    pooled = OracleClusterDML(np.zeros(len(tasks), dtype=int), model="plr").fit_scores(scores)
    assert one.n_clusters_ == 1
    np.testing.assert_allclose(one.coef_, pooled.coef_, atol=1e-10)
    guarded = AdaptiveFusedOrthogonal(model="plr", fusion="one").fit_scores(scores)
    assert adjusted_rand_score(labels, guarded.labels_) == 1.0


def test_baselines_share_the_surface(linear_study):
    tasks, theta, labels, scores = linear_study
    m = len(tasks)
    ests = [
        PersonalizedDML(model="plr"),
        OracleClusterDML(labels, model="plr"),
        ARMULLike(3, model="plr", random_state=0),
        UniformFusion(0.01, model="plr"),
        AdaptiveFusedOrthogonal(model="plr"),
    ]
    for est in ests:
        est.fit_scores(scores)
        assert est.coef_.shape == (m,) and est.labels_.shape == (m,) and est.se_.shape == (m,)
        assert est.confint(0.1).shape == (m, 2) and np.all(est.confint(0.1)[:, 0] < est.coef_)
        assert len(est.cluster_coef_) == est.n_clusters_ == len(np.unique(est.labels_))
        assert "coef" in est.summary() and type(est).__name__ in est.summary()
        assert clone(est).get_params().keys() == est.get_params().keys()
    assert adjusted_rand_score(labels, ests[2].labels_) == 1.0  # ARMUL-like with the right K
    assert ests[0].n_clusters_ == m


def test_personalized_equals_uniform_fusion_without_penalty(linear_study):
    _, _, _, scores = linear_study
    pers = PersonalizedDML(model="plr").fit_scores(scores)
    uni = UniformFusion(0.0, model="plr").fit_scores(scores)
    np.testing.assert_allclose(uni.coef_, pers.coef_, atol=1e-12)


def test_armul_with_too_few_clusters_merges_two_groups(linear_study):
    _, _, labels, scores = linear_study
    est = ARMULLike(2, model="plr", random_state=0).fit_scores(scores)
    assert est.n_clusters_ == 2 and adjusted_rand_score(labels, est.labels_) < 1.0


def test_fit_on_generated_irm_tasks_with_different_widths():
    tasks, theta, labels = make_clustered_tasks("irm", n_tasks=4, delta=1.0, n_base=200, n_step=10, random_state=0)
    assert len({t.x.shape[1] for t in tasks}) == 4
    est = AdaptiveFusedOrthogonal(model="irm", c_w="auto", random_state=0).fit(tasks)
    assert np.all(np.isfinite(est.coef_)) and np.all(est.se_ > 0)


def test_generator_design():
    tasks, theta, labels = make_clustered_tasks(
        "plr", n_tasks=5, n_clusters=3, delta=0.5, n_base=40, n_step=2, p_base=3, random_state=1
    )
    assert [t.n for t in tasks] == [42, 44, 46, 48, 50]
    assert [t.x.shape[1] for t in tasks] == [4, 5, 6, 7, 8]
    np.testing.assert_allclose(theta, np.array([-0.5, 0.0, 0.5])[labels])


# -- errors ----------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(model="did"), "model must be one of"),
        (dict(n_folds=1), "n_folds must be an integer >= 2"),
        (dict(gamma=-1.0), "gamma"),
        (dict(c_w="big"), "c_w"),
        (dict(c_w=0.0), "c_w"),
        (dict(tau=0.0), "tau"),
        (dict(eps_n=20.0), "eps_n"),
        (dict(refit="mean"), "refit"),
        (dict(loss_scale="max"), "loss_scale"),
        (dict(pilot=np.zeros(3)), "pilot"),
        (dict(kappa=0.0), "kappa"),
    ],
)
def test_hyperparameter_errors_name_the_argument(linear_study, kwargs, match):
    _, _, _, scores = linear_study
    with pytest.raises(ValueError, match=match):
        AdaptiveFusedOrthogonal(**{"model": "plr", **kwargs}).fit_scores(scores)


def test_fit_errors_on_bad_tasks():
    rng = np.random.default_rng(2)
    good = TaskData(rng.normal(size=30), rng.normal(size=30), rng.normal(size=(30, 2)))
    tiny = TaskData(rng.normal(size=2), rng.normal(size=2), rng.normal(size=(2, 2)))
    with pytest.raises(ValueError, match="fewer than n_folds"):
        AdaptiveFusedOrthogonal(n_folds=3, **LIN).fit([good, tiny])
    with pytest.raises(TypeError, match="TaskData"):
        AdaptiveFusedOrthogonal(**LIN).fit([good, (1, 2, 3)])


def test_baseline_errors(linear_study):
    _, _, _, scores = linear_study
    with pytest.raises(ValueError, match="n_clusters"):
        ARMULLike(0).fit_scores(scores)
    with pytest.raises(ValueError, match="n_clusters"):
        ARMULLike(100).fit_scores(scores)
    with pytest.raises(ValueError, match="labels must have shape"):
        OracleClusterDML(np.zeros(2)).fit_scores(scores)
    with pytest.raises(ValueError, match="lam"):
        UniformFusion(-1.0).fit_scores(scores)
    with pytest.raises(ValueError, match="cross-fitted for model='plr'"):
        PersonalizedDML(model="irm").fit_scores(scores)
    with pytest.raises(TypeError, match="CrossFitScores"):
        PersonalizedDML().fit_scores({"a": 1})


def test_inference_before_fit_and_bad_alpha(linear_study):
    with pytest.raises(NotFittedError):
        AdaptiveFusedOrthogonal().confint()
    est = PersonalizedDML().fit_scores(linear_study[3])
    with pytest.raises(ValueError, match="alpha"):
        est.confint(1.5)


def _chained_scores(seed=0, m=60, n=250):
    """Three clusters 1/3 apart, many noisy tasks: the paper's radius 0.1 chains them (single linkage)."""
    rng = np.random.default_rng(seed)
    labels = np.arange(m) % 3
    theta = np.array([-1 / 3, 0.0, 1 / 3])[labels]
    tasks = []
    for j in range(m):
        x = rng.normal(size=(n, 2))
        d = x[:, 0] + rng.normal(size=n)
        tasks.append(TaskData(theta[j] * d + x[:, 1] + rng.normal(size=n), d, x))
    return cross_fit_scores(tasks, PLRScore(LinearRegression(), LinearRegression()), random_state=seed), labels


def test_chain_guard_repairs_chaining_and_warn_mode_warns():
    from icml26.fused_orthogonal import ChainingWarning

    scores, labels = _chained_scores()
    plain = AdaptiveFusedOrthogonal(chain_guard="none").fit_scores(scores)
    guarded = AdaptiveFusedOrthogonal(chain_guard="split").fit_scores(scores)
    assert adjusted_rand_score(labels, plain.labels_) < 0.7  # the unguarded rule chains
    assert adjusted_rand_score(labels, guarded.labels_) > 0.9 and guarded.n_chained_ >= 1
    with pytest.warns(ChainingWarning, match="chaining"):
        warned = AdaptiveFusedOrthogonal(chain_guard="warn").fit_scores(scores)
    np.testing.assert_array_equal(warned.labels_, plain.labels_)  # warn keeps the partition
    assert warned.n_chained_ >= 1


def test_chain_guard_is_silent_on_well_separated_clusters(linear_study):
    import warnings

    _, theta, labels, scores = linear_study
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = AdaptiveFusedOrthogonal(chain_guard="warn").fit_scores(scores)
    assert est.n_chained_ == 0 and adjusted_rand_score(labels, est.labels_) == 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(chain_guard="maybe"), "chain_guard"),
        (dict(guard_alpha=0.0), "guard_alpha"),
        (dict(n_rep=0), "n_rep"),
        (dict(fusion="off"), "fusion"),
        (dict(fusion=None), "fusion"),
    ],
)
def test_guard_and_n_rep_errors_name_the_argument(linear_study, kwargs, match):
    tasks, scores = linear_study[0], linear_study[3]
    with pytest.raises(ValueError, match=match):
        if "n_rep" in kwargs:
            AdaptiveFusedOrthogonal(**kwargs, **LIN).fit(tasks)
        else:
            AdaptiveFusedOrthogonal(**kwargs).fit_scores(scores)


def test_no_fusion_arm_is_the_cochran_merge_of_the_pilots(linear_study):
    """fusion='none' (the control arm "pilots + merge, no fusion"): the ADMM step is skipped, so the clusters are
    exactly merge_homogeneous_clusters of the singletons; without the guard it is per-task DML."""
    from icml26.fused_orthogonal import merge_homogeneous_clusters

    _, _, labels, scores = linear_study
    est = AdaptiveFusedOrthogonal(fusion="none").fit_scores(scores)
    se = np.array([scores.pooled([j])[1] for j in range(scores.n_tasks)])
    expected = merge_homogeneous_clusters(np.arange(scores.n_tasks), scores.b, se, alpha=0.01)
    np.testing.assert_array_equal(est.labels_, expected)
    assert est.n_iter_ == 0 and np.array_equal(est.fused_coef_, scores.b)
    assert adjusted_rand_score(labels, est.labels_) == 1.0  # the well-separated study: the merge alone recovers it
    bare = AdaptiveFusedOrthogonal(fusion="none", chain_guard="none").fit_scores(scores)
    np.testing.assert_allclose(bare.coef_, PersonalizedDML().fit_scores(scores).coef_, rtol=0, atol=1e-12)


def test_shuffled_fusion_permutes_the_adaptive_weights(linear_study):
    scores = linear_study[3]
    ada = AdaptiveFusedOrthogonal()
    shuf = AdaptiveFusedOrthogonal(fusion="shuffled", random_state=3)
    _, _, lam = ada.fusion_problem(scores)
    _, _, lam_s = shuf.fusion_problem(scores)
    perm = np.random.default_rng(3).permutation(scores.n_tasks)
    np.testing.assert_array_equal(lam_s, lam[np.ix_(perm, perm)])
    assert not np.array_equal(lam_s, lam)
    np.testing.assert_array_equal(shuf.fit_scores(scores).weights_, lam_s)
