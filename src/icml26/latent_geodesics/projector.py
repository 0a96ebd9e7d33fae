"""The learned projection ``Pi`` onto the latent manifold, trained by denoising, and its residual ``zeta``.

Given codes ``Z = {z_i}`` near a ``d``-dimensional submanifold ``M`` of ``R^l``, the projector minimises the
denoising loss

    L(Pi) = E_{z in Z, eps ~ N(0, s^2 I)} || Pi(z + eps) - z ||^2,

whose minimiser is (for small ``s``) approximately the nearest-point projection onto ``M`` (shrunk inwards by
``O(s^2 / R)`` on a manifold of curvature radius ``R``).  ``M`` is then described implicitly as the zero set of
the residual

    zeta(z) = z - Pi(z)   in R^l

(``l`` outputs, approximate rank ``l - d``: not a minimal set of constraints).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

__all__ = ["LatentProjector"]

_ACTIVATIONS = {"elu": nn.ELU, "relu": nn.ReLU, "leaky_relu": nn.LeakyReLU, "tanh": nn.Tanh}


def _as_codes(Z, name: str = "Z") -> torch.Tensor:
    if isinstance(Z, np.ndarray):
        Z = torch.from_numpy(np.asarray(Z, dtype=np.float64))
    if not isinstance(Z, torch.Tensor):
        raise TypeError(f"{name} must be a numpy array or torch tensor of shape (n, latent_dim), got {type(Z)}")
    if Z.ndim != 2 or Z.shape[0] < 2:
        raise ValueError(f"{name} must have shape (n, latent_dim) with n >= 2, got {tuple(Z.shape)}")
    if not torch.isfinite(Z).all():
        raise ValueError(f"{name} must be finite")
    return Z


class LatentProjector(nn.Module):
    """MLP ``Pi: R^l -> R^l`` trained to map noisy codes back to clean ones; ``zeta(z) = z - Pi(z)``.

    ``latent_dim``: ``l``; ``hidden``: width of the hidden layers; ``depth``: number of linear layers (>= 2);
    ``activation``: ``"elu"`` (default), ``"relu"``, ``"leaky_relu"`` or ``"tanh"``; ``layer_norm``: a LayerNorm
    after the first hidden layer.  Kaiming-uniform initialisation.  Parameters are float32; :meth:`zeta` and
    :meth:`project` accept any floating dtype and return the caller's dtype.

    Learned attributes (after :meth:`fit`): ``history_`` (list of ``{"step", "train_loss", "val_loss"}``),
    ``best_step_``, ``best_val_loss_``, ``sigma_`` (the noise levels used).
    """

    def __init__(
        self, latent_dim: int, hidden: int = 64, depth: int = 4, activation: str = "elu", layer_norm: bool = False
    ) -> None:
        super().__init__()
        for name, v, lo in (("latent_dim", latent_dim, 1), ("hidden", hidden, 1), ("depth", depth, 2)):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}")
        self.latent_dim, self.hidden, self.depth, self.activation = latent_dim, hidden, depth, activation
        dims = [latent_dim] + [hidden] * (depth - 1) + [latent_dim]
        layers: list[nn.Module] = []
        for i in range(depth):
            lin = nn.Linear(dims[i], dims[i + 1])
            nn.init.kaiming_uniform_(lin.weight, nonlinearity="relu" if activation != "tanh" else "tanh")
            nn.init.zeros_(lin.bias)
            layers.append(lin)
            if i < depth - 1:
                if i == 0 and layer_norm:
                    layers.append(nn.LayerNorm(hidden))
                layers.append(_ACTIVATIONS[activation]())
        self.net = nn.Sequential(*layers)
        self.history_: list[dict] = []

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """``Pi(z)`` for a batch ``z`` of shape ``(n, l)`` (or ``(l,)``), in the caller's dtype."""
        dt = next(self.parameters()).dtype
        return self.net(z.to(dt)).to(z.dtype)

    def project(self, z):
        """``Pi(z)``; numpy in, numpy out (float64), torch in, torch out."""
        if isinstance(z, np.ndarray):
            with torch.no_grad():
                return self(torch.as_tensor(z, dtype=torch.float64)).numpy()
        return self(z)

    def zeta(self, z: torch.Tensor) -> torch.Tensor:
        """The implicit constraint ``zeta(z) = z - Pi(z)`` (``(n, l) -> (n, l)``), differentiable in ``z``."""
        return z - self(z)

    def fit(
        self,
        Z,
        sigma: float | Sequence[float] = 0.05,
        steps: int = 2000,
        batch_size: int = 512,
        lr: float = 1e-3,
        weight_decay: float = 0.0,
        val_fraction: float = 0.1,
        eval_every: int = 50,
        seed: int = 0,
    ) -> LatentProjector:
        """Minimise the denoising loss ``E ||Pi(z + eps) - z||^2``, ``eps ~ N(0, s^2 I)``, with Adam (cosine LR).

        ``sigma``: the noise std ``s`` in the units of ``Z`` (a float), or several levels (a sequence: each
        sample draws its level uniformly from them, the "multi-scale" variant).  A held-out ``val_fraction`` of
        the codes (fixed noise draws) selects the best evaluated state, which is loaded at the end.
        """
        Z = _as_codes(Z).to(torch.float32)
        if Z.shape[1] != self.latent_dim:
            raise ValueError(f"Z must have {self.latent_dim} columns (latent_dim), got {Z.shape[1]}")
        sig = np.atleast_1d(np.asarray(sigma, dtype=float))
        if sig.ndim != 1 or sig.size == 0 or not np.all(np.isfinite(sig)) or np.any(sig <= 0):
            raise ValueError(f"sigma must be a positive float or a non-empty sequence of them, got {sigma!r}")
        for name, v in (("steps", steps), ("batch_size", batch_size), ("eval_every", eval_every)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr!r}")
        if not weight_decay >= 0:
            raise ValueError(f"weight_decay must be >= 0, got {weight_decay!r}")
        if not 0.0 <= val_fraction < 1.0:
            raise ValueError(f"val_fraction must lie in [0, 1), got {val_fraction!r}")
        g = torch.Generator().manual_seed(int(seed))
        perm = torch.randperm(Z.shape[0], generator=g)
        n_val = int(round(val_fraction * Z.shape[0]))
        Zv, Zt = Z[perm[:n_val]], Z[perm[n_val:]]
        sig_t = torch.as_tensor(sig, dtype=torch.float32)

        def noise(n: int, gen: torch.Generator) -> torch.Tensor:
            s = sig_t[torch.randint(len(sig_t), (n, 1), generator=gen)]
            return s * torch.randn(n, self.latent_dim, generator=gen)

        Xv = Zv + noise(len(Zv), torch.Generator().manual_seed(int(seed) + 1)) if n_val else None
        opt = torch.optim.Adam(self.parameters(), lr=lr, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
        self.history_, best, best_state, run = [], np.inf, None, []
        self.train()
        for step in range(1, steps + 1):
            idx = torch.randint(len(Zt), (min(batch_size, len(Zt)),), generator=g)
            z = Zt[idx]
            loss = ((self.net(z + noise(len(z), g)) - z) ** 2).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            run.append(float(loss.detach()))
            if step % eval_every == 0 or step == steps:
                with torch.no_grad():
                    val = float(((self.net(Xv) - Zv) ** 2).sum(1).mean()) if Xv is not None else float(np.mean(run))
                self.history_.append({"step": step, "train_loss": float(np.mean(run)), "val_loss": val})
                run = []
                if val < best:
                    best, self.best_step_ = val, step
                    best_state = {k: v.detach().clone() for k, v in self.state_dict().items()}
        if best_state is not None:
            self.load_state_dict(best_state)
        self.eval()
        self.best_val_loss_, self.sigma_ = float(best), sig.tolist()
        return self
