"""Task containers and the paper-style clustered simulations (Section 4 designs, scaled down).

Each task ``j`` holds an outcome ``y``, a scalar treatment ``d`` and its own covariates ``x`` (the width
``p_j`` may differ between tasks).  The generators plant ``K`` clusters with centres
``beta_k = k*delta - (K+1)*delta/2``
(``k = 1..K``) and give every task the effect ``theta_j = beta_{z_j}`` of its cluster ``z_j``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TaskData", "make_clustered_tasks", "cluster_centres"]


def _as_finite(a, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be a numeric array, got {type(a).__name__}") from e
    if ndim == 2 and arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one sample, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


@dataclass(frozen=True, eq=False)
class TaskData:
    """One task's data ``D_j = {(Y_i, D_i, X_i)}_{i <= n_j}``.

    Parameters
    ----------
    y : array of shape (n,) -- outcome ``Y``.
    d : array of shape (n,) -- scalar treatment ``D`` (binary 0/1 for the IRM model).
    x : array of shape (n, p) -- covariates ``X``; ``p`` may differ between tasks (a 1-D ``x`` is one column).

    Raises ``ValueError`` on non-finite values or mismatched lengths, ``TypeError`` on non-numeric input.
    """

    y: np.ndarray
    d: np.ndarray
    x: np.ndarray

    def __post_init__(self) -> None:
        y = _as_finite(self.y, "y", 1)
        d = _as_finite(self.d, "d", 1)
        x = _as_finite(self.x, "x", 2)
        if not (len(y) == len(d) == len(x)):
            raise ValueError(
                f"y, d and x must have the same number of rows, got len(y)={len(y)}, len(d)={len(d)}, len(x)={len(x)}"
            )
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "x", x)

    @property
    def n(self) -> int:
        """Number of samples ``n_j``."""
        return len(self.y)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def cluster_centres(n_clusters: int, delta: float) -> np.ndarray:
    """``beta_k = k*delta - (K+1)*delta/2`` for ``k = 1..K``: equally spaced, centred at 0, gap ``delta``."""
    k = np.arange(1, n_clusters + 1)
    return k * delta - (n_clusters + 1) * delta / 2.0


def make_clustered_tasks(
    model: str = "plr",
    n_tasks: int = 20,
    n_clusters: int = 3,
    delta: float = 2 / 3,
    n_base: int = 400,
    n_step: int = 20,
    p_base: int = 5,
    random_state: int | np.random.Generator | None = None,
    p_cycle: int | None = None,
    x_corr: float = 0.0,
) -> tuple[list[TaskData], np.ndarray, np.ndarray]:
    """Simulate ``n_tasks`` tasks from the paper's Section 4 designs with planted clusters.

    Task ``j = 1..m`` has ``n_j = n_base + n_step*j`` samples and ``p_j = p_base + j`` covariates
    ``X ~ N(0, I_{p_j})``; its cluster ``z_j`` is uniform on ``{1..K}`` and ``theta_j = beta_{z_j}``
    (:func:`cluster_centres`).  With ``sigma`` the logistic function and ``g(X) = sum_l (-0.8)^l sigma(X_l)``:

    * ``"plr"``: ``D = 0.2 tanh(sum_l X_l) + N(0,1)``, ``Y = theta_j D + g(X) + N(0,1)``;
    * ``"irm"``: ``pi(X) = clip(sigma(X_4 X_5 - X_1 X_2), 0.05, 0.95)``, ``D ~ Bernoulli(pi)``,
      ``Y = theta_j D + g(X) + N(0,1)``.

    ``p_cycle`` (ours, for many tasks): ``p_j = p_base + 1 + ((j - 1) mod p_cycle)`` instead of growing with
    ``j``.  ``x_corr`` (ours): correlated covariates, ``Corr(X_l, X_l') = x_corr^|l - l'|`` (an AR(1) across
    columns; 0 gives the paper's ``N(0, I)``).

    Returns ``(tasks, theta, labels)`` with ``theta`` of shape (m,) and ``labels`` in ``0..K-1``.
    """
    if model not in ("plr", "irm"):
        raise ValueError(f"model must be 'plr' or 'irm', got {model!r}")
    for name, v, lo in (("n_tasks", n_tasks, 1), ("n_clusters", n_clusters, 1), ("p_base", p_base, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if not (np.isfinite(delta) and delta > 0):
        raise ValueError(f"delta must be a finite number > 0, got {delta!r}")
    if n_base + n_step < 2 or n_step < 0:
        raise ValueError(f"n_base + n_step*j must be >= 2 for every task and n_step >= 0, got {n_base}, {n_step}")
    if p_cycle is not None and (isinstance(p_cycle, bool) or not isinstance(p_cycle, (int, np.integer)) or p_cycle < 1):
        raise ValueError(f"p_cycle must be None or an integer >= 1, got {p_cycle!r}")
    if not (isinstance(x_corr, (int, float)) and -1.0 < x_corr < 1.0):
        raise ValueError(f"x_corr must lie in (-1, 1), got {x_corr!r}")
    if model == "irm" and p_base + 1 < 5:
        raise ValueError(f"the 'irm' design uses X_1..X_5, so p_base must be >= 4, got {p_base}")
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    beta = cluster_centres(n_clusters, delta)
    labels = rng.integers(0, n_clusters, size=n_tasks)
    theta = beta[labels]
    tasks = []
    for j in range(1, n_tasks + 1):
        n, p = n_base + n_step * j, p_base + (j if p_cycle is None else 1 + (j - 1) % p_cycle)
        x = rng.standard_normal((n, p))
        if x_corr != 0.0:  # AR(1) across columns: Corr(X_l, X_l') = x_corr^|l - l'|
            for col in range(1, p):
                x[:, col] = x_corr * x[:, col - 1] + np.sqrt(1.0 - x_corr**2) * x[:, col]
        signs = (-0.8) ** np.arange(1, p + 1)
        g = _sigmoid(x) @ signs
        if model == "plr":
            d = 0.2 * np.tanh(x.sum(axis=1)) + rng.standard_normal(n)
        else:
            pi = np.clip(_sigmoid(x[:, 3] * x[:, 4] - x[:, 0] * x[:, 1]), 0.05, 0.95)
            d = (rng.random(n) < pi).astype(float)
        y = theta[j - 1] * d + g + rng.standard_normal(n)
        tasks.append(TaskData(y=y, d=d, x=x))
    return tasks, theta, labels
