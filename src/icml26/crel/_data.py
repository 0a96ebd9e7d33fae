"""Data, generators, encoders and metrics of the reproduction (S1 synthetic, S2 digits).

S1: ``x ~ U[-2, 2]``, ``y = f(x) + A(x) eps`` with ``A(x) = h(x) Q(x) diag(s)`` (anisotropic, rotating
with ``x``, heteroscedastic), and with probability ``p_fail`` a failure shifted by ``delta`` along the
thinnest axis ``Q(x) e_d``.  S2: sklearn's bundled digits; the "generators" are class-conditional
Gaussians in a PCA-16 latent space that we fit ourselves (no downloads).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

__all__ = [
    "SyntheticProblem",
    "MixtureSampler",
    "FittedGaussianGenerator",
    "fit_gaussian_generator",
    "linear_metric",
    "bump_metric",
    "DigitsTask",
    "make_digits_task",
]


# ---------------------------------------------------------------------------------------------- S1
@dataclass(frozen=True)
class SyntheticProblem:
    """The S1 data-generating process in ``R^d``."""

    d: int
    p_fail: float = 0.05
    delta: float = 2.5
    s_min: float = 0.15

    @property
    def scales(self) -> np.ndarray:
        return np.geomspace(1.0, self.s_min, self.d)

    def mean(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float).reshape(-1, 1)
        j = np.arange(self.d)[None, :]
        return 1.5 * np.sin(0.8 * (j + 1) * x + j)

    def factor(self, x: np.ndarray) -> np.ndarray:
        """``A(x)`` for each ``x``, shape ``(n, d, d)``; rotations act on coordinate pairs (0,1), (2,3)."""
        x = np.asarray(x, dtype=float).ravel()
        n, d = x.size, self.d
        Q = np.tile(np.eye(d), (n, 1, 1))
        for p in range(d // 2):
            th = np.pi / 4 * x + p
            c, s = np.cos(th), np.sin(th)
            i, k = 2 * p, 2 * p + 1
            Q[:, i, i], Q[:, i, k], Q[:, k, i], Q[:, k, k] = c, -s, s, c
        h = 0.6 + 0.2 * np.abs(x)
        return h[:, None, None] * Q * self.scales[None, None, :]

    def sample(
        self, x: np.ndarray, rng: np.random.Generator, p_fail: float | None = None, scale: float = 1.0
    ) -> np.ndarray:
        """One ``y`` per entry of ``x`` (shape ``(n, d)``); ``scale`` multiplies the noise ``A(x) eps`` (1: the true
        law; > 1: a blurrier sampler), the failure shift is unchanged."""
        x = np.asarray(x, dtype=float).ravel()
        p = self.p_fail if p_fail is None else p_fail
        A = self.factor(x)
        y = self.mean(x) + scale * np.einsum("nij,nj->ni", A, rng.standard_normal((x.size, self.d)))
        fail = rng.random(x.size) < p
        thin = A[:, :, -1] / np.linalg.norm(A[:, :, -1], axis=1, keepdims=True)
        return y + self.delta * fail[:, None] * thin

    def draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        x = rng.uniform(-2.0, 2.0, size=n)
        return x, self.sample(x, rng)


class MixtureSampler:
    """A generator that samples the S1 process itself with its own failure rate (oracle or "risky") and noise
    scale (1: the true law; > 1: a "safe" sampler that is blurrier everywhere instead of failing more often)."""

    def __init__(self, problem: SyntheticProblem, p_fail: float, scale: float = 1.0) -> None:
        if not 0.0 <= p_fail <= 1.0:
            raise ValueError(f"p_fail must be in [0, 1], got {p_fail!r}")
        if not scale > 0:
            raise ValueError(f"scale must be > 0, got {scale!r}")
        self.problem = problem
        self.p_fail = p_fail
        self.scale = scale

    def sample(self, x, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.problem.sample(np.full(n, float(x)), rng, p_fail=self.p_fail, scale=self.scale)


class _GaussMLP(nn.Module):
    def __init__(self, d: int, width: int = 64) -> None:
        super().__init__()
        self.d = d
        self.net = nn.Sequential(
            nn.Linear(1, width),
            nn.Tanh(),
            nn.Linear(width, width),
            nn.Tanh(),
            nn.Linear(width, d + d * (d + 1) // 2),
        )
        self.tril = torch.tril_indices(d, d)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.net(x[:, None])
        mu, raw = out[:, : self.d], out[:, self.d :]
        L = torch.zeros(len(x), self.d, self.d, dtype=out.dtype)
        L[:, self.tril[0], self.tril[1]] = raw
        diag = torch.nn.functional.softplus(torch.diagonal(L, dim1=1, dim2=2)) + 1e-3
        L = torch.tril(L, -1) + torch.diag_embed(diag)
        return mu, L


class FittedGaussianGenerator:
    """``y | x ~ N(mu(x), L(x) L(x)^T)`` with ``mu``, ``L`` from a small MLP trained by maximum likelihood."""

    def __init__(self, model: _GaussMLP) -> None:
        self.model = model

    def sample(self, x, n: int, rng: np.random.Generator) -> np.ndarray:
        with torch.no_grad():
            mu, L = self.model(torch.tensor([float(x)], dtype=torch.float64))
        eps = rng.standard_normal((n, self.model.d))
        return mu[0].numpy() + eps @ L[0].numpy().T


def _adam(params: list[torch.Tensor], loss_fn, steps: int, lr: float, weight_decay: float = 0.0) -> None:
    """Plain full-batch Adam (beta = 0.9, 0.999), written out: ``torch.optim`` pulls in ``torch._dynamo`` on
    first use, which costs seconds of import time per process on a small CPU."""
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        loss = loss_fn()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, m_i, v_i in zip(params, grads, m, v):
                g = g + weight_decay * p
                m_i.mul_(0.9).add_(g, alpha=0.1)
                v_i.mul_(0.999).addcmul_(g, g, value=0.001)
                p.sub_(lr * (m_i / (1 - 0.9**t)) / ((v_i / (1 - 0.999**t)).sqrt() + 1e-8))


def fit_gaussian_generator(x: np.ndarray, y: np.ndarray, steps: int, seed: int) -> FittedGaussianGenerator:
    """Train the conditional-Gaussian MLP on ``(x, y)`` with Adam (full batch, ``steps`` steps)."""
    torch.manual_seed(seed)
    model = _GaussMLP(y.shape[1]).double()
    xt, yt = torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y, dtype=torch.float64)

    def nll() -> torch.Tensor:
        mu, L = model(xt)
        return -torch.distributions.MultivariateNormal(mu, scale_tril=L).log_prob(yt).mean()

    _adam(list(model.parameters()), nll, steps, lr=1e-2)
    model.eval()
    return FittedGaussianGenerator(model)


def linear_metric(w: np.ndarray):
    """``m(x, z) = w^T z`` (the same ``w`` for every condition)."""
    wt = torch.as_tensor(w, dtype=torch.float64)

    def m(x, z: torch.Tensor) -> torch.Tensor:
        return z @ wt

    return m


def bump_metric(problem: SyntheticProblem, offset: float = 0.7, height: float = 0.5, width: float = 0.3):
    """Non-convex S1 quality: closeness to the true mean plus a bump at ``f(x) + o``, ``o = offset e_1``:

    ``m(x, z) = -log(1 + ||z - f(x)||^2) + height * exp(-||z - f(x) - o||^2 / (2 width^2))``.
    """

    def m(x, z: torch.Tensor) -> torch.Tensor:
        t = torch.as_tensor(problem.mean(np.array([float(x)]))[0], dtype=torch.float64)
        o = torch.zeros_like(t)
        o[0] = offset
        r2 = ((z - t) ** 2).sum(-1)
        return -torch.log1p(r2) + height * torch.exp(-((z - t - o) ** 2).sum(-1) / (2 * width**2))

    return m


# ---------------------------------------------------------------------------------------------- S2
class _ClassGaussianGenerator:
    """Class-conditional Gaussian in PCA space, decoded to 8x8 images by the PCA's inverse transform.

    With probability ``mix`` a sample comes from the Gaussian of ``confuse[c]`` instead (the risky model);
    ``scale`` multiplies every Cholesky factor (> 1: a blurrier "safe" model).
    """

    def __init__(self, means, chols, pca, mix: float = 0.0, confuse=None, scale: float = 1.0) -> None:
        self.means, self.chols, self.mix = means, scale * np.asarray(chols), mix
        self.confuse = confuse
        self._components, self._offset = pca.components_, pca.mean_

    def sample(self, c, n: int, rng: np.random.Generator) -> np.ndarray:
        c = int(c)
        other = rng.random(n) < self.mix
        cls = np.where(other, self.confuse[c] if self.confuse is not None else c, c)
        eps = rng.standard_normal((n, self.means.shape[1]))
        z = self.means[cls] + np.einsum("nij,nj->ni", self.chols[cls], eps)
        return z @ self._components + self._offset  # PCA.inverse_transform (whiten=False), without checks


@dataclass
class DigitsTask:
    pca: object
    X_cal: np.ndarray  # class labels (the conditions)
    Y_cal: np.ndarray  # real images (the outputs), flattened 8x8 in [0, 1]
    X_test: np.ndarray
    Y_test: np.ndarray
    good: _ClassGaussianGenerator  # the safe model: the fitted Gaussians, Cholesky factors x good_scale
    risky: _ClassGaussianGenerator
    metric: object
    classifier_accuracy: float
    fitted: _ClassGaussianGenerator | None = None  # the fitted Gaussians as they are (the volumes)

    def encoder(self, images) -> np.ndarray:
        """PCA.transform (whiten=False) written out: ``(x - mean) @ components^T``."""
        return (np.asarray(images, dtype=float) - self.pca.mean_) @ self.pca.components_.T


def make_digits_task(
    seed: int, n_components: int = 16, mix: float = 0.15, clf_steps: int = 300, good_scale: float = 1.0
) -> DigitsTask:
    """Split digits 50/30/20 (train/cal/test, stratified), fit PCA, a logistic-regression metric and the
    good / risky class-conditional generators on the training half; the good one's Cholesky factors are
    multiplied by ``good_scale`` (> 1: blurrier, to match the risky one's average metric)."""
    if not good_scale > 0:
        raise ValueError(f"good_scale must be > 0, got {good_scale!r}")
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.5, stratify=y, random_state=seed)
    X_cal, X_te, y_cal, y_te = train_test_split(X_rest, y_rest, train_size=0.6, stratify=y_rest, random_state=seed)
    pca = PCA(n_components=n_components, random_state=seed).fit(X_tr)
    Z_tr = pca.transform(X_tr)
    d = n_components
    means = np.stack([Z_tr[y_tr == c].mean(0) for c in range(10)])
    chols = np.stack([np.linalg.cholesky(np.cov(Z_tr[y_tr == c], rowvar=False) + 1e-4 * np.eye(d)) for c in range(10)])
    dist = np.linalg.norm(means[:, None] - means[None], axis=2) + np.diag(np.full(10, np.inf))
    confuse = dist.argmin(1)

    torch.manual_seed(seed)
    lin = nn.Linear(d, 10).double()
    zt, yt = torch.as_tensor(Z_tr), torch.as_tensor(y_tr)
    _adam(list(lin.parameters()), lambda: nn.functional.cross_entropy(lin(zt), yt), clf_steps, 0.05, 1e-3)
    lin.requires_grad_(False)
    with torch.no_grad():
        acc = float((lin(torch.as_tensor(pca.transform(X_te))).argmax(1).numpy() == y_te).mean())

    def metric(c, z: torch.Tensor) -> torch.Tensor:
        """``log p_clf(c | z)`` of the logistic-regression classifier on PCA features (higher is better)."""
        return torch.log_softmax(lin(z), dim=-1)[:, int(c)]

    good = _ClassGaussianGenerator(means, chols, pca, scale=good_scale)
    risky = _ClassGaussianGenerator(means, chols, pca, mix=mix, confuse=confuse)
    fitted = _ClassGaussianGenerator(means, chols, pca)
    return DigitsTask(pca, y_cal, X_cal, y_te, X_te, good, risky, metric, acc, fitted)
