"""The client's upload pipeline at the end of a task: select high-confidence features, densify them by intra-class
mixup, privatize them (clip + Gaussian noise); and the analytic Gaussian mechanism's epsilon for that release."""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["select_high_confidence", "feature_mixup", "privatize", "clip_norm", "gaussian_epsilon"]


def select_high_confidence(probs: torch.Tensor, y: torch.Tensor, tau: float = 0.9, m: int = 20) -> torch.Tensor:
    """Indices of samples predicted correctly with confidence ``p(y|x) >= tau``, at most ``m`` per class, highest
    confidence first (ties by index), returned sorted by class then confidence.

    ``probs``: ``(n, C)`` softmax outputs; ``y``: ``(n,)`` labels."""
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must lie in [0, 1], got {tau!r}")
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    if probs.ndim != 2 or y.ndim != 1 or len(y) != len(probs):
        raise ValueError(f"probs must be (n, C) and y (n,), got {tuple(probs.shape)} and {tuple(y.shape)}")
    conf, pred = probs.max(dim=1)
    ok = (pred == y) & (probs.gather(1, y[:, None]).squeeze(1) >= tau)
    out = []
    for c in torch.unique(y[ok]).tolist():
        idx = torch.nonzero(ok & (y == c)).squeeze(1)
        order = sorted(idx.tolist(), key=lambda i: (-float(conf[i]), i))
        out.extend(order[:m])
    return torch.as_tensor(out, dtype=torch.long)


def feature_mixup(
    H: torch.Tensor, y: torch.Tensor, n_per_class: int = 20, alpha: float = 0.4, rng: np.random.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Dense features by intra-class mixup: for each class, ``n_per_class`` vectors
    ``h~ = mu h_a + (1 - mu) h_b`` with ``mu ~ Beta(alpha, alpha)`` and ``a, b`` drawn uniformly (with
    replacement) among that class's rows.  Only same-class pairs are mixed and labels are kept."""
    if isinstance(n_per_class, bool) or not isinstance(n_per_class, int) or n_per_class < 1:
        raise ValueError(f"n_per_class must be an integer >= 1, got {n_per_class!r}")
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0 (Beta concentration), got {alpha!r}")
    rng = np.random.default_rng() if rng is None else rng
    Hs, ys = [], []
    for c in torch.unique(y).tolist():
        Hc = H[y == c]
        a = torch.as_tensor(rng.integers(len(Hc), size=n_per_class))
        b = torch.as_tensor(rng.integers(len(Hc), size=n_per_class))
        mu = torch.as_tensor(rng.beta(alpha, alpha, size=(n_per_class, 1)), dtype=H.dtype)
        Hs.append(mu * Hc[a] + (1 - mu) * Hc[b])
        ys.append(torch.full((n_per_class,), c, dtype=y.dtype))
    if not Hs:
        return H[:0], y[:0]
    return torch.cat(Hs), torch.cat(ys)


def clip_norm(H: torch.Tensor, R: float = 1.0) -> torch.Tensor:
    """``clip_R(v) = v min(1, R / ||v||)`` row-wise."""
    if not R > 0:
        raise ValueError(f"R must be > 0, got {R!r}")
    n = H.norm(dim=1, keepdim=True)
    return H * torch.clamp(R / n.clamp_min(1e-12), max=1.0)


def privatize(
    H: torch.Tensor, sigma: float = 0.5, R: float = 1.0, rng: np.random.Generator | None = None
) -> torch.Tensor:
    """Gaussian mechanism per released vector: ``clip_R(h) + N(0, (sigma R)^2 I)``; ``sigma = 0`` returns the
    clipped vectors."""
    if not sigma >= 0:
        raise ValueError(f"sigma must be >= 0, got {sigma!r}")
    Hc = clip_norm(H, R)
    if sigma == 0:
        return Hc
    rng = np.random.default_rng() if rng is None else rng
    return Hc + torch.as_tensor(sigma * R * rng.standard_normal(tuple(Hc.shape)), dtype=Hc.dtype)


def gaussian_epsilon(sigma: float, delta: float = 1e-5, sensitivity: float = 2.0) -> float:
    """The smallest ``eps`` for which adding ``N(0, sigma^2 I)`` to a query of L2 ``sensitivity`` is
    ``(eps, delta)``-DP, by the analytic Gaussian mechanism (Balle & Wang, 2018, Thm. 8):
    ``Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta``, solved by bisection.  For one
    released vector clipped to norm ``R`` with noise ``sigma_f R``, pass ``sigma=sigma_f`` and ``sensitivity=2``
    (replacing one vector moves it by at most ``2R``).  ``inf`` when ``sigma = 0``."""
    from scipy.stats import norm

    if not sigma >= 0:
        raise ValueError(f"sigma must be >= 0, got {sigma!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be > 0, got {sensitivity!r}")
    if sigma == 0:
        return float("inf")
    r = sensitivity / sigma

    def delta_of(eps: float) -> float:
        return float(norm.cdf(r / 2 - eps / r) - math.exp(eps + norm.logcdf(-r / 2 - eps / r)))

    if delta_of(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while delta_of(hi) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
    return hi
