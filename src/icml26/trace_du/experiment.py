"""Reproduction: TRACE-DU vs retraining, noise on the final model, a graph-agnostic bound and fine-tuning.

Per seed: a decentralized digits task (8 clients on a ring with chords, Dirichlet label skew) whose forget client
holds noisier scans and a backdoor (a four-corner trigger relabelled to class 0); L2-regularised softmax
regression trained by gossip SGD (strongly convex, so the certificate is exact).  We measure the client's
influence before unlearning (precondition), the bound against an actual coupled retrain at every round, the
rewind point ``t*`` of the graph-aware and the graph-agnostic bound over a sweep of ``sigma``, accuracy / backdoor
success / membership-inference AUC per method at the claim's ``sigma``, two sequential requests, and a small MLP
whose certificate must come out flagged heuristic.  Every arm reuses the same data, init and per-(node, round)
batches; no training hyperparameter is tuned per arm.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from icml26.core import (
    Experiment,
    Report,
    judge_every,
    judge_k_of_n,
    judge_non_inferiority,
    judge_superiority,
    judge_threshold,
    register,
)

from .baselines import fine_tune, last_plus_noise, retrain
from .data import make_backdoor_digits
from .graphs import metropolis_weights, ring
from .mechanisms import gaussian_sigma, sensitivity_threshold
from .metrics import accuracy, backdoor_asr, mia_auc
from .models import MLP, SoftmaxRegression
from .training import DecentralizedSGD
from .unlearning import TraceDU, expansiveness

CORNERS = (0, 1, 8, 9, 6, 7, 14, 15, 48, 49, 56, 57, 54, 55, 62, 63)


@dataclass(frozen=True)
class Config:
    """Task, training (shared by every arm), unlearning and the claims' thresholds."""

    n_nodes: int = 8
    chords: int = 2
    alpha: float = 0.5
    max_per_node: int = 100
    forget: int = 3
    second_forget: int = 6
    trigger_pixels: tuple[int, ...] = CORNERS
    trigger_frac: float = 0.6
    forget_noise: float = 0.8
    rounds: int = 150
    local_steps: int = 10
    lr: float = 1.9
    batch_size: int = 16
    l2: float = 3e-4
    epsilon: float = 1.0
    delta: float = 1e-4
    sigmas: tuple[float, ...] = (4.0, 8.0, 16.0, 32.0)
    claim_sigma: float = 8.0
    # the non-convex (heuristic) variant
    mlp_hidden: int = 32
    mlp_rounds: int = 30
    mlp_lr: float = 0.5
    mlp_beta: float = 1.0
    # thresholds
    pre_asr: float = 0.8
    pre_mia: float = 0.6
    pre_retrain_asr: float = 0.2
    asr_margin: float = 0.05
    mia_margin: float = 0.05
    acc_gain: float = 0.10
    bound_tol: float = 1e-9
    win_frac: float = 0.8


FULL = Config()
QUICK = Config(sigmas=(8.0,), mlp_rounds=10)


def _metrics(model, data, M: torch.Tensor) -> dict:
    Xc, yc = data.node_data[data.forget[0]]
    cm = data.clean_members[data.forget[0]]
    return {
        "acc": float(accuracy(model, M, data.X_test, data.y_test).mean()),
        "asr": float(backdoor_asr(model, M, data.X_trig, data.target).mean()),
        "mia": float(mia_auc(model, M, (Xc[cm], yc[cm]), (data.X_holdout, data.y_holdout)).mean()),
    }


def _gap_to_bound(positions, actual, reference, delta_curve) -> dict:
    """Per position ``||X_t - X'_t||_F`` and the bound; worst excess ``max(dist - Delta)``."""
    dist = np.array([float((a - b).norm()) for a, b in zip(actual, reference)])
    D = np.asarray(delta_curve)[: len(dist)]
    ratio = np.where(D > 0, dist / np.maximum(D, 1e-300), 0.0)
    return {
        "dist": dist.tolist(),
        "excess": float((dist - D).max()),
        "max_ratio": float(ratio.max()),
        "mean_ratio": float(ratio[1:].mean()) if len(ratio) > 1 else 0.0,
    }


def measure(cfg: Config, seed: int, progress) -> dict:
    c1, c2 = cfg.forget, cfg.second_forget
    data = make_backdoor_digits(
        seed=seed,
        n_nodes=cfg.n_nodes,
        alpha=cfg.alpha,
        forget=(c1,),
        trigger_pixels=cfg.trigger_pixels,
        trigger_frac=cfg.trigger_frac,
        max_per_node=cfg.max_per_node,
        forget_noise=cfg.forget_noise,
    )
    model = SoftmaxRegression(data.n_features, data.n_classes, l2=cfg.l2)
    W = metropolis_weights(ring(cfg.n_nodes, chords=cfg.chords))
    train = dict(local_steps=cfg.local_steps, lr=cfg.lr, batch_size=cfg.batch_size, rounds=cfg.rounds, seed=seed)
    traj = DecentralizedSGD(model, data.node_data, W, **train).run()
    kept = [i for i in range(cfg.n_nodes) if i != c1]
    T = cfg.rounds
    out: dict = {"seed": seed, "T": T}

    # learned-component diagnostic: the gossip-trained model over training (mean over kept nodes)
    diag_rounds = sorted({0, *range(0, T + 1, max(1, T // 10)), T})
    out["training_curve"] = {"round": diag_rounds, **{k: [] for k in ("acc", "asr", "mia")}}
    for t in diag_rounds:
        for k, v in _metrics(model, data, traj.checkpoints[t][kept]).items():
            out["training_curve"][k].append(v)
    out["before"] = _metrics(model, data, traj.final[kept])

    # gold standard and the bound check against it (every round, per node too)
    rt = retrain(traj, [c1])
    out["retrain"] = _metrics(model, data, rt.final)
    tdu = TraceDU(traj, "strongly_convex")
    sg, sa = tdu.sensitivity([c1]), tdu.sensitivity([c1], bound="agnostic")
    pos = list(range(T + 1))
    gap = _gap_to_bound(pos, [traj.checkpoints[t][kept] for t in pos], [rt.checkpoints[t] for t in pos], sg.delta)
    per_node = np.array(
        [[float((traj.checkpoints[t][kept][j] - rt.checkpoints[t][j]).norm()) for j in range(len(kept))] for t in pos]
    )
    rho_nc, _ = expansiveness("nonconvex", cfg.lr, tdu.smoothness)
    with np.errstate(over="ignore", invalid="ignore"):
        ra = TraceDU(traj, "nonconvex", smoothness=tdu.smoothness).sensitivity([c1]).delta
    out["bound"] = {
        "graph": sg.delta.tolist(),
        "agnostic": sa.delta.tolist(),
        "regime_agnostic": np.nan_to_num(ra, nan=np.inf).clip(max=1e300).tolist(),
        **gap,
        "per_node_excess": float((per_node - sg.per_node).max()),
        "graph_minus_agnostic": float((sg.delta - sa.delta).max()),
        "rho": tdu.rho,
        "rho_nonconvex": rho_nc,
        "heuristic": tdu.heuristic,
    }

    # sigma sweep: rewind point, cost and quality of both bounds
    out["sweep"] = []
    for sigma in cfg.sigmas:
        row = {"sigma": sigma, "psi": sensitivity_threshold(cfg.epsilon, cfg.delta, sigma)}
        for name, bound in (("graph", "graph"), ("agnostic", "agnostic")):
            u = TraceDU(traj, "strongly_convex", bound=bound)
            res = u.unlearn([c1], cfg.epsilon, cfg.delta, sigma=sigma)
            cert = res.certificate
            row[name] = {
                "t_star": cert.t_star,
                "rounds": cert.rounds_retrained,
                "sens": cert.sensitivity,
                "calibration_gap": gaussian_sigma(cfg.epsilon, cfg.delta, cert.sensitivity) - cert.sigma,
                "heuristic": cert.heuristic,
                **_metrics(model, data, res.models),
            }
        if sigma == cfg.claim_sigma:
            ft = fine_tune(traj, [c1], row["graph"]["rounds"])
            row["fine_tune"] = _metrics(model, data, ft.final)
        out["sweep"].append(row)
    Mln, sig_last, D_T = last_plus_noise(tdu, [c1], cfg.epsilon, cfg.delta)
    out["last_noise"] = {"sigma": sig_last, "sens": D_T, **_metrics(model, data, Mln)}

    # sequential requests: c1 then c2 at the claim's sigma; the bound for {c1, c2} along the branch
    seq = TraceDU(traj, "strongly_convex")
    r1 = seq.unlearn([c1], cfg.epsilon, cfg.delta, sigma=cfg.claim_sigma)
    s12 = seq.sensitivity([c2])
    ref_pos, ref_models, ref_ids = seq.reference([c2])
    act_pos, act_models, act_ids = seq.branch_models()
    act = [m[[ids.index(i) for i in ref_ids]] for m, ids in zip(act_models, act_ids)]
    assert list(ref_pos) == list(act_pos) == list(s12.rounds)
    seq_gap = _gap_to_bound(ref_pos, act, list(ref_models), s12.delta)
    r2 = seq.unlearn([c2], cfg.epsilon, cfg.delta, sigma=cfg.claim_sigma)
    out["sequential"] = {
        "t_star": [r1.certificate.t_star, r2.certificate.t_star],
        "rounds": [r1.certificate.rounds_retrained, r2.certificate.rounds_retrained],
        "excess": seq_gap["excess"],
        "max_ratio": seq_gap["max_ratio"],
        "calibration_gap": max(
            gaussian_sigma(cfg.epsilon, cfg.delta, r.certificate.sensitivity) - r.certificate.sigma for r in (r1, r2)
        ),
        "removed": list(r2.certificate.removed),
        "after": _metrics(model, data, r2.models),
    }

    # non-convex variant: an MLP's certificate must say it is heuristic
    mlp = MLP(data.n_features, data.n_classes, hidden=cfg.mlp_hidden, l2=cfg.l2)
    mt = DecentralizedSGD(mlp, data.node_data, W, **{**train, "rounds": cfg.mlp_rounds, "lr": cfg.mlp_lr}).run()
    mu = TraceDU(mt, "nonconvex", smoothness=cfg.mlp_beta)
    mres = mu.unlearn([c1], cfg.epsilon, cfg.delta, sigma=cfg.claim_sigma)
    mu_wrong = TraceDU(mt, "strongly_convex", smoothness=cfg.mlp_beta, strong_convexity=cfg.l2)
    out["mlp"] = {
        "heuristic": mres.certificate.heuristic,
        "violations": list(mres.certificate.violations),
        "wrong_regime_heuristic": mu_wrong.heuristic,
        "t_star": mres.certificate.t_star,
        "before": _metrics(mlp, data, mt.final[kept]),
        "after": _metrics(mlp, data, mres.models),
    }
    return out


def _row(records, sigma) -> list[dict]:
    return [next(r for r in rec["sweep"] if r["sigma"] == sigma) for rec in records]


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    n = len(records)
    T = cfg.rounds
    pre = ["backdoor_learned", "forget_members_detectable", "retrain_removes_backdoor"]
    claim_rows = _row(records, cfg.claim_sigma)
    g_rounds = float(np.mean([r["graph"]["rounds"] for r in claim_rows]))
    a_rounds = float(np.mean([r["agnostic"]["rounds"] for r in claim_rows]))
    k = cfg.local_steps
    note = f"lr={cfg.lr}, K={k}, batch={cfg.batch_size}, l2={cfg.l2} for every arm (not tuned per arm)"
    report.set_tuning(
        "TRACE-DU",
        configs=1,
        steps=g_rounds * k,
        note=f"{note}; sigma={cfg.claim_sigma} fixed before the run; steps = resumed rounds x K",
    )
    report.set_tuning("graph-agnostic", configs=1, steps=a_rounds * k, note=f"{note}; same sigma")
    report.set_tuning("Retrain", configs=1, steps=T * k, note=f"{note}; all {T} rounds from the init")
    report.set_tuning("Fine-tune", configs=1, steps=g_rounds * k, note=f"{note}; as many rounds as TRACE-DU resumed")
    report.set_tuning("Last+noise", configs=1, steps=0, note="no training: sigma calibrated to the bound at round T")
    report.set_tuning("two retrains", configs=1, steps=2 * T * k, note=f"{note}; 2 x {T} rounds")

    # (0) preconditions, judged first
    report.add_claim(
        judge_threshold(
            "backdoor_learned",
            f"Before unlearning the forget client's backdoor succeeds on >= {cfg.pre_asr:g} of "
            "triggered test images (mean over kept nodes).",
            ("before unlearning ASR", [r["before"]["asr"] for r in records]),
            threshold=cfg.pre_asr,
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            "forget_members_detectable",
            f"Before unlearning, the loss-threshold membership attack separates the forget "
            f"client's clean training samples from held-out ones of its kind with AUC >= {cfg.pre_mia:g}.",
            ("before unlearning MIA AUC", [r["before"]["mia"] for r in records]),
            threshold=cfg.pre_mia,
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            "retrain_removes_backdoor",
            f"Retraining without the client brings backdoor success below {cfg.pre_retrain_asr:g}.",
            ("Retrain ASR", [r["retrain"]["asr"] for r in records]),
            threshold=cfg.pre_retrain_asr,
            sense="<=",
            kind="precondition",
        )
    )

    # (1) checks: guarantees of our code and of the theorem it implements
    report.add_claim(
        judge_every(
            "bound_valid_strongly_convex",
            "Strongly convex model: at every round the measured distance between the "
            "trajectory and an actual coupled retrain without the client is <= the computed sensitivity Delta_U(t) "
            "(stacked and per node; worst excess max(dist - Delta) over rounds, per seed).",
            ("max excess over rounds", [max(r["bound"]["excess"], r["bound"]["per_node_excess"]) for r in records]),
            bound=0.0,
            tol=cfg.bound_tol,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "graph_bound_tighter_pointwise",
            "The graph-aware bound is <= the graph-agnostic one at every round.",
            ("max(graph - agnostic)", [r["bound"]["graph_minus_agnostic"] for r in records]),
            bound=0.0,
            tol=1e-12,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "sequential_bound_valid",
            "After the first request, the bound for {c1, c2} recomputed along the branch "
            "covers the measured distance to the coupled reference without both clients at every position.",
            ("max excess along the branch", [r["sequential"]["excess"] for r in records]),
            bound=0.0,
            tol=cfg.bound_tol,
            kind="check",
        )
    )
    cal = [
        max(
            [r[b]["calibration_gap"] for r in rec["sweep"] for b in ("graph", "agnostic")]
            + [rec["sequential"]["calibration_gap"]]
        )
        for rec in records
    ]
    report.add_claim(
        judge_every(
            "noise_calibrated",
            "Every certificate's sigma covers its rewind point's bound: gaussian_sigma(eps, delta, "
            "Delta(t*)) - sigma <= 0.",
            ("max calibration gap", cal),
            bound=0.0,
            tol=1e-9,
            kind="check",
        )
    )
    flags = [
        float(r["mlp"]["heuristic"] and r["mlp"]["wrong_regime_heuristic"] and not r["bound"]["heuristic"])
        for r in records
    ]
    report.add_claim(
        judge_every(
            "nonconvex_flagged_heuristic",
            "The MLP's certificate is flagged heuristic (also when a convex regime is "
            "declared for it); the softmax regression's is not.",
            ("flags correct (1 = yes)", flags),
            bound=1.0,
            sense=">=",
            kind="check",
        )
    )

    # (2) claims
    tg = [r["graph"]["t_star"] for r in claim_rows]
    ta = [r["agnostic"]["t_star"] for r in claim_rows]
    kwin = max(1, int(np.ceil(cfg.win_frac * n)))
    report.add_claim(
        judge_k_of_n(
            "graph_aware_rewinds_less",
            f"At sigma={cfg.claim_sigma:g} (eps={cfg.epsilon:g}, delta={cfg.delta:g}) the "
            f"graph-aware bound rewinds to a strictly later round than the graph-agnostic one in >= {kwin} of {n} "
            "seeds.",
            ("TRACE-DU t*", tg),
            {"graph-agnostic t*": ta},
            k=kwin,
        )
    )
    report.add_claim(
        judge_non_inferiority(
            "unlearned_asr_close_to_retrain",
            f"After unlearning, TRACE-DU's backdoor success is within {cfg.asr_margin:g} of retraining from scratch.",
            ("TRACE-DU ASR", [r["graph"]["asr"] for r in claim_rows]),
            {"Retrain ASR": [r["retrain"]["asr"] for r in records]},
            margin=cfg.asr_margin,
            higher_is_better=False,
            requires=pre,
        )
    )
    report.add_claim(
        judge_non_inferiority(
            "unlearned_mia_close_to_retrain",
            f"After unlearning, the membership AUC of the forgotten client's samples "
            f"is within {cfg.mia_margin:g} of retraining from scratch.",
            ("TRACE-DU MIA AUC", [r["graph"]["mia"] for r in claim_rows]),
            {"Retrain MIA AUC": [r["retrain"]["mia"] for r in records]},
            margin=cfg.mia_margin,
            higher_is_better=False,
            requires=pre,
        )
    )
    report.add_claim(
        judge_superiority(
            "asr_below_fine_tune",
            "TRACE-DU removes the backdoor better than fine-tuning on the remaining clients for "
            "the same number of rounds.",
            ("TRACE-DU ASR", [r["graph"]["asr"] for r in claim_rows]),
            {"Fine-tune ASR": [r["fine_tune"]["asr"] for r in claim_rows]},
            higher_is_better=False,
            test="ttest",
            requires=pre,
        )
    )
    report.add_claim(
        judge_superiority(
            "accuracy_above_last_noise",
            f"At the same certificate, TRACE-DU's accuracy beats noise on the final model by >= {cfg.acc_gain:g}.",
            ("TRACE-DU accuracy", [r["graph"]["acc"] for r in claim_rows]),
            {"Last+noise accuracy": [r["last_noise"]["acc"] for r in records]},
            min_effect=cfg.acc_gain,
            test="ttest",
            requires=pre,
        )
    )
    report.add_claim(
        judge_superiority(
            "sequential_cheaper_than_two_retrains",
            "Two sequential requests (c1 then c2) cost fewer retraining rounds "
            "than two retrains from scratch (their certificates hold: sequential_bound_valid).",
            ("TRACE-DU sequential rounds", [sum(r["sequential"]["rounds"]) for r in records]),
            {"two retrains rounds": [2 * T] * n},
            higher_is_better=False,
            test="ttest",
            requires=pre,
        )
    )

    _tables(cfg, records, report)
    _figures(cfg, records, report)


def _ms(v) -> str:
    v = np.asarray(v, float)
    return f"{v.mean():.3f} ± {v.std(ddof=1):.3f}" if v.size > 1 else f"{v.mean():.3f}"


def _tables(cfg: Config, records, report: Report) -> None:
    rows = _row(records, cfg.claim_sigma)
    methods = [
        ("before unlearning", [r["before"] for r in records], "-"),
        ("Retrain", [r["retrain"] for r in records], str(cfg.rounds)),
        ("TRACE-DU", [r["graph"] for r in rows], _ms([r["graph"]["rounds"] for r in rows])),
        ("graph-agnostic", [r["agnostic"] for r in rows], _ms([r["agnostic"]["rounds"] for r in rows])),
        ("Fine-tune", [r["fine_tune"] for r in rows], _ms([r["graph"]["rounds"] for r in rows])),
        ("Last+noise", [r["last_noise"] for r in records], "0"),
    ]
    report.add_table(
        "methods",
        [
            {
                "method": m,
                "accuracy": _ms([x["acc"] for x in v]),
                "backdoor ASR": _ms([x["asr"] for x in v]),
                "MIA AUC": _ms([x["mia"] for x in v]),
                "rounds retrained": rr,
            }
            for m, v, rr in methods
        ],
        f"Mean ± sd over {len(records)} seeds at sigma={cfg.claim_sigma:g}, eps={cfg.epsilon:g}, "
        f"delta={cfg.delta:g}; Last+noise sigma = {_ms([r['last_noise']['sigma'] for r in records])}.",
    )
    sweep = []
    for s in cfg.sigmas:
        rs = _row(records, s)
        for b in ("graph", "agnostic"):
            sweep.append(
                {
                    "sigma": s,
                    "bound": b,
                    "t*": _ms([r[b]["t_star"] for r in rs]),
                    "rounds retrained": _ms([r[b]["rounds"] for r in rs]),
                    "accuracy": _ms([r[b]["acc"] for r in rs]),
                    "ASR": _ms([r[b]["asr"] for r in rs]),
                    "MIA AUC": _ms([r[b]["mia"] for r in rs]),
                }
            )
    report.add_table("sigma_sweep", sweep, "Rewind point and quality per noise level and bound.")
    report.add_table(
        "bound_tightness",
        [
            {
                "seed": r["seed"],
                "Delta(T) graph": f"{r['bound']['graph'][-1]:.3f}",
                "Delta(T) agnostic": f"{r['bound']['agnostic'][-1]:.3f}",
                "measured dist(T)": f"{r['bound']['dist'][-1]:.3f}",
                "max dist/Delta": f"{r['bound']['max_ratio']:.4f}",
                "mean dist/Delta": f"{r['bound']['mean_ratio']:.3f}",
                "rho": f"{r['bound']['rho']:.6f}",
                "sequential t*": r["sequential"]["t_star"],
                "sequential rounds": sum(r["sequential"]["rounds"]),
            }
            for r in records
        ],
        "The bound against the coupled retrain (ratio 1 at round 1 is equality: the first injection is exact).",
    )
    c = records[0]["training_curve"]
    report.add_table(
        "learned_diagnostics",
        [
            {
                "round": t,
                "accuracy": f"{np.mean([r['training_curve']['acc'][i] for r in records]):.3f}",
                "backdoor ASR": f"{np.mean([r['training_curve']['asr'][i] for r in records]):.3f}",
                "MIA AUC": f"{np.mean([r['training_curve']['mia'][i] for r in records]):.3f}",
            }
            for i, t in enumerate(c["round"])
        ],
        "Gossip training learns: accuracy, backdoor success and membership signal over rounds (mean over seeds).",
    )
    report.add_table(
        "mlp_heuristic",
        [
            {
                "seed": r["seed"],
                "heuristic": r["mlp"]["heuristic"],
                "violations": "; ".join(r["mlp"]["violations"]),
                "t*": r["mlp"]["t_star"],
                "acc before": f"{r['mlp']['before']['acc']:.3f}",
                "acc after": f"{r['mlp']['after']['acc']:.3f}",
                "ASR before": f"{r['mlp']['before']['asr']:.3f}",
                "ASR after": f"{r['mlp']['after']['asr']:.3f}",
            }
            for r in records
        ],
        "Non-convex MLP: rho = 1 + lr*beta makes the bound explode after round 1 (t* <= 1); the certificate "
        "says heuristic.",
    )
    report.metrics.update({"config": asdict(cfg)})


def _figures(cfg: Config, records, report: Report) -> None:
    from matplotlib.figure import Figure

    r0 = records[0]
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    t = np.arange(len(r0["bound"]["graph"]))
    ax.plot(t, r0["bound"]["graph"], label="TRACE-DU (graph-aware)")
    ax.plot(t, r0["bound"]["agnostic"], ls="--", label="graph-agnostic (scalar)")
    ra = np.asarray(r0["bound"]["regime_agnostic"], float)
    ax.plot(t, np.where(ra < 1e6, ra, np.nan), ls=":", label="regime-agnostic (non-convex rho)")
    ax.plot(t, r0["bound"]["dist"], color="k", lw=1, label="measured ||X - X_retrain||_F")
    for s in cfg.sigmas:
        ax.axhline(sensitivity_threshold(cfg.epsilon, cfg.delta, s), color="0.6", lw=0.7, ls="-.")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_ylim(0, 10 * max(r0["bound"]["agnostic"]))
    ax.set_xlabel("round t")
    ax.set_ylabel("sensitivity Delta_U(t)")
    ax.set_title(f"Sensitivity vs round per bound (seed {r0['seed']}); grey: psi* for sigma in {list(cfg.sigmas)}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    report.add_figure("sensitivity_vs_round", fig, "Bounds on the distance to the retrained trajectory.")

    rows = _row(records, cfg.claim_sigma)
    arms = [
        ("before", [r["before"] for r in records]),
        ("Retrain", [r["retrain"] for r in records]),
        ("TRACE-DU", [r["graph"] for r in rows]),
        ("agnostic", [r["agnostic"] for r in rows]),
        ("Fine-tune", [r["fine_tune"] for r in rows]),
        ("Last+noise", [r["last_noise"] for r in records]),
    ]
    fig = Figure(figsize=(11, 3.6), layout="constrained")
    for ax, (key, lab) in zip(
        fig.subplots(1, 3), (("acc", "test accuracy"), ("asr", "backdoor success"), ("mia", "MIA AUC (forget client)"))
    ):
        v = [[x[key] for x in xs] for _, xs in arms]
        ax.bar(
            range(len(arms)),
            [np.mean(a) for a in v],
            yerr=[np.std(a) for a in v],
            capsize=3,
            color=["0.6", "C2", "C0", "C1", "C3", "C4"],
        )
        ax.set_xticks(range(len(arms)), [a for a, _ in arms], rotation=30, fontsize=8)
        ax.set_ylabel(lab)
        ax.set_title(f"{lab} per method (sigma={cfg.claim_sigma:g})", fontsize=9)
    report.add_figure("metrics_per_method", fig, "Mean ± sd over seeds.")

    fig = Figure(figsize=(9, 3.6), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    for b, ls in (("graph", "-"), ("agnostic", "--")):
        ts = [np.mean([r[b]["t_star"] for r in _row(records, s)]) for s in cfg.sigmas]
        acc = [np.mean([r[b]["acc"] for r in _row(records, s)]) for s in cfg.sigmas]
        ax1.plot(cfg.sigmas, ts, ls=ls, marker="o", label=b)
        ax2.plot(cfg.sigmas, acc, ls=ls, marker="o", label=b)
    ax2.axhline(np.mean([r["retrain"]["acc"] for r in records]), color="C2", lw=0.8, label="Retrain")
    ax1.set_xlabel("noise sigma")
    ax1.set_ylabel("rewind round t* (mean)")
    ax1.set_title("Rewind point vs noise")
    ax2.set_xlabel("noise sigma")
    ax2.set_ylabel("test accuracy after unlearning")
    ax2.set_title("Accuracy vs noise")
    for ax in (ax1, ax2):
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    report.add_figure("sigma_tradeoff", fig, "The sigma trade-off: later rewinds cost accuracy through more noise.")

    c = r0["training_curve"]
    fig = Figure(figsize=(5.5, 3.6), layout="constrained")
    ax = fig.subplots()
    for key, lab in (("acc", "accuracy"), ("asr", "backdoor success"), ("mia", "MIA AUC")):
        ax.plot(c["round"], c[key], marker=".", label=lab)
    ax.set_xlabel("round")
    ax.set_ylabel("value (mean over kept nodes)")
    ax.set_title(f"Gossip training diagnostic (seed {r0['seed']})")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    report.add_figure("training_curve", fig, "The learned component: the gossip-trained model over rounds.")


EXPERIMENT = register(
    Experiment(
        slug="trace_du",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 10},
        measure=measure,
        judge=judge,
        threads=1,
    )
)
