"""Reproduction, the measurement: distributional advice vs point predictions, exactly computed.

Per seed we draw ``per_family`` truths of each family (Gaussian, geometric and bimodal season lengths; the family's
grid of parameters, in units of ``B``, is cycled and every draw jittered), and predictions of each: the truth shifted
by ``delta * B`` days (random direction per instance; ``delta = 0`` is a perfect prediction) and the truth mixed with
an adversarial point mass of weight ``eps`` on the far side of ``B``.  Every policy is scored exactly (expected
competitive ratio under the truth, worst case over all season lengths).

At ``delta = 0`` (where the claims are judged) every instance scores both readings of Clamp, PSK-det with each point
summary of ``P_hat`` (mean, median, mode), and the **control arms**: both Clamp readings fed a point mass at PSK's
point summary instead of the distribution (what PSK knows).  The first cycle through each family's grid (one instance
per grid point, 12 per seed on ``full``) also gets the whole prediction sweep, the LPs and the trade-off sweep (the
LPs dominate the run time).  The evidence (claims, controls, checks, tables, figures) is in :mod:`.claims`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from icml26.core import Experiment, register, seed_everything

from .baselines import (
    BreakEven,
    CuiDinitz,
    KarlinRandomized,
    PSKDeterministic,
    PSKRandomized,
    point_prediction,
)
from .claims import ADVICE, ADVISED, FAMILIES, POINTS, judge
from .instance import SkiRental, bimodal, discretized_gaussian, geometric, point_mass, shift
from .policies import ClampPolicy, OptimalThreshold, RobustStoppingDistribution, evaluate

__all__ = [
    "Config",
    "FULL",
    "QUICK",
    "FAMILIES",
    "POINTS",
    "ADVICE",
    "ADVISED",
    "measure",
    "draw_instances",
    "predictions",
    "psk_point",
    "point_advice",
    "point_only_advice",
]


@dataclass(frozen=True)
class Config:
    """Sizes and grids (family parameters are in units of the buy cost ``B``).

    ``psk_point``: the point summary PSK-det/-rand take from ``P_hat``, per family, as ``((family, point), ...)``:
    PSK's one hyperparameter, chosen on the dev seeds (``icml26 run ski_rental --dev``, table
    ``psk_point_selection``) as the summary with the lowest mean ECR at ``delta = 0``; see the tuning ledger.

    ``point_advice``: the point-only advice fed to each claim's policy in its control arm, per family and policy, as
    ``((family, policy, advice), ...)`` with ``policy`` in :data:`ADVISED` and ``advice`` in :data:`ADVICE` (a point
    summary of ``P_hat`` x {a point mass at it, the max-entropy (geometric) law with that mean}): chosen on the dev
    seeds (table ``point_advice_selection``) as the advice with the lowest mean ECR of that policy at ``delta = 0``
    over all lambdas, as PSK's point was (6 configurations against PSK's 3).
    """

    buy_cost: int = 100
    horizon: int = 1000
    per_family: int = 20  # instances per family per seed (each family's grid below is cycled)
    gaussian_means: tuple[float, ...] = (0.2, 0.6, 1.0, 1.5, 3.0)  # sigma = mean / 4
    geometric_means: tuple[float, ...] = (0.2, 0.8, 2.0, 5.0)  # mean 1/q
    bimodal_weights: tuple[float, ...] = (0.5, 0.7, 0.3)  # weight of the short mode N(0.1B, 0.03B)
    bimodal_modes: tuple[float, float, float, float] = (0.1, 0.03, 3.0, 0.4)  # mu1, sd1, mu2, sd2
    jitter: float = 0.25  # family parameters are multiplied by exp(U(-jitter, jitter)) per draw
    lambdas: tuple[float, ...] = (0.25, 0.5, 0.75)
    deltas: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
    adversarial_weights: tuple[float, ...] = (0.2, 0.5)
    tradeoff_lambdas: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    psk_point: tuple[tuple[str, str], ...] = (("bimodal", "mean"), ("geometric", "median"), ("gaussian", "mean"))
    point_advice: tuple[tuple[str, str, str], ...] = (
        ("bimodal", "clamp", "median_mass"),
        ("bimodal", "range_argmin", "median_mass"),
        ("bimodal", "lp_psk", "mean_geometric"),
        ("geometric", "clamp", "mean_geometric"),
        ("geometric", "range_argmin", "mean_geometric"),
        ("geometric", "lp_psk", "mean_geometric"),
        ("gaussian", "clamp", "mean_geometric"),
        ("gaussian", "range_argmin", "mean_geometric"),
        ("gaussian", "lp_psk", "median_mass"),
    )


FULL = Config()
QUICK = Config(
    buy_cost=20,
    horizon=200,
    per_family=10,
    gaussian_means=(0.6, 1.5),
    geometric_means=(0.8, 2.0),
    bimodal_weights=(0.5, 0.7),
    lambdas=(0.5,),
    deltas=(0.0, 0.5, 2.0),
    adversarial_weights=(0.3,),
    tradeoff_lambdas=(0.25, 0.5, 0.75, 1.0),
)


def psk_point(cfg: Config, family: str) -> str:
    """The point summary PSK uses on ``family`` (``cfg.psk_point``); ValueError naming ``psk_point`` otherwise."""
    points = dict(cfg.psk_point)
    if family not in points or points[family] not in POINTS:
        raise ValueError(
            f"psk_point must map every family {FAMILIES} to one of {POINTS}, got {cfg.psk_point!r} (family {family!r})"
        )
    return points[family]


def point_advice(cfg: Config, family: str, policy: str) -> str:
    """The point-only advice fed to ``policy`` on ``family`` in the control arms (``cfg.point_advice``); ValueError
    naming ``point_advice`` otherwise."""
    table = {(f, p): a for f, p, a in cfg.point_advice}
    if (family, policy) not in table or table[family, policy] not in ADVICE:
        raise ValueError(
            f"point_advice must map every (family, policy) in {FAMILIES} x {ADVISED} to one of {ADVICE}, got "
            f"{cfg.point_advice!r} (family {family!r}, policy {policy!r})"
        )
    return table[family, policy]


# -- instances and predictions ------------------------------------------------------------------------------
def draw_instances(cfg: Config, rng: np.random.Generator) -> list[dict]:
    """``cfg.per_family`` truths per family, cycling its grid with parameters jittered by ``rng``; ``sweep`` marks
    the first cycle (one draw per grid point), which also gets the prediction sweep and the LPs."""
    if isinstance(cfg.per_family, bool) or not isinstance(cfg.per_family, int) or cfg.per_family < 1:
        raise ValueError(f"per_family must be an integer >= 1, got {cfg.per_family!r}")
    if not (isinstance(cfg.jitter, (int, float)) and 0 <= cfg.jitter < 5):
        raise ValueError(f"jitter must be a number in [0, 5) (a log-scale spread), got {cfg.jitter!r}")
    b, n = cfg.buy_cost, cfg.horizon

    def jit() -> float:
        return float(np.exp(rng.uniform(-cfg.jitter, cfg.jitter)))

    out = []
    for j in range(cfg.per_family):
        m = cfg.gaussian_means[j % len(cfg.gaussian_means)]
        mu = m * b * jit()
        P = discretized_gaussian(mu, mu / 4, n)
        out.append({"family": "gaussian", "name": f"gauss(mu={mu:.1f})", "P": P, "sweep": j < len(cfg.gaussian_means)})
    for j in range(cfg.per_family):
        mean = cfg.geometric_means[j % len(cfg.geometric_means)] * b * jit()
        sweep = j < len(cfg.geometric_means)
        out.append(
            {"family": "geometric", "name": f"geom(mean={mean:.1f})", "P": geometric(1.0 / mean, n), "sweep": sweep}
        )
    m1, s1, m2, s2 = cfg.bimodal_modes
    for j in range(cfg.per_family):
        w = float(np.clip(cfg.bimodal_weights[j % len(cfg.bimodal_weights)] + rng.uniform(-0.1, 0.1), 0.05, 0.95))
        mu1, mu2 = m1 * b * jit(), m2 * b * jit()
        P = bimodal(mu1, s1 * b, mu2, s2 * b, n, weight=w)
        name = f"bimodal(w={w:.2f},{mu1:.0f}/{mu2:.0f})"
        out.append({"family": "bimodal", "name": name, "P": P, "sweep": j < len(cfg.bimodal_weights)})
    return out


def predictions(cfg: Config, P: np.ndarray, sign: int) -> list[tuple[str, np.ndarray]]:
    """``[(label, P_hat), ...]``: shifts by ``sign * delta * B`` days, then adversarial mixtures."""
    b, n = cfg.buy_cost, cfg.horizon
    out = [(f"delta={d:g}", shift(P, sign * int(round(d * b)))) for d in cfg.deltas]
    far = point_mass(n, n) if point_prediction(P) < b else point_mass(1, n)  # the other side of B
    out += [(f"eps={e:g}", (1 - e) * P + e * far) for e in cfg.adversarial_weights]
    return out


def point_mass_advice(P_hat: np.ndarray, point: str) -> tuple[int, np.ndarray]:
    """``(day, pmf)``: a point mass at ``floor(y)``, ``y`` = the ``point`` summary of ``P_hat`` (what PSK is told).
    ``floor`` keeps the side of ``B`` PSK's rule sees (``y >= B`` iff ``floor(y) >= B`` for an integer ``B``)."""
    n = P_hat.size
    day = int(min(max(math.floor(point_prediction(P_hat, point) + 1e-9), 1), n))
    return day, point_mass(day, n)


def point_only_advice(P_hat: np.ndarray, advice: str) -> np.ndarray:
    """A pmf built from one number of ``P_hat``: ``advice = "<point>_<form>"``, ``point`` in :data:`POINTS`;
    ``form = "mass"``: the point mass at ``floor(y)`` (:func:`point_mass_advice`); ``form = "geometric"``: the
    maximum-entropy law on the days with mean ``y`` (a geometric law with ``q = 1/y``, its tail lumped on day ``N``
    as for the truths)."""
    if advice not in ADVICE:
        raise ValueError(f"advice must be one of {ADVICE}, got {advice!r}")
    point, form = advice.rsplit("_", 1)
    if form == "mass":
        return point_mass_advice(P_hat, point)[1]
    y = max(point_prediction(P_hat, point), 1.0)
    return geometric(1.0 / y, P_hat.size)


def _score(policy, inst, P, P_hat) -> dict:
    r = evaluate(policy, inst, P, P_hat)
    return {"ecr": r["ecr"], "worst": r["worst_case"]}


def measure(cfg: Config, seed: int, progress=None) -> dict:
    """One seed's replicate, all exact: ``records`` (one per instance x prediction; every instance at ``delta = 0``,
    the sweep instances at every prediction) and the trade-off sweep (sweep instances)."""
    if cfg.deltas[:1] != (0.0,):
        raise ValueError(
            f"deltas must start with 0 (the perfect prediction the claims are judged at), got {cfg.deltas}"
        )
    for fam in FAMILIES:
        psk_point(cfg, fam)  # refuse a bad psk_point or point_advice before any work
        for pol in ADVISED:
            point_advice(cfg, fam, pol)
    rng = seed_everything(seed)
    inst = SkiRental(cfg.buy_cost, cfg.horizon)
    records, tradeoff = [], []
    for i, ins in enumerate(draw_instances(cfg, rng)):
        P, fam, sweep = ins["P"], ins["family"], ins["sweep"]
        point = psk_point(cfg, fam)
        sign = int(rng.choice([-1, 1]))
        fixed = {
            "oracle": _score(OptimalThreshold(), inst, P, P),
            "break_even": _score(BreakEven(), inst, P, None),
            "karlin": _score(KarlinRandomized(), inst, P, None),
        }
        for label, P_hat in predictions(cfg, P, sign) if sweep else [("delta=0", P)]:
            rec = {"seed": seed, "instance": f"s{seed}-{i}", "family": fam, "name": ins["name"], "sweep": sweep}
            rec.update(error=label, sign=sign, psk_point=point, **fixed)
            rec["opt_threshold"] = _score(OptimalThreshold(), inst, P, P_hat)
            rec["cui_dinitz"] = _score(CuiDinitz(), inst, P, P_hat)
            exact = label == "delta=0"
            if exact:  # the point-only advice: every configuration (scored, so a dev run can choose among them)
                rec["point_day"] = point_mass_advice(P_hat, point)[0]
                advised = {a: point_only_advice(P_hat, a) for a in ADVICE}
                chosen = {pol: point_advice(cfg, fam, pol) for pol in ADVISED}
            for lam in cfg.lambdas:
                psk_r = _score(PSKRandomized(lam, point), inst, P, P_hat)
                rec[f"lam={lam:g}"] = d = {
                    "clamp": _score(ClampPolicy(lam), inst, P, P_hat),
                    "range_argmin": _score(ClampPolicy(lam, mode="range_argmin"), inst, P, P_hat),
                    "psk_det": _score(PSKDeterministic(lam, point), inst, P, P_hat),
                    "psk_rand": psk_r,
                }
                if exact:  # PSK-det with every point summary; each policy fed every point-only advice
                    d["psk_det_by_point"] = {p: _score(PSKDeterministic(lam, p), inst, P, P_hat)["ecr"] for p in POINTS}
                    pols = {"clamp": ClampPolicy(lam), "range_argmin": ClampPolicy(lam, mode="range_argmin")}
                    if sweep:  # the LP at PSK-rand's robustness, fed point-only advice
                        pols["lp_psk"] = RobustStoppingDistribution(psk_r["worst"])
                    by = {a: {m: _score(pol, inst, P, pm) for m, pol in pols.items()} for a, pm in advised.items()}
                    d["point_advice_by_config"] = by
                    for m in pols:  # the control arms: each policy fed its dev-chosen point-only advice
                        d[f"{m}_point_advice"] = {**by[chosen[m]][m], "advice": chosen[m]}
                    if sweep:
                        d["lp_psk_point_advice"]["gamma"] = psk_r["worst"]
                if sweep:  # the LPs (the run's cost) on the sweep instances only
                    lp_psk = RobustStoppingDistribution(psk_r["worst"]).fit(inst, P_hat)
                    d["lp_psk"] = {**_score(lp_psk.distribution_, inst, P, P_hat), "gamma": psk_r["worst"]}
                    if exact:  # the Clamp-matched LP at a perfect prediction only (LP time budget)
                        d["lp_clamp"] = _score(RobustStoppingDistribution(1 + 1 / lam), inst, P, P_hat)
            records.append(rec)
        if sweep:
            for lam in cfg.tradeoff_lambdas:  # consistency (delta = 0) against robustness, per lambda
                row = {"instance": f"s{seed}-{i}", "lam": lam}
                for name, pol in (
                    ("clamp", ClampPolicy(lam)),
                    ("range_argmin", ClampPolicy(lam, mode="range_argmin")),
                    ("psk_det", PSKDeterministic(lam, point)),
                    ("psk_rand", PSKRandomized(lam, point)),
                ):
                    row[name] = _score(pol, inst, P, P)
                tradeoff.append(row)
    return {"records": records, "tradeoff": tradeoff}


# Every variant tried while designing this reproduction, with the seeds it saw (Experiment.tuning; report.md shows it).
# Seeds 0-4 were the reported seeds until issue 49 and the referee ran 5-9, so 0-9 are dev seeds and the presets report
# fresh seeds 100-109 (quick: 100-102), which no design choice below saw.
_OLD = list(range(5))  # the reported seeds of the v1/v2 runs (and of the quick preset's 0-2)
TUNING = (
    dict(
        variant="initial design (166b965, e5a31a8): the spec's grid, 12 truths per seed (5 Gaussian, 4 geometric, "
        "3 bimodal), B=100, N=1000, jitter 0.25, PSK told the median (spec default), Wilcoxon over instances; "
        "adversarial weights (0.1, 0.3, 0.5) cut to (0.2, 0.5) and the Clamp-matched LP scored at delta=0 only, for "
        "run time",
        seeds=_OLD,
        outcome="Clamp beat PSK-det at every lambda; run time about a minute",
    ),
    dict(
        variant="evidence v2 port (2a4bc5a): seeds as units (paired t test over 5 per-seed means), precondition "
        "point_prediction_loses with min_effect 0.01",
        seeds=_OLD,
        outcome="precondition held at every lambda; pooled Clamp-vs-PSK claims held",
    ),
    dict(
        variant="issue 25 (24e7911): Clamp's second reading mode='range_argmin' added after Clamp tied PSK-det on "
        "every Gaussian of these seeds; per-family size claims with GAIN = min_effect = 0.01 (chosen as the "
        "precondition's margin while these seeds' numbers were seen); precondition clamp_binds",
        seeds=_OLD,
        outcome="claims 15/30 hold, 13 do not hold, 2 inconclusive (reference run at da9acc3)",
    ),
    dict(
        variant="quick preset (B=20, N=200, 6 truths per seed): its verdicts asserted in tests/ski_rental",
        seeds=[0, 1, 2],
        outcome="Gaussian tie and bimodal agreement of the two readings asserted on these seeds",
    ),
    dict(
        variant="referee (issue 49): the v2 design on fresh seeds 5-9",
        seeds=[5, 6, 7, 8, 9],
        outcome="8 of 30 verdicts change against seeds 0-4 (3-5 instances per family per seed)",
    ),
    dict(
        variant="referee (issue 49): PSK-det told the mean instead of the median",
        seeds=list(range(10)),
        outcome="bimodal Clamp gain falls to 0.10 / 0.086 / 0.035 (lambda 0.25 / 0.5 / 0.75) on seeds 0-4 and "
        "0.000 on seeds 5-9",
    ),
    dict(
        variant="referee (issue 49): Clamp fed only a point mass at the median (PSK's information)",
        seeds=_OLD,
        outcome="the bimodal Clamp-vs-PSK claims still hold at every lambda: they credit the clamp rule",
    ),
    dict(
        variant="issue 49, quick preset on the dev seeds: controls (each claim's policy fed a point mass at PSK's "
        "point summary), 4 truths per family per seed, PSK told the median",
        seeds=list(range(10)),
        outcome="runs (10 s); the bimodal Clamp-vs-PSK claims turn inconclusive (control passes)",
    ),
    dict(
        variant="issue 49, full preset: 20 truths per family per seed (each family's grid cycled, every draw "
        "jittered; the first cycle keeps the prediction sweep, LPs and trade-off), controls, PSK told the median",
        seeds=list(range(10)),
        outcome="157 s; claims 9/30 hold, controls reject 24/30; every bimodal Clamp-vs-PSK claim inconclusive "
        "(control passes at every lambda, both readings); preconditions 6/6",
    ),
    dict(
        variant="issue 49: PSK's point summary (mean / median / mode, the spec allows all three) chosen per family "
        "by the lowest mean PSK-det ECR at delta=0 over all lambdas (table psk_point_selection of the run above)",
        seeds=list(range(10)),
        outcome="bimodal: mean (1.203 / 1.315 / 1.391 vs median 1.473 / 1.514 / 1.471, mode 2.00 / 1.95 / 1.65; "
        "best on every seed); geometric: median (1.2919 vs mean 1.2970 at lambda 0.25, a near tie: the mean is "
        "lower on 7 of 10 seeds); Gaussian: mean (1.1400 vs 1.1417, best on every seed); the same at every lambda",
    ),
    dict(
        variant="issue 49, full preset with the chosen points (psk_point: bimodal mean, geometric median, Gaussian "
        "mean): the design the reported seeds 100-109 run",
        seeds=list(range(10)),
        outcome="171 s; claims 12/30 hold, controls reject 27/30; Clamp-vs-PSK on bimodal inconclusive (Clamp fed "
        "the mean's point mass still gains 0.054 / 0.057 / 0.025); preconditions 6/6. The full preset did not "
        "change after this run",
    ),
    dict(
        variant="issue 49, quick preset with 10 truths per family per seed (was 4), chosen PSK points: raised "
        "after the quick smoke run on its own seeds 100-102 (B=20, N=200, not the full preset's setting) showed "
        "no holding claim for the tests to break",
        seeds=list(range(10)),
        outcome="15 s on the dev seeds; claims 4/10 hold, controls reject 9/10 (the bimodal Clamp control passes); "
        "the full preset's verdicts on 100-109 were not looked at before the reference run",
    ),
    dict(
        variant="referee follow-up: each claim's control fed point-only advice instead of PSK's point mass; the "
        "precondition point_prediction_loses_* made the in-range oracle against the range argmin fed that advice; "
        "claim lp_beats_psk_rand_* added (LP at PSK-rand's worst case vs PSK-rand, control: the LP fed point-only "
        "advice); provisional point_advice (the referee's hints: bimodal median_mass, geometric mean_geometric, "
        "Gaussian mean_mass, for every policy)",
        seeds=list(range(10)),
        outcome="about 410 s (load 4-6); claims 7/33 hold, controls reject 27/42, preconditions 6/6; the LP claims "
        "inconclusive at every lambda (the LP fed the median's point mass passes on bimodal laws)",
    ),
    dict(
        variant="referee follow-up: point_advice chosen per family and policy (Clamp, range-argmin, LP at "
        "PSK-rand's gamma) among 6 configurations (mean / median / mode x {point mass at floor(y), max-entropy "
        "geometric law with mean y}) by the lowest mean ECR at delta=0 over all lambdas, as PSK's point was (table "
        "point_advice_selection of the run above)",
        seeds=list(range(10)),
        outcome="bimodal clamp: median_mass, bimodal range_argmin: median_mass (1.2385 each, tied with mode_mass; "
        "best on every seed), bimodal lp_psk: mean_geometric (1.326 vs median_geometric 1.431; 8 of 10 seeds); "
        "geometric clamp: mean_geometric, geometric range_argmin: mean_geometric (1.3185 vs median_geometric "
        "1.3240; every seed), geometric lp_psk: mean_geometric (1.295; every seed); gaussian clamp: "
        "mean_geometric, gaussian range_argmin: mean_geometric (1.3011 vs median_geometric 1.3012-1.3017; 8 of 10 "
        "seeds), gaussian lp_psk: median_mass (1.1916 vs mean_mass 1.1974; 7 of 10 seeds)",
    ),
    dict(
        variant="referee follow-up, the design the reported seeds 100-109 run: the records above re-judged with the "
        "chosen point_advice (every configuration is scored in each record, so no re-measuring)",
        seeds=list(range(10)),
        outcome="claims 4/33 hold (pooled Clamp vs PSK-det at lambda 0.25; range-argmin vs PSK-det and vs Clamp on "
        "Gaussians at 0.5, vs Clamp at 0.75), controls reject 26/42, preconditions 5/6 "
        "(point_prediction_loses_lam0.75 inconclusive, so every claim at 0.75 but range_argmin_beats_clamp_* is "
        "'setting invalid'); pooled Clamp vs PSK-det at 0.5 and every LP claim inconclusive (control passes). The "
        "full preset did not change after this",
    ),
    dict(
        variant="a lapse, recorded: the quick preset's size (10 truths per family) was chosen after its smoke run "
        "on its own reported seeds 100-102 (the entry above)",
        seeds=[100, 101, 102],
        outcome="quick verdicts only; the full preset unchanged",
    ),
    dict(
        variant="a lapse, recorded: after the first full run on the reported seeds 100-109 showed that both Clamp "
        "readings buy on the same day on every bimodal law, range_argmin_beats_psk_det_* got a second control "
        "(Clamp fed the point mass, the referee's break); a stricter control, not a knob",
        seeds=list(range(100, 110)),
        outcome="the three bimodal range-argmin claims holds -> inconclusive (control passes); claims 12/30 -> 9/30",
    ),
)


EXPERIMENT = register(
    Experiment(
        slug="ski_rental",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": (100, 101, 102), "full": tuple(range(100, 110))},
        measure=measure,
        judge=judge,
        threads=1,  # small LPs and numpy: one BLAS thread, so the numbers do not depend on the caller's setting
        dev_seeds=tuple(range(10)),
        tuning=TUNING,
    )
)
