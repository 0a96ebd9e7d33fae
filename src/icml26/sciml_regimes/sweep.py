"""The regime map: sweep (difficulty coefficient) x (number of collocation points), classify each cell.

:func:`run_cell` trains the PINNs of one cell (one problem coefficient, one ``n_f``, one seed): every optimizer
from the same initialisation ``a`` on the same collocation sample, plus a second L-BFGS model from initialisation
``b`` for the pairwise metrics; at the L-BFGS model ``a`` it measures the Hessian's top eigenvalue and trace, and
between the two L-BFGS models the linear CKA of their outputs on the test grid and the linear mode connectivity.
:class:`RegimeSweep` runs the cells (in parallel processes with joblib, ``n_jobs``) and keeps one JSON file per
finished cell in ``cache_dir``, so an interrupted sweep resumes from the completed cells.

Regimes (:func:`classify_regimes`, thresholds inferred, configurable): with training loss ``L`` and test error ``E``,

    Under-Trained  if L > tau_loss;   else Over-Trained if E > tau_err;   else Well-Trained,

(``tau_loss = 1e-3``, ``tau_err = 0.1``); a cell whose training diverged is ``"failed"``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from .landscape import hessian_top_eigenvalue, hessian_trace, linear_cka, mode_connectivity, model_loss_closure
from .pinn import OPTIMIZERS, PINN, fit
from .problems import PDEProblem

__all__ = ["RegimeSweep", "run_cell", "classify_regimes", "classify_regime", "plot_regime_map", "REGIMES"]

REGIMES = ("under", "well", "over")
REGIME_NAMES = {"under": "Under-Trained", "well": "Well-Trained", "over": "Over-Trained", "failed": "failed"}


def _seeds(seed: int) -> tuple[int, int, int]:
    s = np.random.SeedSequence([int(seed), 32]).generate_state(3)
    return int(s[0] % (2**31 - 1)), int(s[1] % (2**31 - 1)), int(s[2] % (2**31 - 1))


def run_cell(
    problem: PDEProblem,
    n_f: int,
    seed: int,
    optimizers: Sequence[str] = ("lbfgs",),
    *,
    width: int = 32,
    depth: int = 3,
    steps: int = 200,
    metrics: bool = True,
    hessian_iters: int = 20,
    trace_samples: int = 20,
    test_grid: tuple[int, int] = (129, 101),
    curve_points: int = 40,
    **fit_kwargs,
) -> dict:
    """One cell, one seed (module docstring).  The collocation sample and the two initialisations are drawn from
    ``seed``.  Returns a JSON-able dict: per optimizer ``train_loss``, ``test_error``, loss parts, ``n_evals``,
    ``failed``, ``plateaued`` and a loss curve; with ``metrics``: ``lambda_max``, ``trace``, ``cka``, ``mc``."""
    bad = [o for o in optimizers if o not in OPTIMIZERS]
    if bad or not optimizers:
        raise ValueError(f"optimizers must be a non-empty list from {', '.join(OPTIMIZERS)}; got {list(optimizers)!r}")
    data_seed, init_a, init_b = _seeds(seed)
    batch = problem.sample(n_f, data_seed)
    domain = (problem.x_range, problem.t_range)
    out: dict = {"coefficient": problem.coefficient, "n_f": int(n_f), "seed": int(seed), "arms": {}}
    models = {}
    for opt in optimizers:
        model = PINN(width, depth, domain=domain, seed=init_a, dtype=problem.dtype)
        log = fit(model, problem, opt, batch=batch, steps=steps, test_grid=test_grid, **fit_kwargs)
        models[opt] = model
        out["arms"][opt] = {
            "train_loss": log.final_loss,
            "test_error": log.test_error,
            "parts": log.parts,
            "n_evals": log.n_evals,
            "failed": log.failed,
            "plateaued": log.plateaued(),
            "curve": log.curve(curve_points),
            "stage_ends": [int(round(i * (curve_points - 1) / max(len(log.losses) - 1, 1))) for i in log.stage_ends],
        }
    if metrics:
        ref = models.get("lbfgs") or models[optimizers[0]]
        ref_opt = "lbfgs" if "lbfgs" in models else optimizers[0]
        other = PINN(width, depth, domain=domain, seed=init_b, dtype=problem.dtype)
        log_b = fit(other, problem, ref_opt, batch=batch, steps=steps, test_grid=test_grid, **fit_kwargs)
        loss_fn, params = model_loss_closure(ref, lambda m: problem.loss(m, batch))
        x, t, _ = problem.test_grid(*test_grid)
        with torch.no_grad():
            ya, yb = ref(x, t), other(x, t)
        finite = all(math.isfinite(float(p.abs().sum())) for p in params)
        out["metrics"] = {
            "optimizer": ref_opt,
            "lambda_max": hessian_top_eigenvalue(loss_fn, params, iters=hessian_iters, seed=init_a) if finite else None,
            "trace": hessian_trace(loss_fn, params, samples=trace_samples, seed=init_a) if finite else None,
            "cka": linear_cka(ya, yb),
            "mc": mode_connectivity(ref, other, loss_fn)["mc"] if finite else None,
            "train_loss_b": log_b.final_loss,
            "test_error_b": log_b.test_error,
        }
    return out


def classify_regime(train_loss: float, test_error: float, tau_loss: float = 1e-3, tau_err: float = 0.1) -> str:
    """The rule of the module docstring for one cell: ``"under"``, ``"over"``, ``"well"`` or ``"failed"``."""
    if not (math.isfinite(train_loss) and math.isfinite(test_error)):
        return "failed"
    if train_loss > tau_loss:
        return "under"
    return "over" if test_error > tau_err else "well"


def classify_regimes(df, tau_loss: float = 1e-3, tau_err: float = 0.1, method: str = "threshold"):
    """Add a ``regime`` column to ``df`` (a DataFrame or list of dicts with ``train_loss`` and ``test_error``).

    ``method="threshold"``: the rule of the module docstring.  ``method="kmeans"``: threshold-free 2-means in
    ``(log10 L, log10 E)`` twice - first split low/high loss (high = Under-Trained), then split the low-loss cells
    by error (high = Over-Trained); needs at least 4 cells.  Returns a new DataFrame."""
    import pandas as pd

    if not (isinstance(tau_loss, (int, float)) and tau_loss > 0):
        raise ValueError(f"tau_loss must be a number > 0, got {tau_loss!r}")
    if not (isinstance(tau_err, (int, float)) and tau_err > 0):
        raise ValueError(f"tau_err must be a number > 0, got {tau_err!r}")
    if method not in ("threshold", "kmeans"):
        raise ValueError(f"method must be 'threshold' or 'kmeans', got {method!r}")
    df = pd.DataFrame(df).copy()
    for col in ("train_loss", "test_error"):
        if col not in df:
            raise ValueError(f"df must have a {col!r} column")
    L, E = df["train_loss"].astype(float).to_numpy(), df["test_error"].astype(float).to_numpy()
    if method == "threshold":
        df["regime"] = [classify_regime(a, b, tau_loss, tau_err) for a, b in zip(L, E)]
        return df
    ok = np.isfinite(L) & np.isfinite(E) & (L > 0) & (E > 0)
    if ok.sum() < 4:
        raise ValueError("method='kmeans' needs at least 4 cells with finite positive loss and error")
    lab = np.array(["failed"] * len(df), dtype=object)
    lL, lE = np.log10(L[ok]), np.log10(E[ok])
    high = _two_means(lL)
    sub = np.where(ok)[0]
    lab[sub[high]] = "under"
    low = sub[~high]
    if low.size >= 2:
        bad = _two_means(np.log10(E[low]))
        lab[low[bad]], lab[low[~bad]] = "over", "well"
    else:
        lab[low] = "well"
    del lE
    df["regime"] = lab
    return df


def _two_means(v: np.ndarray) -> np.ndarray:
    """1-D 2-means (exact: best split of the sorted values); True for the upper cluster."""
    s = np.sort(v)
    best, cut = np.inf, s[0]
    for i in range(1, len(s)):
        a, b = s[:i], s[i:]
        cost = ((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()
        if cost < best:
            best, cut = cost, (s[i - 1] + s[i]) / 2
    return v > cut


def majority(labels: Sequence[str]) -> str:
    """The most common label (ties broken by the order under, over, well, failed)."""
    order = ["under", "over", "well", "failed"]
    counts = {k: list(labels).count(k) for k in order}
    return max(order, key=lambda k: (counts[k], -order.index(k)))


def plot_regime_map(df, metric: str = "regime", ax=None, title: str | None = None, log: bool | None = None):
    """Heat map over (coefficient x n_f): ``metric="regime"`` colours each cell by its seed-majority regime (and
    writes the count of seeds agreeing); any other numeric column is averaged over seeds (log10 if ``log``, by
    default when all values are positive).  Returns the matplotlib Figure."""
    import pandas as pd
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    df = pd.DataFrame(df)
    for col in ("coefficient", "n_f", metric):
        if col not in df:
            raise ValueError(f"df must have a {col!r} column")
    cs, ns = sorted(df["coefficient"].unique()), sorted(df["n_f"].unique())
    if ax is None:
        fig = Figure(figsize=(5.2, 4.2), layout="constrained")
        ax = fig.subplots()
    else:
        fig = ax.figure
    if metric == "regime":
        codes = {"under": 0, "well": 1, "over": 2, "failed": 3}
        grid = np.full((len(cs), len(ns)), 3.0)
        for i, c in enumerate(cs):
            for j, n in enumerate(ns):
                lab = df[(df["coefficient"] == c) & (df["n_f"] == n)]["regime"].tolist()
                if lab:
                    m = majority(lab)
                    grid[i, j] = codes[m]
                    ax.text(
                        j,
                        i,
                        f"{REGIME_NAMES[m].split('-')[0]}\n{lab.count(m)}/{len(lab)}",
                        ha="center",
                        va="center",
                        fontsize=7,
                    )
        cmap = ListedColormap(["#d95f02", "#1b9e77", "#7570b3", "#999999"])
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=3.5, origin="lower", aspect="auto")
    else:
        vals = df[metric].astype(float)
        log = bool((vals > 0).all()) if log is None else log
        grid = np.full((len(cs), len(ns)), np.nan)
        for i, c in enumerate(cs):
            for j, n in enumerate(ns):
                v = vals[(df["coefficient"] == c) & (df["n_f"] == n)].to_numpy()
                v = v[np.isfinite(v)]
                if v.size:
                    grid[i, j] = np.log10(v).mean() if log else v.mean()
        im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
        fig.colorbar(im, ax=ax, label=f"log10 {metric}" if log else metric)
    ax.set_xticks(range(len(ns)), [str(int(n)) for n in ns])
    ax.set_yticks(range(len(cs)), [f"{c:g}" for c in cs])
    ax.set_xlabel("collocation points N_f")
    ax.set_ylabel("PDE coefficient")
    ax.set_title(title or ("regime map" if metric == "regime" else f"{metric} (seed mean)"))
    return fig


class RegimeSweep:
    """Sweep ``problem_factory(coefficient)`` over ``difficulties`` x ``data_sizes`` x ``seeds``.

    ``optimizers``: trained per cell (:func:`run_cell`); ``n_jobs``: joblib processes (1: in process);
    ``cache_dir``: one JSON file per finished (coefficient, n_f, seed), read back instead of recomputed, so an
    interrupted sweep resumes; ``cell_kwargs``: passed to :func:`run_cell` (``steps``, ``width``, ``metrics`` ...).
    :meth:`run` returns a DataFrame with one row per (cell, seed, optimizer) and the landscape metrics of the
    cell's L-BFGS model on every row of that cell and seed."""

    def __init__(
        self,
        problem_factory: Callable[[float], PDEProblem],
        difficulties: Sequence[float],
        data_sizes: Sequence[int],
        seeds: Sequence[int] = (0, 1, 2),
        optimizers: Sequence[str] = ("lbfgs",),
        n_jobs: int = 1,
        cache_dir: str | Path | None = None,
        **cell_kwargs,
    ) -> None:
        if not callable(problem_factory):
            raise TypeError("problem_factory must be callable: coefficient -> PDEProblem")
        if not difficulties or not data_sizes or not seeds:
            raise ValueError("difficulties, data_sizes and seeds must be non-empty")
        self.problems = {float(c): problem_factory(float(c)) for c in difficulties}  # validates the coefficients
        for p in self.problems.values():
            if not isinstance(p, PDEProblem):
                raise TypeError("problem_factory must return a PDEProblem")
        n_int = min((p.num_x - 2) * (p.num_t - 1) for p in self.problems.values())
        for n in data_sizes:
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= n_int:
                raise ValueError(f"data_sizes must be integers in [1, {n_int}], got {n!r}")
        bad = [o for o in optimizers if o not in OPTIMIZERS]
        if bad or not optimizers:
            raise ValueError(f"optimizers must be a non-empty list from {', '.join(OPTIMIZERS)}; got {optimizers!r}")
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
            raise ValueError(f"n_jobs must be -1 or an integer >= 1, got {n_jobs!r}")
        self.difficulties = [float(c) for c in difficulties]
        self.data_sizes = [int(n) for n in data_sizes]
        self.seeds = [int(s) for s in seeds]
        self.optimizers = list(optimizers)
        self.n_jobs = n_jobs
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.cell_kwargs = cell_kwargs

    def _path(self, c: float, n: int, s: int) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"cell-c{c:g}-n{n}-s{s}.json"

    def _one(self, c: float, n: int, s: int) -> dict:
        path = self._path(c, n, s)
        if path is not None and path.exists():
            return json.loads(path.read_text())
        torch.set_num_threads(1)
        rec = run_cell(self.problems[c], n, s, self.optimizers, **self.cell_kwargs)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(rec))
            tmp.replace(path)  # atomic: a killed sweep never leaves a half-written cell
        return rec

    def run_records(self) -> list[dict]:
        """The raw :func:`run_cell` records, in (coefficient, n_f, seed) order."""
        jobs = [(c, n, s) for c in self.difficulties for n in self.data_sizes for s in self.seeds]
        if self.n_jobs == 1:
            return [self._one(*j) for j in jobs]
        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_jobs)(delayed(self._one)(*j) for j in jobs)

    def run(self):
        """Run (or resume) the sweep; a DataFrame, one row per (coefficient, n_f, seed, optimizer)."""
        return records_to_frame(self.run_records())


def records_to_frame(records: Sequence[dict]):
    """Flatten :func:`run_cell` records to a DataFrame (one row per optimizer)."""
    import pandas as pd

    rows = []
    for r in records:
        met = r.get("metrics") or {}
        for opt, a in r["arms"].items():
            row = {"coefficient": r["coefficient"], "n_f": r["n_f"], "seed": r["seed"], "optimizer": opt}
            row.update({k: a[k] for k in ("train_loss", "test_error", "n_evals", "failed", "plateaued")})
            row.update({k: met.get(k) for k in ("lambda_max", "trace", "cka", "mc")})
            rows.append(row)
    return pd.DataFrame(rows)
