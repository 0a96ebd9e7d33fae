"""Reproduction (evidence v3): what the graph-aware bound buys at equal retraining budgets, and unlearning at a
rewind point that matters.

Per seed: a decentralized digits task (16 clients, Dirichlet label skew) whose forget client holds noisier scans
and a backdoor (a corner trigger relabelled to class 0); L2-regularised softmax regression trained by gossip SGD
(strongly convex, so the certificate is exact), on two graphs drawn per seed: a 16-node ring and an Erdos-Renyi
graph.  Per graph we measure

* the bound against an actual coupled retrain at every round (stacked and per node);
* **equal round budgets**: for ``R`` in ``Config.budgets`` both bounds rewind to ``T - R`` and calibrate the noise
  their certificate needs there (``max_rounds=R``); the test accuracy each reaches, and a control arm that uses the
  graph-agnostic bound's noise at the same rewind point with a fresh draw;
* the released starts of every resumed run against ``checkpoint + N(0, sigma^2)`` (a per-coordinate test).

On the ring only: TRACE-DU at the claims' ``sigma`` (budgeted noise, its own ``t*``), the same noise on the final
model followed by the same number of rounds (the **no-rewind** control), the same rewind without noise, fine-tuning,
noise on the final model, retraining; two sequential requests (per-node bound along the branch, rounds used); an MLP
and a too-small declared smoothness whose certificates must come out heuristic.  The judge is in :mod:`.claims`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26.core import Experiment, register

from .baselines import _run, fine_tune, last_plus_noise, retrain
from .claims import judge
from .data import make_backdoor_digits
from .graphs import erdos_renyi, metropolis_weights, remove_nodes, ring
from .mechanisms import analytic_gaussian_sigma, gaussian_sigma, sensitivity_threshold
from .metrics import accuracy, backdoor_asr, mia_auc
from .models import MLP, SoftmaxRegression
from .training import DecentralizedSGD
from .unlearning import TraceDU, UnlearnResult, expansiveness

__all__ = ["Config", "QUICK", "FULL", "measure", "EXPERIMENT", "TUNING", "TOPOLOGIES"]

CORNERS = (0, 1, 8, 9, 6, 7, 14, 15, 48, 49, 56, 57, 54, 55, 62, 63)
TOPOLOGIES = ("ring", "er")
CONTROL_NOISE_SEED = 7919  # offset of the control arm's noise seed: an independent draw, same distribution


@dataclass(frozen=True)
class Config:
    """Task, training (shared by every arm), unlearning and the claims' thresholds."""

    n_nodes: int = 16
    er_p: float = 0.25
    alpha: float = 0.5
    max_per_node: int = 100
    forget: int = 3
    second_forget: int = 4
    trigger_pixels: tuple[int, ...] = CORNERS
    trigger_frac: float = 0.6
    forget_noise: float = 0.8
    rounds: int = 100
    local_steps: int = 10
    lr: float = 1.9
    batch_size: int = 16
    l2: float = 3e-4
    epsilon: float = 1.0
    delta: float = 1e-4
    budgets: tuple[int, ...] = (25, 50)  # retraining rounds R = T/4 and T/2
    noise_draws: int = 8  # independent noise draws per arm and seed, averaged (M)
    # a weak certificate at the tight budget, where a certified arm might beat retraining from the init for R rounds
    weak_epsilon: float = 16.0
    weak_budget: int = 25
    # the step size of the weak cell's R rounds, chosen per arm on the dev seeds from one grid (second referee: the
    # retrain-R baseline at the training lr was never tuned); the certified arms' resumed rounds are post-processing
    weak_lr_grid: tuple[float, ...] = (1.9, 3.0, 5.0, 8.0, 12.0, 16.0)
    weak_lr_graph: float = 12.0
    weak_lr_agnostic: float = 16.0  # the grid's edge: the control arm might gain at a larger step (open)
    weak_lr_retrain: float = 12.0
    sigmas: tuple[float, ...] = (32.0, 64.0, 96.0, 128.0, 192.0, 256.0)  # t* sweep (bound only, no training)
    claim_sigma: float = 128.0
    # the non-convex (heuristic) variant
    mlp_hidden: int = 32
    mlp_rounds: int = 30
    mlp_lr: float = 0.5
    mlp_beta: float = 1.0
    # thresholds
    pre_asr: float = 0.2
    pre_mia: float = 0.55
    pre_retrain_asr: float = 0.1
    rewind_frac: float = 0.25
    rewind_metric: str = "mia"  # rewind_matters: TRACE-DU below the no-rewind control on this metric
    rewind_min_effect: float = 0.01  # a fifth of the unlearning claims' 0.05 margins (set on the dev seeds)
    asr_margin: float = 0.05
    mia_margin: float = 0.05
    bound_tol: float = 1e-9
    noise_z: float = 6.0  # the per-coordinate noise test's tolerance in standard errors
    win_frac: float = 0.8

    def __post_init__(self) -> None:
        for name in ("n_nodes", "rounds", "local_steps", "batch_size", "mlp_rounds", "max_per_node", "noise_draws"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not (0 <= self.forget < self.n_nodes and 0 <= self.second_forget < self.n_nodes):
            raise ValueError(f"forget and second_forget must be client ids in [0, {self.n_nodes - 1}]")
        if self.forget == self.second_forget:
            raise ValueError("second_forget must differ from forget")
        if not self.budgets or any(not isinstance(R, int) or not 1 <= R <= self.rounds for R in self.budgets):
            raise ValueError(f"budgets must be integers in [1, rounds={self.rounds}], got {self.budgets!r}")
        if not 0 < self.er_p <= 1:
            raise ValueError(f"er_p must lie in (0, 1], got {self.er_p!r}")
        if isinstance(self.weak_budget, bool) or not isinstance(self.weak_budget, int):
            raise ValueError(f"weak_budget must be an integer in [1, rounds={self.rounds}], got {self.weak_budget!r}")
        if not 1 <= self.weak_budget <= self.rounds:
            raise ValueError(f"weak_budget must be an integer in [1, rounds={self.rounds}], got {self.weak_budget!r}")
        for name in ("weak_lr_graph", "weak_lr_agnostic", "weak_lr_retrain"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if not (self.claim_sigma > 0 and math.isfinite(self.claim_sigma)):
            raise ValueError(f"claim_sigma must be a finite number > 0, got {self.claim_sigma!r}")


FULL = Config()
QUICK = Config(rounds=60, budgets=(15, 30), sigmas=(16.0, 64.0, 256.0), mlp_rounds=10, noise_draws=2, weak_budget=15)


def _draw_seed(seed: int, topology: int, budget: int, arm: int, draw: int) -> int:
    """The noise seed of one draw of one arm: distinct per (seed, graph, budget, arm, draw), so no two arms share a
    Gaussian draw (the referee's point: a shared draw scaled by two sigmas is not a fair comparison)."""
    return 1_000_000 + (((int(seed) * 4 + topology) * 8 + budget) * 8 + arm) * 1024 + draw


def _mean_metrics(rows: list[dict]) -> dict:
    """Metrics averaged over noise draws, with the per-draw accuracies kept."""
    out = {k: float(np.mean([r[k] for r in rows])) for k in ("acc", "asr", "mia")}
    return {**out, "acc_draws": [r["acc"] for r in rows]}


def _metrics(model, data, M: torch.Tensor) -> dict:
    Xc, yc = data.node_data[data.forget[0]]
    cm = data.clean_members[data.forget[0]]
    return {
        "acc": float(accuracy(model, M, data.X_test, data.y_test).mean()),
        "asr": float(backdoor_asr(model, M, data.X_trig, data.target).mean()),
        "mia": float(mia_auc(model, M, (Xc[cm], yc[cm]), (data.X_holdout, data.y_holdout)).mean()),
    }


def _noise_excess(cfg: Config, res: UnlearnResult, base: torch.Tensor) -> float:
    """How far the released start of a resumed run is from ``checkpoint + N(0, sigma^2)`` with ``sigma`` covering the
    bound at ``t*``: the worst of ``|var(z) - 1|`` and ``|mean(z)|`` beyond ``noise_z`` standard errors, ``z`` the
    per-coordinate perturbation over ``sigma``, and the relative calibration gap; <= 0 when all agree."""
    cert = res.certificate
    start = res.trajectory.checkpoints[cert.t_star]
    calibrate = analytic_gaussian_sigma if cert.mechanism == "analytic" else gaussian_sigma
    cal = calibrate(cert.epsilon, cert.delta, cert.sensitivity) if cert.sensitivity > 0 else 0.0
    if cert.sigma <= 0:
        return float(cal - cert.sigma + float((start - base).abs().max()))
    z = ((start - base) / cert.sigma).flatten().numpy()
    n = z.size
    return float(
        max(
            abs(z.var() - 1.0) - cfg.noise_z * math.sqrt(2.0 / n),
            abs(z.mean()) - cfg.noise_z / math.sqrt(n),
            (cal - cert.sigma) / cert.sigma,
        )
    )


def _gap_to_bound(actual, reference, delta_curve, per_node_bound) -> dict:
    """Per position ``||X_t - X'_t||_F`` against the bound, and per node ``||x_i - x'_i||`` against ``a_i``."""
    dist = np.array([float((a - b).norm()) for a, b in zip(actual, reference)])
    per = np.array([(a - b).norm(dim=1).numpy() for a, b in zip(actual, reference)])
    D = np.asarray(delta_curve)[: len(dist)]
    ratio = np.where(D > 0, dist / np.maximum(D, 1e-300), 0.0)
    return {
        "dist": dist.tolist(),
        "excess": float((dist - D).max()),
        "per_node_excess": float((per - np.asarray(per_node_bound)[: len(per)]).max()),
        "max_ratio": float(ratio.max()),
        "mean_ratio": float(ratio[1:].mean()) if len(ratio) > 1 else 0.0,
    }


def _log(progress, message: str) -> None:
    if progress is not None and hasattr(progress, "log"):
        progress.log(message)


def _t_star(delta_curve, psi: float) -> int:
    return int(max(t for t, d in enumerate(delta_curve) if d <= psi))


def _topology(cfg: Config, seed: int, name: str, data, model, progress) -> tuple[dict, object, object]:
    c1, T = cfg.forget, cfg.rounds
    A = ring(cfg.n_nodes) if name == "ring" else erdos_renyi(cfg.n_nodes, cfg.er_p, seed=seed)
    W = metropolis_weights(A)
    train = dict(local_steps=cfg.local_steps, lr=cfg.lr, batch_size=cfg.batch_size, rounds=T, seed=seed)
    traj = DecentralizedSGD(model, data.node_data, W, **train).run()
    kept = [i for i in range(cfg.n_nodes) if i != c1]
    rec: dict = {"degree": int(A[c1].sum()), "before": _metrics(model, data, traj.final[kept])}
    rt = retrain(traj, [c1])
    rec["retrain"] = _metrics(model, data, rt.final)
    tdu = TraceDU(traj, "strongly_convex")
    sg, sa = tdu.sensitivity([c1]), tdu.sensitivity([c1], bound="agnostic")
    gap = _gap_to_bound(
        [traj.checkpoints[t][kept] for t in range(T + 1)],
        [rt.checkpoints[t] for t in range(T + 1)],
        sg.delta,
        sg.per_node,
    )
    rec["bound"] = {
        "graph": sg.delta.tolist(),
        "agnostic": sa.delta.tolist(),
        **gap,
        "graph_minus_agnostic": float((sg.delta - sa.delta).max()),
        "rho": tdu.rho,
        "heuristic": tdu.heuristic,
    }
    # TRACE-DU-regime-agnostic (spec section 5): rho = 1 + lr*beta (non-convex) on the convex model; log10 of the
    # bound (it overflows within a few rounds)
    with np.errstate(all="ignore"):
        rg_nc = TraceDU(traj, "nonconvex", smoothness=tdu.smoothness).sensitivity([c1])
        d_nc = rg_nc.delta
        regime_log10 = np.where(np.isfinite(d_nc), np.log10(np.maximum(np.nan_to_num(d_nc), 1e-300)), 308.0)
    rec["t_star_sweep"] = [
        {
            "sigma": s,
            "graph": _t_star(sg.delta, sensitivity_threshold(cfg.epsilon, cfg.delta, s)),
            "agnostic": _t_star(sa.delta, sensitivity_threshold(cfg.epsilon, cfg.delta, s)),
            "regime_agnostic": _t_star(rg_nc.delta, sensitivity_threshold(cfg.epsilon, cfg.delta, s)),
        }
        for s in cfg.sigmas
    ]
    _log(progress, f"{name}: trained, bound checked")
    noise = []
    rec["budget"] = []
    ti = TOPOLOGIES.index(name)
    for j, R in enumerate(cfg.budgets):
        row: dict = {"R": R}
        draws: dict = {"graph": [], "agnostic": [], "ctl_agnostic_sigma": []}
        certs: dict = {}
        for m in range(cfg.noise_draws):
            for a, key in enumerate(("graph", "agnostic")):
                r = TraceDU(traj, "strongly_convex", bound=key).unlearn(
                    [c1], cfg.epsilon, cfg.delta, max_rounds=R, seed=_draw_seed(seed, ti, j, a, m)
                )
                certs[key] = r.certificate
                draws[key].append(_metrics(model, data, r.models))
                noise.append(_noise_excess(cfg, r, traj.checkpoints[r.certificate.t_star][kept]))
            # control (A/A): the graph-aware rewind point with the noise level the graph-agnostic bound needs there,
            # its own independent draws: the same distribution as the agnostic arm, so the claim's rule is a fair null
            t_g, sig_a = certs["graph"].t_star, certs["agnostic"].sigma
            gen = np.random.default_rng(_draw_seed(seed, ti, j, 2, m))
            base = traj.checkpoints[t_g][kept]
            start = base + sig_a * torch.from_numpy(gen.standard_normal(tuple(base.shape)))
            ctl = _run(traj, kept, remove_nodes(traj.W, [c1]), T - t_g, start, t_g)
            draws["ctl_agnostic_sigma"].append(_metrics(model, data, ctl.final))
        row["ctl_agnostic_sigma"] = {"t_star": certs["graph"].t_star, "sigma": certs["agnostic"].sigma}
        row["ctl_agnostic_sigma"].update(_mean_metrics(draws["ctl_agnostic_sigma"]))
        for key in ("graph", "agnostic"):
            c = certs[key]
            row[key] = {"t_star": c.t_star, "sigma": c.sigma, "sens": c.sensitivity, **_mean_metrics(draws[key])}
        # the simplest exact alternative at the same budget: retrain from the init for R rounds without the client
        row["retrain_R"] = _metrics(model, data, retrain(traj, [c1], rounds=R).final)
        # TRACE-DU-regime-agnostic (spec section 5): the non-convex rho on this convex model; its bound at T - R
        row["regime_agnostic_log10_bound"] = float(regime_log10[T - R])
        rec["budget"].append(row)
    # the weak certificate (eps = weak_epsilon, analytic Gaussian) at R = weak_budget: both bounds, M draws each,
    # against exact retraining from the init for the same R rounds; each arm's R rounds at its own step size (chosen on
    # the dev seeds from cfg.weak_lr_grid)
    Rw = cfg.weak_budget
    lrs = {"graph": cfg.weak_lr_graph, "agnostic": cfg.weak_lr_agnostic, "retrain_R": cfg.weak_lr_retrain}
    weak: dict = {"R": Rw, "epsilon": cfg.weak_epsilon, "lr": lrs}
    for a, key in enumerate(("graph", "agnostic")):
        rows_w, cw = [], None
        for m in range(cfg.noise_draws):
            r = TraceDU(traj, "strongly_convex", bound=key, mechanism="analytic").unlearn(
                [c1],
                cfg.weak_epsilon,
                cfg.delta,
                max_rounds=Rw,
                seed=_draw_seed(seed, ti, 7, 3 + a, m),
                resume_lr=lrs[key],
            )
            cw = r.certificate
            rows_w.append(_metrics(model, data, r.models))
            noise.append(_noise_excess(cfg, r, traj.checkpoints[cw.t_star][kept]))
        weak[key] = {"t_star": cw.t_star, "sigma": cw.sigma, **_mean_metrics(rows_w)}
    # the ASR claim's control: the graph-aware arm's rewind and rounds with its noise drawn but not added
    t_w = weak["graph"]["t_star"]
    nn_w = _run(traj, kept, remove_nodes(traj.W, [c1]), T - t_w, traj.checkpoints[t_w][kept], t_w, lr=lrs["graph"])
    weak["no_noise"] = {"t_star": t_w, **_metrics(model, data, nn_w.final)}
    weak["retrain_R"] = _metrics(model, data, retrain(traj, [c1], rounds=Rw, lr=lrs["retrain_R"]).final)
    # the baseline as the first two reference runs had it (the training step size), for the before/after record
    weak["retrain_R_train_lr"] = _metrics(model, data, retrain(traj, [c1], rounds=Rw).final)
    rec["weak"] = weak
    rec["noise_excess"] = max(noise)
    _log(progress, f"{name}: budgets done")
    return rec, traj, tdu


def measure(cfg: Config, seed: int, progress) -> dict:
    c1, c2, T = cfg.forget, cfg.second_forget, cfg.rounds
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
    out: dict = {"seed": seed, "T": T}
    for name in TOPOLOGIES:
        out[name], traj_, tdu_ = _topology(cfg, seed, name, data, model, progress)
        if name == "ring":
            traj, tdu = traj_, tdu_
    kept = [i for i in range(cfg.n_nodes) if i != c1]
    Wk = remove_nodes(traj.W, [c1])

    # learned-component diagnostic on the ring: the gossip-trained model over training (mean over kept nodes)
    diag = sorted({0, *range(0, T + 1, max(1, T // 10)), T})
    out["training_curve"] = {"round": diag, **{k: [] for k in ("acc", "asr", "mia")}}
    for t in diag:
        for k, v in _metrics(model, data, traj.checkpoints[t][kept]).items():
            out["training_curve"][k].append(v)

    # the claims' arms on the ring at sigma = claim_sigma (budgeted noise: TRACE-DU picks its own t*)
    # M independent draws of TRACE-DU's noise; the no-rewind control adds the same draw to the final model (common
    # random numbers: the two arms differ only by the rewind)
    tdu_d, nr_d, ts_d, ru_d = [], [], [], []
    for m in range(cfg.noise_draws):
        u = TraceDU(traj, "strongly_convex").unlearn(
            [c1], cfg.epsilon, cfg.delta, sigma=cfg.claim_sigma, seed=_draw_seed(seed, 0, 7, 0, m)
        )
        ts, Ru = u.certificate.t_star, u.certificate.rounds_retrained
        ts_d.append(ts)
        ru_d.append(Ru)
        tdu_d.append(_metrics(model, data, u.models))
        nr = _run(traj, kept, Wk, Ru, traj.final[kept] + u.noise, T)  # no rewind: the same noise on X^T, same rounds
        nr_d.append(_metrics(model, data, nr.final))
        out["ring"]["noise_excess"] = max(
            out["ring"]["noise_excess"], _noise_excess(cfg, u, traj.checkpoints[ts][kept])
        )
    arms = {"trace_du": {"t_star": ts, "rounds": Ru, **_mean_metrics(tdu_d)}}
    arms["no_rewind"] = {"t_star": T, "rounds": Ru, **_mean_metrics(nr_d)}
    arms["draws"] = {
        "trace_du": {k: [x[k] for x in tdu_d] for k in ("acc", "asr", "mia")},
        "no_rewind": {k: [x[k] for x in nr_d] for k in ("acc", "asr", "mia")},
    }
    nn = _run(traj, kept, Wk, Ru, traj.checkpoints[ts][kept], ts)  # the rewind with the noise drawn but not added
    arms["no_noise"] = {"t_star": ts, "rounds": Ru, **_metrics(model, data, nn.final)}
    arms["fine_tune"] = {"rounds": Ru, **_metrics(model, data, fine_tune(traj, [c1], Ru).final)}
    arms["retrain_R"] = {"rounds": Ru, **_metrics(model, data, retrain(traj, [c1], rounds=Ru).final)}
    Mln, sig_last, D_T = last_plus_noise(tdu, [c1], cfg.epsilon, cfg.delta)
    arms["last_noise"] = {"sigma": sig_last, "sens": D_T, **_metrics(model, data, Mln)}
    out["claim_arms"] = arms
    _log(progress, "claim arms done")

    # sequential requests on the ring: c1 then c2; the bound for {c1, c2} along the branch, per node too
    seq = TraceDU(traj, "strongly_convex")
    r1 = seq.unlearn([c1], cfg.epsilon, cfg.delta, sigma=cfg.claim_sigma)
    s12 = seq.sensitivity([c2])
    ref_pos, ref_models, ref_ids = seq.reference([c2])
    act_pos, act_models, act_ids = seq.branch_models()
    act = {int(p): m[[ids.index(i) for i in ref_ids]] for p, m, ids in zip(act_pos, act_models, act_ids)}
    bound_at = {int(p): k for k, p in enumerate(s12.rounds)}
    common = [int(p) for p in ref_pos if int(p) in act and int(p) in bound_at]
    ref_by = {int(p): m for p, m in zip(ref_pos, ref_models)}
    seq_gap = _gap_to_bound(
        [act[p] for p in common],
        [ref_by[p] for p in common],
        [s12.delta[bound_at[p]] for p in common],
        [s12.per_node[bound_at[p]] for p in common],
    )
    r2 = seq.unlearn([c2], cfg.epsilon, cfg.delta, sigma=cfg.claim_sigma)
    trained = [r1.trajectory.rounds, r2.trajectory.rounds]
    # fresh noise per request: the second request's draw against the first's on the nodes both perturb
    # read from the released starts (the resumed runs' first checkpoints minus the branch's model there before the
    # noise), not from the returned noise tensors: a release reusing a cached vector cannot hide behind a fresh one
    t1, t2 = r1.certificate.t_star, r2.certificate.t_star
    X2, ids2 = seq._checkpoint(t2)
    rel1 = r1.trajectory.checkpoints[t1] - traj.checkpoints[t1][[traj.nodes.index(i) for i in r1.nodes]]
    rel2 = r2.trajectory.checkpoints[t2] - X2[[list(ids2).index(i) for i in r2.nodes]]
    rows1 = [list(r1.nodes).index(i) for i in r2.nodes]
    z1, z2 = rel1[rows1].flatten().numpy(), rel2.flatten().numpy()
    noise_corr = float(np.corrcoef(z1, z2)[0, 1]) if z1.std() > 0 and z2.std() > 0 else 1.0
    certified = [r1.certificate.rounds_retrained, r2.certificate.rounds_retrained]
    out["sequential"] = {
        "t_star": [r1.certificate.t_star, r2.certificate.t_star],
        "rounds": certified,
        "rounds_trained": trained,
        "positions_compared": len(common),
        "positions_expected": len(ref_pos),
        "excess": seq_gap["excess"],
        "per_node_excess": seq_gap["per_node_excess"],
        "max_ratio": seq_gap["max_ratio"],
        "removed": list(r2.certificate.removed),
        "noise_corr": noise_corr,
        "noise_n": int(z1.size),
        "after": _metrics(model, data, r2.models),
    }
    _log(progress, "sequential done")

    # certificates that must say heuristic: an MLP (also with a convex regime declared) and a too-small smoothness
    mlp = MLP(data.n_features, data.n_classes, hidden=cfg.mlp_hidden, l2=cfg.l2)
    train = dict(local_steps=cfg.local_steps, batch_size=cfg.batch_size, seed=seed)
    mt = DecentralizedSGD(mlp, data.node_data, traj.W, **train, rounds=cfg.mlp_rounds, lr=cfg.mlp_lr).run()
    mu = TraceDU(mt, "nonconvex", smoothness=cfg.mlp_beta)
    mres = mu.unlearn([c1], cfg.epsilon, cfg.delta, sigma=cfg.claim_sigma)
    mu_wrong = TraceDU(mt, "strongly_convex", smoothness=cfg.mlp_beta, strong_convexity=cfg.l2)
    low = TraceDU(traj, "strongly_convex", smoothness=0.5 * tdu.smoothness)
    rho_nc, _ = expansiveness("nonconvex", cfg.lr, tdu.smoothness)
    out["mlp"] = {
        "heuristic": mres.certificate.heuristic,
        "violations": list(mres.certificate.violations),
        "wrong_regime_heuristic": mu_wrong.heuristic,
        "low_smoothness_heuristic": low.heuristic,
        "softmax_heuristic": tdu.heuristic,
        "rho_nonconvex_softmax": rho_nc,
        "t_star": mres.certificate.t_star,
        "before": _metrics(mlp, data, mt.final[kept]),
        "after": _metrics(mlp, data, mres.models),
    }
    return out


# Every variant tried while designing this reproduction, with the seeds it saw (Experiment.tuning; report.md shows it).
# Seeds 0-9 were the reported seeds of the v1 runs (quick: 0-2), so they are the dev seeds now; the presets report
# fresh seeds 100-109 (quick: 100-102), which no design choice below saw.
_V1 = list(range(10))
TUNING = (
    dict(
        variant="v1 design (d888f3b, issue 30): 8 nodes, ring with 2 chords, softmax regression, l2 1e-4, sigma sweep "
        "(8, 16, 32), claim sigma 16",
        seeds=[0, 1, 2],
        outcome="pilot runs; the bound held; t* small at every sigma",
    ),
    dict(
        variant="v1 (16f6856): l2 3e-4, claim sigma 8, sigmas (4, 8, 16, 32), T=150, K=10, lr 1.9 picked after "
        "pilots on seeds 0-2",
        seeds=[0, 1, 2],
        outcome="quick preset: graph_aware_rewinds_less held",
    ),
    dict(
        variant="v1 reference run (full preset, 2026-12-01)",
        seeds=_V1,
        outcome="claims 5/6 hold; t* = 0.5 +- 0.5 of 150 at sigma 8: every unlearning claim measured retraining; "
        "graph_aware_rewinds_less does not hold (the referee's point in issue 51)",
    ),
    dict(
        variant="issue 51 pilot: 16-node ring (no chords), T=100, l2 1e-2 (strong contraction so the bound saturates)",
        seeds=[0, 1],
        outcome="rejected: accuracy 0.22 before unlearning (the L2 term swamps the scaled pixels); the bound "
        "saturates at 7.5 (graph) vs 17.5 (agnostic)",
    ),
    dict(
        variant="issue 51 pilot: 16-node ring, T=100, l2 in (3e-4, 3e-3, 1e-2), Dirichlet alpha 0.5 / 5, 8 vs 16 nodes",
        seeds=[0],
        outcome="only l2 3e-4 learns (accuracy 0.76 at T=100; 0.41 at 3e-3, 0.22-0.31 at 1e-2): l2 3e-4 kept",
    ),
    dict(
        variant="issue 51 pilot: 16-node ring, T=100, l2 3e-4, budgets R=25/50 with both bounds calibrating "
        "their noise (max_rounds=R)",
        seeds=[0, 1, 2],
        outcome="graph-aware sigma 130-208 vs agnostic 450-760; accuracy 0.10-0.19 vs 0.08-0.13 (retrain 0.74-0.80): "
        "the graph-aware arm higher on 6/6 seed x budget pairs, both far below retraining",
    ),
    dict(
        variant="issue 51 thresholds set from the pilot above before any dev run (16 clients dilute the backdoor): "
        "backdoor_learned ASR >= 0.2 (was 0.8 with 8 clients), forget_members_detectable AUC >= 0.55 (was 0.6), "
        "retrain_removes_backdoor <= 0.1 (was 0.2); Erdos-Renyi p = 0.25; forget client 3",
        seeds=[0, 1, 2],
        outcome="pilot ASR before 0.31-0.44, MIA 0.59-0.64, retrain ASR <= 0.007",
    ),
    dict(
        variant="issue 51 dev run, quick-sized design (T=60, budgets 15/30, claim sigma 64, sigmas 16/64/256, "
        "second forget client 9)",
        seeds=_V1,
        outcome="claims 3/7 hold, controls reject 6/7, checks 6/6; rewind_matters does not hold (t* = 12.5 +- 2.3 "
        "of 60): sigma 64 rewinds too little",
    ),
    dict(
        variant="issue 51 dev run, full preset (T=100, budgets 25/50), sigma sweep 32/64/96/128/192/256, claim sigma "
        "128 (picked before this run from the pilot's bound, Delta(50) ~ 37 > psi*(128) = 29.5; the sweep then "
        "showed it is the smallest sweep sigma with t* >= T/4: 96 gives t* = 23.1 +- 4.0, 128 gives 36.2 +- 6.1)",
        seeds=_V1,
        outcome="135 s; claims 3/7 hold (ring R25 / R50, ER R50; ER R25 7/10 wins), controls reject 6/7; "
        "preconditions 4/4; checks 6/6; TRACE-DU at sigma 128 has accuracy 0.22 vs retrain 0.76, ASR 0.13 +- 0.26 "
        "(unlearned_asr_close_to_retrain and asr_below_fine_tune do not hold; the MIA claim's no-rewind control "
        "passes). Claim sigma 128 kept",
    ),
    dict(
        variant="after the dev runs, before any reported run: second forget client 4 instead of 9 (removing 3 and 9 "
        "cuts the 16-ring in two; 3 and 4 leave a path); the equal-budget control built in the experiment (checkpoint "
        "+ a fresh N(0, sigma_agnostic^2) draw, the same rounds) instead of through select='precommitted', which "
        "refuses a sigma that does not certify and so crashed the graph-bound mutant. Then the quick preset's smoke "
        "run (T=60, sigma 128) on its own reported seeds, for run time",
        seeds=[100, 101, 102],
        outcome="quick: 25 s; nothing was changed after it",
    ),
    dict(
        variant="v3b (referee of issue 51), dev run 1: every arm draws its own noise (a seed per seed / graph / "
        "budget / arm / draw), M=8 draws averaged per arm and seed, the A/A control with its own draws at the "
        "agnostic sigma; retrain from the init for R rounds as a baseline; rewind_matters as an effect (TRACE-DU's MIA "
        "below the no-rewind arm's on the same draws, paired t, min_effect 0); the t* condition renamed rewind_deep; a "
        "fresh-noise-per-request check; the regime-agnostic bound recorded",
        seeds=_V1,
        outcome="316 s with 2 jobs; efficiency claims 4/4 hold (graph-aware wins 10, 10, 9, 9 of 10 on ring R25/R50, "
        "ER R25/R50; the A/A controls win 7, 5, 2, 4 of 10: all reject); retrain from the init for R rounds beats the "
        "graph-aware arm on 10/10 seeds in every cell (accuracy 0.51-0.68 vs 0.14-0.18); TRACE-DU minus no-rewind: "
        "MIA -0.0015 +- 0.0007 (p 3e-5), ASR -0.006 +- 0.004, accuracy -0.019 +- 0.003; forget_members_detectable "
        "0.597 +- 0.050 (holds, knife edge); checks 7/7",
    ),
    dict(
        variant="v3b: M from dev run 1 by keeping the first 1, 4 or 8 draws of each arm",
        seeds=_V1,
        outcome="claim wins (ring R25, R50, ER R25, R50) M=1: 8, 9, 8, 7; M=4: 9, 10, 8, 8; M=8: 10, 10, 9, 9. A/A "
        "control wins M=1: 5, 6, 3, 3; M=4: 2, 6, 3, 3; M=8: 7, 5, 2, 4 (a null: each at or below 8/10 by chance "
        "about 5% of the time). M=8 kept (about 25-40 s a seed single-threaded); quick preset M=2 for its 60 s limit",
    ),
    dict(
        variant="v3b: rewind_matters min_effect 0.01 MIA AUC (a fifth of the unlearning claims' 0.05 margins: a "
        "smaller effect of the rewind cannot decide any of their verdicts), set from dev run 1",
        seeds=_V1,
        outcome="on dev run 1 the effect is 0.0015: rewind_matters does not hold there, so the unlearning claims "
        "are expected to read 'setting invalid'",
    ),
    dict(
        variant="v3b probe: the graph-aware arm (analytic Gaussian) on the ring at eps 1 / 4 / 16, R = 25 / 50, "
        "2 draws, against retraining from the init for R rounds (stopped after seed 1, R=50, eps 1)",
        seeds=[0, 1],
        outcome="eps 1: 0.10-0.18 vs retrain 0.50-0.70; eps 4: 0.26-0.45; eps 16: 0.56 / 0.69 (seed 0, R 25 / 50), "
        "0.64 (seed 1, R 25) vs retrain 0.50 / 0.65 / 0.55: only a weak certificate beats retraining. Added: a claim "
        "at eps 16, R = T/4 (weak_budget 25) per graph, controlled by the agnostic bound at the same eps",
    ),
    dict(
        variant="v3b dev run 2 (dev run 1's design + rewind_matters min_effect 0.01 + the eps-16 claims), started "
        "with 2 jobs and stopped after 1 of 10 seeds: the shared machine ran it at 130 s a seed (ETA 20 min), too "
        "slow for the deadline; no verdict was read from it",
        seeds=_V1,
        outcome="none read. The eps-16 claims go to the reported seeds designed on the probe's seeds 0-1 only (a "
        "weaker design basis than the other claims; said so in the docs)",
    ),
    dict(
        variant="second referee's probes (not design choices of ours, recorded because they saw reported seeds): lr of "
        "retrain-R and of the graph-aware arm's resumed rounds in the eps-16 cell over 1.9 / 3 / 5 / 8 / 12 / 16, "
        "sigma of the graph-aware arm inflated 1-2x, a certified no-rewind arm, 2 draws, ring",
        seeds=[100, 101],
        outcome="retrain-R 0.495 / 0.515 at lr 1.9, 0.684 / 0.675 at lr 8; graph-aware 0.699 at lr 12: the claim "
        "survives both tuned with a 0.01-0.03 margin. Nothing below was chosen from these numbers",
    ),
    dict(
        variant="v3c: one lr grid (1.9, 3, 5, 8, 12, 16) for the eps-16 cell's R=25 rounds, the same for every arm "
        "(retrain-R from the init, the graph-aware and the graph-agnostic arms' resumed rounds), M=2 draws, both "
        "graphs; per arm the lr with the highest dev accuracy averaged over both graphs",
        seeds=_V1,
        outcome="accuracy ring / ER: retrain-R 0.508 / 0.521 at 1.9, 0.663 / 0.698 at 8, 0.671 / 0.709 at 12 (picked), "
        "0.659 / 0.694 at 16; graph-aware 0.592 / 0.613 at 1.9, 0.699 / 0.715 at 8, 0.696 / 0.719 at 12 (picked), "
        "0.663 / 0.694 at 16; agnostic 0.250 / 0.270 at 1.9 up to 0.620 / 0.648 at 16 (picked, the grid's edge). At "
        "the picked lrs graph-aware beats retrain-R on 9/10 (ring, +0.026) and 6/10 (ER, +0.010) dev seeds: the ER "
        "claim does not hold on the dev seeds; ASR graph-aware 0.040 / 0.048 vs retrain-R 0.007 / 0.005 (the tuned lr "
        "also cuts the backdoor the noisy start keeps). Added: the ASR companion claim (margin asr_margin 0.05, set "
        "before this probe for the other ASR claim) with a no-noise control",
    ),
)


EXPERIMENT = register(
    Experiment(
        slug="trace_du",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": (100, 101, 102), "full": tuple(range(100, 110))},
        measure=measure,
        judge=judge,
        threads=1,
        dev_seeds=tuple(range(10)),
        tuning=TUNING,
    )
)
