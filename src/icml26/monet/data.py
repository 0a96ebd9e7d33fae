"""Bimodal data with a controllable imbalance: a synthetic generator and a two-view digits dataset.

Both return a :class:`BimodalData` (train / val / test :class:`BimodalSplit` of float32 tensors keyed by modality),
with ``strong`` and ``weak`` naming the dominant (easy, fast-learned) and the under-trained modality.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import torch

__all__ = ["BimodalSplit", "BimodalData", "make_imbalanced_bimodal", "make_two_view_digits"]


@dataclass(frozen=True)
class BimodalSplit:
    """One split: ``x[modality]`` of shape ``(n, d_m)`` (float32) and integer labels ``y`` of shape ``(n,)``."""

    x: Mapping[str, torch.Tensor]
    y: torch.Tensor

    def __post_init__(self) -> None:
        n = int(self.y.shape[0])
        for m, v in self.x.items():
            if v.ndim < 1 or int(v.shape[0]) != n:
                raise ValueError(f"x[{m!r}] has {v.shape[0] if v.ndim else 0} rows but y has {n}")

    def __len__(self) -> int:
        return int(self.y.shape[0])

    @property
    def modalities(self) -> tuple[str, ...]:
        return tuple(self.x)

    def batches(
        self, batch_size: int, generator: torch.Generator | None = None, shuffle: bool = True
    ) -> Iterator[tuple[dict[str, torch.Tensor], torch.Tensor]]:
        """Mini-batches ``({m: x_m[idx]}, y[idx])`` in an order drawn from ``generator`` (one epoch)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        n = len(self)
        order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)
        for i in range(0, n, batch_size):
            idx = order[i : i + batch_size]
            yield {m: v[idx] for m, v in self.x.items()}, self.y[idx]


@dataclass(frozen=True)
class BimodalData:
    """Train / val / test splits of a bimodal classification task; ``info`` holds generator diagnostics."""

    train: BimodalSplit
    val: BimodalSplit
    test: BimodalSplit
    n_classes: int
    strong: str
    weak: str
    info: dict = field(default_factory=dict)

    @property
    def modalities(self) -> tuple[str, ...]:
        return self.train.modalities

    @property
    def feature_dims(self) -> dict[str, int]:
        return {m: int(v.shape[1]) for m, v in self.train.x.items()}


def _check_int(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def _check_float(name: str, v, lo: float, hi: float = np.inf) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(v).__name__}")
    f = float(v)
    if not np.isfinite(f) or f < lo or f > hi:
        raise ValueError(f"{name} must be a finite number in [{lo:g}, {hi:g}], got {v!r}")
    return f


def _unit_rows(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    mu = rng.normal(size=(k, d))
    return mu / np.linalg.norm(mu, axis=1, keepdims=True)


def make_imbalanced_bimodal(
    seed: int,
    n_train: int = 2000,
    n_val: int = 1000,
    n_test: int = 2000,
    n_classes: int = 10,
    dim_a: int = 32,
    dim_b: int = 32,
    scale_a: float = 3.0,
    noise_a: float = 0.5,
    corrupt_a: float = 0.3,
    scale_b: float = 1.0,
    noise_b: float = 0.6,
    corrupt_b: float = 0.1,
    flip_b: float = 0.0,
    gain_b: float = 1.0,
    alias_a: int = 0,
    alias_b: int = 0,
    names: tuple[str, str] = ("a", "b"),
) -> BimodalData:
    """Synthetic two-modality classification with a dominant and a weak modality (spec S1).

    Class prototypes ``mu_a[k]``, ``mu_b[k]`` are random unit vectors and ``R`` a fixed random ``dim_b x dim_b``
    matrix (scaled by ``1/sqrt(dim_b)``), all drawn from ``seed``.  For a label ``y``:

    * modality A (dominant, fast): ``x_a = scale_a * mu_a[y_a] + noise_a * eps``, where ``y_a = y`` with probability
      ``1 - corrupt_a`` and is uniform over the classes otherwise.  A alone is easy but capped at
      ``1 - corrupt_a (K - 1) / K`` accuracy.
    * modality B (weak, slow): ``x_b = tanh(R (scale_b * mu_b[y_b] + noise_b * eps))`` with ``y_b`` corrupted
      independently with probability ``corrupt_b``: harder to read (small margin, a nonlinear warp) but more
      reliable, so the best fused classifier needs B on the ~``corrupt_a`` share of samples where A is wrong.

    Complementary modalities (``alias_a``, ``alias_b`` > 0): modality A draws its prototype from ``y_a mod alias_a``
    (it cannot tell apart classes that agree modulo ``alias_a``) and modality B from ``y_b // ceil(K / alias_b)``
    (it sees only which block of consecutive classes ``y`` is in).  Each then carries information the other lacks,
    and with ``alias_a = 5, alias_b = 2`` (``K = 10``) only both together identify the class; 0 turns aliasing off.

    ``info`` holds the resampled masks (``"resampled_a"``, ``"resampled_b"``, on train) and the knobs.
    """
    seed = _check_int("seed", seed, 0)
    n_train, n_val, n_test = (
        _check_int(k, v, 1) for k, v in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test))
    )
    k = _check_int("n_classes", n_classes, 2)
    dim_a, dim_b = _check_int("dim_a", dim_a, 1), _check_int("dim_b", dim_b, 1)
    scale_a, scale_b = _check_float("scale_a", scale_a, 0.0), _check_float("scale_b", scale_b, 0.0)
    noise_a, noise_b = _check_float("noise_a", noise_a, 0.0), _check_float("noise_b", noise_b, 0.0)
    corrupt_a = _check_float("corrupt_a", corrupt_a, 0.0, 1.0)
    corrupt_b = _check_float("corrupt_b", corrupt_b, 0.0, 1.0)
    flip_b = _check_float("flip_b", flip_b, 0.0, 1.0)
    gain_b = _check_float("gain_b", gain_b, 0.0)
    alias_a, alias_b = _check_int("alias_a", alias_a, 0), _check_int("alias_b", alias_b, 0)
    for name, v in (("alias_a", alias_a), ("alias_b", alias_b)):
        if v == 1 or v > k:
            raise ValueError(f"{name} must be 0 (off) or an integer in [2, n_classes={k}], got {v}")
    if not (
        isinstance(names, tuple)
        and len(names) == 2
        and all(isinstance(s, str) and s for s in names)
        and names[0] != names[1]
    ):
        raise ValueError(f"names must be a tuple of two distinct non-empty strings, got {names!r}")
    rng = np.random.default_rng([seed, 2718])
    mu_a, mu_b = _unit_rows(rng, k, dim_a), _unit_rows(rng, k, dim_b)
    R = rng.normal(size=(dim_b, dim_b)) / np.sqrt(dim_b)

    def draw(n: int) -> tuple[BimodalSplit, np.ndarray, np.ndarray]:
        y = rng.integers(0, k, n)
        res_a, res_b = rng.random(n) < corrupt_a, rng.random(n) < corrupt_b
        ya = np.where(res_a, rng.integers(0, k, n), y)
        yb = np.where(res_b, rng.integers(0, k, n), y)
        if alias_a:
            ya = ya % alias_a
        if alias_b:
            yb = yb // -(-k // alias_b)
        xa = scale_a * mu_a[ya] + noise_a * rng.normal(size=(n, dim_a))
        sign = np.where(rng.random(n) < flip_b, -1.0, 1.0)[:, None]
        xb = gain_b * np.tanh((sign * scale_b * mu_b[yb] + noise_b * rng.normal(size=(n, dim_b))) @ R.T)
        x = {names[0]: torch.tensor(xa, dtype=torch.float32), names[1]: torch.tensor(xb, dtype=torch.float32)}
        return BimodalSplit(x, torch.tensor(y, dtype=torch.long)), res_a, res_b

    train, ra, rb = draw(n_train)
    val, _, _ = draw(n_val)
    test, _, _ = draw(n_test)
    info = {
        "resampled_a": ra,
        "resampled_b": rb,
        "ceiling_a": 1 - corrupt_a * (k - 1) / k,
        "ceiling_b": 1 - corrupt_b * (k - 1) / k,
        "knobs": {
            "scale_a": scale_a,
            "noise_a": noise_a,
            "corrupt_a": corrupt_a,
            "scale_b": scale_b,
            "noise_b": noise_b,
            "corrupt_b": corrupt_b,
            "flip_b": flip_b,
            "gain_b": gain_b,
            "alias_a": alias_a,
            "alias_b": alias_b,
        },
    }
    return BimodalData(train, val, test, k, strong=names[0], weak=names[1], info=info)


def make_two_view_digits(
    seed: int,
    n_train: int = 1000,
    n_val: int = 300,
    pool: int = 2,
    dropout: float = 0.4,
    noise_std: float = 4.0,
    flip: float = 0.0,
    gain: float = 1.0,
    names: tuple[str, str] = ("coarse", "noisy"),
) -> BimodalData:
    """Two views of scikit-learn's 8x8 digits (1,797 images, 10 classes; bundled, no download), spec S2.

    * ``coarse`` (the strong, easy view): the image average-pooled over ``pool x pool`` blocks (``pool = 2``:
      a clean 4x4 image, 16 features), scaled to [0, 1];
    * ``noisy`` (the weak view): the full 8x8 image (64 features) with each pixel dropped (set to 0) with
      probability ``dropout`` and ``N(0, noise_std^2)`` noise added (pixel scale 0..16), then divided by 16; with
      probability ``flip`` the whole view's sign is inverted (so class means carry no information and the encoder
      must learn nonlinear features) and it is multiplied by ``gain`` (a small gain makes it slow to learn under
      SGD).

    The split (``n_train`` / ``n_val`` / rest for test), the dropout masks and the noise are drawn from ``seed``.
    """
    from sklearn.datasets import load_digits

    seed = _check_int("seed", seed, 0)
    n_train, n_val = _check_int("n_train", n_train, 1), _check_int("n_val", n_val, 1)
    pool = _check_int("pool", pool, 1)
    if 8 % pool:
        raise ValueError(f"pool must divide 8 (1, 2, 4 or 8), got {pool}")
    dropout = _check_float("dropout", dropout, 0.0, 1.0)
    noise_std = _check_float("noise_std", noise_std, 0.0)
    flip, gain = _check_float("flip", flip, 0.0, 1.0), _check_float("gain", gain, 0.0)
    if not (isinstance(names, tuple) and len(names) == 2 and names[0] != names[1]):
        raise ValueError(f"names must be a tuple of two distinct strings, got {names!r}")
    digits = load_digits()
    images, y = digits.images.astype(np.float64), digits.target.astype(np.int64)  # (1797, 8, 8), values 0..16
    n = len(y)
    if n_train + n_val >= n:
        raise ValueError(
            f"n_train + n_val must be < {n} (the digits set size) to leave a test split, got {n_train + n_val}"
        )
    rng = np.random.default_rng([seed, 3141])
    perm = rng.permutation(n)
    coarse = images.reshape(n, 8 // pool, pool, 8 // pool, pool).mean(axis=(2, 4)).reshape(n, -1) / 16.0
    keep = rng.random((n, 64)) >= dropout
    noisy = (images.reshape(n, 64) * keep + noise_std * rng.normal(size=(n, 64))) / 16.0
    noisy = gain * np.where(rng.random((n, 1)) < flip, -1.0, 1.0) * noisy

    def split(idx: np.ndarray) -> BimodalSplit:
        return BimodalSplit(
            {
                names[0]: torch.tensor(coarse[idx], dtype=torch.float32),
                names[1]: torch.tensor(noisy[idx], dtype=torch.float32),
            },
            torch.tensor(y[idx], dtype=torch.long),
        )

    tr, va, te = perm[:n_train], perm[n_train : n_train + n_val], perm[n_train + n_val :]
    info = {
        "knobs": {"pool": pool, "dropout": dropout, "noise_std": noise_std, "flip": flip, "gain": gain},
        "n_test": int(te.size),
    }
    return BimodalData(split(tr), split(va), split(te), 10, strong=names[0], weak=names[1], info=info)
