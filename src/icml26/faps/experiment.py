"""Reproduction: FaPS vs full training, random patch dropping and fixed frequency rules on a sparse digit canvas.

Main setting (issue 19): every 16x16 digit is pasted at a random offset on a 32x32 canvas (background -1), patch
4 -> 64 tokens (the same DiT cost as 16x16 digits with patch 2).  Most patches are flat background, so which
patches a step computes on can matter.  Protocol per seed (all arms share the model initialisation, the data
order and the t / noise draws; gate draws come from their own stream):

1. **Per-step cost, amortised.**  One trainer per arm takes blocks of 10 consecutive steps in round-robin order
   (the order reversed every other round); the block's MEAN step time (every probe and gate update of the block
   included), median over ``timing_rounds`` rounds, gives the cost ratio ``c = t_arm / t_full``.  Interleaving
   exposes every arm to the same CPU contention.
2. **Equal wall-clock budget as step counts.**  The budget is ``budget_steps`` full steps.  A dropping arm runs
   ``floor(budget_steps / ((1 - f) c + f))`` steps, ``f`` = the unmasked fine-tune fraction whose steps cost a full
   step; every arm is charged the same time at the measured costs.
3. Train each arm; held-out full-image eps-loss of the EMA weights on a fixed test batch (fixed ``t`` and noise)
   at a few points and at the end, and FD (Fréchet distance in a local canvas-digit classifier's 64-d features;
   NOT FID) of DDIM samples at half and full budget.  Equal steps: FaPS with ``budget_steps`` steps.  Limited
   data: full, random and FaPS on ``limited_n`` training images.
4. Dual spectral bias (issue 19 item 5): per-band R^2 of the x0-prediction on mean-removed held-out images
   (:func:`band_r2`), the training step at which a band's R^2 at ``t = r2_train_t`` reaches ``r2_level`` (censored
   at the last step) and the largest ``t`` at which it is reached (R^2 vs t, censored at the ends of the grid), on
   the synthetic spectral set (B) and on the canvas' full-training arm.  The statistics are validated first, as
   checks, on predictors with a known answer (exact low- / high-pass filters, and the linear MMSE denoiser, a
   known low-pass predictor with a closed-form R^2).
5. Secondary: v1's 16x16 digits (patch 2) at equal steps, random vs fixed rule vs FaPS (a table, not judged).

The full preset reports seeds 10-14 (``EXPERIMENT.seeds``): the setting and the gate were tuned on seeds 0-3.

Arms: ``full``; ``random`` (uniform patch dropping); ``fixed`` -- the fixed t-scheduled rule "high-frequency
only at t < fixed_t_high" (gating without learning: the most upper-band-energy patches of x0 when t is small,
uniform otherwise); ``heuristic`` -- the spec's rule with ``t_switch`` (high-frequency patches at small t,
low-frequency at large t); ``faps`` -- the learned gate (reads x_t, per-patch reward, see :class:`FaPSTrainer`).

:func:`judge` first judges the precondition that the fixed rule beats random dropping (there is something for a
gate to learn), which the FaPS-vs-random claims require.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, replace

import matplotlib
import numpy as np
import torch
from matplotlib.figure import Figure

from icml26.core import (
    Experiment,
    Report,
    judge_every,
    judge_k_of_n,
    judge_non_inferiority,
    judge_superiority,
    judge_threshold,
    mean_ci,
    register,
    seed_everything,
)

from .baselines import HighFrequencyGate, RandomPatchGate
from .data import canvas_digits, digits_tensors, spectral_tensors
from .diffusion import DDIMScheduler, ddim_sample
from .frequency import band_index, dct2, dct_band_energies, idct2, patchify
from .gate import FaPSTrainer, FrequencyGate, _topk_inclusion, num_keep
from .metrics import (
    FeatureFD,
    band_r2,
    censored_level_time,
    linear_mmse_band_r2,
    linear_mmse_x0,
    recovery_level_t,
    train_digit_classifier,
)
from .model import TinyDiT

matplotlib.use("Agg")

ARMS = ("full", "faps", "random", "fixed", "heuristic")
DROPPING = ("faps", "random", "fixed", "heuristic")
LABELS = {
    "full": "full training", "faps": "FaPS", "random": "random drop", "fixed": "fixed rule (high-freq at small t)",
    "heuristic": "heuristic with t_switch",
}  # fmt: skip
T_GRID = (50, 100, 200, 300, 400, 500, 600, 700, 800, 900)  # R^2 vs t (issue 19 item 5)


@dataclass(frozen=True)
class Config:
    img_size: int = 32  # the canvas
    digit_size: int = 16  # each digit upsampled to 16x16 and pasted at a random offset
    patch_size: int = 4  # 64 tokens
    width: int = 32
    depth: int = 2
    heads: int = 2
    batch_size: int = 32
    lr: float = 5e-3  # v1's tuned denoiser lr, shared by every arm
    policy_lr: float = 3e-3
    keep_ratio: float = 0.5
    full_finetune_frac: float = 0.1
    ema: float = 0.999
    fixed_t_high: int = 400  # the fixed rule keeps high-frequency patches at t < 400, uniform otherwise
    heuristic_t_switch: float = 0.5  # the spec's heuristic: high-frequency below t_switch T, low-frequency above
    # the FaPS gate
    faps_selection: str = "topk"
    faps_reward: str = "patch"
    faps_entropy_coef: float = 1e-3
    faps_temperature: float = 1.0
    faps_logit_cap: float = 2.0
    faps_hidden: int = 32  # the gate's MLP width: its cost must stay small next to the tiny DiT's
    faps_policy_batch: int = 8  # gate updated on 8 images per step (selection on all): a cheaper backward
    faps_policy_every: int = 2  # one gate update every 2 steps (amortised cost 0.81 vs 0.89 of a full step)
    faps_importance_weighting: bool = False
    faps_inputs: str = "x_t"
    budget_steps: int = 300  # equal wall-clock budget, in full-training steps
    limited_n: int = 300
    limited_budget_steps: int = 150
    # secondary (issue 19 item 5 of the follow-up, optional): v1's 16x16 digits, patch 2, equal steps, held-out loss
    digits16_steps: int = 300
    # dual spectral bias on the synthetic spectral set (B) at the canvas size: full training, probed along the way
    spectral_n: int = 1200
    spectral_steps: int = 150
    n_test: int = 597
    n_samples: int = 200
    n_curve_samples: int = 100
    sample_steps: int = 10  # DDIM steps for evaluation
    timing_rounds: int = 7
    n_probes: int = 6
    probe_size: int = 64
    n_bands: int = 4
    clf_epochs: int = 60
    # dual spectral bias, v2 statistics (issue 19 item 5): per-band R^2 of the x0-prediction on mean-removed images
    r2_level: float = 0.5  # a band counts as fitted / recovered once its R^2 reaches this level
    r2_train_t: int = 300  # the fixed timestep of the R^2-over-training probe (abar_300 ~ 0.79, cosine schedule)
    spectral_probes: int = 10  # R^2 probes over the spectral run (11 points incl. step 0)
    validation_tol: float = 0.03  # |measured - closed-form R^2| of the known low-pass predictor (Monte Carlo error)
    # the speed claim is timed on the spec's tiny DiT (16x16 digits, patch 2 -> 64 tokens, width 96, depth 4)
    speed_img_size: int = 16
    speed_width: int = 96
    speed_depth: int = 4
    speed_batch_size: int = 64
    speed_rounds: int = 3


QUICK = Config(
    img_size=16, digit_size=8, width=32, depth=1, heads=2, batch_size=32, budget_steps=40, limited_budget_steps=20,
    digits16_steps=20, n_samples=100, n_curve_samples=60, sample_steps=8, timing_rounds=3, n_probes=3, probe_size=32,
    clf_epochs=4,
    speed_img_size=8, speed_width=32, speed_depth=2, speed_batch_size=32, speed_rounds=2, spectral_n=200,
    spectral_steps=20, n_test=300,
)  # fmt: skip
FULL = Config()


# -- pieces ------------------------------------------------------------------------------------------------
def _data(cfg: Config):
    x, y, _ = canvas_digits(cfg.img_size, cfg.digit_size, seed=12345)
    perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(12345))
    test, train = perm[: cfg.n_test], perm[cfg.n_test :]
    return x[train], y[train], x[test], y[test]


def _gate(cfg: Config, arm: str):
    if arm == "full":
        return None
    if arm == "faps":
        return FrequencyGate(
            cfg.patch_size, cfg.n_bands, hidden=cfg.faps_hidden, keep_ratio=cfg.keep_ratio,
            selection=cfg.faps_selection, temperature=cfg.faps_temperature, logit_cap=cfg.faps_logit_cap,
            inputs=cfg.faps_inputs,
        )  # fmt: skip
    if arm == "random":
        return RandomPatchGate(cfg.patch_size, cfg.keep_ratio)
    if arm == "fixed":
        return HighFrequencyGate(cfg.patch_size, cfg.keep_ratio, cfg.n_bands, t_switch=cfg.fixed_t_high / 1000,
                                 late="random")  # fmt: skip
    return HighFrequencyGate(cfg.patch_size, cfg.keep_ratio, cfg.n_bands, t_switch=cfg.heuristic_t_switch)


def _trainer(cfg: Config, arm: str, seed: int, total_steps: int) -> FaPSTrainer:
    torch.manual_seed(seed)  # same denoiser init for every arm of a seed
    model = TinyDiT(cfg.img_size, cfg.patch_size, 1, cfg.width, cfg.depth, cfg.heads, num_classes=10)
    gate = _gate(cfg, arm)
    return FaPSTrainer(
        model, DDIMScheduler(1000), gate, total_steps=total_steps, full_finetune_frac=cfg.full_finetune_frac,
        lr=cfg.lr, policy_lr=cfg.policy_lr, ema=cfg.ema, generator=torch.Generator().manual_seed(seed + 1),
        gate_generator=torch.Generator().manual_seed(seed + 2), reward=cfg.faps_reward,
        entropy_coef=cfg.faps_entropy_coef, importance_weighting=cfg.faps_importance_weighting,
        policy_batch=cfg.faps_policy_batch, policy_every=cfg.faps_policy_every,
    )  # fmt: skip


def _interleaved_means(
    trainers: dict,
    x: torch.Tensor,
    y: torch.Tensor,
    batch: int,
    rounds: int,
    seed: int,
    block: int = 10,
    policy_every: int = 1,
) -> dict[str, float]:
    """Amortised mean seconds per ``train_step`` of each trainer.  Each round times a BLOCK of ``block``
    consecutive steps per arm (a block spans a whole ``progress_every`` window, so every probe and gate update is
    inside it); arms take turns block by block (order reversed every other round) so all feel the same machine
    load; the cost is the median over rounds of the block's mean step time (robust to another process stealing
    the CPU for a moment, while still charging every step of the block).  The first round is warm-up.  ``block``
    must be a multiple of ``policy_every`` so that every block holds the same number of gate updates."""
    if block % policy_every:
        raise ValueError(f"block ({block}) must be a multiple of policy_every ({policy_every})")
    names = list(trainers)
    g = torch.Generator().manual_seed(seed)
    times: dict[str, list[float]] = {a: [] for a in names}
    for r in range(rounds + 1):
        for a in names if r % 2 == 0 else names[::-1]:
            idx = [torch.randint(0, len(x), (batch,), generator=g) for _ in range(block)]
            t0 = time.perf_counter()
            for i in idx:
                trainers[a].train_step(x[i], y[i])
            if r >= 1:
                times[a].append((time.perf_counter() - t0) / block)
    return {a: statistics.median(v) for a, v in times.items()}


def _step_costs(cfg: Config, seed: int, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Amortised mean seconds per train_step of each arm, interleaved, and each arm's cost ratio to full training."""
    trainers = {a: _trainer(cfg, a, seed, 10**9) for a in ARMS}
    mean = _interleaved_means(trainers, x, y, cfg.batch_size, cfg.timing_rounds, seed + 7,
                              policy_every=cfg.faps_policy_every)  # fmt: skip
    return {"mean_s": mean, "ratio": {a: mean[a] / mean["full"] for a in ARMS}}


def _speed_ratio(cfg: Config, seed: int) -> dict:
    """FaPS / full amortised mean step time on the spec-sized DiT (16x16 digits, patch 2), interleaved."""
    x, y = digits_tensors(cfg.speed_img_size)
    # the main config's gate and optimiser (every field), on the spec-sized DiT
    big = replace(cfg, img_size=cfg.speed_img_size, patch_size=2, width=cfg.speed_width, depth=cfg.speed_depth, heads=4)
    trainers = {a: _trainer(big, a, seed, 10**9) for a in ("full", "faps")}
    mean = _interleaved_means(trainers, x, y, cfg.speed_batch_size, cfg.speed_rounds, seed + 5,
                              policy_every=cfg.faps_policy_every)  # fmt: skip
    return {"mean_s": mean, "ratio": mean["faps"] / mean["full"]}


def _fd(model, cfg: Config, fd: FeatureFD, n: int, seed: int) -> tuple[float, torch.Tensor]:
    y = torch.arange(n) % 10
    xs = ddim_sample(model, DDIMScheduler(1000), n, y, steps=cfg.sample_steps,
                     generator=torch.Generator().manual_seed(seed + 99)).clamp(-1, 1)  # fmt: skip
    fd.reset_generated()
    fd.update(xs, real=False)
    return fd.compute(), xs


class _FD(FeatureFD):
    """FeatureFD whose real-image features are computed once and kept between evaluations."""

    def reset_generated(self) -> None:
        self._feats[False] = []


def _r2_bands(x0_hat: torch.Tensor, x0: torch.Tensor, mu: torch.Tensor, n_bands: int) -> list[float]:
    """Per-band R^2 of ``x0_hat`` on mean-removed images (:func:`band_r2`, ``n_bands`` values) followed by the R^2
    of the upper half of the bands pooled (``1 - sum err / sum var`` over those bands: a variance-weighted mean)."""
    r2 = band_r2(x0_hat, x0, n_bands, mean=mu)
    var = dct_band_energies((x0 - mu)[:, 0], n_bands).sum(0)  # [n_bands]: data variance per band
    up = slice(n_bands // 2, None)
    pooled = (var[up] * r2[up]).sum() / var[up].sum().clamp_min(1e-12)
    return [float(v) for v in r2] + [float(pooled)]


@torch.no_grad()
def _model_r2(model, sched, spec: dict, t_value: int, n_bands: int) -> list[float]:
    """:func:`_r2_bands` of the model's x0-prediction ``(x_t - sqrt(1 - abar) eps_hat) / sqrt(abar)`` at timestep
    ``t_value`` on the probe ``spec`` (fixed images and noise; ``mu`` = the training mean image)."""
    x0, t = spec["x0"], torch.full((len(spec["x0"]),), t_value, dtype=torch.long)
    a = sched.alphas_cumprod[t_value].to(x0.dtype)
    x_t = sched.add_noise(x0, spec["noise"], t)
    was = model.training
    x0_hat = (x_t - (1 - a).sqrt() * model.eval()(x_t, t, spec["y"])) / a.sqrt()
    model.train(was)
    return _r2_bands(x0_hat, x0, spec["mu"], n_bands)


def _recovery(by_t: dict, level: float, n_bands: int) -> dict:
    """Recovery noise level (:func:`recovery_level_t`) of the lowest band and of the pooled upper bands."""
    out = {}
    for name, col in (("low", 0), ("high", n_bands)):
        t_star, cens = recovery_level_t(list(T_GRID), [by_t[str(t)][col] for t in T_GRID], level)
        out[name], out[f"{name}_censored"] = t_star, cens
    return out


def _level_times(steps: list[int], curve: list[list[float]], level: float, n_bands: int) -> dict:
    """Training step at which the lowest band's / pooled upper bands' R^2 first reaches ``level`` (censored at the
    last step: a band that never reaches it gets the last step, a lower bound on its true time)."""
    out = {}
    for name, col in (("low", 0), ("high", n_bands)):
        step, cens = censored_level_time(steps, [c[col] for c in curve], level)
        out[name], out[f"{name}_censored"] = step, cens
    return out


def spectral_validation(x_train: torch.Tensor, spec: dict, sched, cfg: Config, predictor=None, seed: int = 0) -> dict:
    """Issue 19 item 5: validate the R^2 statistics on predictors whose answer is known, on the probe images.

    * exact filters: the low-pass (lower half of the bands) and high-pass (upper half) of the mean-removed probe
      images must score R^2 = 1 in the bands they keep and 0 in the others (``exact_dev`` = largest deviation);
    * the known low-pass denoiser :func:`linear_mmse_x0` (with the training images' DCT spectrum) at every ``t`` of
      ``T_GRID``: measured R^2 vs :func:`linear_mmse_band_r2`'s closed form given the probe images (expectation over
      the noise, measured with antithetic noise pairs; ``closed_form_dev``), and its recovery
      noise levels (``recovery``; lowest band above the upper bands = the statistic calls it low-pass).

    ``predictor(x_t, abar, x0) -> x0_hat`` replaces the known low-pass denoiser (a mutant: a predictor that is not
    low-pass must move ``recovery``; ``closed_form_dev`` is then meaningless)."""
    mu, x0, nb = spec["mu"], spec["x0"], cfg.n_bands
    var = dct2((x_train - mu)[:, 0]).pow(2).mean(0)  # [H, W] per-coefficient variance
    idx = band_index(x0.shape[-2], x0.shape[-1], nb)
    d = dct2((x0 - mu)[:, 0])
    keep_low = (idx < nb // 2).to(x0.dtype)
    low = idct2(d * keep_low)[:, None] + mu
    high = idct2(d * (1 - keep_low))[:, None] + mu
    target_low = [1.0] * (nb // 2) + [0.0] * (nb - nb // 2)
    dev = max(max(abs(r - e) for r, e in zip(_r2_bands(low, x0, mu, nb)[:nb], target_low)),
              max(abs(r - (1 - e)) for r, e in zip(_r2_bands(high, x0, mu, nb)[:nb], target_low)))  # fmt: skip
    by_t, cf_dev = {}, 0.0
    # 8 noise draws per image in antithetic pairs (no data-noise cross term): the Monte-Carlo error of the noise
    # term falls to ~0.01 in R^2 (the closed form is an expectation over the noise)
    g = torch.Generator().manual_seed(seed + 41)
    extra = [torch.randn(x0.shape, generator=g) for _ in range(3)]
    noise2 = torch.cat([e for n in (spec["noise"], *extra) for e in (n, -n)])
    x2 = x0.repeat(8, 1, 1, 1)
    for tv in T_GRID:
        a = float(sched.alphas_cumprod[tv])
        x_t = sched.add_noise(x2, noise2, torch.full((len(x2),), tv, dtype=torch.long))
        x0_hat = linear_mmse_x0(x_t, a, mu, var) if predictor is None else predictor(x_t, a, x2)
        by_t[str(tv)] = _r2_bands(x0_hat, x2, mu, nb)
        if predictor is None:
            closed = linear_mmse_band_r2(a, var, nb, data_var=d.pow(2).mean(0)).tolist()
            cf_dev = max(cf_dev, max(abs(r - c) for r, c in zip(by_t[str(tv)][:nb], closed)))
    rec = _recovery(by_t, cfg.r2_level, nb)
    return {"exact_dev": float(dev), "closed_form_dev": float(cf_dev), "r2_by_t": by_t, "recovery": rec,
            "recovery_gap": rec["low"] - rec["high"]}  # fmt: skip


@torch.no_grad()
def _held_out_loss(model, sched, held: dict) -> float:
    """Full-image eps-MSE of ``model`` on the fixed held-out batch (fixed t and noise): the training objective."""
    was = model.training
    err = (model.eval()(held["x_t"], held["t"], held["y"]) - held["noise"]).pow(2).mean()
    model.train(was)
    return float(err)


def _train_arm(cfg, arm, seed, steps, x, y, fd, charge, spec=None, curve_at=(), held=None, n_probes=None) -> dict:
    """Train one arm for ``steps``; ``charge(k)`` = budget time charged for the first ``k`` steps.  With a probe
    ``spec``: per-band R^2 of the denoiser at ``t = r2_train_t`` over training, of the EMA weights vs t at the end."""
    tr = _trainer(cfg, arm, seed, steps)
    g = torch.Generator().manual_seed(seed + 3)  # same batches for every arm of this seed
    n_probes = n_probes or cfg.n_probes
    probe_at = set(np.unique(np.linspace(0, steps, n_probes + 1).round().astype(int)).tolist())
    out = {"steps": steps, "curve": [], "r2_steps": [], "r2_train": [], "losses": [], "held": {"curve": []},
           "gate_curve": []}  # fmt: skip
    diag_x = x[: cfg.probe_size]
    t0 = time.perf_counter()
    for s in range(steps + 1):
        if s in probe_at:
            if spec is not None:
                out["r2_steps"].append(s)
                out["r2_train"].append(_model_r2(tr.denoiser, tr.scheduler, spec, cfg.r2_train_t, cfg.n_bands))
            if held is not None:
                out["held"]["curve"].append([s, charge(s), _held_out_loss(tr.ema_model, tr.scheduler, held)])
            if isinstance(tr.gate, FrequencyGate):
                out["gate_curve"].append({"step": s, **_gate_preference(tr.gate, diag_x, tr.scheduler, s / steps)})
        if s in curve_at:
            out["curve"].append([s, charge(s), _fd(tr.ema_model, cfg, fd, cfg.n_curve_samples, seed)[0]])
        if s == steps:
            break
        i = torch.randint(0, len(x), (cfg.batch_size,), generator=g)
        out["losses"].append(tr.train_step(x[i], y[i])["loss"])
    out["train_wall_s"] = time.perf_counter() - t0
    if held is not None:
        out["held_loss"] = out["held"]["curve"][-1][2]
    if fd is not None:
        value, xs = _fd(tr.ema_model, cfg, fd, cfg.n_samples, seed)
        out["fd"] = value
        out["kid"] = fd.compute_kid(n_subsets=100, subset_size=min(100, cfg.n_samples), seed=seed)[0]
        out["curve"].append([steps, charge(steps), value])
        out["samples"] = xs[:40, 0].numpy().round(3).tolist()
    if spec is not None:
        out["r2_by_t"] = {str(t): _model_r2(tr.ema_model, tr.scheduler, spec, t, cfg.n_bands) for t in T_GRID}
        out["level_times"] = _level_times(out["r2_steps"], out["r2_train"], cfg.r2_level, cfg.n_bands)
        out["recovery"] = _recovery(out["r2_by_t"], cfg.r2_level, cfg.n_bands)
    if out["gate_curve"]:
        out["gate_preference"] = out["gate_curve"][-1]
    return out


@torch.no_grad()
def _gate_preference(gate: FrequencyGate, x0: torch.Tensor, sched, tau: float = 1.0, seed: int = 5) -> dict:
    """What the gate prefers, read on noisy inputs as in training: at t = 100 and t = 900, the correlation of each
    patch's keep-probability (Monte Carlo inclusion under Gumbel-top-k) and of its logit with the patch's
    upper-band share of clean DCT energy (positive = prefers high-frequency patches), and the logit spread (sd)."""
    p = gate.patch_size
    b = len(x0)
    blocks = patchify(x0, p).reshape(b, -1, 1, p, p)
    e = dct_band_energies(blocks, gate.n_bands).sum(2)
    share = (e[..., gate.n_bands // 2 :].sum(-1) / e.sum(-1).clamp_min(1e-12)).flatten()
    noise = torch.randn(x0.shape, generator=torch.Generator().manual_seed(seed))
    out = {}
    for t in (100, 900):
        tt = torch.full((b,), t)
        src = sched.add_noise(x0, noise, tt) if getattr(gate, "inputs", "x0") == "x_t" else x0
        logits = gate(src, tt, tau)
        n = logits.shape[1]
        k = num_keep(gate.keep_ratio, n)
        allidx = torch.arange(n).expand(b, n)
        keep_p = _topk_inclusion(logits, k, allidx, torch.Generator().manual_seed(seed + 1), draws=64).flatten()
        for name, v in (("keep_prob", keep_p), ("logit", logits.flatten())):
            c = torch.corrcoef(torch.stack([v, share]))[0, 1]
            out[f"corr_{name}_high_share_t{t}"] = float(c) if torch.isfinite(c) else 0.0
        out[f"logit_sd_t{t}"] = float(logits.std())
    return out


def _budget_steps(budget: int, ratio: float, ff: float) -> int:
    return max(1, math.floor(budget / ((1 - ff) * ratio + ff)))


def _charge(cost: dict, arm: str, steps: int, ff: float):
    t_full, t_arm = cost["mean_s"]["full"], cost["mean_s"][arm]
    if arm == "full":
        return lambda k: k * t_full
    switch = math.floor(steps * (1 - ff))
    return lambda k: min(k, switch) * t_arm + max(0, k - switch) * t_full


def _seed_run(cfg: Config, seed: int, data, fd: FeatureFD, progress) -> dict:
    xtr, ytr, xte, yte = data
    cost = progress.cached(f"seed{seed}-cost", lambda: _step_costs(cfg, seed, xtr, ytr))
    ff = cfg.full_finetune_frac
    g = torch.Generator().manual_seed(seed + 11)
    pi = torch.randperm(len(xte), generator=g)[: cfg.probe_size]
    # R^2 probe: held-out images, fixed noise, the training mean image removed (issue 19 item 5)
    spec = {"x0": xte[pi], "y": yte[pi], "noise": torch.randn(xte[pi].shape, generator=g),
            "mu": xtr.mean(0, keepdim=True)}  # fmt: skip
    gh = torch.Generator().manual_seed(seed + 13)  # held-out objective: every test image, fixed t and noise
    ht, hn = torch.randint(0, 1000, (len(xte),), generator=gh), torch.randn(xte.shape, generator=gh)
    held = {"x_t": DDIMScheduler(1000).add_noise(xte, hn, ht), "t": ht, "y": yte, "noise": hn}
    res = {"cost": cost, "speed": progress.cached(f"seed{seed}-speed", lambda: _speed_ratio(cfg, seed)), "arms": {}}
    for arm in ARMS:
        steps = cfg.budget_steps if arm not in DROPPING else _budget_steps(cfg.budget_steps, cost["ratio"][arm], ff)
        charge = _charge(cost, arm, steps, ff)
        res["arms"][arm] = progress.cached(
            f"seed{seed}-{arm}",
            lambda a=arm, n=steps, c=charge: _train_arm(
                cfg, a, seed, n, xtr, ytr, fd, c, spec if a == "full" else None, (n // 2,), held,
            ),
        )  # fmt: skip
    res["equal_steps_faps"] = progress.cached(
        f"seed{seed}-faps-equal-steps",
        lambda: _train_arm(cfg, "faps", seed, cfg.budget_steps, xtr, ytr, fd, _charge(cost, "faps", 1, ff),
                           held=held),
    )  # fmt: skip
    # random dropping at the same number of steps: isolates what the gate learned from what it costs
    res["equal_steps_random"] = progress.cached(
        f"seed{seed}-random-equal-steps",
        lambda: _train_arm(cfg, "random", seed, cfg.budget_steps, xtr, ytr, None, lambda k: 0.0, held=held),
    )
    sub = torch.randperm(len(xtr), generator=torch.Generator().manual_seed(seed + 21))[: cfg.limited_n]
    res["limited"] = {}
    for arm in ("full", "random", "faps"):
        n = cfg.limited_budget_steps
        if arm != "full":
            n = _budget_steps(n, cost["ratio"][arm], ff)
        res["limited"][arm] = progress.cached(
            f"seed{seed}-limited-{arm}",
            lambda a=arm, n=n: _train_arm(cfg, a, seed, n, xtr[sub], ytr[sub], fd, _charge(cost, a, n, ff)),
        )
    res["spectral"] = progress.cached(f"seed{seed}-spectral", lambda: _spectral_run(cfg, seed))
    res["digits16"] = progress.cached(f"seed{seed}-digits16", lambda: _digits16_run(cfg, seed))
    return res


def _digits16_run(cfg: Config, seed: int) -> dict:
    """Secondary: v1's setting (all 1797 digits upsampled to 16x16, patch 2 -> 64 tokens, same DiT size), random
    dropping, the fixed rule and FaPS for ``digits16_steps`` steps each (equal steps, gate cost not charged), held-out
    full-image loss on the 597 test digits (fixed t and noise).  It shows whether that setting has headroom."""
    x, y = digits_tensors(16)
    perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(12345))
    te, trn = perm[: cfg.n_test], perm[cfg.n_test :]
    c16 = replace(cfg, img_size=16, patch_size=2)
    gh = torch.Generator().manual_seed(seed + 13)
    ht, hn = torch.randint(0, 1000, (len(te),), generator=gh), torch.randn(x[te].shape, generator=gh)
    held = {"x_t": DDIMScheduler(1000).add_noise(x[te], hn, ht), "t": ht, "y": y[te], "noise": hn}
    return {a: _train_arm(c16, a, seed, cfg.digits16_steps, x[trn], y[trn], None, lambda k: 0.0, held=held)
            for a in ("random", "fixed", "faps")}  # fmt: skip


def _spectral_run(cfg: Config, seed: int) -> dict:
    """Full training on the synthetic spectral set (B): the R^2 statistics validated on known predictors of held-out
    (B) images first (:func:`spectral_validation`), then computed on the model over training and vs t."""
    x, y = spectral_tensors(cfg.spectral_n, cfg.img_size, seed=0, patch=cfg.patch_size)
    g = torch.Generator().manual_seed(seed + 31)
    xp, yp = spectral_tensors(cfg.probe_size, cfg.img_size, seed=10_000 + seed, patch=cfg.patch_size)  # held out
    spec = {"x0": xp, "y": yp, "noise": torch.randn(xp.shape, generator=g), "mu": x.mean(0, keepdim=True)}
    validation = spectral_validation(x, spec, DDIMScheduler(1000), cfg, seed=seed)
    out = _train_arm(cfg, "full", seed, cfg.spectral_steps, x, y, None, lambda k: 0.0, spec,
                     n_probes=cfg.spectral_probes)  # fmt: skip
    return {**out, "validation": validation}


# -- measure / judge -------------------------------------------------------------------------------------
def _classifier(cfg: Config, xtr, ytr, progress):
    """The FD feature classifier: trained once (seed 0) on the canvas digits average-pooled to 16x16 (the small CNN
    reads a 32x32 canvas poorly: 77% test accuracy vs ~90% pooled) and shared by every seed, a checkpoint."""
    from torch import nn

    from .metrics import DigitClassifier

    pool = nn.AvgPool2d(max(1, cfg.img_size // 16))

    def build() -> dict:
        seed_everything(0)
        return {"model": train_digit_classifier(pool(xtr), ytr, epochs=cfg.clf_epochs, seed=0).state_dict()}

    key = {"img_size": cfg.img_size, "digit_size": cfg.digit_size, "clf_epochs": cfg.clf_epochs, "split_seed": 12345,
           "n_test": cfg.n_test, "data": "canvas", "pool": max(1, cfg.img_size // 16)}  # fmt: skip
    blob = progress.checkpoint("fd-classifier", key, build)
    clf = DigitClassifier()
    clf.load_state_dict(blob["model"])
    clf.eval()
    return nn.Sequential(pool, clf).eval(), nn.Sequential(pool, clf.features).eval()


def measure(cfg: Config, seed: int, progress) -> dict:
    """One seed: every arm trained on the same init, data order and noise draws, plus the speed probe, the
    limited-data arms and the spectral-set run (the data split and the FD classifier are shared artifacts).
    Everything is drawn from ``seed`` (the full preset's seeds 10-14 are fresh: tuning used seeds 0-3)."""
    data = _data(cfg)
    xtr, ytr, xte, yte = data
    clf, features = _classifier(cfg, xtr, ytr, progress)
    with torch.no_grad():
        clf_acc = float((clf(xte).argmax(1) == yte).float().mean())
    fd = _FD(features)
    fd.update(xte, real=True)
    floor_fd = FeatureFD(features)
    floor_fd.update(xte, real=True)
    floor_fd.update(xtr[: cfg.n_samples], real=False)
    real_vs_real = floor_fd.compute()
    seed_everything(seed)
    res = _seed_run(cfg, seed, data, fd, progress)
    out = _strip(res)
    for a in ARMS:  # 20 samples per arm for the figure (the record stays small)
        out["arms"][a]["samples"] = res["arms"][a]["samples"][:20]
    return {**out, "classifier_test_accuracy": clf_acc, "fd_real_train_vs_test": real_vs_real}


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    seeds = report.seeds or list(range(len(records)))
    _report(cfg, seeds, dict(zip(seeds, records)), records[0]["classifier_test_accuracy"],
            records[0]["fd_real_train_vs_test"], report)  # fmt: skip


def _report(cfg: Config, seeds, per_seed: dict, clf_acc: float, real_vs_real: float, rep: Report) -> None:
    S = [per_seed[s] for s in seeds]
    fd = {a: [r["arms"][a]["fd"] for r in S] for a in ARMS}
    ratio = {a: [r["cost"]["ratio"][a] for r in S] for a in ARMS}
    n = len(S)
    k = max(1, math.ceil(0.8 * n))

    held = {a: [r["arms"][a]["held_loss"] for r in S] for a in ARMS}
    gain = {a: [(r["arms"]["random"]["held_loss"] - r["arms"][a]["held_loss"]) / r["arms"]["random"]["held_loss"]
                for r in S] for a in ARMS}  # fmt: skip
    pre = "frequency_rule_beats_random"
    tuned = sorted(set(seeds) & {0, 1, 2, 3})
    overlap = f"seeds {tuned} of this run overlap them." if tuned else "every seed of this run is fresh."
    rep.add_note(f"The setting and the gate were tuned on seeds 0-3; {overlap}")

    # (0) precondition (issue 19): a fixed t-scheduled frequency rule ("gating without learning") beats uniform
    # patch dropping on the training objective at the same wall-clock budget: something for a gate to learn
    rep.add_claim(judge_k_of_n(
        pre, f"There is something for a frequency gate to learn: the fixed t-scheduled rule (keep the patches "
        f"with the most upper-band DCT energy when t < {cfg.fixed_t_high}, uniform otherwise) reaches a lower "
        f"held-out full-image loss than uniform random patch dropping at an equal wall-clock budget in >= {k} of {n} "
        f"seeds", ("fixed-rule held-out loss", held["fixed"]), {"random drop held-out loss": held["random"]}, k=k,
        higher_is_better=False, kind="precondition",
    ))  # fmt: skip
    _set_tuning(cfg, rep, seeds)

    speed = [r["speed"]["ratio"] for r in S]
    rep.add_claim(judge_threshold(
        "speed", f"A FaPS step at keep ratio {cfg.keep_ratio} costs <= 0.65x a full step, policy included "
        f"(amortised MEAN step-time ratio, every gate update included, interleaved timings; "
        f"{cfg.speed_img_size}x{cfg.speed_img_size} images, patch 2, width {cfg.speed_width}, depth "
        f"{cfg.speed_depth}, batch {cfg.speed_batch_size})",
        ("FaPS / full step time", speed), threshold=0.65, sense="<=",
    ))  # fmt: skip
    rep.add_claim(judge_non_inferiority(
        "equal_wallclock_vs_full", "At an equal amortised wall-clock budget FaPS's Fréchet distance is <= full "
        "training's (paired by seed)", ("FaPS FD", fd["faps"]), {"full training FD": fd["full"]}, margin=0.0,
        higher_is_better=False,
    ))  # fmt: skip
    rep.add_claim(judge_k_of_n(
        "equal_wallclock_vs_random", f"At an equal amortised wall-clock budget FaPS's Fréchet distance is < random "
        f"patch dropping's in >= {k} of {n} seeds", ("FaPS FD", fd["faps"]), {"random drop FD": fd["random"]}, k=k,
        higher_is_better=False, requires=[pre],
    ))  # fmt: skip
    rep.add_claim(judge_k_of_n(
        "equal_wallclock_heldout_vs_random", f"At an equal amortised wall-clock budget FaPS's held-out full-image "
        f"loss is < random patch dropping's in >= {k} of {n} seeds", ("FaPS held-out loss", held["faps"]),
        {"random drop held-out loss": held["random"]}, k=k, higher_is_better=False, requires=[pre],
    ))  # fmt: skip
    rep.add_claim(judge_non_inferiority(
        "faps_fixed_rule_gain", "FaPS reaches >= 80% of the fixed rule's gain over random dropping (relative "
        "held-out loss reduction vs random at an equal amortised wall-clock budget; paired bootstrap, margin 0)",
        ("FaPS gain over random", gain["faps"]), {"0.8 x fixed-rule gain": [0.8 * v for v in gain["fixed"]]},
        margin=0.0, requires=[pre],
    ))  # fmt: skip
    rep.add_claim(judge_k_of_n(
        "equal_steps_heldout_vs_random", f"At an equal number of steps ({cfg.budget_steps}; gate cost not charged) "
        f"FaPS's held-out full-image loss is < random patch dropping's in >= {k} of {n} seeds: what the gate learned, "
        "apart from what it costs (reported)", ("FaPS held-out loss, equal steps",
                                                [r["equal_steps_faps"]["held_loss"] for r in S]),
        {"random drop held-out loss, equal steps": [r["equal_steps_random"]["held_loss"] for r in S]}, k=k,
        higher_is_better=False, requires=[pre],
    ))  # fmt: skip
    eq_ratio = [r["equal_steps_faps"]["fd"] / r["arms"]["full"]["fd"] for r in S]
    rep.add_claim(judge_threshold(
        "equal_steps", "At an equal number of steps FaPS's Fréchet distance is within 15% of full training's "
        "(FD ratio FaPS / full <= 1.15)", ("FD(FaPS) / FD(full), equal steps", eq_ratio), threshold=1.15,
        sense="<=",
    ))  # fmt: skip
    _spectral_statements(cfg, S, rep)
    lim = {a: [r["limited"][a]["fd"] for r in S] for a in ("full", "random", "faps")}
    rep.add_claim(judge_superiority(
        "limited_data", f"With {cfg.limited_n} training images (equal amortised wall-clock) FaPS's Fréchet distance is "
        "below full training's and below random patch dropping's (reported, not gated)", ("FaPS FD", lim["faps"]),
        {"full training FD": lim["full"], "random drop FD": lim["random"]}, higher_is_better=False, test="ttest",
    ))  # fmt: skip

    rows = []
    for a in ARMS:
        rows.append({
            "method": LABELS[a], "FD": str(mean_ci(fd[a])),
            "held-out loss": str(mean_ci(held[a])), "gain vs random": str(mean_ci(gain[a])),
            "KID (raw)": str(mean_ci([r["arms"][a]["kid"] for r in S])),
            "step cost / full": str(mean_ci(ratio[a])),
            "steps": str(mean_ci([r["arms"][a]["steps"] for r in S])),
            "train wall s (measured, contended)": str(mean_ci([r["arms"][a]["train_wall_s"] for r in S])),
        })  # fmt: skip
    rows.append({"method": "FaPS, equal steps", "FD": str(mean_ci([r["equal_steps_faps"]["fd"] for r in S])),
                 "held-out loss": str(mean_ci([r["equal_steps_faps"]["held_loss"] for r in S])),
                 "steps": cfg.budget_steps})  # fmt: skip
    rows.append({"method": "random drop, equal steps",
                 "held-out loss": str(mean_ci([r["equal_steps_random"]["held_loss"] for r in S])),
                 "steps": cfg.budget_steps})  # fmt: skip
    for a in ("full", "random", "faps"):
        rows.append({"method": f"{LABELS[a]}, {cfg.limited_n} images", "FD": str(mean_ci(lim[a])),
                     "steps": str(mean_ci([r["limited"][a]["steps"] for r in S]))})  # fmt: skip
    lim_wins = sum(f < b for f, b in zip(lim["faps"], lim["full"]))
    lim_wins_r = sum(f < b for f, b in zip(lim["faps"], lim["random"]))
    rep.add_note(f"Limited data: FaPS below full training in {lim_wins} of {len(S)} seeds and below random dropping in "
                 f"{lim_wins_r} of {len(S)}.")  # fmt: skip
    _gate_table(rep, S)
    _digits16_table(cfg, rep, S)
    rep.add_table(
        "fd",
        rows,
        caption=f"Fréchet distance in the local digits classifier's features (lower is "
        f"better; real train vs real test = {real_vs_real:.3g}) and the KID-style kernel distance (cubic kernel on the "
        f"same unnormalised features, so its scale is arbitrary; mean over 100 subsets of 100); mean ± sd over "
        f"{len(seeds)} seeds.",
    )
    # check: the equal wall-clock accounting charges every arm the budget to within rounding of the step counts
    excess = [
        abs(r["arms"][a]["curve"][-1][1] / r["cost"]["mean_s"]["full"] - cfg.budget_steps)
        for r in S for a in ("full", *DROPPING)
    ]  # fmt: skip
    rep.add_claim(judge_every(
        "equal_budget_charged", f"Equal wall-clock accounting: full training and every dropping arm are charged "
        f"{cfg.budget_steps} full-step times to within 2 steps (step counts derived from the measured costs)",
        ("|charged time / full step time - budget|", excess), bound=2.0, sense="<=", kind="check",
    ))  # fmt: skip
    rep.metrics = {
        "classifier_test_accuracy": clf_acc, "fd_real_train_vs_test": real_vs_real,
        "per_seed": {str(s): {k2: v for k2, v in per_seed[s].items() if k2 != "arms"} for s in seeds},
        "limited_faps_wins": lim_wins,
        "gate_preference": [r["arms"]["faps"].get("gate_preference") for r in S],
        "gain_vs_random": gain,
    }  # fmt: skip
    _figures(rep, cfg, seeds, S)
    rep.add_note(
        "Equal wall-clock budgets are converted to step counts from per-step costs measured in an interleaved "
        "round-robin on the same (shared, contended) CPU; the time axis of the FD curve is that charged time."
    )
    rep.add_note(
        "The FD feature classifier and the train/test split are shared by all seeds (a checkpoint artifact); each "
        "seed draws the denoiser init, data order, noise, probes and timings. Step costs are amortised MEANS over "
        "blocks of 10 consecutive steps taken in round-robin (every probe and gate update of a block included; "
        "median over rounds), used for the speed claim and for every equal wall-clock budget."
    )


def _spectral_statements(cfg: Config, S: list[dict], rep: Report) -> None:
    """Dual spectral bias with the v2 statistics (issue 19 item 5): per-band R^2 of the x0-prediction on mean-removed
    images, level times censored at the end of the run, recovery noise levels from R^2 vs t.  The statistics are
    first validated on predictors with a known answer (checks), then computed on the model (claims).  "High" = the
    upper half of the DCT bands pooled (where set (B)'s gratings put their energy), "low" = the lowest band."""
    lv, tt = cfg.r2_level, cfg.r2_train_t
    val = [r["spectral"]["validation"] for r in S]
    rep.add_claim(judge_every(
        "band_r2_exact_filters", "Per-band R^2 on mean-removed images scores the exact low-pass (lower half of the DCT "
        "bands) and high-pass (upper half) of held-out spectral-set (B) images 1 in the bands they keep and 0 in the "
        "others, to within 1e-3", ("largest |R^2 - expected|", [v["exact_dev"] for v in val]), bound=1e-3,
        kind="check",
    ))  # fmt: skip
    rep.add_claim(judge_every(
        "band_r2_known_low_pass", f"On held-out (B) images the known low-pass denoiser (per-DCT-coefficient linear "
        f"MMSE from x_t with (B)'s training spectrum) has measured per-band R^2 within {cfg.validation_tol} of its "
        f"closed form at every t of {list(T_GRID)} (Monte-Carlo tolerance)",
        ("largest |measured - closed-form R^2|", [v["closed_form_dev"] for v in val]), bound=cfg.validation_tol,
        kind="check",
    ))  # fmt: skip
    rep.add_claim(judge_every(
        "band_r2_detects_low_pass", f"The recovery statistic calls the known low-pass denoiser low-pass: on (B), "
        f"the largest t at which its lowest band's R^2 is >= {lv} exceeds the upper bands' by >= 100 timesteps "
        f"(censored at the ends of the t grid)",
        ("t*(lowest band) - t*(upper bands), linear MMSE", [v["recovery_gap"] for v in val]), bound=100.0,
        sense=">=", kind="check",
    ))  # fmt: skip

    def src(r: dict, key: str) -> dict:
        return r["spectral"] if key == "spectral" else r["arms"]["full"]

    times = {k: {b: [src(r, k)["level_times"][b] for r in S] for b in ("low", "high")} for k in ("spectral", "digits")}
    rec = {k: {b: [src(r, k)["recovery"][b] for r in S] for b in ("low", "high")} for k in ("spectral", "digits")}
    for key, where, suffix in (("spectral", "synthetic spectral set (B)", ""),
                               ("digits", "digit canvas, full-training arm; reported", "_digits")):  # fmt: skip
        rep.add_claim(judge_superiority(
            f"dual_spectral_bias_training_r2{suffix}", f"Over training, low frequencies are fitted before high ones "
            f"({where}): the lowest DCT band's R^2 of the x0-prediction at t = {tt} (mean-removed images) reaches "
            f"{lv} in fewer steps than the upper bands' pooled R^2 (a band that never reaches it is censored at the "
            f"last step)", ("lowest band: steps to R^2 >= level", times[key]["low"]),
            {"upper bands: steps to R^2 >= level (censored)": times[key]["high"]}, higher_is_better=False,
            test="ttest",
        ))  # fmt: skip
        rep.add_claim(judge_superiority(
            f"dual_spectral_bias_timesteps_r2{suffix}", f"High-noise steps recover low frequencies only ({where}): at "
            f"the end of training the largest t at which the lowest band's R^2 is >= {lv} exceeds the upper bands' "
            f"(censored at the ends of the t grid {T_GRID[0]}..{T_GRID[-1]})",
            ("lowest band: recovery t*", rec[key]["low"]), {"upper bands: recovery t* (censored)": rec[key]["high"]},
            test="ttest",
        ))  # fmt: skip
    rows = []
    for name, runs in (("set (B), model", [r["spectral"] for r in S]),
                       ("set (B), known low-pass (linear MMSE)", val),
                       ("digit canvas, model", [r["arms"]["full"] for r in S])):  # fmt: skip
        for band, col in (("lowest band", 0), ("upper bands", cfg.n_bands)):
            row = {"predictor": name, "band": band}
            for t in T_GRID:
                row[f"t={t}"] = str(mean_ci([r_["r2_by_t"][str(t)][col] for r_ in runs]))
            rows.append(row)
    rep.add_table("r2_vs_t", rows, caption=f"Per-band R^2 of the x0-prediction on mean-removed held-out images vs t "
                  f"(EMA weights at the end of training; mean ± sd over seeds). The level is {lv}; the upper bands "
                  "pool the upper half of the DCT bands.")  # fmt: skip
    cens = sum(r["spectral"]["level_times"]["high_censored"] for r in S)
    rep.add_note(f"Spectral set (B): the upper bands' R^2 at t = {tt} reached {lv} within {cfg.spectral_steps} steps "
                 f"in {len(S) - cens} of {len(S)} seeds (the others are censored at the last step); the lowest band "
                 f"needed {mean_ci(times['spectral']['low'])} steps.")  # fmt: skip


def _set_tuning(cfg: Config, rep: Report, seeds) -> None:
    """Tuning budgets as they were spent (offline, on tuning seeds disjoint from the reported ones; docs/faps.md)."""
    b = cfg.budget_steps
    rep.set_tuning("full training", configs=1, steps=b, note="v1's denoiser lr (5e-3, grid {1,2,3,5,8}e-3 on 16x16 "
                   "digits); shared by every arm")  # fmt: skip
    rep.set_tuning(
        "FaPS",
        configs=3,
        steps=b,
        note="v2 gate: policy lr {1e-2 uncapped, 3e-3 cap 2} and keep "
        f"ratio {{0.5, 0.25}} explored on seeds 0-3 (reported seeds: {', '.join(map(str, seeds))}); shared denoiser "
        "lr",
    )
    for name in ("random drop", "random drop held-out loss", "0.8 x fixed-rule gain",
                 "random drop held-out loss, equal steps"):  # fmt: skip
        rep.set_tuning(name, configs=1, steps=b, note="no free parameter beyond the shared keep ratio and lr")
    rep.set_tuning("fixed-rule held-out loss", configs=1, steps=b, note="t < 400 taken from the issue's review")
    rep.set_tuning("heuristic with t_switch", configs=1, steps=b, note="spec rule, t_switch = 0.5, untuned")


def _digits16_table(cfg: Config, rep: Report, S: list[dict]) -> None:
    """Secondary table: v1's 16x16 digits (patch 2) at equal steps, held-out loss and gain over random dropping."""
    loss = {a: [r["digits16"][a]["held_loss"] for r in S] for a in ("random", "fixed", "faps")}
    rows = []
    for a in ("random", "fixed", "faps"):
        gain = [(r_ - v) / r_ for r_, v in zip(loss["random"], loss[a])]
        wins = sum(v < r_ for r_, v in zip(loss["random"], loss[a]))
        rows.append({"arm": LABELS[a], "held-out loss": str(mean_ci(loss[a])), "gain vs random": str(mean_ci(gain)),
                     "wins vs random": "" if a == "random" else f"{wins} of {len(S)}"})  # fmt: skip
    rep.add_table("digits16_secondary", rows, caption=f"Secondary (not judged): v1's setting, 16x16 digits with patch "
                  f"2 (64 tokens, same DiT), {cfg.digits16_steps} steps per arm (equal steps, gate cost not charged); "
                  "held-out full-image eps-MSE of the EMA weights; mean ± sd over seeds.")  # fmt: skip


def _gate_table(rep: Report, S) -> None:
    """Diagnostics that the gate learned: logit spread and keep-probability vs high-band share over training."""
    curves = [r["arms"]["faps"]["gate_curve"] for r in S]
    rows = []
    for i in range(len(curves[0])):
        row = {"step (share of run)": f"{i / max(len(curves[0]) - 1, 1):.2f}"}
        for key in ("logit_sd_t100", "logit_sd_t900", "corr_keep_prob_high_share_t100",
                    "corr_keep_prob_high_share_t900"):  # fmt: skip
            row[key] = str(mean_ci([c[i][key] for c in curves if i < len(c)]))
        rows.append(row)
    rep.add_table("gate_diagnostics", rows, caption="FaPS gate over training (equal wall-clock arm), mean ± sd over "
                  "seeds: logit sd and the correlation of each patch's keep-probability with its upper-band share "
                  "of DCT energy, at t = 100 and t = 900 (noisy inputs, as the gate sees them).")  # fmt: skip


def _strip(r: dict) -> dict:
    def arm(a):
        return {k: v for k, v in a.items() if k not in ("samples", "losses")}

    return {
        "cost": r["cost"], "speed": r["speed"], "arms": {k: arm(v) for k, v in r["arms"].items()},
        "equal_steps_faps": arm(r["equal_steps_faps"]), "equal_steps_random": arm(r["equal_steps_random"]),
        "limited": {k: arm(v) for k, v in r["limited"].items()},
        "spectral": arm(r["spectral"]), "digits16": {k: arm(v) for k, v in r["digits16"].items()},
    }  # fmt: skip


def _figures(rep: Report, cfg: Config, seeds, S) -> None:
    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    for a in ARMS:
        c = np.asarray([r["arms"][a]["curve"] for r in S])  # [seeds, points, 3]
        ax.errorbar(c[:, :, 1].mean(0), c[:, :, 2].mean(0), yerr=c[:, :, 2].std(0), marker="o", label=LABELS[a])
    ax.set_xlabel("charged wall-clock (s, measured per-step cost)")
    ax.set_ylabel("Fréchet distance (digits features)")
    ax.legend()
    rep.add_figure("fd_vs_wallclock", fig, "FD vs charged wall-clock per method (mean ± sd over seeds).")

    fig = Figure(figsize=(10, 3.5))
    ax, ax2 = fig.subplots(1, 2)
    for a in ARMS:
        c = np.asarray([r["arms"][a]["held"]["curve"] for r in S])
        ax.plot(c[:, :, 1].mean(0), c[:, :, 2].mean(0), marker="o", label=LABELS[a])
    ax.set_xlabel("charged wall-clock (s, amortised mean step cost)")
    ax.set_ylabel("held-out full-image eps-MSE (EMA weights)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title("training objective on held-out digits", fontsize=9)
    for key, style in (("logit_sd_t100", "-"), ("logit_sd_t900", "--"), ("corr_keep_prob_high_share_t100", "-."),
                       ("corr_keep_prob_high_share_t900", ":")):  # fmt: skip
        v = np.asarray([[pt[key] for pt in r["arms"]["faps"]["gate_curve"]] for r in S])
        steps = [pt["step"] for pt in S[0]["arms"]["faps"]["gate_curve"]]
        ax2.errorbar(steps, v.mean(0), yerr=v.std(0), ls=style, marker="o", label=key)
    ax2.set_xlabel("FaPS training step")
    ax2.set_ylabel("value")
    ax2.set_title("FaPS gate: logit sd and corr(keep-prob, high-band share)", fontsize=9)
    ax2.legend(fontsize=7)
    rep.add_figure("heldout_and_gate", fig, "Left: held-out loss vs charged wall-clock (mean over seeds). Right: the "
                   "learned gate over training (mean ± sd over seeds).")  # fmt: skip

    fig = Figure(figsize=(10, 3.5))
    axes = fig.subplots(1, 2)
    for ax, (run_, title) in zip(axes, ((S[0]["spectral"], "spectral set (B) (claim)"),
                                        (S[0]["arms"]["full"], "digit canvas (reported)"))):  # fmt: skip
        r2 = np.asarray(run_["r2_train"])
        for b in range(cfg.n_bands):
            ax.plot(run_["r2_steps"], r2[:, b], marker="o", label=f"DCT band {b}")
        ax.plot(run_["r2_steps"], r2[:, cfg.n_bands], "k--", label="upper bands pooled")
        ax.axhline(cfg.r2_level, color="grey", ls=":", label=f"level {cfg.r2_level}")
        ax.set_ylim(-2, 1.05)
        ax.set_xlabel("training step (full training)")
        ax.set_ylabel(f"R^2 of the x0-prediction at t = {cfg.r2_train_t}")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    rep.add_figure("band_r2_vs_step", fig, f"Per-band R^2 (mean-removed images) of the x0-prediction over training "
                   f"(band 0 = lowest; clipped at -2), seed {seeds[0]}.")  # fmt: skip

    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    for name, runs in (("(B), model", [r["spectral"] for r in S]),
                       ("(B), known low-pass", [r["spectral"]["validation"] for r in S]),
                       ("canvas, model", [r["arms"]["full"] for r in S])):  # fmt: skip
        for col, style in ((0, "-"), (cfg.n_bands, "--")):
            v = np.asarray([[r_["r2_by_t"][str(t)][col] for t in T_GRID] for r_ in runs])
            band = "lowest band" if col == 0 else "upper bands"
            ax.errorbar(T_GRID, v.mean(0), yerr=v.std(0), ls=style, marker="o", label=f"{name}: {band}")
    ax.axhline(cfg.r2_level, color="grey", ls=":")
    ax.set_ylim(-2, 1.05)
    ax.set_xlabel("timestep t")
    ax.set_ylabel("R^2 of the x0-prediction (mean-removed)")
    ax.set_title("R^2 vs t (clipped at -2)", fontsize=9)
    ax.legend(fontsize=6)
    rep.add_figure("band_r2_vs_t", fig, "Per-band R^2 of the x0-prediction vs t, mean ± sd over seeds; the known "
                   "low-pass denoiser is the validation predictor.")  # fmt: skip

    fig = Figure(figsize=(8, 3.6))
    axes = fig.subplots(len(ARMS), 1)
    for ax, a in zip(axes, ARMS):
        xs = np.asarray(S[0]["arms"][a]["samples"])[:20]
        ax.imshow(np.concatenate(list(xs), axis=1), cmap="gray", vmin=-1, vmax=1)
        ax.set_axis_off()
        ax.set_title(LABELS[a], fontsize=8)
    s0 = seeds[0]
    rep.add_figure("samples", fig, f"DDIM samples (labels 0-9, twice) at the equal wall-clock budget, seed {s0}.")


EXPERIMENT = register(
    Experiment(
        slug="faps",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": (10, 11, 12, 13, 14)},  # fresh: the setting was tuned on seeds 0-3
        measure=measure,
        judge=judge,
        threads=1,
        timing_statements=(
            "speed",
            "frequency_rule_beats_random",
            "equal_wallclock_vs_full",
            "equal_wallclock_vs_random",
            "equal_wallclock_heldout_vs_random",
            "faps_fixed_rule_gain",
            "limited_data",
            "equal_budget_charged",  # a check on measured step times: its number is a timing too
        ),  # wall-clock numbers: verify gives them timing_rtol
    )
)
