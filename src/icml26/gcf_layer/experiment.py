"""Reproduction: optimal auctions with known optima and general-cost transport maps with known truths.

Auctions (train on a sample of types, report HARD-selection revenue on a fresh sample): 1 item U[0,1]
(revenue 1/4), 2 additive items U[0,1]^2 (Manelli-Vincent, 0.549201; pure bundling 0.544331, separate sales
0.5), Mussa-Rosen (k = xy, cost y^2/2, profit 1/12), a square-root kernel (k = x sqrt(y), cost y^2/2, profit
(9/28) 2^(-4/3)), 2 unit-demand items (posted-price bound 2/(3 sqrt 3)); RochetNet on the linear settings.
Transport: mu = N(0,1) to Exp(1) or a bimodal mixture in 1-D, and a 2-D product of mixtures and Gaussians,
costs |x-y|^p / p with p in {1.5, 3}; truth = (coordinate-wise) monotone rearrangement; L2-UVP vs POT.

Auction fits (GCF layer and RochetNet alike) use restarts at equal total steps: several starts explore briefly,
the best on held-out types continues (issue 25: the 2-item and unit-demand shortfalls were local optima).  Beside
the fixed-candidate transport, the paper's learned-candidate version (n << M candidates, inner conjugate solve)
runs on two 1-D cases.

Statement kinds: guarantees by construction are checks (IR of a hard menu with the null option; revenue of an
IC/IR menu <= the optimum, one-sided, with the one-item bound as its own check; weak duality of the hard
c-transform against ot.emd for both transports); preconditions say the setting has something to learn (the
Manelli-Vincent menu resolvably beats pure bundling on the fresh types; the trivial affine map misses the exact
transport map); revenue floors ("in every seed"), L2-UVP and dual-gap targets are claims.  Agreement with
RochetNet is a diagnostic table, not a claim (both can sit in one local optimum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import ot  # noqa: E402, F401  (the [ot] extra: the POT baseline needs it)
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from scipy import stats  # noqa: E402

from icml26.core import (  # noqa: E402
    Experiment,
    Report,
    judge_every,
    judge_superiority,
    judge_threshold,
    mean_ci,
    register,
    seed_everything,
)

from .baselines import BarycentricOT, PureBundling, RochetNet, SeparateSales  # noqa: E402
from .kernels import linear_kernel, lp_cost, sqrt_value_kernel  # noqa: E402
from .layer import FinitelyConvex  # noqa: E402
from .mechanism import MenuMechanism  # noqa: E402
from .transport import GeneralCostOT, LearnedCandidateOT, l2_uvp  # noqa: E402

# ground truths (spec section 5; closed forms)
ONE_ITEM = 0.25
MV_OPT = 4 / 9 + 2 * math.sqrt(2) / 27  # 0.549201
MV_PRICES = (2 / 3, 2 / 3, (4 - math.sqrt(2)) / 3)
BUNDLE_PRICE = math.sqrt(2 / 3)
BUNDLE_OPT = (2 / 3) * math.sqrt(2 / 3)  # 0.544331
SEPARATE_OPT = 0.5
MUSSA_ROSEN = 1 / 12
SQRT_KERNEL = (9 / 28) * 2 ** (-4 / 3)  # 0.127559
UNIT_DEMAND_POSTED = 2 / (3 * math.sqrt(3))  # 0.384900

AUCTIONS = ("one_item", "mv", "mussa_rosen", "sqrt", "unit_demand")
OT_CASES = ("1d-exp-p1.5", "1d-exp-p3", "1d-bimodal-p1.5", "1d-bimodal-p3", "2d-mix-p1.5", "2d-mix-p3")


@dataclass(frozen=True)
class Config:
    auctions: tuple[str, ...] = AUCTIONS
    n_big: int = 128  # menu size, 2-item settings
    n_small: int = 32  # menu size, 1-item settings
    train_size: int = 65536
    batch_big: int = 2048
    batch_small: int = 1024
    soft_steps: int = 2600  # 2-item settings (mv, unit demand)
    ste_steps: int = 900
    soft_steps_small: int = 1000  # 1-item settings (one item, Mussa-Rosen, sqrt kernel): 32 options on a line
    ste_steps_small: int = 400
    lr: float = 1e-2
    ste_lr: float = 1e-3
    lr_unit_demand: float = 3e-2  # the budget-constrained menu needs larger steps
    temp: float = 500.0
    rochet_temp: float = 1000.0
    restarts: int = 8  # starts per fit (GCF layer and RochetNet alike), at the same total steps as one start
    explore_steps: int = 250  # soft steps each start gets before the held-out selection (2-item settings)
    explore_steps_small: int = 60  # the same in the 1-item settings
    val_size: int = 32768  # held-out types the restarts are selected on (not trained on, not evaluated on)
    eval_size: int = 200_000
    ot_cases: tuple[str, ...] = OT_CASES
    ot_samples: int = 1024  # per side
    ot_steps: int = 1200
    ot_batch: int = 256
    ot_lr: float = 1e-2
    ot_temp: float = 100.0
    ot_test: int = 20_000
    lc_cases: tuple[str, ...] = ("1d-exp-p3", "1d-bimodal-p1.5")  # learned-candidate transport (one per target/p)
    lc_candidates: int = 64
    lc_steps: int = 600
    lc_lr: float = 3e-2


QUICK = Config(
    n_big=32,
    n_small=16,
    train_size=8192,
    batch_big=512,
    batch_small=512,
    soft_steps=200,
    ste_steps=80,
    soft_steps_small=200,
    ste_steps_small=80,
    lr=3e-2,
    ste_lr=3e-3,
    restarts=3,
    explore_steps=40,
    explore_steps_small=40,
    val_size=4096,
    eval_size=50_000,
    ot_cases=("1d-exp-p3", "2d-mix-p3"),
    ot_samples=256,
    ot_steps=200,
    ot_batch=128,
    ot_test=5000,
    lc_cases=("1d-exp-p3",),
    lc_candidates=16,
    lc_steps=100,
)
FULL = Config()


# -------------------------------------------------------------------------------------------- auctions
def _quad_cost(y: torch.Tensor) -> torch.Tensor:
    return (y**2).sum(1) / 2


_SETTINGS = {  # name: (dim, kernel, seller cost, y_budget, big menu?)
    "one_item": (1, linear_kernel, None, None, False),
    "mv": (2, linear_kernel, None, None, True),
    "mussa_rosen": (1, linear_kernel, _quad_cost, None, False),
    "sqrt": (1, sqrt_value_kernel, _quad_cost, None, False),
    "unit_demand": (2, linear_kernel, None, 1.0, True),
}


def _auction(name: str, cfg: Config, seed: int) -> dict:
    dim, kernel, cost_fn, budget, big = _SETTINGS[name]
    n, batch = (cfg.n_big, cfg.batch_big) if big else (cfg.n_small, cfg.batch_small)
    soft, ste, explore = (
        (cfg.soft_steps, cfg.ste_steps, cfg.explore_steps)
        if big
        else (cfg.soft_steps_small, cfg.ste_steps_small, cfg.explore_steps_small)
    )
    seed_everything(seed)
    g = torch.Generator().manual_seed(seed)
    train = torch.rand(cfg.train_size, dim, generator=g)
    fresh = torch.rand(cfg.eval_size, dim, generator=g)  # revenue is measured on fresh types only
    val = torch.rand(cfg.val_size, dim, generator=g)  # the restarts are selected on these held-out types
    layer = FinitelyConvex(
        n,
        dim,
        dim,
        kernel,
        y_bounds=(0.0, 1.0),
        y_budget=budget,
        default_option=True,
        temp=cfg.temp,
        b_init=torch.rand(n, generator=g) * dim,
        generator=g,
    )
    lr, ste_lr = (cfg.lr, cfg.ste_lr)
    if name == "unit_demand":
        lr, ste_lr = cfg.lr_unit_demand, cfg.lr_unit_demand / 10
    mech = MenuMechanism(layer, cost_fn).fit(
        train,
        soft_steps=soft,
        ste_steps=ste,
        lr=lr,
        ste_lr=ste_lr,
        batch_size=batch,
        generator=g,
        restarts=cfg.restarts,
        explore_steps=explore,
        val_types=val,
    )
    choice, pay, util = mech.outcomes(fresh)
    profit = pay - cost_fn(choice) if cost_fn is not None else pay
    out = {
        "gcf": mech.revenue(fresh),
        "gcf_se": float(profit.std() / math.sqrt(len(profit))),  # Monte-Carlo error of the fresh-type revenue
        "gcf_soft_train": mech.revenue(train, hard=False),
        "min_utility": float(util.min()),
        "restart_val": [r["val_objective"] for r in mech.restarts_],
        "selected": mech.selected_,
    }
    if kernel is linear_kernel and cost_fn is None and budget is None:  # RochetNet's class: same budget
        rn = RochetNet(n, dim, temp=cfg.rochet_temp, generator=g).fit(
            train,
            steps=soft + ste,
            lr=cfg.lr,
            batch_size=batch,
            generator=g,
            restarts=cfg.restarts,
            explore_steps=explore,
            val_types=val,
        )
        out["rochetnet"] = rn.revenue(fresh)
        with torch.no_grad():
            out["rochetnet_se"] = float(rn._payment(fresh, hard=True).std() / math.sqrt(len(fresh)))
    if name == "mv":
        x = fresh.numpy().astype(float)
        out["bundling"] = PureBundling(BUNDLE_PRICE).fit(x).revenue(x)
        out["separate"] = SeparateSales(0.5).fit(x).revenue(x)
        out["bundling_tuned"] = PureBundling().fit(train.numpy().astype(float)).revenue(x)
        out["mv_optimum"] = _menu_revenue(x, [[0, 0], [1, 0], [0, 1], [1, 1]], [0, *MV_PRICES])
        alloc, price = mech.menu()
        out["menu"] = {"alloc": alloc.tolist(), "price": price.tolist()}
    return out


def _menu_revenue(types: np.ndarray, alloc, price) -> float:
    """Revenue of a hand-set menu on ``types``: each buyer takes the best option, ties to the higher price."""
    a, p = np.asarray(alloc, dtype=float), np.asarray(price, dtype=float)
    u = types @ a.T - p
    best = u.max(1, keepdims=True)
    return float(np.where(u >= best - 1e-12, p, -np.inf).max(1).mean())


# ------------------------------------------------------------------------------------------- transport
_MIX_MEANS, _MIX_SD = (-3.0, 0.0, 3.0), 0.3  # 2-D mixture (inferred; separated: the affine map misses, see docs)
_BI_MEANS, _BI_SD = (-2.0, 2.0), 0.5  # 1-D bimodal target


def _mix_sample(rng: np.random.Generator, n: int, means: tuple[float, ...], sd: float) -> np.ndarray:
    return np.asarray(means)[rng.integers(0, len(means), n)] + sd * rng.standard_normal(n)


def _mix_quantile(u: np.ndarray, means: tuple[float, ...], sd: float) -> np.ndarray:
    grid = np.linspace(min(means) - 9 * sd, max(means) + 9 * sd, 40001)
    cdf = np.mean([stats.norm.cdf(grid, m, sd) for m in means], axis=0)
    return np.interp(u, cdf, grid)


def _ot_data(case: str, rng: np.random.Generator, n: int):
    """Samples (X ~ mu, Y ~ nu) and the exact map T* for ``case``."""
    dim, target, _ = case.split("-")
    if dim == "1d":
        X = rng.standard_normal((n, 1))
        if target == "exp":
            Y = rng.exponential(size=(n, 1))

            def T(x):
                return -stats.norm.logsf(x)
        else:
            Y = _mix_sample(rng, n, _BI_MEANS, _BI_SD)[:, None]

            def T(x):
                return _mix_quantile(stats.norm.cdf(x), _BI_MEANS, _BI_SD)

        return X, Y, T
    # 2-D: mu = mixture x N(0, 1.5^2)  ->  nu = N(0, 1.5^2) x mixture; separable cost => coordinate-wise maps
    X = np.column_stack([_mix_sample(rng, n, _MIX_MEANS, _MIX_SD), 1.5 * rng.standard_normal(n)])
    Y = np.column_stack([1.5 * rng.standard_normal(n), _mix_sample(rng, n, _MIX_MEANS, _MIX_SD)])

    def T(x):
        u1 = np.mean([stats.norm.cdf(x[:, 0], m, _MIX_SD) for m in _MIX_MEANS], axis=0)
        return np.column_stack(
            [stats.norm.ppf(u1, 0, 1.5), _mix_quantile(stats.norm.cdf(x[:, 1], 0, 1.5), _MIX_MEANS, _MIX_SD)]
        )

    return X, Y, T


def _affine_map(X: np.ndarray, Y: np.ndarray):
    """The trivial map: coordinate-wise moment matching ``T(x) = m_Y + s_Y (x - m_X) / s_X`` (the exact map only
    when both marginals are of one location-scale family)."""
    mx, sx, my, sy = X.mean(0), X.std(0), Y.mean(0), Y.std(0)
    return lambda x: my + sy * (x - mx) / sx


def _transport(case: str, cfg: Config, seed: int) -> dict:
    seed_everything(seed)
    rng = np.random.default_rng(seed)
    p = float(case.split("-p")[1])
    cost = lp_cost(p)
    X, Y, T_star = _ot_data(case, rng, cfg.ot_samples)
    Xte, Yte, _ = _ot_data(case, rng, cfg.ot_test)
    truth = T_star(Xte)
    gcf = GeneralCostOT(
        cost, steps=cfg.ot_steps, lr=cfg.ot_lr, batch_size=cfg.ot_batch, temp=cfg.ot_temp, seed=seed
    ).fit(X, Y)
    pot = BarycentricOT(cost).fit(X, Y)
    out = {
        "gcf_soft": l2_uvp(gcf.transport(Xte, "soft"), truth, Yte),
        "gcf_hard": l2_uvp(gcf.transport(Xte, "hard"), truth, Yte),
        "pot": l2_uvp(pot.transport(Xte), truth, Yte),
        "dual_gap": (pot.cost_ - gcf.dual_value(X)) / pot.cost_,
        "affine": l2_uvp(_affine_map(X, Y)(Xte), truth, Yte),
    }
    if case in cfg.lc_cases:  # the paper's finite representation: n << M learned candidates, inner conjugate solve
        lc = LearnedCandidateOT(
            cost, n_candidates=cfg.lc_candidates, steps=cfg.lc_steps, lr=cfg.lc_lr, temp=cfg.ot_temp, seed=seed
        ).fit(X, Y)
        out["lc_soft"] = l2_uvp(lc.transform(Xte), truth, Yte)
        out["lc_hard"] = l2_uvp(lc.transport(Xte, "hard"), truth, Yte)
        out["lc_dual_gap"] = (pot.cost_ - lc.dual_value()) / pot.cost_
    # curves for the figure (every seed, so each record is self-contained; the figure shows the first seed's)
    if X.shape[1] == 1:
        grid = np.linspace(-2.5, 2.5, 201)[:, None]
    else:
        t = np.linspace(-4, 4, 201)
        grid = np.concatenate([np.column_stack([t, np.zeros_like(t)]), np.column_stack([np.zeros_like(t), t])])
    out["curve"] = {
        "x": grid.tolist(),
        "truth": T_star(grid).tolist(),
        "soft": gcf.transport(grid, "soft").tolist(),
        "hard": gcf.transport(grid, "hard").tolist(),
        "pot": pot.transport(grid).tolist(),
    }
    return out


# --------------------------------------------------------------------------------------------- figures
def _menu_figure(menu: dict, seed: int = 0) -> Figure:
    t = np.linspace(0, 1, 301)
    xx = torch.tensor(np.stack(np.meshgrid(t, t), -1).reshape(-1, 2), dtype=torch.float32)

    def items(alloc, price):
        a, p = torch.tensor(alloc, dtype=torch.float32), torch.tensor(price, dtype=torch.float32)
        u = xx @ a.T - p
        best = u.max(1, keepdim=True).values
        idx = torch.where(u >= best, p.expand_as(u), torch.full_like(u, -math.inf)).argmax(1)
        return a[idx].sum(1).reshape(len(t), len(t)).numpy()

    truth = items([[0, 0], [1, 0], [0, 1], [1, 1]], [0, *MV_PRICES])
    fig = Figure(figsize=(9, 4))
    for k, (z, title) in enumerate(
        [
            (items(menu["alloc"], menu["price"]), f"learned (GCF layer, seed {seed})"),
            (truth, "Manelli-Vincent optimum"),
        ]
    ):
        ax = fig.add_subplot(1, 2, k + 1)
        im = ax.imshow(z, origin="lower", extent=(0, 1, 0, 1), vmin=0, vmax=2, cmap="viridis")
        ax.set(title=title, xlabel="value item 1", ylabel="value item 2")
    fig.colorbar(im, ax=fig.axes, label="expected number of items allocated")
    return fig


def _ot_figure(curves: dict[str, dict]) -> Figure:
    fig = Figure(figsize=(4 * len(curves), 3.4))
    for k, (case, c) in enumerate(curves.items()):
        ax = fig.add_subplot(1, len(curves), k + 1)
        x = np.asarray(c["x"])
        col, xs = (0, x[:, 0]) if x.shape[1] == 1 else (0, x[: len(x) // 2, 0])
        sl = slice(None) if x.shape[1] == 1 else slice(0, len(x) // 2)
        for key, style in (("truth", "k-"), ("soft", "C0-"), ("hard", "C0:"), ("pot", "C1--")):
            ax.plot(xs, np.asarray(c[key])[sl, col], style, lw=1.2, label=key if key != "soft" else "GCF (twist)")
        ax.set(title=case + ("" if x.shape[1] == 1 else " (T_1 along x_2=0)"), xlabel="x", ylabel="T(x)")
        if k == 0:
            ax.legend(fontsize=7)
    return fig


# ------------------------------------------------------------------------------------------------- run
def _vals(rows: list[dict], key: str) -> list[float]:
    return [r[key] for r in rows]


def measure(config: Config, seed: int, progress=None) -> dict:
    """One seed's replicate: training and fresh types, menu initialisation, transport samples all from ``seed``."""

    def cached(key, fn):
        return fn() if progress is None else progress.cached(key, fn)

    return {
        "auctions": {a: cached(f"auction-{a}", lambda a=a: _auction(a, config, seed)) for a in config.auctions},
        "transport": {c: cached(f"ot-{c}", lambda c=c: _transport(c, config, seed)) for c in config.ot_cases},
    }


TRUTHS = {
    "one_item": ONE_ITEM,
    "mv": MV_OPT,
    "mussa_rosen": MUSSA_ROSEN,
    "sqrt": SQRT_KERNEL,
    "unit_demand": UNIT_DEMAND_POSTED,
}
UPPER = ("mv", "mussa_rosen", "sqrt", "unit_demand")  # settings of auction_revenue_upper_bound (one item: its own)
UPPER_BOUND = {**TRUTHS, "unit_demand": MV_OPT}  # unit-demand menus are additive menus: the additive optimum bounds
MV_TARGET = 0.5460  # issue 25: 2 items >= 0.5460 in 5 of 5 seeds
UD_TARGET = 0.3829  # issue 25: unit demand >= 0.3829 (= 0.3849 - 0.002) in 5 of 5 seeds
REVENUE_Z = 4.0  # Monte-Carlo slack of the revenue upper-bound check, in standard errors of the fresh-type mean


def judge(config: Config, records: list[dict], report: Report) -> None:
    seeds = list(report.seeds) if report.seeds is not None else list(range(len(records)))
    auc: dict[str, list[dict]] = {a: [r["auctions"][a] for r in records] for a in config.auctions}
    otr: dict[str, list[dict]] = {c: [r["transport"][c] for r in records] for c in config.ot_cases}
    truths = TRUTHS
    total = config.soft_steps + config.ste_steps
    small = config.soft_steps_small + config.ste_steps_small
    for arm in ("GCF layer", "RochetNet"):
        report.set_tuning(
            arm,
            configs=config.restarts,
            steps=total / config.restarts,
            note=f"{config.restarts} starts x {config.explore_steps} exploring steps, the best on "
            f"{config.val_size} held-out types continues; {total} optimiser steps in all in the 2-item settings "
            f"({small} with {config.explore_steps_small}-step starts in the 1-item ones), same menu size and types",
        )
    for arm, what in (
        ("Manelli-Vincent menu", "the optimal menu"),
        ("pure bundling", "the optimal bundle price"),
        ("separate sales", "the optimal item price"),
    ):
        report.set_tuning(arm, configs=1, steps=0, note=f"closed form: {what}, nothing left to tune")
    rows = []
    for a, rs in auc.items():
        row = {"setting": a, "truth": truths[a], "gcf (hard, fresh)": str(mean_ci(_vals(rs, "gcf")))}
        if "rochetnet" in rs[0]:
            row["rochetnet"] = str(mean_ci(_vals(rs, "rochetnet")))
        row["gcf soft (train)"] = str(mean_ci(_vals(rs, "gcf_soft_train")))
        row["min buyer utility"] = min(_vals(rs, "min_utility"))
        rows.append(row)
    report.add_table(
        "auctions",
        rows,
        "Revenue (profit where the seller has a cost), mean ± std over seeds; "
        "hard selection on fresh types. 'truth' is the closed-form optimum (posted-price bound for "
        "unit demand).",
    )
    report.metrics["auctions"] = {a: [{k: v for k, v in r.items() if k != "menu"} for r in rs] for a, rs in auc.items()}

    # checks: hard menus with the default option (0, 0) are IR by construction, and an IC/IR mechanism cannot earn
    # more than the closed-form optimum (up to the Monte-Carlo error of the fresh-type mean)
    report.add_claim(
        judge_every(
            "auction_ir",
            "Every buyer's utility under the learned hard menu is >= 0 (individual rationality: the menu always "
            f"offers the null option), on every fresh type of every setting ({', '.join(auc)}) and seed",
            ("min buyer utility", [r["min_utility"] for rs in auc.values() for r in rs]),
            bound=0.0,
            sense=">=",
            tol=1e-6,
            kind="check",
        )
    )
    # checks: no IC/IR menu earns more than the optimum (unit demand: the additive optimum, since every unit-demand
    # menu is also an additive menu), up to REVENUE_Z Monte-Carlo standard errors of the fresh-type mean; the
    # one-item bound is its own check so that the one-sided claim below cannot hide an impossible revenue
    for cid, settings in (("auction_one_item_upper", ("one_item",)), ("auction_revenue_upper_bound", UPPER)):
        sets = [a for a in settings if a in auc]
        if not sets:
            continue
        z = [(r["gcf"] - UPPER_BOUND[a]) / r["gcf_se"] for a in sets for r in auc[a]]
        z_rn = [(r["rochetnet"] - UPPER_BOUND[a]) / r["rochetnet_se"] for a in sets for r in auc[a] if "rochetnet" in r]
        what = (
            "1 item, value U[0,1]: the learned menu's revenue (GCF layer and RochetNet) is <= 1/4 + "
            f"{REVENUE_Z:g} Monte-Carlo s.e. (no IC/IR mechanism earns more than the posted price 1/2)"
            if cid == "auction_one_item_upper"
            else "The learned IC/IR menus' revenue (GCF layer and RochetNet) on fresh types never exceeds the "
            f"optimum by more than {REVENUE_Z:g} Monte-Carlo s.e. (settings: {', '.join(sets)}; unit demand is "
            "bounded by the additive optimum 0.549201)"
        )
        report.add_claim(
            judge_every(
                cid,
                what,
                ("(revenue - optimum) / MC s.e.", z + z_rn),
                bound=REVENUE_Z,
                sense="<=",
                kind="check",
            )
        )
    if "one_item" in auc:
        rs = auc["one_item"]
        report.add_claim(
            judge_threshold(
                "auction_one_item",
                "1 item, value U[0,1]: the learned menu's revenue reaches the optimum 1/4 within 0.003 "
                "(revenue >= 0.247; the side above 1/4 is the check auction_one_item_upper)",
                ("GCF layer revenue", _vals(rs, "gcf")),
                threshold=ONE_ITEM - 0.003,
                sense=">=",
                mc_se=_vals(rs, "gcf_se"),
            )
        )
    if "mv" in auc:
        mv = _vals(auc["mv"], "gcf")
        report.add_claim(
            judge_superiority(
                "mv_bundling_gap",
                "2 additive items: on the same fresh types the Manelli-Vincent optimal menu earns more than pure "
                "bundling at its optimal price (the setting leaves revenue for a learned menu to find beyond the "
                "trivial bundle)",
                ("Manelli-Vincent menu", _vals(auc["mv"], "mv_optimum")),
                {"pure bundling": _vals(auc["mv"], "bundling")},
                test="ttest",
                kind="precondition",
            )
        )
        report.add_claim(
            judge_every(
                "auction_two_items",
                f"2 additive items U[0,1]^2: revenue >= {MV_TARGET} (optimum 0.549201) in every seed "
                f"({config.restarts} starts at equal total steps, selected on held-out types)",
                ("GCF layer revenue", mv),
                bound=MV_TARGET,
                sense=">=",
                baselines={"RochetNet (same starts and steps)": _vals(auc["mv"], "rochetnet")},
                requires=["mv_bundling_gap"],
            )
        )
        report.add_claim(
            judge_superiority(
                "auction_beats_bundling",
                "2 additive items: the learned menu beats pure bundling (0.544331) and "
                "separate sales (0.5), paired on the same fresh types",
                ("GCF layer", mv),
                {
                    "pure bundling": _vals(auc["mv"], "bundling"),
                    "separate sales": _vals(auc["mv"], "separate"),
                },
                test="ttest",
                requires=["mv_bundling_gap"],
            )
        )
        wins = sum(m > b for m, b in zip(mv, _vals(auc["mv"], "bundling")))
        report.add_note(
            f"2-item menu beats pure bundling in {wins} of {len(mv)} seeds (closed-form bundle price; "
            f"bundling with a grid-tuned price: {mean_ci(_vals(auc['mv'], 'bundling_tuned'))})."
        )
        report.add_figure(
            "mv_menu",
            _menu_figure(auc["mv"][0]["menu"], seeds[0]),
            f"Allocation regions of the learned 2-item menu (seed {seeds[0]}) and of the Manelli-Vincent "
            "optimum: colour = expected number of items the buyer of that type receives.",
        )
    for a, val, cid in (
        ("mussa_rosen", MUSSA_ROSEN, "auction_mussa_rosen"),
        ("sqrt", SQRT_KERNEL, "auction_sqrt_kernel"),
    ):
        if a in auc:
            report.add_claim(
                judge_threshold(
                    cid,
                    f"{a.replace('_', '-')}: profit within 2% of the closed form {val:.6f}",
                    ("relative error", [abs(v - val) / val for v in _vals(auc[a], "gcf")]),
                    threshold=0.02,
                    sense="<=",
                    mc_se=[se / val for se in _vals(auc[a], "gcf_se")],
                )
            )
    if "unit_demand" in auc:
        report.add_claim(
            judge_every(
                "auction_unit_demand",
                f"2 unit-demand items: revenue >= {UD_TARGET} (posted-price bound 0.3849 - 0.002) in every seed "
                f"({config.restarts} starts at equal total steps, selected on held-out types)",
                ("GCF layer revenue", _vals(auc["unit_demand"], "gcf")),
                bound=UD_TARGET,
                sense=">=",
            )
        )
    lin = [a for a in auc if "rochetnet" in auc[a][0]]
    if lin:  # diagnostic only: agreement between two optimisers says nothing when both sit in one local optimum
        report.add_table(
            "rochetnet",
            [
                {
                    "setting": a,
                    "seed": seeds[i],
                    "optimum": TRUTHS[a],
                    "GCF layer": r["gcf"],
                    "RochetNet": r["rochetnet"],
                    "GCF gap to optimum": TRUTHS[a] - r["gcf"],
                    "RochetNet gap to optimum": TRUTHS[a] - r["rochetnet"],
                    "GCF start selected": r.get("selected", 0),
                }
                for a in lin
                for i, r in enumerate(auc[a])
            ],
            "Diagnostic, not a judged statement: GCF layer and RochetNet (same starts, steps, menu size and types) "
            "against the closed-form optimum, per seed, hard revenue on the fresh types.",
        )

    if otr:
        report.add_table(
            "transport",
            [
                {
                    "case": c,
                    "GCF twist map": str(mean_ci(_vals(rs, "gcf_soft"))),
                    "GCF hard map": str(mean_ci(_vals(rs, "gcf_hard"))),
                    "POT emd + barycentric": str(mean_ci(_vals(rs, "pot"))),
                    "dual gap vs emd": str(mean_ci(_vals(rs, "dual_gap"))),
                    "affine moment-matching map": str(mean_ci(_vals(rs, "affine"))),
                }
                for c, rs in otr.items()
            ],
            "L2-UVP (%) on fresh source points against the exact map, mean ± std over seeds; dual gap = "
            "(emd cost - GCF dual) / emd cost on the training samples (>= 0 by weak duality); the affine map "
            "matches each coordinate's mean and standard deviation (the trivial rule).",
        )
        report.metrics["transport"] = {
            c: [{k: v for k, v in r.items() if k != "curve"} for r in rs] for c, rs in otr.items()
        }
        report.set_tuning("GCF map", configs=1, steps=config.ot_steps, note="one learning rate and temperature")
        report.set_tuning(
            "learned-candidate GCF map",
            configs=1,
            steps=config.lc_steps,
            note=f"{config.lc_candidates} candidates, one learning rate, full-batch steps",
        )
        report.set_tuning("POT", configs=1, steps=0, note="exact LP (ot.emd), nothing to tune")
        lcs = [c for c in otr if "lc_dual_gap" in otr[c][0]]
        gaps = [r["dual_gap"] for rs in otr.values() for r in rs] + [r["lc_dual_gap"] for c in lcs for r in otr[c]]
        report.add_claim(
            judge_every(
                "ot_weak_duality",
                "The GCF dual value on the training sample never exceeds the exact discrete OT cost (ot.emd) on "
                "the same samples (weak duality: the hard c-transform makes a feasible dual pair), for the fixed- "
                "and the learned-candidate potentials, relative tol 1e-4",
                ("(emd cost - GCF dual) / emd cost", gaps),
                bound=0.0,
                sense=">=",
                tol=1e-4,
                kind="check",
            )
        )
        if lcs:
            report.add_table(
                "learned_candidates",
                [
                    {
                        "case": c,
                        "learned-candidate twist map": str(mean_ci(_vals(otr[c], "lc_soft"))),
                        "learned-candidate hard map": str(mean_ci(_vals(otr[c], "lc_hard"))),
                        "dual gap vs emd2": str(mean_ci(_vals(otr[c], "lc_dual_gap"))),
                        "fixed-candidate twist map": str(mean_ci(_vals(otr[c], "gcf_soft"))),
                    }
                    for c in lcs
                ],
                f"The paper's finite representation: {config.lc_candidates} learned candidates (vs "
                f"{config.ot_samples} fixed ones), inner conjugate solve over the source sample; L2-UVP (%) on fresh "
                "points and (emd2 - dual) / emd2 on the training samples, mean ± std over seeds.",
            )
        for dim, bound in (("1d", 5.0), ("2d", 10.0)):
            cases = [c for c in otr if c.startswith(dim)]
            if cases:
                report.add_claim(
                    judge_threshold(
                        f"ot_{dim}_affine_fails",
                        f"{dim.upper()} transport: the trivial affine (moment-matching) map misses the exact map, "
                        f"L2-UVP >= {bound:g}% in the easiest case of each seed (so a non-linear map must be "
                        f"learned; cases: {', '.join(cases)})",
                        (
                            "affine map L2-UVP (%), min over cases",
                            [min(r["transport"][c]["affine"] for c in cases) for r in records],
                        ),
                        threshold=bound,
                        sense=">=",
                        kind="precondition",
                    )
                )
                report.add_claim(
                    judge_every(
                        f"ot_{dim}_uvp",
                        f"{dim.upper()} transport, costs |x-y|^p with p != 2: L2-UVP < {bound:g}% "
                        f"against the exact map (cases: {', '.join(cases)})",
                        ("GCF map L2-UVP (%)", [r["gcf_soft"] for c in cases for r in otr[c]]),
                        bound=bound,
                        sense="<=",
                        baselines={"POT emd + barycentric": [r["pot"] for c in cases for r in otr[c]]},
                        requires=[f"ot_{dim}_affine_fails"],
                    )
                )
        if lcs:
            report.add_claim(
                judge_every(
                    "ot_learned_uvp",
                    f"1D transport with {config.lc_candidates} learned candidates (n << M = {config.ot_samples}): "
                    f"L2-UVP < 5% against the exact map (cases: {', '.join(lcs)})",
                    ("learned-candidate GCF map L2-UVP (%)", [r["lc_soft"] for c in lcs for r in otr[c]]),
                    bound=5.0,
                    sense="<=",
                    baselines={"POT emd + barycentric": [r["pot"] for c in lcs for r in otr[c]]},
                    requires=["ot_1d_affine_fails"],
                )
            )
            report.add_claim(
                judge_every(
                    "ot_learned_dual",
                    f"1D transport with {config.lc_candidates} learned candidates: the dual value is within 2% of "
                    f"the exact discrete OT cost ot.emd2 on the same samples (cases: {', '.join(lcs)})",
                    ("learned-candidate GCF map (emd2 - dual) / emd2", [r["lc_dual_gap"] for c in lcs for r in otr[c]]),
                    bound=0.02,
                    sense="<=",
                )
            )
        curves = {c: rs[0]["curve"] for c, rs in otr.items() if "curve" in rs[0]}
        if curves:
            report.add_figure("ot_maps", _ot_figure(curves), f"Learned vs exact transport maps (seed {seeds[0]}).")


EXPERIMENT = register(
    Experiment(
        slug="gcf_layer",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 5},
        measure=measure,
        judge=judge,
        threads=1,
    )
)
