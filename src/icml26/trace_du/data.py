"""A decentralized digits task with a backdoored client (generated from scikit-learn's ``load_digits``).

Pixels are divided by 16; a stratified train/test split (``test_size``) is drawn from the seed; the training set is
spread over ``n_nodes`` clients with Dirichlet(``alpha``) label skew (every client gets at least ``min_per_node``
samples).  On each ``forget`` client a fraction ``trigger_frac`` of the samples carries the trigger (pixels
``trigger_pixels`` set to ``trigger_value``) and is relabelled ``target``; with ``forget_noise > 0`` the forget
clients' images also carry their own Gaussian pixel noise (noisier scans, a client-specific signal a model can
memorise).  Optionally a fixed random feature map
``phi(x) = relu(x R + r)`` (``random_features`` units, drawn from the seed) makes the convex model expressive
enough to memorise (so membership inference has something to find).  With ``center`` the mean of the clean
training rows is subtracted (a fixed preprocessing shared by every run).  Finally all rows are divided by the largest
training norm, so ``||x|| <= 1`` on the training data (the smoothness bound of :class:`SoftmaxRegression`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["BackdoorData", "make_backdoor_digits", "add_trigger"]

TRIGGER = (0, 1, 8, 9)


@dataclass
class BackdoorData:
    """``node_data``: ``(X_i, y_i)`` per client (training labels, triggers included); ``clean_members[c]``: the
    indices of ``c``'s un-triggered training rows; ``X_test, y_test``; ``X_trig, y_trig``: triggered non-target test
    images with their true labels (for the attack success rate); ``X_holdout, y_holdout``: the test images prepared
    like the forget clients' data (their pixel noise, fresh draws), the non-members of the membership attack."""

    node_data: list
    X_test: torch.Tensor
    y_test: torch.Tensor
    X_trig: torch.Tensor
    y_trig: torch.Tensor
    clean_members: dict
    forget: tuple
    target: int
    n_features: int
    n_classes: int
    X_holdout: torch.Tensor = None
    y_holdout: torch.Tensor = None


def add_trigger(X: np.ndarray, pixels=TRIGGER, value: float = 1.0) -> np.ndarray:
    """Copy of raw pixel rows ``X`` (values in [0, 1]) with the trigger pixels set to ``value``."""
    X = np.array(X, dtype=float, copy=True)
    X[:, list(pixels)] = value
    return X


def make_backdoor_digits(
    seed: int = 0,
    n_nodes: int = 8,
    alpha: float = 0.5,
    forget=(3,),
    trigger_frac: float = 0.4,
    target: int = 0,
    trigger_pixels=TRIGGER,
    trigger_value: float = 1.0,
    test_size: float = 0.25,
    random_features: int = 0,
    min_per_node: int = 20,
    max_per_node: int | None = None,
    center: bool = True,
    forget_noise: float = 0.0,
) -> BackdoorData:
    """Build the task (module docstring); everything random comes from ``seed``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if isinstance(n_nodes, bool) or not isinstance(n_nodes, int) or n_nodes < 2:
        raise ValueError(f"n_nodes must be an integer >= 2, got {n_nodes!r}")
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha!r}")
    if not 0.0 <= trigger_frac <= 1.0:
        raise ValueError(f"trigger_frac must lie in [0, 1], got {trigger_frac!r}")
    forget = tuple(sorted({int(c) for c in forget}))
    if any(not 0 <= c < n_nodes for c in forget):
        raise ValueError(f"forget must be client ids in [0, {n_nodes - 1}], got {forget}")
    rng = np.random.default_rng([int(seed), 77])
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_size, stratify=y, random_state=int(rng.integers(2**31)))
    C = 10
    for _ in range(1000):  # Dirichlet label skew, redrawn until every client has min_per_node samples
        owner = np.empty(len(ytr), dtype=int)
        props = rng.dirichlet(alpha * np.ones(n_nodes), size=C)
        for k in range(C):
            idx = np.flatnonzero(ytr == k)
            owner[idx] = rng.choice(n_nodes, size=idx.size, p=props[k])
        if np.bincount(owner, minlength=n_nodes).min() >= min_per_node:
            break
    else:  # pragma: no cover
        raise ValueError("could not draw a split with min_per_node samples per client; raise alpha")
    parts = [np.flatnonzero(owner == i) for i in range(n_nodes)]
    if max_per_node is not None:
        parts = [p if p.size <= max_per_node else np.sort(rng.choice(p, max_per_node, replace=False)) for p in parts]
    Xs, ys, clean = [], [], {}
    for i, idx in enumerate(parts):
        Xi, yi = Xtr[idx].copy(), ytr[idx].copy()
        if i in forget:
            Xi = Xi + forget_noise * rng.standard_normal(Xi.shape)
            trig = rng.random(idx.size) < trigger_frac
            Xi[trig] = add_trigger(Xi[trig], trigger_pixels, trigger_value)
            yi[trig] = target
            clean[i] = np.flatnonzero(~trig)
        Xs.append(Xi)
        ys.append(yi)
    nt = yte != target
    Xhold = Xte + forget_noise * rng.standard_normal(Xte.shape)  # held-out samples of the forget clients' kind
    Xtrig, ytrig = add_trigger(Xte[nt], trigger_pixels, trigger_value), yte[nt]
    if random_features:
        R = rng.standard_normal((X.shape[1], random_features)) / np.sqrt(X.shape[1]) * 2.0
        r = rng.uniform(-1.0, 1.0, random_features)

        def phi(A):
            return np.maximum(A @ R + r, 0.0)

        Xs, Xte, Xtrig, Xhold = [phi(a) for a in Xs], phi(Xte), phi(Xtrig), phi(Xhold)
    if center:  # a fixed public preprocessing: subtract the mean of the clean training pixels
        mu = (
            Xtr.mean(0)
            if not random_features
            else np.concatenate([a for i, a in enumerate(Xs) if i not in forget]).mean(0)
        )
        Xs, Xte, Xtrig, Xhold = [a - mu for a in Xs], Xte - mu, Xtrig - mu, Xhold - mu
    scale = max(float(np.sqrt((a * a).sum(1)).max()) for a in Xs)

    def t(a, dtype=torch.float64):
        return torch.as_tensor(a / scale if dtype == torch.float64 else a, dtype=dtype)

    node_data = [(t(a), torch.as_tensor(b, dtype=torch.long)) for a, b in zip(Xs, ys)]
    yt = torch.as_tensor(yte, dtype=torch.long)
    return BackdoorData(
        node_data,
        t(Xte),
        yt,
        t(Xtrig),
        torch.as_tensor(ytrig, dtype=torch.long),
        clean,
        forget,
        target,
        node_data[0][0].shape[1],
        C,
        t(Xhold),
        yt.clone(),
    )
