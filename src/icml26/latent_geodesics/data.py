"""Known manifolds with closed-form geometry, and the rotated-digit autoencoder of the image demo."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

__all__ = [
    "sample_sphere",
    "random_embedding",
    "sphere_pair",
    "sphere_exp",
    "arc_points",
    "dist_to_arc",
    "dist_to_sphere",
    "dist_to_points",
    "rotated_digit",
    "torus_uv",
    "TinyAutoencoder",
    "train_autoencoder",
    "torus_point",
    "torus_chart_geodesic",
]


def sample_sphere(n: int, rng: np.random.Generator, dim: int = 3) -> np.ndarray:
    """``n`` uniform points on the unit sphere ``S^{dim-1}``."""
    x = rng.normal(size=(n, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def random_embedding(ambient: int, rng: np.random.Generator, dim: int = 3) -> np.ndarray:
    """A random ``(ambient, dim)`` matrix with orthonormal columns (an isometric linear embedding)."""
    Q, _ = np.linalg.qr(rng.normal(size=(ambient, dim)))
    return Q


def sphere_pair(theta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random point ``a`` of ``S^2``, a random unit tangent ``u`` at ``a`` and ``b = cos(theta) a + sin(theta) u``."""
    a = sample_sphere(1, rng)[0]
    u = rng.normal(size=3)
    u -= (u @ a) * a
    u /= np.linalg.norm(u)
    return a, np.cos(theta) * a + np.sin(theta) * u, u


def sphere_exp(p: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``exp_p(v) = cos|v| p + sin|v| v/|v|`` on the unit sphere (closed form; ``v`` tangent at ``p``)."""
    n = np.linalg.norm(v)
    return p.copy() if n == 0 else np.cos(n) * p + np.sin(n) * v / n


def arc_points(a: np.ndarray, u: np.ndarray, theta: float, n: int = 4001) -> np.ndarray:
    """``n`` points of the great-circle arc ``cos(t) a + sin(t) u``, ``t in [0, theta]``."""
    t = np.linspace(0.0, theta, n)[:, None]
    return np.cos(t) * a + np.sin(t) * u


def dist_to_arc(P: np.ndarray, a: np.ndarray, u: np.ndarray, theta: float) -> np.ndarray:
    """Exact distance of each row of ``P`` to the arc ``cos(t) a + sin(t) u``, ``t in [0, theta]`` (``a``, ``u``
    orthonormal, in any dimension): the nearest point has angle ``clip(atan2(P.u, P.a), 0, theta)``."""
    phi = np.clip(np.arctan2(P @ u, P @ a), 0.0, theta)[:, None]
    return np.linalg.norm(P - (np.cos(phi) * a + np.sin(phi) * u), axis=1)


def dist_to_points(P: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance of each row of ``P`` to the nearest row of ``ref``."""
    d2 = (P**2).sum(1)[:, None] - 2 * P @ ref.T + (ref**2).sum(1)[None, :]
    return np.sqrt(np.maximum(d2.min(1), 0.0))


def dist_to_sphere(P: np.ndarray, Q: np.ndarray | None = None) -> np.ndarray:
    """Distance of each row of ``P`` to the unit sphere ``S^2`` (embedded as ``Q S^2`` when ``Q`` is given)."""
    if Q is None:
        return np.abs(np.linalg.norm(P, axis=1) - 1.0)
    c = P @ Q
    off = np.linalg.norm(P - c @ Q.T, axis=1)
    return np.sqrt(off**2 + (np.linalg.norm(c, axis=1) - 1.0) ** 2)


# -- torus chart reference ------------------------------------------------------------------------------------
def torus_point(u, v, R: float = 0.8, r: float = 0.2) -> np.ndarray:
    u, v = np.asarray(u, float), np.asarray(v, float)
    return np.stack([(R + r * np.cos(v)) * np.cos(u), (R + r * np.cos(v)) * np.sin(u), r * np.sin(v)], -1)


def torus_uv(P: np.ndarray, R: float = 0.8) -> np.ndarray:
    """Chart coordinates ``(u, v)`` of points of the torus (unwrapped along the path)."""
    u = np.unwrap(np.arctan2(P[:, 1], P[:, 0]))
    v = np.unwrap(np.arctan2(P[:, 2], np.hypot(P[:, 0], P[:, 1]) - R))
    return np.column_stack([u, v])


def torus_chart_geodesic(
    uv_a, uv_b, n_steps: int, R: float = 0.8, r: float = 0.2, init: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Reference discrete geodesic in the chart ``(u, v)``: BFGS on
    ``E^K = K sum |T(u_k, v_k) - T(u_{k-1}, v_{k-1})|^2``
    over the interior chart coordinates, initialised on the straight chart line (or on ``init``, ``(K+1, 2)`` chart
    coordinates).  Returns ``(path, energy)``."""
    from scipy.optimize import minimize

    K = n_steps
    s = np.linspace(0, 1, K + 1)[:, None]
    uv = (1 - s) * np.asarray(uv_a, float) + s * np.asarray(uv_b, float)
    if init is not None:
        uv = np.asarray(init, float).copy()
    A, B = torch.as_tensor(uv[:1]), torch.as_tensor(uv[-1:])

    def T(w: torch.Tensor) -> torch.Tensor:
        u, v = w[:, 0], w[:, 1]
        return torch.stack(
            [(R + r * torch.cos(v)) * torch.cos(u), (R + r * torch.cos(v)) * torch.sin(u), r * torch.sin(v)], 1
        )

    def fun(x):
        w = torch.as_tensor(x.reshape(K - 1, 2)).requires_grad_(True)
        P = T(torch.cat([A, w, B]))
        e = K * ((P[1:] - P[:-1]) ** 2).sum()
        (g,) = torch.autograd.grad(e, w)
        return float(e.detach()), g.numpy().ravel()

    res = minimize(fun, uv[1:-1].ravel(), jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 20000})
    uv[1:-1] = res.x.reshape(K - 1, 2)
    return torus_point(uv[:, 0], uv[:, 1], R, r), float(res.fun)


# -- rotated digits -------------------------------------------------------------------------------------------
def rotated_digit(index: int, n_angles: int = 360) -> tuple[np.ndarray, np.ndarray]:
    """sklearn digit ``index`` (8x8, scaled to [0, 1]) rotated by ``0, 360/n, ...`` degrees with
    ``scipy.ndimage.rotate`` (bilinear, same frame): ``(images (n, 64), angles in degrees)``."""
    from scipy.ndimage import rotate
    from sklearn.datasets import load_digits

    img = load_digits().images[index] / 16.0
    angles = np.arange(n_angles) * (360.0 / n_angles)
    X = np.stack([rotate(img, a, reshape=False, order=1, mode="constant").ravel() for a in angles])
    return np.clip(X, 0.0, 1.0), angles


class TinyAutoencoder(nn.Module):
    """``64 -> hidden -> latent -> hidden -> 64`` with ELU (smooth, so the pullback metric has second derivatives)."""

    def __init__(self, n_in: int = 64, hidden: int = 32, latent: int = 3) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, hidden), nn.ELU(), nn.Linear(hidden, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ELU(), nn.Linear(hidden, n_in))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encoder(x))


def train_autoencoder(
    X: np.ndarray, steps: int = 3000, lr: float = 3e-3, hidden: int = 32, latent: int = 3, seed: int = 0
) -> tuple[TinyAutoencoder, list[float]]:
    """Full-batch Adam on the reconstruction loss; returns the model and the loss every 100 steps."""
    torch.manual_seed(seed)
    ae = TinyAutoencoder(X.shape[1], hidden, latent)
    Xt = torch.as_tensor(X, dtype=torch.float32)
    opt = torch.optim.Adam(ae.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    losses = []
    for step in range(steps):
        loss = ((ae(Xt) - Xt) ** 2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0 or step == steps - 1:
            losses.append(float(loss.detach()))
    return ae.eval(), losses
