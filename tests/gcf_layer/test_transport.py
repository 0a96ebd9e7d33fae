"""GeneralCostOT, the c-transform, the twist formula, l2_uvp and the POT baseline."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.gcf_layer import (
    BarycentricOT,
    FinitelyConvex,
    GeneralCostOT,
    LearnedCandidateOT,
    NormCost,
    l2_uvp,
    lp_cost,
    norm_cost,
)

torch.set_num_threads(1)
D64 = torch.float64


@pytest.mark.parametrize("p", [1.5, 2.0, 3.0])
def test_hard_choice_equals_twist_formula(p):
    cost = lp_cost(p)
    g = torch.Generator().manual_seed(0)
    u = FinitelyConvex(
        12,
        2,
        2,
        cost,
        mode="concave",
        y_init=torch.randn(12, 2, generator=g, dtype=D64),
        b_init=torch.randn(12, generator=g, dtype=D64),
        dtype=D64,
    )
    x = torch.randn(200, 2, generator=g, dtype=D64)
    twist = x - cost.inverse_grad_h(u.gradient(x, "hard"))
    assert torch.allclose(twist, u.select(x, "hard").choice, atol=1e-8)


def test_c_transform_on_a_pool_matches_brute_force():
    cost = lp_cost(3.0)
    g = torch.Generator().manual_seed(1)
    u = FinitelyConvex(
        6,
        1,
        1,
        cost,
        mode="concave",
        y_init=torch.rand(6, 1, generator=g, dtype=D64) * 2 - 1,
        b_init=torch.rand(6, generator=g, dtype=D64),
        dtype=D64,
    )
    z = torch.linspace(-1, 1, 41, dtype=D64)[:, None]
    pool = torch.linspace(-1, 1, 4001, dtype=D64)[:, None]
    uc, x_star = u.transform(z, x_pool=pool, sup=False)
    # brute force on a 10x finer grid of the same domain: u^c(z) = inf_x [c(x, z) - u(x)]
    fine = torch.linspace(-1, 1, 40001, dtype=D64)[:, None]
    with torch.no_grad():
        brute = (cost(fine, z) - u(fine, "hard")[0][:, None]).min(0).values
        assert (uc - brute).abs().max().item() < 1e-3
        at_star = cost(x_star, z).diagonal() - u(x_star, "hard")[0]
        assert torch.allclose(at_star, uc)


def test_translation_under_squared_cost_is_recovered():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 1))
    Y = rng.standard_normal((200, 1)) + 3.0
    ot = GeneralCostOT(lp_cost(2.0), steps=1500, lr=1e-2, batch_size=200).fit(Xs=X, Xt=Y)
    Xte = rng.standard_normal((4000, 1))
    Yte = rng.standard_normal((4000, 1)) + 3.0
    assert l2_uvp(ot.transport(Xte, "soft"), Xte + 3.0, Yte) < 5.0
    pot = BarycentricOT(lp_cost(2.0)).fit(X, Y)  # on the samples, the exact plan is the sorted matching
    assert np.allclose(pot.T_[np.argsort(X[:, 0]), 0], np.sort(Y[:, 0]))


def test_monotone_map_for_a_general_cost_in_1d():
    # mu = U[0, 1], nu = law of U^2: the optimal map for every strictly convex h(x - y) is T(x) = x^2
    rng = np.random.default_rng(1)
    X = rng.random((200, 1))
    Y = rng.random((200, 1)) ** 2
    ot = GeneralCostOT(lp_cost(1.5), steps=1500, lr=1e-2, batch_size=200).fit(Xs=X, Xt=Y)
    Xte = rng.random((4000, 1))
    T = ot.transport(Xte, "hard")
    assert l2_uvp(T, Xte**2, rng.random((4000, 1)) ** 2) < 5.0
    order = np.argsort(Xte[:, 0])
    assert np.all(np.diff(T[order, 0]) >= -1e-4)  # monotone as the truth is (up to float32 near-ties)
    assert ot.dual_value(X) <= BarycentricOT(lp_cost(1.5)).fit(X, Y).cost_ + 1e-4  # weak duality


@settings(max_examples=25, deadline=None)
@given(st.floats(-3, 3), st.floats(0.1, 5))
def test_l2_uvp_of_a_shifted_map(shift, scale):
    rng = np.random.default_rng(0)
    T_star = rng.standard_normal((100, 2))
    Y = rng.standard_normal((500, 2)) * scale
    var = Y.var(axis=0, ddof=1).sum()
    assert l2_uvp(T_star, T_star, Y) == 0.0
    assert l2_uvp(T_star + shift, T_star, Y) == pytest.approx(100 * 2 * shift**2 / var)


def test_bad_inputs():
    with pytest.raises(ValueError, match="T_hat and T_star"):
        l2_uvp(np.zeros((3, 1)), np.zeros((4, 1)), np.ones((5, 1)))
    with pytest.raises(ValueError, match="Y must be finite"):
        l2_uvp(np.zeros((3, 1)), np.zeros((3, 1)), np.array([[1.0], [np.nan]]))
    with pytest.raises(ValueError, match="zero variance"):
        l2_uvp(np.zeros((3, 1)), np.zeros((3, 1)), np.ones((5, 1)))
    with pytest.raises(TypeError, match="cost"):
        GeneralCostOT("l2")
    with pytest.raises(ValueError, match="steps"):
        GeneralCostOT(lp_cost(2.0), steps=0)
    with pytest.raises(ValueError, match="selection"):
        GeneralCostOT(lp_cost(2.0), selection="argmin")
    ot = GeneralCostOT(lp_cost(2.0), steps=5)
    with pytest.raises(RuntimeError, match="fit"):
        ot.transport(np.zeros((2, 1)))
    with pytest.raises(ValueError, match="Xs must be finite"):
        ot.fit(Xs=np.array([[0.0], [np.inf]]), Xt=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="Xt must have 2 columns"):
        ot.fit(Xs=np.zeros((4, 2)), Xt=np.zeros((4, 1)))
    ot.fit(Xs=np.random.default_rng(0).random((8, 1)), Xt=np.random.default_rng(1).random((8, 1)))
    with pytest.raises(ValueError, match="X must have 1 columns"):
        ot.transport(np.zeros((2, 3)))
    custom = GeneralCostOT(lambda x, y: torch.cdist(x, y), steps=5).fit(Xs=np.zeros((4, 1)), Xt=np.ones((4, 1)))
    with pytest.raises(ValueError, match="inverse_grad_h"):
        custom.transport(np.zeros((2, 1)), "soft")


def _pot_cost(X, Y, p, a=None, b=None):
    import ot

    M = lp_cost(p)(torch.as_tensor(X), torch.as_tensor(Y)).numpy()
    a = np.full(len(X), 1 / len(X)) if a is None else a / a.sum()
    b = np.full(len(Y), 1 / len(Y)) if b is None else b / b.sum()
    return float(ot.emd2(a, b, M))


def test_learned_candidate_dual_matches_emd2_on_a_tiny_problem():
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((40, 1)), rng.exponential(size=(8, 1))
    lc = LearnedCandidateOT(lp_cost(3.0), n_candidates=8, steps=800, lr=3e-2, seed=0).fit(Xs=X, Xt=Y)
    emd = _pot_cost(X, Y, 3.0)
    dual = lc.dual_value()
    assert dual <= emd * (1 + 1e-5)  # weak duality: the c-transform over the support makes a feasible pair
    assert (emd - dual) / emd < 0.01
    assert lc.potential_.y.shape == (8, 1) and lc.transform(X).shape == (40, 1)


def test_weights_equal_duplicated_samples():
    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((12, 1)), rng.standard_normal((10, 1)) + 1.0
    a = rng.integers(1, 4, 12).astype(float)
    b = rng.integers(1, 4, 10).astype(float)
    Xd, Yd = np.repeat(X, a.astype(int), 0), np.repeat(Y, b.astype(int), 0)
    emd = _pot_cost(X, Y, 2.0, a, b)
    assert emd == pytest.approx(_pot_cost(Xd, Yd, 2.0), rel=1e-9)
    kw = dict(steps=3000, lr=3e-2, batch_size=10_000, dtype=D64)
    w = GeneralCostOT(lp_cost(2.0), **kw).fit(Xs=X, Xt=Y, a=a, b=b)
    d = GeneralCostOT(lp_cost(2.0), **kw).fit(Xs=Xd, Xt=Yd)
    assert w.dual_value(X, a) == pytest.approx(d.dual_value(Xd), rel=2e-3)
    assert w.dual_value(X, a) == pytest.approx(emd, rel=2e-3) and w.dual_value(X, a) <= emd + 1e-9
    assert np.mean(np.isclose(w.transport(X, "hard"), d.transport(X, "hard"))) >= 0.75  # up to near-ties
    lw = LearnedCandidateOT(lp_cost(2.0), n_candidates=6, steps=600, lr=3e-2, dtype=D64).fit(Xs=X, Xt=Y, a=a, b=b)
    assert lw.dual_value() <= emd + 1e-9 and (emd - lw.dual_value()) / emd < 0.02


def test_pot_style_fit_transform():
    rng = np.random.default_rng(4)
    Xs, Xt = rng.standard_normal((64, 1)), rng.standard_normal((64, 1)) + 2.0
    for est in (GeneralCostOT(lp_cost(2.0), steps=300), LearnedCandidateOT(lp_cost(2.0), n_candidates=8, steps=300)):
        fitted = est.fit(Xs=Xs, Xt=Xt, a=None, b=None)
        assert fitted is est
        assert np.allclose(est.transform(Xs), est.transport(Xs, "soft"))
        assert est.transform(Xs).shape == (64, 1)
    custom = GeneralCostOT(lambda x, y: torch.cdist(x, y), steps=5).fit(Xs=Xs, Xt=Xt)
    assert np.allclose(custom.transform(Xs), custom.transport(Xs, "hard"))  # no twist formula: hard choice


def test_weight_and_candidate_bad_inputs():
    X = np.zeros((4, 1))
    est = GeneralCostOT(lp_cost(2.0), steps=5)
    with pytest.raises(ValueError, match="one weight per sample"):
        est.fit(Xs=X, Xt=X, a=np.ones(3))
    with pytest.raises(ValueError, match="b must be finite"):
        est.fit(Xs=X, Xt=X, b=np.array([1.0, -1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="a must be finite"):
        est.fit(Xs=X, Xt=X, a=np.zeros(4))
    with pytest.raises(TypeError, match="a must be None"):
        est.fit(Xs=X, Xt=X, a=object())
    with pytest.raises(ValueError, match="n_candidates"):
        LearnedCandidateOT(lp_cost(2.0), n_candidates=0)
    with pytest.raises(ValueError, match="exceeds the 4 target samples"):
        LearnedCandidateOT(lp_cost(2.0), n_candidates=5, steps=5).fit(Xs=X, Xt=X)
    with pytest.raises(RuntimeError, match="fit"):
        LearnedCandidateOT(lp_cost(2.0)).dual_value()


def test_norm_cost_twist_inverts_its_gradient_and_refuses_bad_p():
    z = torch.randn(50, 2, dtype=D64)
    for p in (1.5, 2.0, 3.0):
        c = norm_cost(p)
        zz = z.clone().requires_grad_(True)
        h = c(zz, torch.zeros(1, 2, dtype=D64))[:, 0].sum()
        (g,) = torch.autograd.grad(h, zz)  # grad h(z)
        assert torch.allclose(c.inverse_grad_h(g), z, atol=1e-6)
        assert torch.allclose(c(z, z[:3]), torch.cdist(z, z[:3]) ** p / p, atol=1e-6)
    with pytest.raises(ValueError, match="p must be"):
        norm_cost(1.0)
    with pytest.raises(ValueError, match="eps"):
        NormCost(2.0, eps=-1.0)


def test_the_quantile_map_is_exact_for_separable_settings_but_not_for_the_norm_cost_setting():
    """Issue 49: a cost-blind sort-based map met the old transport bounds (1-D, and separable costs between product
    measures, where it is the exact map); on the non-separable setting it misses the emd map by far, and the exact maps
    of two costs differ, so a map must use its cost."""
    pytest.importorskip("ot")
    from icml26.gcf_layer.experiment import _SRC, _TGT, _mixture, exact_map, quantile_map

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((400, 1)), rng.exponential(size=(400, 1))
    truth = exact_map(x, y, lp_cost(3.0))  # 1-D: monotone for every convex cost
    assert l2_uvp(quantile_map(x, y)(x), truth, y) < 1.0  # the sorted assignment, up to interpolation
    X, Y = _mixture(rng, 400, _SRC), _mixture(rng, 400, _TGT)
    t15, t3 = exact_map(X, Y, norm_cost(1.5)), exact_map(X, Y, norm_cost(3.0))
    assert l2_uvp(quantile_map(X, Y)(X), t3, Y) > 30.0
    assert l2_uvp(t15, t3, Y) > 5.0


def test_frozen_candidates_learn_the_offsets_only():
    rng = np.random.default_rng(5)
    X, Y = rng.standard_normal((30, 2)), rng.standard_normal((30, 2)) + 1.0
    fr = LearnedCandidateOT(norm_cost(2.0), n_candidates=6, steps=50, lr=3e-2, learn_candidates=False).fit(Xs=X, Xt=Y)
    lc = LearnedCandidateOT(norm_cost(2.0), n_candidates=6, steps=50, lr=3e-2).fit(Xs=X, Xt=Y)
    assert any(torch.equal(fr.potential_.y[0], torch.as_tensor(Y[i], dtype=torch.float32)) for i in range(30))
    assert not fr.potential_.y.requires_grad and lc.potential_.y.requires_grad
    with pytest.raises(TypeError, match="learn_candidates"):
        LearnedCandidateOT(norm_cost(2.0), learn_candidates=1)


def _small_pair(seed=5, n=48):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 1)), rng.standard_normal((n, 1)) + 1.5


@pytest.mark.parametrize("cls", [GeneralCostOT, LearnedCandidateOT])
def test_pot_da_fit_keywords_and_positional_order(cls):
    """POT's ``ot.da`` surface: fit(Xs=None, ys=None, Xt=None, yt=None); positional fit(Xs, ys, Xt) reads Xt third."""
    Xs, Xt = _small_pair()
    kw = dict(steps=60, n_candidates=8) if cls is LearnedCandidateOT else dict(steps=60)
    by_kw = cls(lp_cost(2.0), **kw).fit(Xs=Xs, ys=None, Xt=Xt)
    by_pos = cls(lp_cost(2.0), **kw).fit(Xs, None, Xt, None)
    assert np.array_equal(by_kw.transform(Xs), by_pos.transform(Xs))
    a = np.linspace(1.0, 2.0, len(Xs))
    weighted = cls(lp_cost(2.0), **kw).fit(Xs, None, Xt, None, a=a, b=None)  # weights: keyword-only
    assert weighted.transform(Xs).shape == Xs.shape
    with pytest.warns(FutureWarning, match="old order"):  # the pre-POT fit(Xs, Xt) still works, with a warning
        old = cls(lp_cost(2.0), **kw).fit(Xs, Xt)
    assert np.array_equal(old.transform(Xs), by_kw.transform(Xs))
    with pytest.raises(TypeError):
        cls(lp_cost(2.0), **kw).fit(Xs, None, Xt, None, a)  # a is not positional
    with pytest.raises(NotImplementedError, match="ys and yt must be None"):
        cls(lp_cost(2.0), **kw).fit(Xs=Xs, ys=np.zeros(len(Xs)), Xt=Xt)
    with pytest.raises(ValueError, match="needs the source samples Xs and the target samples Xt"):
        cls(lp_cost(2.0), **kw).fit(Xs=Xs)


@pytest.mark.parametrize("cls", [GeneralCostOT, LearnedCandidateOT])
def test_clone_get_set_params(cls):
    from sklearn.base import clone

    kw = dict(steps=40, n_candidates=6, lr=3e-2) if cls is LearnedCandidateOT else dict(steps=40, lr=3e-2)
    est = cls(lp_cost(2.0), **kw)
    twin = clone(est)
    assert twin is not est and twin.get_params().keys() == est.get_params().keys()
    assert twin.get_params()["steps"] == 40 and not hasattr(twin, "potential_")
    Xs, Xt = _small_pair()
    assert np.array_equal(twin.fit(Xs=Xs, Xt=Xt).transform(Xs), est.fit(Xs=Xs, Xt=Xt).transform(Xs))
    assert est.set_params(steps=7) is est and est.get_params()["steps"] == 7
    est.set_params(steps=0)  # set_params does not validate; fit does
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        est.fit(Xs=Xs, Xt=Xt)


@pytest.mark.parametrize("cls", [GeneralCostOT, LearnedCandidateOT])
def test_fit_transform_equals_fit_then_transform(cls):
    Xs, Xt = _small_pair()
    kw = dict(steps=60, n_candidates=8) if cls is LearnedCandidateOT else dict(steps=60)
    once = cls(lp_cost(2.0), **kw).fit_transform(Xs=Xs, Xt=Xt)
    assert np.array_equal(once, cls(lp_cost(2.0), **kw).fit(Xs=Xs, Xt=Xt).transform(Xs))
    assert np.array_equal(once, cls(lp_cost(2.0), **kw).fit_transform(Xs, None, Xt))


@pytest.mark.parametrize("cls", [GeneralCostOT, LearnedCandidateOT])
def test_inverse_transform_is_a_named_error(cls):
    Xs, Xt = _small_pair()
    kw = dict(steps=5, n_candidates=4) if cls is LearnedCandidateOT else dict(steps=5)
    est = cls(lp_cost(2.0), **kw).fit(Xs=Xs, Xt=Xt)
    with pytest.raises(NotImplementedError, match="not invertible.*fit the reverse map"):
        est.inverse_transform(Xt=Xt)


def test_transform_is_smooth_and_hard_map_matches_pot_emd_transport():
    """``transform`` (the smooth twist map) is not POT's EMDTransport map; ``transport(X, "hard")`` is (N = M,
    uniform weights: the plan is a permutation), up to near-ties of the learned potential."""
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(0)
    Xs, Xt = rng.standard_normal((120, 1)), rng.exponential(size=(120, 1))
    g = GeneralCostOT(lp_cost(2.0), steps=2000, batch_size=10_000, lr=3e-2, dtype=D64).fit(Xs=Xs, Xt=Xt)
    emd = ot.da.EMDTransport().fit(Xs=Xs, Xt=Xt).transform(Xs=Xs)
    assert np.mean(np.isclose(g.transport(Xs, "hard"), emd)) >= 0.9
    rms = float(np.sqrt(np.mean((g.transform(Xs) - emd) ** 2)))
    assert 1e-3 < rms < 0.3
