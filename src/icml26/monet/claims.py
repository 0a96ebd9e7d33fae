"""Reproduction, the evidence: ``judge(config, records, report)`` turns the per-seed records of
:func:`icml26.monet.experiment.measure` into judged statements, tables and figures (seeds are the units; paired
one-sided t tests over seeds).

Per dataset ``ds`` of the run (the reported run: the complementary synthetic setting ``s1``):

* preconditions ``weak_undertrained_<ds>`` (joint training's weak-modality probe is <= 0.9 x that of the encoder
  trained alone), ``fusion_helps_<ds>`` (the best single modality, chosen on validation, reaches <= 0.95 x the
  oracle-fused model: a logistic regression on the concatenated features of the separately trained encoders) and
  ``joint_headroom_<ds>`` (the oracle-fused model beats joint by >= ``min_gain``, the margin of the claim against
  joint: added after the v3b referee computed a Bayes rate of 0.980 with joint at 0.957); every claim requires the
  first two, ``monet_beats_joint`` also the third;
* claim ``monet_beats_joint_<ds>`` (by >= 2 points) and ``monet_weak_probe_<ds>`` (a better weak-modality probe than
  joint's): both credit the **decoupling** of the streams from the fused loss; control arm ``coupled``: the fused loss
  back-propagated into the encoders at the very features it reads (``encoder_fusion_grad = 1``).  For that gradient
  to be the fused loss's own, the fusion must read the fast encoders (``ema_tau = 0``), so ``coupled`` removes the
  stop-gradient **and** the stable memory (MoNet's fusion reading a gradient-free memory is itself a stop-gradient):
  all of the decoupling.  Tuned on MoNet's lr grid;
* claim ``stop_gradient_weak_probe_<ds>`` (pre-registered after the v3b referee, judged on fresh seeds only): the
  stop-gradient alone keeps the weak modality trained: MoNet without the memory (``no_ema``) reaches a weak probe
  > 0.9 x the unimodal encoder's (the precondition's own bar); control arm ``coupled``, which is ``no_ema`` minus
  exactly the stop-gradient;
* claim ``monet_beats_best_unimodal_<ds>`` (by >= 2 points): credits the **learned fusion**; control arm
  ``naive_fusion``: the same streams (each trained on its own loss) combined by summing their logits -- the unimodal
  ensemble, tuned on the same grid;
* claim ``monet_beats_baselines_<ds>``: beats joint, the best single modality, the unimodal ensemble and every
  balancing baseline (OGM-GE, PMR, MMPareto, MLA-lite); it credits MoNet's nested parts, so its controls are MoNet
  with one part removed at a time, each tuned on MoNet's lr grid: ``no_ema`` (the fusion reads the fast encoders,
  ``ema_tau = 0``), ``single_timescale`` (CMS periods ``(1, 1, 1)``), ``no_adaptive`` (``beta = 0``: all weights 1)
  and ``coupled``;
* the direct comparisons of MoNet with each control arm (and of ``no_ema`` with ``coupled``: the stop-gradient
  alone) are a table, ``direct_comparisons``, not claims: a claim whose comparator is its own control arm has no
  control;
* eight checks of our own code, each with a mutant test in tests/monet/test_check_mutants.py.

A control holds when its arm fails the claim's rule; a claim whose control arm passes the rule too is inconclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from icml26.core import HOLDS, Report, judge_every, judge_superiority, judge_threshold

if TYPE_CHECKING:
    from .experiment import Config

__all__ = ["judge", "ARMS", "ABLATIONS", "DATASETS", "BALANCING", "CONTROLS", "PAIRS"]

ARMS = {
    "monet": "MoNet",
    "joint": "Joint",
    "ogm_ge": "OGM-GE",
    "pmr": "PMR",
    "mmpareto": "MMPareto",
    "mla": "MLA-lite",
    "ensemble": "Unimodal ensemble",
}
DERIVED = {"best_unimodal": "Best single modality", "oracle_fused": "Oracle-fused (reference)"}
BALANCING = ("ogm_ge", "pmr", "mmpareto", "mla")
DATASETS = {"s1": "complementary synthetic S1", "digits": "two-view digits"}
# the control arms: MoNet at its selected configuration with exactly one part removed
ABLATIONS = {
    "coupled": {"encoder_fusion_grad": 1.0, "ema_tau": 0.0},
    "no_ema": {"ema_tau": 0.0},
    "single_timescale": {"cms_periods": (1, 1, 1)},
    "no_adaptive": {"beta": 0.0},
}
_CTL_NAMES = {
    "coupled": "MoNet without the stop-gradient (the fused loss back-propagated into the encoders at the features it "
    "reads: encoder_fusion_grad = 1; for that gradient to be the fused loss's own, the fusion reads the fast encoders, "
    "ema_tau = 0, so this arm also lacks the stable memory: it is no_ema minus the stop-gradient)",
    "no_ema": "MoNet without the stable memory (ema_tau = 0: the fusion reads the fast encoders)",
    "single_timescale": "MoNet with one timescale (CMS periods (1, 1, 1))",
    "no_adaptive": "MoNet without adaptive weights (beta = 0: every w_m = 1)",
    "naive_fusion": "naive fusion of the same streams (each trained on its own loss, logits summed: the unimodal "
    "ensemble)",
}
# claim -> the control arms that remove what it credits
CONTROLS = {
    "monet_beats_joint": ("coupled",),
    "monet_weak_probe": ("coupled",),
    "stop_gradient_weak_probe": ("coupled",),
    "monet_beats_best_unimodal": ("naive_fusion",),
    "monet_beats_baselines": ("no_ema", "single_timescale", "no_adaptive", "coupled"),
}
# direct comparisons of two arms that differ in one part (or in what the coupled arm removes): reported as a table,
# not as claims (the comparator would be the control arm itself); (method, minus, what the difference removes)
PAIRS = (
    ("monet", "coupled", "the stop-gradient and the stable memory (all of the decoupling)"),
    ("no_ema", "coupled", "the stop-gradient alone"),
    ("monet", "no_ema", "the stable memory alone"),
    ("monet", "single_timescale", "the multi-timescale CMS blocks"),
    ("monet", "no_adaptive", "the adaptive coordination weights"),
    ("monet", "naive_fusion", "the learned fusion (the same streams' logits summed instead)"),
)


def _acc(records, ds: str, arm: str) -> list[float]:
    """Test accuracy of an arm per seed: a trained arm, a derived arm, an ablation or MoNet's best stream."""
    out = []
    for r in records:
        d = r[ds]
        if arm in d["arms"]:
            out.append(d["arms"][arm]["test_acc"])
        elif arm in DERIVED:
            out.append(d["derived"][arm]["test_acc"])
        elif arm == "naive_fusion":
            out.append(d["arms"]["ensemble"]["test_acc"])
        else:
            out.append(d["ablations"][arm]["test_acc"])
    return out


def _weak_probe(records, ds: str, arm: str) -> list[float]:
    out = []
    for r in records:
        d = r[ds]
        src = d["arms"][arm] if arm in d["arms"] else d["ablations"][arm]
        out.append(src["probe"][d["weak"]])
    return out


def _ratio(records, ds: str, arm: str, uni_weak: list[float]) -> list[float]:
    """An arm's weak-modality probe over that of the encoder trained alone (the unimodal run), per seed."""
    return [p / max(u, 1e-12) for p, u in zip(_weak_probe(records, ds, arm), uni_weak)]


def _name(arm: str) -> str:
    return ARMS.get(arm) or DERIVED.get(arm) or _CTL_NAMES[arm]


def _controlled(report: Report, claim, records, ds: str, arms, values) -> None:
    c = report.add_claim(claim)
    for arm, cid in zip(arms, claim.controls):
        report.add_claim(
            c.control(
                cid,
                f"Control ({_CTL_NAMES[arm]}) for {claim.id}: without what the claim credits, MoNet does not pass "
                "the claim's rule",
                (f"{_CTL_NAMES[arm]} ({ds})", values(arm)),
            )
        )


def judge(config: Config, records: list[dict], report: Report) -> None:
    cfg = config
    test_kw = {"test": cfg.test, "alpha": cfg.alpha}
    from .experiment import _grid

    common = (
        f"(selected per seed on validation accuracy; a diverged configuration scores 0); {cfg.optimizer} (momentum "
        f"0.9, wd 1e-4), batch {cfg.batch_size}, same batches and init for every arm; steps = epochs"
    )
    for arm in (*cfg.arms, *cfg.ablations):
        g = _grid(cfg, arm)
        lrs = sorted({hp["lr"] for hp in g})
        alphas = sorted({hp["alpha"] for hp in g if "alpha" in hp})
        report.set_tuning(
            ARMS.get(arm) or _CTL_NAMES[arm],
            configs=len(g),
            steps=cfg.epochs,
            note=f"lr in {lrs}"
            + (f" x alpha in {alphas}" if alphas else "")
            + f" {common}"
            + ("; control arm: MoNet's grid" if arm in ABLATIONS else "")
            + (
                "; the best single modality and the oracle-fused reference come from these runs"
                if arm == "ensemble"
                else ""
            ),
        )
    if "ensemble" in cfg.arms:
        n_ens = len(_grid(cfg, "ensemble"))
        report.set_tuning(
            DERIVED["best_unimodal"],
            configs=n_ens,
            steps=cfg.epochs,
            note=f"the unimodal ensemble's {n_ens} runs (each modality's encoder + head trained alone on its own "
            "loss); "
            "the (configuration, modality) with the best validation accuracy",
        )
    for ds in cfg.datasets:
        name, weak = DATASETS[ds], records[0][ds]["weak"]
        uni_weak = [r[ds]["arms"]["ensemble"]["probe"][weak] for r in records]
        ratio = _ratio(records, ds, "joint", uni_weak)
        pre_w, pre_f = f"weak_undertrained_{ds}", f"fusion_helps_{ds}"
        report.add_claim(
            judge_threshold(
                pre_w,
                f"{name}: joint training under-trains the weak modality ({weak}): its linear-probe accuracy is <= "
                f"{cfg.ratio_threshold:g} x that of the encoder trained alone",
                ("joint / unimodal weak-probe ratio", ratio),
                threshold=cfg.ratio_threshold,
                sense="<=",
                kind="precondition",
            )
        )
        fused = _acc(records, ds, "oracle_fused")
        best = _acc(records, ds, "best_unimodal")
        report.add_claim(
            judge_threshold(
                pre_f,
                f"{name}: the modalities are complementary: the best single modality (chosen on validation) reaches "
                f"<= {cfg.fusion_threshold:g} x the test accuracy of the oracle-fused model (a logistic regression "
                "on both separately trained encoders' features)",
                ("best single modality / oracle-fused accuracy", [b / max(f, 1e-12) for b, f in zip(best, fused)]),
                threshold=cfg.fusion_threshold,
                sense="<=",
                kind="precondition",
            )
        )
        pre_h = f"joint_headroom_{ds}"
        joint = _acc(records, ds, "joint")
        report.add_claim(
            judge_threshold(
                pre_h,
                f"{name}: joint training leaves room for a {cfg.min_gain * 100:g}-point gain: the oracle-fused model's "
                f"test accuracy exceeds joint's by >= {cfg.min_gain * 100:g} points (the margin of the claim against "
                "joint: with less room between joint and what both modalities reach, that claim could not hold)",
                ("oracle-fused - joint test accuracy", [f - j for f, j in zip(fused, joint)]),
                threshold=cfg.min_gain,
                sense=">=",
                kind="precondition",
            )
        )
        req = [pre_w, pre_f]
        mo = (f"MoNet test acc ({ds})", _acc(records, ds, "monet"))

        def ctl(cid: str) -> list[str]:
            return [f"{cid}_ctl_{a}" for a in CONTROLS[cid.rsplit("_", 1)[0]]]

        cid = f"monet_beats_joint_{ds}"
        _controlled(
            report,
            judge_superiority(
                cid,
                f"{name}: MoNet's fused test accuracy exceeds joint training's by >= {cfg.min_gain * 100:g} points",
                mo,
                {f"Joint test acc ({ds})": joint},
                min_effect=cfg.min_gain,
                requires=[*req, pre_h],
                controls=ctl(cid),
                **test_kw,
            ),
            records,
            ds,
            CONTROLS["monet_beats_joint"],
            lambda a, ds=ds: _acc(records, ds, a),
        )
        cid = f"monet_weak_probe_{ds}"
        _controlled(
            report,
            judge_superiority(
                cid,
                f"{name}: MoNet's weak-modality linear-probe accuracy (its stable memory) is higher than joint "
                "training's",
                (f"MoNet weak probe ({ds})", _weak_probe(records, ds, "monet")),
                {f"Joint weak probe ({ds})": _weak_probe(records, ds, "joint")},
                requires=req,
                controls=ctl(cid),
                **test_kw,
            ),
            records,
            ds,
            CONTROLS["monet_weak_probe"],
            lambda a, ds=ds: _weak_probe(records, ds, a),
        )
        cid = f"stop_gradient_weak_probe_{ds}"
        _controlled(
            report,
            judge_threshold(
                cid,
                f"{name}: the stop-gradient alone keeps the weak modality trained: MoNet without the stable memory "
                f"(no_ema, the fusion reading the fast encoders) reaches a weak-modality probe > "
                f"{cfg.ratio_threshold:g} x that of the encoder trained alone (not under-trained by the "
                f"{pre_w} definition; pre-registered after the v3b referee, judged on fresh seeds only)",
                ("no_ema / unimodal weak-probe ratio", _ratio(records, ds, "no_ema", uni_weak)),
                threshold=cfg.ratio_threshold,
                sense=">",
                requires=[pre_w],
                controls=ctl(cid),
            ),
            records,
            ds,
            CONTROLS["stop_gradient_weak_probe"],
            lambda a, ds=ds, uni_weak=uni_weak: _ratio(records, ds, a, uni_weak),
        )
        cid = f"monet_beats_best_unimodal_{ds}"
        _controlled(
            report,
            judge_superiority(
                cid,
                f"{name}: MoNet's test accuracy exceeds the best single modality's (trained alone, chosen on "
                f"validation) by >= {cfg.min_gain * 100:g} points",
                mo,
                {f"Best single modality test acc ({ds})": _acc(records, ds, "best_unimodal")},
                min_effect=cfg.min_gain,
                requires=req,
                controls=ctl(cid),
                **test_kw,
            ),
            records,
            ds,
            CONTROLS["monet_beats_best_unimodal"],
            lambda a, ds=ds: _acc(records, ds, a),
        )
        cid = f"monet_beats_baselines_{ds}"
        base = ["joint", "best_unimodal", "ensemble", *(a for a in BALANCING if a in cfg.arms)]
        _controlled(
            report,
            judge_superiority(
                cid,
                f"{name}: MoNet's test accuracy exceeds each baseline's: joint, the best single modality, the "
                "unimodal ensemble, OGM-GE, PMR, MMPareto and MLA-lite",
                mo,
                {f"{_name(a)} test acc ({ds})": _acc(records, ds, a) for a in base},
                requires=req,
                controls=ctl(cid),
                **test_kw,
            ),
            records,
            ds,
            CONTROLS["monet_beats_baselines"],
            lambda a, ds=ds: _acc(records, ds, a),
        )
    _add_checks(cfg, records, report)
    _tables(cfg, records, report)
    _figures(cfg, records, report)
    report.metrics = {
        ds: {a: float(np.mean(_acc(records, ds, a))) for a in (*cfg.arms, *DERIVED, *cfg.ablations)}
        for ds in cfg.datasets
    }
    report.add_note(
        "MoNet's equations are INFERRED (the official repository github.com/Yangl1nFeng/MoNet holds a README only): "
        "these numbers measure our reading of the abstract, not the paper's code. Every control arm is tuned on "
        "MoNet's lr grid (selected per seed on validation), like MoNet."
    )
    _note_invalid_setting_controls(report)


def _note_invalid_setting_controls(report: Report) -> None:
    """The contract's core lets no control require a precondition (judges.py), so a control of a claim whose setting
    is invalid keeps its own verdict and counts in "controls reject a/b".  Such a control's "holds" is no rejection
    (with no room for the claim, no arm can pass its rule): this note names them and counts the controls of claims
    whose setting is valid apart (the third referee's finding)."""
    by = report.by_id()
    moot = {
        k: c.id
        for c in report.claims
        if c.kind == "claim" and any(by[r].verdict != HOLDS for r in c.requires if r in by)
        for k in c.controls
    }
    if not moot:
        return
    ctl = [c for c in report.claims if c.kind == "control"]
    valid = [c for c in ctl if c.id not in moot]
    report.add_note(
        "Controls of setting-invalid claims are not rejections: "
        + "; ".join(
            f"{k} ({by[k].verdict}) belongs to {cid}, whose required precondition fails" for k, cid in moot.items()
        )
        + f". Of the {len(valid)} controls of claims whose setting is valid, {sum(c.verdict == HOLDS for c in valid)} "
        f"reject (the summary's count, {sum(c.verdict == HOLDS for c in ctl)}/{len(ctl)}, includes the others: the "
        "core lets no control require a precondition)."
    )


def _add_checks(cfg: Config, records, report: Report) -> None:
    ck = [r[ds]["checks"] for r in records for ds in cfg.datasets]
    n_steps = sorted({c.get("leak_steps", 8) for c in ck})
    report.add_claim(
        judge_every(
            "decoupled_streams",
            f"With encoder_fusion_grad = 0, over {'/'.join(map(str, n_steps))} consecutive training_steps (two full "
            f"cycles of the slowest CMS block) with the run's optimizer ({cfg.optimizer}, its momentum and weight "
            "decay), every fast encoder follows exactly the trajectory of a stream trained on its own unimodal loss "
            "alone (the fused loss sends nothing into the streams, at the first step, a later one, or only when a slow "
            "block updates), and the stable memory has no trainable parameter",
            ("relative encoder-update leak + memory trainable", [c["fusion_grad_leak"] for c in ck]),
            bound=1e-6,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "stable_memory_exact",
            "One stable-memory update equals tau * phi_bar + (1 - tau) * phi",
            ("max deviation", [c["ema_update_err"] for c in ck]),
            bound=1e-6,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "fused_path_reads_memory",
            "The fused logits equal classifier(CMS(concat_m w_m LayerNorm_m(phi_bar_m(x_m)))) recomputed from the "
            "stable memory (after training steps, when memory and fast encoders differ)",
            (
                "|forward - from memory| / |from fast - from memory| (+1 if they cannot be told apart)",
                [c["memory_read_err"] for c in ck],
            ),
            bound=1e-6,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "coordination_weights_formula",
            "The coordination weights are w = M softmax(-beta (s - mean s)) of the fit scores: unequal scores give "
            "unequal weights (the model's own scores after training steps, and scores (0.2, 0.8) at beta 2)",
            ("max |w - reference| (+1 if the scores were equal)", [c["weights_formula_err"] for c in ck]),
            bound=1e-5,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "coordination_weights_sum",
            "The coordination weights sum to M",
            ("|sum w - M|", [c["weights_sum_err"] for c in ck]),
            bound=1e-5,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "ogm_modulates_gradients",
            "OGM-GE scales the dominant modality's encoder weight gradients by "
            "k = 1 - tanh(alpha * s_self / s_other) < 1 (the other modality's score in the ratio; biases untouched)",
            ("max |g_mod - k g| (+1 if nothing modulated)", [c["ogm_err"] for c in ck]),
            bound=1e-6,
            kind="check",
        )
    )
    cms = []
    for r in records:
        for ds in cfg.datasets:
            a = r[ds]["arms"].get("monet")
            if a:
                cms.append(
                    float(sum(abs(u - a["monet_steps"] // c) for u, c in zip(a["cms_updates"], a["cms_periods"])))
                )
    report.add_claim(
        judge_every(
            "cms_periods_respected",
            "Every CMS block with period C took exactly floor(steps / C) updates",
            ("update-count error", cms),
            bound=0.0,
            kind="check",
        )
    )
    par = [
        float(sum(abs(n - a["steps"]) for n in a["encoder_grads"].values()))
        for r in records
        for ds in cfg.datasets
        for a in r[ds]["arms"].values()
        if "diverged" not in a
    ]
    report.add_claim(
        judge_every(
            "equal_encoder_updates",
            "Every arm's every encoder received exactly one gradient per batch (same budget)",
            ("|gradients - steps|", par),
            bound=0.0,
            kind="check",
        )
    )


def _ms(xs) -> str:
    a = np.asarray(xs, dtype=float)
    return f"{a.mean():.3f} ± {a.std(ddof=1) if a.size > 1 else 0.0:.3f}"


def _paired_p(d: np.ndarray) -> float | None:
    """Two-sided paired t-test p-value of the per-seed differences ``d`` (None with < 2 seeds or zero spread)."""
    from scipy import stats

    if d.size < 2 or float(np.std(d)) == 0.0:
        return None
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def _probe(records, ds: str, arm: str, role: str) -> list[float]:
    out = []
    for r in records:
        d = r[ds]
        src = d["arms"][arm] if arm in d["arms"] else d["ablations"][arm]
        out.append(src["probe"][d[role]])
    return out


def _tables(cfg: Config, records, report: Report) -> None:
    rows = []
    for ds in cfg.datasets:
        strong, weak = records[0][ds]["strong"], records[0][ds]["weak"]
        mo = np.array(_acc(records, ds, "monet"))
        for arm in (*cfg.arms, *DERIVED, *cfg.ablations):
            kind = (
                "method"
                if arm == "monet"
                else "control arm"
                if arm in ABLATIONS
                else "reference"
                if arm == "oracle_fused"
                else "baseline; naive-fusion control"
                if arm == "ensemble"
                else "baseline"
            )
            row = {
                "dataset": f"{ds} (strong {strong}, weak {weak})",
                "arm": _name(arm),
                "role": kind,
                "test acc": _ms(_acc(records, ds, arm)),
            }
            if arm in cfg.arms or arm in ABLATIONS:
                row["probe strong"] = _ms(_probe(records, ds, arm, "strong"))
                row["probe weak"] = _ms(_probe(records, ds, arm, "weak"))
            if arm in cfg.arms:
                row["selected configs"] = ", ".join(str(r[ds]["arms"][arm]["hp"]) for r in records)
            elif arm in ABLATIONS:
                row["selected configs"] = ", ".join(str(r[ds]["ablations"][arm]["hp"]) for r in records)
            elif arm in DERIVED:
                row["selected configs"] = ", ".join(
                    f"{r[ds]['derived'][arm]['hp']}"
                    + (f" {r[ds]['derived'][arm]['modality']}" if arm == "best_unimodal" else "")
                    for r in records
                )
            if arm != "monet":
                d = mo - np.array(_acc(records, ds, arm))
                row["MoNet - arm (points)"] = _ms(100 * d)
                row["MoNet wins (seeds)"] = f"{int((d > 0).sum())}/{d.size}"
            rows.append(row)
    report.add_table(
        "accuracy",
        rows,
        f"Mean ± sd over {len(records)} seeds. Probes: logistic regression on frozen encoder features (MoNet and its "
        "control arms: the stable memory), train split -> test accuracy. Best single modality: the (configuration, "
        "modality) of the unimodal runs with the best validation accuracy; oracle-fused: a logistic regression on "
        "both separately trained encoders' features (the reference of the fusion_helps precondition). Control arms: "
        "MoNet with one part removed, each tuned on MoNet's lr grid (selected on validation).",
    )
    pairs = []
    for ds in cfg.datasets:
        for arm, minus, what in PAIRS:
            if not all(a == "naive_fusion" or a in cfg.arms or a in cfg.ablations for a in (arm, minus)):
                continue
            for metric, get in (("test acc", _acc), ("weak probe", _weak_probe)):
                if metric == "weak probe" and minus == "naive_fusion":
                    continue  # the naive fusion's streams are the ensemble's: its probe is the unimodal model's
                d = 100 * (np.array(get(records, ds, arm)) - np.array(get(records, ds, minus)))
                p = _paired_p(d)
                pairs.append(
                    {
                        "dataset": ds,
                        "arm - arm": f"{_name(arm).split(' (')[0]} - {_name(minus).split(' (')[0]}",
                        "what the difference removes": what,
                        "metric": metric,
                        "difference (points)": _ms(d),
                        "first ahead (seeds)": f"{int((d > 0).sum())}/{d.size}",
                        "paired t, two-sided p (descriptive)": "n/a" if p is None else f"{p:.3f}",
                    }
                )
    report.add_table(
        "direct_comparisons",
        pairs,
        "Direct comparisons of MoNet (or no_ema) with an arm that lacks one of its parts, per seed (paired). These are "
        "descriptions, not claims: the comparator is itself a control arm, so the contract's claims compare against "
        "fixed baselines and use these arms as controls. Every arm tuned on the same lr grid, selected on validation.",
    )
    uni = []
    seeds = list(report.seeds or range(len(records)))
    for ds in cfg.datasets:
        for seed, r in zip(seeds, records):
            b = r[ds]["derived"]["best_unimodal"]
            uni.append(
                {
                    "dataset": ds,
                    "seed": seed,
                    **{f"unimodal {m} test acc": v for m, v in b["test_acc_by_modality"].items()},
                    "best (on val)": b["modality"],
                    "oracle-fused test acc": r[ds]["derived"]["oracle_fused"]["test_acc"],
                    "joint test acc": r[ds]["arms"]["joint"]["test_acc"],
                }
            )
    report.add_table(
        "single_modalities",
        uni,
        "Per seed: each separately trained unimodal model (at the best-single-modality arm's selected lr), which one "
        "validation picks, and what both modalities together reach (oracle-fused) against joint training.",
    )
    grid = []
    for ds in cfg.datasets:
        for arm in (*cfg.arms, *cfg.ablations):
            where = "arms" if arm in cfg.arms else "ablations"
            for i in range(len(records[0][ds][where][arm]["grid"])):
                g = [r[ds][where][arm]["grid"][i] for r in records]
                grid.append(
                    {
                        "dataset": ds,
                        "arm": ARMS.get(arm, arm),
                        "config": str(g[0]["hp"]),
                        "val acc": _ms([x["val_acc"] for x in g]),
                        "test acc": _ms([x["test_acc"] for x in g]),
                        "selected (seeds)": sum(r[ds][where][arm]["selected"] == i for r in records),
                        "diverged (seeds)": sum(bool(x.get("diverged")) for x in g),
                    }
                )
    report.add_table(
        "tuning_grids",
        grid,
        "Every arm's grid (the same lr values for every arm and control arm; OGM-GE and PMR also cross two "
        "balancing strengths), its mean val/test accuracy (a diverged configuration counts 0), how often "
        "validation selected each configuration and how often it diverged.",
    )
    diag = []
    for ds in cfg.datasets:
        strong, weak = records[0][ds]["strong"], records[0][ds]["weak"]
        if "monet" in cfg.arms:
            a = [r[ds]["arms"]["monet"] for r in records]
            w0 = [x["weights"][0] for x in a]
            wT = [x["weights"][-1] for x in a]
            idx = {m: i for i, m in enumerate([strong, weak])}
            diag.append(
                {
                    "dataset": ds,
                    "arm": "MoNet",
                    "diagnostic": f"w_{weak} after epoch 1 -> last; fused loss epoch 1 -> last; CMS updates",
                    "value": f"{np.mean([w[idx[weak]] for w in w0]):.3f} -> "
                    f"{np.mean([w[idx[weak]] for w in wT]):.3f}; "
                    f"{np.mean([x['history']['loss_fused'][0] for x in a]):.3f} -> "
                    f"{np.mean([x['history']['loss_fused'][-1] for x in a]):.3f}; "
                    f"{a[0]['cms_updates']} for periods {a[0]['cms_periods']}",
                }
            )
        for arm, key, what in (
            ("ogm_ge", "k_", "mean OGM coefficient k per modality (1 = not slowed)"),
            ("pmr", "coef_", "mean PMR prototype-loss weight per modality"),
            ("mmpareto", "cos_", "mean cos(g_fused, g_unimodal) per encoder"),
        ):
            if arm not in cfg.arms:
                continue
            a = [r[ds]["arms"][arm]["history"] for r in records]
            parts = [
                f"{m}: {np.mean([np.mean(h[key + m]) for h in a if h.get(key + m)]):.3f}"
                for m in (strong, weak)
                if any(h.get(key + m) for h in a)
            ]
            diag.append({"dataset": ds, "arm": ARMS[arm], "diagnostic": what, "value": "; ".join(parts)})
    report.add_table(
        "learned_diagnostics",
        diag,
        "What the learned pieces did: MoNet's coordination weight of the "
        "weak modality and fused loss over training, and each balancing method's own signal.",
    )


def _figures(cfg: Config, records, report: Report) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.5, 3.3 * len(cfg.datasets)), layout="constrained")
    axes = fig.subplots(len(cfg.datasets), 2, squeeze=False)
    for i, ds in enumerate(cfg.datasets):
        for j, role in enumerate(("strong", "weak")):
            ax, m = axes[i][j], records[0][ds][role]
            for k, arm in enumerate(cfg.arms):
                ep = records[0][ds]["arms"][arm]["curve_epochs"]
                curves = np.array([r[ds]["arms"][arm]["curve"][m] for r in records])
                ax.plot(
                    ep,
                    curves.mean(0),
                    marker="o",
                    ms=3,
                    color=f"C{k}",
                    label=ARMS[arm],
                    lw=2.2 if arm == "monet" else 1.2,
                )
            ax.set_title(f"{DATASETS[ds]}: {role} modality ({m})", fontsize=9)
            ax.set_xlabel("epoch")
            ax.set_ylabel("linear-probe test accuracy")
            ax.grid(alpha=0.3)
    axes[0][1].legend(fontsize=7, loc="lower right")
    report.add_figure(
        "probe_curves",
        fig,
        f"Per-modality linear-probe accuracy over training, mean over "
        f"{len(records)} seeds, per method (each arm's selected configuration).",
    )
    if "monet" in cfg.arms:
        fig = Figure(figsize=(8.5, 3.2), layout="constrained")
        axes = fig.subplots(1, 2)
        for k, ds in enumerate(cfg.datasets):
            strong, weak = records[0][ds]["strong"], records[0][ds]["weak"]
            a = [r[ds]["arms"]["monet"] for r in records]
            w = np.array([[e[1] for e in x["weights"]] for x in a])  # modality order: strong, weak
            axes[0].plot(np.arange(1, w.shape[1] + 1), w.mean(0), color=f"C{k}", label=f"{ds}: w_{weak}")
            lf = np.array([x["history"]["loss_fused"] for x in a])
            axes[1].plot(np.arange(1, lf.shape[1] + 1), lf.mean(0), color=f"C{k}", label=f"{ds}: fused loss")
            for m, ls in ((strong, "--"), (weak, ":")):
                lm = np.array([x["history"][f"loss_{m}"] for x in a])
                axes[1].plot(np.arange(1, lm.shape[1] + 1), lm.mean(0), ls=ls, color=f"C{k}", label=f"{ds}: L_{m}")
        axes[0].axhline(1.0, color="0.6", lw=0.8)
        axes[0].set_title("MoNet coordination weight of the weak modality", fontsize=9)
        axes[0].set_xlabel("epoch")
        axes[0].set_ylabel("w_weak (sum over modalities = 2)")
        axes[1].set_title("MoNet training losses (epoch means)", fontsize=9)
        axes[1].set_xlabel("epoch")
        axes[1].set_ylabel("cross-entropy")
        for ax in axes:
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        report.add_figure(
            "monet_diagnostics",
            fig,
            "What MoNet's learned pieces did: the coordination weight of the weak "
            "modality (above 1: up-weighted; it follows the streams' TRAIN fit scores) and the fused and "
            "per-stream losses.",
        )
