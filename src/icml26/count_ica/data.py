"""Simulated ARPLN-ICA data: regime-switching AR(1) sources mixed into Poisson log-normal counts.

Re-implements the parameterisation of the paper's simulation notebook with our own random-number stream:
AR coefficients ``B ~ sigmoid(0.95 + 3 N(0,1))`` with components 0 and 3 flipped to ``-0.5 B`` and the last set
to ``-2 B_3``, process noise ``psi = 0.08``, AR biases ``b ~ 0.5 + 0.5 N(0,1)`` (``b_0 += 2``, ``b_1 += 0.4``),
initial mean ``bbar = b + 0.05 N``, initial variance ``psibar = psi + 0.3 |N|``, and one mixing scenario:

- ``"moderate"`` (moderate coherence, imbalanced prevalence): ``W = 2.8 N + 0.9 min(|N|, 1) + 5.3 |N|``;
- ``"high"`` (high coherence, balanced prevalence): ``W = 1.6 |N| + 0.6 N``;
- ``"low"`` (low excitation): ``W = 0.6 g N`` with one scalar ``g ~ N(0,1)``;

``Gamma = W / ||W||_col`` (unit columns), constant offset ``o`` (:data:`OFFSETS`: 1.5 for both coherence
scenarios, 0 for low excitation; the notebook used 0.7 for "high", see below).

``design="random"`` draws the dynamics (from ``dynamics_seed``, else ``seed``) and the mixing (from ``seed``) with
the formulas above, for any ``K, d``.  ``design="notebook"`` uses the notebook's *realised* values instead
(:data:`NOTEBOOK_DYNAMICS`, :data:`NOTEBOOK_MIXING`; ``K = 12, d = 5``): its one dynamics draw and its one Gamma per
scenario; only the paths and counts come from ``seed`` (the notebook's replicates also vary only the data).  The
notebook's "high" Gamma is what makes FastICA on log counts good there (|cos| ~0.85 at offset 0.7, ~0.89 at 1.5);
freshly drawn "high" Gammas give ~0.73 (the coherence formula alone does not make FastICA good).

With ``n_regimes = C > 1`` (our extension "S-regime") each source has a sticky chain (``A_cc = stickiness``) and
the regimes differ in their AR bias, ``b_c = b + regime_shift * (2c/(C-1) - 1)`` (so ``b +- regime_shift`` for
``C = 2``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ARPLNTruth", "make_arpln_data", "SCENARIOS", "DESIGNS", "OFFSETS", "NOTEBOOK_DYNAMICS", "NOTEBOOK_MIXING"]

SCENARIOS = ("moderate", "high", "low")
DESIGNS = ("random", "notebook")
OFFSETS = {"moderate": 1.5, "high": 1.5, "low": 0.0}

# The notebook's realised setting (simulated_study.ipynb, torch seeds 0-3; values rounded to 4 decimals): one AR
# dynamics draw shared by every scenario and one Gamma per scenario (K = 12 features, d = 5 sources).
NOTEBOOK_DYNAMICS = {
    "ar_coef": np.array([-0.0796, 0.2377, 0.8833, -0.4939, 0.9878]),
    "ar_bias": np.array([3.2091, 0.4519, 0.4664, 0.2054, 0.6101]),
    "init_mean": np.array([3.2286, 0.4638, 0.4282, 0.2176, 0.6197]),
    "init_var": np.array([0.2519, 0.4446, 0.4436, 0.2678, 0.2117]),
}
NOTEBOOK_MIXING = {
    "high": np.array(
        [
            [0.3639, 0.3700, 0.1361, 0.2076, 0.1578],
            [0.2889, 0.2676, 0.2967, 0.1814, 0.2816],
            [-0.0268, 0.4196, 0.0826, 0.1987, 0.0996],
            [0.3984, 0.1479, 0.3755, 0.2082, 0.3577],
            [0.3812, 0.1298, -0.0173, 0.4122, 0.3077],
            [0.1427, 0.1470, 0.0605, 0.2560, 0.4002],
            [0.3066, 0.2852, 0.3226, 0.5457, 0.5988],
            [0.1353, 0.0158, 0.3501, 0.2992, 0.0741],
            [0.0770, 0.1123, 0.0383, 0.3761, 0.0404],
            [0.2182, 0.2631, 0.0790, 0.0708, 0.1453],
            [0.3112, 0.6194, 0.6999, 0.2494, 0.2805],
            [0.4431, -0.0892, 0.1317, 0.0987, 0.1939],
        ]
    ),
    "moderate": np.array(
        [
            [0.2026, 0.1656, -0.1922, 0.2276, 0.5356],
            [0.7122, 0.3101, -0.0064, 0.4554, -0.1819],
            [0.1415, 0.0645, 0.0287, 0.2473, 0.1882],
            [0.1557, -0.1003, 0.3547, 0.4307, 0.3980],
            [-0.1386, 0.2185, 0.0483, 0.2068, 0.0148],
            [-0.0033, 0.0010, 0.0105, 0.2673, 0.0937],
            [0.0108, 0.5065, 0.2345, 0.1227, 0.4215],
            [0.2496, 0.2731, 0.1655, -0.0554, 0.1030],
            [0.3913, 0.2251, 0.5119, -0.0627, 0.0887],
            [-0.0472, 0.5136, 0.6697, 0.4015, 0.0308],
            [0.3891, 0.3129, 0.1799, 0.2530, 0.4940],
            [0.1384, 0.2663, 0.0935, 0.3644, 0.1902],
        ]
    ),
    "low": np.array(
        [
            [0.0625, -0.1630, 0.7713, -0.0083, -0.0328],
            [-0.4386, 0.5522, -0.1973, 0.2873, 0.5865],
            [-0.1198, 0.0361, -0.0135, -0.4300, 0.1339],
            [-0.1615, 0.0719, 0.0983, 0.2183, 0.2019],
            [-0.3439, -0.1568, -0.2160, -0.0350, 0.1322],
            [0.5111, 0.0957, -0.1744, -0.2198, 0.2763],
            [0.0942, 0.3661, -0.0666, -0.2997, -0.1508],
            [0.2879, -0.0386, -0.3112, -0.5515, -0.5002],
            [-0.2243, 0.5678, 0.1646, -0.0975, -0.0742],
            [-0.1346, 0.3647, 0.2846, -0.0522, 0.3998],
            [0.3063, -0.1315, -0.0283, 0.4689, 0.2522],
            [-0.3601, 0.1417, 0.2629, 0.0960, -0.0246],
        ]
    ),
}


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
    design: str = "random",
) -> tuple[np.ndarray, ARPLNTruth]:
    """Draw ``X`` ``(n, T, K)`` int64 counts and the :class:`ARPLNTruth` that generated them.

    ``x_tj ~ Poisson(exp(o + (Gamma s_t)_j))``, ``s_1^(i) | u_1 = c ~ N(bbar_ic, psibar_ic)``,
    ``s_t^(i) | s_{t-1}, u_t = c ~ N(B_ic s_{t-1} + b_ic, psi_ic)``, ``u^(i)`` a Markov chain (``pi_i``, ``A_i``).
    ``offset`` overrides the scenario's offset.  ``dynamics_seed`` (as in the paper's notebook, where the AR
    dynamics come from one fixed seed shared by all scenarios and replicates) draws the dynamics from their own
    stream; ``None`` draws them from ``seed``.  ``design="notebook"`` replaces the drawn dynamics and mixing by the
    notebook's realised ones (needs ``n_features=12, n_components=5``; ``dynamics_seed`` is then ignored).
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
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    if design == "notebook" and (n_features, n_components) != (12, 5):
        raise ValueError(
            f"design='notebook' needs n_features=12 and n_components=5, got {n_features} and {n_components}"
        )
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
    if design == "notebook":
        nd = NOTEBOOK_DYNAMICS
        B, b, bbar, psibar = (nd[k].copy() for k in ("ar_coef", "ar_bias", "init_mean", "init_var"))
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
    elif scenario == "high":
        W = 1.6 * np.abs(rng.standard_normal((K, d))) + 0.6 * rng.standard_normal((K, d))
    else:
        W = 0.6 * rng.standard_normal((K, d)) * rng.standard_normal()
    if design == "notebook":
        W = NOTEBOOK_MIXING[scenario].copy()
    o = OFFSETS[scenario] if offset is None else float(offset)
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
