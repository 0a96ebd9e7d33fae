"""A local quality metric: Fréchet distance in the features of a small digits classifier (not FID).

``FD = ||mu_r - mu_g||^2 + tr(S_r + S_g - 2 (S_r S_g)^{1/2})`` between Gaussians fitted to the feature vectors
of real and generated images.  Inception weights cannot be downloaded here, so the feature extractor is a
small CNN trained locally on the digits train split (:func:`train_digit_classifier`); the number is only
comparable between runs that use the same extractor.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from scipy import linalg
from torch import Tensor, nn

__all__ = [
    "frechet_distance",
    "kernel_distance",
    "FeatureFD",
    "DigitClassifier",
    "train_digit_classifier",
    "band_r2",
    "censored_level_time",
    "linear_mmse_x0",
    "linear_mmse_band_r2",
    "recovery_level_t",
]


def frechet_distance(mu1: np.ndarray, cov1: np.ndarray, mu2: np.ndarray, cov2: np.ndarray) -> float:
    """Fréchet (2-Wasserstein) distance squared between ``N(mu1, cov1)`` and ``N(mu2, cov2)``."""
    mu1, mu2 = np.atleast_1d(np.asarray(mu1, float)), np.atleast_1d(np.asarray(mu2, float))
    cov1, cov2 = np.atleast_2d(np.asarray(cov1, float)), np.atleast_2d(np.asarray(cov2, float))
    if mu1.shape != mu2.shape or cov1.shape != cov2.shape or cov1.shape != (mu1.size, mu1.size):
        raise ValueError(f"shapes do not match: mu {mu1.shape}/{mu2.shape}, cov {cov1.shape}/{cov2.shape}")
    covmean = linalg.sqrtm(cov1 @ cov2)
    if not np.all(np.isfinite(covmean)):  # singular product: regularise as pytorch-fid does
        off = np.eye(cov1.shape[0]) * 1e-6
        covmean = linalg.sqrtm((cov1 + off) @ (cov2 + off))
    covmean = np.real(covmean)
    return float(max(np.sum((mu1 - mu2) ** 2) + np.trace(cov1) + np.trace(cov2) - 2.0 * np.trace(covmean), 0.0))


def kernel_distance(
    real: np.ndarray, gen: np.ndarray, n_subsets: int = 100, subset_size: int = 100, seed: int = 0
) -> tuple[float, float]:
    """KID-style kernel distance: mean and sd over ``n_subsets`` random subsets of the unbiased ``MMD^2`` with
    the cubic polynomial kernel ``k(a, b) = (a . b / d + 1)^3`` (Binkowski et al. 2018), on feature rows."""
    real, gen = np.asarray(real, float), np.asarray(gen, float)
    if real.ndim != 2 or gen.ndim != 2 or real.shape[1] != gen.shape[1]:
        raise ValueError(f"real and gen must be [n, d] feature arrays with equal d, got {real.shape}, {gen.shape}")
    m = min(subset_size, len(real), len(gen))
    if m < 2:
        raise ValueError(f"kernel_distance needs at least 2 rows in each set, got {len(real)} and {len(gen)}")
    d = real.shape[1]
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n_subsets):
        a = real[rng.choice(len(real), m, replace=False)]
        b = gen[rng.choice(len(gen), m, replace=False)]
        kaa, kbb, kab = ((a @ a.T) / d + 1) ** 3, ((b @ b.T) / d + 1) ** 3, ((a @ b.T) / d + 1) ** 3
        off = (kaa.sum() - np.trace(kaa) + kbb.sum() - np.trace(kbb)) / (m * (m - 1))
        vals.append(off - 2 * kab.mean())
    return float(np.mean(vals)), float(np.std(vals))


class FeatureFD:
    """torchmetrics-like accumulator: ``update(x, real=True/False)`` then ``compute()``.

    ``feature_extractor`` maps images ``[B, ...]`` to features ``[B, d]`` (run in eval mode without grad).
    """

    def __init__(self, feature_extractor: nn.Module) -> None:
        if not callable(feature_extractor):
            raise TypeError("feature_extractor must be a callable nn.Module mapping images to [B, d] features")
        self.feature_extractor = feature_extractor
        self.reset()

    def reset(self) -> None:
        self._feats: dict[bool, list[np.ndarray]] = {True: [], False: []}

    @torch.no_grad()
    def update(self, x: Tensor, real: bool) -> None:
        if not isinstance(real, bool):
            raise TypeError(f"real must be a bool, got {type(real).__name__}")
        was = getattr(self.feature_extractor, "training", False)
        if hasattr(self.feature_extractor, "eval"):
            self.feature_extractor.eval()
        f = self.feature_extractor(x)
        if hasattr(self.feature_extractor, "train"):
            self.feature_extractor.train(was)
        if f.dim() != 2:
            raise ValueError(f"feature_extractor must return [B, d] features, got {tuple(f.shape)}")
        self._feats[real].append(f.detach().double().cpu().numpy())

    def compute(self) -> float:
        if any(sum(len(a) for a in self._feats[k]) < 2 for k in (True, False)):
            raise ValueError("FeatureFD needs at least 2 real and 2 generated samples; call update() first")
        r, g = (np.concatenate(self._feats[k]) for k in (True, False))
        return frechet_distance(r.mean(0), np.cov(r, rowvar=False), g.mean(0), np.cov(g, rowvar=False))

    def compute_kid(self, n_subsets: int = 100, subset_size: int = 100, seed: int = 0) -> tuple[float, float]:
        """Kernel distance (KID-style, see :func:`kernel_distance`) between the accumulated real and generated
        features: ``(mean, sd)`` over subsets."""
        if any(sum(len(a) for a in self._feats[k]) < 2 for k in (True, False)):
            raise ValueError("compute_kid needs at least 2 real and 2 generated samples; call update() first")
        r, g = (np.concatenate(self._feats[k]) for k in (True, False))
        return kernel_distance(r, g, n_subsets, subset_size, seed)


class DigitClassifier(nn.Module):
    """Small CNN; ``features`` (a submodule) maps ``[B, 1, H, W]`` to ``feat_dim`` penultimate features."""

    def __init__(self, feat_dim: int = 64, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(64, feat_dim), nn.ReLU(),
        )  # fmt: skip
        self.head = nn.Linear(feat_dim, num_classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.features(x))


def train_digit_classifier(
    x: Tensor, y: Tensor, epochs: int = 30, batch_size: int = 128, lr: float = 3e-3, seed: int = 0
) -> DigitClassifier:
    """Train :class:`DigitClassifier` on images ``x`` (with light noise augmentation) with a fixed seed."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    clf = DigitClassifier()
    opt = torch.optim.Adam(clf.parameters(), lr=lr)
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=g)
        for lo in range(0, len(x), batch_size):
            i = perm[lo : lo + batch_size]
            xb = x[i] + 0.1 * torch.randn(x[i].shape, generator=g)
            loss = F.cross_entropy(clf(xb), y[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return clf.eval()


def band_r2(x0_hat: Tensor, x0: Tensor, n_bands: int = 4, mean: Tensor | None = None) -> Tensor:
    """Per-band R^2 of a prediction on mean-removed images (issue 19 item 5).

    With ``D`` the orthonormal 2-D DCT of the whole image and ``mu`` the mean image (``mean``, or the batch mean),
    ``R^2_b = 1 - sum ||band_b D(x0_hat - x0)||^2 / sum ||band_b D(x0 - mu)||^2`` over the batch and channels.
    Removing the mean keeps the (large, easy) mean image out of the low band's denominator; a prediction equal to
    ``mu`` scores 0 in every band, a perfect one 1, and an exact low-pass filter of ``x0`` scores 1 in the bands it
    keeps and 0 in those it removes.  Returns ``[n_bands]`` (NaN for a band without data variance).
    """
    from .frequency import band_index, dct2

    if x0_hat.shape != x0.shape or x0.dim() != 4:
        raise ValueError(
            f"x0_hat and x0 must both have shape [B, C, H, W], got {tuple(x0_hat.shape)}, {tuple(x0.shape)}"
        )
    mu = x0.mean(0, keepdim=True) if mean is None else mean
    idx = band_index(x0.shape[-2], x0.shape[-1], n_bands).to(x0.device)
    err = dct2(x0_hat - x0).pow(2).sum((0, 1))
    var = dct2(x0 - mu).pow(2).sum((0, 1))
    out = torch.empty(n_bands, dtype=x0.dtype)
    for b in range(n_bands):
        m = idx == b
        v = var[m].sum()
        out[b] = 1 - err[m].sum() / v if v > 1e-12 else float("nan")
    return out


def censored_level_time(steps: list[float], values: list[float], level: float) -> tuple[float, bool]:
    """First (linearly interpolated) step at which ``values`` reach ``level`` (e.g. a band's R^2 reaching 0.5), and
    whether the time is censored (never reached: the last step is returned with ``True``)."""
    if len(steps) != len(values) or not steps:
        raise ValueError(f"steps and values must be non-empty and of equal length, got {len(steps)}, {len(values)}")
    if list(steps) != sorted(steps):
        raise ValueError(f"steps must be ascending, got {list(steps)}")
    if any(not np.isfinite(v) for v in values):
        raise ValueError(f"values must be finite (an empty band gives R^2 = nan), got {list(values)}")
    if values[0] >= level:
        return float(steps[0]), False
    for i in range(1, len(values)):
        if values[i] >= level:
            frac = (level - values[i - 1]) / max(values[i] - values[i - 1], 1e-12)
            return float(steps[i - 1] + frac * (steps[i] - steps[i - 1])), False
    return float(steps[-1]), True


def linear_mmse_x0(x_t: Tensor, abar: float, mean: Tensor, var: Tensor) -> Tensor:
    """A known low-pass denoiser: the per-DCT-coefficient linear MMSE (Wiener) estimate of ``x0`` from ``x_t``.

    With ``x_t = sqrt(abar) x0 + sqrt(1 - abar) eps`` and ``D`` the orthonormal 2-D DCT (white noise stays white),
    coefficient ``k`` of ``x0 - mu`` with variance ``var_k`` is estimated by
    ``g_k D(x_t - sqrt(abar) mu)_k``, ``g_k = sqrt(abar) var_k / (abar var_k + 1 - abar)``.  Where the spectrum
    decays, large-``t`` estimates keep only the high-variance (low-frequency) coefficients.  ``x_t``: ``[B, C, H,
    W]``; ``mean``: ``[1, C, H, W]``; ``var``: ``[C, H, W]`` or ``[H, W]`` (per-coefficient variance of ``D(x0 -
    mu)``); see :func:`linear_mmse_band_r2` for its per-band ``R^2`` in closed form.
    """
    from .frequency import dct2, idct2

    if x_t.dim() != 4 or not 0.0 < float(abar) <= 1.0:
        raise ValueError(f"x_t must be [B, C, H, W] and abar in (0, 1], got {tuple(x_t.shape)} and {abar}")
    a = float(abar)
    g = a**0.5 * var / (a * var + 1 - a)
    return idct2(g * dct2(x_t - a**0.5 * mean)) + mean


def linear_mmse_band_r2(abar: float, var: Tensor, n_bands: int = 4, data_var: Tensor | None = None) -> Tensor:
    """Closed-form expected per-band ``R^2`` of :func:`linear_mmse_x0` (built with coefficient variances ``var``) on
    images whose mean-removed DCT coefficients have second moments ``data_var`` (default ``var``), the expectation
    over the noise: with gain ``g_k`` the error of coefficient ``k`` is ``(g_k sqrt(abar) - 1)^2 d_k + g_k^2 (1 -
    abar)``, so ``R^2_b = 1 - sum_{k in b} err_k / sum_{k in b} d_k``; for ``d = var`` this is
    ``sum_{k in b} abar var_k^2 / (abar var_k + 1 - abar) / sum_{k in b} var_k``."""
    from .frequency import band_index

    if not 0.0 < float(abar) <= 1.0:
        raise ValueError(f"abar must lie in (0, 1], got {abar}")
    a = float(abar)

    def flat(v: Tensor) -> Tensor:
        return v.reshape(-1, *v.shape[-2:]).sum(0) if v.dim() == 3 else v

    v = flat(var)
    d = v if data_var is None else flat(data_var)
    g = a**0.5 * v / (a * v + 1 - a)
    err = (g * a**0.5 - 1).pow(2) * d + g.pow(2) * (1 - a)
    idx = band_index(v.shape[-2], v.shape[-1], n_bands).to(v.device)
    out = torch.empty(n_bands, dtype=v.dtype)
    for b in range(n_bands):
        m = idx == b
        out[b] = 1 - err[m].sum() / d[m].sum() if d[m].sum() > 1e-12 else float("nan")
    return out


def recovery_level_t(t_grid: list[int], r2: list[float], level: float) -> tuple[float, bool]:
    """Noise level up to which a band is recovered: the largest ``t`` at which its ``R^2`` reaches ``level``, scanning
    ``t_grid`` (ascending) from the top down and interpolating linearly; censored (``True``) when ``R^2 >= level`` at
    the largest ``t`` (returned: that ``t``) or at no ``t`` (returned: the smallest ``t``, an upper bound)."""
    if list(t_grid) != sorted(t_grid):
        raise ValueError(f"t_grid must be ascending, got {t_grid}")
    if len(t_grid) != len(r2) or not len(r2):
        raise ValueError(f"t_grid and r2 must be non-empty and of equal length, got {len(t_grid)}, {len(r2)}")
    t_star, censored = censored_level_time([-t for t in reversed(t_grid)], list(reversed(r2)), level)
    return -t_star, censored or (r2[-1] >= level)
