"""The exact finite-space toy (spec Experiment A): why tempering is needed when the forget data is concentrated.

Space ``Z = {0, ..., n_atoms - 1}``; the first ``n_retain`` atoms are the retain support, the rest the forget
support.  The data law is the mixture ``p = (1 - gamma) p_r + gamma p_f`` with

* ``p_r ~ Dirichlet(1)`` on the retain support;
* ``p_f`` putting mass ``m`` evenly on ``n_spikes`` forget atoms and ``1 - m`` evenly on the other forget atoms,
  so ``m`` controls how concentrated (``||p_f||_inf``, "memorised") the forget distribution is.

Every atom has a 16-d feature ``phi(z) = N(0, I) + separation * y(z) * u`` (``y = +1`` forget, ``-1`` retain,
``u`` a fixed unit vector), so a classifier can tell the parts apart only imperfectly.  With
``spike_features="retain"`` the spike atoms get retain-side features (``y = -1`` in ``phi``; they are still
forget atoms): the memorised forget answers look like retain data to the classifier, the case where its error
``delta`` sits exactly where ``p`` is large, so classifier guidance's forget mass grows with ``m`` (the failure
mode T3 addresses).  ``"forget"`` (the default) gives them forget-side features like every other forget atom.
The classifier
``f_hat(z) ~ P(R | z)`` is a logistic regression on ``phi`` fitted to ``n_samples`` draws from ``p`` labelled
retain / forget: it has a real finite-sample error.

Everything else is exact, by normalising over ``Z``:

* classifier guidance (CG):  ``p_hat(z) ∝ p(z) f_hat(z)``;
* temper-then-tilt (T3):     ``p_hat_T(z) ∝ p(z)^(1/T) f_hat(z)`` (``T = 1`` is CG).

Scores: forget mass ``p_hat(F)`` (ideal 0), ``KL(p_r || p_hat)`` and total variation to ``p_r``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression

__all__ = [
    "ToyProblem",
    "make_toy",
    "fit_toy_classifier",
    "tilt",
    "toy_scores",
    "mixture_experiment",
    "prior_corrected",
]


@dataclass(frozen=True)
class ToyProblem:
    """One draw of the toy: ``p_r``, ``p_f`` (over all of ``Z``), ``gamma``, features ``phi`` and the forget mask."""

    p_r: np.ndarray
    p_f: np.ndarray
    gamma: float
    phi: np.ndarray
    forget: np.ndarray

    @property
    def p(self) -> np.ndarray:
        """The base (mixture) distribution ``(1 - gamma) p_r + gamma p_f``."""
        return (1 - self.gamma) * self.p_r + self.gamma * self.p_f

    @property
    def posterior_retain(self) -> np.ndarray:
        """The exact ``P(R | z) = (1 - gamma) p_r(z) / p(z)`` (0 where ``p(z) = 0``)."""
        p = self.p
        return np.divide((1 - self.gamma) * self.p_r, p, out=np.zeros_like(p), where=p > 0)


def make_toy(
    m: float,
    seed: int,
    n_atoms: int = 2000,
    n_retain: int = 1800,
    n_spikes: int = 5,
    gamma: float = 0.1,
    dim: int = 16,
    separation: float = 1.0,
    spike_features: str = "forget",
) -> ToyProblem:
    """Draw ``p_r``, ``p_f`` (spike mass ``m``) and the features; see the module docstring."""
    if spike_features not in ("forget", "retain"):
        raise ValueError(f"spike_features must be 'forget' or 'retain', got {spike_features!r}")
    if not 0.0 <= m <= 1.0:
        raise ValueError(f"m must lie in [0, 1], got {m}")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {gamma}")
    if not 0 < n_retain < n_atoms or not 0 < n_spikes < n_atoms - n_retain:
        raise ValueError(
            f"need 0 < n_retain < n_atoms and 0 < n_spikes < n_atoms - n_retain, got n_atoms={n_atoms}, "
            f"n_retain={n_retain}, n_spikes={n_spikes}"
        )
    rng = np.random.default_rng(seed)
    n_forget = n_atoms - n_retain
    p_r = np.zeros(n_atoms)
    p_r[:n_retain] = rng.dirichlet(np.ones(n_retain))
    p_f = np.zeros(n_atoms)
    spikes = n_retain + rng.choice(n_forget, size=n_spikes, replace=False)
    rest = np.setdiff1d(np.arange(n_retain, n_atoms), spikes)
    p_f[spikes] = m / n_spikes
    p_f[rest] = (1 - m) / rest.size
    forget = np.zeros(n_atoms, dtype=bool)
    forget[n_retain:] = True
    u = rng.standard_normal(dim)
    u /= np.linalg.norm(u)
    side = np.where(forget, 1.0, -1.0)
    if spike_features == "retain":
        side[spikes] = -1.0
    phi = rng.standard_normal((n_atoms, dim)) + separation * side[:, None] * u
    return ToyProblem(p_r, p_f, gamma, phi, forget)


def fit_toy_classifier(problem: ToyProblem, n_samples: int, seed: int) -> np.ndarray:
    """``f_hat(z)`` for every atom: logistic regression on ``phi`` from ``n_samples`` labelled draws of ``p``."""
    if n_samples < 2:
        raise ValueError(f"n_samples must be >= 2, got {n_samples}")
    rng = np.random.default_rng(seed)
    z = rng.choice(problem.p.size, size=n_samples, p=problem.p)
    y = (~problem.forget[z]).astype(int)  # 1 = retain
    if y.min() == y.max():
        raise ValueError("the sample holds only one class; increase n_samples")
    clf = LogisticRegression(C=1.0, max_iter=1000).fit(problem.phi[z], y)
    return clf.predict_proba(problem.phi)[:, 1]


def tilt(p: np.ndarray, f_hat: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """``p_hat(z) = p(z)^(1/T) f_hat(z) / sum_z' p(z')^(1/T) f_hat(z')`` (``T = 1``: classifier guidance)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    p = np.asarray(p, dtype=float)
    f_hat = np.asarray(f_hat, dtype=float)
    if p.shape != f_hat.shape or np.any(p < 0) or np.any(f_hat < 0):
        raise ValueError("p and f_hat must be non-negative arrays of the same shape")
    w = np.power(p, 1.0 / temperature, where=p > 0, out=np.zeros_like(p)) * f_hat
    total = w.sum()
    if not total > 0:
        raise ValueError("p^(1/T) f_hat has zero total mass")
    return w / total


def toy_scores(problem: ToyProblem, p_hat: np.ndarray) -> dict[str, float]:
    """Forget mass ``p_hat(F)``, ``KL(p_r || p_hat)`` (nats) and ``TV(p_r, p_hat)``."""
    pr = problem.p_r
    sup = pr > 0
    kl = float(np.sum(pr[sup] * (np.log(pr[sup]) - np.log(np.maximum(p_hat[sup], 1e-300)))))
    return {
        "forget_mass": float(p_hat[problem.forget].sum()),
        "kl": kl,
        "tv": float(0.5 * np.abs(pr - p_hat).sum()),
    }


def mixture_experiment(
    masses: Sequence[float] = (0.1, 0.5, 0.9, 0.99),
    temperatures: Sequence[float] = (1.0, 1.5, 2.0, 3.0, 5.0, 8.0),
    seeds: Sequence[int] = tuple(range(20)),
    n_samples: int = 2000,
    **toy_kwargs,
) -> list[dict]:
    """Run the toy for every spike mass ``m``, seed and temperature.

    Returns one row per (m, seed, T) with ``forget_mass``, ``kl``, ``tv``; ``T = 1`` is classifier guidance.
    The problem and the classifier depend on the seed only (shared by all ``T``), so rows are paired.
    """
    if not masses or not temperatures or not seeds:
        raise ValueError("masses, temperatures and seeds must be non-empty")
    if any(t <= 0 for t in temperatures):
        raise ValueError(f"temperatures must be > 0, got {list(temperatures)}")
    rows = []
    for m in masses:
        for s in seeds:
            prob = make_toy(m, seed=s, **toy_kwargs)
            f_hat = fit_toy_classifier(prob, n_samples, seed=10_000 + s)
            for t in temperatures:
                rows.append({"m": float(m), "seed": int(s), "T": float(t), **toy_scores(prob, tilt(prob.p, f_hat, t))})
    return rows


def prior_corrected(f_balanced: np.ndarray, gamma: float) -> np.ndarray:
    """Turn a classifier trained on *balanced* classes, ``f_b = p_r / (p_r + p_f)``, into ``P(R | z)`` under the
    mixture with forget fraction ``gamma``: ``(1 - gamma) f_b / ((1 - gamma) f_b + gamma (1 - f_b))``."""
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {gamma}")
    f = np.asarray(f_balanced, dtype=float)
    if np.any((f < 0) | (f > 1)):
        raise ValueError("f_balanced must lie in [0, 1]")
    num = (1 - gamma) * f
    den = num + gamma * (1 - f)
    return np.divide(num, den, out=np.zeros_like(f), where=den > 0)
