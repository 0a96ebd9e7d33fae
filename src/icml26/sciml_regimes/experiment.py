"""Reproduction: the regime map of a PINN on 1-D convection, regime-specific optimizers, landscape metrics.

Per seed (the unit: it draws the collocation sample and the two initialisations of every cell) and per cell of the
grid (convection coefficient ``beta`` x number of collocation points ``N_f``), :func:`~.sweep.run_cell` trains the
PINN with L-BFGS, Adam, Adam->L-BFGS and the beta-curriculum from the same initialisation on the same points
(``steps`` iterations each), a second L-BFGS model from another initialisation, and measures the Hessian's top
eigenvalue and trace at the L-BFGS model, the CKA of the two L-BFGS models' outputs and their linear mode
connectivity.  Regimes are assigned from the L-BFGS arm by the stated rule (:func:`~.sweep.classify_regime`:
Under if L > tau_loss, else Over if E > tau_err, else Well); comparisons inside a regime use the cells whose
seed-majority label is that regime, averaged per seed, so seeds are the units (3 in the full preset: t-tests).
Each finished cell of a seed is cached (``progress.cached``), so an interrupted run resumes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26.core import Experiment, Report, judge_every, judge_superiority, judge_threshold, register

from .landscape import hessian_top_eigenvalue, hessian_trace, linear_cka
from .problems import ConvectionProblem, DiffusionProblem, ReactionProblem, WaveProblem
from .sweep import REGIME_NAMES, classify_regime, classify_regimes, majority, plot_regime_map, run_cell

ARMS = {"lbfgs": "L-BFGS", "adam": "Adam", "adam_lbfgs": "Adam+L-BFGS", "curriculum": "curriculum"}


@dataclass(frozen=True)
class Config:
    """Grid, PINN and trainer sizes (shared by every arm), metric budgets, regime thresholds and claim settings."""

    betas: tuple[float, ...] = (1.0, 5.0, 10.0, 20.0, 40.0)
    n_fs: tuple[int, ...] = (8, 16, 32, 128, 512)
    optimizers: tuple[str, ...] = ("lbfgs", "adam", "adam_lbfgs", "curriculum")
    width: int = 20
    depth: int = 3  # linear layers: 2 hidden tanh layers of `width`
    steps: int = 300  # iterations per arm (L-BFGS iterations / Adam steps)
    adam_lr: float = 1e-2
    history: int = 50
    switch: float = 0.5  # Adam->L-BFGS: fraction of steps spent in Adam
    stages: int = 4  # curriculum: beta ramps linearly from min(beta, 1) to beta over `stages` problems
    final_frac: float = 0.5  # curriculum: fraction of steps at the target beta
    hessian_iters: int = 20
    trace_samples: int = 20
    test_grid: tuple[int, int] = (129, 101)
    tau_loss: float = 1e-3
    tau_err: float = 0.1
    easy_loss: float = 1e-4  # precondition: L-BFGS training loss in the easy corner
    min_cells: int = 2  # each regime in at least this many cells of every seed's map
    agreement: float = 0.8  # fraction of cells whose label equals the seed-majority label
    mislead_err: float = 0.5  # "deceptive flatness": flatter than the Well-Trained median yet E above this
    alpha: float = 0.05
    test: str = "ttest"


FULL = Config()
QUICK = Config(betas=(1.0, 5.0, 40.0), n_fs=(8, 128), steps=100, hessian_iters=5, trace_samples=5, test_grid=(33, 26))

EXACT_TOL = 1e-8
LAMBDA_TOL = 1e-3


# -- measure ------------------------------------------------------------------------------------------------------
class _Exact(torch.nn.Module):
    """A 'model' that hard-codes a problem's exact solution (its autograd residual must vanish)."""

    def __init__(self, problem):
        super().__init__()
        self.problem = problem

    def forward(self, x, t):
        return self.problem.exact(x, t)


def _checks(seed: int) -> dict:
    """Closed forms of our code, drawn from ``seed``: exact solutions have zero autograd residual; power iteration
    and Hutchinson on quadratics of known spectra; CKA invariances."""
    rng = np.random.default_rng([seed, 7])
    res = {}
    for name, prob in {
        "convection": ConvectionProblem(beta=float(rng.uniform(1, 40))),
        "reaction": ReactionProblem(rho=float(rng.uniform(1, 8))),
        "diffusion": DiffusionProblem(nu=float(rng.uniform(0.1, 5))),
        "wave": WaveProblem(beta=float(rng.integers(1, 6))),
    }.items():
        b = prob.sample(200, int(rng.integers(1 << 30)))
        x, t = b.x_f.clone().requires_grad_(True), b.t_f.clone().requires_grad_(True)
        res[name] = float(prob.residual(_Exact(prob), x, t).detach().abs().max())
    n = 30
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    eig = np.concatenate([[10.0], rng.uniform(0.1, 5.0, n - 1)])
    A = torch.as_tensor((Q * eig) @ Q.T)
    D = torch.as_tensor(np.diag(eig))

    def quad(M):
        return lambda ps: 0.5 * ps[0] @ M @ ps[0]

    theta = [torch.as_tensor(rng.normal(size=n))]
    lam = hessian_top_eigenvalue(quad(A), theta, iters=300, tol=1e-10, seed=seed)
    tr = hessian_trace(quad(D), theta, samples=5, seed=seed)  # Rademacher on a diagonal Hessian: exact
    X = rng.normal(size=(100, 6))
    R, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    cka = max(abs(linear_cka(X, X) - 1), abs(linear_cka(X, 3.7 * X @ R) - 1))
    return {
        "residual": res,
        "lambda_rel_err": abs(lam - 10.0) / 10.0,
        "trace_rel_err": abs(tr - eig.sum()) / eig.sum(),
        "cka_invariance": cka,
    }


def measure(cfg: Config, seed: int, progress=None) -> dict:
    """One seed: every (beta, N_f) cell with all arms and the landscape metrics, plus the closed-form checks."""
    cells = []
    kw = dict(
        width=cfg.width,
        depth=cfg.depth,
        steps=cfg.steps,
        hessian_iters=cfg.hessian_iters,
        trace_samples=cfg.trace_samples,
        test_grid=tuple(cfg.test_grid),
        lr=cfg.adam_lr,
        history=cfg.history,
        switch=cfg.switch,
        stages=cfg.stages,
        final_frac=cfg.final_frac,
    )
    grid = [(b, n) for b in cfg.betas for n in cfg.n_fs]
    it = grid if progress is None else progress.track(grid, total=len(grid), description=f"seed {seed} cells")
    for beta, n_f in it:

        def compute(beta=beta, n_f=n_f):
            return run_cell(ConvectionProblem(beta=float(beta)), int(n_f), seed, cfg.optimizers, **kw)

        key = f"cell-b{beta:g}-n{n_f}-s{seed}"
        cells.append(compute() if progress is None else progress.cached(key, compute))
    return {"cells": cells, "checks": _checks(seed)}


# -- judge --------------------------------------------------------------------------------------------------------
def _lg(x: float) -> float:
    return math.log10(max(float(x), 1e-300)) if x is not None and math.isfinite(x) else float("nan")


def _labels(cfg: Config, records: list[dict]) -> tuple[dict, list[dict]]:
    """Majority label per cell and each seed's labels (from the L-BFGS arm)."""
    per_seed = []
    for r in records:
        per_seed.append(
            {
                (c["coefficient"], c["n_f"]): classify_regime(
                    c["arms"]["lbfgs"]["train_loss"], c["arms"]["lbfgs"]["test_error"], cfg.tau_loss, cfg.tau_err
                )
                for c in r["cells"]
            }
        )
    cells = list(per_seed[0])
    maj = {k: majority([s[k] for s in per_seed]) for k in cells}
    return maj, per_seed


def _cell(rec: dict, key) -> dict:
    return next(c for c in rec["cells"] if (c["coefficient"], c["n_f"]) == key)


def _per_seed_mean(records, keys, fn) -> list[float]:
    out = []
    for r in records:
        v = [fn(_cell(r, k)) for k in keys]
        v = [x for x in v if x is not None and math.isfinite(x)]
        out.append(float(np.mean(v)) if v else float("nan"))
    return out


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    alpha, test = cfg.alpha, cfg.test
    maj, per_seed = _labels(cfg, records)
    cells = list(maj)
    by_regime = {g: [k for k in cells if maj[k] == g] for g in ("under", "well", "over", "failed")}
    budget = f"{cfg.steps} iterations, PINN {cfg.depth - 1}x{cfg.width} tanh, same init and collocation points"
    report.set_tuning("L-BFGS", configs=1, steps=cfg.steps, note=f"{budget}; lr 1, history {cfg.history}, strong Wolfe")
    report.set_tuning("Adam", configs=1, steps=cfg.steps, note=f"{budget}; lr {cfg.adam_lr:g}")
    report.set_tuning(
        "Adam+L-BFGS", configs=1, steps=cfg.steps, note=f"{budget}; Adam for {cfg.switch:.0%} then L-BFGS"
    )
    report.set_tuning(
        "curriculum",
        configs=1,
        steps=cfg.steps,
        note=f"{budget}; L-BFGS through {cfg.stages} betas from min(beta, 1), {cfg.final_frac:.0%} at the target",
    )
    report.set_tuning("more data", configs=1, steps=cfg.steps, note="L-BFGS at the next N_f of the grid")
    report.set_tuning(
        "best other optimizer",
        configs=len(cfg.optimizers) - 1,
        steps=cfg.steps,
        note="per cell, the lowest test error of the other optimizers at the same N_f (picked on test error: "
        "favours the optimizers)",
    )

    # (0) precondition: L-BFGS works in the easy corner
    easy = (min(cfg.betas), max(cfg.n_fs))
    report.add_claim(
        judge_every(
            "lbfgs_easy_corner",
            f"L-BFGS ({cfg.steps} iterations) reaches a training loss below {cfg.easy_loss:g} in the easy corner of "
            f"the grid (beta={easy[0]:g}, N_f={easy[1]}) in every seed, so the grid's failures are regimes, not a "
            "broken trainer",
            ("L-BFGS train loss", [_cell(r, easy)["arms"]["lbfgs"]["train_loss"] for r in records]),
            bound=cfg.easy_loss,
            sense="<=",
            kind="precondition",
            unit="seed",
        )
    )
    pre = ["lbfgs_easy_corner"]

    # (1) all three regimes appear
    min_count = [min(sum(1 for v in s.values() if v == g) for g in ("under", "well", "over")) for s in per_seed]
    report.add_claim(
        judge_every(
            "three_regimes_appear",
            f"All three regimes (Under-, Well-, Over-Trained; rule: Under if L > {cfg.tau_loss:g}, else Over if "
            f"E > {cfg.tau_err:g}, else Well, on the L-BFGS arm) appear on the {len(cfg.betas)}x{len(cfg.n_fs)} "
            f"convection grid (beta x N_f), each in at least {cfg.min_cells} cells of every seed's map",
            ("fewest cells of any regime", min_count),
            bound=cfg.min_cells,
            sense=">=",
            requires=pre,
            unit="seed",
        )
    )
    agree = [float(np.mean([s[k] == maj[k] for k in cells])) for s in per_seed]
    report.add_claim(
        judge_threshold(
            "regime_map_stable",
            f"The regime map is stable across seeds: at least {cfg.agreement:.0%} of a seed's cells carry the "
            "seed-majority label",
            ("fraction agreeing with the majority", agree),
            threshold=cfg.agreement,
            sense=">=",
            requires=pre,
        )
    )

    def log_err(arm):
        return lambda c: _lg(c["arms"][arm]["test_error"])

    # (2) regime-specific optimization
    under, over, well = by_regime["under"], by_regime["over"], by_regime["well"]
    if under:
        cl, lb = _per_seed_mean(records, under, log_err("curriculum")), _per_seed_mean(records, under, log_err("lbfgs"))
    else:
        cl = lb = [0.0] * len(records)
    report.add_claim(
        judge_superiority(
            "curriculum_helps_under",
            f"In Under-Trained cells ({len(under)} by seed majority) the beta-curriculum reaches a lower test error "
            "than plain L-BFGS with the same budget (log10 test error, cells averaged per seed)",
            ("curriculum log10 test error", cl),
            {"L-BFGS log10 test error": lb},
            higher_is_better=False,
            test=test,
            alpha=alpha,
            requires=pre,
        )
    )
    report.add_claim(
        judge_superiority(
            "curriculum_halves_error_under",
            "In Under-Trained cells the curriculum lowers L-BFGS's test error by at least 2x (log10 gap >= 0.301, "
            "lower end of the one-sided interval)",
            ("curriculum log10 test error", cl),
            {"L-BFGS log10 test error": lb},
            higher_is_better=False,
            test=test,
            alpha=alpha,
            min_effect=math.log10(2.0),
            requires=pre,
        )
    )
    n_fs = sorted(cfg.n_fs)
    over_next = [k for k in over if k[1] != n_fs[-1]]

    def data_gain(rec, k):
        nxt = (k[0], n_fs[n_fs.index(k[1]) + 1])
        return _lg(_cell(rec, k)["arms"]["lbfgs"]["test_error"]) - _lg(_cell(rec, nxt)["arms"]["lbfgs"]["test_error"])

    def opt_gain(rec, k):
        c = _cell(rec, k)["arms"]
        best = min(_lg(c[o]["test_error"]) for o in cfg.optimizers if o != "lbfgs")
        return _lg(c["lbfgs"]["test_error"]) - best

    dg = [float(np.mean([data_gain(r, k) for k in over_next])) if over_next else 0.0 for r in records]
    og = [float(np.mean([opt_gain(r, k) for k in over_next])) if over_next else 0.0 for r in records]
    report.add_claim(
        judge_superiority(
            "more_data_beats_optimizer_over",
            f"In Over-Trained cells ({len(over_next)} with a larger N_f on the grid) moving to the next N_f lowers "
            "L-BFGS's test error more than switching to the best other optimizer at the same N_f (decades of test "
            "error gained, cells averaged per seed)",
            ("more data log10 error gain", dg),
            {"best other optimizer log10 error gain": og},
            higher_is_better=True,
            test=test,
            alpha=alpha,
            requires=pre,
        )
    )

    # (3) landscape metrics differ between regimes
    def cka(c):
        return c["metrics"]["cka"]

    def lam(c):
        v = c["metrics"]["lambda_max"]
        return None if v is None else _lg(abs(v))

    cw = _per_seed_mean(records, well, cka) if well else [0.0] * len(records)
    co = _per_seed_mean(records, over, cka) if over else [0.0] * len(records)
    report.add_claim(
        judge_superiority(
            "cka_well_above_over",
            "Two L-BFGS models from different initialisations agree more (linear CKA of their outputs on the test "
            "grid) in Well-Trained cells than in Over-Trained cells (cells averaged per seed)",
            ("Well-Trained CKA", cw),
            {"Over-Trained CKA": co},
            test=test,
            alpha=alpha,
            requires=pre,
        )
    )
    lu = _per_seed_mean(records, under, lam) if under else [0.0] * len(records)
    lw = _per_seed_mean(records, well, lam) if well else [0.0] * len(records)
    report.add_claim(
        judge_superiority(
            "sharper_under_than_well",
            "The Hessian's top eigenvalue at the L-BFGS solution is larger in Under-Trained than in Well-Trained "
            "cells (log10 lambda_max, cells averaged per seed; direction fixed from a one-seed pilot, see docs)",
            ("Under-Trained log10 lambda_max", lu),
            {"Well-Trained log10 lambda_max": lw},
            test=test,
            alpha=alpha,
            requires=pre,
        )
    )

    # (4) checks: closed forms and the equal budget
    chk = [r["checks"] for r in records]
    report.add_claim(
        judge_every(
            "exact_solutions_zero_residual",
            "The exact convection, reaction, diffusion and wave solutions have autograd PDE residual ~ 0 "
            f"(max |r| <= {EXACT_TOL:g} at 200 random collocation points, random coefficients)",
            ("max |residual|", [v for c in chk for v in c["residual"].values()]),
            bound=EXACT_TOL,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "hessian_closed_forms",
            f"Power iteration recovers the top eigenvalue of a rotated quadratic (rel. error <= {LAMBDA_TOL:g}) and "
            "Hutchinson the trace of a diagonal one (exact with Rademacher probes)",
            ("relative error", [max(c["lambda_rel_err"], c["trace_rel_err"]) for c in chk]),
            bound=LAMBDA_TOL,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "cka_invariances",
            "Linear CKA is 1 for X vs X and for X vs an orthogonally rotated, isotropically scaled X",
            ("|CKA - 1|", [c["cka_invariance"] for c in chk]),
            bound=1e-10,
            kind="check",
        )
    )
    over_budget = [
        max(0, a["n_evals"] - int(1.25 * cfg.steps) - cfg.stages)
        for r in records
        for c in r["cells"]
        for a in c["arms"].values()
    ]
    report.add_claim(
        judge_every(
            "equal_budget",
            f"Every arm of every cell used at most {cfg.steps} iterations and 1.25x that many loss evaluations "
            "(+1 per L-BFGS restart)",
            ("evaluations over budget", over_budget),
            bound=0,
            kind="check",
        )
    )

    _tables(cfg, records, report, maj, per_seed, by_regime)
    _figures(cfg, records, report, maj)
    m = report.metrics
    report.add_note(
        f"Units: {len(records)} seeds; each regime comparison averages the seed's cells of that regime (seed-majority "
        "labels of the L-BFGS arm) into one number per seed, then a paired one-sided t-test over seeds."
    )
    if "over_fixed_by_more_data" in m:
        report.add_note(
            f"Over-Trained (cell, seed) pairs fixed (E <= {cfg.tau_err:g}) by the next N_f: "
            f"{m['over_fixed_by_more_data']:.0%}; by the best other optimizer at the same N_f: "
            f"{m['over_fixed_by_best_optimizer']:.0%}."
        )
    if "deceptive_flatness" in m:
        report.add_note(
            f"Sharpness misleads in {m['deceptive_flatness']} (cell, seed) pairs by deceptive flatness and "
            f"{m['deceptive_sharpness']} by deceptive sharpness (median lambda_max: good models "
            f"{m['lambda_max_median_good']:.3g}, failing ones {m['lambda_max_median_failing']:.3g})."
        )


def _tables(cfg, records, report, maj, per_seed, by_regime) -> None:
    import pandas as pd

    rows, flat = [], []
    for k in maj:
        cs = [_cell(r, k) for r in records]
        row = {
            "beta": k[0],
            "N_f": k[1],
            "regime": REGIME_NAMES[maj[k]],
            "agree": f"{sum(s[k] == maj[k] for s in per_seed)}/{len(per_seed)}",
        }
        for o in cfg.optimizers:
            row[f"L {ARMS[o]}"] = float(np.exp(np.mean([np.log(max(c["arms"][o]["train_loss"], 1e-300)) for c in cs])))
            row[f"E {ARMS[o]}"] = float(np.mean([c["arms"][o]["test_error"] for c in cs]))
        for m in ("lambda_max", "trace", "cka", "mc"):
            v = [c["metrics"][m] for c in cs if c["metrics"][m] is not None]
            row[m] = float(np.mean(v)) if v else float("nan")
        row["plateaued"] = f"{sum(c['arms']['lbfgs']['plateaued'] for c in cs)}/{len(cs)}"
        rows.append(row)
        for c in cs:
            a = c["arms"]["lbfgs"]
            flat.append(
                {
                    "coefficient": k[0],
                    "n_f": k[1],
                    "seed": c["seed"],
                    "train_loss": a["train_loss"],
                    "test_error": a["test_error"],
                }
            )
    km = classify_regimes(pd.DataFrame(flat), method="kmeans") if len(flat) >= 4 else None
    if km is not None:
        for row in rows:
            lab = km[(km.coefficient == row["beta"]) & (km.n_f == row["N_f"])]["regime"].tolist()
            row["2-means"] = REGIME_NAMES[majority(lab)]
    report.add_table(
        "cells",
        rows,
        "Per cell (seed means; L geometric mean): regime of the L-BFGS arm by seed majority, train loss L and test "
        "error E per optimizer, landscape metrics of the L-BFGS model (lambda_max, trace: Hessian of the training "
        "loss; CKA and linear mode connectivity mc between two initialisations), how many seeds' L-BFGS loss had "
        "plateaued (< 1% change over the last 10% of evaluations), and the threshold-free 2-means label",
    )
    reg_rows = []
    for g in ("under", "well", "over"):
        ks = by_regime[g]
        if not ks:
            continue
        vals = {m: [] for m in ("lambda_max", "trace", "cka", "mc")}
        for r in records:
            for k in ks:
                for m in vals:
                    v = _cell(r, k)["metrics"][m]
                    if v is not None and math.isfinite(v):
                        vals[m].append(v)
        reg_rows.append(
            {
                "regime": REGIME_NAMES[g],
                "cells": len(ks),
                "log10 lambda_max": float(np.mean(np.log10(np.abs(vals["lambda_max"])))),
                "log10 trace": float(np.mean(np.log10(np.abs(vals["trace"])))),
                "CKA": float(np.mean(vals["cka"])),
                "mode connectivity": float(np.mean(vals["mc"])),
                **{
                    f"E {ARMS[o]}": float(np.mean([_cell(r, k)["arms"][o]["test_error"] for r in records for k in ks]))
                    for o in cfg.optimizers
                },
            }
        )
    report.add_table("regimes", reg_rows, "Landscape metrics and test errors per regime (means over cells and seeds)")
    # Over-Trained cells: how often each remedy actually fixes the cell (E <= tau_err), reported, not judged
    n_fs = sorted(cfg.n_fs)
    fix_rows = []
    for k in by_regime["over"]:
        if k[1] == n_fs[-1]:
            continue
        nxt = (k[0], n_fs[n_fs.index(k[1]) + 1])
        for r in records:
            c, cn = _cell(r, k)["arms"], _cell(r, nxt)["arms"]
            best = min((o for o in cfg.optimizers if o != "lbfgs"), key=lambda o: c[o]["test_error"])
            fix_rows.append(
                {
                    "beta": k[0],
                    "N_f": k[1],
                    "seed": _cell(r, k)["seed"],
                    "E L-BFGS": c["lbfgs"]["test_error"],
                    "next N_f": nxt[1],
                    "E L-BFGS next N_f": cn["lbfgs"]["test_error"],
                    "best other optimizer": ARMS[best],
                    "E best other": c[best]["test_error"],
                }
            )
    if fix_rows:
        e_next = [r["E L-BFGS next N_f"] for r in fix_rows]
        e_opt = [r["E best other"] for r in fix_rows]
        report.metrics["over_fixed_by_more_data"] = float(np.mean([e <= cfg.tau_err for e in e_next]))
        report.metrics["over_fixed_by_best_optimizer"] = float(np.mean([e <= cfg.tau_err for e in e_opt]))
    report.add_table(
        "over_trained_remedies",
        fix_rows,
        "Over-Trained cells (seed majority) per seed: test error of L-BFGS, of L-BFGS at the next N_f, and of the "
        f"best other optimizer at the same N_f (a cell is fixed when E <= {cfg.tau_err:g}; errors above 1 are no "
        "better than u = 0)",
    )
    # where sharpness misleads: a failing model as flat as the good ones (deceptive flatness), a good model as sharp
    # as the failing ones (deceptive sharpness)
    good, bad = [], []
    for r in records:
        for k in maj:
            c = _cell(r, k)
            lam, err = c["metrics"]["lambda_max"], c["arms"]["lbfgs"]["test_error"]
            if lam is not None:
                (good if err <= cfg.tau_err else bad).append((k, c["seed"], abs(lam), err))
    mis = []
    if good and bad:
        good_med, bad_med = float(np.median([g[2] for g in good])), float(np.median([b[2] for b in bad]))
        for k, s, lam, err in bad:
            if lam <= good_med and err > cfg.mislead_err:
                mis.append(
                    {
                        "beta": k[0],
                        "N_f": k[1],
                        "seed": s,
                        "kind": "deceptive flatness",
                        "lambda_max": lam,
                        "E": err,
                        "regime": REGIME_NAMES[maj[k]],
                    }
                )
        for k, s, lam, err in good:
            if lam >= bad_med:
                mis.append(
                    {
                        "beta": k[0],
                        "N_f": k[1],
                        "seed": s,
                        "kind": "deceptive sharpness",
                        "lambda_max": lam,
                        "E": err,
                        "regime": REGIME_NAMES[maj[k]],
                    }
                )
        report.metrics["lambda_max_median_good"] = good_med
        report.metrics["lambda_max_median_failing"] = bad_med
        report.metrics["deceptive_flatness"] = sum(m["kind"] == "deceptive flatness" for m in mis)
        report.metrics["deceptive_sharpness"] = sum(m["kind"] == "deceptive sharpness" for m in mis)
    report.add_table(
        "sharpness_misleads",
        mis,
        f"(cell, seed) pairs where sharpness misleads: a failing L-BFGS model (E > {cfg.mislead_err:g}) at least as "
        f"flat as the median good one (E <= {cfg.tau_err:g}): deceptive flatness; a good model at least as sharp as "
        "the median failing one (E > tau_err): deceptive sharpness",
    )
    from scipy.stats import spearmanr

    sp = []
    for g in ("under", "well", "over"):
        pts = [
            (_lg(abs(_cell(r, k)["metrics"]["lambda_max"] or 1e-300)), _lg(_cell(r, k)["arms"]["lbfgs"]["test_error"]))
            for r in records
            for k in by_regime[g]
        ]
        if len(pts) >= 3:
            rho = spearmanr(*zip(*pts)).statistic
            sp.append({"regime": REGIME_NAMES[g], "n (cells x seeds)": len(pts), "Spearman(log lambda, log E)": rho})
    report.add_table(
        "sharpness_vs_error",
        sp,
        "Rank correlation of sharpness and test error inside each regime "
        "(reported, not judged: the paper says it is weak or inconsistent)",
    )
    report.metrics["regime_counts"] = {REGIME_NAMES[g]: len(v) for g, v in by_regime.items()}


def _figures(cfg, records, report, maj) -> None:
    import pandas as pd
    from matplotlib.figure import Figure

    rows = []
    for r in records:
        for c in r["cells"]:
            for o in cfg.optimizers:
                a = c["arms"][o]
                rows.append(
                    {
                        "coefficient": c["coefficient"],
                        "n_f": c["n_f"],
                        "seed": c["seed"],
                        "optimizer": o,
                        "train_loss": a["train_loss"],
                        "test_error": a["test_error"],
                        **{m: c["metrics"][m] for m in ("lambda_max", "trace", "cka", "mc")},
                    }
                )
    df = classify_regimes(pd.DataFrame(rows), cfg.tau_loss, cfg.tau_err)
    fig = Figure(figsize=(4.2 * len(cfg.optimizers), 3.8), layout="constrained")
    for ax, o in zip(fig.subplots(1, len(cfg.optimizers)), cfg.optimizers):
        plot_regime_map(df[df.optimizer == o], "regime", ax=ax, title=f"{ARMS[o]}")
    fig.suptitle("Regime map per optimizer (seed-majority label, seeds agreeing)")
    report.add_figure(
        "regime_map",
        fig,
        "Regime of every (beta, N_f) cell under each optimizer; orange Under-, "
        "green Well-, purple Over-Trained. Claims use the L-BFGS panel.",
    )
    lb = df[df.optimizer == "lbfgs"].copy()
    lb["abs_lambda_max"] = lb["lambda_max"].abs()
    lb["abs_trace"] = lb["trace"].abs()
    fig = Figure(figsize=(16, 7.5), layout="constrained")
    axes = fig.subplots(2, 3).ravel()
    for ax, (m, log) in zip(
        axes,
        [
            ("train_loss", True),
            ("test_error", True),
            ("abs_lambda_max", True),
            ("abs_trace", True),
            ("cka", False),
            ("mc", False),
        ],
    ):
        plot_regime_map(lb, m, ax=ax, log=log, title=f"{'log10 ' if log else ''}{m} (L-BFGS, seed mean)")
    fig.suptitle("Metric heat maps over the convection grid")
    report.add_figure(
        "metric_heatmaps",
        fig,
        "Train loss, test error, Hessian top eigenvalue and trace, CKA and "
        "linear mode connectivity between two initialisations, over (beta, N_f).",
    )
    # learned-component diagnostic: L-BFGS training-loss curves per regime
    fig = Figure(figsize=(12, 3.6), layout="constrained")
    axes = fig.subplots(1, 3, sharey=True)
    for ax, g in zip(axes, ("under", "well", "over")):
        for k in [k for k in maj if maj[k] == g]:
            cur = _cell(records[0], k)["arms"]["lbfgs"]["curve"]
            ax.semilogy(np.linspace(0, 1, len(cur)), cur, label=f"beta={k[0]:g}, N_f={k[1]}")
        ax.axhline(cfg.tau_loss, color="k", ls=":", lw=1)
        ax.set_title(f"{REGIME_NAMES[g]} cells (seed {records[0]['cells'][0]['seed']})")
        ax.set_xlabel("fraction of L-BFGS evaluations")
        if ax is axes[0]:
            ax.set_ylabel("training loss")
        if ax.lines:
            ax.legend(fontsize=6)
    fig.suptitle("Training-loss curves of the L-BFGS PINN per regime (dotted: tau_loss)")
    report.add_figure(
        "loss_curves",
        fig,
        "The PINN learns in every regime; Under-Trained cells plateau above "
        "tau_loss, Over-Trained cells fit their few points to a low loss.",
    )


EXPERIMENT = register(
    Experiment(
        slug="sciml_regimes",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 3},
        measure=measure,
        judge=judge,
        threads=1,
    )
)
