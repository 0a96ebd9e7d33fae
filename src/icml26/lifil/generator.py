"""Server-side feature generators: learn the class-conditional distribution of the privatized uploads and replay
features of old classes.  ``FeatureGenerator`` (conditional MLP trained by per-class MMD) and its ablation /
fallback ``GaussianFeatureGenerator`` (a mean and diagonal covariance per class)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

__all__ = ["FeatureGenerator", "GaussianFeatureGenerator", "mmd2", "class_mean_error"]


def _as_xy(H, y) -> tuple[torch.Tensor, torch.Tensor]:
    H = torch.as_tensor(np.asarray(H, dtype=np.float32))
    y = torch.as_tensor(np.asarray(y, dtype=np.int64))
    if H.ndim != 2 or y.ndim != 1 or len(H) != len(y):
        raise ValueError(f"H must be (n, d) and y (n,), got {tuple(H.shape)} and {tuple(y.shape)}")
    return H, y


def mmd2(X: torch.Tensor, Y: torch.Tensor, bandwidths: Sequence[float]) -> torch.Tensor:
    """Biased squared MMD with a sum of RBF kernels ``k(a, b) = sum_s exp(-||a - b||^2 / (2 s^2))``:
    ``MMD^2 = mean k(X, X) + mean k(Y, Y) - 2 mean k(X, Y)``."""

    def k(A, B):
        d2 = torch.cdist(A, B).pow(2)
        return sum(torch.exp(-d2 / (2 * s * s)) for s in bandwidths)

    return k(X, X).mean() + k(Y, Y).mean() - 2 * k(X, Y).mean()


def class_mean_error(gen, H, y, rng: np.random.Generator | None = None, n: int = 200) -> dict[int, float]:
    """``||mean(G(., c)) - mean(H[y == c])||`` per class ``c`` of ``y`` (a fit diagnostic)."""
    H, y = _as_xy(H, y)
    rng = np.random.default_rng(0) if rng is None else rng
    out = {}
    for c in torch.unique(y).tolist():
        g = gen.sample(np.full(n, c), rng)
        out[int(c)] = float((g.mean(0) - H[y == c].mean(0)).norm())
    return out


class FeatureGenerator(nn.Module):
    """Conditional generator ``G_psi(z, y)``: ``z ~ N(0, I_z_dim)``, one-hot ``y`` -> MLP(z_dim + C -> hidden ->
    feature_dim).

    :meth:`fit` minimises, with Adam (``lr``, ``steps``), ``sum_c [MMD^2(G(z, c), H_c) + lambda_mom (||mean diff||^2
    + ||cov diff||_F^2)]`` over the classes present, with RBF bandwidths ``{0.5, 1, 2} x`` the median pairwise
    distance of ``H_c``.  With ``previous`` (the generator of the last task) and ``old_classes``, the real data of an
    old class are ``n_old`` samples of ``previous`` (self-replay), so the server keeps no uploaded features after a
    fit.  Learned: ``loss_history_`` (loss per step), ``classes_`` (classes it can sample)."""

    def __init__(
        self,
        n_classes: int,
        feature_dim: int,
        z_dim: int = 16,
        hidden: int = 64,
        steps: int = 300,
        lr: float = 1e-3,
        lambda_mom: float = 1.0,
        batch_per_class: int = 32,
        seed: int = 0,
    ) -> None:
        super().__init__()
        for name, v in (
            ("n_classes", n_classes),
            ("feature_dim", feature_dim),
            ("z_dim", z_dim),
            ("hidden", hidden),
            ("steps", steps),
            ("batch_per_class", batch_per_class),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if batch_per_class < 2:
            raise ValueError(f"batch_per_class must be >= 2 (a covariance per class), got {batch_per_class!r}")
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr!r}")
        self.n_classes, self.feature_dim, self.z_dim = n_classes, feature_dim, z_dim
        self.steps, self.lr, self.lambda_mom, self.batch_per_class, self.seed = (
            steps,
            lr,
            lambda_mom,
            batch_per_class,
            seed,
        )
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.net = nn.Sequential(nn.Linear(z_dim + n_classes, hidden), nn.ReLU(), nn.Linear(hidden, feature_dim))
        self.classes_: list[int] = []
        self.loss_history_: list[float] = []

    def forward(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([z, nn.functional.one_hot(y, self.n_classes).to(z.dtype)], dim=1))

    def sample(self, y, rng: np.random.Generator | None = None) -> torch.Tensor:
        """Features ``G(z, y_i)`` for each label in ``y`` (``z`` drawn from ``rng``), no gradient."""
        y = torch.as_tensor(np.asarray(y, dtype=np.int64))
        if y.numel() and (int(y.min()) < 0 or int(y.max()) >= self.n_classes):
            raise ValueError(f"y must lie in [0, {self.n_classes - 1}]")
        rng = np.random.default_rng() if rng is None else rng
        z = torch.as_tensor(rng.standard_normal((len(y), self.z_dim)), dtype=torch.float32)
        with torch.no_grad():
            return self(z, y)

    def fit(
        self,
        H,
        y,
        previous=None,
        old_classes: Sequence[int] = (),
        n_old: int = 100,
        rng: np.random.Generator | None = None,
        noise_std: float = 0.0,
    ) -> FeatureGenerator:
        """Fit on ``(H, y)`` (+ self-replay of ``old_classes`` from ``previous``).  ``noise_std``: the known std of
        isotropic noise in ``H`` (the privatization's ``sigma_f R``); the loss then compares ``G(z, c) + noise_std
        eps`` with ``H_c`` (and ``Cov(G) + noise_std^2 I`` with ``Cov(H_c)``), so ``G`` learns the noise-free
        distribution (a deconvolution).  Self-replayed old classes are noise-free and compared without noise."""
        H, y = _as_xy(H, y)
        if not noise_std >= 0:
            raise ValueError(f"noise_std must be >= 0, got {noise_std!r}")
        rng = np.random.default_rng(self.seed) if rng is None else rng
        new_classes = set(torch.unique(y).tolist())
        old = [int(c) for c in old_classes if int(c) not in set(y.tolist())]
        if old:
            if previous is None:
                raise ValueError("old_classes need the previous generator (previous=...) to self-replay them")
            yo = np.repeat(old, n_old)
            H = torch.cat([H, previous.sample(yo, rng)])
            y = torch.cat([y, torch.as_tensor(yo)])
        classes = torch.unique(y).tolist()
        real = {c: H[y == c] for c in classes}
        med = []
        for c in classes:
            d = torch.pdist(real[c]) if len(real[c]) > 1 else torch.ones(1)
            med.append(max(float(d.median()) if d.numel() else 1.0, 1e-3))
        noisy = torch.tensor([noise_std if c in new_classes else 0.0 for c in classes])
        mom = [
            (real[c].mean(0), _cov(real[c]) - float(noisy[i]) ** 2 * torch.eye(H.shape[1]))
            for i, c in enumerate(classes)
        ]
        M = torch.stack([m for m, _ in mom])
        Cv = torch.stack([C for _, C in mom])
        K, B, d = len(classes), self.batch_per_class, H.shape[1]
        bw = torch.tensor(med)[:, None, None]
        labels = torch.as_tensor(classes).repeat_interleave(B)
        opt = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        self.loss_history_ = []
        for _ in range(self.steps):
            # B real rows per class (without replacement when the class has that many) and B generated rows
            R = torch.stack(
                [real[c][torch.as_tensor(rng.choice(len(real[c]), B, replace=len(real[c]) < B))] for c in classes]
            )
            z = torch.as_tensor(rng.standard_normal((K * B, self.z_dim)), dtype=torch.float32)
            G = self(z, labels).reshape(K, B, d)
            eps = torch.as_tensor(rng.standard_normal((K, B, d)), dtype=torch.float32)
            loss = _batched_mmd2(G + noisy[:, None, None] * eps, R, bw).sum()
            Gm = G.mean(1)
            Gc = G - Gm[:, None]
            Gcov = Gc.transpose(1, 2) @ Gc / (B - 1)
            loss = loss + self.lambda_mom * ((Gm - M).pow(2).sum() + (Gcov - Cv).pow(2).sum())
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.loss_history_.append(float(loss.detach()) / K)
        self.classes_ = sorted(set(self.classes_) | set(classes))
        return self


def _batched_mmd2(X: torch.Tensor, Y: torch.Tensor, bw: torch.Tensor) -> torch.Tensor:
    """:func:`mmd2` for ``K`` classes at once: ``X``, ``Y`` of shape ``(K, n, d)``, bandwidth scale ``bw`` of shape
    ``(K, 1, 1)`` (kernels at ``{0.5, 1, 2} x bw``); returns ``(K,)``."""

    def k(A, B):
        d2 = torch.cdist(A, B).pow(2)
        return sum(torch.exp(-d2 / (2 * (s * bw) ** 2)) for s in (0.5, 1.0, 2.0)).mean((1, 2))

    return k(X, X) + k(Y, Y) - 2 * k(X, Y)


def _cov(X: torch.Tensor) -> torch.Tensor:
    Xc = X - X.mean(0)
    return Xc.T @ Xc / max(len(X) - 1, 1)


class GaussianFeatureGenerator:
    """Per-class Gaussian ``N(mu_c, diag(max(s_c^2 - noise_var, var_floor)))`` fitted by moments (the ablation /
    fallback of :class:`FeatureGenerator`).  ``noise_var``: a known per-coordinate noise variance to remove (the
    privatization's ``(sigma_f R)^2``; 0 keeps the noisy spread).  Old classes keep their statistics from
    ``previous`` (copied if it is Gaussian, else estimated from ``n_old`` of its samples)."""

    def __init__(self, n_classes: int, feature_dim: int, noise_var: float = 0.0, var_floor: float = 1e-4) -> None:
        if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 1:
            raise ValueError(f"n_classes must be an integer >= 1, got {n_classes!r}")
        if isinstance(feature_dim, bool) or not isinstance(feature_dim, int) or feature_dim < 1:
            raise ValueError(f"feature_dim must be an integer >= 1, got {feature_dim!r}")
        if not noise_var >= 0 or not var_floor > 0:
            raise ValueError(f"noise_var must be >= 0 and var_floor > 0, got {noise_var!r}, {var_floor!r}")
        self.n_classes, self.feature_dim, self.noise_var, self.var_floor = n_classes, feature_dim, noise_var, var_floor
        self.means_: dict[int, torch.Tensor] = {}
        self.vars_: dict[int, torch.Tensor] = {}
        self.loss_history_: list[float] = []

    @property
    def classes_(self) -> list[int]:
        return sorted(self.means_)

    def fit(
        self,
        H,
        y,
        previous=None,
        old_classes: Sequence[int] = (),
        n_old: int = 100,
        rng: np.random.Generator | None = None,
    ) -> GaussianFeatureGenerator:
        H, y = _as_xy(H, y)
        rng = np.random.default_rng(0) if rng is None else rng
        for c in old_classes:
            c = int(c)
            if c in set(y.tolist()):
                continue
            if previous is None:
                raise ValueError("old_classes need the previous generator (previous=...) to keep them")
            if isinstance(previous, GaussianFeatureGenerator) and c in previous.means_:
                self.means_[c], self.vars_[c] = previous.means_[c].clone(), previous.vars_[c].clone()
            else:
                S = previous.sample(np.full(n_old, c), rng)
                self.means_[c], self.vars_[c] = S.mean(0), S.var(0).clamp_min(self.var_floor)
        for c in torch.unique(y).tolist():
            Hc = H[y == c]
            self.means_[c] = Hc.mean(0)
            v = Hc.var(0) if len(Hc) > 1 else torch.zeros(self.feature_dim)
            self.vars_[c] = (v - self.noise_var).clamp_min(self.var_floor)
        return self

    def sample(self, y, rng: np.random.Generator | None = None) -> torch.Tensor:
        y = np.asarray(y, dtype=np.int64)
        rng = np.random.default_rng() if rng is None else rng
        missing = sorted(set(y.tolist()) - set(self.means_))
        if missing:
            raise ValueError(f"y holds classes {missing} this generator was not fitted on")
        eps = torch.as_tensor(rng.standard_normal((len(y), self.feature_dim)), dtype=torch.float32)
        if len(y) == 0:
            return eps
        mu = torch.stack([self.means_[int(c)] for c in y])
        sd = torch.stack([self.vars_[int(c)].sqrt() for c in y])
        return mu + sd * eps
