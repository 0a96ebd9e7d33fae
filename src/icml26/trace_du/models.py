"""Models with flat parameter vectors, evaluated for all nodes at once (parameters stacked as ``(n, p)``).

:class:`SoftmaxRegression` is L2-regularised multinomial logistic regression: loss per sample
``l(w; x, y) = -log softmax([x; 1] W)_y + (lambda / 2) ||W||_F^2``, ``lambda``-strongly convex and
``beta``-smooth with ``beta <= max ||[x; 1]||^2 / 2 + lambda`` (the Hessian block of the cross-entropy is
``(diag(p) - p p^T) kron [x;1][x;1]^T`` and ``||diag(p) - p p^T|| <= 1/2``).  :class:`MLP` is a one-hidden-layer
tanh network (non-convex; its smoothness can only be declared or estimated).
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["SoftmaxRegression", "MLP"]


class _Model:
    n_params: int
    l2: float
    convex: bool

    def init(self, seed: int) -> torch.Tensor:  # pragma: no cover - interface
        raise NotImplementedError

    def logits(self, w: torch.Tensor, X: torch.Tensor) -> torch.Tensor:  # pragma: no cover - interface
        """``w`` ``(n, p)``, ``X`` ``(n, b, d)`` (or ``(b, d)``, shared) -> ``(n, b, C)``."""
        raise NotImplementedError

    def losses(self, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Per-sample cross-entropy (without the L2 term) ``(n, b)``."""
        z = self.logits(w, X)
        yy = y.expand(z.shape[0], -1) if y.dim() == 1 else y
        return -torch.log_softmax(z, -1).gather(-1, yy.unsqueeze(-1)).squeeze(-1)

    def grad(self, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Per-node gradient of ``mean_b l + (lambda/2)||w||^2`` (nodes are independent, so the gradient of the sum
        over nodes is the stack of per-node gradients)."""
        w = w.detach().requires_grad_(True)
        loss = self.losses(w, X, y).mean(1).sum() + 0.5 * self.l2 * (w * w).sum()
        (g,) = torch.autograd.grad(loss, w)
        return g

    def predict(self, w: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """Predicted classes ``(n, b)``."""
        with torch.no_grad():
            return self.logits(w, X).argmax(-1)


class SoftmaxRegression(_Model):
    """Multinomial logistic regression with bias, parameters ``W`` ``(d + 1, C)`` flattened; L2 weight ``l2``.

    ``smoothness(max_sq_norm)`` is the bound ``beta = max ||[x; 1]||^2 / 2 + l2``; ``strong_convexity = l2``."""

    convex = True

    def __init__(self, n_features: int, n_classes: int, l2: float = 1e-3, init_scale: float = 0.0) -> None:
        if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
            raise ValueError(f"n_features must be an integer >= 1, got {n_features!r}")
        if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 2:
            raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
        if not l2 >= 0:
            raise ValueError(f"l2 must be >= 0, got {l2!r}")
        if not init_scale >= 0:
            raise ValueError(f"init_scale must be >= 0, got {init_scale!r}")
        self.d, self.C, self.l2, self.init_scale = n_features, n_classes, float(l2), float(init_scale)
        self.n_params = (n_features + 1) * n_classes

    def init(self, seed: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(int(seed))
        return self.init_scale * torch.randn(self.n_params, generator=g, dtype=torch.float64)

    def _aug(self, X: torch.Tensor) -> torch.Tensor:
        return torch.cat([X, torch.ones(*X.shape[:-1], 1, dtype=X.dtype)], -1)

    def logits(self, w: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        Wm = w.reshape(w.shape[0], self.d + 1, self.C)
        Xa = self._aug(X)
        return Xa @ Wm if Xa.dim() == 3 else torch.einsum("bd,ndc->nbc", Xa, Wm)

    def grad(self, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Closed form ``[x;1]^T (softmax - onehot) / b + l2 W`` per node (``X`` ``(n, b, d)``, ``y`` ``(n, b)``)."""
        Xa = self._aug(X)
        Wm = w.reshape(w.shape[0], self.d + 1, self.C)
        P = torch.softmax(Xa @ Wm, -1)
        P.scatter_add_(-1, y.unsqueeze(-1), -torch.ones_like(y, dtype=P.dtype).unsqueeze(-1))
        G = Xa.transpose(1, 2) @ P / X.shape[1] + self.l2 * Wm
        return G.reshape(w.shape[0], -1)

    def smoothness(self, max_sq_norm: float) -> float:
        """``beta = max ||[x;1]||^2 / 2 + l2`` (``max_sq_norm`` is ``max ||x||^2`` over the data)."""
        return (float(max_sq_norm) + 1.0) / 2.0 + self.l2

    @property
    def strong_convexity(self) -> float:
        return self.l2


class MLP(_Model):
    """``x -> tanh(x A + a) B + b`` with ``hidden`` units; L2 weight ``l2``; non-convex (a TraceDU certificate for it
    is flagged heuristic)."""

    convex = False

    def __init__(self, n_features: int, n_classes: int, hidden: int = 32, l2: float = 1e-3) -> None:
        for name, v, low in (("n_features", n_features, 1), ("n_classes", n_classes, 2), ("hidden", hidden, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        if not l2 >= 0:
            raise ValueError(f"l2 must be >= 0, got {l2!r}")
        self.d, self.C, self.h, self.l2 = n_features, n_classes, hidden, float(l2)
        self.n_params = n_features * hidden + hidden + hidden * n_classes + n_classes

    def init(self, seed: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(int(seed))
        A = torch.randn(self.d, self.h, generator=g, dtype=torch.float64) / math.sqrt(self.d)
        B = torch.randn(self.h, self.C, generator=g, dtype=torch.float64) / math.sqrt(self.h)
        z = torch.zeros
        return torch.cat([A.ravel(), z(self.h, dtype=torch.float64), B.ravel(), z(self.C, dtype=torch.float64)])

    def logits(self, w: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        n, d, h, C = w.shape[0], self.d, self.h, self.C
        o = np.cumsum([0, d * h, h, h * C, C])
        A = w[:, o[0] : o[1]].reshape(n, d, h)
        a = w[:, o[1] : o[2]].reshape(n, 1, h)
        B = w[:, o[2] : o[3]].reshape(n, h, C)
        b = w[:, o[3] : o[4]].reshape(n, 1, C)
        H = torch.tanh((X @ A if X.dim() == 3 else torch.einsum("bd,ndh->nbh", X, A)) + a)
        return H @ B + b
