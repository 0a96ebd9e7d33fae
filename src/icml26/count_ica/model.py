"""ARPLN-ICA as a torch module: amortised Gaussian-Markov posterior, closed-form ELBO, closed-form M-step.

Generative model (``d`` independent sources, ``C`` regimes per source, ``K`` count features)::

    u_1^(i) ~ pi_i,   u_t^(i) | u_{t-1}^(i) ~ A_i[u_{t-1}, :]
    s_1^(i) | u_1 = c ~ N(bbar_ic, psibar_ic),   s_t^(i) | s_{t-1}, u_t = c ~ N(B_ic s_{t-1}^(i) + b_ic, psi_ic)
    x_tj | s_t ~ Poisson(exp(o_t + mu0_j + (Gamma s_t)_j + (M c)_j)),   Gamma = W / ||W||_col

Variational family ``q(s, u | x) = q(s | x) prod_i q(u^(i) | x)``:

- ``q(s | x)``: a Gaussian Markov chain ``s_1 = m + N(0, Psi_1)``, ``s_t = D_t s_{t-1} + bt_t + N(0, Psi_t)``,
  ``D_t = diag(Bt_t)``, whose parameters come from a GRU over ``[log(1 + x_t), o_t, c]`` (bidirectional =
  smoothing; ``predictive=True``: causal, so the posterior at ``t`` sees ``x_{1:t}`` only) and an MLP head, as
  corrections around the weighted least-squares inversion of the log link (:meth:`ARPLNICA.weighted_ls`);
  ``Bt = 0.95 tanh(.)``; ``mean_field=True`` sets ``Bt = 0``.
  ``covariance="diag"`` (the paper's family): ``Psi_t = diag(psit_t)``, the posterior factorised across
  components.  ``covariance="full"`` (ours, issue 56): ``Psi_t = R_t Lc_t Lc_t' R_t'`` with ``R_t R_t' =
  (Gamma' D_x Gamma)^-1`` the least-squares covariance (which couples components whose columns of ``Gamma`` are
  coherent) and ``Lc_t`` a lower-triangular correction from the head (identity at a zero head).  The factorised
  family cannot represent that coupling; at high coherence its ELBO then prefers a wrong, more orthogonal
  ``Gamma`` to the truth (the referee's drift, issue 56).
  Moments: ``mu_t = Bt_t mu_{t-1} + bt_t``, ``Sigma_t = Psi_t + D_t Sigma_{t-1} D_t``, ``Cov(s_t, s_{t-1}) =
  D_t Sigma_{t-1}`` (only its diagonal enters the factorised prior).
- ``q(u^(i))``: the exact posterior of the regime chain given the potentials ``exp L_t(c)``, ``L_t(c) = E_q log
  N(s_t; B_c s_{t-1} + b_c, psi_c)`` (forward-backward: the optimal ``q(u)`` for the current ``q(s)``), written as
  a Markov chain ``nu = q(u_1)``, ``tau_t(c' -> c) = q(u_t = c | u_{t-1} = c')``, marginals ``alpha_t``.  (Until
  issue 56 the transitions used the forward message only, ``tau ∝ A exp(L_t)``: a valid but looser bound.)

ELBO (closed form).  With the optimal ``q(u)``, the regime and prior terms collapse to the chain's log-normaliser
``log sum_u p(u) prod_t exp L_t(u_t)`` (for ``C = 1``: ``sum_t L_t``), so::

    ELBO = sum_t [x_t . eta_t - sum_j exp(eta_tj + 1/2 (Gamma Sigma_t Gamma')_jj) - sum_j log x_tj!]
           + sum_i log-normaliser_i + 1/2 sum_t log det(2 pi e Psi_t)

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
        covariance: str = "full",
    ) -> None:
        super().__init__()
        if covariance not in ("full", "diag"):
            raise ValueError(f"covariance must be 'full' or 'diag', got {covariance!r}")
        K, d, C = n_features, n_components, n_regimes
        self.covariance = covariance
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
        # bt, Bt (pre-tanh), psit (pre-sigmoid); "full": + the d (d - 1) / 2 strictly lower entries of Lc
        self.head = nn.Linear(mlp, 3 * d + (d * (d - 1) // 2 if covariance == "full" else 0))
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
        """Variational parameters ``bt, Bt`` ``(n, T, d)``, ``psit`` (the diagonal of ``Psi_t``), ``psi_chol``
        ``(n, T, d, d)`` (a square root of ``Psi_t``), ``logdet_psi`` ``(n, T)`` and the moments ``mu``, ``Sigma``
        (marginal variances), ``Sigma_full`` ``(n, T, d, d)``, ``cross`` (``diag Cov(s_t, s_{t-1})``, ``cross_1 =
        0``)."""
        return self.posterior_from_head(self.head_outputs(x, offsets, covariates), x, offsets, covariates)

    def head_outputs(
        self, x: torch.Tensor, offsets: torch.Tensor, covariates: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The encoder's raw per-(sequence, time) outputs ``z`` ``(n, T, n_head)``: what :meth:`posterior_from_head`
        turns into the variational parameters (the amortised posterior is ``posterior_from_head(head_outputs(x))``;
        a non-amortised one optimises ``z`` directly, :meth:`CountICA.refine_posterior`)."""
        inp = self._inputs(x, offsets, covariates)
        h, _ = self.gru(inp)
        return self.head(self.mlp(torch.cat([h, inp], dim=-1)))

    def posterior_from_head(
        self, z: torch.Tensor, x: torch.Tensor, offsets: torch.Tensor, covariates: torch.Tensor | None = None
    ) -> dict:
        """The variational parameters and moments (see :meth:`forward`) given head outputs ``z`` ``(n, T, n_head)``
        (corrections around the weighted least-squares posterior of ``x`` at the current mixing and intercept)."""
        d = self.n_components
        if z.shape != x.shape[:2] + (self.head.out_features,):
            want = tuple(x.shape[:2]) + (self.head.out_features,)
            raise ValueError(f"z must have shape {want}, got {tuple(z.shape)}")
        bt, Bt, pt = z[..., :d], z[..., d : 2 * d], z[..., 2 * d : 3 * d]
        Bt = torch.zeros_like(Bt) if self.mean_field else 0.95 * torch.tanh(Bt)
        Bt = torch.cat([torch.zeros_like(Bt[:, :1]), Bt[:, 1:]], dim=1)  # t = 1 has no parent
        # Laplace-style baseline of the posterior (the encoder learns a correction around it): log(x + 1/2) is
        # eta + noise of variance ~ 1 / (x + 1/2), so the weighted least-squares source estimate is
        # mu_ls = (Gamma' D Gamma)^-1 Gamma' D (log(x + 1/2) - eta_0), D = diag(x + 1/2), with covariance
        # (Gamma' D Gamma)^-1.  mu_t = mu_ls + sqrt(v_ls) network; Psi_t its covariance (or diagonal) rescaled.
        mu_ls, v_ls, chol_P = self.weighted_ls(x, offsets, covariates, return_chol=True)
        lo, hi = math.log(_VAR_MIN), math.log(_VAR_MAX)
        if self.covariance == "diag":
            u0 = ((v_ls.log().clamp(lo + 1e-3, hi - 1e-3) - lo) / (hi - lo)).logit()
            psit = torch.exp(lo + (hi - lo) * torch.sigmoid(pt + u0))
            chol = torch.diag_embed(psit.sqrt())
            logdet = psit.log().sum(-1)
        else:
            # R = L^-T (L L' = Gamma' D Gamma) is a square root of the least-squares covariance; Lc's diagonal is
            # exp(g / 2), g bounded in (-10, 4) and 0 at a zero head (sigmoid(logit(10 / 14)) = 10 / 14)
            eye = torch.eye(d, dtype=x.dtype, device=x.device)
            R = torch.linalg.solve_triangular(chol_P, eye.expand_as(chol_P), upper=False).transpose(-1, -2)
            g = -10.0 + 14.0 * torch.sigmoid(pt + math.log(10.0 / 4.0))
            Lc = torch.diag_embed(torch.exp(0.5 * g))
            if d > 1:
                i, j = torch.tril_indices(d, d, offset=-1)
                Lc = Lc.clone()
                Lc[..., i, j] = z[..., 3 * d :]
            chol = R @ Lc
            psit = (chol**2).sum(-1)
            logdet = -2.0 * chol_P.diagonal(dim1=-2, dim2=-1).log().sum(-1) + g.sum(-1)
        # the mean head is parameterised through the marginal means (same family: bt_t = mu_t - Bt_t mu_{t-1}), its
        # correction in units of the least-squares standard error (well-conditioned for rare and abundant features)
        mu = mu_ls + v_ls.sqrt() * bt
        bt = torch.cat([mu[:, :1], mu[:, 1:] - Bt[:, 1:] * mu[:, :-1]], dim=1)
        Psi = chol @ chol.transpose(-1, -2)
        sig, cross = [Psi[:, 0]], [torch.zeros_like(psit[:, 0])]
        for t in range(1, x.shape[1]):
            cross.append(Bt[:, t] * sig[-1].diagonal(dim1=-2, dim2=-1))
            sig.append(Psi[:, t] + Bt[:, t].unsqueeze(-1) * sig[-1] * Bt[:, t].unsqueeze(-2))
        Sigma_full = torch.stack(sig, 1)
        return {
            "bt": bt,
            "Bt": Bt,
            "psit": psit,
            "psi_chol": chol,
            "logdet_psi": logdet,
            "mu": mu,
            "Sigma": Sigma_full.diagonal(dim1=-2, dim2=-1),
            "Sigma_full": Sigma_full,
            "cross": torch.stack(cross, 1),
        }

    def weighted_ls(
        self, x: torch.Tensor, offsets: torch.Tensor, covariates: torch.Tensor | None = None, return_chol: bool = False
    ):
        """Weighted least-squares sources ``mu_ls = (Gamma' D Gamma)^-1 Gamma' D (log(x + 1/2) - eta_0)`` and
        ``v_ls = diag((Gamma' D Gamma)^-1)``, ``D = diag(x_t + 1/2)`` (``eta_0`` = offsets + intercept + ``M c``):
        ``(n, T, d)`` each (and, with ``return_chol``, the Cholesky factor of ``Gamma' D Gamma``, ridged).  The
        delta-method inverse of the Poisson log link, used as the encoder's baseline."""
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
        return (mu, v, L) if return_chol else (mu, v)

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
        """Exact ``q(u)`` given the potentials ``L`` ``(n, T, d, C)`` (forward-backward in log space): ``log_norm``
        ``(n, d)`` (the chain's log-normaliser, the ELBO's prior term), ``nu`` ``(n, d, C)``, ``tau`` ``(n, T-1,
        d, C', C)`` (``q(u_t = c | u_{t-1} = c')``), marginals ``alpha`` ``(n, T, d, C)``, pair marginals ``xi``
        ``(n, T-1, d, C', C)``."""
        logpi, logA = self.pi.clamp_min(1e-12).log(), self.A.clamp_min(1e-12).log()
        T = L.shape[1]
        fw = [logpi + L[:, 0]]
        for t in range(1, T):
            fw.append(torch.logsumexp(fw[-1].unsqueeze(-1) + logA, dim=-2) + L[:, t])
        bw = [torch.zeros_like(fw[0])]
        for t in range(T - 1, 0, -1):
            bw.append(torch.logsumexp(logA + (L[:, t] + bw[-1]).unsqueeze(-2), dim=-1))
        bw = bw[::-1]
        log_norm = torch.logsumexp(fw[-1], dim=-1)
        alpha = torch.softmax(torch.stack(fw, 1) + torch.stack(bw, 1), dim=-1)
        # backward-conditioned transitions: tau_t(c' -> c) ∝ A(c', c) exp(L_t(c) + log beta_t(c))
        logits = logA + (L[:, 1:] + torch.stack(bw[1:], 1)).unsqueeze(-2)  # (n, T-1, d, C', C)
        tau = torch.softmax(logits, dim=-1)
        xi = alpha[:, :-1].unsqueeze(-1) * tau
        return {"log_norm": log_norm, "nu": alpha[:, 0], "tau": tau, "alpha": alpha, "xi": xi}

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
        var = torch.einsum("kd,ntde,ke->ntk", G, q["Sigma_full"], G)  # (Gamma Sigma_t Gamma')_jj, both families
        pois = (x * eta - torch.exp(eta + 0.5 * var) - torch.lgamma(x + 1.0)).sum((1, 2))
        L = self.expected_loglik(q)
        if self.n_regimes == 1:
            prior = L.sum((1, 2, 3))
        else:
            prior = self.regime_posterior(L)["log_norm"].sum(-1)
        ent = 0.5 * (self.n_components * (_LOG2PI + 1.0) + q["logdet_psi"]).sum(1)
        out = pois + prior + ent
        return out if per_sequence else out.sum()

    # -- closed-form M-step ----------------------------------------------------------------------------------
    @torch.no_grad()
    def m_step(self, q: dict, var_floor: float = 1e-4, max_coef: float = 1.5) -> None:
        """Maximise the ELBO over ``(pi, A, bbar, psibar, B, b, psi)`` given detached moments.

        Weights ``w_t(c) = alpha_t(c)`` (the exact smoothed regime marginals), pair weights ``xi_t(c', c)``: ``pi =
        mean alpha_1``, ``A ∝ sum xi``, ``bbar, psibar`` the ``alpha_1``-weighted mean/variance of ``s_1``, and
        ``(B_c, b_c)`` the ``w``-weighted least squares of ``s_t`` on ``(s_{t-1}, 1)`` in expectation, ``psi_c`` its
        weighted mean squared residual (Baum-Welch with Gaussian-AR emissions in expectation under ``q(s)``: the
        maximiser of the ELBO with ``q(u)`` and ``q(s)`` held fixed; in training ``q`` is the one computed before
        that batch's gradient step, so each M-step is a generalised-EM step, not the exact maximiser for the updated
        encoder).
        """
        mu, S, X = q["mu"].unsqueeze(-1), q["Sigma"].unsqueeze(-1), q["cross"].unsqueeze(-1)
        n, T = mu.shape[:2]
        if self.n_regimes == 1:
            w = torch.ones(n, T, self.n_components, 1, dtype=mu.dtype)
        else:
            r = self.regime_posterior(self.expected_loglik(q))
            w, xi = r["alpha"], r["xi"]
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
