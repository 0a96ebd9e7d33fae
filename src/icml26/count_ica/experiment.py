"""Reproduction, the measurement: ARPLN-ICA (CountICA) started as the paper starts it, against tuned FastICA, Picard
and AMUSE on log counts, and its control arms.

Per seed and scenario (``moderate``, ``high`` coherence; the paper notebook's realised dynamics and mixing, source
paths and counts drawn from the seed) every arm sees the same counts:

- ``ar``: the method, started from a random mixing as the paper's code starts it (``W = 0.01 N(0, 1)``,
  ``Gamma = W / ||W||``), best of ``method_restarts`` random starts (4 at moderate, 2 at high) by the final ELBO
  (label-free; the main arm);
- ``ar_iid``: the same (same starts, same ELBO selection), with the temporal prior removed (the prior's AR
  coefficient held at 0, sources i.i.d. in time): the control arm of every mixing-recovery and posterior-predictive
  claim;
- ``ar_fastica`` / ``ar_fastica_iid`` (moderate only): the labelled "FastICA + ARPLN refinement" arm, started from
  FastICA's answer, and the same refinement without the temporal prior (its control);
- baselines on ``log(X + 0.5)``: FastICA tuned (``fastica_fun`` chosen per scenario on the dev seeds, best of
  ``fastica_restarts`` restarts by FastICA's own negentropy contrast, no labels), FastICA with sklearn's defaults
  (reported only), Picard, AMUSE (second-order temporal ICA, ``amuse_lag`` chosen on the dev seeds), PCA;
- the data-free rule (``random_nonneg``): random non-negative columns ``|N(0, 1)|``, mean over ``chance_draws``
  draws per seed, which looks at no data and scores high because the true columns are mostly positive: the chance
  level the claims use; random Gaussian directions (``random``) are the weak chance level, printed only.

Our extension ``S-regime`` (``C = 2`` sticky regimes shifting each source's AR bias): Viterbi accuracy of the
``C = 2`` model and of the same model with the regime chain removed (``C = 1``: one regime, a constant path).
Metric: aligned ``|cos|`` between true and estimated mixing columns, averaged over components per seed (the seed is
the unit).  Reported beside it: the MCC between the true sources and each arm's sources (posterior means for ARPLN
arms, the unmixed centred log counts for the linear baselines): positive loadings do not inflate it, but its chance
level here is about 0.5 (random directions, the data-free rule).  The evidence is judged in :mod:`.claims`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from icml26.core import Experiment, register

from .baselines import (
    amuse_log,
    fastica_log,
    fastica_restarts,
    log_rows,
    pca_log,
    picard_available,
    picard_log,
    random_mixing,
    random_nonneg_mixing,
)
from .claims import ARMS, judge, restarts
from .data import make_arpln_data
from .estimator import CountICA, regime_marginals
from .metrics import align_mixing, mcc, regime_accuracy, sliced_wasserstein, standardized_log_counts
from .model import ARPLNICA

__all__ = ["Config", "FULL", "QUICK", "ARMS", "measure", "truth_model", "EXPERIMENT", "TUNING"]


@dataclass(frozen=True)
class Config:
    """Sizes, the estimator's settings (identical for every ARPLN arm), the baselines' tuning and the claims'
    thresholds.  ``fastica_fun`` (per scenario) and ``amuse_lag`` were chosen on the dev seeds (see :data:`TUNING`)."""

    scenarios: tuple[str, ...] = ("moderate", "high")
    n: int = 150
    T: int = 20
    n_features: int = 12
    n_components: int = 5
    design: str = "notebook"  # the notebook's realised dynamics and Gamma per scenario (see data.py)
    dynamics_seed: int = 2  # only for design="random" (and the S-regime data)
    # estimator (identical for every ARPLN arm)
    max_epochs: int = 400
    lr: float = 5e-3
    # the posterior family of every ARPLN arm: "full" couples the components at each time (issue 56, item 2);
    # "diag" is the paper's factorised family (the control of truth_start_stays_high)
    covariance: str = "full"
    truth_start_scenarios: tuple[str, ...] = ("high",)  # where fits started at (and frozen at) the truth are run
    # random starts per ARPLN arm from a random start and scenario, the best by final ELBO (label-free); 4 at moderate
    # (v3c, the second referee: 2 starts changed verdicts), 2 at high (parity_high misses by ~0.3; time)
    method_restarts: tuple[tuple[str, int], ...] = (("moderate", 4), ("high", 2))
    encoder_hidden: int = 32
    tol: float = 1e-5
    patience: int = 30
    fastica_init_scenarios: tuple[str, ...] = ("moderate",)  # where the labelled FastICA-started arm is fitted
    # where the paper's own method (factorised posterior, random start, the same starts) and its no-prior control run
    paper_family_scenarios: tuple[str, ...] = ("moderate",)
    # the non-amortised posterior of the frozen truth-start fits (CountICA.refine_posterior): Adam steps on the head
    # outputs, alternating with the closed-form M-step (chosen on dev seed 1, see TUNING)
    refine_steps: int = 500
    refine_lr: float = 0.05
    # baselines
    ica_max_iter: int = 1000
    fastica_fun: tuple[tuple[str, str], ...] = (("moderate", "exp"), ("high", "cube"))  # per scenario, dev seeds
    fastica_restarts: int = 10
    amuse_lag: int = 1  # dev seeds 0-4 and 100-104: lag 1 best pooled over both scenarios (see TUNING)
    chance_draws: int = 20  # draws of the data-free rule (random non-negative columns) per seed and scenario
    # posterior predictive
    n_ppc: int = 500
    n_projections: int = 500
    # S-regime extension
    regime: bool = True
    regime_n: int = 100
    regime_dynamics_seed: int = 5  # dev seeds: the first draw whose counts stay < 1e4 (seed 2 reached 1e8-1e12)
    regime_shift: float = 1.0
    regime_stickiness: float = 0.9
    separation: float = 2.0  # |b_2 - b_1| / (1 - |B|) over the stationary sd: "separated regime means"
    # claims
    degraded_threshold: float = 0.85
    min_gain: float = 0.08
    chance_gain: float = 0.08  # over the data-free rule (was 0.3 over Gaussian directions until v3; see TUNING)
    parity_margin: float = 0.02
    truth_start_cos: float = 0.95  # issue 56, item 2: "a fit started at the truth stays there (|cos| >= 0.95)"
    sw_ratio: float = 1.5
    regime_threshold: float = 0.8
    test: str = "ttest"
    alpha: float = 0.05


FULL = Config()
# the quick preset is a smoke run (< 60 s): smaller data, 60 epochs, 2 / 1 random starts; its verdicts are not the
# paper's (60 epochs leave even the factorised fit at the truth)
QUICK = Config(
    n=60,
    T=12,
    max_epochs=60,
    method_restarts=(("moderate", 2), ("high", 1)),
    n_ppc=200,
    n_projections=200,
    regime_n=50,
    fastica_restarts=3,
    chance_draws=5,
    refine_steps=100,
)


def _fun(cfg: Config, sc: str) -> str:
    funs = dict(cfg.fastica_fun)
    if sc not in funs:
        raise ValueError(f"fastica_fun must name a FastICA fun for scenario {sc!r}, got {cfg.fastica_fun!r}")
    return funs[sc]


def _fit(
    cfg: Config,
    X,
    seed: int,
    *,
    init="random",
    temporal: bool = True,
    n_regimes: int = 1,
    covariance: str | None = None,
    fix_mixing: bool = False,
    n_init: int = 1,
) -> CountICA:
    """One ARPLN fit with the config's settings; ``n_init`` random starts drawn from ``seed``, the best by final
    ELBO (the estimator's label-free selection, as FastICA's restarts by negentropy)."""
    return CountICA(
        cfg.n_components,
        n_regimes,
        temporal_prior=temporal,
        max_epochs=cfg.max_epochs,
        lr=cfg.lr,
        encoder_hidden=cfg.encoder_hidden,
        init=init,
        covariance=cfg.covariance if covariance is None else covariance,
        fix_mixing=fix_mixing,
        tol=cfg.tol,
        patience=cfg.patience,
        random_state=seed,
        n_init=n_init,
    ).fit(X)


def _linear_sources(X, mixing: np.ndarray) -> np.ndarray:
    """Sources of a linear baseline: ``pinv(mixing)`` applied to the centred ``log(X + 0.5)`` rows, ``(n T, d)``."""
    Z = log_rows(X)
    return (Z - Z.mean(0)) @ np.linalg.pinv(mixing).T


def _curve(h: np.ndarray, k: int = 60) -> list[float]:
    idx = np.unique(np.linspace(0, len(h) - 1, min(k, len(h))).astype(int))
    return [float(h[i]) for i in idx]


def _sw(cfg: Config, Xs, ref, seed: int) -> float:
    return sliced_wasserstein(standardized_log_counts(Xs, ref), standardized_log_counts(ref), cfg.n_projections, seed)


def _scenario(cfg: Config, sc: str, seed: int, with_picard: bool) -> dict:
    X, truth = make_arpln_data(
        cfg.n, cfg.T, cfg.n_features, cfg.n_components, 1, sc, seed, dynamics_seed=cfg.dynamics_seed, design=cfg.design
    )
    G = truth.mixing
    d, K = cfg.n_components, cfg.n_features
    est = {
        "fastica": fastica_restarts(
            X, d, fun=_fun(cfg, sc), restarts=cfg.fastica_restarts, max_iter=cfg.ica_max_iter, random_state=seed
        ),
        "fastica_default": fastica_log(X, d, max_iter=cfg.ica_max_iter, random_state=seed),
        "amuse": amuse_log(X, d, lag=cfg.amuse_lag),
        "pca": pca_log(X, d),
        "random": random_mixing(K, d, seed=seed),
    }
    if with_picard:
        est["picard"] = picard_log(X, d, max_iter=cfg.ica_max_iter, random_state=seed)
    k = restarts(cfg, sc)
    models = {"ar": _fit(cfg, X, seed, n_init=k), "ar_iid": _fit(cfg, X, seed, n_init=k, temporal=False)}
    if sc in cfg.paper_family_scenarios:  # the paper's own method: its factorised family, its start, the same starts
        models["ar_diag"] = _fit(cfg, X, seed, n_init=k, covariance="diag")
        models["ar_diag_iid"] = _fit(cfg, X, seed, n_init=k, covariance="diag", temporal=False)
    if sc in cfg.fastica_init_scenarios:
        models["ar_fastica"] = _fit(cfg, X, seed, init="fastica")
        models["ar_fastica_iid"] = _fit(cfg, X, seed, init="fastica", temporal=False)
    out: dict = {"elbo": {}, "epochs": {}, "final_elbo": {}, "ar_coef": {}}
    for v, m in models.items():
        est[v] = m.mixing_
        out["elbo"][v] = _curve(m.elbo_history_)
        out["final_elbo"][v] = float(m.score(X))
        out["epochs"][v] = int(m.n_iter_)
        out["ar_coef"][v] = m.ar_coef_[:, 0].tolist()
    out["cos"] = {a: align_mixing(E, G)[3].tolist() for a, E in est.items()}
    S_true = truth.sources.reshape(-1, d)
    out["mcc"] = {a: mcc(S_true, _linear_sources(X, E)).tolist() for a, E in est.items() if a not in models}
    for v, m in models.items():
        out["mcc"][v] = mcc(S_true, m.transform(X).reshape(-1, d)).tolist()
    # the data-free rule: mean over draws of each component's aligned |cos| (and MCC)
    draws = [random_nonneg_mixing(K, d, seed=[seed, 1, r]) for r in range(cfg.chance_draws)]
    out["cos"]["random_nonneg"] = np.mean([align_mixing(E, G)[3] for E in draws], 0).tolist()
    out["mcc"]["random_nonneg"] = np.mean([mcc(S_true, _linear_sources(X, E)) for E in draws], 0).tolist()
    out["true_mixing"], out["ar_mixing_aligned"] = G.tolist(), align_mixing(est["ar"], G)[0].tolist()
    if "ar_diag" in est:
        out["ar_diag_mixing_aligned"] = align_mixing(est["ar_diag"], G)[0].tolist()
    out["true_ar_coef"] = truth.ar_coef[:, 0].tolist()
    ref = truth.sample(cfg.n_ppc, seed=seed + 10_000)
    fresh = truth.sample(cfg.n_ppc, seed=seed + 20_000)
    sw = {v: _sw(cfg, models[v].sample(cfg.n_ppc, cfg.T, random_state=seed)[0], ref, seed) for v in ("ar", "ar_iid")}
    sw["truth"] = _sw(cfg, fresh, ref, seed)
    # the same sampling + SW code path with the generating parameters plugged in (checks `sample` itself)
    sw["truth_params"] = _sw(cfg, truth_model(truth).sample(cfg.n_ppc, cfg.T, random_state=seed + 30_000)[0], ref, seed)
    out["sw"] = sw
    if sc in cfg.truth_start_scenarios:
        out["truth_start"] = _truth_start(cfg, X, G, est["ar"], seed)
    return out


def _truth_start(cfg: Config, X, G: np.ndarray, G_method: np.ndarray, seed: int) -> dict:
    """Does the objective prefer the truth?  Per posterior family (``full``: coupled, ``diag``: the paper's
    factorised one), with the seed's data, every fit for all ``max_epochs`` epochs (no early stopping: ``tol = 0``):

    - ``free``: a fit started at the true mixing: does it stay?  (Until v3e it early-stopped, and its |cos| rested
      on where training stopped: the third referee.)
    - ``frozen``: the posterior and the prior fitted with the mixing held at the truth, and ``frozen_drift`` the
      same with the mixing held at a drifted answer (``full``: the main arm's fitted mixing ``G_method``; ``diag``:
      the free fit's end point).  Each frozen fit's ELBO is then taken at a non-amortised posterior,
      :meth:`CountICA.refine_posterior` with ``cfg.refine_steps`` / ``cfg.refine_lr`` for both (the family's best
      bound found at that mixing, not the encoder's); the amortised ELBOs are kept beside them.  A drifted mixing
      whose refined ELBO beats the truth's is an objective that prefers a wrong mixing."""
    out: dict = {}
    full_run = replace(cfg, tol=0.0)
    for fam in ("full", "diag"):
        free = _fit(full_run, X, seed, init=G, covariance=fam)
        frozen = _fit(full_run, X, seed, init=G, covariance=fam, fix_mixing=True)
        drift = G_method if fam == "full" else free.mixing_
        frozen_drift = _fit(full_run, X, seed, init=drift, covariance=fam, fix_mixing=True)
        ref = {
            k: m.refine_posterior(X, n_steps=cfg.refine_steps, lr=cfg.refine_lr)
            for k, m in (("t", frozen), ("d", frozen_drift))
        }
        out[fam] = {
            "cos": align_mixing(free.mixing_, G)[3].tolist(),
            "elbo": float(free.score(X)),
            "epochs": int(free.n_iter_),
            "frozen_elbo": float(frozen.score(X)),
            "drift_cos": align_mixing(drift, G)[3].tolist(),
            "frozen_drift_elbo": float(frozen_drift.score(X)),
            "frozen_elbo_refined": float(ref["t"]["elbo"]),
            "frozen_drift_elbo_refined": float(ref["d"]["elbo"]),
            "refine_curve": {k: _curve(r["history"], 20) for k, r in ref.items()},
        }
    return out


def truth_model(truth) -> CountICA:
    """A :class:`CountICA` whose fitted attributes are the generating parameters of ``truth`` (an
    :class:`~icml26.count_ica.data.ARPLNTruth` with a constant offset, carried by the intercept): its ``sample``
    draws from the true model through the estimator's own code path.  Only the sampling attributes are set: its
    ``model_`` is a fresh module (the truth's mixing need not have the unit columns ``ARPLNICA.Gamma`` imposes), so
    ``transform`` / ``score`` on it are meaningless."""
    if not np.allclose(truth.offsets, truth.offsets.flat[0]):
        raise ValueError("truth.offsets must be constant: truth_model carries the offset in the intercept")
    K, d = truth.mixing.shape
    C = truth.pi.shape[1]
    m = CountICA(d, C)
    m.model_ = ARPLNICA(K, d, C)
    m.n_features_in_ = K
    m.mixing_ = np.asarray(truth.mixing, dtype=float)
    m.components_ = np.linalg.pinv(m.mixing_)
    m.intercept_ = np.full(K, float(truth.offsets.flat[0]))
    m.initial_, m.transition_ = truth.pi, truth.transition
    m.ar_coef_, m.ar_bias_, m.ar_var_ = truth.ar_coef, truth.ar_bias, truth.ar_var
    m.init_mean_, m.init_var_ = truth.init_mean, truth.init_var
    return m


def _regime(cfg: Config, seed: int) -> dict:
    X, truth = make_arpln_data(
        cfg.regime_n,
        cfg.T,
        cfg.n_features,
        cfg.n_components,
        2,
        "moderate",
        seed,
        dynamics_seed=cfg.regime_dynamics_seed,
        regime_shift=cfg.regime_shift,
        stickiness=cfg.regime_stickiness,
    )
    B = np.abs(truth.ar_coef[:, 0])
    gap = np.abs(truth.ar_bias[:, 1] - truth.ar_bias[:, 0]) / np.maximum(1.0 - B, 1e-3)
    sd = np.sqrt(truth.ar_var[:, 0] / np.maximum(1.0 - B**2, 1e-3))
    out: dict = {"separated": ((gap / sd >= cfg.separation) & (B < 1.0)).tolist()}
    for name, C in (("c2", 2), ("c1", 1)):  # the method, and the method with the regime chain removed
        m = _fit(cfg, X, seed, n_regimes=C)
        _, perm, _, cos = align_mixing(m.mixing_, truth.mixing)
        path = m.predict_regimes(X, viterbi=True)[..., perm]  # estimated component perm[i] <-> true component i
        out[name] = {"accuracy": regime_accuracy(truth.regimes, path).tolist(), "cos": cos.tolist()}
        if C == 2:
            out["true_paths"], out["viterbi_paths"] = truth.regimes[:3].tolist(), path[:3].tolist()
            out["elbo"] = _curve(m.elbo_history_)
    return out


def _planted_alignment(seed: int) -> float:
    """1 - min cos after aligning a permuted, sign-flipped, rescaled copy of a random mixing (0 exactly)."""
    rng = np.random.default_rng([seed, 3])
    G = rng.standard_normal((12, 5))
    p = rng.permutation(5)
    E = G[:, p] * rng.choice([-1.0, 1.0], 5) * rng.uniform(0.1, 10.0, 5)
    _, perm, _, cos = align_mixing(E, G)
    return float(1.0 - cos.min() + np.abs(p[perm] - np.arange(5)).sum())


def _forward_backward_error(seed: int, T: int = 5, C: int = 2) -> float:
    """Max |regime_marginals - brute force| on a random chain (every one of the C^T paths enumerated)."""
    import itertools

    rng = np.random.default_rng([seed, 4])
    d = 2
    log_pi = np.log(rng.dirichlet(np.ones(C), d))
    log_A = np.log(rng.dirichlet(np.ones(C), (d, C)))
    L = rng.normal(0.0, 2.0, (1, T, d, C))
    got = regime_marginals(log_pi, log_A, L)[0]  # (T, d, C)
    want = np.zeros((T, d, C))
    for i in range(d):
        for path in itertools.product(range(C), repeat=T):
            lp = log_pi[i, path[0]] + sum(log_A[i, path[t - 1], path[t]] for t in range(1, T))
            lp += sum(L[0, t, i, path[t]] for t in range(T))
            for t in range(T):
                want[t, i, path[t]] += np.exp(lp)
    want /= want.sum(-1, keepdims=True)
    return float(np.abs(got - want).max())


def measure(cfg: Config, seed: int, progress=None) -> dict:
    for sc in cfg.scenarios:
        if sc not in ("moderate", "high"):
            raise ValueError(f"scenarios must be drawn from ('moderate', 'high'), got {cfg.scenarios!r}")
    with_picard = picard_available()
    out: dict = {"picard": with_picard, "scenarios": {}}
    for sc in cfg.scenarios:
        out["scenarios"][sc] = _scenario(cfg, sc, seed, with_picard)
    if cfg.regime:
        out["regime"] = _regime(cfg, seed)
    out["planted_alignment"] = _planted_alignment(seed)
    out["forward_backward_error"] = _forward_backward_error(seed)
    return out


# design seeds only: 0-4 (reported until v2), 100-104 (reported in v3, then probed by the first referee), 300-304
# (reported in v3b, then probed by the second referee), 500-504 (reported in v3c, with the factorised posterior) and
# 600-604 (the first v3e run, before the equal-training ELBO comparison), 700-704 (the v3e reference run, then probed
# by the third referee)
DEV = (
    tuple(range(5))
    + tuple(range(100, 105))
    + tuple(range(300, 305))
    + tuple(range(500, 505))
    + tuple(range(600, 605))
    + tuple(range(700, 705))
)
SEEDS_0_4, REPORTED_V3, REPORTED_V3B = list(range(5)), list(range(100, 105)), list(range(300, 305))
REPORTED_V3C, FIRST_V3E, REPORTED_V3E = list(range(500, 505)), list(range(600, 605)), list(range(700, 705))
TUNING = (
    dict(
        variant="v1-v2 design (before v3): more than 12 variants of the estimator (lr, epochs, init random/pca/"
        "fastica, encoder size, early stopping) and of the data (design random vs notebook, offsets) were tried on "
        "seeds 0-2, which were then reported; the old ledger listed one. Recorded here from the issue and the git "
        "history; none of those seeds is reported any more",
        seeds=[0, 1, 2],
        outcome="init='fastica' (FastICA's own answer as the start) and lr 5e-3 kept; moderate ARPLN 0.84 vs "
        "FastICA 0.67 from that start",
    ),
    dict(
        variant="v2 data knob: the high-coherence scenario's offset 0.7 -> 1.5 (the moderate one's) to make "
        "fastica_fine_high hold",
        seeds=SEEDS_0_4,
        outcome="default FastICA ~0.85 -> ~0.88 at high coherence; kept (the notebook's Gamma, our offset)",
    ),
    dict(
        variant="v3 pilot: main arm from a random start (the paper's), 400 epochs, lr 5e-3; with and without the "
        "temporal prior; FastICA-started arm",
        seeds=[0, 1],
        outcome="moderate |cos|: random start 0.43 / 0.51, without temporal prior 0.44 / 0.51, FastICA start "
        "0.81 / 0.88, FastICA 0.66 / 0.64; ~10 s per fit -> max_epochs 600 -> 400 to fit the 10-minute budget",
    ),
    dict(
        variant="v3 FastICA tuning: fun in {logcosh, exp, cube} x {1 run, best of 10 restarts by negentropy}; "
        "Picard, AMUSE (lag 1) alongside",
        seeds=SEEDS_0_4,
        outcome="mean |cos| moderate / high: logcosh x1 .669/.883, x10 .671/.882; exp x1 .675/.839, x10 .675/.833; "
        "cube x1 .645/.908, x10 .647/.908; Picard .669/.879; AMUSE .722/.761 -> fastica_fun='cube' with 10 restarts "
        "(best mean over both scenarios, .778 vs logcosh .777: a near tie)",
    ),
    dict(
        variant="v3 data knob: S-regime dynamics draw (dynamics_seed 2 -> 5); with seed 2 the counts reach "
        "1e8-1e12 (a B = 0.97 source with bias +-1 around 0.86) and the randomly started fit breaks down (NaN, "
        "Cholesky failure on dev seed 4); draws 0-11 scanned on the data only (max count, separated components), "
        "no fit: 5 is the first with max count < 1e4 and all 5 components separated",
        seeds=SEEDS_0_4,
        outcome="max count 1.6e3 over dev seeds 0-4; the one full dev run before this change crashed at seed 4",
    ),
    dict(
        variant="v2 encoder variants (docs 'Tried and not kept'), moderate / high, seed 0 unless noted: exact Kalman "
        "smoother baseline; the same with conditional variances (seed 1); least-squares baseline without Kalman step "
        "(seed 1); correction in standard-error units; stop-gradient through the baseline; no intercept with known "
        "offsets; lr 1e-2; lr 2e-3 x 1500 epochs; mini-batches of 50; float64, random init, hidden 64 (intermediate "
        "code versions)",
        seeds=[0, 1],
        outcome=".733/.665; .839/.665; .826/.620; .827/.663; .494 (moderate); .654 (high); .693; .698; .796; "
        ".732, .549, .826 -> none kept; the weighted least-squares baseline with a zero-initialised head kept",
    ),
    dict(
        variant="v3 referee probes (issue 56), seeds 100-104 (the v3 reported seeds, dev seeds since): main arm "
        "from W = 0.01 randn (the paper's start) vs W = randn; the same without the temporal prior; the paper's "
        "schedule (lr 1.5e-3, 600 epochs); init='pca'; the data-free rule (random non-negative columns, 20 draws); "
        "AMUSE lags 1/2/3/5",
        seeds=REPORTED_V3,
        outcome="moderate |cos|: W = randn .500, W = 0.01 randn .739 (ELBO -921..-926 vs -1029..-1086), without "
        "temporal prior .777; paper schedule .761 (3 seeds); pca .83/.80 (2 seeds); data-free rule .688 (high .754); "
        "AMUSE lags .699/.682/.715/.696",
    ),
    dict(
        variant="v3b: the main arm's start W = randn -> W = 0.01 randn (the paper's code, the referee's finding), "
        "nothing else changed; 2 random starts per seed (random_state seed, seed + 10000), with and without the "
        "temporal prior, both scenarios",
        seeds=[0, 1, 2],
        outcome="moderate |cos| start 1 / start 2 / best-ELBO: .818/.707/.818, .654/.755/.755, .676/.786/.786 "
        "(mean of the first .716, ELBO-selected .786); without temporal prior first .796, ELBO-selected .744 (its "
        "ELBOs differ by < 0.6 nats); high: first .646, selected .612; without prior first .628, selected .628. ~11 s "
        "per fit -> method_restarts = 2 (12 fits per seed, ~12 minutes for the full preset); no lr grid (time)",
    ),
    dict(
        variant="v3b AMUSE lag 1-5 on seeds 0-4 and 100-104 (our amuse_log; the referee's probe gave other numbers "
        "on 100-104, listed above); the data-free rule on 0-4",
        seeds=SEEDS_0_4 + REPORTED_V3,
        outcome="AMUSE moderate lags 1-5 on 0-4 .722/.690/.660/.695/.683, on 100-104 .687/.699/.682/.689/.659; high "
        "on 0-4 .761/.747/.726/.721/.718, on 100-104 .754/.721/.715/.690/.697 -> lag 1 (best pooled over the 10 dev "
        "seeds in both scenarios); data-free rule on 0-4: moderate .695, high .765",
    ),
    dict(
        variant="v3b FastICA fun per scenario (it was chosen on the mean over both scenarios: cube, below sklearn's "
        "default at moderate): from the v3 sweep on seeds 0-4 above, the best fun x 10 restarts per scenario; "
        "checked on 100-104",
        seeds=SEEDS_0_4 + REPORTED_V3,
        outcome="moderate: exp .675 (logcosh .671, cube .647); high: cube .908 -> fastica_fun moderate 'exp', high "
        "'cube'. On 100-104 (x 10 restarts) moderate logcosh/exp/cube .675/.681/.661, high .872/.821/.897: the same "
        "choice",
    ),
    dict(
        variant="v3b claim and precondition restated after the referee's numbers (no fit): the data-free rule is a "
        "baseline of beats_ica_moderate / refinement_beats_ica_moderate and the chance arm of beats_chance_moderate "
        "(margin 0.3 over Gaussian directions -> 0.08 over the data-free rule, the claims' margin: .69 + 0.3 is out "
        "of reach of any method); fastica_degraded_moderate: tuned FastICA <= 0.85 absolute -> FastICA minus the "
        "data-free rule <= 0.08 (degraded to a rule that looks at no data)",
        seeds=REPORTED_V3,
        outcome="fixed before any run on the reported seeds 300-304",
    ),
    dict(
        variant="v3b reference run (reported then, dev seeds since): 2 random starts by ELBO for the main arm and "
        "its no-temporal-prior control, both scenarios",
        seeds=REPORTED_V3B,
        outcome="moderate |cos| main arm .765 (per seed .777 .686 .791 .727 .846), without temporal prior .779, "
        "FastICA-started .843, its no-prior control .775, tuned FastICA .697, AMUSE .709, data-free rule .692; "
        "high: main .601, no prior .607, FastICA .911, data-free rule .758. beats_ica_moderate and "
        "beats_chance_moderate did not hold",
    ),
    dict(
        variant="second referee's probe (issue 56): best of 4 random starts by final ELBO (random_state seed, "
        "+10000, +20000, +30000), main arm and its no-temporal-prior control, moderate only",
        seeds=REPORTED_V3B,
        outcome="main arm .765 -> .808 (per seed .777 .854 .791 .771 .846), no prior .779 -> .788; main - AMUSE "
        "+0.099 (lower end +0.048), main - data-free rule +0.116 (lower end +0.080): beats_ica_moderate and "
        "beats_chance_moderate 'does not hold' -> 'inconclusive'. FastICA-started arm minus its no-prior control "
        "(2-start run): +0.068, lower end +0.054, 5/5 seeds",
    ),
    dict(
        variant="v3c: method_restarts 2 -> 4 at moderate (the main arm and its no-prior control equally; the "
        "referee's probe above is the only evidence for the choice), 2 kept at high (4 at both would take ~18 "
        "minutes; parity_high missed by 0.31 at 2); no lr grid. Reported seeds 300-304 -> fresh 500-504",
        seeds=REPORTED_V3B,
        outcome="no further fit on dev seeds: the code change was made and the full preset run once on 500-504. "
        "Remaining gap: 4 configs x 400 epochs (method) vs 60 x 1000 iterations (FastICA: 3 funs x 1 or 10 "
        "restarts x 2 scenarios on the dev seeds)",
    ),
    dict(
        variant="v3c reference run (reported then, dev seeds since), factorised posterior: claims 0/6 hold",
        seeds=REPORTED_V3C,
        outcome="moderate |cos| main arm .770, without temporal prior .743, FastICA-started .828, tuned FastICA .682, "
        "AMUSE .706, data-free rule .698; high: main .632, no prior .636, FastICA .911; Viterbi accuracy .51 (C=2) "
        "vs .51 (C=1)",
    ),
    dict(
        variant="v3d probes (issue 56 item 2): the posterior coupled across components (covariance='full': Psi_t "
        "= R_t Lc_t Lc_t' R_t', R_t R_t' the least-squares covariance) against the paper's factorised one ('diag'), "
        "and the exact forward-backward q(u); fits from the true mixing (free, and frozen with fix_mixing) and from "
        "a random start (1 start), 400 epochs, the arms' early stopping",
        seeds=[0, 1, 2],
        outcome="high, from the truth: full .959 / .955 / .958, diag .767 (seed 0; ELBO/seq -1019 free vs -1107 "
        "frozen: the factorised objective prefers a wrong mixing by ~90 nats/seq); full ELBO free -1009 / -1006 / "
        "-1009 vs frozen -1018 / -1016 / -1019. Random start: full .912 / .908 / .723, diag .622 (seed 0). "
        "Moderate (seeds 0, 1): from the truth .991 / .992, random .922 / .775. Seed 1 without early stopping: 400 "
        "epochs .949, 1000 epochs .968; at 1000 epochs the truth frozen -997.9 vs the random fit's mixing (.908) "
        "frozen -994.6 (seed 2: -1001.6 vs -1002.6 for a .723 fit): with the coupled posterior the objective's "
        "preference for a wrong mixing is a few nats/seq, within what the encoder's training moves. Kept: full as "
        "every ARPLN arm's family (nothing else changed; no threshold moved)",
    ),
    dict(
        variant="v3d timing run of the full config (one seed, to size the preset)",
        seeds=[1],
        outcome="212 s per seed (5 seeds ~18 min with 1 job -> the reference run uses --jobs 2). |cos| moderate: "
        "main .775, no prior .780, FastICA-started .909, tuned FastICA .663, AMUSE .703, data-free .689; high: main "
        ".926, no prior .691, tuned FastICA .914; from the truth full .955 vs diag .768; Viterbi C=2 .81 vs C=1 .52. "
        "Nothing changed after it. Reported seeds 500-504 -> fresh 600-604",
    ),
    dict(
        variant="v3e first full run (then meant as the reference; dev seeds since): coupled posterior for every arm, "
        "exact q(u), the truth-start claim; its truth-start table compared the ELBO of an early-stopped frozen fit "
        "(~160 epochs) with fits that ran ~400 epochs, an unequal comparison",
        seeds=FIRST_V3E,
        outcome="claims 5/7 hold, controls reject 7/7, checks 3/3, preconditions 2/2 (759 s, --jobs 2). Moderate "
        "|cos| main .907, no prior .717, FastICA-started .896, tuned FastICA .680, AMUSE .714; high main .837, no "
        "prior .688, FastICA .910 (parity does not hold); from the truth full .959 (lower end .954), diag .771; "
        "Viterbi .81 (lower end .809) vs .51. The main arm's high-coherence fits (|cos| .70-.88) reached ELBO/seq "
        "-993..-1003, above the truth-started fits (-1001..-1004) and the early-stopped frozen truth (-1010..-1013). "
        "Change after it (no threshold or setting of the other claims moved): the frozen fits run every epoch, the "
        "main arm's mixing is frozen the same way, and the claim truth_elbo_not_beaten_high (threshold 0, the "
        "issue's wording) with the factorised family as its control; reported seeds -> fresh 700-704",
    ),
    dict(
        variant="which change moves the S-regime Viterbi accuracy: the factorised posterior (covariance='diag') with "
        "the exact forward-backward q(u), regime data of one dev seed (report only, nothing chosen)",
        seeds=[1],
        outcome="C=2 accuracy per component .619 .986 .540 .682 .539 (mean .673; C=1 .516), against .81 with the "
        "coupled posterior (timing run above) and .51-.52 with the forward-only q(u) and the factorised posterior "
        "(every run before v3e): both changes contribute",
    ),
    dict(
        variant="third referee's probes (issue 56) on the reported seeds, after the reference run (nothing changed "
        "by them): the main arm with the paper's factorised posterior (same 4 starts by ELBO); the fits from the "
        "truth run for all 400 epochs without early stopping",
        seeds=REPORTED_V3E,
        outcome="factorised from a random start, moderate: .824 .753 .764 .760 .745 (mean .769 vs the coupled .906; "
        "+0.137, lower end +0.094, 5/5 seeds; with it as the main arm beats_ica_moderate and beats_chance_moderate "
        "do not hold). From the truth, 400 epochs: .9471 .9508 .9548 .9501 .9456 (mean .9497: truth_start_stays_high "
        "would not hold; the reported fits early-stop at 135-214 epochs at .9552)",
    ),
    dict(
        variant="v3e reference run (reported then, dev seeds since): claims 2/8 hold, controls reject 7/8",
        seeds=REPORTED_V3E,
        outcome="moderate |cos| main .906, no prior .717, FastICA-started .919 / .815, tuned FastICA .680, AMUSE "
        ".697, data-free .692; high main .821, FastICA .903; from the truth (early-stopped) .955 vs diag .772; "
        "amortised ELBO truth - main arm's mixing -7.9 nats/seq (diag -96.4); Viterbi .877. Changes after it "
        "(v3g, the third referee's items; no threshold moved): the free truth-start fits run every epoch; the "
        "ELBO comparison at a fixed mixing uses refine_posterior for both mixings; the paper's factorised family "
        "from a random start is an arm (ar_diag, same starts) with its claim and no-prior control; the best-of-"
        "starts selection is CountICA(n_init) (its starts are drawn from random_state, not seed + 10000 r); "
        "reported seeds -> fresh 800-804",
    ),
    dict(
        variant="v3g refine_posterior schedule: Adam on the head outputs (lr 0.02 / 0.05 / 0.1, 1000 steps), "
        "alternating with the M-step, at the truth frozen for 400 epochs (high coherence), both families",
        seeds=[1],
        outcome="coupled: amortised -1015.4 -> -989.4 / -987.7 / -987.4 / -987.3 after 100 / 200 / 300 / 500 steps "
        "(1000: -987.3; the three lr within 0.03); factorised: -1104.2 -> -1059.6 / -1057.3 / -1056.9 / -1056.7 "
        "(1000: -1054.8, still creeping). ~12 ms per step -> refine_steps 500, lr 0.05 (coupled within ~0.02 nats "
        "of 1000 steps; 4 refinements per seed, ~25 s)",
    ),
    dict(
        variant="v3g timing run of the full config (one dev seed, --dev; the machine partly loaded for its first 4 "
        "minutes), to size the preset; nothing was changed after it",
        seeds=[0],
        outcome="436 s per seed (v3e: 212-250 s): ~20 minutes with --jobs 2 for 5 seeds, over DESIGN's 15; nothing "
        "cut (the extra cost is the paper's-family arm and its control at the main arm's 4 starts, the truth-start "
        "fits run every epoch and the refinement; fewer starts would change the main arm's budget, and fewer PPC or "
        "chance draws save < 5 s). |cos| moderate: main .922, no prior .725, paper's factorised .865, its no-prior "
        ".825, FastICA-started .835, tuned FastICA .654, AMUSE .744, data-free .707; high: main .912, FastICA .913. "
        "From the truth (400 epochs): coupled .954, factorised .767. Truth - main arm's mixing (|cos| .912), "
        "coupled: amortised -9.6, refined +3.5 nats/seq; factorised (its drift .767): -96.1 -> -54.2",
    ),
)


EXPERIMENT = register(
    Experiment(
        slug="count_ica",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": (800, 801, 802), "full": (800, 801, 802, 803, 804)},
        measure=measure,
        judge=judge,
        threads=1,
        dev_seeds=DEV,
        tuning=TUNING,
    )
)
