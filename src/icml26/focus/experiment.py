"""Reproduction: FOCUS on tiny block-diffusion LMs trained here, in a setting with real decoding waste (issue 18).

Main setting (the "wasteful" one): content-only reset-XOR chains (32 answer bits, no EOS fill, one block of 32)
decoded with one token per step (``threshold = 1.0``, ``tokens_per_step = 1``: LLaDA-style low-confidence
remasking), so the delayed-cache baseline decodes H_32/32 = 0.127 of the block's masked tokens per step.  Two models
are trained once and shared by every seed (``progress.checkpoint`` artifacts): one from scratch with the
block-diffusion objective, and one pretrained as a causal next-token LM on the same task text and then adapted
to block diffusion (as SDAR models are made).  Per seed (:func:`measure`), fresh held-out prompts are decoded
by every decoder: full recompute (B0), the neighbour-aware delayed cache (B1, which also records the layer-0/1
importance and the position scores of every masked token at every step), FOCUS, the equal-kept-count
ablations (random, bottom-dI, I^(1) only, no rules, rightmost-first, nearest-to-decoded), and a forced budget
``K``.  A secondary table decodes the EOS-padded task mix with the old schedule (``threshold = 0.9``).
:func:`judge` judges the preconditions first (B1 decodes few of the block's masked tokens per step and runs many
deep tokens per decoded token), then the claims over seeds.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
from sklearn.metrics import roc_auc_score, roc_curve

from icml26.core import (
    Experiment,
    Report,
    judge_every,
    judge_non_inferiority,
    judge_superiority,
    judge_threshold,
    register,
    seed_everything,
)

from .decoder import BlockDiffusionDecoder, DllmConfig
from .tasks import ANSWER_LEN, EOS, PAD, TASKS
from .train import TrainConfig, train_block_diffusion

MODELS = ("scratch", "ar")  # trained from scratch / AR-pretrained then adapted to block diffusion
SCORES = ("dI", "I0", "-I0", "I1", "rightmost", "nearest_decoded", "random")


@dataclass(frozen=True)
class Config:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(family="xor+eos", block_size=32))
    ar_steps: int = 600  # the AR model: this many causal-LM steps, then ``ar_bd_steps`` block-diffusion steps
    ar_bd_steps: int = 600
    threshold: float = 1.0  # main schedule: nothing passes, so exactly ``tokens_per_step`` tokens per step
    tokens_per_step: int = 1
    n_prompts: int = 64  # held-out prompts per seed
    eval_batch: int = 64
    alphas: tuple[float, ...] = (1.5,)
    alpha: float = 1.5  # the alpha the claims and ablations use
    forced_budget: int = 2
    eos_train: TrainConfig = field(default_factory=lambda: TrainConfig(family="eos", block_size=32))
    eos_threshold: float = 0.9  # secondary table: the EOS-padded mix with the old threshold schedule
    eos_prompts: int = 64
    throughput_batches: tuple[int, ...] = (1, 16, 64)
    throughput_repeats: int = 1  # per seed (seeds are the replicates of the speed claim)
    exact_prompts: int = 16  # prompts of the unlimited-budget exactness check, per seed and model
    max_decoded_share: float = 0.2  # precondition: B1 decodes <= this share of the masked tokens per step
    min_redundancy: float = 7.0  # precondition: B1 runs >= this many deep tokens per decoded token

    def model_config(self, name: str) -> TrainConfig:
        """The training recipe of model ``name``: ``"scratch"`` (``train``) or ``"ar"`` (``ar_steps`` causal-LM
        steps then ``ar_bd_steps`` block-diffusion steps, same sizes and data)."""
        if name == "scratch":
            return self.train
        if name == "ar":
            return replace(self.train, ar_steps=self.ar_steps, steps=self.ar_bd_steps)
        if name == "eos":
            return self.eos_train
        raise ValueError(f"model name must be one of {MODELS + ('eos',)}, got {name!r}")


FULL = Config(
    train=TrainConfig(
        n_layer=4,
        n_embd=64,
        n_head=4,
        n_kv_head=2,
        block_size=32,
        steps=700,
        batch_size=32,
        lr=3e-3,
        family="xor",
        loss_weight="none",
    ),
    ar_steps=600,
    ar_bd_steps=600,
    eos_train=TrainConfig(
        n_layer=4, n_embd=64, n_head=4, n_kv_head=2, block_size=32, steps=600, batch_size=32, lr=3e-3, family="eos"
    ),
)
QUICK = Config(
    train=TrainConfig(
        n_layer=3,
        n_embd=32,
        n_head=4,
        n_kv_head=2,
        block_size=32,
        steps=40,
        batch_size=16,
        lr=3e-3,
        family="xor",
        loss_weight="none",
    ),
    ar_steps=20,
    ar_bd_steps=20,
    eos_train=TrainConfig(
        n_layer=3, n_embd=32, n_head=4, n_kv_head=2, block_size=32, steps=20, batch_size=16, lr=3e-3, family="eos"
    ),
    n_prompts=8,
    eval_batch=8,
    eos_prompts=8,
    throughput_batches=(1, 4),
    exact_prompts=4,
)


def _base(cfg: Config) -> DllmConfig:
    return DllmConfig(
        block_size=cfg.train.block_size,
        threshold=cfg.threshold,
        tokens_per_step=cfg.tokens_per_step,
        suppress_ids=(PAD, EOS),  # content-only answers: EOS never appears in the main setting
    )


ABLATIONS = ("random", "bottom", "single_layer", "no_rules", "rightmost", "nearest_decoded")
AR_DECODERS = ("delayed_cache", "focus_a{a}", "random_a{a}", "rightmost_a{a}", "nearest_decoded_a{a}")


def _decoders(cfg: Config, model: str = "scratch") -> dict[str, DllmConfig]:
    base = _base(cfg)
    foc = replace(base, enable_focus=True, focus_alpha=cfg.alpha)
    d = {"full_recompute": replace(base, enable_delayed_cache=False), "delayed_cache": base}
    d.update({f"focus_a{a:g}": replace(foc, focus_alpha=a) for a in cfg.alphas})
    d.update({f"{e}_a{cfg.alpha:g}": replace(foc, eviction=e) for e in ABLATIONS})
    k = cfg.forced_budget
    d.update({f"{e}_K{k}": replace(foc, eviction=e, fixed_budget=k) for e in ("focus", "random", "bottom")})
    if model == "ar":  # the second model gets the baseline, FOCUS and the trivial rules only (compute budget)
        keep = [n.format(a=f"{cfg.alpha:g}") for n in AR_DECODERS]
        d = {n: d[n] for n in keep}
    return d


def _eos_decoders(cfg: Config) -> dict[str, DllmConfig]:
    base = DllmConfig(block_size=cfg.train.block_size, threshold=cfg.eos_threshold, suppress_ids=(PAD,))
    return {"delayed_cache": base, f"focus_a{cfg.alpha:g}": replace(base, enable_focus=True, focus_alpha=cfg.alpha)}


def _model(cfg: Config, name: str, progress) -> tuple:
    """Model ``name``, trained once and shared by every seed (a checkpoint artifact keyed by its recipe)."""
    tc = cfg.model_config(name)
    built = []

    def build() -> dict:
        model, info = train_block_diffusion(tc, log=progress.log)
        built.append(True)
        return {"state_dict": model.state_dict(), "info": info}

    blob = progress.checkpoint(f"blockdiff-{name}", asdict(tc), build)
    model = tc.model()
    model.load_state_dict(blob["state_dict"])
    model.eval()
    return model, {**blob["info"], "cached": not built}


def decoded_shares(decoded_per_step: list[list[int]], block_size: int) -> list[float]:
    """Per step: tokens decoded / masked tokens of the block at the start of that step (every sequence's steps).

    A sequence's steps run block by block; a block starts with ``block_size`` masked tokens and ends when its
    decoded count reaches ``block_size``.
    """
    out = []
    for steps in decoded_per_step:
        done = 0
        for d in steps:
            out.append(d / (block_size - done))
            done += d
            if done >= block_size:
                done = 0
    return out


def importance_scores(records: dict, seed: int) -> dict[str, np.ndarray]:
    """Scores for "decoded at this step" from B1's records: FOCUS's ``dI``, the single layers ``I0``, ``-I0`` and
    ``I1``, and the position rules ``rightmost`` (block position) and ``nearest_decoded`` (minus the distance to the
    nearest decoded token or the prefix); ``random`` is the chance reference."""
    i0, i1 = np.asarray(records["I0"], dtype=float), np.asarray(records["I1"], dtype=float)
    return {
        "dI": i1 - i0,
        "I0": i0,
        "-I0": -i0,
        "I1": i1,
        "rightmost": np.asarray(records["pos"], dtype=float),
        "nearest_decoded": -np.asarray(records["dist"], dtype=float),
        "random": np.random.default_rng(seed).random(i0.size),
    }


def decode_all(model, decoders: dict[str, DllmConfig], data: dict, batch: int, rng, record: str | None) -> dict:
    """Every decoder on the prompts of ``data``: per-prompt correctness, compute counters (and B1's records)."""
    out = {}
    n = len(data["prompt"])
    for name, dc in decoders.items():
        dc = replace(dc, seed=int(rng.integers(2**31)))
        dec = BlockDiffusionDecoder(model, dc)
        correct, tokacc, tl, kept, decoded, dps, steps, shares = [], [], 0, 0, 0, [], 0, []
        recs = {"I0": [], "I1": [], "pos": [], "dist": [], "decoded": [], "I_layers": []}
        for b0 in range(0, n, batch):
            p = torch.from_numpy(data["prompt"][b0 : b0 + batch])
            toks, st = dec.generate(p, ANSWER_LEN, record=(name == record))
            scored = data["scored"][b0 : b0 + batch]
            hit = toks.numpy() == data["answer"][b0 : b0 + batch]
            correct += (hit | ~scored).all(1).astype(float).tolist()
            content = scored & (data["answer"][b0 : b0 + batch] != EOS)  # the fields, not the EOS fill
            tokacc += ((hit & content).sum(1) / content.sum(1)).tolist()
            tl += sum(st.processed_token_layers)
            kept += sum(map(sum, st.kept_per_step))
            decoded += sum(map(sum, st.decoded_per_step))
            steps += sum(st.steps)
            dps += [x for s in st.decoded_per_step for x in s]
            shares += decoded_shares(st.decoded_per_step, dc.block_size)
            for k in recs:
                recs[k] += st.records.get(k, [])
        out[name] = {
            "correct": correct,
            "token_acc": tokacc,
            "token_layers": tl,
            "deep_tokens": kept,
            "decoded": decoded,
            "redundancy": kept / decoded,
            "steps_per_block": steps / (n * ANSWER_LEN / dc.block_size),
            "decoded_per_step_hist": np.bincount(dps, minlength=dc.block_size + 1).tolist(),
            "decoded_share": float(np.mean(shares)),
        }
        if name == record:
            out["records"] = recs
    return out


def importance_summary(recs: dict, seed: int) -> dict:
    """AUROCs of every score, ROC curves of the main ones and the layer-pair diagnostic (spec risk 8)."""
    y = np.array(recs["decoded"])
    scores = importance_scores(recs, seed)
    out = {"auroc": {k: float(roc_auc_score(y, s)) for k, s in scores.items()}, "roc": {}}
    grid = np.linspace(0, 1, 51)
    for k in ("dI", "-I0", "I1", "rightmost", "nearest_decoded"):
        fpr, tpr, _ = roc_curve(y, scores[k])
        out["roc"][k] = np.interp(grid, fpr, tpr).tolist()
    out["n_importance_records"] = int(y.size)
    il = np.array(recs["I_layers"])  # (tokens, L): AUROC of I^(b) - I^(a) for every layer pair a < b
    out["layer_pairs"] = {
        f"{i}-{j}": float(roc_auc_score(y, il[:, j] - il[:, i]))
        for i in range(il.shape[1])
        for j in range(i + 1, il.shape[1])
    }
    return out


def compute_seed(cfg: Config, models: dict, seed: int) -> dict:
    """Both main models on one held-out prompt set of the main setting, and the EOS model on the EOS-padded
    secondary set."""
    rng = seed_everything(seed)
    data = cfg.train.sample(np.random.default_rng(10_000 + seed), cfg.n_prompts, "xor")
    eos = cfg.eos_train.sample(np.random.default_rng(40_000 + seed), cfg.eos_prompts)
    out: dict = {"eos_task": eos["task"].tolist()}
    for mname in MODELS:
        res = decode_all(models[mname], _decoders(cfg, mname), data, cfg.eval_batch, rng, "delayed_cache")
        res.update(importance_summary(res.pop("records"), seed))
        out[mname] = res
    out["eos"] = decode_all(models["eos"], _eos_decoders(cfg), eos, cfg.eval_batch, rng, None)
    return out


def exactness(cfg: Config, model, seed: int) -> dict:
    """FOCUS with an unlimited budget (``alpha = inf``) against the delayed cache on the seed's extra prompts."""
    data = cfg.train.sample(np.random.default_rng(30_000 + seed), cfg.exact_prompts, "xor")
    p = torch.from_numpy(data["prompt"])
    base = _base(cfg)
    b_tok, b_st = BlockDiffusionDecoder(model, base).generate(p, ANSWER_LEN)
    f_tok, f_st = BlockDiffusionDecoder(model, replace(base, enable_focus=True, focus_alpha=math.inf)).generate(
        p, ANSWER_LEN
    )
    same = (b_tok == f_tok).all(1) & torch.tensor(
        [a == b for a, b in zip(b_st.decoded_per_step, f_st.decoded_per_step)]
    )
    return {"prompts_differing": int((~same).sum()), "n": int(same.numel())}


def measure_throughput(cfg: Config, model, seed: int) -> dict:
    """Wall and CPU time of ``generate`` for the delayed cache and FOCUS at each batch size, on the seed's prompts.

    Decoders alternate per batch size (B1, FOCUS, B1, FOCUS, ...) so slow drifts of a shared CPU hit both.
    """
    data = cfg.train.sample(np.random.default_rng(20_000 + seed), max(cfg.throughput_batches), "xor")
    decs = _decoders(cfg)
    names = ("delayed_cache", f"focus_a{cfg.alpha:g}")
    dec = {n: BlockDiffusionDecoder(model, decs[n]) for n in names}
    res = {f"{n}|{bs}": {"tok_per_s": [], "tok_per_cpu_s": []} for n in names for bs in cfg.throughput_batches}
    for bs in cfg.throughput_batches:
        p = torch.from_numpy(data["prompt"][:bs])
        for n in names:
            dec[n].generate(p[:1], ANSWER_LEN)  # warm-up
        for _ in range(cfg.throughput_repeats):
            for n in names:
                t0, c0 = time.perf_counter(), time.process_time()
                _, st = dec[n].generate(p, ANSWER_LEN)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                r = res[f"{n}|{bs}"]
                r["tok_per_s"].append(bs * ANSWER_LEN / wall)
                r["tok_per_cpu_s"].append(bs * ANSWER_LEN / max(cpu, 1e-9))
                r["token_layers"] = sum(st.processed_token_layers)
    return res


def measure(cfg: Config, seed: int, progress) -> dict:
    """One seed: both models on fresh held-out prompts, the exactness checks and the throughput probe."""
    loaded = {m: _model(cfg, m, progress) for m in MODELS + ("eos",)}
    models = {m: v[0] for m, v in loaded.items()}
    out = progress.cached("decode", lambda: compute_seed(cfg, models, seed))
    out["exact"] = progress.cached("exact", lambda: {m: exactness(cfg, models[m], seed) for m in MODELS})
    out["throughput"] = progress.cached("throughput", lambda: measure_throughput(cfg, models["scratch"], seed))
    out["train"] = {m: v[1] for m, v in loaded.items()}
    return out


def _token_layer_ratio(r: dict, name: str) -> float:
    return r[name]["token_layers"] / r["delayed_cache"]["token_layers"]


def _redundancy_ratio(r: dict, name: str) -> float:
    return r[name]["redundancy"] / r["delayed_cache"]["redundancy"]


def judge(cfg: Config, per_seed: list[dict], report: Report) -> None:
    seeds = report.seeds or list(range(len(per_seed)))
    thr = [r["throughput"] for r in per_seed]
    a = f"focus_a{cfg.alpha:g}"
    k = cfg.forced_budget
    sc = [r["scratch"] for r in per_seed]
    ar = [r["ar"] for r in per_seed]
    b1 = [r["delayed_cache"] for r in sc]
    L = cfg.train.n_layer

    # (0) preconditions: the delayed-cache baseline wastes compute (FOCUS exists to evict that waste)
    report.add_claim(
        judge_threshold(
            "baseline_decodes_few",
            f"The delayed-cache baseline decodes at most {cfg.max_decoded_share:.0%} of the block's masked tokens "
            "per step (mean over steps), so most of each step's masked tokens are processed without being decoded.",
            ("B1 decoded / masked per step", [r["decoded_share"] for r in b1]),
            threshold=cfg.max_decoded_share,
            sense="<=",
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            "baseline_redundancy",
            f"The delayed-cache baseline runs >= {cfg.min_redundancy:g} tokens through the deep layers per decoded "
            f"token (>= {1 - 1 / cfg.min_redundancy:.0%} of its token-layers go to tokens it does not decode that "
            "step; the paper's baselines: 7.5-21).",
            ("B1 redundancy (deep tokens / decoded)", [r["redundancy"] for r in b1]),
            threshold=cfg.min_redundancy,
            kind="precondition",
        )
    )
    waste = ["baseline_decodes_few", "baseline_redundancy"]

    # (i) importance change predicts decodability, against single layers and position rules
    for tag, rs in (("", sc), ("ar_", ar)):
        au = {key: [r["auroc"][key] for r in rs] for key in SCORES}
        who = "" if not tag else " (AR-pretrained model)"
        report.add_claim(
            judge_threshold(
                f"{tag}importance_auroc",
                f"The layer-0 to layer-1 importance change dI predicts which masked tokens are decoded this step "
                f"(AUROC >= 0.75){who}.",
                ("dI AUROC", au["dI"]),
                threshold=0.75,
            )
        )
        if not tag:
            report.add_claim(
                judge_superiority(
                    "importance_vs_single_layer",
                    "dI's AUROC is at least 0.05 above each single-layer score: I^(0) with FOCUS's sign, -I^(0), and "
                    "I^(1).",
                    ("dI AUROC", au["dI"]),
                    {"+I0 AUROC": au["I0"], "-I0 AUROC": au["-I0"], "I1 AUROC": au["I1"]},
                    test="ttest",
                    min_effect=0.05,
                )
            )
        report.add_claim(
            judge_superiority(
                f"{tag}importance_vs_position",
                f"dI's AUROC beats the best trivial rule{who}: rightmost-first, nearest-to-a-decoded-token, "
                "+I^(0) and -I^(0).",
                ("dI AUROC", au["dI"]),
                {
                    "rightmost AUROC": au["rightmost"],
                    "nearest-decoded AUROC": au["nearest_decoded"],
                    "+I0 AUROC": au["I0"],
                    "-I0 AUROC": au["-I0"],
                },
                test="ttest",
            )
        )
    # (ii) compute
    tl_ratio = [_token_layer_ratio(r, a) for r in sc]
    report.add_claim(
        judge_threshold(
            "token_layers_half",
            f"FOCUS at alpha={cfg.alpha:g} processes at most half the token-layers of the delayed-cache baseline "
            f"(all {L} layers; layers 0-1 always run on the whole processing set).",
            ("FOCUS/delayed-cache token-layer ratio", tl_ratio),
            threshold=0.5,
            sense="<=",
            requires=waste,
        )
    )
    red_ratio = [_redundancy_ratio(r, a) for r in sc]
    report.add_claim(
        judge_threshold(
            "redundancy_half",
            f"FOCUS at alpha={cfg.alpha:g} has at most half the delayed-cache baseline's redundancy ratio (deep "
            "tokens per decoded token; spec criterion ii).",
            ("FOCUS/delayed-cache redundancy ratio", red_ratio),
            threshold=0.5,
            sense="<=",
            requires=waste,
        )
    )
    # (iii) quality: per-prompt token accuracy over the content tokens, in %; prompts averaged per seed
    units = [s for s, r in zip(seeds, sc) for _ in r["delayed_cache"]["token_acc"]]

    def pooled(rs: list[dict], name: str) -> list[float]:
        return [100 * c for r in rs for c in r[name]["token_acc"]]

    for tag, rs in (("", sc), ("ar_", ar)):
        who = "" if not tag else " (AR-pretrained model)"
        report.add_claim(
            judge_non_inferiority(
                f"{tag}accuracy_non_inferior",
                f"FOCUS (alpha={cfg.alpha:g}) token accuracy stays within 2 points of the delayed-cache baseline{who}.",
                (f"FOCUS a={cfg.alpha:g} token accuracy %", pooled(rs, a)),
                {"delayed cache": pooled(rs, "delayed_cache")},
                margin=2.0,
                units=units,
                requires=waste,
            )
        )
    # (iv) which tokens are kept: top-dI against random/bottom at a forced K, and against the position rules
    report.add_claim(
        judge_superiority(
            "forced_budget_top_beats_random_bottom",
            f"At a forced budget K={k}, keeping the top-dI tokens beats random and bottom-dI eviction by >= 20 "
            "points of token accuracy.",
            (f"top-dI K={k} %", pooled(sc, f"focus_K{k}")),
            {f"random K={k}": pooled(sc, f"random_K{k}"), f"bottom-dI K={k}": pooled(sc, f"bottom_K{k}")},
            test="ttest",
            min_effect=20.0,
            units=units,
            requires=["baseline_decodes_few"],
        )
    )
    report.add_claim(
        judge_superiority(
            "eviction_beats_position_rules",
            f"FOCUS's dI selection (alpha={cfg.alpha:g}) gives higher token accuracy than keeping the same number of "
            "tokens by a position rule (rightmost-first, nearest-to-decoded), both with the structural rules.",
            (f"FOCUS a={cfg.alpha:g} %", pooled(sc, a)),
            {
                f"rightmost a={cfg.alpha:g}": pooled(sc, f"rightmost_a{cfg.alpha:g}"),
                f"nearest-decoded a={cfg.alpha:g}": pooled(sc, f"nearest_decoded_a{cfg.alpha:g}"),
            },
            test="ttest",
            units=units,
            requires=["baseline_decodes_few"],
        )
    )
    # (v) throughput at the largest batch: one value per seed (the median over that seed's repeats)
    bmax = max(cfg.throughput_batches)
    report.add_claim(
        judge_superiority(
            "throughput_speedup",
            f"FOCUS generates more tokens/s than the delayed-cache baseline at batch {bmax} (measured on this CPU).",
            (f"FOCUS tok/s b={bmax}", [float(np.median(t[f"{a}|{bmax}"]["tok_per_s"])) for t in thr]),
            {f"delayed cache tok/s b={bmax}": [float(np.median(t[f"delayed_cache|{bmax}"]["tok_per_s"])) for t in thr]},
            test="ttest",
            requires=waste,
        )
    )
    # (vi) check: with an unlimited budget FOCUS is the delayed cache, token for token (by construction)
    report.add_claim(
        judge_every(
            "unlimited_budget_exact",
            "FOCUS with alpha = inf (no eviction) decodes exactly the delayed-cache baseline's tokens in the same "
            f"steps, on {cfg.exact_prompts} held-out reset-XOR prompts per seed and model.",
            ("prompts differing", [r["exact"][m]["prompts_differing"] for r in per_seed for m in MODELS]),
            bound=0,
            sense="<=",
            kind="check",
        )
    )
    for arm, note in (
        ("FOCUS", f"alpha={cfg.alpha:g} fixed (the paper's default); tau and tokens_per_step shared by every decoder"),
        ("delayed", "no hyperparameter"),
        ("random", "same kept count as FOCUS"),
        ("bottom-dI", "same kept count as FOCUS"),
        ("rightmost", "same kept count and structural rules as FOCUS"),
        ("nearest-decoded", "same kept count and structural rules as FOCUS"),
        ("top-dI", "forced K shared with the random / bottom-dI arms"),
    ):
        report.set_tuning(arm, configs=1, steps=0, note=note)

    _tables(cfg, per_seed, report, thr, a, k)
    _figures(report, cfg, per_seed, a)


def _tables(cfg: Config, per_seed: list[dict], report: Report, thr: list[dict], a: str, k: int) -> None:
    L = cfg.train.n_layer
    for mname in MODELS:
        rows = []
        for name in _decoders(cfg, mname):
            rs = [r[mname][name] for r in per_seed]
            acc = [100 * np.mean(r["token_acc"]) for r in rs]
            rows.append(
                {
                    "decoder": name,
                    "token accuracy % (mean over seeds)": float(np.mean(acc)),
                    "sd": float(np.std(acc, ddof=1)) if len(acc) > 1 else 0.0,
                    "exact match %": float(np.mean([100 * np.mean(r["correct"]) for r in rs])),
                    "token-layers / delayed cache": float(
                        np.mean([_token_layer_ratio(r[mname], name) for r in per_seed])
                    ),
                    "redundancy (deep tokens / decoded)": float(np.mean([r["redundancy"] for r in rs])),
                    "redundancy / delayed cache": float(np.mean([_redundancy_ratio(r[mname], name) for r in per_seed])),
                    "steps per block": float(np.mean([r["steps_per_block"] for r in rs])),
                    "decoded / masked per step": float(np.mean([r["decoded_share"] for r in rs])),
                }
            )
        what = "trained from scratch" if mname == "scratch" else "AR-pretrained, then adapted to block diffusion"
        report.add_table(
            f"decoders_{mname}",
            rows,
            f"Main setting (reset-XOR chains, tau={cfg.threshold:g}, {cfg.tokens_per_step} token(s) per step), model "
            f"{what}; mean over seeds. Redundancy = tokens run through layers 2..{L - 1} per decoded token; "
            f"token-layers count decode steps only (all {L} layers; layers 0-1 are {2 / L:.0%} of B1's).",
        )
        au = {key: [r[mname]["auroc"][key] for r in per_seed] for key in SCORES}
        report.add_table(
            f"auroc_{mname}",
            [{"score": key, "mean": float(np.mean(v)), "per seed": [round(x, 4) for x in v]} for key, v in au.items()],
            f"AUROC for 'decoded at this step' under the delayed cache, model {what}.",
        )
    sc = [r["scratch"] for r in per_seed]
    pairs = sorted(sc[0]["layer_pairs"], key=lambda p: -np.mean([r["layer_pairs"][p] for r in sc]))
    report.add_table(
        "layer_pairs",
        [
            {
                "layers a-b": p,
                "AUROC scratch": float(np.mean([r["layer_pairs"][p] for r in sc])),
                "AUROC AR-pretrained": float(np.mean([r["ar"]["layer_pairs"][p] for r in per_seed])),
            }
            for p in pairs[:12]
        ],
        "Which layer pair's importance change I^(b) - I^(a) best predicts decoding (spec risk 8; FOCUS uses 0-1); "
        "the 12 best pairs of the from-scratch model.",
    )
    eos_rows = []
    for name in _eos_decoders(cfg):
        rs = [r["eos"][name] for r in per_seed]
        eos_rows.append(
            {
                "decoder": name,
                "token accuracy % (content, EOS fill excluded)": float(
                    np.mean([100 * np.mean(r["token_acc"]) for r in rs])
                ),
                "decoded / masked per step": float(np.mean([r["decoded_share"] for r in rs])),
                "redundancy": float(np.mean([r["redundancy"] for r in rs])),
                "token-layers / delayed cache": float(np.mean([_token_layer_ratio(r["eos"], name) for r in per_seed])),
                "exact match %": float(np.mean([100 * np.mean(r["correct"]) for r in rs])),
                "steps per block": float(np.mean([r["steps_per_block"] for r in rs])),
            }
        )
    report.add_table(
        "eos_padded",
        eos_rows,
        f"Secondary setting: the EOS-padded task mix ({', '.join(TASKS)}; answers 4-12 content tokens + EOS fill to "
        f"{ANSWER_LEN}) with the threshold schedule tau={cfg.eos_threshold:g}, decoded by a third model of the same "
        f"size trained on that mix ({cfg.eos_train.steps} steps); {cfg.eos_prompts} prompts per seed.",
    )
    trows = []
    for bs in cfg.throughput_batches:

        def med(name: str, key: str, bs: int = bs) -> float:  # median over seeds of each seed's median
            return float(np.median([np.median(t[f"{name}|{bs}"][key]) for t in thr]))

        def ratio(key: str, bs: int = bs) -> float:
            return float(
                np.median([np.median(t[f"{a}|{bs}"][key]) / np.median(t[f"delayed_cache|{bs}"][key]) for t in thr])
            )

        trows.append(
            {
                "batch": bs,
                "delayed cache tok/s": med("delayed_cache", "tok_per_s"),
                "FOCUS tok/s": med(a, "tok_per_s"),
                "measured speed ratio": ratio("tok_per_s"),
                "CPU-time speed ratio": ratio("tok_per_cpu_s"),
                "token-layer ratio (FLOP proxy)": float(
                    np.mean([t[f"{a}|{bs}"]["token_layers"] / t[f"delayed_cache|{bs}"]["token_layers"] for t in thr])
                ),
            }
        )
    report.add_table(
        "throughput",
        trows,
        "Per seed a probe on the seed's own prompts (decoders interleaved), from-scratch model; median over seeds. "
        "CPU, shared cores: wall-clock numbers are noisy. The GPU benchmark is benchmarks/focus_throughput.py.",
    )
    info = per_seed[0]["train"]
    report.metrics.update(
        {
            "train": {m: {kk: v for kk, v in info[m].items() if not kk.endswith("curve")} for m in info},
            "baseline_decoded_share": {m: [r[m]["delayed_cache"]["decoded_share"] for r in per_seed] for m in MODELS},
            "baseline_redundancy": {m: [r[m]["delayed_cache"]["redundancy"] for r in per_seed] for m in MODELS},
            "auroc": {m: {key: [r[m]["auroc"][key] for r in per_seed] for key in SCORES} for m in MODELS},
            "token_layer_ratio": {m: [_token_layer_ratio(r[m], a) for r in per_seed] for m in MODELS},
            "redundancy_ratio": {m: [_redundancy_ratio(r[m], a) for r in per_seed] for m in MODELS},
            "token_accuracy": {
                m: {n: [100 * float(np.mean(r[m][n]["token_acc"])) for r in per_seed] for n in _decoders(cfg, m)}
                for m in MODELS
            },
            "exact_match": {
                m: {n: [100 * float(np.mean(r[m][n]["correct"])) for r in per_seed] for n in _decoders(cfg, m)}
                for m in MODELS
            },
            "throughput": thr,
        }
    )
    for m in MODELS + ("eos",):
        i = info[m]
        tc = cfg.model_config(m)
        trained = "loaded from cache" if i.get("cached") else f"{i['train_cpu_s']:.0f} CPU s"
        ar_txt = f"{tc.ar_steps} causal-LM steps (final loss {i['ar_final_loss']:.3f}) then " if tc.ar_steps else ""
        report.add_note(
            f"Model '{m}': L={tc.n_layer}, E={tc.n_embd}, H={tc.n_head}, Hkv={tc.n_kv_head}, B={tc.block_size}, "
            f"data {tc.family}{f' (reset p {tc.reset_p:g})' if tc.family != 'eos' else ''}; {ar_txt}{tc.steps} "
            f"block-diffusion steps (final loss {i['final_loss']:.3f}, {trained}); shared by all seeds."
        )
    report.add_note(
        "Preconditions are judged on the from-scratch model's delayed-cache decoding of the main setting; the "
        "AR-pretrained model's B1 numbers are in decoders_ar (same task and schedule)."
    )
    f = [r["scratch"][a]["deep_tokens"] / r["scratch"]["delayed_cache"]["deep_tokens"] for r in per_seed]
    report.add_note(
        f"Depth: L={L}, so layers 0-1 (never evicted) are {2 / L:.0%} of B1's token-layers and the token-layer "
        f"ratio is at least {2 / L:.2f} whatever FOCUS keeps. FOCUS keeps {np.mean(f):.3f} of B1's deep tokens; at "
        f"L=10 the same kept share would give a token-layer ratio of {0.2 + 0.8 * np.mean(f):.3f} (arithmetic, not "
        "measured: an L=10 model did not learn the task within our CPU budget, see docs/focus.md)."
    )


def _figures(report: Report, cfg: Config, per_seed: list[dict], a: str) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.5))
    for i, m in enumerate(MODELS):
        ax = fig.add_subplot(1, 2, i + 1)
        grid = np.linspace(0, 1, 51)
        for key in ("dI", "-I0", "I1", "rightmost", "nearest_decoded"):
            tpr = np.mean([r[m]["roc"][key] for r in per_seed], axis=0)
            auc = np.mean([r[m]["auroc"][key] for r in per_seed])
            ax.plot(grid, tpr, label=f"{key} ({auc:.3f})")
        ax.plot([0, 1], [0, 1], "k:", lw=0.8)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.set_title(f"model: {m}")
        ax.legend(fontsize=7)
    fig.suptitle("ROC of scores for 'decoded at this step' (delayed cache, main setting)")
    fig.tight_layout()
    report.add_figure("importance_roc", fig, "ROC of importance and position scores, both models.")

    fig = Figure(figsize=(5, 3.5))
    ax = fig.add_subplot()
    for setting, get in (("main", lambda r: r["scratch"]), ("EOS-padded", lambda r: r["eos"])):
        h = np.sum([get(r)["delayed_cache"]["decoded_per_step_hist"] for r in per_seed], axis=0).astype(float)
        ax.plot(np.arange(h.size), h / h.sum(), "o-", label=f"B1, {setting}")
    ax.set_xlabel("tokens decoded in one step")
    ax.set_ylabel("share of steps")
    ax.set_title("Tokens decoded per step (delayed cache)")
    ax.legend()
    fig.tight_layout()
    report.add_figure("tokens_per_step", fig, "Distribution of tokens decoded per step, main vs EOS-padded setting.")

    fig = Figure(figsize=(5, 3.5))
    ax = fig.add_subplot()
    info = per_seed[0]["train"]
    for m in MODELS:
        ar_c, bd_c = info[m].get("ar_loss_curve", []), info[m]["loss_curve"]
        if ar_c:
            ax.plot(10 * np.arange(len(ar_c)), ar_c, label=f"{m}: causal LM")
        off = 10 * len(ar_c)
        ax.plot(off + 10 * np.arange(len(bd_c)), bd_c, label=f"{m}: block diffusion")
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss")
    ax.set_title("Training curves of the two models")
    ax.legend(fontsize=8)
    fig.tight_layout()
    report.add_figure("training_loss", fig, "Training loss (every 10th step) of both models.")


EXPERIMENT = register(
    Experiment(
        slug="focus",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 3},
        measure=measure,
        judge=judge,
        threads=1,  # tiny models on a shared machine: one thread per seed avoids oversubscription
        timing_statements=("throughput_speedup",),  # wall-clock numbers: verify gives them timing_rtol
    )
)
