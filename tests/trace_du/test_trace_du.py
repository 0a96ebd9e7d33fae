"""TraceDU: the bound against coupled retrains, the gossip identity, edge cases, sequential requests, errors."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.trace_du import (
    MLP,
    DecentralizedSGD,
    SoftmaxRegression,
    TraceDU,
    erdos_renyi,
    fine_tune,
    gaussian_sigma,
    last_plus_noise,
    make_backdoor_digits,
    metropolis_weights,
    remove_nodes,
    retrain,
    ring,
)


def _setup(seed=0, n=6, rounds=12, l2=1e-2, forget=(2,), topo="ring", lr=1.5, K=3, mpn=30):
    data = make_backdoor_digits(seed=seed, n_nodes=n, forget=forget, max_per_node=mpn, min_per_node=5)
    model = SoftmaxRegression(data.n_features, 10, l2=l2)
    A = ring(n, chords=1) if topo == "ring" else erdos_renyi(n, 0.5, seed=seed)
    W = metropolis_weights(A)
    traj = DecentralizedSGD(
        model, data.node_data, W, local_steps=K, lr=lr, batch_size=8, rounds=rounds, seed=seed
    ).run()
    return data, model, W, traj


@pytest.fixture(scope="module")
def setup():
    return _setup()


def test_gossip_identity_two_term_decomposition():
    """x_i - x'_i = sum_{j notin U} W^{-U}_ij (y_j - y'_j) + sum_{c in U} W_ic (y_c - y_i), exactly."""
    g = torch.Generator().manual_seed(0)
    n, p, U = 7, 5, [2, 5]
    W = metropolis_weights(erdos_renyi(n, 0.5, seed=1))
    keep = [i for i in range(n) if i not in U]
    Wk = remove_nodes(W, U)
    Y, Yp = (
        torch.randn(n, p, generator=g, dtype=torch.float64),
        torch.randn(len(keep), p, generator=g, dtype=torch.float64),
    )
    lhs = torch.as_tensor(W, dtype=torch.float64)[keep] @ Y - torch.as_tensor(Wk) @ Yp
    rhs = torch.as_tensor(Wk) @ (Y[keep] - Yp) + sum(torch.as_tensor(W[keep, c])[:, None] * (Y[c] - Y[keep]) for c in U)
    assert torch.allclose(lhs, rhs, atol=1e-12)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 50), topo=st.sampled_from(["ring", "er"]), c=st.integers(0, 5))
def test_bound_covers_coupled_retrain_every_round(seed, topo, c):
    """T1: ||X^t - X^t_ref||_F <= Delta_U(t) and per node ||x_i - x'_i|| <= a_i^t, strongly convex model."""
    _, _, _, traj = _setup(seed=seed, topo=topo, forget=(c,), rounds=8)
    rt = retrain(traj, [c])
    s = TraceDU(traj, "strongly_convex").sensitivity([c])
    kept = [i for i in range(6) if i != c]
    for t in range(traj.rounds + 1):
        diff = traj.checkpoints[t][kept] - rt.checkpoints[t]
        assert float(diff.norm()) <= s.delta[t] + 1e-9
        assert (diff.norm(dim=1).numpy() <= s.per_node[t] + 1e-9).all()


def test_empty_forget_and_identity_gossip(setup):
    _, model, _, traj = setup
    t = TraceDU(traj, "strongly_convex")
    assert np.all(t.sensitivity([]).delta == 0)
    data = make_backdoor_digits(seed=1, n_nodes=4, forget=(1,), max_per_node=20, min_per_node=5)
    tr = DecentralizedSGD(model, data.node_data, np.eye(4), local_steps=2, lr=1.0, batch_size=4, rounds=5).run()
    s = TraceDU(tr, "strongly_convex").sensitivity([1])
    assert np.all(s.delta == 0)  # no communication: nothing to inject
    rt = retrain(tr, [1])
    assert torch.equal(tr.final[[0, 2, 3]], rt.final)  # actual and reference coincide exactly


def test_graph_bound_never_above_agnostic_and_sigma_monotone(setup):
    _, _, _, traj = setup
    t = TraceDU(traj, "strongly_convex")
    assert (t.sensitivity([2]).delta <= t.sensitivity([2], bound="agnostic").delta + 1e-12).all()
    ts = [
        TraceDU(traj, "strongly_convex").unlearn([2], 1.0, 1e-4, sigma=s).certificate.t_star
        for s in (0.5, 2.0, 8.0, 32.0, 1e4)
    ]
    assert ts == sorted(ts) and ts[0] >= 0 and ts[-1] == traj.rounds


def test_unlearn_certificate_and_noise(setup):
    _, _, _, traj = setup
    t = TraceDU(traj, "strongly_convex")
    res = t.unlearn([2], 1.0, 1e-4, sigma=4.0)
    c = res.certificate
    assert not c.heuristic and c.forget == (2,) and c.rounds_retrained == traj.rounds - c.t_star
    assert c.sensitivity <= 4.0 / gaussian_sigma(1.0, 1e-4, 1.0) + 1e-12
    assert res.models.shape == (5, traj.final.shape[1]) and "certified" in c.statement
    # the perturbation has std sigma and is independent across nodes
    z = res.noise / 4.0
    assert abs(float(z.std()) - 1.0) < 0.05
    assert float(torch.corrcoef(z)[0, 1:].abs().max()) < 0.15
    # budgeted rounds: sigma calibrated to the bound at the rewind point
    r2 = TraceDU(traj, "strongly_convex").unlearn([2], 1.0, 1e-4, max_rounds=5)
    assert r2.certificate.t_star == traj.rounds - 5
    assert np.isclose(r2.certificate.sigma, gaussian_sigma(1.0, 1e-4, r2.certificate.sensitivity))


def test_sequential_branch_recursion_matches_direct_when_first_rewind_is_zero(setup):
    """With sigma = 0 the first request rewinds to round 0 and its branch is the retrain without client 2; the
    recursion for a second client along the branch is then the direct recursion on that retrained trajectory."""
    _, _, _, traj = setup
    t = TraceDU(traj, "strongly_convex")
    r1 = t.unlearn([2], 1.0, 1e-4, sigma=0.0)
    assert r1.certificate.t_star == 0 and r1.certificate.sigma == 0.0
    assert torch.equal(r1.trajectory.final, retrain(traj, [2]).final)
    direct = TraceDU(r1.trajectory, "strongly_convex", smoothness=t.smoothness, strong_convexity=t.strong_convexity)
    assert np.allclose(t.sensitivity([4]).delta, direct.sensitivity([4]).delta, rtol=0, atol=1e-12)
    assert np.allclose(t.sensitivity([4]).per_node, direct.sensitivity([4]).per_node, rtol=0, atol=1e-12)


def test_sequential_requests_bound_along_branch(setup):
    _, _, _, traj = setup
    t = TraceDU(traj, "strongly_convex")
    t.unlearn([2], 1.0, 1e-4, sigma=8.0)
    s = t.sensitivity([4])
    pos, ref, ids = t.reference([4])
    apos, act, aids = t.branch_models()
    assert list(pos) == list(apos) == list(s.rounds)
    for k, (m, mi) in enumerate(zip(act, aids)):
        assert float((m[[mi.index(i) for i in ids]] - ref[k]).norm()) <= s.delta[k] + 1e-9
    r2 = t.unlearn([4], 1.0, 1e-4, sigma=8.0)
    assert r2.certificate.removed == (2, 4) and r2.models.shape[0] == 4
    with pytest.raises(ValueError, match="already removed"):
        t.unlearn([2], 1.0, 1e-4, sigma=1.0)


def test_nonconvex_certificate_is_heuristic():
    data = make_backdoor_digits(seed=0, n_nodes=4, forget=(1,), max_per_node=20, min_per_node=5)
    mlp = MLP(data.n_features, 10, hidden=8)
    tr = DecentralizedSGD(
        mlp, data.node_data, metropolis_weights(ring(4)), local_steps=2, lr=0.5, batch_size=4, rounds=4
    ).run()
    with pytest.raises(ValueError, match="smoothness"):
        TraceDU(tr, "nonconvex")
    c = TraceDU(tr, "nonconvex", smoothness=1.0).unlearn([1], 1.0, 1e-4, sigma=1.0).certificate
    assert c.heuristic and "HEURISTIC" in c.statement
    assert TraceDU(tr, "strongly_convex", smoothness=1.0, strong_convexity=1e-3).heuristic  # convexity declared wrongly


def test_step_size_violation_is_flagged(setup):
    data, model, W, _ = setup
    tr = DecentralizedSGD(model, data.node_data, W, local_steps=1, lr=5.0, batch_size=4, rounds=2).run()
    t = TraceDU(tr, "strongly_convex")
    assert t.heuristic and "lr=5" in t.violations[0]


def test_errors(setup):
    _, _, _, traj = setup
    t = TraceDU(traj, "strongly_convex")
    with pytest.raises(ValueError, match="every node"):
        t.unlearn(range(6), 1.0, 1e-4, sigma=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        t.unlearn([2], 2.0, 1e-4, sigma=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        t.unlearn([2], 0.0, 1e-4, sigma=1.0)
    with pytest.raises(ValueError, match="delta"):
        t.unlearn([2], 1.0, 1.5, sigma=1.0)
    with pytest.raises(ValueError, match="exactly one"):
        t.unlearn([2], 1.0, 1e-4)
    with pytest.raises(ValueError, match="forget must"):
        t.unlearn([9], 1.0, 1e-4, sigma=1.0)
    with pytest.raises(ValueError, match="regime"):
        TraceDU(traj, "concave")
    with pytest.raises(TypeError, match="Trajectory"):
        TraceDU("not a trajectory")
    with pytest.raises(ValueError, match="lr"):
        DecentralizedSGD(traj.model, traj.node_data, traj.W, lr=0.0)


def test_determinism_and_resume_from_checkpoint(setup):
    data, model, W, traj = setup
    again = DecentralizedSGD(model, data.node_data, W, local_steps=3, lr=1.5, batch_size=8, rounds=12, seed=0).run()
    assert all(torch.equal(traj.checkpoints[t], again.checkpoints[t]) for t in traj.checkpoints)
    resumed = DecentralizedSGD(
        model,
        data.node_data,
        W,
        local_steps=3,
        lr=1.5,
        batch_size=8,
        rounds=7,
        seed=0,
        init=traj.checkpoints[5],
        start_round=5,
    ).run()
    assert torch.equal(resumed.final, traj.final)


def test_baselines_shapes_and_last_noise_certificate(setup):
    _, _, _, traj = setup
    t = TraceDU(traj, "strongly_convex")
    M, sigma, D = last_plus_noise(t, [2], 1.0, 1e-4)
    assert M.shape[0] == 5 and np.isclose(sigma, gaussian_sigma(1.0, 1e-4, D)) and D == t.sensitivity([2]).delta[-1]
    assert fine_tune(traj, [2], 3).final.shape == M.shape and retrain(traj, [2]).rounds == traj.rounds


def test_softmax_gradient_matches_autograd_and_finite_differences():
    m = SoftmaxRegression(4, 3, l2=0.1)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(2, m.n_params, generator=g, dtype=torch.float64)
    X = torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (2, 5), generator=g)
    closed = m.grad(w, X, y)
    auto = super(SoftmaxRegression, m).grad(w, X, y)
    assert torch.allclose(closed, auto, atol=1e-12)
    e = torch.zeros_like(w)
    e[1, 3] = 1e-6

    def f(v):
        return float(m.losses(v, X, y).mean(1).sum() + 0.05 * (v * v).sum())

    assert abs((f(w + e) - f(w - e)) / 2e-6 - float(closed[1, 3])) < 1e-6


def test_precommitted_rewind_ignores_the_forgotten_clients_data():
    """select='precommitted': t* is fixed before the request, so changing the forgotten client's data (and hence its
    messages and the bound) leaves t* unchanged; 'latest' moves with the data."""
    data, model, W, traj = _setup(seed=3, rounds=14)
    nd = list(data.node_data)
    X2, y2 = nd[2]
    nd[2] = (X2.flip(0) * 0.3, (y2 + 1) % 10)  # the forgotten client's data changed
    traj2 = DecentralizedSGD(model, nd, W, local_steps=3, lr=1.5, batch_size=8, rounds=14, seed=3).run()
    out = []
    for tr in (traj, traj2):
        big = 10 * gaussian_sigma(1.0, 1e-4, float(TraceDU(tr).sensitivity([2]).delta[8]))
        r = TraceDU(tr).unlearn([2], 1.0, 1e-4, sigma=big, select="precommitted", t_star=8)
        cal = TraceDU(tr).unlearn([2], 1.0, 1e-4, select="precommitted", t_star=8)
        assert cal.certificate.sigma == pytest.approx(gaussian_sigma(1.0, 1e-4, cal.certificate.sensitivity))
        out.append((r.certificate.t_star, cal.certificate.t_star, cal.certificate.sensitivity))
    assert out[0][:2] == out[1][:2] == (8, 8)
    assert out[0][2] != out[1][2]  # the bound did see the change; the rewind point did not
    t = TraceDU(traj)
    with pytest.raises(ValueError, match="does not certify"):
        t.unlearn([2], 1.0, 1e-4, sigma=1e-6, select="precommitted", t_star=8)
    with pytest.raises(ValueError, match="t_star"):
        t.unlearn([2], 1.0, 1e-4, select="precommitted", t_star=99)
    with pytest.raises(ValueError, match="t_star"):
        t.unlearn([2], 1.0, 1e-4, sigma=1.0, t_star=3)
    with pytest.raises(ValueError, match="select"):
        t.unlearn([2], 1.0, 1e-4, sigma=1.0, select="earliest")


def test_resume_lr_changes_the_resumed_rounds_not_the_certificate():
    """resume_lr: the resumed rounds post-process the released start, so the certificate (t*, sigma, bound) is the
    same at any step size while the model differs; bad values and a further request on such a branch raise."""
    data, model, W, traj = _setup(seed=3, rounds=14)
    a = TraceDU(traj).unlearn([2], 1.0, 1e-4, max_rounds=5, seed=11)
    b = TraceDU(traj).unlearn([2], 1.0, 1e-4, max_rounds=5, seed=11, resume_lr=3.0)
    ca, cb = a.certificate, b.certificate
    assert (ca.t_star, ca.sigma, ca.sensitivity) == (cb.t_star, cb.sigma, cb.sensitivity)
    assert torch.equal(a.trajectory.checkpoints[ca.t_star], b.trajectory.checkpoints[cb.t_star])  # same release
    assert not torch.allclose(a.models, b.models)
    for bad in (0.0, -1.0, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="resume_lr"):
            TraceDU(traj).unlearn([2], 1.0, 1e-4, max_rounds=5, resume_lr=bad)
    t = TraceDU(traj)
    t.unlearn([2], 1.0, 1e-4, max_rounds=5, resume_lr=3.0)
    with pytest.raises(ValueError, match="resume_lr"):
        t.unlearn([4], 1.0, 1e-4, max_rounds=5)


def test_released_start_is_checkpoint_plus_gaussian_noise(setup):
    """The resumed run starts at X^{t*} + N(0, sigma^2): per coordinate, the perturbation over sigma has mean 0 and
    variance 1 (the real path, not the returned noise tensor)."""
    _, _, _, traj = setup
    res = TraceDU(traj).unlearn([2], 1.0, 1e-4, max_rounds=6)
    c = res.certificate
    start = res.trajectory.checkpoints[c.t_star]
    z = ((start - traj.checkpoints[c.t_star][[0, 1, 3, 4, 5]]) / c.sigma).flatten().numpy()
    assert abs(z.mean()) < 6 / np.sqrt(z.size) and abs(z.var() - 1) < 6 * np.sqrt(2 / z.size)


def test_declared_smoothness_below_the_models_bound_is_heuristic(setup):
    _, _, _, traj = setup
    own = TraceDU(traj)
    assert not own.heuristic
    low = TraceDU(traj, smoothness=0.5 * own.smoothness)
    assert low.heuristic and any("below the model's own bound" in v for v in low.violations)
    assert low.unlearn([2], 1.0, 1e-4, sigma=50.0).certificate.heuristic
    assert not TraceDU(traj, smoothness=1.1 * own.smoothness).heuristic  # above it: fine


def test_bad_input_names_the_argument(setup):
    data, model, W, traj = setup
    nd = list(data.node_data)
    kw = dict(local_steps=1, rounds=1)
    X, y = nd[0]
    for bad, err, match in (
        ((X, y + 10), ValueError, r"labels in \[0, 9\]"),
        ((X[:, :10], y), ValueError, "n_features=64"),
        ((X.float(), y), TypeError, "float64"),
        ((X, y.double()), TypeError, "integer class labels"),
        ((X.numpy(), y), TypeError, "torch tensors"),
    ):
        with pytest.raises(err, match=match):
            DecentralizedSGD(model, [bad] + nd[1:], W, **kw)
    t = TraceDU(traj)
    with pytest.raises(TypeError, match="forget"):
        t.unlearn("12", 1.0, 1e-4, sigma=1.0)
    with pytest.raises(TypeError, match="forget"):
        t.sensitivity([1.5])
    with pytest.raises(TypeError, match="forget"):
        t.sensitivity([True])
    assert t.sensitivity(np.int64(2)).nodes == (0, 1, 3, 4, 5)


def test_non_finite_data_is_named_before_training(setup):
    """NaN / inf in X is refused by DecentralizedSGD (naming X), not trained silently and reported later as a bad
    smoothness."""
    data, model, W, traj = setup
    nd = list(data.node_data)
    X, y = nd[1]
    for v in (float("nan"), float("inf")):
        Xb = X.clone()
        Xb[0, 3] = v
        with pytest.raises(ValueError, match=r"node_data\[1\] X must be finite"):
            DecentralizedSGD(model, [nd[0], (Xb, y)] + nd[2:], W, local_steps=1, rounds=1)
