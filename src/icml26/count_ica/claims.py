"""Reproduction, the evidence: claims (each with its control arm), preconditions, checks, tables and figures from
the per-seed records of :func:`icml26.count_ica.experiment.measure`.

Control arms (measured in the same run, on the same seeds and data):

- the temporal prior removed (``ar_iid``: the prior's AR coefficient held at 0, sources i.i.d. in time; everything
  else identical, from the same random starts with the same ELBO selection) for the mixing-recovery, parity and
  posterior-predictive claims of the main arm; the same removal applied to the FastICA-started refinement for that
  labelled arm's claim;
- the regime chain removed (one regime, ``C = 1``, a constant Viterbi path) for the S-regime claim.

The chance level is the data-free rule, random non-negative columns (``random_nonneg``): it is a baseline of every
mixing-recovery claim and the reference of ``fastica_degraded_moderate`` (the strongest simple alternative: a tuned
ICA that ties a rule which looks at no data is degraded).  Random Gaussian directions are printed as the weak version.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.stats as st

from icml26.core import Claim, Report, judge_every, judge_non_inferiority, judge_superiority, judge_threshold

__all__ = ["ARMS", "judge"]

ARMS = {
    "ar": "ARPLN-ICA (random start)",
    "ar_iid": "ARPLN-ICA without temporal prior",
    "ar_diag": "ARPLN-ICA, paper's factorised posterior (random start)",
    "ar_diag_iid": "paper's factorised posterior without temporal prior",
    "ar_fastica": "FastICA + ARPLN refinement",
    "ar_fastica_iid": "FastICA + refinement without temporal prior",
    "fastica": "FastICA (tuned)",
    "fastica_default": "FastICA (sklearn defaults)",
    "picard": "Picard",
    "amuse": "AMUSE",
    "pca": "PCA",
    "random_nonneg": "random non-negative columns (data-free)",
    "random": "random directions",
}


def _mcc(records, sc: str, arm: str) -> list[float]:
    return [float(np.mean(r["scenarios"][sc]["mcc"][arm])) for r in records]


def _diff(records, sc: str, arm: str, ref: str) -> list[float]:
    return [a - b for a, b in zip(_cos(records, sc, arm), _cos(records, sc, ref))]


def _cos(records, sc: str, arm: str) -> list[float]:
    return [float(np.mean(r["scenarios"][sc]["cos"][arm])) for r in records]


def restarts(cfg, sc: str) -> int:
    """The number of random starts of the randomly started ARPLN arms in scenario ``sc`` (``cfg.method_restarts``:
    pairs ``(scenario, starts)``)."""
    n = dict(cfg.method_restarts).get(sc)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"method_restarts must give an integer >= 1 for scenario {sc!r}, got {cfg.method_restarts!r}")
    return n


def _decided_by(claim: Claim) -> Claim:
    """A superiority statement's deciding number: the core records the worst lower end, but the rule rejects on the
    mean advantage (``mean < min_effect`` or ``<= 0`` against any baseline).  When a baseline row's verdict is "does
    not hold", the decisive number becomes the smallest such mean advantage, held against ``min_effect``."""
    rejected = [b for b in claim.baselines if b.get("verdict") == "does not hold" and "advantage_lower" in b]
    if not rejected:
        return claim
    worst = min(rejected, key=lambda b: b["mean_advantage"])
    bound = claim.test.get("min_effect", 0.0)
    dec = {
        "statistic": f"mean advantage over {worst['name']} (the rule rejects on the mean)",
        "value": worst["mean_advantage"],
        "bound": bound,
    }
    return replace(claim, test={**claim.test, "decisive": dec})


def paired_effect(a, b, alpha: float = 0.05) -> dict:
    """Paired effect ``a - b`` over seeds: mean, one-sided ``1 - alpha`` t lower end, two-sided t-test p-value and
    the number of seeds with a positive difference (a report-only test, no verdict)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.ndim != 1 or d.size < 3 or not np.all(np.isfinite(d)):
        raise ValueError(f"a and b must be finite paired values over >= 3 seeds, got a difference of shape {d.shape}")
    sd = d.std(ddof=1)
    lower = float(d.mean() - st.t.ppf(1 - alpha, d.size - 1) * sd / np.sqrt(d.size))
    p = float(st.ttest_1samp(d, 0.0).pvalue) if sd > 0 else float("nan")
    return {
        "mean": float(d.mean()),
        "lower": lower,
        "p": p,
        "positive": int((d > 0).sum()),
        "n": int(d.size),
        "per_seed": np.round(d, 3).tolist(),
    }


def _ratio(records, sc: str, arm: str) -> list[float]:
    return [r["scenarios"][sc]["sw"][arm] / r["scenarios"][sc]["sw"]["truth"] for r in records]


def _baselines(records, sc: str, with_picard: bool) -> dict:
    arms = ["fastica", "amuse"] + (["picard"] if with_picard else []) + ["random_nonneg"]
    return {f"{ARMS[a]} |cos| ({sc})": _cos(records, sc, a) for a in arms}


def judge(cfg, records: list[dict], report: Report) -> None:
    seeds = report.seeds or list(range(len(records)))
    with_picard = all(r["picard"] for r in records)
    note = f"{cfg.max_epochs} epochs max (early stop tol {cfg.tol:g}, patience {cfg.patience}), lr {cfg.lr:g}"
    starts = {sc: restarts(cfg, sc) for sc in cfg.scenarios}
    k_max = max(starts.values())
    best = (
        f"best of {starts} random starts per scenario (W = 0.01 N(0,1), the paper's) by final ELBO, no labels; lr "
        "not tuned (5e-3 kept from v1-v2)"
    )
    report.set_tuning(ARMS["ar"], configs=k_max, steps=cfg.max_epochs, note=f"{note}, {best}")
    report.set_tuning(ARMS["ar_iid"], configs=k_max, steps=cfg.max_epochs, note=f"{note}, {best}, AR coef held at 0")
    if any(sc in getattr(cfg, "paper_family_scenarios", ()) for sc in cfg.scenarios):
        k_pf = max(starts[sc] for sc in cfg.paper_family_scenarios if sc in starts)
        pf = f"{note}, {best}, covariance='diag' (the paper's factorised posterior)"
        report.set_tuning(ARMS["ar_diag"], configs=k_pf, steps=cfg.max_epochs, note=pf)
        report.set_tuning(ARMS["ar_diag_iid"], configs=k_pf, steps=cfg.max_epochs, note=f"{pf}, AR coef held at 0")
    report.set_tuning(ARMS["ar_fastica"], configs=1, steps=cfg.max_epochs, note=note + ", started from FastICA")
    report.set_tuning(
        ARMS["fastica"],
        configs=6 * cfg.fastica_restarts,
        steps=cfg.ica_max_iter,
        note=f"fun chosen per scenario on the dev seeds among logcosh/exp/cube x 1 or 10 restarts (-> "
        f"{dict(cfg.fastica_fun)}); best of {cfg.fastica_restarts} restarts by negentropy, no labels. The method's "
        f"budget is {starts} starts x {cfg.max_epochs} epochs, still about 1/{round(6 * cfg.fastica_restarts / k_max)} "
        "of FastICA's configurations (no lr grid, to keep the full preset within its time)",
    )
    if with_picard:
        report.set_tuning(ARMS["picard"], configs=1, steps=cfg.ica_max_iter, note="python-picard defaults")
    report.set_tuning(
        ARMS["amuse"],
        configs=5,
        steps=0,
        note=f"closed form; lag chosen on the dev seeds among 1-5 (-> {cfg.amuse_lag})",
    )
    report.set_tuning(
        ARMS["random_nonneg"], configs=1, steps=0, note=f"|N(0,1)| columns, mean over {cfg.chance_draws} draws per seed"
    )
    report.set_tuning("random", configs=1, steps=0, note="Gaussian random columns (the weak chance level, printed)")

    has = set(cfg.scenarios)
    if "moderate" in has:
        report.add_claim(
            judge_threshold(
                "fastica_degraded_moderate",
                "Moderate coherence: tuned FastICA on log(X + 0.5) is degraded to the data-free rule: its aligned "
                f"|cos| exceeds that of random non-negative columns by <= {cfg.min_gain:g} (the claims' margin)",
                (
                    f"{ARMS['fastica']} |cos| - {ARMS['random_nonneg']} |cos| (moderate)",
                    _diff(records, "moderate", "fastica", "random_nonneg"),
                ),
                threshold=cfg.min_gain,
                sense="<=",
                kind="precondition",
            )
        )
    if "high" in has:
        report.add_claim(
            judge_threshold(
                "fastica_fine_high",
                f"High coherence: tuned FastICA on log(X + 0.5) is not degraded, mean aligned |cos| >= "
                f"{cfg.degraded_threshold:g}",
                (f"{ARMS['fastica']} |cos| (high)", _cos(records, "high", "fastica")),
                threshold=cfg.degraded_threshold,
                kind="precondition",
            )
        )
    if "moderate" in has:
        pre = ["fastica_degraded_moderate"]
        base = _baselines(records, "moderate", with_picard)
        c = report.add_claim(
            judge_superiority(
                "beats_ica_moderate",
                f"Moderate coherence: ARPLN-ICA (our coupled posterior) from a random start (the paper's) exceeds "
                f"tuned FastICA, AMUSE, "
                f"Picard on log counts and the data-free rule (random non-negative columns) in aligned |cos| by >= "
                f"{cfg.min_gain:g} (one-sided paired test per seed)",
                (f"{ARMS['ar']} |cos| (moderate)", _cos(records, "moderate", "ar")),
                base,
                test=cfg.test,
                alpha=cfg.alpha,
                min_effect=cfg.min_gain,
                requires=pre,
                controls=["beats_ica_moderate_no_temporal_prior"],
            )
        )
        report.add_claim(
            c.control(
                "beats_ica_moderate_no_temporal_prior",
                "The same fit without the temporal prior (AR coefficient 0) does not beat the ICA baselines by the "
                "margin",
                (f"{ARMS['ar_iid']} |cos| (moderate)", _cos(records, "moderate", "ar_iid")),
            )
        )
        if all("ar_diag" in r["scenarios"]["moderate"]["cos"] for r in records):
            c = report.add_claim(
                judge_superiority(
                    "paper_family_beats_ica_moderate",
                    "Moderate coherence: the paper's own method, ARPLN-ICA with its factorised posterior "
                    "(covariance='diag') from a random start (the same starts as the main arm), exceeds tuned FastICA, "
                    f"AMUSE, Picard and the data-free rule in aligned |cos| by >= {cfg.min_gain:g}",
                    (f"{ARMS['ar_diag']} |cos| (moderate)", _cos(records, "moderate", "ar_diag")),
                    base,
                    test=cfg.test,
                    alpha=cfg.alpha,
                    min_effect=cfg.min_gain,
                    requires=pre,
                    controls=["paper_family_beats_ica_moderate_no_temporal_prior"],
                )
            )
            report.add_claim(
                c.control(
                    "paper_family_beats_ica_moderate_no_temporal_prior",
                    "The same factorised fit without the temporal prior does not beat the baselines by the margin",
                    (f"{ARMS['ar_diag_iid']} |cos| (moderate)", _cos(records, "moderate", "ar_diag_iid")),
                )
            )
        if all("ar_fastica" in r["scenarios"]["moderate"]["cos"] for r in records):
            c = report.add_claim(
                judge_superiority(
                    "refinement_beats_ica_moderate",
                    "Moderate coherence (labelled arm, NOT the paper's start): ARPLN-ICA started from FastICA's "
                    f"answer exceeds tuned FastICA, AMUSE, Picard and the data-free rule in aligned |cos| by >= "
                    f"{cfg.min_gain:g}",
                    (f"{ARMS['ar_fastica']} |cos| (moderate)", _cos(records, "moderate", "ar_fastica")),
                    base,
                    test=cfg.test,
                    alpha=cfg.alpha,
                    min_effect=cfg.min_gain,
                    requires=pre,
                    controls=["refinement_beats_ica_moderate_no_temporal_prior"],
                )
            )
            report.add_claim(
                c.control(
                    "refinement_beats_ica_moderate_no_temporal_prior",
                    "The same FastICA-started refinement without the temporal prior does not beat the baselines by "
                    "the margin",
                    (f"{ARMS['ar_fastica_iid']} |cos| (moderate)", _cos(records, "moderate", "ar_fastica_iid")),
                )
            )
        c = report.add_claim(
            judge_superiority(
                "beats_chance_moderate",
                f"Moderate coherence: ARPLN-ICA (our coupled posterior, random start) exceeds the chance level, the "
                f"data-free rule (random "
                f"non-negative columns), in aligned |cos| by >= {cfg.chance_gain:g}",
                (f"{ARMS['ar']} |cos| (moderate)", _cos(records, "moderate", "ar")),
                {f"{ARMS['random_nonneg']} |cos| (moderate)": _cos(records, "moderate", "random_nonneg")},
                test=cfg.test,
                alpha=cfg.alpha,
                min_effect=cfg.chance_gain,
                requires=pre,
                controls=["beats_chance_moderate_no_temporal_prior"],
            )
        )
        report.add_claim(
            c.control(
                "beats_chance_moderate_no_temporal_prior",
                "The same fit without the temporal prior does not beat chance by the margin",
                (f"{ARMS['ar_iid']} |cos| (moderate)", _cos(records, "moderate", "ar_iid")),
            )
        )
        c = report.add_claim(
            judge_threshold(
                "posterior_predictive_sw",
                f"Moderate coherence: sliced Wasserstein of {cfg.n_ppc} samples of the fitted model (random start) "
                f"to true samples <= {cfg.sw_ratio:g} x that of {cfg.n_ppc} fresh true samples (standardised log "
                "counts, T*K dims)",
                ("SW(model) / SW(fresh truth)", _ratio(records, "moderate", "ar")),
                threshold=cfg.sw_ratio,
                sense="<=",
                controls=["posterior_predictive_sw_no_temporal_prior"],
            )
        )
        report.add_claim(
            c.control(
                "posterior_predictive_sw_no_temporal_prior",
                "Samples of the fit without the temporal prior (no dynamics) do not match the truth within the ratio",
                ("SW(model without temporal prior) / SW(fresh truth)", _ratio(records, "moderate", "ar_iid")),
            )
        )
    if "high" in has:
        c = report.add_claim(
            judge_non_inferiority(
                "parity_high",
                f"High coherence: ARPLN-ICA (random start) is within {cfg.parity_margin:g} of tuned FastICA's "
                "aligned |cos|",
                (f"{ARMS['ar']} |cos| (high)", _cos(records, "high", "ar")),
                {f"{ARMS['fastica']} |cos| (high)": _cos(records, "high", "fastica")},
                margin=cfg.parity_margin,
                requires=["fastica_fine_high"],
                controls=["parity_high_no_temporal_prior"],
            )
        )
        report.add_claim(
            c.control(
                "parity_high_no_temporal_prior",
                "The same fit without the temporal prior is not within the margin of FastICA",
                (f"{ARMS['ar_iid']} |cos| (high)", _cos(records, "high", "ar_iid")),
            )
        )
    ts = [
        sc
        for sc in getattr(cfg, "truth_start_scenarios", ())
        if all("truth_start" in r["scenarios"][sc] for r in records)
    ]
    for sc in ts:
        c = report.add_claim(
            judge_threshold(
                f"truth_start_stays_{sc}",
                f"{sc.capitalize()} coherence: started at the true mixing, the fit with the coupled posterior "
                f"(covariance='full', issue 56) stays there: mean aligned |cos| >= {cfg.truth_start_cos:g}",
                (
                    f"|cos| of the fit started at the truth, coupled posterior ({sc})",
                    _truth_cos(records, sc, "full"),
                ),
                threshold=cfg.truth_start_cos,
                controls=[f"truth_start_stays_{sc}_factorised"],
            )
        )
        c2 = report.add_claim(
            judge_threshold(
                f"truth_elbo_not_beaten_{sc}",
                f"{sc.capitalize()} coherence, coupled posterior: with the mixing held fixed, equal training "
                f"({cfg.max_epochs} epochs, no early stopping) and the same non-amortised refinement of the posterior "
                f"({cfg.refine_steps} Adam steps on the head outputs, lr {cfg.refine_lr:g}, alternating with the "
                "M-step), the true mixing's ELBO per sequence is >= that of the method's own fitted mixing (random "
                "start): the objective does not prefer a drifted answer",
                (
                    f"refined ELBO/seq at the truth - at the method's mixing, coupled posterior ({sc})",
                    _elbo_gap(records, sc, "full"),
                ),
                threshold=0.0,
                controls=[f"truth_elbo_not_beaten_{sc}_factorised"],
            )
        )
        report.add_claim(
            c2.control(
                f"truth_elbo_not_beaten_{sc}_factorised",
                "With the paper's factorised posterior (the same refinement), the truth's ELBO is beaten by the mixing "
                "its own fit from the truth drifts to",
                (
                    f"refined ELBO/seq at the truth - at the drifted mixing, factorised posterior ({sc})",
                    _elbo_gap(records, sc, "diag"),
                ),
            )
        )
        report.add_claim(
            c.control(
                f"truth_start_stays_{sc}_factorised",
                "The same fit with the paper's posterior, factorised across components (covariance='diag'), drifts "
                "away from the truth",
                (
                    f"|cos| of the fit started at the truth, factorised posterior ({sc})",
                    _truth_cos(records, sc, "diag"),
                ),
            )
        )
    if cfg.regime:
        acc = {k: _regime_acc(records, k) for k in ("c2", "c1")}
        if all(np.isfinite(acc["c2"])):
            c = report.add_claim(
                judge_threshold(
                    "regime_viterbi_accuracy",
                    f"S-regime (our extension, C=2, sticky {cfg.regime_stickiness:g}): Viterbi regime accuracy >= "
                    f"{cfg.regime_threshold:g} on components whose regime means are separated (>= "
                    f"{cfg.separation:g} stationary sd)",
                    ("Viterbi accuracy (separated components)", acc["c2"]),
                    threshold=cfg.regime_threshold,
                    controls=["regime_viterbi_accuracy_one_regime"],
                )
            )
            report.add_claim(
                c.control(
                    "regime_viterbi_accuracy_one_regime",
                    "The same model with the regime chain removed (one regime: a constant path) does not reach it",
                    ("one-regime Viterbi accuracy (separated components)", acc["c1"]),
                )
            )
        report.add_claim(
            judge_every(
                "forward_backward_exact",
                "The smoothed regime marginals (forward-backward) equal brute-force enumeration of every path on a "
                "random 2-regime chain (T=5)",
                ("max |marginal - enumeration|", [r["forward_backward_error"] for r in records]),
                bound=1e-9,
                kind="check",
            )
        )
    report.add_claim(
        judge_every(
            "sample_path_truth_sw",
            f"CountICA.sample with the generating parameters plugged in matches fresh true samples: SW ratio <= "
            f"{cfg.sw_ratio:g} (the sampling + SW code path behind posterior_predictive_sw)",
            (
                "SW(truth-parameter samples) / SW(fresh truth)",
                [
                    r["scenarios"][sc]["sw"]["truth_params"] / r["scenarios"][sc]["sw"]["truth"]
                    for r in records
                    for sc in cfg.scenarios
                ],
            ),
            bound=cfg.sw_ratio,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "align_planted_exact",
            "align_mixing recovers a planted permutation + sign + rescaling of a mixing exactly (|cos| = 1)",
            ("1 - min |cos| + permutation errors", [r["planted_alignment"] for r in records]),
            bound=1e-10,
            kind="check",
        )
    )
    # the rule rejects a superiority statement on its mean advantage: record that mean as the deciding number
    report.claims[:] = [_decided_by(c) for c in report.claims]
    arms = [a for a in ARMS if a != "picard" or with_picard]
    _tables(cfg, records, report, arms, seeds)
    _prior_effect(cfg, records, report, seeds)
    _figures(cfg, records, report)
    report.metrics = {
        sc: {ARMS[a]: float(np.mean(_cos(records, sc, a))) for a in arms if a in records[0]["scenarios"][sc]["cos"]}
        for sc in cfg.scenarios
    }
    report.add_note(
        "The main arm starts from a random mixing as the paper's code does (W = 0.01 N(0, 1), Gamma = W / ||W||; "
        "until v3 ours was W = N(0, 1), which stalled the fit in a poor optimum, referee issue 56), best of "
        f"{starts} starts by final ELBO; the arm started from FastICA's own answer is reported "
        "separately and labelled (it measures 'FastICA plus refinement', not the method). The prior's initial "
        "values (B = 0.5, psi = 1) are ours, not the paper's (B ~ 0.1 N, psi ~ 0.1 |N|)."
    )
    report.add_note(
        "Issue 56, deliverable 2: every ARPLN arm except the labelled 'paper's factorised posterior' ones uses our "
        "posterior coupled across components (covariance='full'); the paper's factorised family from its random start "
        "is reported as its own arm with its own claim (paper_family_beats_ica_moderate). The truth-start fits run "
        "every epoch (no early stopping), and the ELBO comparison at a fixed mixing uses a non-amortised posterior "
        "(refine_posterior) for both mixings, so the encoder's training is not what decides it."
    )
    report.add_note(
        "The published baseline gap (Picard .33-.40, UwedgeICA .39-.46) is not reproduced: the released notebook "
        "scores the baselines against the low-excitation Gamma (see the spec). The |cos| metric is inflated for "
        "mostly positive mixings: the chance level is the data-free rule (random non-negative columns), a baseline "
        "of every mixing claim; the MCC of the sources, not inflated by positive loadings but with a "
        "chance level near 0.5 here (random directions and the data-free rule score ~0.48-0.50), is tabled beside it."
    )
    report.add_note(
        "Scope: every claim is for one fixed mixing per scenario, the notebook's Gamma (design='notebook'): a seed "
        "redraws the source paths, the counts and the starts, not the mixing, so the tests generalise over paths "
        "for these two matrices, not over mixings; the data-free rule's level is a property of them."
    )
    if not with_picard:
        report.add_note("python-picard is not installed: the Picard arm was skipped (pip install python-picard).")


def _elbo_gap(records, sc: str, fam: str, refined: bool = True) -> list[float]:
    """Truth minus drifted mixing, ELBO per sequence with the mixing held: at the refined (non-amortised)
    posterior, or (``refined=False``) at the amortised one."""
    suf = "_refined" if refined else ""
    return [
        r["scenarios"][sc]["truth_start"][fam][f"frozen_elbo{suf}"]
        - r["scenarios"][sc]["truth_start"][fam][f"frozen_drift_elbo{suf}"]
        for r in records
    ]


def _truth_cos(records, sc: str, fam: str) -> list[float]:
    return [float(np.mean(r["scenarios"][sc]["truth_start"][fam]["cos"])) for r in records]


def _regime_acc(records, key: str) -> list[float]:
    out = []
    for r in records:
        sel = [a for a, s in zip(r["regime"][key]["accuracy"], r["regime"]["separated"]) if s]
        out.append(float(np.mean(sel)) if sel else float("nan"))
    return out


def _ms(xs) -> str:
    xs = np.asarray(xs, dtype=float)
    return f"{xs.mean():.3f} ± {xs.std(ddof=1) if xs.size > 1 else 0.0:.3f}"


def _tables(cfg, records, report: Report, arms, seeds) -> None:
    rows = []
    for sc in cfg.scenarios:
        row = {"scenario": sc}
        for a in arms:
            if a in records[0]["scenarios"][sc]["cos"]:
                row[ARMS[a]] = _ms(_cos(records, sc, a))
        row["SW ratio (random start)"] = _ms(_ratio(records, sc, "ar"))
        row["SW ratio (no temporal prior)"] = _ms(_ratio(records, sc, "ar_iid"))
        rows.append(row)
    report.add_table(
        "mixing_recovery",
        rows,
        f"Aligned |cos| (mean over components, then mean ± sd over {len(records)} seeds); n={cfg.n}, T={cfg.T}, "
        f"K={cfg.n_features}, d={cfg.n_components}.",
    )
    if all("mcc" in r["scenarios"][sc] for r in records for sc in cfg.scenarios):
        mrows = []
        for sc in cfg.scenarios:
            row = {"scenario": sc}
            for a in arms:
                if a in records[0]["scenarios"][sc]["mcc"]:
                    row[ARMS[a]] = _ms(_mcc(records, sc, a))
            mrows.append(row)
        report.add_table(
            "source_recovery_mcc",
            mrows,
            "MCC between true and estimated sources (|corr| after Hungarian matching, mean over components, then mean "
            "± sd over seeds): posterior means for the ARPLN arms, pinv(mixing) applied to the centred log(X + 0.5) "
            "for the linear baselines and the data-free rules. Positive loadings do not inflate it, but its chance "
            "level here is about 0.5 (the random-directions and data-free columns).",
        )
    diag = []
    for sc in cfg.scenarios:
        for v in records[0]["scenarios"][sc]["elbo"]:
            diag.append(
                {
                    "scenario": sc,
                    "arm": ARMS[v],
                    "ELBO/seq first epoch": _ms([r["scenarios"][sc]["elbo"][v][0] for r in records]),
                    "ELBO/seq last epoch": _ms([r["scenarios"][sc]["final_elbo"][v] for r in records]),
                    "epochs run": _ms([r["scenarios"][sc]["epochs"][v] for r in records]),
                    "fitted AR coef (mean)": _ms([np.mean(r["scenarios"][sc]["ar_coef"][v]) for r in records]),
                    "true AR coef (mean)": _ms([np.mean(r["scenarios"][sc]["true_ar_coef"]) for r in records]),
                }
            )
    report.add_table(
        "learning",
        diag,
        "What each ARPLN arm learned: ELBO per sequence at the first and last epoch, epochs run, fitted AR "
        "coefficients (0 by construction without the temporal prior).",
    )
    trows = []
    for sc in getattr(cfg, "truth_start_scenarios", ()):
        if not all("truth_start" in r["scenarios"][sc] for r in records):
            continue
        for fam, name in (("full", "coupled (full)"), ("diag", "factorised (diag, the paper's)")):
            got = [r["scenarios"][sc]["truth_start"][fam] for r in records]
            trows.append(
                {
                    "scenario": sc,
                    "posterior": name,
                    "|cos| after the fit from the truth": _ms([np.mean(g["cos"]) for g in got]),
                    "ELBO/seq, fit from the truth": _ms([g["elbo"] for g in got]),
                    "|cos| of the drifted mixing": _ms([np.mean(g["drift_cos"]) for g in got]),
                    "ELBO/seq, truth held fixed (amortised)": _ms([g["frozen_elbo"] for g in got]),
                    "ELBO/seq, drifted mixing held fixed (amortised)": _ms([g["frozen_drift_elbo"] for g in got]),
                    "truth - drifted, amortised (per seed)": np.round(
                        [g["frozen_elbo"] - g["frozen_drift_elbo"] for g in got], 2
                    ).tolist(),
                    "ELBO/seq, truth held fixed (refined)": _ms([g["frozen_elbo_refined"] for g in got]),
                    "ELBO/seq, drifted mixing held fixed (refined)": _ms([g["frozen_drift_elbo_refined"] for g in got]),
                    "truth - drifted, refined (per seed)": np.round(
                        [g["frozen_elbo_refined"] - g["frozen_drift_elbo_refined"] for g in got], 2
                    ).tolist(),
                    "epochs run": _ms([g["epochs"] for g in got]),
                }
            )
    if trows:
        report.add_table(
            "truth_start",
            trows,
            f"Fits started at the true mixing (free, all {cfg.max_epochs} epochs, no early stopping), and the "
            "posterior fitted with the mixing held at the truth or at a drifted answer (coupled: the main arm's fitted "
            "mixing; factorised: where its fit from the truth ends), both for every epoch (equal training); each "
            "frozen fit's ELBO at the amortised posterior (the encoder's) and at the non-amortised one "
            f"(refine_posterior, {cfg.refine_steps} steps, lr {cfg.refine_lr:g}): the amortised minus refined gap "
            "is what the encoder's training contributed. A positive 'truth - drifted' is an objective that prefers "
            "the truth.",
        )
    if cfg.regime:
        rrows = [
            {
                "seed": s,
                "separated": r["regime"]["separated"],
                "C=2 accuracy per component": np.round(r["regime"]["c2"]["accuracy"], 3).tolist(),
                "C=1 accuracy per component": np.round(r["regime"]["c1"]["accuracy"], 3).tolist(),
                "C=2 |cos| per component": np.round(r["regime"]["c2"]["cos"], 3).tolist(),
            }
            for s, r in zip(seeds, records)
        ]
        report.add_table("regimes", rrows, "S-regime: Viterbi accuracy (up to regime relabeling) per true component.")


PRIOR_PAIRS = (
    ("moderate", "ar", "ar_iid"),
    ("high", "ar", "ar_iid"),
    ("moderate", "ar_fastica", "ar_fastica_iid"),
    ("moderate", "ar_diag", "ar_diag_iid"),
)


def _prior_effect(cfg, records, report: Report, seeds) -> None:
    """Report-only: the temporal prior's paired effect on aligned |cos| (arm minus the same arm without the prior)
    per seed, with a paired t-test; no verdict (the claims' controls carry the verdicts)."""
    rows = []
    for sc, a, b in PRIOR_PAIRS:
        if sc not in cfg.scenarios or not all(b in r["scenarios"][sc]["cos"] for r in records) or len(records) < 3:
            continue
        e = paired_effect(_cos(records, sc, a), _cos(records, sc, b), cfg.alpha)
        rows.append(
            {
                "scenario": sc,
                "arm": ARMS[a],
                "minus": ARMS[b],
                "mean effect": e["mean"],
                f"one-sided {1 - cfg.alpha:.0%} lower end": e["lower"],
                "p (two-sided t)": e["p"],
                "seeds > 0": f"{e['positive']}/{e['n']}",
                "per seed": e["per_seed"],
            }
        )
    if rows:
        report.add_table(
            "temporal_prior_effect",
            rows,
            f"The temporal prior's paired effect on aligned |cos| (arm minus the same arm with the AR coefficient held "
            f"at 0, same data and starts), over seeds {list(seeds)}; report-only, paired t-test over seeds.",
        )


def _figures(cfg, records, report: Report) -> None:
    from matplotlib.figure import Figure

    r0 = records[0]
    fig = Figure(figsize=(4.5 * len(cfg.scenarios), 3.4), layout="constrained")
    axes = fig.subplots(1, len(cfg.scenarios), squeeze=False)[0]
    for ax, sc in zip(axes, cfg.scenarios):
        for j, v in enumerate(r0["scenarios"][sc]["elbo"]):
            for r in records:
                h = r["scenarios"][sc]["elbo"][v]
                ax.plot(
                    np.linspace(1, r["scenarios"][sc]["epochs"][v], len(h)),
                    h,
                    alpha=0.6,
                    color=f"C{j}",
                    label=ARMS[v] if r is r0 else None,
                )
        ax.set_yscale("symlog")
        ax.set_title(f"ELBO during training ({sc} coherence)", fontsize=9)
        ax.set_xlabel("epoch")
        ax.set_ylabel("ELBO per sequence")
        ax.legend(fontsize=7)
    report.add_figure("elbo_curve", fig, "ELBO per sequence over training, every seed and ARPLN arm.")

    sc = cfg.scenarios[0]
    G, E = np.asarray(r0["scenarios"][sc]["true_mixing"]), np.asarray(r0["scenarios"][sc]["ar_mixing_aligned"])
    d = G.shape[1]
    fig = Figure(figsize=(2.6 * d, 3.0), layout="constrained")
    axes = fig.subplots(1, d, squeeze=False)[0]
    cos = r0["scenarios"][sc]["cos"]["ar"]
    Ed = r0["scenarios"][sc].get("ar_diag_mixing_aligned")  # the paper's factorised family, when it was fitted
    w = 0.8 / (2 if Ed is None else 3)
    for i, ax in enumerate(axes):
        k = np.arange(G.shape[0])
        ax.bar(k - w, G[:, i], w, label="true")
        ax.bar(k, E[:, i], w, label="ARPLN-ICA (random start)")
        title = f"column {i}: |cos| {cos[i]:.2f}"
        if Ed is not None:
            ax.bar(k + w, np.asarray(Ed)[:, i], w, label="paper's factorised posterior")
            title += f" / {r0['scenarios'][sc]['cos']['ar_diag'][i]:.2f}"
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("feature j")
        ax.set_ylabel("Gamma_j,i")
    axes[0].legend(fontsize=7)
    report.add_figure(
        "mixing_columns",
        fig,
        f"Seed {(report.seeds or [0])[0]}, {sc} coherence: true vs recovered (aligned) mixing columns, random start "
        "(our coupled posterior, and the paper's factorised one where fitted; titles: |cos| of each).",
    )
    if cfg.regime:
        U, V = np.asarray(r0["regime"]["true_paths"]), np.asarray(r0["regime"]["viterbi_paths"])
        fig = Figure(figsize=(9, 1.6 * d), layout="constrained")
        axes = fig.subplots(d, 1, squeeze=False)[:, 0]
        for i, ax in enumerate(axes):
            ax.step(np.arange(U.shape[1]), U[0, :, i], where="mid", label="true regime")
            ax.step(np.arange(U.shape[1]), V[0, :, i] + 0.05, where="mid", ls="--", label="Viterbi")
            ax.set_ylabel(f"u (comp {i})")
            ax.set_title(f"component {i} (separated: {r0['regime']['separated'][i]})", fontsize=8)
        axes[-1].set_xlabel("time t")
        axes[0].legend(fontsize=7)
        report.add_figure(
            "regime_paths",
            fig,
            "S-regime, first sequence: true vs Viterbi regime path per component (labels up to relabeling).",
        )
