"""Orthogonal scores: Neyman orthogonality by finite differences, DoubleML agreement, CI coverage."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

from icml26.fused_orthogonal import CrossFitScores, IRMScore, PLRScore, TaskData, cross_fit_scores


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _plr_population(n=400_000, theta=0.7, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    m0 = np.tanh(x[:, 0]) + 0.5 * x[:, 1]
    g0 = np.sin(x[:, 1]) + x[:, 2] ** 2
    d = m0 + rng.normal(size=n)
    y = theta * d + g0 + rng.normal(size=n)
    return x, y, d, m0, g0


def _mean_score(elements, y, d, nuis, theta):
    pa, pb = elements(y, d, nuis)
    return float(np.mean(pa * theta + pb))


def test_plr_score_is_neyman_orthogonal_and_naive_score_is_not():
    theta = 0.7
    x, y, d, m0, g0 = _plr_population(theta=theta)
    l0 = theta * m0 + g0
    h1, h2 = x[:, 0] + np.cos(x[:, 2]), x[:, 1] ** 2 - 1 + x[:, 0]  # perturbation directions
    t = 0.05

    def at(s):
        return _mean_score(PLRScore.elements, y, d, {"l": l0 + s * h1, "m": m0 + s * h2}, theta)

    deriv = (at(t) - at(-t)) / (2 * t)

    def naive(s):  # non-orthogonal "regress Y - g(X) on D" score: (Y - theta D - g) D
        return float(np.mean((y - theta * d - (g0 + s * h1)) * d))

    deriv_naive = (naive(t) - naive(-t)) / (2 * t)
    assert abs(deriv) < 0.02
    assert abs(deriv_naive) > 0.3  # = -E[h1 D], clearly non-zero
    assert abs(at(0.0)) < 0.01  # the score is unbiased at the truth


def test_irm_score_is_neyman_orthogonal():
    rng = np.random.default_rng(1)
    n, theta = 400_000, 0.5
    x = rng.normal(size=(n, 3))
    p = _sigmoid(x[:, 0] - 0.5 * x[:, 1])
    d = (rng.random(n) < p).astype(float)
    g = np.sin(x[:, 1]) + x[:, 2]
    y = theta * d + g + rng.normal(size=n)
    base = {"g0": g, "g1": g + theta, "m": p}
    dirs = {"g0": np.cos(x[:, 2]), "g1": x[:, 0] ** 2, "m": 0.1 * np.tanh(x[:, 2])}
    t = 0.05

    def at(s):
        nuis = {k: base[k] + s * dirs[k] for k in base}
        return _mean_score(IRMScore.elements, y, d, nuis, theta)

    assert abs((at(t) - at(-t)) / (2 * t)) < 0.03
    # the plug-in (regression-only) score g1 - g0 - theta moves one for one with g1
    assert abs(np.mean(dirs["g1"])) > 0.5


def _linear_task(rng, n=300, theta=0.5, p=4):
    x = rng.normal(size=(n, p))
    d = x[:, 0] + rng.normal(size=n)
    y = theta * d + x[:, 1] - 0.5 * x[:, 2] + rng.normal(size=n)
    return TaskData(y, d, x)


def test_pooled_estimate_is_the_weighted_mean_of_task_losses():
    rng = np.random.default_rng(3)
    tasks = [_linear_task(rng, n=100 + 50 * j) for j in range(3)]
    sc = cross_fit_scores(tasks, PLRScore(LinearRegression(), LinearRegression()), n_folds=2, random_state=0)
    pooled, _ = sc.pooled([0, 1, 2])
    w = sc.a * sc.n
    np.testing.assert_allclose(pooled, np.sum(w * sc.b) / np.sum(w), rtol=1e-12)


def test_single_task_plr_matches_doubleml():
    dml = pytest.importorskip("doubleml")
    rng = np.random.default_rng(4)
    task = _linear_task(rng)
    score = PLRScore(LinearRegression(), LinearRegression())
    folds = score.folds(task, 2, seed=0)
    pa, pb = score.cross_fit(task, folds)
    coef, se = CrossFitScores((pa,), (pb,)).pooled([0])
    data = dml.DoubleMLData.from_arrays(task.x, task.y, task.d)
    ref = dml.DoubleMLPLR(data, LinearRegression(), LinearRegression(), n_folds=2, draw_sample_splitting=False)
    ref.set_sample_splitting(all_smpls=[list(folds)])
    ref.fit()
    assert abs(coef - ref.coef[0]) < 1e-8
    assert abs(se - ref.se[0]) < 1e-8


def test_single_task_irm_matches_doubleml():
    dml = pytest.importorskip("doubleml")
    rng = np.random.default_rng(5)
    n = 400
    x = rng.normal(size=(n, 3))
    d = (rng.random(n) < _sigmoid(x[:, 0])).astype(float)
    y = 0.5 * d + x[:, 1] + rng.normal(size=n)
    task = TaskData(y, d, x)
    score = IRMScore(LinearRegression(), LogisticRegression(), clip=0.05)
    folds = score.folds(task, 2, seed=0)
    pa, pb = score.cross_fit(task, folds)
    coef, se = CrossFitScores((pa,), (pb,)).pooled([0])
    data = dml.DoubleMLData.from_arrays(x, y, d)
    ref = dml.DoubleMLIRM(
        data,
        LinearRegression(),
        LogisticRegression(),
        n_folds=2,
        trimming_threshold=0.05,
        draw_sample_splitting=False,
    )
    ref.set_sample_splitting(all_smpls=[list(folds)])
    ref.fit()
    assert abs(coef - ref.coef[0]) < 1e-8
    assert abs(se - ref.se[0]) < 1e-8


def test_wald_coverage_of_single_task_linear_plr():
    rng = np.random.default_rng(6)
    score = PLRScore(LinearRegression(), LinearRegression())
    covered = []
    for r in range(200):
        task = _linear_task(rng, n=400)  # at n=200 the 2-fold sandwich CI undercovers (0.90)
        sc = cross_fit_scores([task], score, n_folds=2, random_state=r)
        coef, se = sc.pooled([0])
        covered.append(abs(coef - 0.5) <= 1.959964 * se)
    assert 0.91 <= np.mean(covered) <= 0.98


# -- input validation ----------


def test_taskdata_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="same number of rows"):
        TaskData(np.zeros(5), np.zeros(4), np.zeros((5, 2)))


@pytest.mark.parametrize("field", ["y", "d", "x"])
def test_taskdata_rejects_non_finite(field):
    arrs = {"y": np.zeros(5), "d": np.zeros(5), "x": np.zeros((5, 2))}
    arrs[field] = arrs[field].copy()
    arrs[field].flat[0] = np.nan
    with pytest.raises(ValueError, match=f"{field} must contain only finite"):
        TaskData(**arrs)


def test_taskdata_rejects_non_numeric_and_wrong_rank():
    with pytest.raises(TypeError, match="y must be a numeric"):
        TaskData(["a", "b"], np.zeros(2), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="x must be a 2-D"):
        TaskData(np.zeros(2), np.zeros(2), np.zeros((2, 1, 1)))


def test_cross_fit_rejects_fewer_samples_than_folds():
    rng = np.random.default_rng(7)
    tasks = [_linear_task(rng, n=50), TaskData(np.zeros(2), np.arange(2.0), np.zeros((2, 1)))]
    with pytest.raises(ValueError, match="fewer than n_folds=3"):
        cross_fit_scores(tasks, PLRScore(LinearRegression(), LinearRegression()), n_folds=3)


def test_irm_requires_binary_treatment_and_a_classifier():
    rng = np.random.default_rng(8)
    with pytest.raises(ValueError, match=r"tasks\[0\].d must be binary"):
        cross_fit_scores([_linear_task(rng)], IRMScore(LinearRegression(), LogisticRegression()))
    with pytest.raises(TypeError, match="ml_m must be an sklearn classifier"):
        IRMScore(LinearRegression(), LinearRegression())
    with pytest.raises(ValueError, match="clip"):
        IRMScore(clip=0.6)


def test_cross_fit_argument_errors():
    rng = np.random.default_rng(9)
    score = PLRScore(LinearRegression(), LinearRegression())
    with pytest.raises(ValueError, match="n_folds"):
        cross_fit_scores([_linear_task(rng)], score, n_folds=1)
    with pytest.raises(ValueError, match="at least one"):
        cross_fit_scores([], score)
    with pytest.raises(TypeError, match="tasks must be a list"):
        cross_fit_scores(_linear_task(rng), score)
    with pytest.raises(TypeError, match=r"tasks\[0\] must be a TaskData"):
        cross_fit_scores([np.zeros(3)], score)
    for bad in ("a", -1, 1.5, True):  # the third referee: "a" gave numpy's message, not the argument's name
        with pytest.raises(ValueError, match="random_state"):
            cross_fit_scores([_linear_task(rng)], score, random_state=bad)


def test_repeated_cross_fitting_matches_doubleml_n_rep_5():
    """n_rep = 5 with the same five splits equals DoubleMLPLR(n_rep=5): median estimate, median upper bound."""
    dml = pytest.importorskip("doubleml")
    task = _linear_task(np.random.default_rng(11), n=400)
    score = PLRScore(LinearRegression(), LinearRegression())
    splits = [score.folds(task, 2, seed=s) for s in range(5)]
    reps = [score.cross_fit(task, f) for f in splits]
    sc = CrossFitScores((np.array([r[0] for r in reps]),), (np.array([r[1] for r in reps]),))
    assert sc.n_rep == 5
    coef, se = sc.pooled([0])
    data = dml.DoubleMLData.from_arrays(task.x, task.y, task.d)
    ref = dml.DoubleMLPLR(data, LinearRegression(), LinearRegression(), n_folds=2, n_rep=5, draw_sample_splitting=False)
    ref.set_sample_splitting(all_smpls=[list(f) for f in splits])
    ref.fit()
    assert abs(coef - ref.coef[0]) < 1e-8
    assert abs(se - ref.se[0]) < 1e-8
    assert abs(sc.b[0] - ref.coef[0]) < 1e-8  # the pilot is the aggregated estimate too


def test_cross_fit_scores_n_rep_first_repetition_is_the_single_split():
    rng = np.random.default_rng(12)
    tasks = [_linear_task(rng, n=120 + 30 * j) for j in range(3)]
    score = PLRScore(LinearRegression(), LinearRegression())
    one = cross_fit_scores(tasks, score, n_folds=2, random_state=3)
    three = cross_fit_scores(tasks, score, n_folds=2, random_state=3, n_rep=3)
    assert one.n_rep == 1 and three.n_rep == 3
    for j in range(3):
        np.testing.assert_array_equal(three.psi_a[j][0], one.psi_a[j][0])
        np.testing.assert_array_equal(three.psi_b[j][0], one.psi_b[j][0])
        assert not np.array_equal(three.psi_b[j][1], three.psi_b[j][0])  # a different split
    np.testing.assert_array_equal(three.n, one.n)
    thetas = [-np.sum(three.psi_b[0][r]) / np.sum(three.psi_a[0][r]) for r in range(3)]
    assert three.b[0] == pytest.approx(np.median(thetas), abs=1e-14)


def test_n_rep_errors():
    task = _linear_task(np.random.default_rng(0), n=50)
    with pytest.raises(ValueError, match="n_rep"):
        cross_fit_scores([task], PLRScore(LinearRegression(), LinearRegression()), n_rep=0)
    with pytest.raises(ValueError, match="repetitions"):
        CrossFitScores((np.zeros((2, 5)), np.zeros((3, 5))), (np.zeros((2, 5)), np.zeros((3, 5))))
