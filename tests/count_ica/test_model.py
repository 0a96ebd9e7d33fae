"""Closed forms and invariants of ARPLN-ICA: Poisson expectation, moment recursion, ELBO vs Monte Carlo, regime
posterior normalisation, M-step stationarity, scale invariance of Gamma, Viterbi, align_mixing."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.count_ica import ARPLNICA, align_mixing, viterbi_path
from icml26.count_ica.metrics import regime_accuracy, sliced_wasserstein


@pytest.fixture(autouse=True)
def _float64():
    """Closed forms are checked in double precision; the default dtype is restored for the other papers' tests
    (set at import, it leaked into every test collected after this module)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _model(K=4, d=2, C=2, seed=0, mean_field=False, covariance="full"):
    torch.manual_seed(seed)
    m = ARPLNICA(K, d, C, hidden=8, mlp=8, mean_field=mean_field, covariance=covariance).double()
    with torch.no_grad():  # a non-zero head, so the corrections (and the off-diagonal of Lc) are exercised
        m.head.weight.normal_(0.0, 0.3)
        m.head.bias.normal_(0.0, 0.3)
    with torch.no_grad():
        m.B.copy_(torch.tensor([[0.5, -0.3], [0.8, 0.2]])[:d, :C])
        m.b.copy_(torch.tensor([[0.1, -0.4], [0.3, 0.6]])[:d, :C])
        m.psi.copy_(torch.tensor([[0.5, 0.8], [0.3, 1.1]])[:d, :C])
        if C == 2:
            m.A.copy_(torch.tensor([[0.8, 0.2], [0.3, 0.7]]).expand(d, 2, 2))
            m.pi.copy_(torch.tensor([0.6, 0.4]).expand(d, 2))
    return m


def _data(n=3, T=3, K=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.poisson(torch.full((n, T, K), 2.0), generator=g), torch.zeros(n, T)


def test_poisson_expectation_closed_form_vs_monte_carlo():
    g = torch.Generator().manual_seed(1)
    G = torch.randn(5, 3, generator=g)
    G = G / G.norm(dim=0)
    mu, var = torch.randn(3, generator=g) * 0.3, torch.rand(3, generator=g) * 0.5
    s = mu + var.sqrt() * torch.randn(100_000, 3, generator=g)
    mc = torch.exp(s @ G.T).mean(0)
    closed = torch.exp(G @ mu + 0.5 * (G**2) @ var)
    assert torch.allclose(mc, closed, rtol=0.01)


def _noise(q, t, N, g):
    """Draws of the variational chain's innovation at ``t``: ``psi_chol_t z``, ``(N, n, d)``."""
    n, _, d = q["mu"].shape
    return (q["psi_chol"][:, t] @ torch.randn(N, n, d, 1, generator=g)).squeeze(-1)


@pytest.mark.parametrize("covariance", ["full", "diag"])
def test_moment_recursion_matches_simulation_of_the_variational_chain(covariance):
    m = _model(covariance=covariance)
    x, o = _data(n=2, T=4)
    with torch.no_grad():
        q = m(x, o)
    g = torch.Generator().manual_seed(2)
    N = 200_000
    s = q["mu"][:, 0] + _noise(q, 0, N, g)
    for t in range(1, 4):
        prev = s
        s = q["Bt"][:, t] * s + q["bt"][:, t] + _noise(q, t, N, g)
        assert torch.allclose(s.mean(0), q["mu"][:, t], atol=0.03)
        c = s - s.mean(0)
        full = torch.einsum("Nnd,Nne->nde", c, c) / N
        assert torch.allclose(full, q["Sigma_full"][:, t], rtol=0.03, atol=0.012)  # ~5 MC standard errors
        assert torch.allclose(s.var(0), q["Sigma"][:, t], rtol=0.03, atol=2e-3)
        cov = (c * (prev - prev.mean(0))).mean(0)
        assert torch.allclose(cov, q["cross"][:, t], atol=0.03)
    # the factorised family has no cross-component covariance; the coupled one does (coherent columns)
    off = q["Sigma_full"][..., 0, 1].abs().max()
    assert (off < 1e-12) if covariance == "diag" else (off > 1e-3)


@pytest.mark.parametrize("covariance", ["full", "diag"])
def test_zero_head_starts_at_the_weighted_least_squares_posterior(covariance):
    m = ARPLNICA(5, 3, 1, hidden=8, mlp=8, covariance=covariance).double()
    x, o = _data(n=2, T=3, K=5)
    with torch.no_grad():
        q = m(x, o)
        mu_ls, v_ls, L = m.weighted_ls(x, o, return_chol=True)
        P_inv = torch.cholesky_inverse(L)
    Psi = q["psi_chol"] @ q["psi_chol"].transpose(-1, -2)
    want = P_inv if covariance == "full" else torch.diag_embed(v_ls)
    assert torch.allclose(q["mu"], mu_ls, atol=1e-12)
    assert torch.allclose(Psi, want, rtol=1e-6, atol=1e-9)
    assert torch.allclose(q["logdet_psi"], torch.logdet(Psi), atol=1e-6)


def _log_joint_minus_q(m, x, o, q, s, u):
    """Monte-Carlo integrand log p(x, s, u) - log q(s, u) for draws s (N, n, T, d), u (N, n, T, d)."""
    G = m.Gamma
    eta = o[..., None] + m.intercept + s @ G.T
    lp = (x * eta - torch.exp(eta) - torch.lgamma(x + 1)).sum((-1, -2))
    d = torch.arange(s.shape[-1])

    def lnorm(v, mean, var):
        return -0.5 * (math.log(2 * math.pi) + var.log() + (v - mean) ** 2 / var)

    u1 = u[..., 0, :]
    lp = lp + (m.pi[d, u1].log() + lnorm(s[..., 0, :], m.bbar[d, u1], m.psibar[d, u1])).sum(-1)
    Psi = q["psi_chol"] @ q["psi_chol"].transpose(-1, -2)

    def lmvn(v, mean, t):
        return torch.distributions.MultivariateNormal(mean, covariance_matrix=Psi[:, t]).log_prob(v)

    lq = lmvn(s[..., 0, :], q["mu"][:, 0], 0)
    r = m.regime_posterior(m.expected_loglik(q))
    lq = lq + r["nu"][torch.arange(x.shape[0])[:, None], d, u1].log().sum(-1)
    for t in range(1, x.shape[1]):
        ut, up = u[..., t, :], u[..., t - 1, :]
        mean = m.B[d, ut] * s[..., t - 1, :] + m.b[d, ut]
        lp = lp + (m.A[d, up, ut].log() + lnorm(s[..., t, :], mean, m.psi[d, ut])).sum(-1)
        qmean = q["Bt"][:, t] * s[..., t - 1, :] + q["bt"][:, t]
        lq = lq + lmvn(s[..., t, :], qmean, t)
        tau = r["tau"][:, t - 1]  # (n, d, C', C)
        lq = lq + tau[torch.arange(x.shape[0])[:, None], d, up, ut].log().sum(-1)
    return lp - lq


def _mc_check(m, x, o, q, N=100_000, seed=4):
    """The closed-form ELBO per sequence of ``q`` (C = 2 regimes) against a Monte-Carlo estimate from draws of
    ``q(s, u)``: within 5 standard errors."""
    n, T = x.shape[:2]
    with torch.no_grad():
        elbo = m.elbo(x, o, q=q, per_sequence=True)
        r = m.regime_posterior(m.expected_loglik(q))
        g = torch.Generator().manual_seed(seed)
        s = [q["mu"][:, 0] + _noise(q, 0, N, g)]
        for t in range(1, T):
            s.append(q["Bt"][:, t] * s[-1] + q["bt"][:, t] + _noise(q, t, N, g))
        s = torch.stack(s, -2)
        d = s.shape[-1]
        u = [torch.multinomial(r["nu"].reshape(-1, 2), N, replacement=True, generator=g).T.reshape(N, n, d)]
        for t in range(1, T):
            P = r["tau"][:, t - 1]  # (n, d, C', C)
            rows = P[torch.arange(n)[None, :, None], torch.arange(d)[None, None, :], u[-1]]  # (N, n, d, C)
            u.append((torch.rand(N, n, d, 1, generator=g) > rows.cumsum(-1)).sum(-1).clamp_max(1))
        u = torch.stack(u, -2)
        vals = _log_joint_minus_q(m, x, o, q, s, u)
    est, se = vals.mean(0), vals.std(0) / math.sqrt(N)
    assert torch.all((est - elbo).abs() < 5 * se + 1e-3), (est, elbo, se)
    return elbo


@pytest.mark.parametrize("covariance", ["full", "diag"])
def test_elbo_matches_monte_carlo_estimate(covariance):
    m = _model(K=4, d=2, C=2, seed=3, covariance=covariance)
    x, o = _data(n=2, T=3, seed=3)
    with torch.no_grad():
        q = m(x, o)
    _mc_check(m, x, o, q)


@pytest.mark.parametrize("covariance", ["full", "diag"])
def test_refined_posterior_beats_the_amortised_one_and_its_elbo_is_exact(covariance):
    """refine_posterior (non-amortised q at a held mixing): its ELBO is >= the amortised one at the same mixing and
    intercept, is the closed-form ELBO of the q and prior it returns, and that closed form matches Monte Carlo
    draws of the refined q; the estimator itself is left unchanged."""
    from icml26.count_ica import CountICA

    x, o = _data(n=2, T=3, seed=5)
    est = CountICA(2, 2, max_epochs=5, covariance=covariance, dtype="float64", random_state=0).fit(x.numpy())
    before = {k: v.clone() for k, v in est.model_.state_dict().items()}
    r = est.refine_posterior(x.numpy(), n_steps=60, lr=0.05)
    assert r["elbo_amortised"] == pytest.approx(est.score(x.numpy()))
    assert r["elbo"] >= r["elbo_amortised"] and r["elbo"] > r["elbo_amortised"] + 1e-3  # it moved, upwards
    assert r["history"].shape == (61,) and r["elbo"] == pytest.approx(max(r["history"].max(), r["elbo_amortised"]))
    assert all(torch.equal(before[k], v) for k, v in est.model_.state_dict().items())  # the fit is untouched
    m = r["model"]
    assert torch.equal(m.W, est.model_.W) and torch.equal(m.intercept, est.model_.intercept)  # mixing held
    elbo = _mc_check(m, x, o, r["q"])
    assert float(elbo.mean()) == pytest.approx(r["elbo"], rel=1e-9)


def test_refine_posterior_validates_its_arguments():
    from sklearn.exceptions import NotFittedError

    from icml26.count_ica import CountICA

    x, _ = _data(n=2, T=3, seed=5)
    with pytest.raises(NotFittedError):
        CountICA(2).refine_posterior(x.numpy())
    est = CountICA(2, max_epochs=2, random_state=0).fit(x.numpy())
    for kw, msg in (
        (dict(n_steps=0), "n_steps"),
        (dict(n_steps=2.5), "n_steps"),
        (dict(lr=0.0), "lr"),
        (dict(lr=float("nan")), "lr"),
        (dict(lr="big"), "lr"),
    ):
        with pytest.raises((ValueError, TypeError), match=msg):
            est.refine_posterior(x.numpy(), **kw)
    with pytest.raises(ValueError, match="features"):
        est.refine_posterior(x.numpy()[..., :3])
    with pytest.raises(ValueError, match="Negative"):
        est.refine_posterior(-x.numpy() - 1)
    with pytest.raises(ValueError, match="z must have shape"):
        est.model_.posterior_from_head(torch.zeros(1, 1, 1), x.float(), torch.zeros(2, 3))


def test_regime_posterior_rows_sum_to_one_and_single_regime_has_no_kl():
    m = _model()
    x, o = _data()
    with torch.no_grad():
        q = m(x, o)
        r = m.regime_posterior(m.expected_loglik(q))
    assert torch.allclose(r["tau"].sum(-1), torch.ones(()), atol=1e-12)
    assert torch.allclose(r["alpha"].sum(-1), torch.ones(()), atol=1e-12)
    m1 = _model(C=1)
    with torch.no_grad():
        q1 = m1(x, o)
        L = m1.expected_loglik(q1)
        prior = m1.regime_posterior(L)["log_norm"].sum(-1)
    assert torch.allclose(prior, L.sum((1, 2, 3)), atol=1e-10)  # C = 1: regime KLs vanish
    assert torch.allclose(r["xi"].sum((-1, -2)), torch.ones(()), atol=1e-12)
    assert torch.allclose(r["xi"].sum(-1), r["alpha"][:, :-1], atol=1e-12)  # pair marginals agree with marginals


def test_regime_posterior_is_exact_against_enumeration_and_tighter_than_forward_only():
    """``log_norm`` equals log sum over every path of ``p(u) prod exp L_t(u_t)``; ``alpha`` the path-enumerated
    marginals; and the bound is >= the forward-only chain (``tau ∝ A exp L_t``) used until issue 56."""
    import itertools

    m = _model(d=2, C=2)
    g = torch.Generator().manual_seed(5)
    T = 4
    L = 2.0 * torch.randn(3, T, 2, 2, generator=g)
    r = m.regime_posterior(L)
    logpi, logA = m.pi.log(), m.A.log()
    for i in range(2):
        lp = []
        for path in itertools.product(range(2), repeat=T):
            v = logpi[i, path[0]] + L[:, 0, i, path[0]]
            for t in range(1, T):
                v = v + logA[i, path[t - 1], path[t]] + L[:, t, i, path[t]]
            lp.append((path, v))
        lse = torch.logsumexp(torch.stack([v for _, v in lp]), 0)
        assert torch.allclose(r["log_norm"][:, i], lse, atol=1e-10)
        for t in range(T):
            p1 = sum(torch.exp(v - lse) for path, v in lp if path[t] == 1)
            assert torch.allclose(r["alpha"][:, t, i, 1], p1, atol=1e-10)
            if t:  # pair marginals q(u_{t-1} = a, u_t = b) (a tau without the backward message fails here)
                for a_, b_ in itertools.product(range(2), repeat=2):
                    pab = sum(torch.exp(v - lse) for path, v in lp if path[t - 1] == a_ and path[t] == b_)
                    assert torch.allclose(r["xi"][:, t - 1, i, a_, b_], pab, atol=1e-10)
    # the forward-only chain's collapsed bound (the pre-issue-56 family) is never above the exact one
    a1 = logpi + L[:, 0]
    alpha = [torch.softmax(a1, -1)]
    logits = logA + L[:, 1:].unsqueeze(-2)
    logZ, tau = torch.logsumexp(logits, -1), torch.softmax(logits, -1)
    for t in range(T - 1):
        alpha.append((alpha[-1].unsqueeze(-1) * tau[:, t]).sum(-2))
    old = torch.logsumexp(a1, -1) + (torch.stack(alpha, 1)[:, :-1] * logZ).sum((1, 3))
    assert torch.all(r["log_norm"] >= old - 1e-10) and torch.any(r["log_norm"] > old + 1e-3)


def test_m_step_regime_parameters_are_the_expected_counts():
    """Baum-Welch's ``pi`` and ``A``: ``pi`` the mean first-time marginal, ``A[a, b]`` the expected number of ``a -> b``
    transitions over the expected number of visits to ``a`` (row-stochastic), from the exact pair marginals; and the
    pair marginals agree with the marginals at both ends (``sum_a xi = alpha_t``, ``sum_b xi = alpha_{t-1}``)."""
    m = _model(C=2, seed=8)
    x, o = _data(n=5, T=6, seed=8)
    with torch.no_grad():
        q = {k: v.detach() for k, v in m(x, o).items()}
        r = m.regime_posterior(m.expected_loglik(q))
        m.m_step(q)
    assert torch.allclose(r["xi"].sum(-2), r["alpha"][:, 1:], atol=1e-12)
    assert torch.allclose(r["xi"].sum(-1), r["alpha"][:, :-1], atol=1e-12)
    want_pi = r["alpha"][:, 0].mean(0)
    assert torch.allclose(m.pi, want_pi / want_pi.sum(-1, keepdim=True), atol=1e-6)
    counts = r["xi"].sum((0, 1))  # (d, C_from, C_to)
    want_A = counts / counts.sum(-1, keepdim=True)
    assert torch.allclose(m.A, want_A, atol=1e-5)
    assert not torch.allclose(want_A, want_A.transpose(-1, -2), atol=1e-3)  # the test can tell A from its transpose


def test_m_step_with_regimes_never_lowers_the_elbo():
    """Baum-Welch monotonicity: with ``q(s)`` held, the closed-form M-step (exact ``q(u)``) cannot lower the ELBO."""
    m = _model(C=2, seed=7)
    x, o = _data(n=6, T=5, seed=7)
    with torch.no_grad():
        q = {k: v.detach() for k, v in m(x, o).items()}
        before = m.elbo(x, o, q=q)
        m.m_step(q)
        after = m.elbo(x, o, q=q)
    assert after >= before - 1e-9 and after > before + 1e-6


def test_m_step_is_a_stationary_point_of_the_elbo():
    m = _model(C=1)
    x, o = _data(n=6, T=5)
    with torch.no_grad():
        q = {k: v.detach() for k, v in m(x, o).items()}
    m.m_step(q)
    params = [m.B, m.b, m.psi, m.bbar, m.psibar]
    for p in params:
        p.requires_grad_(True)
    m.elbo(x, o, q=q).backward()
    for p in params:
        assert p.grad.abs().max() < 1e-8, p.grad


def test_gamma_scale_invariance_and_zero_mixing():
    m = _model()
    x, o = _data()
    with torch.no_grad():
        e1 = m.elbo(x, o)
        m.W.mul_(torch.tensor([3.0, 0.2]))
        e2 = m.elbo(x, o)
    assert torch.allclose(e1, e2, atol=1e-8)
    G = torch.zeros(4, 2)
    mu = torch.randn(3, 3, 2)
    eta = torch.zeros(3, 3)[..., None] + mu @ G.T
    assert torch.equal(torch.exp(eta), torch.ones_like(eta))  # Gamma = 0 -> Poisson(exp(o))


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(0, 10_000))
def test_align_mixing_recovers_planted_permutation_and_sign(d, seed):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((d + 3, d))
    p = rng.permutation(d)
    s = rng.choice([-1.0, 1.0], d)
    E = G[:, p] * s * rng.uniform(0.1, 5.0, d)
    Ga, perm, sign, cos = align_mixing(E, G)
    assert np.allclose(cos, 1.0)
    assert np.array_equal(p[perm], np.arange(d))
    assert np.allclose(Ga, G / np.linalg.norm(G, axis=0))


def test_viterbi_on_deterministic_chain_and_regime_accuracy():
    T, C = 6, 2
    logA = np.log(np.array([[[1e-12, 1.0], [1.0, 1e-12]]]))  # alternating chain
    logpi = np.log(np.array([[1.0, 1e-12]]))
    L = np.zeros((1, T, 1, C))
    path = viterbi_path(logpi, logA, L)
    assert path[0, :, 0].tolist() == [0, 1, 0, 1, 0, 1]
    assert regime_accuracy(path, 1 - path)[0] == 1.0  # up to relabeling


def test_sliced_wasserstein_zero_on_identical_and_positive_on_shift():
    A = np.random.default_rng(0).standard_normal((200, 4))
    assert sliced_wasserstein(A, A) == pytest.approx(0.0, abs=1e-12)
    assert sliced_wasserstein(A, A + 1.0) > 0.4
