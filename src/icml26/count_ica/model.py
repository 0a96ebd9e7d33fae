"""ARPLN-ICA as a torch module: amortised Gaussian-Markov posterior, closed-form ELBO, closed-form M-step.

Generative model (``d`` independent sources, ``C`` regimes per source, ``K`` count features)::

    u_1^(i) ~ pi_i,   u_t^(i) | u_{t-1}^(i) ~ A_i[u_{t-1}, :]
    s_1^(i) | u_1 = c ~ N(bbar_ic, psibar_ic),   s_t^(i) | s_{t-1}, u_t = c ~ N(B_ic s_{t-1}^(i) + b_ic, psi_ic)
    x_tj | s_t ~ Poisson(exp(o_t + mu0_j + (Gamma s_t)_j + (M c)_j)),   Gamma = W / ||W||_col

Variational family ``q(s, u | x) = q(s | x) prod_i q(u^(i) | x)``:

- ``q(s | x)``: per component a Gaussian Markov chain ``s_1 = m + N(0, psit_1)``, ``s_t = Bt_t s_{t-1} + bt_t +
  N(0, psit_t)`` whose parameters come from a GRU over ``[log(1 + x_t), o_t, c]`` (bidirectional = smoothing;
  ``predictive=True``: causal, so the posterior at ``t`` sees ``x_{1:t}`` only) and an MLP head, as corrections
  around the weighted least-squares inversion of the log link (:meth:`ARPLNICA.weighted_ls`);
  ``Bt = 0.95 tanh(.)``; ``mean_field=True`` sets ``Bt = 0``.  Moments: ``mu_t = Bt_t mu_{t-1} + bt_t``,
  ``Sigma_t = psit_t + Bt_t^2 Sigma_{t-1}``, ``Cov(s_t, s_{t-1}) = Bt_t Sigma_{t-1}``.
- ``q(u^(i))``: a Markov chain with closed-form transitions ``tau_t(c' -> c) = A(c', c) exp(L_t(c)) / Z_t(c')``,
  ``L_t(c) = E_q log N(s_t; B_c s_{t-1} + b_c, psi_c)``; ``nu = pi exp(L_1) / Z_1``; marginals
  ``alpha_t = alpha_{t-1} tau_t``.

ELBO (closed form).  With this ``q(u)`` the regime and prior terms collapse to
``log Z_1 + sum_{t>=2} sum_{c'} alpha_{t-1}(c') log Z_t(c')`` (for ``C = 1``: ``sum_t L_t``), so::

    ELBO = sum_t [x_t . eta_t - sum_j exp(eta_tj + 1/2 (Gamma^2 Sigma_t)_j) - sum_j log x_tj!]
           + log Z_1 + sum_{t>=2} alpha_{t-1} . log Z_t + 1/2 sum_t sum_i log(2 pi e psit_ti)

with ``eta_t = o_t + mu0 + Gamma mu_t + M c``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["ARPLNICA", "W_INIT_SCALE"]

_LOG2PI = math.log(2.0 * math.pi)
_VAR_MIN, _VAR_MAX = 1e-8, 30.0
W_INIT_SCALE = 0.01  # the random start of W: 0.01 N(0, 1) entries, as the paper's code (plntime GammaICA)


class ARPLNICA(nn.Module):
    """The ARPLN-ICA model and its amortised variational posterior (see the module docstring for the equations).

    ``forward(x, offsets, covariates)`` returns the variational parameters and moments; :meth:`elbo` the ELBO per
    sequence; :meth:`m_step` updates ``(pi, A, bbar, psibar, B, b, psi)`` in closed form from detached moments.
    """

    def __init__(
        self,
        n_features: int,
        n_components: int,
        n_regimes: int = 1,
        n_covariates: int = 0,
        *,
        hidden: int = 32,
        mlp: int = 32,
        mean_field: bool = False,
        predictive: bool = False,
        fit_intercept: bool = True,
        ar_init: float = 0.5,
        temporal: bool = True,
    ) -> None:
        super().__init__()
        K, d, C = n_features, n_components, n_regimes
        self.n_features, self.n_components, self.n_regimes, self.n_covariates = K, d, C, n_covariates
        self.temporal = temporal  # False: the AR coefficient B is held at 0 (i.i.d.-in-time source prior)
        if not temporal:
            ar_init = 0.0
        self.mean_field, self.predictive, self.fit_intercept = mean_field, predictive, fit_intercept
        # the paper's start (official GammaICA: W = 0.01 randn): Gamma = W / ||W|| has random directions, and the small
        # scale lets each Adam step on W turn Gamma far; from W = randn (our v1-v3 start) the fit stalled in a poor
        # optimum (referee, issue 56: moderate |cos| .50 vs .74 from 0.01 randn, nothing else changed)
        self.W = nn.Parameter(W_INIT_SCALE * torch.randn(K, d))
        self.intercept = nn.Parameter(torch.zeros(K), requires_grad=fit_intercept)
        self.M = nn.Parameter(torch.zeros(K, n_covariates))
        in_dim = K + 1 + n_covariates
        self.gru = nn.GRU(in_dim, hidden, batch_first=True, bidirectional=not predictive)
        h = hidden * (1 if predictive else 2)
        self.mlp = nn.Sequential(nn.Linear(h + in_dim, mlp), nn.Tanh())
        self.head = nn.Linear(mlp, 3 * d)  # bt, Bt (pre-tanh), psit (pre-sigmoid)
        # zero-initialised head: training starts from the weighted least-squares posterior (mean mu_ls, variance v_ls,
        # Bt = 0) instead of from random corrections around it
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)
        # prior parameters (updated by the closed-form M-step, not by gradients)
        spread = torch.linspace(-1.0, 1.0, C) if C > 1 else torch.zeros(1)
        self.register_buffer("pi", torch.full((d, C), 1.0 / C))
        A = torch.full((d, C, C), 0.1 / max(C - 1, 1)) + torch.eye(C) * (0.9 - 0.1 / max(C - 1, 1))
        self.register_buffer("A", A if C > 1 else torch.ones(d, 1, 1))
        self.register_buffer("B", torch.full((d, C), float(ar_init)))
        self.register_buffer("b", spread.repeat(d, 1).clone())
        self.register_buffer("psi", torch.ones(d, C))
        self.register_buffer("bbar", spread.repeat(d, 1).clone())
        self.register_buffer("psibar", torch.ones(d, C))

    # -- mixing ----------------------------------------------------------------------------------------------
    @property
    def Gamma(self) -> torch.Tensor:
        """``W / ||W||_col`` (``K x d``, unit columns: the scale is carried by the sources)."""
        return self.W / self.W.norm(dim=0, keepdim=True).clamp_min(1e-12)

    # -- variational posterior -------------------------------------------------------------------------------
    def _inputs(self, x, offsets, covariates):
        n, T, _ = x.shape
        parts = [torch.log1p(x), offsets.unsqueeze(-1)]
        if self.n_covariates:
            parts.append(covariates.unsqueeze(1).expand(n, T, self.n_covariates))
        return torch.cat(parts, dim=-1)

    def forward(self, x: torch.Tensor, offsets: torch.Tensor, covariates: torch.Tensor | None = None) -> dict:
        """Variational parameters ``bt, Bt, psit`` ``(n, T, d)`` and moments ``mu, Sigma, cross`` (``cross_t =
        Cov(s_t, s_{t-1})``, ``cross_1 = 0``)."""
        inp = self._inputs(x, offsets, covariates)
        h, _ = self.gru(inp)
        z = self.head(self.mlp(torch.cat([h, inp], dim=-1)))
        bt, Bt, pt = z.chunk(3, dim=-1)
        Bt = torch.zeros_like(Bt) if self.mean_field else 0.95 * torch.tanh(Bt)
        Bt = torch.cat([torch.zeros_like(Bt[:, :1]), Bt[:, 1:]], dim=1)  # t = 1 has no parent
        # Laplace-style baseline of the posterior (the encoder learns a correction around it): log(x + 1/2) is
        # eta + noise of variance ~ 1 / (x + 1/2), so the weighted least-squares source estimate is
        # mu_ls = (Gamma' D Gamma)^-1 Gamma' D (log(x + 1/2) - eta_0), D = diag(x + 1/2), with marginal variances
        # v_ls = diag((Gamma' D Gamma)^-1).  mu_t = mu_ls + sqrt(v_ls) network, psit = v_ls exp(network) (bounded).
        mu_ls, v_ls = self.weighted_ls(x, offsets, covariates)
        lo, hi = math.log(_VAR_MIN), math.log(_VAR_MAX)
        u0 = ((v_ls.log().clamp(lo + 1e-3, hi - 1e-3) - lo) / (hi - lo)).logit()
        psit = torch.exp(lo + (hi - lo) * torch.sigmoid(pt + u0))
        # the mean head is parameterised through the marginal means (same family: bt_t = mu_t - Bt_t mu_{t-1}), its
        # correction in units of the least-squares standard error (well-conditioned for rare and abundant features)
        mu = mu_ls + v_ls.sqrt() * bt
        bt = torch.cat([mu[:, :1], mu[:, 1:] - Bt[:, 1:] * mu[:, :-1]], dim=1)
        sig, cross = [psit[:, 0]], [torch.zeros_like(psit[:, 0])]
        for t in range(1, x.shape[1]):
            cross.append(Bt[:, t] * sig[-1])
            sig.append(psit[:, t] + Bt[:, t] ** 2 * sig[-1])
        return {
            "bt": bt,
            "Bt": Bt,
            "psit": psit,
            "mu": mu,
            "Sigma": torch.stack(sig, 1),
            "cross": torch.stack(cross, 1),
        }

    def weighted_ls(self, x: torch.Tensor, offsets: torch.Tensor, covariates: torch.Tensor | None = None):
        """Weighted least-squares sources ``mu_ls = (Gamma' D Gamma)^-1 Gamma' D (log(x + 1/2) - eta_0)`` and
        ``v_ls = diag((Gamma' D Gamma)^-1)``, ``D = diag(x_t + 1/2)`` (``eta_0`` = offsets + intercept + ``M c``):
        ``(n, T, d)`` each.  The delta-method inverse of the Poisson log link, used as the encoder's baseline."""
        G = self.Gamma
        zero = torch.zeros(x.shape[:2] + (self.n_components,), dtype=x.dtype, device=x.device)
        z0 = torch.log(x + 0.5) - self.eta(zero, offsets, covariates)
        w = x + 0.5
        P = torch.einsum("kd,ntk,ke->ntde", G, w, G)
        # ridge 1e-4 x the mean diagonal: keeps the Cholesky factor defined when two columns of Gamma nearly merge
        ridge = 1e-4 * P.diagonal(dim1=-2, dim2=-1).mean(-1, keepdim=True) + 1e-6
        P = P + ridge.unsqueeze(-1) * torch.eye(self.n_components, dtype=x.dtype, device=x.device)
        L = torch.linalg.cholesky(P)
        mu = torch.cholesky_solve(torch.einsum("kd,ntk->ntd", G, w * z0).unsqueeze(-1), L).squeeze(-1)
        v = torch.cholesky_inverse(L).diagonal(dim1=-2, dim2=-1)
        return mu, v

    # -- ELBO pieces -----------------------------------------------------------------------------------------
    def expected_loglik(self, q: dict) -> torch.Tensor:
        """``L_t(c) = E_q log N(s_t; B_c s_{t-1} + b_c, psi_c)`` (``t >= 2``) and ``E_q log N(s_1; bbar_c,
        psibar_c)`` (``t = 1``): ``(n, T, d, C)``."""
        mu, S, X = q["mu"].unsqueeze(-1), q["Sigma"].unsqueeze(-1), q["cross"].unsqueeze(-1)
        first = -0.5 * (_LOG2PI + self.psibar.log() + ((mu[:, :1] - self.bbar) ** 2 + S[:, :1]) / self.psibar)
        B, b, psi = self.B, self.b, self.psi
        sq = (mu[:, 1:] - B * mu[:, :-1] - b) ** 2 + S[:, 1:] + B**2 * S[:, :-1] - 2.0 * B * X[:, 1:]
        rest = -0.5 * (_LOG2PI + psi.log() + sq / psi)
        return torch.cat([first, rest], dim=1)

    def regime_posterior(self, L: torch.Tensor) -> dict:
        """``q(u)``: ``log Z`` ``(n, T, d, C')`` (``t = 1``: ``Z_1`` in slot 0), ``nu``, ``tau`` ``(n, T-1, d, C,
        C)``, marginals ``alpha`` ``(n, T, d, C)``."""
        logpi, logA = self.pi.clamp_min(1e-12).log(), self.A.clamp_min(1e-12).log()
        a1 = logpi + L[:, 0]
        logZ1 = torch.logsumexp(a1, dim=-1)
        alpha = [torch.softmax(a1, dim=-1)]
        logits = logA + L[:, 1:].unsqueeze(-2)  # (n, T-1, d, C', C)
        logZ = torch.logsumexp(logits, dim=-1)  # (n, T-1, d, C')
        tau = torch.exp(logits - logZ.unsqueeze(-1))
        for t in range(tau.shape[1]):
            alpha.append((alpha[-1].unsqueeze(-1) * tau[:, t]).sum(-2))
        return {"logZ1": logZ1, "logZ": logZ, "nu": alpha[0], "tau": tau, "alpha": torch.stack(alpha, 1)}

    def eta(self, mu: torch.Tensor, offsets: torch.Tensor, covariates: torch.Tensor | None = None) -> torch.Tensor:
        """Log-intensity ``o_t + mu0 + Gamma mu_t + M c`` ``(n, T, K)``."""
        e = offsets.unsqueeze(-1) + self.intercept + mu @ self.Gamma.T
        if self.n_covariates:
            e = e + (covariates @ self.M.T).unsqueeze(1)
        return e

    def elbo(
        self,
        x: torch.Tensor,
        offsets: torch.Tensor,
        covariates: torch.Tensor | None = None,
        q: dict | None = None,
        per_sequence: bool = False,
    ) -> torch.Tensor:
        """The closed-form ELBO (sum over the batch, or ``(n,)`` with ``per_sequence``)."""
        q = self(x, offsets, covariates) if q is None else q
        G = self.Gamma
        eta = self.eta(q["mu"], offsets, covariates)
        var = q["Sigma"] @ (G**2).T
        pois = (x * eta - torch.exp(eta + 0.5 * var) - torch.lgamma(x + 1.0)).sum((1, 2))
        L = self.expected_loglik(q)
        if self.n_regimes == 1:
            prior = L.sum((1, 2, 3))
        else:
            r = self.regime_posterior(L)
            prior = r["logZ1"].sum(-1) + (r["alpha"][:, :-1] * r["logZ"]).sum((1, 2, 3))
        ent = 0.5 * (_LOG2PI + 1.0 + q["psit"].log()).sum((1, 2))
        out = pois + prior + ent
        return out if per_sequence else out.sum()

    # -- closed-form M-step ----------------------------------------------------------------------------------
    @torch.no_grad()
    def m_step(self, q: dict, var_floor: float = 1e-4, max_coef: float = 1.5) -> None:
        """Maximise the ELBO over ``(pi, A, bbar, psibar, B, b, psi)`` given detached moments.

        Weights ``w_t(c) = alpha_t(c)`` (``nu`` at ``t = 1``), pair weights ``xi_t(c', c) = alpha_{t-1}(c')
        tau_t(c' -> c)``: ``pi = mean nu``, ``A ∝ sum xi``, ``bbar, psibar`` the ``nu``-weighted mean/variance of
        ``s_1``, and ``(B_c, b_c)`` the ``w``-weighted least squares of ``s_t`` on ``(s_{t-1}, 1)`` in expectation,
        ``psi_c`` its weighted mean squared residual.  (For ``C > 1`` this is the stationary point of the ELBO's
        explicit dependence with ``q(u)`` held fixed.)
        """
        mu, S, X = q["mu"].unsqueeze(-1), q["Sigma"].unsqueeze(-1), q["cross"].unsqueeze(-1)
        n, T = mu.shape[:2]
        if self.n_regimes == 1:
            w = torch.ones(n, T, self.n_components, 1, dtype=mu.dtype)
        else:
            r = self.regime_posterior(self.expected_loglik(q))
            w = r["alpha"]
            xi = r["alpha"][:, :-1].unsqueeze(-1) * r["tau"]
            self.pi.copy_((r["nu"].mean(0) + 1e-8) / (r["nu"].mean(0) + 1e-8).sum(-1, keepdim=True))
            cnt = xi.sum((0, 1)) + 1e-6
            self.A.copy_(cnt / cnt.sum(-1, keepdim=True))
        w1 = w[:, 0]
        s0 = w1.sum(0).clamp_min(1e-8)
        bbar = (w1 * mu[:, 0]).sum(0) / s0
        self.bbar.copy_(bbar)
        self.psibar.copy_(((w1 * ((mu[:, 0] - bbar) ** 2 + S[:, 0])).sum(0) / s0).clamp_min(var_floor))
        g = w[:, 1:]
        m0, m1 = mu[:, :-1], mu[:, 1:]
        S00 = (g * (m0**2 + S[:, :-1])).sum((0, 1))
        S0 = (g * m0).sum((0, 1))
        N = g.sum((0, 1)).clamp_min(1e-8)
        S01 = (g * (m1 * m0 + X[:, 1:])).sum((0, 1))
        S1 = (g * m1).sum((0, 1))
        det = (S00 * N - S0**2).clamp_min(1e-10)
        B = ((S01 * N - S0 * S1) / det).clamp(-max_coef, max_coef)
        if not self.temporal:  # the temporal prior removed: s_t independent of s_{t-1} under the prior
            B = torch.zeros_like(B)
        b = (S1 - B * S0) / N
        sq = (m1 - B * m0 - b) ** 2 + S[:, 1:] + B**2 * S[:, :-1] - 2.0 * B * X[:, 1:]
        self.B.copy_(B)
        self.b.copy_(b)
        self.psi.copy_(((g * sq).sum((0, 1)) / N).clamp_min(var_floor))
