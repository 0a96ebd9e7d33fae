"""Reproduction, the evidence: claims (each with its control arm), preconditions, checks, tables and figures from the
per-seed records of :func:`icml26.slaclip.experiment.measure`.

Control arms (measured in the same run, on the same seeds, data, noise multiplier and steps):

- **clamp-only** (SlaClip with its controller replaced by ``C_{t+1} = clip(C_t, c_min, c_max)``: the same optimizer,
  release and slots, the indicator ignored) for A2 / A2-mlp, every A3 statement and A3-autos: what they credit is the
  threshold adaptation fed by the slack indicator.  Inside the clamp it *is* vanilla DP-SGD, so it measures what the
  clamp alone buys (the referee found it "beating" unclamped vanilla by +16.5 / +8.8 points under the v2 rule);
- **decay to the floor** (``C_{t+1} = clip(C_t e^{-eta}, c_min, c_max)``) as the second control of A2 / A2-mlp: a
  schedule that ends at ``c_min`` whatever the data say;
- **the clamp's centre** (``C_{t+1} = sqrt(c_min c_max)`` = 1.41, data-blind; referee, issue 46) for A2, A2-x10 and
  A2-scales: at gradient scale 1 the centre happens to be a good fixed threshold and passes A2's rule (so A2 cannot
  credit adaptation); A2-scales (non-inferiority to the best fixed threshold at scales 1 and 10) is the statement
  whose rule a data-blind arm can fail;
- **SlaClip-Q** (SlaClip minus its tail rule: a fixed target share 0.5 fed by the same free ``s_hat[0]``) for every
  A4 statement: what A4 credits is the tail rule's ``gamma_t``.

A2 / A2-mlp are judged against vanilla DP-SGD given the same clamp (a fixed threshold ``clip(C0, 0.1, 20)``): an
initial threshold outside the clamp is used for one step only by every adaptive rule and by the controls.  A3-autos
scores both arms alike: AUTO-S at its learning rate, SlaClip at its C0 and its learning rate (the same 5-value grid),
each chosen on the dev seeds.  A "does not hold" is decided by the mean advantage, so :func:`_decided_by` makes that
the decisive number (and the knife-edge flag sees it).

Checks (guarantees of our code, each with a mutant test in tests/slaclip/test_check_mutants.py): A1 (the accountant
books the same sigma, q, steps as vanilla *and* the release carries that noise), ``privacy-release_noise`` (every
released coordinate's noise is N(0, sigma^2 C_t^2)), ``privacy-sensitivity``, ``privacy-slot_noise``,
``privacy-controller_inputs``.  Preconditions: ``vanilla_c0_sensitive-<task>`` (fixed-threshold DP-SGD loses >= 5
points between the best and worst threshold of the clamped grid, so a 5-point gain is possible at all) and
``many_gradients_vanish``.  Seeds are the unit: the C0 cells of one seed are averaged before any test.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from matplotlib.figure import Figure

from icml26.core import (
    Report,
    judge_every,
    judge_k_of_n,
    judge_non_inferiority,
    judge_superiority,
    judge_threshold,
    mean_ci,
)

__all__ = ["judge", "LABELS", "TEST_SIZE", "arm_lr", "c0_methods", "clamped", "pick", "vanish_arms"]

TEST_SIZE = 0.2  # the test share of every task's stratified split (experiment._split)

LABELS = {
    "vanilla": "vanilla DP-SGD (fixed C0)",
    "vanilla-clamped": "vanilla DP-SGD, C0 clamped",
    "adaclip": "quantile clipping (Opacus AdaClip)",
    "autos": "AUTO-S",
    "slaclip": "SlaClip",
    "slaclip-q": "SlaClip-Q",
    "clamp-only": "clamp-only (control)",
    "decay": "decay to the floor (control)",
    "centre": "clamp's centre (control)",
    "non-private": "non-private",
}
COLORS = {"vanilla": "C0", "adaclip": "C1", "autos": "C2", "slaclip": "C3", "slaclip-q": "C4", "clamp-only": "C7"}
COLORS["decay"] = "C5"
COLORS["centre"] = "C8"
CLAMPED = "vanilla DP-SGD, clamped C0"  # the name A2's baseline carries in the statements and the budgets
A3_CELL = ("adaclip", "slaclip", "clamp-only")
A3_NAMES = {"digits_x10": "x10"}  # A3 statements at gradient scale x10 are A3-x10, A3-superiority-x10


def c0_methods(methods) -> list[str]:
    """The methods run over the C0 grid (AUTO-S runs at its own learning rate instead)."""
    return [m for m in methods if m != "autos"]


def clamped(cfg, c0: float) -> float:
    """The fixed threshold vanilla DP-SGD uses when given the adaptive rules' clamp: ``clip(C0, c_min, c_max)``."""
    return min(max(float(c0), cfg.c_min), cfg.c_max)


def pick(pairs, task: str, field: str) -> float:
    """The value for ``task`` of a ``((task, value), ...)`` config field, or a ValueError naming the field."""
    for t, v in pairs:
        if t == task:
            return float(v)
    raise ValueError(f"{field} has no value for task {task!r}: give (({task!r}, value), ...)")


def arm_lr(cfg, task: str, method: str) -> float:
    """The learning rate ``method`` trains with on ``task``: on the MLP its own (``mlp_lr``, chosen on the dev seeds),
    elsewhere the task's (one lr for every arm)."""
    if task == "digits_mlp":
        return float(dict(cfg.mlp_lr).get(method, cfg.digits_lr))
    return _task_lr(cfg, task)


def exact_accuracy(run: dict, n_test: int) -> dict:
    """``run`` with its accuracy snapped to ``100 k / n_test`` in float64 (``k`` correct test predictions).

    A measured accuracy is a float32 mean times 100, off ``100 k / n_test`` by ~1e-5 points; judged as stored, a
    bootstrap end that is exactly on a margin in counts reads on either side of it (referee 2, issue 46: the
    A3-autos-digits_mlp lower end -1.0000 read -0.99999905 and "held").  A value more than 1e-3 of a prediction
    away from a count (not a measured accuracy: a hand-made one in a test) is left as it is.  ``n_test``: the run's
    own ``n_test`` when it stores one (records from v3c on), else the task's."""
    n = int(run.get("n_test", n_test))
    if "acc" not in run or n <= 0:
        return run
    k = run["acc"] * n / 100.0
    if abs(k - round(k)) > 1e-3:
        return run
    return {**run, "acc": 100.0 * round(k) / n}


def _n_test(noise: dict) -> int:
    """A task's test-set size from its training-set size (stored records before v3c lack ``n_test``):
    ``n_test = ceil(TEST_SIZE n)`` and ``n_train = n - n_test``."""
    n_train = int(noise["n_train"])
    for n_test in range(max(1, math.floor(n_train * TEST_SIZE / (1 - TEST_SIZE)) - 2), n_train):
        if math.ceil(TEST_SIZE * (n_train + n_test)) == n_test:
            return n_test
    raise ValueError(f"no test-set size fits n_train = {n_train} at TEST_SIZE = {TEST_SIZE}")


def vanish_arms(cfg) -> list[tuple[str, str, float, str]]:
    """(key, method, scale, tail rule) of every run of the vanishing-gradient task (SlaClip-Q: A4's control)."""
    arms = []
    for scale in cfg.vanish_scales:
        for m in cfg.vanish_methods:
            if m == "slaclip":
                arms += [(f"slaclip-{rule}@x{scale:g}", m, scale, rule) for rule in cfg.vanish_rules]
            else:
                arms.append((f"{m}@x{scale:g}", m, scale, "paper"))
    return arms


def _task_methods(cfg) -> dict[str, tuple[str, ...]]:
    m = {
        "digits": cfg.digits_methods,
        "digits_mlp": cfg.mlp_methods,
        "digits_x10": cfg.x10_methods,
        "synthetic": cfg.synthetic_methods,
    }
    return {t: v for t, v in m.items() if v}


def _methods(cfg, task: str) -> tuple[str, ...]:
    return _task_methods(cfg)[task]


def _strip(run: dict) -> dict:
    return {k: v for k, v in run.items() if k != "clip_path"}


# ------------------------------------------------------------------------------------------------ judge
def judge(config, records: list[dict], report: Report) -> None:
    cfg = config
    seeds_all = list(report.seeds) if report.seeds is not None else list(range(len(records)))
    by_seed = dict(zip(seeds_all, records))
    seeds = [s for s in seeds_all if s in cfg.grid_seeds]  # the seeds that ran the whole experiment
    if not seeds:
        raise ValueError(
            f"no seed of grid_seeds = {cfg.grid_seeds}: other seeds only run the synthetic A3 cell, so there is "
            f"nothing else to judge (seeds {seeds_all})"
        )
    first = by_seed[seeds[0]]
    # accuracies judged as exact counts k / n_test (float64), not as float32 means (referee 2, issue 46)
    n_test = {t: _n_test(info) for t, info in first["noise"].items() if "n_train" in info}
    results = {
        t: {s: {k: exact_accuracy(r, n_test[t]) for k, r in by_seed[s]["runs"][t].items()} for s in seeds}
        for t in first["runs"]
    }
    vanish = {s: by_seed[s]["vanish"] for s in seeds} if first["vanish"] else {}
    audits = {s: by_seed[s]["audit"] for s in seeds} if first.get("audit") else {}
    cells = {}  # seed -> {method: run} at C0 = a3_c0 on the synthetic task, every seed
    for s in seeds_all:
        r = by_seed[s]
        if s in seeds and "synthetic" in r["runs"] and f"slaclip@{cfg.a3_c0:g}" in r["runs"]["synthetic"]:
            cells[s] = {m: results["synthetic"][s][f"{m}@{cfg.a3_c0:g}"] for m in A3_CELL if m in cfg.synthetic_methods}
        elif r.get("a3_cell"):
            nt = _n_test(r["noise"]["synthetic"])
            cells[s] = {m: exact_accuracy(run, nt) for m, run in r["a3_cell"].items()}
    sigmas = first["noise"]  # n_train, batch and epochs do not depend on the seed, so neither does sigma
    report.metrics["noise"] = sigmas
    report.metrics["grid_seeds"] = seeds
    report.metrics["runs"] = {
        t: {str(s): {k: _strip(r) for k, r in per.items()} for s, per in res.items()} for t, res in results.items()
    }
    report.metrics["vanish"] = {str(s): {k: _strip(r) for k, r in per.items()} for s, per in vanish.items()}
    report.metrics["audit"] = {str(s): a for s, a in audits.items()}
    report.metrics["a3_cell"] = {str(s): {m: _strip(r) for m, r in c.items()} for s, c in cells.items()}
    _budgets(report, cfg, sigmas)
    _claims(report, cfg, seeds, results, vanish, audits, cells)
    report.claims[:] = [_decided_by(c) for c in report.claims]
    _tables(report, cfg, seeds, results, vanish, sigmas, audits, cells)
    _figures(report, cfg, seeds, results, vanish)
    report.add_note(
        f"Privacy: epsilon = {cfg.epsilon} at delta = {cfg.delta} (Opacus RDP accountant) for every DP method; noise "
        "multiplier from opacus.accountants.utils.get_noise_multiplier for the task's sample rate and epochs. AdaClip "
        "spends part of that budget on its noised unclipped count (std B/20) and raises its gradient noise to keep the "
        "accountant's sigma; SlaClip adds no query. privacy-release_noise checks that every released coordinate "
        "carries the booked noise sigma C_t."
    )
    report.add_note(
        f"Adaptive rules (SlaClip, SlaClip-Q, AdaClip) and the controls share eta = {cfg.eta} and the clamp "
        f"[{cfg.c_min}, {cfg.c_max}], so an initial threshold outside the clamp is used for one step only; A2's "
        f"baseline is vanilla DP-SGD given that clamp (fixed threshold clip(C0, {cfg.c_min}, {cfg.c_max})). AUTO-S "
        f"uses R = {cfg.autos_r:g}, stability 0.01 and its learning rate chosen on the dev seeds; SlaClip's C0 and lr "
        "for A3-autos, and its clamp-only control's lr, were chosen on the same dev seeds by the same rule (best mean "
        "accuracy). On the MLP every arm runs at its own learning rate chosen on the dev seeds (budgets); elsewhere "
        "every method uses the task's learning rate (plain SGD, no momentum)."
    )
    report.add_note(
        "Units: seeds. Every accuracy comparison averages over the C0 grid within a seed first (units=seed) and tests "
        f"the per-seed means with a paired t test. Seeds {seeds} run everything; the other seeds "
        f"({[s for s in seeds_all if s not in seeds]}) replicate only the synthetic cell at C0 = {cfg.a3_c0:g} "
        "(A3-synthetic-c0_1)."
    )


def _budgets(report: Report, cfg, sigmas: dict) -> None:
    steps = {t: sigmas[t]["steps"] for t in _task_methods(cfg) if t in sigmas}
    per_task = ", ".join(f"{t} {n}" for t, n in steps.items())
    most = max(steps.values(), default=0)  # the longest task's steps; the note lists every task's
    grid = len(cfg.c0_grid)
    lr_grid = "{0.1, 0.2, 0.5, 1, 2}"
    mlp = ", ".join(f"{m} {v:g}" for m, v in cfg.mlp_lr) or "none: every arm at the task's lr"
    mlp_note = (
        f"; on the MLP (digits_mlp) every C0-grid arm's own learning rate was chosen on the dev seeds 0-4 over "
        f"{lr_grid} at C0 in {{0.1, 1, 10}} (5 x 3 configurations per arm, the same for every arm; picks: {mlp})"
    )
    for arm, what in (
        ("SlaClip", "run at every C0 of the grid and scored by the grid mean"),
        ("vanilla DP-SGD", "run at every C0 of the grid (and at the clamped thresholds), scored by the grid mean"),
        (
            CLAMPED,
            f"A2's baseline: vanilla at clip(C0, {cfg.c_min:g}, {cfg.c_max:g}) for every C0 of the grid, scored by "
            "the grid mean, no selection (A2-scales: at the best fixed threshold of the clamped grid chosen on the "
            "dev seeds per scale, 1 of 4)",
        ),
        ("quantile clipping", "run at every C0 of the grid and scored by the grid mean, no selection"),
        ("clamp-only", "control arm: run at every C0 of the grid, scored as SlaClip is"),
        ("decay to the floor", "control arm: run at every C0 of the grid, scored as SlaClip is"),
        ("clamp's centre", "control arm: run at every C0 of the grid, scored as SlaClip is (no knob)"),
    ):
        report.set_tuning(arm, configs=grid, steps=most, note=f"{what}{mlp_note}; steps per configuration: {per_task}")
    lrs = ", ".join(f"{t} {v:g}" for t, v in cfg.autos_lr)
    report.set_tuning(
        "AUTO-S",
        configs=5,
        steps=most,
        note=f"R = {cfg.autos_r:g}; learning rate chosen on the dev seeds 0-4 over {lr_grid} (v2 records: 5 "
        f"configurations), run here at that learning rate only ({lrs})",
    )
    c0s = ", ".join(f"{t} {v:g}" for t, v in cfg.slaclip_c0)
    slrs = ", ".join(f"{t} {v:g}" for t, v in cfg.slaclip_lr)
    report.set_tuning(
        "SlaClip in A3-autos",
        configs=grid + 5,
        steps=most,
        note=f"C0 chosen on the dev seeds 0-4 over the {grid} grid values at the task's lr ({c0s}), then the "
        f"learning rate at that C0 over AUTO-S's 5 values {lr_grid} ({slrs}): {grid} + 5 configurations, run here at "
        "that one pair",
    )
    cc0 = ", ".join(f"{t} {v:g}" for t, v in cfg.control_c0)
    clrs = ", ".join(f"{t} {v:g}" for t, v in cfg.control_lr)
    report.set_tuning(
        "clamp-only in A3-autos (control)",
        configs=grid + 5,
        steps=most,
        note=f"C0 = vanilla's dev-best of the {grid} grid values ({cc0}; clamp-only is vanilla inside the clamp), then "
        f"its own learning rate at that C0 over {lr_grid} on the dev seeds 0-4 ({clrs}): {grid} + 5 configurations, "
        "as SlaClip's",
    )


def _pairs(results: dict, task: str, method: str, seeds: list[int], c0_grid) -> tuple[list[float], list[int]]:
    """Accuracies of ``method`` over (C0, seed) cells and the seed of each cell (the unit)."""
    cells = [(c0, s) for c0 in c0_grid for s in seeds]
    return [results[task][s][f"{method}@{c0:g}"]["acc"] for c0, s in cells], [s for _, s in cells]


def _clamped_pairs(cfg, results: dict, task: str, seeds) -> list[float]:
    """Vanilla DP-SGD at the clamped threshold of each (C0, seed) cell, in :func:`_pairs`' order."""
    return [results[task][s][f"vanilla@{clamped(cfg, c0):g}"]["acc"] for c0 in cfg.c0_grid for s in seeds]


def _tracking_error(run: dict) -> float:
    """``|log C_T - log median of the non-negligible per-sample norms|`` of one trained model."""
    target = run["median_nonneg_norm"]
    if not math.isfinite(target):  # every norm negligible: track the median of all of them
        target = max(run["median_norm"], 1e-12)
    return abs(math.log(run["final_clip"]) - math.log(target))


def _claims(report: Report, cfg, seeds, results: dict, vanish: dict, audits: dict, cells: dict) -> None:
    grid = cfg.c0_grid
    sane = sorted({clamped(cfg, c0) for c0 in grid})  # the thresholds a user of the clamp can end up with
    sensitive = {}  # task -> precondition id
    for task in results:
        if "vanilla" not in _methods(cfg, task) or len(sane) < 2:
            continue
        spread = []
        for s in seeds:
            accs = [results[task][s][f"vanilla@{c:g}"]["acc"] for c in sane]
            spread.append(max(accs) - min(accs))
        sensitive[task] = f"vanilla_c0_sensitive-{task}"
        report.add_claim(
            judge_threshold(
                sensitive[task],
                f"Fixed-threshold DP-SGD is sensitive to its threshold within the range a practitioner would try "
                f"({task}): over C0 in {sane} (the C0 grid clamped to [{cfg.c_min:g}, {cfg.c_max:g}], the adaptive "
                f"rules' own range) its best-minus-worst test accuracy is >= {cfg.min_c0_spread:g} points (A2's "
                "effect size: with a smaller spread no rule can gain that much over the clamped grid).",
                ("vanilla accuracy spread over the clamped C0 grid", spread),
                threshold=cfg.min_c0_spread,
                sense=">=",
                kind="precondition",
            )
        )
    centre_gap = {}  # task -> precondition id: a data-blind threshold is not already as good as the best fixed one
    best_fixed = dict(cfg.a2_best_fixed)
    for task in results:
        if not {"vanilla", "centre"} <= set(_methods(cfg, task)) or task not in best_fixed:
            continue
        c = best_fixed[task]
        gap = [
            results[task][s][f"vanilla@{c:g}"]["acc"] - float(np.mean(_pairs(results, task, "centre", [s], grid)[0]))
            for s in seeds
        ]
        centre_gap[task] = f"centre_loses-{task}"
        report.add_claim(
            judge_threshold(
                centre_gap[task],
                f"A data-blind threshold is not already good enough ({task}): vanilla DP-SGD at the best fixed "
                f"threshold of the clamped grid chosen on the dev seeds (C = {c:g}) beats the clamp's-centre arm "
                f"(threshold sqrt(c_min c_max) = {math.sqrt(cfg.c_min * cfg.c_max):.3g} after the first step, grid "
                f"mean) by >= {cfg.min_centre_gap:g} point(s) (A3's margin): otherwise no statement can credit "
                "adaptation for matching or beating a tuned threshold here (referee 2, issue 46).",
                ("best fixed vanilla minus the centre arm (points)", gap),
                threshold=cfg.min_centre_gap,
                sense=">=",
                kind="precondition",
            )
        )
    release_failed = {s: not audits[s]["release_noise"]["passed"] for s in seeds} if audits else {}
    if "digits" in results and {"vanilla", "slaclip"} <= set(cfg.digits_methods):
        gaps, eps_v, eps_s = [], [], []
        for s in seeds:
            for c0 in grid:
                v, m = results["digits"][s][f"vanilla@{c0:g}"], results["digits"][s][f"slaclip@{c0:g}"]
                same_history = v["history"] == m["history"]
                gaps.append(abs(m["eps"] - v["eps"]) + (0.0 if same_history else 1.0) + release_failed.get(s, 0))
                eps_v.append(v["eps"])
                eps_s.append(m["eps"])
        report.add_claim(
            judge_every(
                "A1",
                "The privacy cost is unchanged: the accountant's history and epsilon are identical for vanilla DP-SGD "
                "and SlaClip at the same noise multiplier, sample rate and steps (the digits logistic-regression runs, "
                "made through make_private_slaclip), and what is booked is what is released (the seed's "
                "privacy-release_noise audit passes: every released coordinate carries noise of sd sigma C_t, and no "
                "two coordinates and no two consecutive releases share a draw as far as its correlation tests see; "
                "that audit drives the SlaClipDPOptimizer class directly, with the digits MLP arm's sigma "
                "and no Poisson sampling, so it certifies the optimizer's release, not make_private_slaclip's "
                "wiring).",
                ("|eps(SlaClip) - eps(vanilla)| + [histories differ] + [release audit fails]", gaps),
                bound=0.0,
                sense="<=",
                tol=0.0,
                baselines={"epsilon vanilla": eps_v, "epsilon SlaClip": eps_s},
                kind="check",
            )
        )
    if audits:
        _audit_checks(report, cfg, seeds, audits)
    for task, a2_id in (("digits", "A2"), ("digits_mlp", "A2-mlp"), ("digits_x10", "A2-x10")):
        methods = set(_methods(cfg, task)) if task in results else set()
        if not {"vanilla", "slaclip"} <= methods:
            continue
        m, units = _pairs(results, task, "slaclip", seeds, grid)
        model = {
            "digits": "logistic regression",
            "digits_mlp": "MLP 64-128-10",
            "digits_x10": f"logistic regression, gradient scale x{cfg.x10_scale:g}: loss x{cfg.x10_scale:g}, lr "
            f"/{cfg.x10_scale:g}, C0 grid and clamp unchanged",
        }[task]
        ctl = [c for c in ("clamp-only", "decay", "centre") if c in methods]
        c = report.add_claim(
            judge_superiority(
                a2_id,
                f"Averaged over initial thresholds C0 in {list(grid)}, SlaClip beats vanilla DP-SGD given the same "
                f"clamp (a fixed threshold clip(C0, {cfg.c_min:g}, {cfg.c_max:g})) in test accuracy at the same "
                f"epsilon (digits, {model}, eps = {cfg.epsilon:g}) by >= {cfg.a2_min_effect:g} points (grid mean per "
                "seed, paired over seeds).",
                ("SlaClip", m),
                {CLAMPED: _clamped_pairs(cfg, results, task, seeds)},
                test="ttest",
                min_effect=cfg.a2_min_effect,
                units=units,
                requires=[r[task] for r in (sensitive, centre_gap) if task in r] or None,
                controls=[f"{a2_id}-{x.replace('-', '_')}" for x in ctl],
            )
        )
        for x in ctl:
            report.add_claim(
                c.control(
                    f"{a2_id}-{x.replace('-', '_')}",
                    f"{LABELS[x]} (SlaClip with its controller replaced: "
                    + {
                        "clamp-only": "the threshold only clamped",
                        "decay": "a geometric decay to the floor c_min",
                        "centre": f"the threshold set to the clamp's centre sqrt(c_min c_max) = "
                        f"{math.sqrt(cfg.c_min * cfg.c_max):.3g} after the first step, data-blind",
                    }[x]
                    + ") is not better than clamped vanilla DP-SGD by the same rule",
                    (LABELS[x], _pairs(results, task, x, seeds, grid)[0]),
                )
            )
    _a2_scales(report, cfg, seeds, results, sensitive)
    for task in results:
        methods = _methods(cfg, task)
        if not {"adaclip", "slaclip"} <= set(methods):
            continue
        (m, units), b = _pairs(results, task, "slaclip", seeds, grid), _pairs(results, task, "adaclip", seeds, grid)[0]
        ctl = {x: _pairs(results, task, x, seeds, grid)[0] for x in ("clamp-only", "centre") if x in methods}
        top = max(grid)
        if "clamp-only" in methods and clamped(cfg, top) >= cfg.c_max:  # the clamp's ceiling, data-blind (referee 3)
            ctl["ceiling"] = [results[task][s][f"clamp-only@{top:g}"]["acc"] for _ in grid for s in seeds]
        req = [r[task] for r in (sensitive, centre_gap) if task in r] or None
        how = "grid mean per seed, paired over seeds"
        if task == "digits_x10":
            how = f"logistic regression at gradient scale x{cfg.x10_scale:g}, C0 grid and clamp unchanged; " + how
        _a3(report, A3_NAMES.get(task, task), how, m, b, ctl, units, req)
    if len(cells) >= 2:
        cs = sorted(cells)
        m = [cells[s]["slaclip"]["acc"] for s in cs]
        b = [cells[s]["adaclip"]["acc"] for s in cs]
        ctl = (
            {"clamp-only": [cells[s]["clamp-only"]["acc"] for s in cs]}
            if all("clamp-only" in cells[s] for s in cs)
            else {}
        )
        req = [sensitive["synthetic"]] if "synthetic" in sensitive else None
        how = f"C0 = {cfg.a3_c0:g} only, {len(cs)} seeds, paired over seeds"
        _a3(report, "synthetic-c0_1", how, m, b, ctl, None, req)
    for task in results:
        methods = _methods(cfg, task)
        if not {"autos", "slaclip", "clamp-only"} <= set(methods):
            continue
        lr = pick(cfg.autos_lr, task, "autos_lr")
        c0 = pick(cfg.slaclip_c0, task, "slaclip_c0")
        cc0 = pick(cfg.control_c0, task, "control_c0")
        slr = pick(cfg.slaclip_lr, task, "slaclip_lr")
        clr = pick(cfg.control_lr, task, "control_lr")
        at = "" if slr == arm_lr(cfg, task, "slaclip") else f"@lr{slr:g}"  # SlaClip at its dev lr
        cat = "" if clr == arm_lr(cfg, task, "clamp-only") else f"@lr{clr:g}"  # the control at its own
        autos = [results[task][s][f"autos@lr{lr:g}"]["acc"] for s in seeds]
        c = report.add_claim(
            judge_non_inferiority(
                f"A3-autos-{task}",
                f"SlaClip at C0 = {c0:g}, lr = {slr:g} is non-inferior (margin 1 point) to AUTO-S at R = "
                f"{cfg.autos_r:g}, lr = {lr:g} at the same epsilon ({task}; each arm's learning rate chosen on the dev "
                "seeds by best mean accuracy over the same 5 values {0.1, 0.2, 0.5, 1, 2}, SlaClip's C0 too; paired "
                "over seeds).",
                ("SlaClip in A3-autos", [results[task][s][f"slaclip@{c0:g}{at}"]["acc"] for s in seeds]),
                {f"AUTO-S at R = {cfg.autos_r:g}, lr = {lr:g}": autos},
                margin=1.0,
                requires=[sensitive[task]] if task in sensitive else None,
                controls=[f"A3-autos-{task}-clamp_only"],
            )
        )
        report.add_claim(
            c.control(
                f"A3-autos-{task}-clamp_only",
                f"The clamp-only arm (no adaptation) at vanilla's dev-best C0 = {cc0:g} and its own lr {clr:g} (chosen "
                "on the dev seeds over the same 5 values by the same rule) is not non-inferior to AUTO-S by the same "
                "rule",
                (
                    "clamp-only in A3-autos (control)",
                    [results[task][s][f"clamp-only@{cc0:g}{cat}"]["acc"] for s in seeds],
                ),
            )
        )
    if vanish:
        _a4(report, cfg, seeds, vanish)


def _task_lr(cfg, task: str) -> float:
    return {"synthetic": cfg.synthetic_lr}.get(task, cfg.digits_lr)


def _a2_scales(report: Report, cfg, seeds, results: dict, sensitive: dict) -> None:
    """A2-scales: over both gradient scales, SlaClip (grid mean over C0) is non-inferior to vanilla at the best fixed
    threshold chosen on the dev seeds for that scale; the data-blind centre arm is its control (it is the best fixed
    threshold at scale 1 and far from it at scale 10)."""
    tasks = ("digits", "digits_x10")
    if not all(t in results and {"vanilla", "slaclip", "centre"} <= set(_methods(cfg, t)) for t in tasks):
        return
    best = {t: pick(cfg.a2_best_fixed, t, "a2_best_fixed") for t in tasks}
    n = len(cfg.c0_grid)

    def per_seed(arm):  # mean over scales of the arm's grid mean, per seed
        return [float(np.mean([np.mean(_pairs(results, t, arm, [s], cfg.c0_grid)[0]) for t in tasks])) for s in seeds]

    ref = [float(np.mean([results[t][s][f"vanilla@{best[t]:g}"]["acc"] for t in tasks])) for s in seeds]
    c = report.add_claim(
        judge_non_inferiority(
            "A2-scales",
            f"Without knowing the gradient scale, SlaClip matches tuned fixed-threshold DP-SGD: averaged over C0 in "
            f"{list(cfg.c0_grid)} and over gradient scales 1 and {cfg.x10_scale:g} (digits, logistic regression, "
            f"eps = {cfg.epsilon:g}; the clamp [{cfg.c_min:g}, {cfg.c_max:g}] unchanged), its test accuracy is "
            "non-inferior (margin 1 point) to vanilla DP-SGD at the best fixed threshold of the clamped grid chosen "
            f"on the dev seeds for each scale ({', '.join(f'{t}: C = {best[t]:g}' for t in tasks)}); per seed, "
            f"{n} C0 x 2 scales averaged, paired over seeds.",
            ("SlaClip", per_seed("slaclip")),
            {"vanilla DP-SGD at the dev-best fixed threshold per scale": ref},
            margin=1.0,
            requires=[sensitive[t] for t in tasks if t in sensitive] or None,
            controls=["A2-scales-centre"],
        )
    )
    report.add_claim(
        c.control(
            "A2-scales-centre",
            f"The data-blind arm (SlaClip's optimizer with the threshold set to the clamp's centre "
            f"{math.sqrt(cfg.c_min * cfg.c_max):.3g} after the first step) is not non-inferior to tuned vanilla by "
            "the same rule",
            (LABELS["centre"], per_seed("centre")),
        )
    )


def _decided_by(claim):
    """The number that decided the verdict (the core records the worst CI / lower end; a "does not hold" is decided
    by the mean advantage): for a superiority or non-inferiority statement whose verdict is "does not hold", the
    decisive number becomes the smallest mean advantage, held against ``min_effect`` / ``-margin``, so the report's
    knife-edge flag sees it (referee, issue 46: a control rejected by 0.022 points showed knife_edge = false)."""
    rejected = [b for b in claim.baselines if b.get("verdict") == "does not hold" and "mean_advantage" in b]
    if not rejected:  # (a control's own verdict is inverted: "holds" when its arm's rule does not hold)
        return claim
    worst = min(rejected, key=lambda b: b["mean_advantage"])
    if "margin" in claim.test:
        bound, what = -claim.test["margin"], "margin"
    elif "min_effect" in claim.test:
        bound, what = claim.test["min_effect"], "min_effect"
    else:
        return claim
    dec = {
        "statistic": f"mean advantage over {worst['name']} against the {what} (the rule rejects on the mean)",
        "value": worst["mean_advantage"],
        "bound": bound,
    }
    return replace(claim, test={**claim.test, "decisive": dec})


def _a3(report: Report, task: str, how: str, m, b, ctl: dict, units, req) -> None:
    """A3-<task> (non-inferiority, margin 1) and A3-superiority-<task> against AdaClip, each with the control arms
    ``ctl`` (arm -> values in ``m``'s order): clamp-only (no adaptation), the clamp's centre (data-blind; referee 2,
    issue 46: it passed A3's rules on digits and the MLP) and the clamp's ceiling (data-blind: the clamp-only arm at
    the largest C0, a fixed threshold c_max; referee 3: at gradient scale 10 it passed A3-x10's rules)."""
    cid = f"A3-{task}"
    suffix = {x: x.replace("-", "_") for x in ctl}
    c = report.add_claim(
        judge_non_inferiority(
            cid,
            f"SlaClip is non-inferior (margin 1 point) to quantile adaptive clipping at the same epsilon ({task}; "
            f"{how}).",
            ("SlaClip", m),
            {"quantile clipping (AdaClip)": b},
            margin=1.0,
            units=units,
            requires=req,
            **({"controls": [f"{cid}-{suffix[x]}" for x in ctl]} if ctl else {"no_control": "no control arm measured"}),
        )
    )
    sid = f"A3-superiority-{task}"
    s = report.add_claim(
        judge_superiority(
            sid,
            f"SlaClip beats quantile adaptive clipping at the same epsilon ({task}; {how}); claimed only if the "
            "paired test says so.",
            ("SlaClip", m),
            {"quantile clipping (AdaClip)": b},
            test="ttest",
            units=units,
            requires=req,
            **({"controls": [f"{sid}-{suffix[x]}" for x in ctl]} if ctl else {"no_control": "no control arm measured"}),
        )
    )
    what = {
        "clamp-only": "The clamp-only arm (SlaClip without adaptation)",
        "centre": "The clamp's-centre arm (SlaClip's optimizer with the threshold set to sqrt(c_min c_max) after the "
        "first step, data-blind)",
        "ceiling": "The clamp's-ceiling arm (the clamp-only arm at the largest C0 of the grid: a fixed threshold "
        "c_max from the first step, data-blind; its value stands for every C0 of the seed)",
    }
    label = {**LABELS, "ceiling": "clamp's ceiling (control)"}
    for x, values in ctl.items():
        for claim, words in ((c, "non-inferior to"), (s, "better than")):
            report.add_claim(
                claim.control(
                    f"{claim.id}-{suffix[x]}",
                    f"{what[x]} is not {words} quantile clipping by the same rule",
                    (label[x], values),
                )
            )


def _audit_checks(report: Report, cfg, seeds, audits: dict) -> None:
    rel = [audits[s]["release_noise"] for s in seeds]
    report.add_claim(
        judge_every(
            "privacy-release_noise",
            f"Every released coordinate carries noise N(0, sigma^2 C_t^2): over {cfg.release_audit_releases} releases "
            "of one digits batch, the standardised residual (release - clean clipped sum) / (sigma C_t) of each of "
            "the d gradient coordinates and K slots passes a chi-square (variance) and a z (mean) test, Bonferroni "
            "over coordinates, and each block's pooled variance and mean pass theirs; and the noise is not re-used: "
            "no slot's residual correlates with a gradient coordinate's (max |corr| over the K d pairs, Bonferroni), "
            "no two coordinates' residuals correlate (max |corr| over all (d + K)(d + K - 1) / 2 pairs, inside a "
            "block too, Bonferroni) and the residuals do not correlate with the next release's (lag 1, pooled per "
            f"block), all at level {cfg.audit_level:g} (audit_release_noise, per seed; value = coordinates flagged + "
            "blocks failed + independence failed).",
            (
                "coordinates flagged + blocks failed + independence failed",
                [
                    a["flagged"]
                    + sum(not b["passed"] for b in a["blocks"].values())
                    + int(not a.get("independence", {"passed": True})["passed"])
                    for a in rel
                ],
            ),
            bound=0.0,
            sense="<=",
            baselines={
                "gradient noise sd / (sigma C_t)": [a["blocks"]["gradients"]["sd_over_sigma_clip"] for a in rel],
                "slot noise sd / (sigma C_t)": [a["blocks"]["slots"]["sd_over_sigma_clip"] for a in rel],
                "max |corr| slot vs gradient coordinate": [
                    a["independence"]["max_abs_corr_slot_gradient"] for a in rel if "independence" in a
                ],
                "max |corr| of any two coordinates": [
                    a["independence"]["max_abs_corr_all_pairs"]
                    for a in rel
                    if "max_abs_corr_all_pairs" in a.get("independence", {})
                ],
                "largest pooled lag-1 z of a block": [
                    a["independence"]["pooled_lag1_z"] for a in rel if "independence" in a
                ],
            },
            kind="check",
            unit="seed",
        )
    )
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


def _a4(report: Report, cfg, seeds, vanish: dict) -> None:
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
    arm_ids, wins, q_wins, made = [], [], [], {}
    for rule in cfg.vanish_rules:
        for scale in cfg.vanish_scales:
            s_key, a_key, q_key = f"slaclip-{rule}@x{scale:g}", f"adaclip@x{scale:g}", f"slaclip-q@x{scale:g}"
            if s_key not in vanish[s0] or a_key not in vanish[s0]:
                continue
            err_s = [_tracking_error(vanish[s][s_key]) for s in seeds]
            err_a = [_tracking_error(vanish[s][a_key]) for s in seeds]
            cid, qid = f"A4-{rule}-x{scale:g}", f"A4-slaclip_q-x{scale:g}"
            has_q = q_key in vanish[s0]
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
                    **({"controls": [qid]} if has_q else {"no_control": "SlaClip-Q not measured at this scale"}),
                )
            )
            if has_q and qid not in made:  # one control per scale serves both tail rules (same baseline and rule)
                made[qid] = report.add_claim(
                    c.control(
                        qid,
                        f"SlaClip-Q (SlaClip minus its tail rule: fixed target 0.5, gradient scale {scale:g}) does "
                        "not track the non-negligible norms better than quantile clipping by the same rule",
                        ("SlaClip-Q |log C_T - log median|", [_tracking_error(vanish[s][q_key]) for s in seeds]),
                    )
                )
            arm_ids.append(cid)
            wins.append(c.baselines[0]["wins"])
            q_wins.append(made[qid].baselines[0]["wins"] if has_q else None)
    if arm_ids:
        has_q = all(w is not None for w in q_wins)
        c = report.add_claim(
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
                **({"controls": ["A4-slaclip_q"]} if has_q else {"no_control": "SlaClip-Q not measured"}),
            )
        )
        if has_q:
            report.add_claim(
                c.control(
                    "A4-slaclip_q",
                    "SlaClip-Q (the tail rule removed) does not win in every arm by the same rule (its wins at each "
                    "arm's gradient scale)",
                    ("seeds won by SlaClip-Q per arm", q_wins),
                )
            )


def _tables(report: Report, cfg, seeds, results: dict, vanish: dict, sigmas: dict, audits, cells) -> None:
    for task, res in results.items():
        methods = _methods(cfg, task)
        rows = []
        arms = c0_methods(methods)
        if "vanilla" in arms:
            arms.insert(arms.index("vanilla") + 1, "vanilla-clamped")
        for m in arms:
            row = {"method": LABELS[m]}
            per_c0 = []
            for c0 in cfg.c0_grid:
                key = f"vanilla@{clamped(cfg, c0):g}" if m == "vanilla-clamped" else f"{m}@{c0:g}"
                accs = [res[s][key]["acc"] for s in seeds]
                row[f"C0={c0:g}"] = f"{np.mean(accs):.1f} ± {np.std(accs, ddof=1) if len(accs) > 1 else 0:.1f}"
                per_c0.append(np.mean(accs))
            row["mean over grid"] = float(np.mean(per_c0))
            row["worst C0"] = float(np.min(per_c0))
            row["epsilon"] = float(
                np.mean([res[s][f"{m.split('-clamped')[0]}@{c0:g}"]["eps"] for s in seeds for c0 in cfg.c0_grid])
            )
            rows.append(row)
        if "autos" in methods:
            lr = pick(cfg.autos_lr, task, "autos_lr")
            accs = [res[s][f"autos@lr{lr:g}"]["acc"] for s in seeds]
            rows.append(
                {
                    "method": f"AUTO-S (R = {cfg.autos_r:g}, lr {lr:g} chosen on the dev seeds)",
                    "mean over grid": float(np.mean(accs)),
                    "worst C0": float(np.mean(accs)),
                    "epsilon": float(np.mean([res[s][f"autos@lr{lr:g}"]["eps"] for s in seeds])),
                }
            )
        if {"vanilla", "slaclip"} <= set(methods):
            a2 = []
            for m in [x for x in ("slaclip", "clamp-only", "decay", "centre", "adaclip") if x in methods]:
                v = np.array(_pairs(results, task, m, seeds, cfg.c0_grid)[0]).reshape(len(cfg.c0_grid), -1).mean(0)
                raw = np.array(_pairs(results, task, "vanilla", seeds, cfg.c0_grid)[0]).reshape(len(cfg.c0_grid), -1)
                cl = np.array(_clamped_pairs(cfg, results, task, seeds)).reshape(len(cfg.c0_grid), -1).mean(0)
                a2.append(
                    {
                        "arm": LABELS[m],
                        "grid mean": float(v.mean()),
                        "minus vanilla, unclamped C0 (v2 rule)": float((v - raw.mean(0)).mean()),
                        "minus vanilla, clamped C0 (v3 rule)": float((v - cl).mean()),
                        "per seed (v3)": ", ".join(f"{x:+.1f}" for x in v - cl),
                    }
                )
            report.add_table(
                f"a2-rules-{task}",
                a2,
                f"Grid-mean accuracy advantage (points) of each arm over vanilla DP-SGD with the raw C0 (the v2 rule) "
                f"and with C0 clamped to [{cfg.c_min:g}, {cfg.c_max:g}] (the v3 rule), {task}, mean over seeds.",
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
            f"n_train = {info['n_train']}. The clamped-vanilla row runs vanilla at clip(C0, {cfg.c_min:g}, "
            f"{cfg.c_max:g}); the AUTO-S row is its one run per seed at its dev-chosen learning rate.",
        )
    if cells:
        cs = sorted(cells)
        d = [cells[s]["slaclip"]["acc"] - cells[s]["adaclip"]["acc"] for s in cs]
        row = {
            "seeds": len(cs),
            "SlaClip": float(np.mean([cells[s]["slaclip"]["acc"] for s in cs])),
            "AdaClip": float(np.mean([cells[s]["adaclip"]["acc"] for s in cs])),
            "mean difference": float(np.mean(d)),
            "sd of difference": float(np.std(d, ddof=1)) if len(d) > 1 else 0.0,
        }
        if all("clamp-only" in cells[s] for s in cs):
            row["clamp-only (control)"] = float(np.mean([cells[s]["clamp-only"]["acc"] for s in cs]))
        report.add_table(
            "a3-synthetic-c0_1",
            [row],
            f"A3 on the synthetic task at C0 = {cfg.a3_c0:g} over every seed (test accuracy %).",
        )
    if audits:
        report.add_table(
            "privacy-audits",
            [
                {
                    "seed": s,
                    "grad sd / sigma C_t": a["release_noise"]["blocks"]["gradients"]["sd_over_sigma_clip"],
                    "slot sd / sigma C_t": a["release_noise"]["blocks"]["slots"]["sd_over_sigma_clip"],
                    "coordinates flagged": f"{a['release_noise']['flagged']} of {a['release_noise']['coordinates']}",
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
            + (f"{cfg.audit_c0:g}" if cfg.audit_c0 is not None else "twice the batch's smallest per-sample norm")
            + ", the digits MLP arm's sigma).",
        )
    if vanish:
        rows = []
        for key, m, scale, rule in vanish_arms(cfg):
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


def _figures(report: Report, cfg, seeds, results: dict, vanish: dict) -> None:
    if results:
        fig = Figure(figsize=(5.2 * len(results), 3.8))
        for i, (task, res) in enumerate(results.items()):
            ax = fig.add_subplot(1, len(results), i + 1)
            methods = _methods(cfg, task)
            for m in c0_methods(methods):
                accs = np.array([[res[s][f"{m}@{c0:g}"]["acc"] for s in seeds] for c0 in cfg.c0_grid])
                ax.errorbar(
                    cfg.c0_grid,
                    accs.mean(1),
                    yerr=accs.std(1),
                    marker="o",
                    capsize=3,
                    label=LABELS[m],
                    color=COLORS[m],
                    ls="--" if m in ("clamp-only", "decay") else "-",
                )
            if "vanilla" in methods:
                accs = np.array([[res[s][f"vanilla@{clamped(cfg, c0):g}"]["acc"] for s in seeds] for c0 in cfg.c0_grid])
                ax.plot(
                    cfg.c0_grid,
                    accs.mean(1),
                    color=COLORS["vanilla"],
                    ls=":",
                    marker="s",
                    label=LABELS["vanilla-clamped"],
                )
            if "autos" in methods:
                lr = pick(cfg.autos_lr, task, "autos_lr")
                accs = [res[s][f"autos@lr{lr:g}"]["acc"] for s in seeds]
                ax.axhline(np.mean(accs), color=COLORS["autos"], ls="--", label=f"AUTO-S, R = 1, lr {lr:g} (dev)")
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
    adaptive = [m for m in ("slaclip", "slaclip-q", "adaclip", "decay") if m in cfg.digits_methods]
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
            for key, m, sc, _rule in vanish_arms(cfg):
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
