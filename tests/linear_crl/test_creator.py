"""CREATOR: exact recovery from exact rows, invariances, recovery on an easy instance, helpers, bad inputs."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from icml26.linear_crl import CREATOR, LiNGCReLLike, is_linear_extension, loc_r2, make_linear_crl_data, mcc, shd
from icml26.linear_crl._linalg import intersect, rank_drop_parents


def _score(model, Xs, truth):
    Y = np.vstack(truth.latents[: len(Xs)])
    s, m, _ = loc_r2(Y, model.transform(np.vstack(Xs)), truth.adjacency, return_matching=True)
    order_ok = is_linear_extension([int(m[t]) for t in model.causal_order_], truth.adjacency)
    return s, shd(truth.adjacency, model.adjacency_matrix_, m), order_ok


def _oracle_fit(d, seed, noise="env", K=None):
    Xs, truth = make_linear_crl_data(
        n_latent=d, n_envs=K or 2 * d, n_samples=200, noise=noise, edge_prob=0.6, seed=seed
    )
    m = CREATOR(d, rank_tol=1e-6, intersect_tol=1e-4).fit_unmixing(Xs, truth.oracle_unmixing())
    return m, Xs, truth


@pytest.mark.parametrize("d,seed", [(2, 0), (3, 1), (5, 2), (7, 3)])
def test_exact_rows_give_exact_recovery(d, seed):
    m, Xs, truth = _oracle_fit(d, seed)
    s, err, order_ok = _score(m, Xs, truth)
    assert order_ok and err == 0 and s == pytest.approx(1.0, abs=1e-8)
    assert m.causal_order_ == list(range(d)) and np.all(np.triu(m.adjacency_matrix_) == 0)
    assert list(map(len, m.surrounded_sets_)) == [d_ - 1 for d_ in m.intersection_dims_]


@pytest.mark.filterwarnings("ignore:every latent's ICA rows are collinear")  # empty graphs are drawn too
@settings(max_examples=20, deadline=None)
@given(d=st.integers(2, 6), seed=st.integers(0, 100_000))
def test_exact_rows_property(d, seed):
    m, Xs, truth = _oracle_fit(d, seed)
    s, err, order_ok = _score(m, Xs, truth)
    assert order_ok and err == 0 and s == pytest.approx(1.0, abs=1e-8)


def test_post_ica_invariances():
    """Permuting environments and rows, rescaling / flipping rows and an invertible change of the observed
    coordinates leave the graph and LocR^2 unchanged."""
    d, K = 5, 10
    Xs, truth = make_linear_crl_data(n_latent=d, n_envs=K, n_samples=1000, seed=4)
    m = CREATOR(d, random_state=0).fit(Xs)
    U = [r @ m.whitening_ for r in m.unmixing_rows_]
    base = CREATOR(d).fit_unmixing(Xs, U)
    np.testing.assert_array_equal(base.adjacency_matrix_, m.adjacency_matrix_)
    rng = np.random.default_rng(1)
    perm = rng.permutation(K)
    M = rng.normal(size=(10, 10)) + 3 * np.eye(10)
    U2 = [
        (rng.uniform(0.2, 5, d) * rng.choice([-1, 1], d))[:, None] * U[k][rng.permutation(d)] @ np.linalg.inv(M)
        for k in perm
    ]
    Xs2 = [Xs[k] @ M.T for k in perm]
    moved = CREATOR(d).fit_unmixing(Xs2, U2)
    np.testing.assert_array_equal(moved.adjacency_matrix_, m.adjacency_matrix_)
    Y, Y2 = np.vstack(truth.latents), np.vstack([truth.latents[k] for k in perm])
    assert loc_r2(Y2, moved.transform(np.vstack(Xs2)), truth.adjacency) == pytest.approx(
        loc_r2(Y, m.transform(np.vstack(Xs)), truth.adjacency), abs=1e-9
    )


def test_recovery_on_an_easy_instance_and_the_baseline_fails_there():
    """Weak heterogeneity, d=4, K=8, n=5000 (6 draws): CREATOR recovers latents and graph; matching ICA
    components by their noise laws cannot (the laws coincide within an environment)."""
    ours, base = [], []
    for seed in range(6):
        Xs, truth = make_linear_crl_data(n_latent=4, n_envs=8, n_samples=5000, noise="env", min_edges=3, seed=seed)
        ours.append(_score(CREATOR(4, random_state=0).fit(Xs), Xs, truth))
        base.append(_score(LiNGCReLLike(4, random_state=0).fit(Xs), Xs, truth))
    s, err, order_ok = (np.array(v, dtype=float) for v in zip(*ours))
    s_b, err_b, _ = (np.array(v, dtype=float) for v in zip(*base))
    assert s.min() > 0.99 and err.mean() <= 0.5 and order_ok.all()
    assert s_b.mean() < s.mean() - 0.1 and err_b.mean() > err.mean() + 2


def test_shuffled_environment_labels_break_recovery():
    """Mutant data: the same samples with environment labels shuffled (no heterogeneity left to use)."""
    Xs, truth = make_linear_crl_data(n_latent=5, n_envs=10, n_samples=1000, min_edges=4, seed=2)
    s, _, _ = _score(CREATOR(5, random_state=0).fit(Xs), Xs, truth)
    rng = np.random.default_rng(0)
    idx = rng.permutation(10 * 1000)
    X, Y = np.vstack(Xs)[idx], np.vstack(truth.latents)[idx]
    shuffled = CREATOR(5, random_state=0).fit(np.split(X, 10))
    s_mut = loc_r2(Y, shuffled.transform(X), truth.adjacency)
    assert s > 0.95 and s_mut < s - 0.15


def test_empty_graph_warns_and_recovers_sources():
    Xs, truth = make_linear_crl_data(n_latent=4, n_envs=4, n_samples=3000, edge_prob=0.0, seed=0)
    with pytest.warns(UserWarning, match="not identifiable"):
        m = CREATOR(4, random_state=0).fit(Xs)
    assert m.adjacency_matrix_.sum() == 0
    assert mcc(np.vstack(truth.latents), m.transform(np.vstack(Xs))) > 0.97


def test_homogeneous_weights_warn():
    Xs, _ = make_linear_crl_data(n_latent=4, n_envs=6, n_samples=3000, heterogeneous_weights=False, min_edges=3, seed=1)
    with pytest.warns(UserWarning, match="heterogeneity insufficient"):
        CREATOR(4, random_state=0).fit(Xs)


def test_heterogeneous_data_does_not_warn():
    Xs, _ = make_linear_crl_data(n_latent=4, n_envs=8, n_samples=1000, min_edges=3, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        CREATOR(4, random_state=0).fit(Xs)


def test_rank_drop_helper_on_planted_spans():
    rng = np.random.default_rng(0)
    K, t = 12, 5
    parents = [0, 3]  # node at position 5 with parents at positions 0 and 3
    C = np.zeros((K, t + 1))
    C[:, t] = rng.uniform(0.5, 1.0, K)
    for s in parents:  # row k = e_t - sum_j w_kj e_j in the basis q_0..q_t, then triangular mixing
        C[:, s] = rng.uniform(0.5, 1.5, K) * rng.choice([-1, 1], K)
    L = np.tril(rng.normal(size=(t + 1, t + 1)) * 0.3, -1) + np.eye(t + 1)  # row j = h_j: components on q_0..q_j
    C = C @ L
    pa, stat = rank_drop_parents(C / np.linalg.norm(C, axis=1, keepdims=True), 0.05)
    assert pa == parents
    assert np.all(stat[[1, 2, 4]] < 1e-10)


def test_intersection_helper_dimension():
    rng = np.random.default_rng(1)
    common = np.linalg.qr(rng.normal(size=(6, 2)))[0]
    A = np.linalg.qr(np.column_stack([common, rng.normal(size=(6, 1))]))[0]
    B = np.linalg.qr(np.column_stack([common, rng.normal(size=(6, 2))]))[0]
    D, cos = intersect(A, B, 1e-4)
    assert D.shape[1] == 2 and np.allclose(common @ (common.T @ D), D)
    D1, _ = intersect(A[:, 2:], B[:, 2:], 1e-4)  # nothing shared: the best-aligned direction is kept
    assert D1.shape[1] == 1


def test_sklearn_surface():
    Xs, _ = make_linear_crl_data(n_latent=3, n_envs=6, n_samples=400, seed=0)
    m = CREATOR(3, rank_tol=0.2, random_state=0)
    assert clone(m).get_params()["rank_tol"] == 0.2
    with pytest.raises(NotFittedError):
        m.transform(Xs[0])
    assert m.fit(Xs) is m
    assert m.components_.shape == (3, 10) and m.row_assignment_.shape == (3, 6)
    assert m.adjacency_matrix_.shape == (3, 3) and len(m.surrounded_sets_) == 3
    out = clone(m).fit_transform(Xs)  # one array (environments stacked), so a Pipeline can use it
    assert isinstance(out, np.ndarray) and out.shape == (6 * 400, 3)
    np.testing.assert_allclose(out[400:800], m.transform(Xs[1]))
    np.testing.assert_allclose(out.std(0), 1.0, atol=0.05)  # unit pooled variance


def test_bad_inputs_name_the_argument():
    Xs, _ = make_linear_crl_data(n_latent=3, n_envs=6, n_samples=100, seed=0)
    with pytest.raises(ValueError, match=r"Xs\[2\] has 9 features but Xs\[0\] has 10"):
        CREATOR(3).fit([Xs[0], Xs[1], Xs[2][:, :9], *Xs[3:]])
    with pytest.raises(ValueError, match="K >= d"):
        CREATOR(3).fit(Xs[:2])
    with pytest.raises(TypeError, match="list of per-environment arrays"):
        CREATOR(3).fit(np.vstack(Xs))
    bad = [X.copy() for X in Xs]
    bad[1][0, 0] = np.nan
    with pytest.raises(ValueError, match=r"Xs\[1\] contains NaN"):
        CREATOR(3).fit(bad)
    with pytest.raises(ValueError, match="n_latent"):
        CREATOR(0).fit(Xs)
    with pytest.raises(ValueError, match="n_latent=11 exceeds the number of features"):
        CREATOR(11).fit([np.ones((20, 10))] * 11)
    with pytest.raises(ValueError, match="rank_tol"):
        CREATOR(3, rank_tol=0.0).fit(Xs)
    with pytest.raises(ValueError, match="intersect_tol"):
        CREATOR(3, intersect_tol=-1).fit(Xs)
    with pytest.raises(ValueError, match="more than n_latent"):
        CREATOR(3).fit([X[:3] for X in Xs])
    with pytest.raises(ValueError, match=r"unmixings\[0\]"):
        CREATOR(3).fit_unmixing(Xs, [np.ones((2, 10))] * 6)
    m = CREATOR(3, random_state=0).fit(Xs)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 10\)"):
        m.transform(np.ones((5, 9)))


def test_fit_with_groups_equals_the_list_form_and_works_in_a_pipeline():
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    Xs, _ = make_linear_crl_data(n_latent=3, n_envs=6, n_samples=300, seed=1)
    X = np.vstack(Xs)
    g = np.repeat(np.arange(6) * 10, 300)  # any sortable labels
    perm = np.random.default_rng(0).permutation(len(X))  # rows need not be grouped
    a = CREATOR(3, random_state=0).fit(Xs)
    b = CREATOR(3, random_state=0).fit(X, groups=g)
    np.testing.assert_array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-10)
    assert list(b.environments_) == [0, 10, 20, 30, 40, 50]
    c = CREATOR(3, random_state=0)
    Y = c.fit_transform(X[perm], groups=g[perm])  # rows returned in the caller's order
    np.testing.assert_allclose(Y, c.transform(X[perm]), atol=1e-12)
    assert list(c.environments_) == [0, 10, 20, 30, 40, 50]
    pipe = Pipeline([("scale", StandardScaler()), ("crl", CREATOR(3, random_state=0))])
    out = pipe.fit_transform(X, crl__groups=g)
    assert out.shape == (len(X), 3) and np.all(np.isfinite(out))
    with pytest.raises(ValueError, match="groups must be a 1-D array"):
        CREATOR(3).fit(X, groups=g[:-1])


def test_ica_non_convergence_is_said_not_swallowed():
    from sklearn.exceptions import ConvergenceWarning

    Xs, _ = make_linear_crl_data(n_latent=3, n_envs=6, n_samples=300, seed=1)
    with pytest.warns(ConvergenceWarning, match="FastICA did not converge"):
        CREATOR(3, max_iter=1, random_state=0).fit(Xs)


def test_check_estimator_runs_with_the_documented_exclusions():
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    from icml26.linear_crl.creator import SKLEARN_INAPPLICABLE_CHECKS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = check_estimator(
            CREATOR(n_latent=2, random_state=0), expected_failed_checks=SKLEARN_INAPPLICABLE_CHECKS, on_fail=None
        )
    status = {}
    for r in res:
        status.setdefault(r["check_name"], set()).add(r["status"])
    assert not [n for n, s in status.items() if "failed" in s], status  # every failure is a documented one
    assert {"check_estimator_cloneable", "check_get_params_invariance", "check_estimators_unfitted"} <= {
        n for n, s in status.items() if s == {"passed"}
    }
    # the exclusions are exactly the checks that need environments: none of them passes unexpectedly
    assert not [n for n in SKLEARN_INAPPLICABLE_CHECKS if "passed" in status.get(n, set())]


def _gaussian_copy(truth, seed):
    """The same graph, weights, scales and mixing with Gaussian noises (ICA cannot separate them)."""
    rng = np.random.default_rng(seed)
    d = truth.adjacency.shape[0]
    out = []
    for k, Z in enumerate(truth.noises):
        G = rng.normal(size=Z.shape)
        Y = np.linalg.solve(np.eye(d) - truth.weights[k], np.diag(truth.scales[k]) @ G.T).T
        out.append(Y @ truth.mixing.T)
    return out


def test_order_scores_that_do_not_separate_are_said():
    import warnings

    Xs, truth = make_linear_crl_data(n_latent=5, n_envs=10, seed=0, min_edges=4)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        CREATOR(5, random_state=0).fit(Xs)
    assert not [x for x in w if "do not separate" in str(x.message)]
    with pytest.warns(UserWarning, match="order scores do not separate"):
        CREATOR(5, random_state=0).fit(_gaussian_copy(truth, 0))
    with pytest.raises(ValueError, match="order_tol"):
        CREATOR(5, order_tol=1.5).fit(Xs)


def test_bad_inputs_in_the_groups_form_and_random_state_name_the_argument():
    Xs, _ = make_linear_crl_data(n_latent=3, n_envs=6, n_samples=100, seed=0)
    X = np.vstack(Xs)
    g = np.repeat(np.arange(6.0), 100)
    g[5] = np.nan
    with pytest.raises(ValueError, match="groups has 1 missing labels"):
        CREATOR(3).fit(X, groups=g)
    labels = np.array(["a"] * 100 + ["b"] * 100 + ["c"] * 100 + ["d"] * 100 + ["e"] * 198 + ["f"] * 2)
    with pytest.raises(ValueError, match="groups label 'f' has 2 samples"):  # the user's label, not an index
        CREATOR(3).fit(X, groups=labels)
    with pytest.raises(ValueError, match="groups has K=2 distinct labels"):  # the groups form names groups
        CREATOR(3).fit(X[:200], groups=np.repeat([0, 1], 100))
    flat = [np.c_[Xs[0][:, :1], np.zeros((100, Xs[0].shape[1] - 1))], *Xs[1:]]
    with pytest.raises(ValueError, match=r"Xs\[0\] has data rank 1 < n_latent=3"):
        CREATOR(3).fit(flat)
    with pytest.raises(ValueError, match="groups label 'a' has data rank 1"):
        CREATOR(3).fit(np.vstack(flat), groups=np.repeat(list("abcdef"), 100))
    with pytest.raises(ValueError, match=r"Xs\[0\] is constant"):
        CREATOR(3).fit([np.zeros_like(Xs[0]), *Xs[1:]])
    for bad in ("x", -1, 1.5, True):
        with pytest.raises(ValueError, match="random_state must be"):
            CREATOR(3, random_state=bad).fit(Xs)


def _groups_data(seed=2):
    Xs, _ = make_linear_crl_data(n_latent=3, n_envs=6, n_samples=200, seed=seed)
    X = np.vstack(Xs)
    g = np.repeat(np.array(["e0", "e1", "e2", "e3", "e4", "e5"]), 200)
    perm = np.random.default_rng(seed).permutation(len(X))
    return X[perm], g[perm]


def test_fit_based_common_checks_on_the_groups_form():
    """scikit-learn's fit-based common checks (excluded from check_estimator, which cannot pass groups), run by
    hand on fit(X, groups=...): pickle, idempotence, n_features_in_, fit returns self, clone, sample-order and
    subset invariance of transform, no fitted state before fit, parameters not overwritten."""
    import pickle

    X, g = _groups_data()
    est = CREATOR(3, random_state=0)
    params = est.get_params()
    assert not [k for k in vars(est) if k.endswith("_")]  # nothing fitted yet
    assert est.fit(X, groups=g) is est
    assert est.get_params() == params  # fit does not overwrite parameters
    assert est.n_features_in_ == X.shape[1]
    Y = est.transform(X)
    # pickle round trip
    est2 = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est2.transform(X), Y)
    np.testing.assert_array_equal(est2.adjacency_matrix_, est.adjacency_matrix_)
    # idempotence: fitting twice (same random_state) gives the same model; a clone fits to the same model too
    est.fit(X, groups=g)
    np.testing.assert_allclose(est.transform(X), Y, atol=1e-12)
    c = clone(est).fit(X, groups=g)
    np.testing.assert_allclose(c.transform(X), Y, atol=1e-12)
    # sample-order invariance of transform, and subset (batch) invariance
    perm = np.random.default_rng(1).permutation(len(X))
    np.testing.assert_allclose(est.transform(X[perm]), Y[perm], atol=1e-12)
    parts = np.vstack([est.transform(b) for b in np.array_split(X, 7)])
    np.testing.assert_allclose(parts, Y, atol=1e-12)
    # n_features_in_ is enforced
    with pytest.raises(ValueError, match=rf"shape \(n_samples, {X.shape[1]}\)"):
        est.transform(X[:, :-1])
    # the order of rows in fit does not change the model (rows are split by label, kept in their order; a
    # permutation that keeps each environment's row order gives bit-identical per-environment data)
    order = np.argsort(g, kind="stable")
    d = CREATOR(3, random_state=0).fit(X[order], groups=g[order])
    np.testing.assert_allclose(d.components_, est.components_, atol=1e-10)
    # an environment subset changes the data, not the API: five environments still fit and transform
    keep = g != "e5"
    assert CREATOR(3, random_state=0).fit(X[keep], groups=g[keep]).transform(X).shape == (len(X), 3)
