"""Class-incremental federated splits: disjoint class sets per task, each class spread over clients (Dirichlet)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ClassIncrementalTasks", "split_class_incremental", "load_digits_tasks"]

Dataset = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class ClassIncrementalTasks:
    """``train[t][k]``: client ``k``'s ``(X, y)`` for task ``t``; ``test[t]`` (and ``val[t]`` when held out): the
    task's evaluation set; ``classes[t]``: the global class labels of task ``t`` (disjoint across tasks).  Indexing
    ``tasks[t]`` gives ``train[t]`` (the ``[task][client]`` view of the spec)."""

    train: list[list[Dataset]]
    test: list[Dataset]
    classes: list[np.ndarray]
    n_classes: int
    n_features: int
    val: list[Dataset] | None = None

    @property
    def n_tasks(self) -> int:
        return len(self.train)

    @property
    def n_clients(self) -> int:
        return len(self.train[0])

    def __len__(self) -> int:
        return self.n_tasks

    def __getitem__(self, t: int) -> list[Dataset]:
        return self.train[t]

    def seen_classes(self, t: int) -> np.ndarray:
        """Classes of tasks ``0..t`` (sorted)."""
        return np.sort(np.concatenate(self.classes[: t + 1]))


def _check_int(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def _dirichlet_split(idx: np.ndarray, n_clients: int, alpha: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Split the sample indices ``idx`` of one class over clients with proportions ``p ~ Dirichlet(alpha 1)``."""
    p = rng.dirichlet(np.full(n_clients, alpha))
    cuts = (np.cumsum(p)[:-1] * len(idx)).round().astype(int)
    return np.split(rng.permutation(idx), cuts)


def split_class_incremental(
    X: np.ndarray,
    y: np.ndarray,
    n_tasks: int = 5,
    n_clients: int = 5,
    alpha: float = 1.0,
    seed: int = 0,
    *,
    test_size: float = 0.25,
    val_size: float = 0.0,
    min_samples: int = 5,
    class_order: Sequence[int] | None = None,
    standardize: bool = True,
    max_tries: int = 200,
) -> ClassIncrementalTasks:
    """Split ``(X, y)`` into ``n_tasks`` class-incremental tasks over ``n_clients`` clients.

    Class order: ``class_order`` or a permutation drawn from ``seed``; task ``t`` gets the ``t``-th of
    ``n_tasks`` near-equal chunks of it (disjoint, covering every class).  A stratified ``test_size`` share
    (and ``val_size`` share of the rest) is held out first; features are standardised with the training
    mean / sd.  Within a task each class ``c`` is spread over the clients with ``p_c ~ Dirichlet(alpha)``
    (non-IID over the task's classes); the draw is repeated until every (client, task) holds at least
    ``min_samples`` samples (``min_samples=0`` allows clients without data for a task, which ``run_fil``
    skips).  Deterministic in ``seed``.
    """
    from sklearn.model_selection import train_test_split

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (n_samples, n_features), got shape {X.shape}")
    if y.ndim != 1 or len(y) != len(X):
        raise ValueError(f"y must be a 1-d array with one label per row of X ({len(X)}), got shape {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        raise TypeError(f"y must hold integer class labels, got dtype {y.dtype}")
    classes = np.unique(y)
    if classes.min() < 0:
        raise ValueError("y must hold non-negative class labels (used as logit indices)")
    n_tasks = _check_int("n_tasks", n_tasks, 1)
    if n_tasks > len(classes):
        raise ValueError(f"n_tasks must be <= the number of classes ({len(classes)}), got {n_tasks}")
    n_clients = _check_int("n_clients", n_clients, 1)
    if not (isinstance(alpha, (int, float)) and alpha > 0):
        raise ValueError(f"alpha must be a positive number (Dirichlet concentration), got {alpha!r}")
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must lie in (0, 1), got {test_size!r}")
    if not 0.0 <= val_size < 1.0:
        raise ValueError(f"val_size must lie in [0, 1), got {val_size!r}")
    min_samples = _check_int("min_samples", min_samples, 0)
    seed = _check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    if class_order is None:
        order = rng.permutation(classes)
    else:
        order = np.asarray(class_order)
        if sorted(order.tolist()) != classes.tolist():
            raise ValueError(
                f"class_order must be a permutation of the labels {classes.tolist()}, got {order.tolist()}"
            )
    task_classes = [np.sort(c) for c in np.array_split(order, n_tasks)]

    idx = np.arange(len(y))
    rs = int(rng.integers(2**31 - 1))
    tr, te = train_test_split(idx, test_size=test_size, stratify=y, random_state=rs)
    va = np.array([], dtype=int)
    if val_size > 0:
        tr, va = train_test_split(tr, test_size=val_size, stratify=y[tr], random_state=rs + 1)
    mu, sd = (X[tr].mean(0), X[tr].std(0)) if standardize else (0.0, 1.0)
    sd = np.where(np.asarray(sd) > 0, sd, 1.0)
    Z = ((X - mu) / sd).astype(np.float32)

    def pick(sub: np.ndarray, cls: np.ndarray) -> Dataset:
        s = np.sort(sub[np.isin(y[sub], cls)])
        return Z[s], y[s].astype(np.int64)

    train = []
    for cls in task_classes:
        for _ in range(max_tries):
            parts = [[] for _ in range(n_clients)]
            for c in cls:
                for k, chunk in enumerate(_dirichlet_split(tr[y[tr] == c], n_clients, alpha, rng)):
                    parts[k].append(chunk)
            parts = [np.sort(np.concatenate(p)) for p in parts]
            if min(len(p) for p in parts) >= min_samples:
                break
        else:
            raise ValueError(
                f"could not give every client >= min_samples={min_samples} samples of a task in {max_tries} "
                f"Dirichlet draws (alpha={alpha}); lower min_samples or raise alpha"
            )
        train.append([(Z[p], y[p].astype(np.int64)) for p in parts])
    return ClassIncrementalTasks(
        train=train,
        test=[pick(te, c) for c in task_classes],
        classes=task_classes,
        n_classes=int(classes.max()) + 1,
        n_features=X.shape[1],
        val=[pick(va, c) for c in task_classes] if val_size > 0 else None,
    )


def load_digits_tasks(n_tasks: int = 5, n_clients: int = 5, alpha: float = 1.0, seed: int = 0, **kw):
    """scikit-learn's ``load_digits`` (1797 x 64, 10 classes) split by :func:`split_class_incremental`."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return split_class_incremental(d.data, d.target, n_tasks, n_clients, alpha, seed, **kw)
