"""Reproduction: SlaClip vs vanilla DP-SGD, quantile clipping (Opacus AdaClip), AUTO-S and SlaClip-Q.

Same data, seeds, noise multiplier, sample rate, steps and learning rate for every method; only the clipping
rule differs.  Digits (sklearn ``load_digits``) with logistic regression (task ``digits``) and the spec's MLP
64-128-10 (task ``digits_mlp``), and a generated 10-class problem, tiny models trained here.

Statements (issues 3 and 24, kinds per the evidence contract).  Checks: A1, the accountant's history and epsilon
are identical for vanilla and SlaClip (by construction); ``privacy-sensitivity``, ``privacy-slot_noise``,
``privacy-controller_inputs``, the three audits of :mod:`icml26.slaclip.audit` run per seed on a digits batch
through the SlaClip optimizer the experiment trains with.  Preconditions ``vanilla_c0_sensitive-<task>``
(fixed-threshold DP-SGD's accuracy varies with C0, so there is a threshold choice to remove) and
``many_gradients_vanish``.  Claims: A2 (``A2-mlp`` on the MLP) over a grid of initial thresholds SlaClip beats
vanilla by >= 5 points (digits, eps = 3); A3-<task> SlaClip is non-inferior (1 point) to quantile clipping,
superiority only if the paired test says so; ``A3-synthetic-c0_1`` the same at C0 = 1 over every seed (20 in
the full preset); ``A3-autos-<task>`` SlaClip (grid mean over C0) non-inferior to AUTO-S at R = 1 with its best
learning rate of a 5-point grid; ``A4-<rule>-x<scale>`` when many gradients vanish SlaClip's final threshold
tracks the median of the non-negligible per-sample norms better than quantile clipping's in >= 4 of 5 seeds,
for the paper's and the fraction tail rule at gradient scale 1 and 10, and ``A4`` every arm does.  Seeds are the
unit: the C0 cells of one seed are averaged before any test.  Seeds ``>= grid_seeds`` are extra replicates of
the synthetic C0 = 1 cell only.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.figure import Figure
from opacus import PrivacyEngine
from opacus.accountants.utils import get_noise_multiplier
from sklearn.datasets import load_digits, make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

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

from .baselines import make_private_method

DP_METHODS = ("vanilla", "adaclip", "autos", "slaclip", "slaclip-q")
LABELS = {
    "vanilla": "vanilla DP-SGD (fixed C0)",
    "adaclip": "quantile clipping (Opacus AdaClip)",
    "autos": "AUTO-S",
    "slaclip": "SlaClip",
    "slaclip-q": "SlaClip-Q",
    "non-private": "non-private",
}
ARM = {m: LABELS[m].split(" (")[0] for m in LABELS}  # tuning-budget arm names, as the judges name them
ARM.update({"vanilla": "vanilla DP-SGD", "adaclip": "quantile clipping"})
COLORS = {"vanilla": "C0", "adaclip": "C1", "autos": "C2", "slaclip": "C3", "slaclip-q": "C4"}


@dataclass(frozen=True)
class Config:
    """One preset.  ``*_methods = ()`` skips that part.  Accuracies are in percent."""

    c0_grid: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)
    epsilon: float = 3.0
    delta: float = 1e-5
    eta: float = 0.2  # geometric rate of every adaptive rule (SlaClip, SlaClip-Q, AdaClip)
    c_min: float = 0.1  # threshold clamp of every adaptive rule
    c_max: float = 20.0
    # seeds 0 .. grid_seeds-1 run everything; later seeds only the synthetic AdaClip / SlaClip cell at C0 = a3_c0
    grid_seeds: int = 5
    a3_c0: float = 1.0
    # digits: 1797 x 64, standardised, stratified 80/20 split per seed; logistic regression (task "digits")
    digits_methods: tuple[str, ...] = DP_METHODS
    digits_model: str = "logreg"  # "logreg" or "mlp" (64-128-10)
    digits_epochs: int = 20
    digits_batch: int = 128
    digits_lr: float = 0.5
    # the spec's MLP 64-128-10 on the same digits split (task "digits_mlp")
    mlp_methods: tuple[str, ...] = ("vanilla", "adaclip", "autos", "slaclip")
    mlp_epochs: int = 40
    # AUTO-S: R fixed, the learning rate is its tuned knob (one run per grid value; as many as C0 values)
    autos_r: float = 1.0
    autos_lr_grid: tuple[float, ...] = (0.1, 0.2, 0.5, 1.0, 2.0)
    # generated 10-class problem (make_classification, 40 features, 20 informative)
    synthetic_methods: tuple[str, ...] = ("vanilla", "adaclip", "slaclip")
    synthetic_samples: int = 10000
    synthetic_model: str = "mlp"
    synthetic_epochs: int = 15
    synthetic_batch: int = 256
    synthetic_lr: float = 0.2
    # A4: a well-separated problem trained long so most gradients vanish; C0 fixed.  Each gradient scale s
    # multiplies the loss by s and divides the learning rate by s (same trajectory for vanilla SGD) and
    # multiplies C0, c_min and c_max by s; SlaClip runs with each tail rule.
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
    audit_c0: float | None = None  # None: the median per-sample norm of the batch at initialisation
    audit_releases: int = 400
    audit_neighbours: int = 8
    non_private: bool = True
    # preconditions: vanilla's accuracy spread over the C0 grid (points), share of vanishing norms in A4's task
    min_c0_spread: float = 5.0
    min_vanish_share: float = 0.5


QUICK = Config(
    c0_grid=(0.01, 1.0),
    grid_seeds=3,
    digits_methods=("vanilla", "adaclip", "autos", "slaclip"),
    digits_epochs=10,
    mlp_methods=("vanilla", "adaclip", "autos", "slaclip"),
    mlp_epochs=5,
    autos_lr_grid=(0.5, 1.0),
    synthetic_methods=("adaclip", "slaclip"),
    synthetic_samples=3000,
    synthetic_epochs=3,
    vanish_methods=("adaclip", "slaclip"),
    vanish_samples=2000,
    vanish_epochs=30,
    a4_min_wins=2,
    audit_releases=60,
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
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
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
    out = {"acc": acc, "wall_s": wall}
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
    """(name, methods, data_fn, model, epochs, batch, lr) of each accuracy task the preset runs."""
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
            )
        )
    if cfg.mlp_methods:
        tasks.append(("digits_mlp", cfg.mlp_methods, _digits, "mlp", cfg.mlp_epochs, cfg.digits_batch, cfg.digits_lr))
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
            )
        )
    return tasks


def _methods(cfg: Config, task: str) -> tuple[str, ...]:
    return {"digits": cfg.digits_methods, "digits_mlp": cfg.mlp_methods, "synthetic": cfg.synthetic_methods}[task]


def _c0_methods(methods) -> list[str]:
    """The methods run over the C0 grid (AUTO-S runs over its learning-rate grid instead)."""
    return [m for m in methods if m != "autos"]


def _vanish_arms(cfg: Config) -> list[tuple[str, str, float, str]]:
    """(key, method, scale, tail rule) of every run of the vanishing-gradient task."""
    arms = []
    for scale in cfg.vanish_scales:
        for m in cfg.vanish_methods:
            if m == "slaclip":
                arms += [(f"slaclip-{rule}@x{scale:g}", m, scale, rule) for rule in cfg.vanish_rules]
            elif m == "adaclip" or scale == 1.0:  # SlaClip-Q: an ablation, at scale 1 only
                arms.append((f"{m}@x{scale:g}", m, scale, "paper"))
    return arms


def _noise(n_train: int, batch: int, epochs: int, cfg: Config) -> dict:
    sigma, q = _noise_multiplier(n_train, batch, epochs, cfg)
    return {"sigma": sigma, "sample_rate": q, "n_train": n_train, "steps": int(round(epochs / q))}


def _cached(progress, key: str, fn):
    return fn() if progress is None else progress.cached(key, fn)


def _audits(cfg: Config, seed: int, sigma: float) -> dict:
    """The three privacy audits (:mod:`.audit`) through the SlaClip optimizer and controller the digits MLP arm
    trains with (same class, noise multiplier, expected batch size, controller settings), on one batch of
    ``digits_batch`` training samples drawn from ``seed`` and the MLP's initialisation for ``seed``.

    The threshold is ``audit_c0``, or (``None``) the median per-sample gradient norm of that batch at
    initialisation, so that about half the samples sit inside it and carry slack: the sensitivity audit has
    power against a mis-scaled slot encoding only through such samples."""
    from .audit import audit_controller_inputs, audit_sensitivity, audit_slot_noise
    from .controllers import SlaClipController
    from .optimizer import SlaClipDPOptimizer

    Xtr, ytr, _, _ = _tensors(_digits(seed))
    idx = torch.randperm(len(Xtr), generator=torch.Generator().manual_seed(seed))[: cfg.digits_batch]
    x, y = Xtr[idx], ytr[idx]

    def make_model():
        torch.manual_seed(seed)
        return _model("mlp", Xtr.shape[1], int(ytr.max()) + 1)

    clip = cfg.audit_c0 if cfg.audit_c0 is not None else float(_per_sample_norms(make_model(), x, y).median())

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
        sens = audit_sensitivity(make_optimizer, make_model, x, y, n_neighbours=cfg.audit_neighbours)
        noise = audit_slot_noise(make_optimizer, make_model, x, y, n_releases=cfg.audit_releases)
        ctrl = audit_controller_inputs(make_optimizer, make_model, x, y)
    return {"sensitivity": sens, "slot_noise": noise, "controller_inputs": ctrl}


def measure(config: Config, seed: int, progress=None) -> dict:
    """One seed's replicate: the data split, every model's initialisation and the DP noise are drawn from ``seed``.

    Returns ``noise`` (sigma, sample rate, steps per task), ``runs`` (task -> ``"method@C0"`` or
    ``"autos@lr<lr>"`` -> run dict), ``vanish`` (``"<method>@x<scale>"`` -> run dict of the vanishing-gradient
    task), ``audit`` (the three privacy audits) and ``a3_cell`` (``{"adaclip", "slaclip"}`` -> the synthetic run
    at ``C0 = a3_c0``).  A seed ``>= grid_seeds`` computes ``a3_cell`` only (``runs``, ``vanish``, ``audit`` empty).
    """
    cfg = config
    if not isinstance(cfg.grid_seeds, int) or cfg.grid_seeds < 1:
        raise ValueError(f"grid_seeds must be an integer >= 1, got {cfg.grid_seeds!r}")
    noise, runs = {}, {}
    if seed >= cfg.grid_seeds:  # an extra replicate of the synthetic A3 cell
        if not cfg.synthetic_methods:
            return {"noise": {}, "runs": {}, "vanish": {}, "audit": {}, "a3_cell": {}}
        data = _synthetic(seed, cfg.synthetic_samples)
        noise["synthetic"] = info = _noise(len(data[0]), cfg.synthetic_batch, cfg.synthetic_epochs, cfg)

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
                for m in ("adaclip", "slaclip")
            }

        cell = _cached(progress, "a3_cell", compute_cell)
        return {"noise": noise, "runs": {}, "vanish": {}, "audit": {}, "a3_cell": cell}
    for name, methods, data_fn, model_kind, epochs, batch, lr in _tasks(cfg):
        data = data_fn(seed)
        noise[name] = info = _noise(len(data[0]), batch, epochs, cfg)

        def compute(
            methods=methods, data=data, model_kind=model_kind, epochs=epochs, batch=batch, lr=lr, sigma=info["sigma"]
        ):
            out = {
                f"{m}@{c0:g}": _train(m, data, model_kind, c0, sigma, epochs, batch, lr, seed, cfg)
                for m in _c0_methods(methods)
                for c0 in cfg.c0_grid
            }
            if "autos" in methods:
                for alr in cfg.autos_lr_grid:
                    out[f"autos@lr{alr:g}"] = _train(
                        "autos", data, model_kind, cfg.autos_r, sigma, epochs, batch, alr, seed, cfg
                    )
            if cfg.non_private:
                out["non-private"] = _train("non-private", data, model_kind, 1.0, sigma, epochs, batch, lr, seed, cfg)
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
                for key, m, scale, rule in _vanish_arms(cfg)
            }

        vanish = _cached(progress, "vanish", compute_v)
    audit = {}
    if cfg.audit:
        if "digits_mlp" in noise:
            sigma = noise["digits_mlp"]["sigma"]
        else:
            sigma = _noise(len(_digits(seed)[0]), cfg.digits_batch, cfg.mlp_epochs, cfg)["sigma"]
        audit = _cached(progress, "audit", lambda: _audits(cfg, seed, float(sigma)))
    # the synthetic A3 cell of a grid seed is its run at C0 = a3_c0 in ``runs`` (the judge reads it there)
    return {"noise": noise, "runs": runs, "vanish": vanish, "audit": audit, "a3_cell": {}}


# ------------------------------------------------------------------------------------------------ the judge
def _strip(run: dict) -> dict:
    return {k: v for k, v in run.items() if k != "clip_path"}


def judge(config: Config, records: list[dict], report: Report) -> None:
    cfg = config
    seeds_all = list(report.seeds) if report.seeds is not None else list(range(len(records)))
    by_seed = dict(zip(seeds_all, records))
    seeds = [s for s in seeds_all if s < cfg.grid_seeds]  # the seeds that ran the whole experiment
    if not seeds:
        raise ValueError(
            f"no seed below grid_seeds = {cfg.grid_seeds}: seeds >= grid_seeds only run the synthetic A3 cell, "
            f"so there is nothing else to judge (seeds {seeds_all})"
        )
    first = by_seed[seeds[0]]
    results = {t: {s: by_seed[s]["runs"][t] for s in seeds} for t in first["runs"]}
    vanish = {s: by_seed[s]["vanish"] for s in seeds} if first["vanish"] else {}
    audits = {s: by_seed[s]["audit"] for s in seeds} if first.get("audit") else {}
    cells = {}  # seed -> {"adaclip": run, "slaclip": run} at C0 = a3_c0 on the synthetic task, every seed
    for s in seeds_all:
        r = by_seed[s]
        if s in seeds and "synthetic" in r["runs"] and f"slaclip@{cfg.a3_c0:g}" in r["runs"]["synthetic"]:
            cells[s] = {m: r["runs"]["synthetic"][f"{m}@{cfg.a3_c0:g}"] for m in ("adaclip", "slaclip")}
        elif r.get("a3_cell"):
            cells[s] = r["a3_cell"]
    sigmas = first["noise"]  # n_train, batch and epochs do not depend on the seed, so neither does sigma
    report.metrics["noise"] = sigmas
    report.metrics["grid_seeds"] = seeds
    report.metrics["runs"] = {
        t: {str(s): {k: _strip(r) for k, r in per.items()} for s, per in res.items()} for t, res in results.items()
    }
    report.metrics["vanish"] = {str(s): {k: _strip(r) for k, r in per.items()} for s, per in vanish.items()}
    report.metrics["audit"] = {str(s): a for s, a in audits.items()}
    report.metrics["a3_cell"] = {str(s): {m: _strip(r) for m, r in c.items()} for s, c in cells.items()}
    budget: dict[str, list] = {}  # every arm runs its whole grid for the task's steps; nobody tunes
    for task, methods, *_ in _tasks(cfg):
        for m in methods:
            budget.setdefault(ARM[m], []).append((task, sigmas[task]["steps"]))
    for arm, parts in budget.items():
        per_task = ", ".join(f"{t} {n}" for t, n in parts)
        if arm == "AUTO-S":
            report.set_tuning(
                arm,
                configs=len(cfg.autos_lr_grid),
                steps=parts[0][1],
                note=f"R = {cfg.autos_r:g}, one run per learning rate in {list(cfg.autos_lr_grid)}; scored at the "
                "learning rate with the best mean test accuracy over seeds (selected on test: favours AUTO-S); "
                f"steps per configuration: {per_task}",
            )
        else:
            report.set_tuning(
                arm,
                configs=len(cfg.c0_grid),
                steps=parts[0][1],  # the same per task for every arm that runs there
                note="run at every C0 of the grid and scored by the grid mean, no selection; steps per "
                f"configuration: {per_task}",
            )
    _claims(report, cfg, seeds, results, vanish, audits, cells)
    _tables(report, cfg, seeds, results, vanish, sigmas, audits, cells)
    _figures(report, cfg, seeds, results, vanish)
    report.add_note(
        f"Privacy: epsilon = {cfg.epsilon} at delta = {cfg.delta} (Opacus RDP accountant) for every DP "
        "method; "
        "noise multiplier from opacus.accountants.utils.get_noise_multiplier for the task's sample rate and "
        "epochs. AdaClip spends part of that budget on its noised unclipped count (std B/20) and raises its "
        "gradient noise to keep the accountant's sigma; SlaClip adds no query."
    )
    report.add_note(
        f"Adaptive rules (SlaClip, SlaClip-Q, AdaClip) share eta = {cfg.eta} and the clamp "
        f"[{cfg.c_min}, {cfg.c_max}]; so an initial threshold outside the clamp is used for one step only. "
        f"AUTO-S uses R = {cfg.autos_r:g}, stability 0.01 and its own learning-rate grid {list(cfg.autos_lr_grid)} "
        "(its update depends on lr x R only, so R = C0 at a fixed learning rate is a strawman at small C0). "
        "Every other method uses the task's learning rate (plain SGD, no momentum)."
    )
    report.add_note(
        "Units: seeds. The adaptive methods give identical numbers at C0 = 0.01 and 0.1 (both are clamped to "
        "c_min after one step), so (C0, seed) cells are not independent pairs: every accuracy comparison "
        "averages over the C0 grid within a seed first (units=seed) and tests the per-seed means with a "
        "paired t test (3-5 seeds; a Wilcoxon test over 5 seeds cannot go below p = 0.031). "
        f"Seeds {seeds} run everything; the other seeds ({[s for s in seeds_all if s not in seeds]}) replicate "
        f"only the synthetic AdaClip / SlaClip cell at C0 = {cfg.a3_c0:g} (A3-synthetic-c0_1)."
    )


def _pairs(results: dict, task: str, method: str, seeds: list[int], c0_grid) -> tuple[list[float], list[int]]:
    """Accuracies of ``method`` over (C0, seed) cells and the seed of each cell (the unit)."""
    cells = [(c0, s) for c0 in c0_grid for s in seeds]
    return [results[task][s][f"{method}@{c0:g}"]["acc"] for c0, s in cells], [s for _, s in cells]


def _autos_best(cfg: Config, results: dict, task: str, seeds) -> tuple[float, list[float]]:
    """AUTO-S's learning rate with the best mean test accuracy over seeds, and its accuracy per seed."""
    means = {lr: np.mean([results[task][s][f"autos@lr{lr:g}"]["acc"] for s in seeds]) for lr in cfg.autos_lr_grid}
    best = max(cfg.autos_lr_grid, key=lambda lr: (means[lr], -lr))
    return best, [results[task][s][f"autos@lr{best:g}"]["acc"] for s in seeds]


def _tracking_error(run: dict) -> float:
    """``|log C_T - log median of the non-negligible per-sample norms|`` of one trained model."""
    target = run["median_nonneg_norm"]
    if not math.isfinite(target):  # every norm negligible: track the median of all of them
        target = max(run["median_norm"], 1e-12)
    return abs(math.log(run["final_clip"]) - math.log(target))


def _claims(report: Report, cfg: Config, seeds, results: dict, vanish: dict, audits: dict, cells: dict) -> None:
    grid = cfg.c0_grid
    sensitive = {}  # task -> precondition id: fixed-threshold DP-SGD is sensitive to C0 there
    for task in results:
        if "vanilla" not in _methods(cfg, task) or len(grid) < 2:
            continue
        spread = []
        for s in seeds:
            accs = [results[task][s][f"vanilla@{c0:g}"]["acc"] for c0 in grid]
            spread.append(max(accs) - min(accs))
        sensitive[task] = f"vanilla_c0_sensitive-{task}"
        report.add_claim(
            judge_threshold(
                sensitive[task],
                f"Fixed-threshold DP-SGD is sensitive to its clipping threshold ({task}): the spread of its "
                f"test accuracy over C0 in {list(grid)} (best C0 minus worst C0, per seed) is >= "
                f"{cfg.min_c0_spread:g} points, so there is a threshold choice for adaptive clipping to remove.",
                ("vanilla accuracy spread over the C0 grid", spread),
                threshold=cfg.min_c0_spread,
                sense=">=",
                kind="precondition",
            )
        )
    if "digits" in results and {"vanilla", "slaclip"} <= set(cfg.digits_methods):
        gaps, eps_v, eps_s = [], [], []
        for s in seeds:
            for c0 in grid:
                v, m = results["digits"][s][f"vanilla@{c0:g}"], results["digits"][s][f"slaclip@{c0:g}"]
                same_history = v["history"] == m["history"]
                gaps.append(abs(m["eps"] - v["eps"]) + (0.0 if same_history else 1.0))
                eps_v.append(v["eps"])
                eps_s.append(m["eps"])
        report.add_claim(
            judge_every(
                "A1",
                "The accountant's history and epsilon are identical for vanilla DP-SGD and SlaClip at the "
                "same noise multiplier, sample rate and steps (the privacy cost is unchanged).",
                ("|eps(SlaClip) - eps(vanilla)| + [histories differ]", gaps),
                bound=0.0,
                sense="<=",
                tol=0.0,
                baselines={"epsilon vanilla": eps_v, "epsilon SlaClip": eps_s},
                # both optimizers are built with the same sigma, sample rate and steps, so the accountant
                # records the same history by construction: a check of our wiring, blind to what is released
                # (the privacy-* checks below look at the release itself)
                kind="check",
            )
        )
    if audits:
        _audit_checks(report, cfg, seeds, audits)
    for task, a2_id in (("digits", "A2"), ("digits_mlp", "A2-mlp")):
        if task not in results or not {"vanilla", "slaclip"} <= set(_methods(cfg, task)):
            continue
        m, units = _pairs(results, task, "slaclip", seeds, grid)
        model = "logistic regression" if task == "digits" else "MLP 64-128-10"
        report.add_claim(
            judge_superiority(
                a2_id,
                f"Averaged over initial thresholds C0 in {list(grid)}, SlaClip beats vanilla DP-SGD in test "
                f"accuracy at the same epsilon (digits, {model}, eps = {cfg.epsilon:g}) by >= 5 points (grid mean "
                "per seed, paired over seeds).",
                ("SlaClip", m),
                {"vanilla DP-SGD": _pairs(results, task, "vanilla", seeds, grid)[0]},
                test="ttest",
                min_effect=5.0,
                units=units,
                requires=[sensitive[task]] if task in sensitive else None,
            )
        )
    for task in results:
        methods = _methods(cfg, task)
        if not {"adaclip", "slaclip"} <= set(methods):
            continue
        (m, units), b = _pairs(results, task, "slaclip", seeds, grid), _pairs(results, task, "adaclip", seeds, grid)[0]
        req = [sensitive[task]] if task in sensitive else None
        _a3(report, task, "grid mean per seed, paired over seeds", m, b, units, req)
    if len(cells) >= 2:
        cs = sorted(cells)
        m = [cells[s]["slaclip"]["acc"] for s in cs]
        b = [cells[s]["adaclip"]["acc"] for s in cs]
        req = [sensitive["synthetic"]] if "synthetic" in sensitive else None
        _a3(report, "synthetic-c0_1", f"C0 = {cfg.a3_c0:g} only, {len(cs)} seeds, paired over seeds", m, b, None, req)
    for task in results:
        methods = _methods(cfg, task)
        if not {"autos", "slaclip"} <= set(methods):
            continue
        best, autos = _autos_best(cfg, results, task, seeds)
        m = [float(np.mean([results[task][s][f"slaclip@{c0:g}"]["acc"] for c0 in grid])) for s in seeds]
        report.add_claim(
            judge_non_inferiority(
                f"A3-autos-{task}",
                f"SlaClip (mean over the C0 grid, no selection) is non-inferior (margin 1 point) to AUTO-S at R = "
                f"{cfg.autos_r:g} with its learning rate tuned over {list(cfg.autos_lr_grid)} (best mean over "
                f"seeds, here lr = {best:g}) at the same epsilon ({task}; paired over seeds).",
                ("SlaClip", m),
                {"AUTO-S at R = 1, best learning rate": autos},
                margin=1.0,
                requires=[sensitive[task]] if task in sensitive else None,
            )
        )
    if vanish:
        _a4(report, cfg, seeds, vanish)


def _a3(report: Report, task: str, how: str, m, b, units, req) -> None:
    report.add_claim(
        judge_non_inferiority(
            f"A3-{task}",
            f"SlaClip is non-inferior (margin 1 point) to quantile adaptive clipping at the same epsilon ({task}; "
            f"{how}).",
            ("SlaClip", m),
            {"quantile clipping (AdaClip)": b},
            margin=1.0,
            units=units,
            requires=req,
        )
    )
    report.add_claim(
        judge_superiority(
            f"A3-superiority-{task}",
            f"SlaClip beats quantile adaptive clipping at the same epsilon ({task}; {how}); claimed only if the "
            "paired test says so.",
            ("SlaClip", m),
            {"quantile clipping (AdaClip)": b},
            test="ttest",
            units=units,
            requires=req,
        )
    )


def _audit_checks(report: Report, cfg: Config, seeds, audits: dict) -> None:
    sens = [audits[s]["sensitivity"] for s in seeds]
    report.add_claim(
        judge_every(
            "privacy-sensitivity",
            "Removing one sample changes SlaClip's un-normalised release (gradient coordinates and slack slots, "
            f"same noise draws) by at most C_t: max over {cfg.audit_neighbours} removed samples of "
            "||S(D) - S(D minus i)|| / C_t <= 1 (audit_sensitivity on a digits batch, MLP, per seed).",
            ("max ||S(D) - S(D minus i)|| / C_t", [a["max_change_over_clip"] for a in sens]),
            bound=1.0,
            sense="<=",
            tol=1e-4,
            baselines={"removed samples inside the threshold": [a["removed_inside_threshold"] for a in sens]},
            kind="check",
            unit="seed",
        )
    )
    noise = [audits[s]["slot_noise"] for s in seeds]
    report.add_claim(
        judge_every(
            "privacy-slot_noise",
            f"The slot noise of SlaClip's release has sd sigma C_t: over {cfg.audit_releases} releases of one digits "
            "batch, sigma lies in the two-sided 99.9% chi-square interval of the pooled slot-noise sd / C_t "
            "(audit_slot_noise, per seed; 1 = outside).",
            ("sigma outside the interval", [0.0 if a["passed"] else 1.0 for a in noise]),
            bound=0.0,
            sense="<=",
            baselines={
                "slot-noise sd / C_t": [a["sd_over_clip"] for a in noise],
                "noise multiplier sigma": [a["noise_multiplier"] for a in noise],
            },
            kind="check",
            unit="seed",
        )
    )
    ctrl = [audits[s]["controller_inputs"] for s in seeds]
    report.add_claim(
        judge_every(
            "privacy-controller_inputs",
            "The threshold controller sees only noised statistics: neither its input nor any tensor SlaClip keeps "
            "after a step equals the un-noised slack sum or indicator (audit_controller_inputs, per seed; count "
            "of violations: clean input fed + leaking attributes + controller never called).",
            (
                "violations",
                [int(a["fed_clean"]) + len(a["leaks"]) + int(a["fed"] == 0) for a in ctrl],
            ),
            bound=0.0,
            sense="<=",
            kind="check",
            unit="seed",
        )
    )


def _a4(report: Report, cfg: Config, seeds, vanish: dict) -> None:
    s0 = seeds[0]
    if "adaclip@x1" in vanish[s0] and "slaclip-paper@x1" in vanish[s0]:
        share = [
            float(np.mean([vanish[s][k]["share_below_tol"] for k in ("adaclip@x1", "slaclip-paper@x1")])) for s in seeds
        ]
        report.add_claim(
            judge_threshold(
                "many_gradients_vanish",
                f"The vanishing-gradient task has many vanishing gradients: at the end of training >= "
                f"{cfg.min_vanish_share:.0%} of the per-sample gradient norms are below {cfg.vanish_tol:g} (mean of "
                "the AdaClip- and SlaClip-trained models at gradient scale 1, per seed).",
                (f"share of per-sample norms < {cfg.vanish_tol:g}", share),
                threshold=cfg.min_vanish_share,
                sense=">=",
                kind="precondition",
            )
        )
    req = ["many_gradients_vanish"] if "adaclip@x1" in vanish[s0] else None
    k = min(cfg.a4_min_wins, len(seeds))
    arm_ids, wins = [], []
    for rule in cfg.vanish_rules:
        for scale in cfg.vanish_scales:
            s_key, a_key = f"slaclip-{rule}@x{scale:g}", f"adaclip@x{scale:g}"
            if s_key not in vanish[s0] or a_key not in vanish[s0]:
                continue
            err_s = [_tracking_error(vanish[s][s_key]) for s in seeds]
            err_a = [_tracking_error(vanish[s][a_key]) for s in seeds]
            cid = f"A4-{rule}-x{scale:g}"
            c = report.add_claim(
                judge_k_of_n(
                    cid,
                    f"When many gradients vanish, SlaClip's final threshold ({rule} tail rule, gradient scale "
                    f"{scale:g}: loss x{scale:g}, lr /{scale:g}, C0 and clamp x{scale:g}) tracks the median of the "
                    "non-negligible per-sample norms better than quantile clipping's: |log C_T - log median| is "
                    f"smaller by more than {cfg.a4_tie:.3f} (log 1.1) in >= {k} of {len(seeds)} seeds.",
                    ("SlaClip |log C_T - log median non-negligible norm|", err_s),
                    {
                        f"quantile clipping |log C_T - log median| minus tie band {cfg.a4_tie:.3f}": [
                            e - cfg.a4_tie for e in err_a
                        ]
                    },
                    k=k,
                    higher_is_better=False,
                    requires=req,
                )
            )
            arm_ids.append(cid)
            wins.append(c.baselines[0]["wins"])
    if arm_ids:
        report.add_claim(
            judge_every(
                "A4",
                "When many gradients vanish, SlaClip's final threshold tracks the non-negligible per-sample norms "
                f"better than quantile clipping's in >= {k} of {len(seeds)} seeds in every arm "
                f"({', '.join(arm_ids)}).",
                ("seeds won by SlaClip per arm", wins),
                bound=float(k),
                sense=">=",
                requires=req,
                unit="arm",
            )
        )


def _tables(report: Report, cfg: Config, seeds, results: dict, vanish: dict, sigmas: dict, audits, cells) -> None:
    for task, res in results.items():
        methods = _methods(cfg, task)
        rows = []
        for m in _c0_methods(methods):
            row = {"method": LABELS[m]}
            per_c0 = []
            for c0 in cfg.c0_grid:
                accs = [res[s][f"{m}@{c0:g}"]["acc"] for s in seeds]
                row[f"C0={c0:g}"] = f"{np.mean(accs):.1f} ± {np.std(accs, ddof=1) if len(accs) > 1 else 0:.1f}"
                per_c0.append(np.mean(accs))
            row["mean over grid"] = float(np.mean(per_c0))
            row["worst C0"] = float(np.min(per_c0))
            row["epsilon"] = float(np.mean([res[s][f"{m}@{c0:g}"]["eps"] for s in seeds for c0 in cfg.c0_grid]))
            rows.append(row)
        if "autos" in methods:
            best, accs = _autos_best(cfg, results, task, seeds)
            per_lr = [np.mean([res[s][f"autos@lr{lr:g}"]["acc"] for s in seeds]) for lr in cfg.autos_lr_grid]
            rows.append(
                {
                    "method": f"AUTO-S (R = {cfg.autos_r:g}, best lr {best:g})",
                    "mean over grid": float(np.mean(per_lr)),
                    "worst C0": float(np.min(per_lr)),
                    "best": float(np.mean(accs)),
                    "epsilon": float(np.mean([res[s][f"autos@lr{best:g}"]["eps"] for s in seeds])),
                }
            )
            report.add_table(
                f"autos-{task}",
                [
                    {
                        "learning rate": lr,
                        "test acc": f"{np.mean(a):.1f} ± {np.std(a, ddof=1) if len(a) > 1 else 0:.1f}",
                    }
                    for lr in cfg.autos_lr_grid
                    for a in [[res[s][f"autos@lr{lr:g}"]["acc"] for s in seeds]]
                ],
                f"AUTO-S at R = {cfg.autos_r:g} by learning rate ({task}), mean ± std over {len(seeds)} seeds.",
            )
        if cfg.non_private:
            acc = mean_ci([res[s]["non-private"]["acc"] for s in seeds])
            rows.append(
                {
                    "method": "non-private (ceiling)",
                    "mean over grid": acc.mean,
                    "worst C0": acc.mean,
                    "epsilon": "inf",
                }
            )
        info = sigmas[task]
        report.add_table(
            f"accuracy-{task}",
            rows,
            f"Test accuracy (%) by initial threshold C0, mean ± std over {len(seeds)} seeds; sigma = "
            f"{info['sigma']:.3f}, sample rate {info['sample_rate']:.4f}, {info['steps']} steps, "
            f"n_train = {info['n_train']}. AUTO-S row: its learning-rate grid in place of the C0 grid "
            "('worst C0' = worst learning rate, 'best' = at the best learning rate).",
        )
    if cells:
        cs = sorted(cells)
        d = [cells[s]["slaclip"]["acc"] - cells[s]["adaclip"]["acc"] for s in cs]
        report.add_table(
            "a3-synthetic-c0_1",
            [
                {
                    "seeds": len(cs),
                    "SlaClip": float(np.mean([cells[s]["slaclip"]["acc"] for s in cs])),
                    "AdaClip": float(np.mean([cells[s]["adaclip"]["acc"] for s in cs])),
                    "mean difference": float(np.mean(d)),
                    "sd of difference": float(np.std(d, ddof=1)) if len(d) > 1 else 0.0,
                }
            ],
            f"A3 on the synthetic task at C0 = {cfg.a3_c0:g} over every seed (test accuracy %).",
        )
    if audits:
        report.add_table(
            "privacy-audits",
            [
                {
                    "seed": s,
                    "max change / C_t": a["sensitivity"]["max_change_over_clip"],
                    "removed inside C_t": a["sensitivity"]["removed_inside_threshold"],
                    "slot sd / C_t": a["slot_noise"]["sd_over_clip"],
                    "sd interval": "[{:.4f}, {:.4f}]".format(*a["slot_noise"]["sd_interval"]),
                    "sigma": a["slot_noise"]["noise_multiplier"],
                    "controller fed clean": a["controller_inputs"]["fed_clean"],
                    "leaks": ", ".join(a["controller_inputs"]["leaks"]) or "none",
                }
                for s, a in audits.items()
            ],
            f"Privacy audits through the SlaClip optimizer (digits batch of {cfg.digits_batch}, MLP 64-128-10 at "
            "initialisation, C0 = "
            + (f"{cfg.audit_c0:g}" if cfg.audit_c0 is not None else "the batch's median per-sample norm")
            + ", the digits MLP arm's sigma).",
        )
    if vanish:
        rows = []
        for key, m, scale, rule in _vanish_arms(cfg):
            r = [vanish[s][key] for s in seeds]
            rows.append(
                {
                    "method": LABELS[m] + (f", {rule} rule" if m == "slaclip" else ""),
                    "scale": scale,
                    "final C_T / scale": float(np.mean([x["final_clip"] for x in r])) / scale,
                    "final C_T per seed": ", ".join(f"{x['final_clip']:.3g}" for x in r),
                    "median non-negligible norm / scale": float(np.mean([x["median_nonneg_norm"] for x in r])) / scale,
                    "tracking error": float(np.mean([_tracking_error(x) for x in r])),
                    "share negligible": float(np.mean([x["share_below_tol"] for x in r])),
                    "test acc": float(np.mean([x["acc"] for x in r])),
                }
            )
        info = sigmas["vanish"]
        report.add_table(
            "vanishing-gradients",
            rows,
            f"A4: 2-class make_classification (class_sep {cfg.vanish_class_sep}), logistic regression, "
            f"C0 = {cfg.vanish_c0} x scale, clamp [{cfg.c_min}, {cfg.c_max}] x scale, {info['steps']} steps, "
            f"sigma = {info['sigma']:.3f}. Tracking error = |log C_T - log median of the per-sample norms >= "
            f"{cfg.vanish_tol:g} x scale| (mean over seeds). Norm columns are an evaluation-only (non-private) "
            "diagnostic of the trained models.",
        )


def _figures(report: Report, cfg: Config, seeds, results: dict, vanish: dict) -> None:
    if results:
        fig = Figure(figsize=(5.2 * len(results), 3.8))
        for i, (task, res) in enumerate(results.items()):
            ax = fig.add_subplot(1, len(results), i + 1)
            methods = _methods(cfg, task)
            for m in _c0_methods(methods):
                accs = np.array([[res[s][f"{m}@{c0:g}"]["acc"] for s in seeds] for c0 in cfg.c0_grid])
                ax.errorbar(
                    cfg.c0_grid,
                    accs.mean(1),
                    yerr=accs.std(1),
                    marker="o",
                    capsize=3,
                    label=LABELS[m],
                    color=COLORS[m],
                )
            if "autos" in methods:
                best, accs = _autos_best(cfg, results, task, seeds)
                ax.axhline(np.mean(accs), color=COLORS["autos"], ls="--", label=f"AUTO-S, R = 1, best lr {best:g}")
            if cfg.non_private:
                ax.axhline(
                    np.mean([res[s]["non-private"]["acc"] for s in seeds]),
                    color="k",
                    ls=":",
                    label="non-private",
                )
            ax.set_xscale("log")
            ax.set_xlabel("initial threshold C0")
            ax.set_ylabel("test accuracy (%)")
            ax.set_title(f"{task}, eps = {cfg.epsilon:g}")
            ax.legend(fontsize=7)
        report.add_figure(
            "accuracy-vs-c0",
            fig,
            "Final test accuracy against the initial clipping threshold (mean ± std over seeds).",
        )
    adaptive = [m for m in ("slaclip", "slaclip-q", "adaclip") if m in cfg.digits_methods]
    if "digits" in results and adaptive:
        s0 = seeds[0]
        fig = Figure(figsize=(5.0 * len(adaptive), 3.6))
        for i, m in enumerate(adaptive):
            ax = fig.add_subplot(1, len(adaptive), i + 1)
            for c0 in cfg.c0_grid:
                r = results["digits"][s0][f"{m}@{c0:g}"]
                ax.plot(np.arange(len(r["clip_path"])) * r["clip_stride"], r["clip_path"], label=f"C0={c0:g}")
            ax.set_yscale("log")
            ax.set_xlabel("step")
            ax.set_ylabel("C_t")
            ax.set_title(f"{LABELS[m]} (digits, seed {s0})", fontsize=9)
            ax.legend(fontsize=7)
        report.add_figure("clip-trajectories", fig, "Threshold C_t during training from each initial C0.")
    if vanish:
        fig = Figure(figsize=(5.5 * len(cfg.vanish_scales), 3.6))
        styles = {"adaclip": ("C1", "-"), "slaclip-paper": ("C3", "-"), "slaclip-fraction": ("C3", "--")}
        for i, scale in enumerate(cfg.vanish_scales):
            ax = fig.add_subplot(1, len(cfg.vanish_scales), i + 1)
            for key, m, sc, _rule in _vanish_arms(cfg):
                if sc != scale:
                    continue
                name = key.split("@")[0]
                color, ls = styles.get(name, (COLORS.get(m, "C4"), ":"))
                for k, s in enumerate(seeds):
                    r = vanish[s][key]
                    steps = np.arange(len(r["clip_path"])) * r["clip_stride"]
                    ax.plot(
                        steps,
                        np.asarray(r["clip_path"]) / scale,
                        color=color,
                        ls=ls,
                        alpha=0.7,
                        label=name if k == 0 else None,
                    )
            ax.axhline(cfg.c_min, color="grey", ls=":", label="c_min")
            ax.set_yscale("log")
            ax.set_xlabel("step")
            ax.set_ylabel("C_t / scale")
            ax.set_title(f"vanishing gradients (A4), gradient scale {scale:g}, all seeds", fontsize=9)
            ax.legend(fontsize=7)
        report.add_figure("clip-vanishing", fig, "Threshold paths when most per-sample gradients vanish.")


EXPERIMENT = register(
    Experiment(
        slug="slaclip",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 4, "full": 20},
        measure=measure,
        judge=judge,
        threads=1,
    )
)
