"""Reproduction, the measurement: SlaClip vs vanilla DP-SGD, quantile clipping (Opacus AdaClip), AUTO-S and SlaClip-Q.

Same data, seeds, noise multiplier, sample rate, steps and learning rate for every method; only the clipping rule
differs.  Digits (sklearn ``load_digits``) with logistic regression (task ``digits``) and the spec's MLP 64-128-10
(task ``digits_mlp``), a generated 10-class problem (``synthetic``), and a well-separated 2-class problem trained
long so that most gradients vanish (``vanish``, A4); tiny models trained here.  Besides the paper's arms every C0
grid also runs the **control arms** of :mod:`.baselines` (SlaClip with its controller replaced by the clamp only, or
by a decay to the floor) and vanilla DP-SGD at the clamped thresholds ``clip(C0, c_min, c_max)`` (the baseline A2 is
judged against); the vanishing task runs SlaClip-Q (SlaClip minus its tail rule) at every gradient scale.  The
privacy audits of :mod:`.audit` run per seed on one digits batch.  The statements are made in :mod:`.claims`.

Seeds: ``Config.grid_seeds`` run everything; any other seed runs only the synthetic cell at ``C0 = a3_c0``
(AdaClip, SlaClip, clamp-only), the extra replicates of ``A3-synthetic-c0_1``.  Reported seeds are fresh
(``REPORTED``, 200-219; the quick preset and the tests ``QUICK_REPORTED``, 220-223); the old reported seeds 0-19 and
100-119 are the dev seeds every design choice and both referees' probes saw (``TUNING``).  On the MLP every arm
trains at its own learning rate chosen on the dev seeds (``Config.mlp_lr``).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
import torch
from opacus import PrivacyEngine
from opacus.accountants.utils import get_noise_multiplier
from sklearn.datasets import load_digits, make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from icml26.core import Experiment, register, seed_everything

from .baselines import make_private_method
from .claims import TEST_SIZE, arm_lr, c0_methods, clamped, judge, pick, vanish_arms

GRID_METHODS = ("vanilla", "adaclip", "slaclip", "slaclip-q", "clamp-only", "decay", "centre")  # run over the C0 grid
DP_METHODS = (*GRID_METHODS, "autos")
A3_CELL_METHODS = ("adaclip", "slaclip", "clamp-only")  # the synthetic cell at C0 = a3_c0, on every seed

# fresh in v3c (issue 46, referee 2): never seen by any SlaClip design, test or referee probe; 200-204 run everything,
# 205-219 the synthetic C0 = 1 cell.  The quick preset and the tests report 220-223, so building v3c never saw 200-219.
REPORTED = tuple(range(200, 220))
QUICK_REPORTED = tuple(range(220, 224))
# the reported seeds of v1 (0-4) and v2 (0-19; quick 0-3), and of v3 / v3b (100-119: the v3b design and both referees'
# probes saw 100-104, the quick preset and the tests 100-103): every design choice saw them
DEV = (*range(20), *range(100, 120))


@dataclass(frozen=True)
class Config:
    """One preset.  ``*_methods = ()`` skips that part.  Accuracies are in percent."""

    c0_grid: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)
    epsilon: float = 3.0
    delta: float = 1e-5
    eta: float = 0.2  # geometric rate of every adaptive rule (SlaClip, SlaClip-Q, AdaClip) and of the decay control
    c_min: float = 0.1  # threshold clamp of every adaptive rule, of the controls and of clamped vanilla
    c_max: float = 20.0
    # these seeds run everything; any other seed only the synthetic cell at C0 = a3_c0 (A3_CELL_METHODS)
    grid_seeds: tuple[int, ...] = REPORTED[:5]
    a3_c0: float = 1.0
    # digits: 1797 x 64, standardised, stratified 80/20 split per seed; logistic regression (task "digits")
    digits_methods: tuple[str, ...] = DP_METHODS
    digits_model: str = "logreg"  # "logreg" or "mlp" (64-128-10)
    digits_epochs: int = 20
    digits_batch: int = 128
    digits_lr: float = 0.5
    # the spec's MLP 64-128-10 on the same digits split (task "digits_mlp")
    mlp_methods: tuple[str, ...] = ("vanilla", "adaclip", "autos", "slaclip", "clamp-only", "decay", "centre")
    mlp_epochs: int = 40
    # each MLP arm's learning rate, chosen on the dev seeds 0-4 by best mean accuracy over AUTO-S's grid
    # {0.1, 0.2, 0.5, 1, 2} at C0 in {0.1, 1, 10} (benchmarks/slaclip_mlp_lr_search.py; TUNING); vanilla's serves its
    # clamped thresholds too.  (method, lr) pairs; an arm not listed runs at digits_lr (referee 2, issue 46)
    mlp_lr: tuple[tuple[str, float], ...] = (
        ("vanilla", 0.2),
        ("adaclip", 0.1),
        ("slaclip", 0.1),
        ("clamp-only", 0.5),
        ("decay", 1.0),
        ("centre", 0.1),
    )
    # A2 at gradient scale x10 (task "digits_x10": digits logistic regression, loss x10, lr /10; the C0 grid and the
    # clamp [c_min, c_max] unchanged in absolute terms, so the good fixed thresholds move ~10x up while the clamp's
    # centre stays at sqrt(c_min c_max)); referee, issue 46
    x10_methods: tuple[str, ...] = ("vanilla", "adaclip", "slaclip", "clamp-only", "centre")
    x10_scale: float = 10.0
    # A2-scales and centre_loses-<task>: vanilla's best fixed threshold of the clamped grid per task, chosen on the
    # dev seeds 0-4 (the MLP's of {0.1, 1, 10} at vanilla's MLP lr, from the lr search)
    a2_best_fixed: tuple[tuple[str, float], ...] = (("digits", 1.0), ("digits_x10", 10.0), ("digits_mlp", 1.0))
    # A3-autos, both arms at their hyper-parameter chosen on the dev seeds 0-4 (v2 records, best mean accuracy):
    # AUTO-S's learning rate (R fixed) of {0.1, 0.2, 0.5, 1, 2}, SlaClip's C0 of the C0 grid, and the clamp-only
    # control at vanilla's dev-best C0 (clamp-only is vanilla inside the clamp).  (task, value) pairs.
    autos_r: float = 1.0
    autos_lr: tuple[tuple[str, float], ...] = (("digits", 1.0), ("digits_mlp", 0.2))
    slaclip_c0: tuple[tuple[str, float], ...] = (("digits", 0.1), ("digits_mlp", 0.01))
    control_c0: tuple[tuple[str, float], ...] = (("digits", 1.0), ("digits_mlp", 1.0))
    # SlaClip's learning rate for A3-autos, chosen on the dev seeds 0-4 over AUTO-S's grid {0.1, 0.2, 0.5, 1, 2} at
    # SlaClip's C0 above: the same budget as AUTO-S's lr (referee, issue 46); the clamp-only control's, chosen the
    # same way at its C0 (referee 2, issue 46)
    slaclip_lr: tuple[tuple[str, float], ...] = (("digits", 0.5), ("digits_mlp", 0.1))
    control_lr: tuple[tuple[str, float], ...] = (("digits", 0.5), ("digits_mlp", 0.2))
    # generated 10-class problem (make_classification, 40 features, 20 informative)
    synthetic_methods: tuple[str, ...] = ("vanilla", "adaclip", "slaclip", "clamp-only")
    synthetic_samples: int = 10000
    synthetic_model: str = "mlp"
    synthetic_epochs: int = 15
    synthetic_batch: int = 256
    synthetic_lr: float = 0.2
    # A4: a well-separated problem trained long so most gradients vanish; C0 fixed.  Each gradient scale s
    # multiplies the loss by s and divides the learning rate by s (same trajectory for vanilla SGD) and
    # multiplies C0, c_min and c_max by s; SlaClip runs with each tail rule, SlaClip-Q (its control) at each scale.
    vanish_methods: tuple[str, ...] = ("adaclip", "slaclip", "slaclip-q")
    vanish_samples: int = 4000
    vanish_class_sep: float = 3.0
    vanish_epochs: int = 40
    vanish_c0: float = 1.0
    vanish_scales: tuple[float, ...] = (1.0, 10.0)
    vanish_rules: tuple[str, ...] = ("paper", "fraction")
    vanish_tol: float = 0.05  # a per-sample norm below vanish_tol * scale is "negligible"
    a4_min_wins: int = 4
    # a seed is a win for SlaClip only if its tracking error is smaller by more than this (log 1.1): two
    # thresholds at the same clamp differ only through their models' norm medians, which is no tracking
    a4_tie: float = math.log(1.1)
    # privacy audits (checks) on one digits batch of digits_batch samples, per seed
    audit: bool = True
    audit_c0: float | None = None  # None: twice the smallest per-sample norm of the batch at initialisation
    audit_releases: int = 400  # slot-noise audit
    release_audit_releases: int = 200  # every-coordinate audit (9,610 + K coordinates x releases)
    audit_level: float = 1e-3
    audit_neighbours: int = 8
    non_private: bool = True
    # preconditions: vanilla's accuracy spread over the clamped C0 grid (points; A2's effect size: a smaller spread
    # leaves no 5-point gain to make), share of vanishing norms in A4's task
    min_c0_spread: float = 5.0
    min_vanish_share: float = 0.5
    # the clamp's centre must lose to vanilla at the dev-best fixed threshold (a2_best_fixed) by this many points on a
    # task before A2 / A3 there can credit adaptation (centre_loses-<task>); A3's margin, not tuned (referee 2)
    min_centre_gap: float = 1.0
    a2_min_effect: float = 5.0


QUICK = Config(
    c0_grid=(0.01, 1.0),
    grid_seeds=QUICK_REPORTED[:3],
    digits_methods=("vanilla", "adaclip", "autos", "slaclip", "clamp-only", "decay", "centre"),
    digits_epochs=10,
    mlp_methods=("vanilla", "adaclip", "autos", "slaclip", "clamp-only", "decay", "centre"),
    mlp_epochs=5,
    mlp_lr=(),  # the full preset's picks are for 40 epochs: at 5 every arm runs at the task's lr (a smoke run)
    slaclip_c0=(("digits", 0.01), ("digits_mlp", 0.01)),
    synthetic_methods=("vanilla", "adaclip", "slaclip", "clamp-only"),
    synthetic_samples=3000,
    synthetic_epochs=3,
    vanish_methods=("adaclip", "slaclip", "slaclip-q"),
    vanish_samples=2000,
    vanish_epochs=30,
    a4_min_wins=2,
    audit_releases=60,
    release_audit_releases=60,
    audit_neighbours=4,
    non_private=False,
)
FULL = Config()


# ------------------------------------------------------------------------------------------- data / models
def _digits(seed: int) -> tuple[np.ndarray, ...]:
    X, y = load_digits(return_X_y=True)
    return _split(X, y, seed)


def _synthetic(seed: int, n: int, class_sep: float = 1.0, n_classes: int = 10) -> tuple[np.ndarray, ...]:
    X, y = make_classification(
        n_samples=n,
        n_features=40,
        n_informative=20,
        n_redundant=5,
        n_classes=n_classes,
        class_sep=class_sep,
        random_state=seed,
    )
    return _split(X, y, seed)


def _split(X: np.ndarray, y: np.ndarray, seed: int) -> tuple[np.ndarray, ...]:
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=TEST_SIZE, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), ytr, scaler.transform(Xte), yte


def _model(kind: str, d: int, classes: int) -> nn.Module:
    if kind == "logreg":
        return nn.Linear(d, classes)
    if kind == "mlp":
        return nn.Sequential(nn.Linear(d, 128), nn.ReLU(), nn.Linear(128, classes))
    raise ValueError(f"model must be 'logreg' or 'mlp', got {kind!r}")


def _tensors(data: tuple[np.ndarray, ...]) -> tuple[torch.Tensor, ...]:
    Xtr, ytr, Xte, yte = data
    f = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    return f(Xtr), torch.tensor(ytr), f(Xte), torch.tensor(yte)


def _noise_multiplier(n_train: int, batch: int, epochs: int, cfg: Config) -> tuple[float, float]:
    n_batches = len(DataLoader(TensorDataset(torch.zeros(n_train)), batch_size=batch))
    q = 1.0 / n_batches  # Opacus's Poisson sample rate for this loader
    sigma = get_noise_multiplier(
        target_epsilon=cfg.epsilon, target_delta=cfg.delta, sample_rate=q, epochs=epochs, accountant="rdp"
    )
    return float(sigma), q


# -------------------------------------------------------------------------------------------- one training
def _train(*args, **kwargs) -> dict:
    with warnings.catch_warnings():  # Opacus's secure-RNG and backward-hook notices, once per run
        warnings.simplefilter("ignore")
        return _train_one(*args, **kwargs)


def _train_one(
    method: str,
    data: tuple[np.ndarray, ...],
    model_kind: str,
    c0: float,
    sigma: float,
    epochs: int,
    batch: int,
    lr: float,
    seed: int,
    cfg: Config,
    zero_tol: float | None = None,
    scale: float = 1.0,
    tail_normalization: str = "paper",
) -> dict:
    """Train one model with one method; return test accuracy (%), epsilon, accountant history, C_t path.

    ``scale`` multiplies the loss (so every gradient) and divides the learning rate, and multiplies ``c0`` and
    the adaptive clamp ``[c_min, c_max]``; ``zero_tol`` (already in the scaled units) asks for the evaluation-only
    per-sample norm profile of the trained model.
    """
    Xtr, ytr, Xte, yte = _tensors(data)
    seed_everything(seed)
    model = _model(model_kind, Xtr.shape[1], int(ytr.max()) + 1)
    opt = torch.optim.SGD(model.parameters(), lr=lr / scale)
    loader = DataLoader(TensorDataset(Xtr, ytr), batch_size=batch, shuffle=True)
    engine = None
    if method != "non-private":
        engine = PrivacyEngine(accountant="rdp")
        extra = {"tail_normalization": tail_normalization} if method == "slaclip" else {}
        model, opt, loader = make_private_method(
            method,
            engine,
            model,
            opt,
            loader,
            sigma,
            c0 * scale,
            eta=cfg.eta,
            c_min=cfg.c_min * scale,
            c_max=cfg.c_max * scale,
            noise_generator=torch.Generator().manual_seed(10_000 + seed),
            **extra,
        )
    clips, t0 = [], time.perf_counter()
    for _ in range(epochs):
        # the loader's own (Poisson) batch sampler, indexing the tensors directly: the same batches as iterating
        # the loader, without its per-sample fetch and collate
        for idx in loader.batch_sampler:
            idx = torch.as_tensor(idx, dtype=torch.long)
            xb, yb = Xtr[idx], ytr[idx]
            opt.zero_grad()
            (scale * nn.functional.cross_entropy(model(xb), yb)).backward()
            opt.step()
            if engine is not None:
                clips.append(float(opt.max_grad_norm))
    wall = time.perf_counter() - t0
    with torch.no_grad():
        acc = 100.0 * float((model(Xte).argmax(1) == yte).float().mean())
    out = {"acc": acc, "n_test": len(yte), "wall_s": wall}  # acc = 100 k / n_test (float32 mean: judged as k)
    if engine is not None:
        out["eps"] = float(engine.get_epsilon(cfg.delta))
        out["history"] = [list(h) for h in engine.accountant.history]
        stride = max(1, len(clips) // 100)
        out["clip_path"] = clips[::stride]
        out["clip_stride"] = stride
        out["final_clip"] = clips[-1] if clips else c0 * scale
        if zero_tol is not None:  # evaluation-only diagnostic: the trained model's per-sample norm profile
            clean = _model(model_kind, Xtr.shape[1], int(ytr.max()) + 1)  # a copy without Opacus's hooks
            clean.load_state_dict(getattr(model, "_module", model).state_dict())
            norms = scale * _per_sample_norms(clean, Xtr, ytr)
            big = norms[norms >= zero_tol]
            out["median_norm"] = float(norms.median())
            out["share_below_tol"] = float((norms < zero_tol).float().mean())
            out["median_nonneg_norm"] = float(big.median()) if len(big) else float("nan")
    return out


def _per_sample_norms(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    from torch.func import functional_call, grad, vmap

    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, t):
        return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), t[None])

    g = vmap(grad(loss), in_dims=(None, 0, 0))(params, X, y)
    return torch.sqrt(sum((v.reshape(len(X), -1) ** 2).sum(1) for v in g.values()))


# ------------------------------------------------------------------------------------------ one replicate
def _tasks(cfg: Config) -> list[tuple]:
    """(name, methods, data_fn, model, epochs, batch, lr, gradient scale) of each accuracy task the preset runs; an
    arm's own learning rate (:func:`.claims.arm_lr`) overrides ``lr``."""
    tasks = []
    if cfg.digits_methods:
        tasks.append(
            (
                "digits",
                cfg.digits_methods,
                _digits,
                cfg.digits_model,
                cfg.digits_epochs,
                cfg.digits_batch,
                cfg.digits_lr,
                1.0,
            )
        )
    if cfg.mlp_methods:
        tasks.append(
            ("digits_mlp", cfg.mlp_methods, _digits, "mlp", cfg.mlp_epochs, cfg.digits_batch, cfg.digits_lr, 1.0)
        )
    if cfg.x10_methods:
        tasks.append(
            (
                "digits_x10",
                cfg.x10_methods,
                _digits,
                cfg.digits_model,
                cfg.digits_epochs,
                cfg.digits_batch,
                cfg.digits_lr,
                cfg.x10_scale,
            )
        )
    if cfg.synthetic_methods:
        tasks.append(
            (
                "synthetic",
                cfg.synthetic_methods,
                lambda s: _synthetic(s, cfg.synthetic_samples),
                cfg.synthetic_model,
                cfg.synthetic_epochs,
                cfg.synthetic_batch,
                cfg.synthetic_lr,
                1.0,
            )
        )
    return tasks


def _check(cfg: Config) -> None:
    """Named errors for a config measure cannot run."""
    if not isinstance(cfg.grid_seeds, tuple) or not cfg.grid_seeds:
        raise ValueError(f"grid_seeds must be a non-empty tuple of seeds, got {cfg.grid_seeds!r}")
    if not (0 < cfg.c_min < cfg.c_max):
        raise ValueError(f"c_min and c_max must satisfy 0 < c_min < c_max, got {cfg.c_min}, {cfg.c_max}")
    known = set(DP_METHODS)
    for field in ("digits_methods", "mlp_methods", "x10_methods", "synthetic_methods", "vanish_methods"):
        if bad := [m for m in getattr(cfg, field) if m not in known]:
            raise ValueError(f"{field} has unknown methods {bad}; known: {sorted(known)}")
    for task, methods in (("digits", cfg.digits_methods), ("digits_mlp", cfg.mlp_methods)):
        for field, arm in (("slaclip_c0", "slaclip"), ("control_c0", "clamp-only")):
            if arm in methods and "autos" in methods and pick(getattr(cfg, field), task, field) not in cfg.c0_grid:
                raise ValueError(f"{field} for {task} must be a value of c0_grid {cfg.c0_grid}")
        if "autos" in methods:
            pick(cfg.autos_lr, task, "autos_lr")
            for field, arm in (("slaclip_lr", "slaclip"), ("control_lr", "clamp-only")):
                if arm in methods and not pick(getattr(cfg, field), task, field) > 0:
                    raise ValueError(f"{field} for {task} must be > 0")
    for m, v in cfg.mlp_lr:
        if m not in known or not (isinstance(v, (int, float)) and v > 0):
            raise ValueError(f"mlp_lr must pair known methods with learning rates > 0, got {(m, v)!r}")
    for task, c in cfg.a2_best_fixed:
        if not (isinstance(c, (int, float)) and cfg.c_min <= c <= cfg.c_max):
            raise ValueError(f"a2_best_fixed for {task} must be a threshold in [c_min, c_max], got {c!r}")
    if not (isinstance(cfg.x10_scale, (int, float)) and cfg.x10_scale > 0):
        raise ValueError(f"x10_scale must be a positive number, got {cfg.x10_scale!r}")
    if cfg.x10_methods and not {"vanilla", "slaclip"} <= set(cfg.x10_methods):
        raise ValueError(f"x10_methods must include 'vanilla' and 'slaclip' (A2-x10), got {cfg.x10_methods}")


def _noise(n_train: int, batch: int, epochs: int, cfg: Config) -> dict:
    sigma, q = _noise_multiplier(n_train, batch, epochs, cfg)
    return {"sigma": sigma, "sample_rate": q, "n_train": n_train, "steps": int(round(epochs / q))}


def _cached(progress, key: str, fn):
    return fn() if progress is None else progress.cached(key, fn)


def _audits(cfg: Config, seed: int, sigma: float) -> dict:
    """The four privacy audits (:mod:`.audit`) through the SlaClip optimizer and controller the digits MLP arm
    trains with (same class, noise multiplier, expected batch size, controller settings), on one batch of
    ``digits_batch`` training samples drawn from ``seed`` and the MLP's initialisation for ``seed``.

    The threshold is ``audit_c0``, or (``None``) twice the smallest per-sample gradient norm of that batch at
    initialisation: the sensitivity audit has power against a mis-scaled slot encoding only through samples well
    inside the threshold (slots scaled by ``s`` break the bound only for norms ``n < (s^2 - 1) C``), and the removed
    smallest-norm samples then sit at ``C / 2`` (caught from ``s = 1.23``); 90-95% of the batch is inside."""
    from .audit import audit_controller_inputs, audit_release_noise, audit_sensitivity, audit_slot_noise
    from .controllers import SlaClipController
    from .optimizer import SlaClipDPOptimizer

    Xtr, ytr, _, _ = _tensors(_digits(seed))
    idx = torch.randperm(len(Xtr), generator=torch.Generator().manual_seed(seed))[: cfg.digits_batch]
    x, y = Xtr[idx], ytr[idx]

    def make_model():
        torch.manual_seed(seed)
        return _model("mlp", Xtr.shape[1], int(ytr.max()) + 1)

    clip = cfg.audit_c0 if cfg.audit_c0 is not None else 2 * float(_per_sample_norms(make_model(), x, y).min())

    def make_optimizer(params):
        return SlaClipDPOptimizer(
            torch.optim.SGD(params, lr=cfg.digits_lr),
            noise_multiplier=sigma,
            max_grad_norm=clip,
            expected_batch_size=cfg.digits_batch,
            controller=SlaClipController(cfg.eta, 0.5, cfg.c_min, cfg.c_max),
            generator=torch.Generator().manual_seed(20_000 + seed),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = audit_release_noise(
            make_optimizer, make_model, x, y, n_releases=cfg.release_audit_releases, level=cfg.audit_level
        )
        sens = audit_sensitivity(make_optimizer, make_model, x, y, n_neighbours=cfg.audit_neighbours)
        noise = audit_slot_noise(make_optimizer, make_model, x, y, n_releases=cfg.audit_releases, level=cfg.audit_level)
        ctrl = audit_controller_inputs(make_optimizer, make_model, x, y)
    return {"release_noise": release, "sensitivity": sens, "slot_noise": noise, "controller_inputs": ctrl}


def measure(config: Config, seed: int, progress=None) -> dict:
    """One seed's replicate: the data split, every model's initialisation and the DP noise are drawn from ``seed``.

    Returns ``noise`` (sigma, sample rate, steps per task), ``runs`` (task -> ``"method@C0"`` or
    ``"autos@lr<lr>"`` -> run dict; vanilla also at the clamped thresholds), ``vanish`` (``"<arm>@x<scale>"`` -> run
    dict of the vanishing-gradient task), ``audit`` (the four privacy audits) and ``a3_cell`` (method -> the
    synthetic run at ``C0 = a3_c0``).  A seed not in ``grid_seeds`` computes ``a3_cell`` only.
    """
    cfg = config
    _check(cfg)
    noise, runs = {}, {}
    if seed not in cfg.grid_seeds:  # an extra replicate of the synthetic A3 cell
        if not cfg.synthetic_methods:
            return {"noise": {}, "runs": {}, "vanish": {}, "audit": {}, "a3_cell": {}}
        data = _synthetic(seed, cfg.synthetic_samples)
        noise["synthetic"] = info = _noise(len(data[0]), cfg.synthetic_batch, cfg.synthetic_epochs, cfg)
        arms = [m for m in A3_CELL_METHODS if m in cfg.synthetic_methods]

        def compute_cell():
            return {
                m: _train(
                    m,
                    data,
                    cfg.synthetic_model,
                    cfg.a3_c0,
                    info["sigma"],
                    cfg.synthetic_epochs,
                    cfg.synthetic_batch,
                    cfg.synthetic_lr,
                    seed,
                    cfg,
                )
                for m in arms
            }

        cell = _cached(progress, "a3_cell", compute_cell)
        return {"noise": noise, "runs": {}, "vanish": {}, "audit": {}, "a3_cell": cell}
    for name, methods, data_fn, model_kind, epochs, batch, lr, scale in _tasks(cfg):
        data = data_fn(seed)
        noise[name] = info = _noise(len(data[0]), batch, epochs, cfg)

        def compute(
            name=name,
            methods=methods,
            data=data,
            model_kind=model_kind,
            epochs=epochs,
            batch=batch,
            lr=lr,
            scale=scale,
            sigma=info["sigma"],
        ):
            # at gradient scale s the C0 grid and the clamp stay absolute: _train multiplies them by s
            tcfg = cfg if scale == 1 else replace(cfg, c_min=cfg.c_min / scale, c_max=cfg.c_max / scale)

            def run(m, c0, lr=None):
                lr = arm_lr(cfg, name, m) if lr is None else lr  # the arm's own lr (MLP) or the task's
                return _train(m, data, model_kind, c0 / scale, sigma, epochs, batch, lr, seed, tcfg, scale=scale)

            cells = [(m, c0) for m in c0_methods(methods) for c0 in cfg.c0_grid]
            if "vanilla" in methods:  # vanilla at the clamped thresholds too (the baseline of A2)
                extra = {clamped(cfg, c0) for c0 in cfg.c0_grid} | {v for t, v in cfg.a2_best_fixed if t == name}
                cells += [("vanilla", c) for c in sorted(extra - set(cfg.c0_grid))]  # and A2-scales' reference
            out = {f"{m}@{c0:g}": run(m, c0) for m, c0 in cells}
            if "autos" in methods:
                alr = pick(cfg.autos_lr, name, "autos_lr")
                out[f"autos@lr{alr:g}"] = run("autos", cfg.autos_r, alr)
                for arm, field, lr_field in (
                    ("slaclip", "slaclip_c0", "slaclip_lr"),
                    ("clamp-only", "control_c0", "control_lr"),
                ):
                    alr = pick(getattr(cfg, lr_field), name, lr_field)
                    if arm in methods and alr != arm_lr(cfg, name, arm):  # A3-autos: each at its own dev lr
                        c0 = pick(getattr(cfg, field), name, field)
                        out[f"{arm}@{c0:g}@lr{alr:g}"] = run(arm, c0, alr)
            if cfg.non_private:
                out["non-private"] = run("non-private", 1.0)
            return out

        runs[name] = _cached(progress, name, compute)
    vanish = {}
    if cfg.vanish_methods:
        data = _synthetic(seed, cfg.vanish_samples, class_sep=cfg.vanish_class_sep, n_classes=2)
        noise["vanish"] = info = _noise(len(data[0]), cfg.synthetic_batch, cfg.vanish_epochs, cfg)

        def compute_v(data=data, sigma=info["sigma"]):
            return {
                key: _train(
                    m,
                    data,
                    "logreg",
                    cfg.vanish_c0,
                    sigma,
                    cfg.vanish_epochs,
                    cfg.synthetic_batch,
                    cfg.synthetic_lr,
                    seed,
                    cfg,
                    zero_tol=cfg.vanish_tol * scale,
                    scale=scale,
                    tail_normalization=rule,
                )
                for key, m, scale, rule in vanish_arms(cfg)
            }

        vanish = _cached(progress, "vanish", compute_v)
    audit = {}
    if cfg.audit:
        if "digits_mlp" in noise:
            sigma = noise["digits_mlp"]["sigma"]
        else:
            sigma = _noise(len(_digits(seed)[0]), cfg.digits_batch, cfg.mlp_epochs, cfg)["sigma"]
        audit = _cached(progress, "audit", lambda: _audits(cfg, seed, float(sigma)))
    # the synthetic A3 cell of a grid seed is its runs at C0 = a3_c0 in ``runs`` (the judge reads them there)
    return {"noise": noise, "runs": runs, "vanish": vanish, "audit": audit, "a3_cell": {}}


V2 = list(range(20))
TUNING = (
    dict(
        variant="v1 (issue 3, cf88dc4..e0a7547): presets sized for 2 shared cores - digits logistic regression 20 "
        "epochs (spec 40), synthetic MLP on 10,000 samples (spec 20,000) 15 epochs, eta 0.2 and clamp [0.1, 20] (the "
        "paper's presets), C0 grid {0.01, 0.1, 1, 10, 100}; A4 first as 'AdaClip's C_T falls below SlaClip's'",
        seeds=[0, 1, 2, 3, 4],
        outcome="A2 held; the old A4 held with p = 1e-8 but compared two thresholds with nothing to aim at (replaced "
        "in v2)",
    ),
    dict(
        variant="v2 (issue 24, 59696af..fee32c7): MLP arm at the spec's 40 epochs; AUTO-S at R = 1 over the learning "
        "rates {0.1, 0.2, 0.5, 1, 2}, scored at its best learning rate selected on the reported seeds' test accuracy; "
        "A4 as tracking of the non-negligible norms with a tie band log 1.1 (chosen after seeing that thresholds on "
        "the same clamp differ only through their models' norm medians); the audit threshold at the batch's median "
        "norm (so the sensitivity audit had power); the synthetic C0 = 1 cell over 20 seeds",
        seeds=V2,
        outcome="reference run (seeds 0-19): 8/17 claims held, A3-autos did not hold on either model, A4 in no arm; "
        "the referee (issue 46) broke A2 with a clamp-only controller (+16.5 / +8.8 points) and the audits with the "
        "gradient noise removed or halved",
    ),
    dict(
        variant="v2 quick preset (7e17553): vanishing task 30 epochs so its precondition can hold at quick size; 60 "
        "audit releases; batches indexed with the Poisson sampler (moved A3-synthetic from inconclusive to holds on "
        "the same seeds)",
        seeds=[0, 1, 2, 3],
        outcome="quick 31-40 s; kept",
    ),
    dict(
        variant="v3 A3-autos, one selection rule for both arms (issue 46): each arm's hyper-parameter = best mean "
        "accuracy on the dev seeds 0-4 (v2 records, one of 5 values each). AUTO-S lr: digits 1 (93.44; 0.5 92.83, 2 "
        "92.72), MLP 0.2 (94.17; 0.5 94.00). SlaClip C0: digits 0.1 (94.00, equal to 0.01: the clamp makes them one "
        "run after the first step; the value inside the clamp taken), MLP 0.01 (88.33; 0.1 88.06). The clamp-only "
        "control at vanilla's dev-best C0, 1 on both models (93.56 / 91.89; clamp-only is vanilla inside the clamp)",
        seeds=[0, 1, 2, 3, 4],
        outcome="on these seeds SlaClip 94.00 vs AUTO-S 93.44 (digits), 88.33 vs 94.17 (MLP); vanilla at C0 = 1 "
        "93.56 / 91.89: the control may pass on digits",
    ),
    dict(
        variant="v3 precondition vanilla_c0_sensitive-<task> over the clamped grid {0.1, 1, 10, 20} with the "
        "threshold 5 points = A2's effect size (no value tuned); checked on the v2 records over {0.1, 1, 10} (20 was "
        "not measured there)",
        seeds=[0, 1, 2, 3, 4],
        outcome="spread per seed: digits 11.4 9.7 12.8 8.9 9.7, MLP 15.0 12.8 15.6 10.8 9.4, synthetic 29.8 26.8 25.8 "
        "29.2 27.4: holds on every task (v2's four-decade version gave 65 / 48 / 40 points and could not fail)",
    ),
    dict(
        variant="v3 controls and baseline adopted from the issue without a run: A2 judged against vanilla at "
        "clip(C0, 0.1, 20); clamp-only and decay-to-the-floor (rate eta = 0.2, SlaClip's own) as A2's controls, "
        "clamp-only for every A3 statement, SlaClip-Q (now at both gradient scales) for every A4 statement",
        seeds=[],
        outcome="see the reference run (seeds 100-119); nothing was adjusted after it",
    ),
    dict(
        variant="v3 privacy-release_noise: level 1e-3 (the slot audit's), 200 releases (full) / 60 (quick) of the "
        "9,610 + K coordinates; sizes fixed by run time, its power shown by the mutant tests (noise removed, halved on "
        "the gradients, removed on the slots), not tuned on data",
        seeds=[0],
        outcome="each mutant fails with every coordinate flagged; the unbroken optimizer passes",
    ),
    dict(
        variant="v3 sensitivity audit: v2's threshold (the batch's median norm) left it blind to slots scaled by 1.3 "
        "(the smallest norm of the digits MLP batch at initialisation is 0.66-0.73 x the median, and 1.3x slots break "
        "the bound only below 0.69 C: the mutant passed with 0.972); now C = twice the smallest norm and half of the "
        "removed samples are the smallest-norm ones",
        seeds=[0, 1, 2],
        outcome="min / median norm 0.73, 0.73, 0.66; 90-95% of the batch inside 2 x min; the 1.3x mutant fails",
    ),
    dict(
        variant="v3 timing probe of the full preset's grid seed with the new arms (clamped vanilla, clamp-only, "
        "decay, SlaClip-Q at x10, the release audit; AUTO-S at its one dev lr) and one synthetic-cell seed, to size "
        "the reported seeds: 76 s per grid seed, 4.5 s per cell seed at load ~2.8, so v2's 20 seeds (5 + 15) are kept",
        seeds=[0, 5],
        outcome="seed 0: digits grid means SlaClip 91.9, clamped vanilla 84.5, clamp-only 83.0, decay 81.5; MLP "
        "SlaClip 83.5, clamped vanilla 83.5, clamp-only 83.3, decay 70.6; A4 thresholds as in v2 (SlaClip-Q at the "
        "floor like AdaClip); release audit passes (0 of 9,614 coordinates flagged). Nothing changed after it",
    ),
    dict(
        variant="v3 quick preset and the tests: they run on the REPORTED seeds 100-103 (Config.grid_seeds = "
        "REPORTED[:3], the quick preset's seeds REPORTED[:4]); every quick run and test run while building v3 and "
        "v3b saw those seeds at quick size (2 C0, 10 / 5 epochs)",
        seeds=[100, 101, 102, 103],
        outcome="no choice was made from their numbers; stated here because they are reported seeds",
    ),
    dict(
        variant="referee probes of the v3 reference run (issue 46, /tmp/referee-slaclip): a data-blind threshold at "
        "the clamp's centre 1.41 and at gradient scale x10 (vanilla at fixed C, SlaClip over the C0 grid), SlaClip "
        "on the MLP at lr 0.1 for A3-autos, the release audit's power and the copied-slot-noise mutant; run on "
        "reported seeds 100-104 (the lr and audit power also on dev seeds 0-4)",
        seeds=[0, 1, 2, 3, 4, 100, 101, 102, 103, 104],
        outcome="the referee SAW reported seeds 100-104: centre 93.72 vs clamped vanilla 84.46 (x1); x10 SlaClip "
        "93.17, centre 85.50, clamped vanilla 64.02; MLP SlaClip lr 0.1 93.61 vs AUTO-S 93.78. v3b's arms and "
        "settings below were designed on the dev seeds 0-4 only, and the reference run is repeated on 100-119",
    ),
    dict(
        variant="v3b A2: the centre control (threshold sqrt(c_min c_max) after the first step) for A2 / A2-x10 / "
        "A2-scales, the gradient-scale-x10 task (loss x10, lr /10, C0 grid and clamp unchanged: the referee's "
        "setting), and A2-scales' reference = vanilla at the best fixed threshold of the clamped grid {0.1, 1, 10, "
        "20} per scale by dev mean accuracy; margin 1 point (A3's, not tuned). Dev probe of vanilla at fixed C and "
        "SlaClip over the C0 grid",
        seeds=[0, 1, 2, 3, 4],
        outcome="x1: vanilla 0.1 84.94, 1 93.56, 1.41 93.39, 10 83.17, 20 76.67 -> C = 1; SlaClip 92.10, clamped "
        "vanilla 84.66. x10: 0.1 28.22, 1 84.94, 1.41 86.78, 10 93.56, 20 92.22 -> C = 10; SlaClip 93.31, clamped "
        "vanilla 65.43. So on the dev seeds A2-scales' SlaClip is at -0.86 (inconclusive-looking), the centre "
        "(vanilla 1.41) at -3.49 (rejects): adopted as measured, no value moved",
    ),
    dict(
        variant="v3b A3-autos equal budget: SlaClip's learning rate chosen by best dev mean accuracy over AUTO-S's "
        "grid {0.1, 0.2, 0.5, 1, 2} at SlaClip's dev C0 (digits 0.1 logreg, MLP 0.01); its clamp-only control runs "
        "at the same lr. MLP 0.1 / 0.2 / 1.0 from the referee's dev probe, 0.5 from the v2 records, 2.0 and every "
        "digits value ours. A2-mlp and A3-digits_mlp keep the spec's lr 0.5 for every arm (one lr, no arm tuned)",
        seeds=[0, 1, 2, 3, 4],
        outcome="MLP: 0.1 94.00, 0.2 93.44, 0.5 88.33, 1 83.94, 2 82.06 -> 0.1 (AUTO-S 94.17 at 0.2). digits: 0.1 "
        "92.56, 0.2 93.17, 0.5 94.00, 1 93.61, 2 91.78 -> 0.5 (unchanged; AUTO-S 93.44 at 1)",
    ),
    dict(
        variant="v3b privacy-release_noise independence: slots vs gradient coordinates (max |corr|, t test, "
        "Bonferroni over K d pairs) and lag 1 across releases (per coordinate, Bonferroni, and pooled), each at the "
        "audit's level 1e-3; nothing tuned. Mutants: slot noise copied from the first K gradient draws, noise "
        "re-used on every second release",
        seeds=[0, 1, 2, 3, 4, 100, 101, 102],
        outcome="both mutants fail the audit (the copy also fails A1); the unbroken optimizer passes (unit test, "
        "generator seeds 0-4). A first version also tested lag 1 per coordinate (normal approximation, Bonferroni "
        "over ~9,600 coordinates): it false-alarmed on reported seed 102 in the quick smoke test (0.702 vs 0.693; the "
        "sum of 59 products of normals has heavier tails than the normal at 1e-8), so lag 1 is pooled per block",
    ),
    dict(
        variant="v3b reference run (seeds 100-119) and the second referee's probes (issue 46, /tmp/referee2-slaclip): "
        "the centre arm on the MLP at lr 0.5 and A3 rejudged with it, the x10 task with AdaClip, every MLP arm at lr "
        "0.1 (dev 0-4) and the centre there, the clamp-only control of A3-autos over lr {0.1, 0.2, 1} (dev 0-4) and at "
        "lr 0.2 on reported seeds, three within-block noise-copy mutants and the all-pairs correlation test (seeds 0, "
        "1, 100), exact k / 360 rejudging of A3-autos-digits_mlp",
        seeds=[*range(5), *range(100, 120)],
        outcome="every v3b verdict and the referee's breaks were seen on 100-119, so 100-119 are dev seeds from v3c on "
        "and the report moves to fresh seeds 200-219 (quick preset and tests 220-223). Seen on 100-104: centre 87.11 "
        "vs SlaClip 86.61 on the MLP at lr 0.5; x10 AdaClip 92.71, SlaClip 93.17, centre 86.40; clamp-only (C0 1, lr "
        "0.2) 93.94 vs AUTO-S 93.78. v3c's arms, settings and rules below were adopted from these probes",
    ),
    dict(
        variant="v3c MLP learning rates (referee 2, item 3): every C0-grid arm of the MLP (vanilla, AdaClip, "
        "SlaClip, clamp-only, decay, centre) over AUTO-S's lr grid {0.1, 0.2, 0.5, 1, 2} at C0 in {0.1, 1, 10} (the "
        "clamped grid without 20; the 5-value C0 grid cut to 3 for time, the same for every arm: 15 configurations x "
        "5 seeds per arm, 450 runs, ~13 min on one core; benchmarks/slaclip_mlp_lr_search.py), pick = best mean "
        "accuracy (k / 360), ties to the smaller lr. AUTO-S keeps its v2 pick (5 lrs, the same seeds)",
        seeds=[0, 1, 2, 3, 4],
        outcome="mean over C0 x seeds at lr 0.1 / 0.2 / 0.5 / 1 / 2: vanilla 82.43 / 86.13 / 86.04 / 85.80 / 85.06 -> "
        "0.2; AdaClip 93.04 / 92.33 / 86.30 / 84.26 / 82.76 -> 0.1; SlaClip 94.00 / 93.28 / 86.24 / 82.81 / 81.67 -> "
        "0.1; clamp-only 82.52 / 85.70 / 85.98 / 85.09 / 84.02 -> 0.5; decay 74.80 / 84.22 / 88.46 / 90.09 / 89.00 -> "
        "1; centre 93.78 / 93.63 / 88.41 / 82.65 / 79.09 -> 0.1. Vanilla at 0.2 by C: 0.1 83.83, 1 94.22, 10 80.33 -> "
        "the MLP's best fixed threshold C = 1. The centre arm ties SlaClip (93.78 vs 94.00), as the referee saw",
    ),
    dict(
        variant="v3c A3-autos control lr (referee 2, item 1): the clamp-only control at vanilla's dev-best C0 = 1 "
        "over {0.1, 0.2, 0.5, 1, 2} by the same rule as SlaClip's and AUTO-S's lr (its MLP cells are those of the "
        "lr search above; digits 25 logistic-regression runs)",
        seeds=[0, 1, 2, 3, 4],
        outcome="MLP: 93.06 / 93.78 / 91.89 / 85.89 / 80.39 -> 0.2 (the referee's pick); digits: 89.22 / 92.44 / "
        "93.56 / 93.39 / 90.78 -> 0.5 (the task's lr, as before)",
    ),
    dict(
        variant="v3c centre_loses-<task> precondition (referee 2, item 5): vanilla at the dev-best fixed threshold "
        "minus the clamp's-centre arm (grid mean) >= 1 point (A3's margin, not tuned), required by A2 and A3 on "
        "digits, the MLP and x10; v3b's dev probe and the lr search above give its dev values",
        seeds=[0, 1, 2, 3, 4],
        outcome="dev gaps: digits 93.56 - 93.39 (vanilla at 1.41 ~ the centre) = 0.17 -> fails; x10 93.56 - 86.78 = "
        "6.8 -> holds; MLP 94.22 - 93.78 = 0.44 -> fails. Adopted as measured: on digits and the MLP a data-blind "
        "threshold is as good as a tuned one, so A2 / A3 there cannot credit adaptation",
    ),
    dict(
        variant="v3c release audit: max |corr| over all (d + K)(d + K - 1) / 2 coordinate pairs, Bonferroni at the "
        "audit's level 1e-3 (the referee's probe, allpairs.py), beside v3b's tests; A3 statements at gradient scale "
        "x10 (A3-x10, AdaClip and clamp-only added to the x10 arms) and the centre arm as A3's second control; "
        "accuracies judged as k / n_test in float64. Nothing tuned",
        seeds=[0, 1, 100],
        outcome="referee: unbroken max 0.369-0.388 vs bound 0.451 on seeds 0, 1, 100; each within-block copy 1.000. "
        "Mutant tests (dev seed 0, 40 releases) fail the audit and A1",
    ),
)


EXPERIMENT = register(
    Experiment(
        slug="slaclip",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": QUICK_REPORTED, "full": REPORTED},
        measure=measure,
        judge=judge,
        threads=1,
        dev_seeds=DEV,
        tuning=TUNING,
    )
)
