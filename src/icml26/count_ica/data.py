"""Simulated ARPLN-ICA data: regime-switching AR(1) sources mixed into Poisson log-normal counts.

Re-implements the parameterisation of the paper's simulation notebook with our own random-number stream:
AR coefficients ``B ~ sigmoid(0.95 + 3 N(0,1))`` with components 0 and 3 flipped to ``-0.5 B`` and the last set
to ``-2 B_3``, process noise ``psi = 0.08``, AR biases ``b ~ 0.5 + 0.5 N(0,1)`` (``b_0 += 2``, ``b_1 += 0.4``),
initial mean ``bbar = b + 0.05 N``, initial variance ``psibar = psi + 0.3 |N|``, and one mixing scenario:

- ``"moderate"`` (moderate coherence, imbalanced prevalence): ``W = 2.8 N + 0.9 min(|N|, 1) + 5.3 |N|``,
  offset ``1.5``;
- ``"high"`` (high coherence, balanced prevalence): ``W = 1.6 |N| + 0.6 N``, offset ``0.7``;
- ``"low"`` (low excitation): ``W = 0.6 g N`` with one scalar ``g ~ N(0,1)``, offset ``0``.

``Gamma = W / ||W||_col`` (unit columns).  With ``n_regimes = C > 1`` (our extension "S-regime") each source has a
sticky chain (``A_cc = stickiness``) and the regimes differ in their AR bias, ``b_c = b + regime_shift * (2c/(C-1)
- 1)`` (so ``b +- regime_shift`` for ``C = 2``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ARPLNTruth", "make_arpln_data", "SCENARIOS"]

SCENARIOS = ("moderate", "high", "low")


@dataclass
class ARPLNTruth:
    """The generating parameters and latent paths of :func:`make_arpln_data` (shapes: ``d`` sources, ``C``
    regimes, ``K`` features)."""

    mixing: np.ndarray  # (K, d), unit columns
    offsets: np.ndarray  # (n, T)
    pi: np.ndarray  # (d, C)
    transition: np.ndarray  # (d, C, C)
    ar_coef: np.ndarray  # (d, C)
    ar_bias: np.ndarray  # (d, C)
    ar_var: np.ndarray  # (d, C)
    init_mean: np.ndarray  # (d, C)
    init_var: np.ndarray  # (d, C)
    sources: np.ndarray = field(repr=False)  # (n, T, d)
    regimes: np.ndarray = field(repr=False)  # (n, T, d) ints
    scenario: str = "moderate"

    def sample(self, n: int, T: int | None = None, seed: int | None = None) -> np.ndarray:
        """Fresh count sequences ``(n, T, K)`` from the same parameters (offset of the first sequence)."""
        T = self.sources.shape[1] if T is None else T
        rng = np.random.default_rng(seed)
        S, _ = _simulate_sources(
            rng, n, T, self.pi, self.transition, self.ar_coef, self.ar_bias, self.ar_var, self.init_mean, self.init_var
        )
        o = np.full((n, T), float(self.offsets.flat[0]))
        return rng.poisson(np.exp(o[..., None] + S @ self.mixing.T)).astype(np.int64)


def _simulate_sources(rng, n, T, pi, A, B, b, psi, bbar, psibar):
    d, C = pi.shape
    U = np.empty((n, T, d), dtype=np.int64)
    S = np.empty((n, T, d))
    cols = np.arange(d)
    for i in range(d):
        U[:, 0, i] = rng.choice(C, size=n, p=pi[i])
    S[:, 0] = bbar[cols, U[:, 0]] + np.sqrt(psibar[cols, U[:, 0]]) * rng.standard_normal((n, d))
    for t in range(1, T):
        for i in range(d):
            cum = np.cumsum(A[i][U[:, t - 1, i]], axis=1)
            U[:, t, i] = np.minimum((rng.random((n, 1)) > cum).sum(axis=1), C - 1)
        c = U[:, t]
        S[:, t] = B[cols, c] * S[:, t - 1] + b[cols, c] + np.sqrt(psi[cols, c]) * rng.standard_normal((n, d))
    return S, U


def make_arpln_data(
    n: int = 150,
    T: int = 20,
    n_features: int = 12,
    n_components: int = 5,
    n_regimes: int = 1,
    scenario: str = "moderate",
    seed: int | None = 0,
    *,
    stickiness: float = 0.9,
    regime_shift: float = 1.0,
    psi: float = 0.08,
    offset: float | None = None,
    dynamics_seed: int | None = None,
) -> tuple[np.ndarray, ARPLNTruth]:
    """Draw ``X`` ``(n, T, K)`` int64 counts and the :class:`ARPLNTruth` that generated them.

    ``x_tj ~ Poisson(exp(o + (Gamma s_t)_j))``, ``s_1^(i) | u_1 = c ~ N(bbar_ic, psibar_ic)``,
    ``s_t^(i) | s_{t-1}, u_t = c ~ N(B_ic s_{t-1} + b_ic, psi_ic)``, ``u^(i)`` a Markov chain (``pi_i``, ``A_i``).
    ``offset`` overrides the scenario's offset.  ``dynamics_seed`` (as in the paper's notebook, where the AR
    dynamics come from one fixed seed shared by all scenarios and replicates) draws the dynamics from their own
    stream; ``None`` draws them from ``seed``.
    """
    for name, v, lo in (
        ("n", n, 1),
        ("T", T, 2),
        ("n_features", n_features, 1),
        ("n_components", n_components, 1),
        ("n_regimes", n_regimes, 1),
    ):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")
    if n_components > n_features:
        raise ValueError(f"n_components must be <= n_features ({n_features}), got {n_components}")
    if not 0.0 <= stickiness <= 1.0:
        raise ValueError(f"stickiness must lie in [0, 1], got {stickiness}")
    rng = np.random.default_rng(seed)
    drng = rng if dynamics_seed is None else np.random.default_rng([int(dynamics_seed), 7919])
    d, C, K = n_components, n_regimes, n_features
    # dynamics (the notebook's, per component; shared by the regimes except for the bias)
    B = 1.0 / (1.0 + np.exp(-(0.95 + 3.0 * drng.standard_normal(d))))
    B[0] *= -0.5
    if d > 3:
        B[3] *= -0.5
        B[-1] = -2.0 * B[3]
    b = 0.5 * drng.standard_normal(d) + 0.5
    b[0] += 2.0
    if d > 1:
        b[1] += 0.4
    bbar = b + 0.05 * drng.standard_normal(d)
    psibar = psi + 0.3 * np.abs(drng.standard_normal(d))
    shifts = np.zeros(C) if C == 1 else regime_shift * (2.0 * np.arange(C) / (C - 1) - 1.0)
    ar_bias = b[:, None] + shifts[None, :]
    init_mean = bbar[:, None] + shifts[None, :]
    ar_coef = np.repeat(B[:, None], C, axis=1)
    ar_var = np.full((d, C), psi)
    init_var = np.repeat(psibar[:, None], C, axis=1)
    pi = np.full((d, C), 1.0 / C)
    if C == 1:
        A = np.ones((d, 1, 1))
    else:
        A = np.full((d, C, C), (1.0 - stickiness) / (C - 1))
        A[:, np.arange(C), np.arange(C)] = stickiness
    # mixing scenario
    if scenario == "moderate":
        W = (
            2.8 * rng.standard_normal((K, d))
            + 0.9 * np.minimum(np.abs(rng.standard_normal((K, d))), 1.0)
            + 5.3 * np.abs(rng.standard_normal((K, d)))
        )
        o = 1.5
    elif scenario == "high":
        W = 1.6 * np.abs(rng.standard_normal((K, d))) + 0.6 * rng.standard_normal((K, d))
        o = 0.7
    else:
        W = 0.6 * rng.standard_normal((K, d)) * rng.standard_normal()
        o = 0.0
    o = o if offset is None else float(offset)
    G = W / np.linalg.norm(W, axis=0, keepdims=True)
    S, U = _simulate_sources(rng, n, T, pi, A, ar_coef, ar_bias, ar_var, init_mean, init_var)
    offsets = np.full((n, T), o)
    X = rng.poisson(np.exp(offsets[..., None] + S @ G.T)).astype(np.int64)
    truth = ARPLNTruth(
        mixing=G,
        offsets=offsets,
        pi=pi,
        transition=A,
        ar_coef=ar_coef,
        ar_bias=ar_bias,
        ar_var=ar_var,
        init_mean=init_mean,
        init_var=init_var,
        sources=S,
        regimes=U,
        scenario=scenario,
    )
    return X, truth
