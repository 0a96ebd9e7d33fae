"""Reproduction of CReL's claims on S1 (synthetic, known truth) and S2 (sklearn digits), CPU-sized: the measurement
(``Config``, the presets, ``measure``); the evidence (claims, controls, checks, preconditions) is in
:mod:`icml26.crel.claims`.

Per seed and latent dimension ``d``:

1. S1 data ``y = f(x) + A(x) eps`` (+ rare failures); a conditional-Gaussian MLP generator fitted on a
   separate training draw; ``n_cal + n_test`` real pairs.  Re-split coverage: scores of every pair for each
   set type with one generator draw per condition, then ``n_splits`` random calibration/test splits per
   ``alpha`` (this only exercises the rank arithmetic of the conformal quantile: a check).
2. End-to-end coverage (a check): ``e2e_calibrations`` fresh calibration draws, with ``n_cal`` cycling over
   ``e2e_n_cals``, each judged on ``e2e_n_test`` fresh test pairs through ``predict_set(x).contains(y)``; the
   deviation of each from its exact expectation ``k/(n+1)`` is judged two-sided with a Monte-Carlo-aware
   interval inside ``e2e_band``.  Every ``n`` in ``e2e_n_cals`` is one where ``ceil(n (1 - alpha))`` (the rank
   without its ``+1``) differs from ``ceil((n + 1)(1 - alpha))``, so that bug moves the expected coverage by
   ``1/(n+1)`` on every calibration (mean 0.032 > 2 x the band), not on half of them.
3. Informativeness per generator: sets calibrated on the first ``n_cal`` pairs, log-volume of each set type
   (ellipsoid, ball, hull, PCP) for the same test conditions and the same generator draws, with the fitted
   Gaussian and with the oracle mixture sampler (and on digits with the class-conditional generator).
4. Optimizer: PGD vs the closed form for a random linear metric on those sets; PGD (default starts, several
   optimizer seeds) vs a dense polar grid on random 2-D ellipses with a non-convex metric.
5. Interpretability (the paper's premise: a risky generator with *matched average quality*): a "safe" sampler
   (the true failure rate ``p_fail``, noise scaled by ``safe_scale[d]`` > 1: blurrier everywhere) vs a "risky"
   sampler (the true noise, failure rate ``p_fail_risky``), each calibrated on the same real pairs; the scale
   was set on the dev seeds so that the two have the same average metric.  Per condition: the reliability R,
   the average metric, worst-of-K and the centre metric ``m(x, mu(x))`` (the control arm), on the same draws.
S2 digits: class-conditional Gaussians in PCA-16 (safe: Cholesky factors x ``digits_good_scale``; risky: the
fitted ones, 15% samples from the nearest other class), metric ``log p_clf(c | z)`` of a logistic regression,
calibration on held-out real digits.

Seeds are the unit (``measure(config, seed)``: data, generator fit, calibration, test draws all from the seed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from icml26.core import Experiment, register, seed_everything

from ._data import (
    MixtureSampler,
    SyntheticProblem,
    bump_metric,
    fit_gaussian_generator,
    linear_metric,
    make_digits_task,
)
from ._optimize import linear_worst_case, worst_case
from ._reliability import SET_TYPES, ConformalReliability, conformal_quantile
from ._sets import Ellipsoid, HullSet
from .baselines import GlobalCovarianceReliability, sample_metrics
from .claims import SET_NAMES, VOLUME_SETS, exact_rank, judge


@dataclass(frozen=True)
class Config:
    dims: tuple[int, ...] = (2, 8)
    n_train: int = 2000  # pairs to fit the MLP generator
    train_steps: int = 300
    n_cal: int = 500
    n_test: int = 500
    n_samples: int = 32  # K
    alphas: tuple[float, ...] = (0.05, 0.1, 0.2)
    curve_alphas: tuple[float, ...] = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
    n_splits: int = 100
    volume_alpha: float = 0.1
    n_volume_x: int = 200
    n_mc: int = 2000  # Monte Carlo points per PCP volume
    n_linear_instances: int = 10  # per seed and dim
    n_grid_instances: int = 10  # per seed
    n_grid: int = 400
    interp_alpha: float = 0.1
    n_interp_x: int = 100
    n_interp_baseline_x: int = 30  # conditions on which the ball / PCP reliability is also computed
    p_fail: float = 0.05
    p_fail_risky: float = 0.20
    # the safe S1 sampler's noise scale per dimension, (d, scale) pairs: set on the dev seeds so that its average
    # metric matches the risky sampler's (the paper's premise "similar average quality"; TUNING below)
    safe_scale: tuple[tuple[int, float], ...] = ((2, 1.5), (8, 1.2))
    avg_sep_bound: float = 0.5  # precondition: |average-metric separation| below this (per seed, interval)
    delta: float = 2.5
    digits: bool = True
    digits_mix: float = 0.15
    digits_good_scale: float = 1.9  # the safe digits model's Cholesky factor x this (dev seeds, TUNING below)
    digits_repeats: int = 5  # conditions = 10 classes x repeats
    seed_fraction: float = 0.8  # interpretability must hold in >= this share of seeds (4 of 5)
    # end-to-end coverage through contains() on fresh points (ellipsoid CReL)
    e2e_alpha: float = 0.1
    # n_cal cycles over these (k/(n+1) from 0.902 to 0.920); each is an n where the rank without its +1,
    # ceil(n (1 - alpha)), is one below k, so that bug shifts every calibration (v2's 24-49 hid it at 29, 39, 49)
    e2e_n_cals: tuple[int, ...] = (20, 24, 30, 34, 40, 44)
    e2e_calibrations: int = 120  # fresh calibration sets per seed and dimension
    e2e_n_test: int = 50  # fresh test pairs per calibration
    e2e_band: float = 0.015  # |coverage - k/(n+1)| band; an off-by-one rank moves it by 1/(n+1) >= 0.022
    # set types whose end-to-end coverage is checked (the ellipsoid always: checks `coverage`, `coverage_upper`;
    # the others: `coverage_<set>`, `coverage_upper_<set>`, each on its own fresh draws)
    e2e_set_types: tuple[str, ...] = ("ellipsoid", "ball", "hull", "pcp")
    n_opt_seeds: int = 3  # optimizer seeds per grid instance
    n_digits_volume: int = 5  # generator draws per class for the digits set volumes
    # conditions whose sample covariances, averaged, give the global-covariance control's one shape (S1: training
    # conditions; digits: this many / 10 draws per class); fixed by the referee's probe (100), not tuned
    n_global_shape_x: int = 100
    figure_seed: int | None = 100  # the seed whose 2-D condition the set figure shows (None: no figure)

    def __post_init__(self) -> None:
        if not self.dims or any(not isinstance(d, int) or d < 2 for d in self.dims):
            raise ValueError(f"dims must be integers >= 2, got {self.dims!r}")
        missing = [d for d in self.dims if d not in dict(self.safe_scale)]
        if missing:
            raise ValueError(
                f"safe_scale must give a scale for every d in dims, missing {missing} ({self.safe_scale!r})"
            )
        if any(not v > 0 for _, v in self.safe_scale) or not self.digits_good_scale > 0:
            raise ValueError(
                f"safe_scale and digits_good_scale must be > 0, got {self.safe_scale!r}, {self.digits_good_scale!r}"
            )
        if not self.e2e_n_cals or any(not isinstance(n, int) or n < 1 for n in self.e2e_n_cals):
            raise ValueError(f"e2e_n_cals must be positive integers, got {self.e2e_n_cals!r}")
        if "ellipsoid" not in self.e2e_set_types or not set(self.e2e_set_types) <= set(SET_TYPES):
            raise ValueError(
                f"e2e_set_types must include 'ellipsoid' and lie in {SET_TYPES}, got {self.e2e_set_types!r}"
            )
        if not 0 < self.e2e_band < 1:
            raise ValueError(f"e2e_band must lie in (0, 1), got {self.e2e_band!r}")
        if not isinstance(self.n_global_shape_x, int) or self.n_global_shape_x < 10:
            raise ValueError(f"n_global_shape_x must be an integer >= 10, got {self.n_global_shape_x!r}")
        if not self.avg_sep_bound > 0:
            raise ValueError(f"avg_sep_bound must be > 0, got {self.avg_sep_bound!r}")


QUICK = Config(
    dims=(2,),
    n_train=500,
    train_steps=100,
    n_cal=200,
    n_test=100,
    n_splits=20,
    n_volume_x=20,
    n_mc=500,
    n_linear_instances=3,
    n_grid_instances=3,
    n_interp_x=8,
    n_interp_baseline_x=0,
    digits_repeats=1,
    e2e_calibrations=200,  # 3 seeds x 200 calibrations: the coverage checks pass with a 3-sd margin (24 did not)
    e2e_set_types=("ellipsoid",),  # the other set types' checks cost ~40 s per seed (the hull in d = 8): full only
    e2e_n_test=50,
    n_opt_seeds=2,
    n_digits_volume=1,
)
FULL = Config(n_train=1000, n_interp_x=50, n_interp_baseline_x=10)


def e2e_coverage(cfg: Config, P, gen, metric, rng: np.random.Generator, set_type: str = "ellipsoid") -> dict:
    """Coverage of fresh test pairs through ``predict_set(x).contains(y)``, over fresh calibration draws.

    Calibration ``j`` uses ``n = e2e_n_cals[j % len]`` real pairs; its expected coverage is exactly
    ``k/(n+1)``, ``k = ceil((n+1)(1-alpha))`` (exact rational arithmetic, not the library's rank), so
    ``deviation = coverage - k/(n+1)`` has mean 0 for a correct implementation.
    """
    covs, expect = [], []
    for j in range(cfg.e2e_calibrations):
        n = cfg.e2e_n_cals[j % len(cfg.e2e_n_cals)]
        rel = ConformalReliability(
            gen, None, metric, 1 - cfg.e2e_alpha, cfg.n_samples, set_type, random_state=int(rng.integers(2**31))
        )
        rel.conformalize(*P.draw(n, rng))
        covs.append(rel.coverage(*P.draw(cfg.e2e_n_test, rng)))
        expect.append(exact_rank(n, cfg.e2e_alpha) / (n + 1))
    c, e = np.asarray(covs), np.asarray(expect)
    return {"coverage": c.tolist(), "expected": e.tolist()}


def _s1_unit(cfg: Config, seed: int, d: int) -> dict:
    """Coverage, volumes, linear-optimizer check and interpretability on S1 for one seed and dimension."""
    seed_everything(seed)
    rng = np.random.default_rng([seed, d])
    P = SyntheticProblem(d, p_fail=cfg.p_fail, delta=cfg.delta)
    x_tr, y_tr = P.draw(cfg.n_train, rng)
    gen = fit_gaussian_generator(x_tr, y_tr, cfg.train_steps, seed)
    n = cfg.n_cal + cfg.n_test
    X, Y = P.draw(n, rng)
    w = rng.standard_normal(d)
    lin = linear_metric(w)
    out: dict = {"d": d, "seed": seed}

    # 1. coverage over random splits (scores once per pair; generator draws depend on x only)
    perms = [rng.permutation(n) for _ in range(cfg.n_splits)]
    cov: dict = {}
    for st in SET_NAMES:
        rel = ConformalReliability(gen, None, lin, 0.9, cfg.n_samples, st, random_state=seed)
        s = rel.conformity_scores(X, Y)
        cov[st] = {}
        for a in sorted(set(cfg.alphas) | set(cfg.curve_alphas)):
            c, rank_err = [], 0
            for p in perms:
                q = conformal_quantile(s[p[: cfg.n_cal]], a)
                c.append(np.mean(s[p[cfg.n_cal :]] <= q))
                # the threshold is the k-th smallest calibration score: exactly k scores are <= it
                rank_err = max(rank_err, abs(int(np.sum(s[p[: cfg.n_cal]] <= q)) - exact_rank(cfg.n_cal, a)))
            cov[st][f"{a:g}"] = {"mean": float(np.mean(c)), "std": float(np.std(c, ddof=1)), "rank_error": rank_err}
    out["coverage"] = cov
    out["coverage_e2e"] = e2e_coverage(cfg, P, gen, lin, np.random.default_rng([seed, d, 5]))
    out["coverage_e2e_sets"] = {
        st: e2e_coverage(cfg, P, gen, lin, np.random.default_rng([seed, d, 5, j]), st)
        for j, st in enumerate(cfg.e2e_set_types)
        if st != "ellipsoid"
    }

    # 2. volumes per generator (same draws for all set types: same random_state), 3a. linear closed form vs PGD
    Xc, Yc, Xt, Yt = X[: cfg.n_cal], Y[: cfg.n_cal], X[cfg.n_cal :], Y[cfg.n_cal :]
    vol, cover_at, lin_diff = {}, {}, {}
    for gname, g in (("fitted", gen), ("oracle", MixtureSampler(P, cfg.p_fail))):
        vol[gname], cover_at[gname] = {}, {}
        for st in VOLUME_SETS:
            rel = ConformalReliability(g, None, lin, 1 - cfg.volume_alpha, cfg.n_samples, st, random_state=seed)
            rel.conformalize(Xc, Yc)
            lv, inside, diffs = [], [], []
            for i in range(cfg.n_volume_x):
                S = rel.predict_set(Xt[i])
                lv.append(S.log_volume(n_mc=cfg.n_mc, random_state=i) if st == "pcp" else S.log_volume())
                inside.append(bool(S.contains(Yt[i])))
                if gname == "fitted" and i < cfg.n_linear_instances:
                    wi = rng.standard_normal(d)
                    pgd = worst_case(lambda z, wi=wi: z @ torch.as_tensor(wi), S).value
                    diffs.append(abs(pgd - linear_worst_case(wi, 0.0, S).value))
            vol[gname][st], cover_at[gname][st] = lv, float(np.mean(inside))
            if gname == "fitted":
                lin_diff[st] = diffs
        # the second control: one covariance for every condition (MAPIE-style), fixed from the generator's samples
        # at training conditions (disjoint from the calibration and test pairs), the ellipsoid's shrinkage
        rel = GlobalCovarianceReliability(
            g, None, lin, x_tr[: cfg.n_global_shape_x], 1 - cfg.volume_alpha, cfg.n_samples, random_state=seed
        ).conformalize(Xc, Yc)
        sets = [rel.predict_set(Xt[i]) for i in range(cfg.n_volume_x)]
        vol[gname]["global"] = [S.log_volume() for S in sets]
        cover_at[gname]["global"] = float(np.mean([S.contains(Yt[i]) for i, S in enumerate(sets)]))
    out.update(log_volume=vol, volume_coverage=cover_at, linear_abs_diff=lin_diff)

    # 4. interpretability: safe (blurrier, true failure rate) vs risky sampler (true noise, more failures), matched
    # in average metric; the same real calibration pairs and test conditions
    m = bump_metric(P)
    interp: dict = {}
    safe = dict(cfg.safe_scale)[d]
    for gname, p_fail, scale in (("good", cfg.p_fail, safe), ("risky", cfg.p_fail_risky, 1.0)):
        g = MixtureSampler(P, p_fail, scale)
        set_types = SET_NAMES if cfg.n_interp_baseline_x > 0 else ("ellipsoid",)
        rels = {
            st: ConformalReliability(
                g, None, m, 1 - cfg.interp_alpha, cfg.n_samples, st, random_state=seed
            ).conformalize(Xc, Yc)
            for st in set_types
        }
        R, avg, wok, ctr, qa, gap_in_set = [], [], [], [], [], []
        R_base: dict = {"ball": [], "pcp": []}
        for i in range(cfg.n_interp_x):
            x = Xt[i]
            rel = rels["ellipsoid"]
            Z = rel.latent_samples(x)  # shared: the set, R and the sample baselines all use these
            vals = sample_metrics(rel, x)
            res = rel.reliability_details(x)
            S = rel.predict_set(x)
            inset = S.contains(Z)
            R.append(res.value)
            avg.append(float(vals.mean()))
            wok.append(float(vals.min()))
            qa.append(float(np.quantile(vals, cfg.interp_alpha)))
            ctr.append(_centre_metric(m, x, S))
            if inset.any():  # R <= the worst in-set sample (optimizer sanity check)
                gap_in_set.append(float(vals[inset].min() - res.value))
            if i < cfg.n_interp_baseline_x:
                for st in ("ball", "pcp"):
                    R_base[st].append(rels[st].reliability(x, latent_samples=Z))
        interp[gname] = {
            "R": float(np.mean(R)),
            "R_q10": float(np.quantile(R, 0.1)),
            "avg": float(np.mean(avg)),
            "worst_of_k": float(np.mean(wok)),
            "centre": float(np.mean(ctr)),
            "q_alpha": float(np.mean(qa)),
            "per_x": {"R": R, "avg": avg, "worst_of_k": wok, "centre": ctr, "q_alpha": qa},
            "scale": scale,
            "R_ball": float(np.mean(R_base["ball"])) if R_base["ball"] else None,
            "R_pcp": float(np.mean(R_base["pcp"])) if R_base["pcp"] else None,
            "qhat": rels["ellipsoid"].qhat_,
            "min_in_set_sample_minus_R": float(np.min(gap_in_set)) if gap_in_set else None,
        }
    out["interp"] = interp
    if d == 2 and seed == cfg.figure_seed:
        out["figure"] = _figure_data(cfg, P, gen, m, Xc, Yc, Xt[0], rng, seed)
    return out


def _centre_metric(metric, x, S) -> float:
    """The control arm of the interpretability claims: ``m(x, mu(x))``, the metric at the set's centre (the
    reliability with the set shrunk to a point: the same samples and mean, no worst case over the set)."""
    with torch.no_grad():
        return float(metric(x, torch.as_tensor(np.asarray(S.center, dtype=float)[None], dtype=torch.float64))[0])


def _figure_data(cfg, P, gen, m, Xc, Yc, x0, rng, seed) -> dict:
    """Sets and worst-case points for one 2-D condition (risky sampler, to show a failure being caught)."""
    g = MixtureSampler(P, cfg.p_fail_risky)
    out = {"x": float(x0), "real": P.sample(np.full(300, x0), rng).tolist()}
    Z = None
    for st in VOLUME_SETS:
        rel = ConformalReliability(g, None, m, 1 - cfg.interp_alpha, cfg.n_samples, st, random_state=seed)
        rel.conformalize(Xc, Yc)
        if Z is None:
            Z = rel.latent_samples(x0)
            out["samples"] = Z.tolist()
        S = rel.predict_set(x0, Z)
        val, arg = rel.reliability(x0, return_argmin=True, latent_samples=Z)
        rec = {"value": val, "argmin": arg.tolist(), "radius": S.radius}
        if isinstance(S, Ellipsoid):
            rec.update(center=S.center.tolist(), chol=S.chol.tolist())
        if isinstance(S, HullSet):
            rec.update(vertices=S.vertices.tolist())
        out[st] = rec
    return out


def _grid_unit(cfg: Config, seed: int) -> dict:
    """|PGD - dense polar grid| on random 2-D ellipses with a non-convex metric (a dip near the boundary), for
    each of ``n_opt_seeds`` optimizer seeds (the random starts and the screen of :func:`worst_case`)."""
    rng = np.random.default_rng([seed, 77])
    diffs = []
    for _ in range(cfg.n_grid_instances):
        A = rng.standard_normal((2, 2))
        L = np.linalg.cholesky(A @ A.T + 0.2 * np.eye(2))
        S = Ellipsoid(rng.standard_normal(2), L, rng.uniform(0.5, 2.0))
        t = S.center + rng.standard_normal(2)
        b = S.sample_boundary(1, rng)[0] * 0.8 + 0.2 * S.center
        tt, bt = torch.as_tensor(t), torch.as_tensor(b)
        h = float(rng.uniform(0.5, 1.5))

        def metric(z, tt=tt, bt=bt, h=h):
            return -torch.log1p(((z - tt) ** 2).sum(-1)) - h * torch.exp(-((z - bt) ** 2).sum(-1) / 0.18)

        r_grid = worst_case(metric, S, "grid", n_grid=cfg.n_grid).value
        diffs.append([abs(worst_case(metric, S, random_state=o).value - r_grid) for o in range(cfg.n_opt_seeds)])
    return {"abs_diff": diffs}  # [instance][optimizer seed]


def _digits_unit(cfg: Config, seed: int) -> dict:
    seed_everything(seed)
    T = make_digits_task(seed, mix=cfg.digits_mix, good_scale=cfg.digits_good_scale)
    conds = np.repeat(np.arange(10), cfg.digits_repeats)
    out: dict = {"classifier_accuracy": T.classifier_accuracy}
    for gname, g in (("good", T.good), ("risky", T.risky)):
        rel = ConformalReliability(g, T.encoder, T.metric, 1 - cfg.interp_alpha, cfg.n_samples, random_state=seed)
        rel.conformalize(T.X_cal, T.Y_cal)
        cover = rel.coverage(T.X_test, T.Y_test)
        R, avg, wok, ctr, qa = [], [], [], [], []
        for c in conds:  # a fresh draw per repeat of a class (repeats are not one cached draw)
            Z = rel.latent_samples(c, fresh=True)
            vals = sample_metrics(rel, c, Z)
            R.append(rel.reliability(c, latent_samples=Z))
            avg.append(float(vals.mean()))
            wok.append(float(vals.min()))
            qa.append(float(np.quantile(vals, cfg.interp_alpha)))
            ctr.append(_centre_metric(T.metric, c, rel.predict_set(c, Z)))
        R = np.array(R)
        out[gname] = {
            "R": float(R.mean()),
            "R_q10": float(np.quantile(R, 0.1)),
            "avg": float(np.mean(avg)),
            "worst_of_k": float(np.mean(wok)),
            "centre": float(np.mean(ctr)),
            "q_alpha": float(np.mean(qa)),
            "per_x": {"R": R.tolist(), "avg": avg, "worst_of_k": wok, "centre": ctr, "q_alpha": qa},
            "coverage": cover,
            "qhat": rel.qhat_,
            "R_per_class": [float(R[conds == c].mean()) for c in range(10)],
        }
    # informativeness on digits: the fitted generator's sets (hull volume: qhull in d = 16 is too slow, skipped)
    vol, cov = {}, {}
    for st in ("ellipsoid", "ball", "pcp"):
        rel = ConformalReliability(
            T.fitted, T.encoder, T.metric, 1 - cfg.volume_alpha, cfg.n_samples, st, random_state=seed
        ).conformalize(T.X_cal, T.Y_cal)
        lv = []
        for c in np.repeat(np.arange(10), cfg.n_digits_volume):
            S = rel.predict_set(c, rel.latent_samples(c, fresh=True))
            lv.append(S.log_volume(n_mc=cfg.n_mc, random_state=int(c)) if st == "pcp" else S.log_volume())
        vol[st] = lv
        cov[st] = rel.coverage(T.X_test, T.Y_test)
    # the second control: one covariance for every class (MAPIE-style), from fresh samples of every class
    rel = GlobalCovarianceReliability(
        T.fitted,
        T.encoder,
        T.metric,
        np.repeat(np.arange(10), cfg.n_global_shape_x // 10),
        1 - cfg.volume_alpha,
        cfg.n_samples,
        random_state=seed,
    ).conformalize(T.X_cal, T.Y_cal)
    vol["global"] = [
        rel.predict_set(c, rel.latent_samples(c, fresh=True)).log_volume()
        for c in np.repeat(np.arange(10), cfg.n_digits_volume)
    ]
    cov["global"] = rel.coverage(T.X_test, T.Y_test)
    out["log_volume"], out["volume_coverage"] = vol, cov
    return out


# ------------------------------------------------------------------------------------------------ measure
def measure(cfg: Config, seed: int, progress=None) -> dict:
    """One seed: S1 per dimension, the 2-D grid instances and (optionally) digits, all drawn from ``seed``
    (``progress``: the runner's cache of finished pieces; None computes every piece)."""
    if progress is None:
        from icml26.progress import Progress

        progress = Progress()
    s1 = [progress.cached(f"s1-d{d}", lambda d=d: _s1_unit(cfg, seed, d)) for d in cfg.dims]
    grid = progress.cached("grid", lambda: _grid_unit(cfg, seed))
    dig = progress.cached("digits", lambda: _digits_unit(cfg, seed)) if cfg.digits else None
    return {"s1": s1, "grid": grid, "digits": dig}


# design seeds only: 0-4 were the reported seeds of v1 and v2 (quick 0-2) and every design choice below saw them
DEV = (0, 1, 2, 3, 4)
REPORTED = (100, 101, 102, 103, 104)  # fresh in v3: never seen while designing
TUNING = (
    dict(
        variant="v1 (d72e83f..30da6d6): presets sized to the time budget (n_train, train_steps, K = 32, n_cal = "
        "n_test = 500, grid 400 x 400); the optional sampling screen of worst_case (n_screen) added after the full "
        "run missed one grid instance (seed 2 #7 by 0.0249)",
        seeds=[0, 1, 2, 3, 4],
        outcome="optimizer_grid 49/50 with one optimizer seed and no screen; the screen kept as an option",
    ),
    dict(
        variant="v2 (issue 22, a66e791..8de1165): end-to-end coverage with n_cal = 24 (v1) -> n_cal cycling over "
        "24-49, band 0.015, 120 calibrations x 50 test pairs; the screen's start choice top-4 -> diverse 'one per "
        "basin' (n_diverse 8, separation 0.5) and the step growth 2 -> 1.25, on the grid instances of these seeds",
        seeds=[0, 1, 2, 3, 4],
        outcome="v1's coverage_e2e inconclusive at 0.915 [0.898, 0.933]; v2's deviation +0.0007 inside +-0.015; the "
        "diverse screen 150/150 over 3 optimizer seeds (top-4 still missed a basin)",
    ),
    dict(
        variant="v2 quick preset: 12 end-to-end calibrations (verdict flipped on noise) -> 24; 20 volume conditions",
        seeds=[0, 1, 2],
        outcome="quick 26.6 s wall; 24 calibrations kept",
    ),
    dict(
        variant="v2 interpretability rule: v1's 'R gap > average-metric gap' (held 5/5 on both data sets) -> the "
        "paired standardized separation of R against worst-of-K and the average metric; oracle (p_fail 0.05) vs "
        "risky (0.20) at the true noise, digits good vs 15% nearest-class mixture",
        seeds=[0, 1, 2, 3, 4],
        outcome="both interpretability claims did not hold: the average metric (S1, 2.24 vs R 1.30) and worst-of-K "
        "(digits, 2.66 vs 1.63) separate better; the risky generators had a clearly lower average metric",
    ),
    dict(
        variant="v3 (issue 46): e2e_n_cals 24-49 -> (20, 24, 30, 34, 40, 44), chosen by arithmetic only (every n "
        "where ceil(n (1 - alpha)) < ceil((n + 1)(1 - alpha)) at alpha 0.1; 29, 39, 49 hid the missing +1), no "
        "run; the band 0.015 kept",
        seeds=[],
        outcome="the missing +1 shifts the expected coverage by 0.0325 on average (>= 0.022 on every n), was "
        "0.0151; power measured by the test test_missing_plus_one_is_caught_in_95_percent_of_reruns",
    ),
    dict(
        variant="v3 data knob for the interpretability premise (matched average quality): the safe sampler's noise "
        "scale scanned, average metric only (no R, no worst case), 50 conditions x K = 32 per seed: S1 d = 2 scale "
        "1.0/1.1/1.2/1.3/1.4/1.5/1.7, d = 8 the same, digits Cholesky x 1.0/1.1/1.2/1.3/1.5/1.7/1.85/1.9/2.0",
        seeds=[0, 1, 2, 3, 4],
        outcome="mean average-metric separation (safe - risky): d = 2 1.55/1.20/0.86/0.54/0.23/-0.07/-0.61; d = 8 "
        "1.36/0.62/-0.07/-0.71/-1.29/-1.83/-2.78; digits 1.90/1.73/1.55/1.33/0.87/0.40/0.06/-0.04/-0.25 -> "
        "safe_scale d = 2: 1.5, d = 8: 1.2, digits_good_scale 1.9 (closest to 0); per-seed spread at those "
        "values up to 0.36, so avg_sep_bound = 0.5 was fixed then, before any run on the reported seeds",
    ),
    dict(
        variant="v3 dev check of the interpretability pieces at the full sizes (coverage, volume and grid parts "
        "shrunk), safe scales as above; first with worst-of-K as the 'risky is really worse' precondition (a quick "
        "run on seeds 0-2: it failed at d = 2, the blurred safe sampler's min of 32 samples is as low as the risky "
        "one's failure cluster), then with the samples' alpha-quantile (alpha = 0.1, the sets' level) instead",
        seeds=[0, 1, 2],
        outcome="separation (safe - risky) per seed, d = 2 / d = 8 / digits: R 1.17 1.15 1.05 / 1.16 1.24 0.90 / 1.58 "
        "1.34 1.65; worst-of-K -0.54 -0.41 -0.36 / 0.27 0.31 0.10 / 0.47 0.25 0.45; average -0.14 -0.17 -0.21 / "
        "-0.06 0.02 -0.26 / 0.02 -0.23 -0.09; centre metric (control) 0.97 1.12 0.85 / 1.63 1.56 1.13 / 1.25 0.96 "
        "0.81. R beats both baselines on every seed, and so does the centre metric: the controls pass, both claims "
        "inconclusive on these seeds. Kept as designed (no change to make the control fail); the alpha-quantile "
        "precondition kept (digits: inconclusive on 3 seeds, -2.67 vs -3.18 mean)",
    ),
    dict(
        variant="v3, after the first reference run (seeds 100-104; coverage held there with seeds as units, deviation "
        "-0.0036, interval [-0.0099, 0.0027]): the quick preset on its seeds 100-102 left both coverage checks "
        "inconclusive (3 seeds x 24 calibrations: a t interval on 3 units), which fails a check. The unit became one "
        "calibration (independent draws with mean deviation exactly 0 by design, binomial Monte-Carlo error added) "
        "and the quick preset's e2e_calibrations 24 -> 200; the full preset unchanged, its run repeated",
        seeds=[100, 101, 102, 103, 104],
        outcome="quick: both coverage checks hold (27 s); no verdict of the full preset depends on the change "
        "(rerun in results/crel)",
    ),
    dict(
        variant="v3 controls chosen without a run: ball CReL (Sigma = I) for the informativeness claims (its "
        "volumes were already measured: larger than PCP in v2 at d = 8 and on digits), the centre metric "
        "m(x, mu(x)) for the interpretability claims",
        seeds=[0, 1, 2, 3, 4],
        outcome="v2 volumes on these seeds: ball 11.31 vs PCP 9.13 (S1 d = 8 fitted), 7.18 vs 5.74 (oracle), "
        "9.22 vs 7.63 (digits)",
    ),
    dict(
        variant="referee 4's probes (not ours; recorded because they saw the reported seeds): stronger controls of "
        "the informativeness claims at d = 8 (scaled ball, diagonal ellipsoid, one-covariance ellipse; 20 "
        "conditions, n_mc 500; oracle also 100 conditions, n_mc 2000) and the alpha-quantile of the K sample "
        "metrics re-judged from the committed records as an interpretability baseline",
        seeds=[100, 101, 102, 103, 104],
        outcome="the one-covariance ellipse passes informativeness_oracle's rule against PCP (p = 0.0088 / 0.0127), "
        "loses on fitted and digits; R beats the alpha-quantile in 3/5 S1 seeds, 5/5 digits",
    ),
    dict(
        variant="referee 4 items 1-2 adopted as specified, nothing tuned: the one-covariance (MAPIE-style) ellipse "
        "as the second control of the three informativeness claims (the ellipsoid's shrinkage 0.1 and eps, the "
        "covariance = mean sample covariance at 100 separate conditions, the referee's number) and the "
        "alpha-quantile (alpha = interp_alpha, already recorded) as a third interpretability baseline; full preset "
        "rerun on the same reported seeds because no choice was made by looking at them (the arms and their sizes "
        "are the referee's, and the records of every other arm are unchanged: separate random streams)",
        seeds=[],
        outcome="see the reference run in results/crel (the verdicts may move to inconclusive / does not hold; "
        "nothing was adjusted after it)",
    ),
)


EXPERIMENT = register(
    Experiment(
        slug="crel",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": REPORTED[:3], "full": REPORTED},
        measure=measure,
        judge=judge,
        threads=1,  # tiny torch ops: one thread is much faster than two contending ones
        dev_seeds=DEV,
        tuning=TUNING,
    )
)
