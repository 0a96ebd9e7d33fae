"""Reproduction: end-to-end page parsing vs a crop-OCR-merge cascade, and category vs page-level rewards.

Per seed: synthetic training and test pages (half 1-column, half 2-column; tables mostly without ruling lines),
OCR-bootstrapped labels for the training pages (known layout + RapidOCR on each crop, validators drop bad pages),
the cascade on the test pages (RapidOCR; Tesseract on a few pages when installed, reported only), then a
TinyPageParser trained with teacher forcing on the labels (SFT) and three arms from the same SFT checkpoint with
the same number of extra optimizer steps: more SFT (``sft_only``), GRPO with per-category rewards
(``category_rl``, the method) and GRPO with one page-level reward (``page_rl``).  Everything is scored on the test
pages' ground truth with the OmniDocBench metrics.  Seeds are the units of every judged statement.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

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

from .data import PageSpec, SyntheticPages, elements_to_markdown
from .metrics import evaluate, overall, teds
from .model import PageTokenizer, TinyPageParser
from .ocr import CascadeParser, RapidOCREngine, TesseractEngine, bootstrap_labels
from .rl import CategoryReward, grpo_step, page_reward

METRICS = ("TextEdit", "FormulaEdit", "TEDS", "TEDS-S", "ReadingOrder", "Overall")
ARMS = ("cascade", "sft_only", "page_rl", "category_rl")


@dataclass(frozen=True)
class Config:
    """Sizes of one replicate (pages, steps) and the page generator's knobs."""

    n_train: int = 160
    n_test: int = 40
    frac_2col: float = 0.5
    table_rule_prob: float = 0.3  # tuned for the precondition (cascade finds tables by their ruling lines)
    col_offset: int = 18
    sft_steps: int = 600
    batch: int = 16
    lr: float = 3e-3
    rl_steps: int = 20
    rl_batch: int = 6
    group_size: int = 4
    temperature: float = 1.0
    rl_lr: float = 3e-4
    beta: float = 0.02
    n_tess: int = 6  # test pages also parsed by the Tesseract cascade when installed (reported, not judged)
    dilations: tuple[tuple[int, int], ...] = ((3, 5), (4, 5), (2, 4), (3, 8))  # cascade tuning grid
    n_tune: int = 6  # training pages used to pick the cascade's dilation

    def spec(self) -> PageSpec:
        return PageSpec(table_rule_prob=self.table_rule_prob, col_offset=self.col_offset)


FULL = Config()
QUICK = Config(n_train=30, n_test=10, sft_steps=60, rl_steps=2, rl_batch=4, n_tess=0, dilations=((3, 5),), n_tune=0)


def _label_elements(lab: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items()} for e in lab]


def _scores(preds: list[str], pages: list[list[dict]], layouts: list[str]) -> dict:
    r = evaluate(pages, preds)
    out = {k: r[k] for k in METRICS}
    out["errors"] = r["errors"]
    for lay in ("1col", "2col"):
        idx = [i for i, x in enumerate(layouts) if x == lay]
        if idx:
            s = evaluate([pages[i] for i in idx], [preds[i] for i in idx])
            out[lay] = {k: s[k] for k in METRICS}
    return out


def _worked_examples() -> list[float]:
    """|computed - hand value| on the spec's worked examples (a check that our metrics are the definitions)."""
    from .metrics import evaluate_page, ned, normalize_text, reading_order_ned

    g = "<table><tr><td>ab</td><td>cd</td></tr><tr><td>ef</td><td>gh</td></tr></table>"
    p = g.replace(">ab<", ">ac<")
    merged = "<table><tr><td>ab</td><td>cd</td></tr><tr><td colspan='2'>efgh</td></tr></table>"
    page = evaluate_page("x\n\nyyyyyyy", [{"type": "text", "content": "xx"}, {"type": "text", "content": "yyyyyyyy"}])
    return [
        abs(teds(g, g) - 1.0),
        abs(teds(p, g) - (1 - 0.5 / 6)),
        abs(teds(p, g, structure_only=True) - 1.0),
        abs(teds(merged, g, structure_only=True) - (1 - 2 / 6)),
        abs(ned("abc", "") - 1.0),
        abs(reading_order_ned([0, 1], [1, 0]) - 1.0),
        abs(page["text_edit"] - 2 / 10),  # pooled (1+1)/(2+8), not the mean of ratios
        abs(overall(0.1, 80, 90) - 260 / 3),
        float(normalize_text("Hello, World!\n") != "HelloWorld"),
    ]


def _train_sft(model, X, Y, steps, cfg, gen, opt=None, losses=None):
    opt = opt or torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    losses = [] if losses is None else losses
    model.train()
    for _ in range(steps):
        idx = torch.randint(0, X.shape[0], (min(cfg.batch, X.shape[0]),), generator=gen)
        loss = model.loss(X[idx], Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return opt, losses


def measure(cfg: Config, seed: int, progress=None) -> dict:
    """One replicate: data, labels, cascade, SFT and the three arms, all scored on the test pages."""
    seed_everything(seed)
    spec = cfg.spec()
    train = SyntheticPages(cfg.n_train, 7919 * seed + 1, spec, cfg.frac_2col)
    test = SyntheticPages(cfg.n_test, 7919 * seed + 2, spec, cfg.frac_2col)
    gt = [test[i]["elements"] for i in range(len(test))]
    layouts = list(test.layouts)
    engine = RapidOCREngine(threads=1)
    rec: dict = {"seed": seed, "metric_errors": _worked_examples()}

    # -- bootstrapped labels (known layout + OCR on crops + validators) --
    tr_imgs = [train.pil(i) for i in range(len(train))]
    tr_gt = [train[i]["elements"] for i in range(len(train))]
    labels, keep = bootstrap_labels(tr_imgs, tr_gt, [engine])
    kept = np.flatnonzero(keep)
    if kept.size < 4:
        kept = np.arange(len(train))
    lab_md = [elements_to_markdown(labels[i]) for i in kept]
    lq = evaluate([tr_gt[i] for i in kept], lab_md)
    rec["labels"] = {"kept": int(keep.sum()), "n": len(train), **{k: lq[k] for k in METRICS}}

    # -- cascade baseline: dilation picked on training pages (same budget idea: a small grid) --
    best, tune = cfg.dilations[0], []
    if len(cfg.dilations) > 1 and cfg.n_tune:
        for dil in cfg.dilations:
            cp = CascadeParser(engine, dilate=dil)
            s = evaluate(tr_gt[: cfg.n_tune], [cp.parse(tr_imgs[i]) for i in range(cfg.n_tune)])["Overall"]
            tune.append({"dilate": list(dil), "Overall": s})
        best = tuple(max(tune, key=lambda t: t["Overall"])["dilate"])
    rec["cascade_tuning"] = tune
    cascade = CascadeParser(engine, dilate=best)
    preds = {"cascade": [cascade.parse(test.pil(i)) for i in range(len(test))]}
    scores = {"cascade": _scores(preds["cascade"], gt, layouts)}
    if cfg.n_tess and TesseractEngine.available():
        tp = CascadeParser(TesseractEngine(), dilate=best)
        n = min(cfg.n_tess, len(test))
        tpred = [tp.parse(test.pil(i)) for i in range(n)]
        scores["cascade_tesseract"] = _scores(tpred, gt[:n], layouts[:n])
        scores["cascade_rapidocr_same_pages"] = _scores(preds["cascade"][:n], gt[:n], layouts[:n])

    # -- SFT on the labels --
    tok = PageTokenizer()
    X = torch.tensor(train.images()[kept])[:, None]
    Y = tok.batch([tok.encode(labels[i]) for i in kept], 96)
    Xt = torch.tensor(test.images())[:, None]
    gen = torch.Generator().manual_seed(seed)
    model = TinyPageParser(len(tok))
    opt, sft_losses = _train_sft(model, X, Y, cfg.sft_steps, cfg, gen)
    rec["sft_loss"] = sft_losses
    rec["n_params"] = int(sum(p.numel() for p in model.parameters()))
    sft_state = copy.deepcopy(model.state_dict())
    refs = [_label_elements(labels[i]) for i in kept]

    curves = {}
    for k, arm in enumerate(("sft_only", "page_rl", "category_rl")):
        m = TinyPageParser(len(tok))
        m.load_state_dict(sft_state)
        g = torch.Generator().manual_seed(1000 * seed + k)
        if arm == "sft_only":
            o = torch.optim.AdamW(m.parameters(), lr=cfg.lr)
            o.load_state_dict(opt.state_dict())
            _, extra = _train_sft(m, X, Y, cfg.rl_steps, cfg, g, o)
            curves[arm] = extra
        else:
            ref = TinyPageParser(len(tok))
            ref.load_state_dict(sft_state)
            ref.eval()
            o = torch.optim.AdamW(m.parameters(), lr=cfg.rl_lr)
            reward = CategoryReward() if arm == "category_rl" else page_reward
            curve = []
            for _ in range(cfg.rl_steps):
                idx = torch.randint(0, X.shape[0], (min(cfg.rl_batch, X.shape[0]),), generator=g)
                st = grpo_step(
                    m,
                    ref,
                    X[idx],
                    [refs[i] for i in idx.tolist()],
                    tok,
                    o,
                    reward=reward,
                    group_size=cfg.group_size,
                    temperature=cfg.temperature,
                    beta=cfg.beta,
                    generator=g,
                )
                curve.append(st)
            curves[arm] = curve
        m.eval()
        out = m.generate(Xt)
        preds[arm] = [tok.decode(s.tolist()) for s in out]
        scores[arm] = _scores(preds[arm], gt, layouts)
    rec["curves"] = curves
    rec["scores"] = scores
    show = sorted({0, len(test) - 1})  # the first pages are 2-column, the last 1-column
    rec["examples"] = {a: [preds[a][i] for i in show] for a in preds}
    rec["examples"]["truth"] = [test[i]["markdown"] for i in show]
    rec["examples"]["index"] = show
    rec["test_seed"] = 7919 * seed + 2
    return rec


# -- judge ------------------------------------------------------------------------------------------------------
def _vals(records, arm, key, layout=None):
    out = []
    for r in records:
        s = r["scores"][arm]
        s = s[layout] if layout else s
        out.append(float("nan") if s[key] is None else float(s[key]))  # nan (no sample) is stored as null
    return out


def judge(cfg: Config, records: list[dict], report: Report) -> None:
    pre = ["cascade_order_breaks_on_2col", "cascade_tables_below_0.9"]
    d = [
        r["scores"]["cascade"]["2col"]["ReadingOrder"] - 2 * r["scores"]["cascade"]["1col"]["ReadingOrder"]
        for r in records
    ]
    report.add_claim(
        judge_threshold(
            pre[0],
            "The cascade's reading-order NED on 2-column pages is at least twice its 1-column value "
            "(per seed: RO_2col - 2 RO_1col >= 0).",
            ("cascade RO_2col - 2 RO_1col", d),
            threshold=0.0,
            sense=">=",
            kind="precondition",
        )
    )
    report.add_claim(
        judge_threshold(
            pre[1],
            "The cascade's table TEDS-S is below 0.9.",
            ("cascade TEDS-S", _vals(records, "cascade", "TEDS-S")),
            threshold=0.9,
            sense="<=",
            kind="precondition",
        )
    )
    test = "ttest"
    report.add_claim(
        judge_superiority(
            "category_rewards_improve_teds",
            "GRPO with per-category rewards reaches a higher table TEDS than GRPO with one page-level reward.",
            ("category_rl TEDS", _vals(records, "category_rl", "TEDS")),
            {"page_rl TEDS": _vals(records, "page_rl", "TEDS")},
            test=test,
            requires=pre,
        )
    )
    report.add_claim(
        judge_superiority(
            "category_rewards_improve_order",
            "GRPO with per-category rewards reaches a lower reading-order NED than GRPO with one page-level reward.",
            ("category_rl ReadingOrder", _vals(records, "category_rl", "ReadingOrder")),
            {"page_rl ReadingOrder": _vals(records, "page_rl", "ReadingOrder")},
            higher_is_better=False,
            test=test,
            requires=pre,
        )
    )
    report.add_claim(
        judge_non_inferiority(
            "category_rewards_keep_text",
            "Per-category rewards lose at most 2 points (0.02) of text edit distance against the page-level reward.",
            ("category_rl TextEdit", _vals(records, "category_rl", "TextEdit")),
            {"page_rl TextEdit": _vals(records, "page_rl", "TextEdit")},
            margin=0.02,
            higher_is_better=False,
            requires=pre,
        )
    )
    report.add_claim(
        judge_superiority(
            "e2e_beats_cascade_order",
            "The end-to-end model (SFT + category RL) has a lower reading-order NED than the crop-OCR-merge cascade.",
            ("category_rl ReadingOrder", _vals(records, "category_rl", "ReadingOrder")),
            {"cascade ReadingOrder": _vals(records, "cascade", "ReadingOrder")},
            higher_is_better=False,
            test=test,
            requires=pre,
        )
    )
    report.add_claim(
        judge_superiority(
            "e2e_beats_cascade_tables",
            "The end-to-end model (SFT + category RL) has a higher table TEDS than the crop-OCR-merge cascade.",
            ("category_rl TEDS", _vals(records, "category_rl", "TEDS")),
            {"cascade TEDS": _vals(records, "cascade", "TEDS")},
            test=test,
            requires=pre,
        )
    )
    # -- checks: our code's guarantees --
    report.add_claim(
        judge_every(
            "metrics_match_worked_examples",
            "TEDS / TEDS-S (2x2 table, n = 6 nodes: 1 - 0.5/6 and 1 - 2/6), NED, reading order, pooled page edit, "
            "Overall and clean_string agree with hand-computed values.",
            ("|computed - hand|", [x for r in records for x in r["metric_errors"]]),
            bound=1e-9,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "bootstrap_keeps_layout",
            "Bootstrapped labels keep the known layout: TEDS-S of the kept labels against the truth is 1 and their "
            "reading-order NED is 0.",
            (
                "1 - TEDS-S and RO of labels",
                [abs(1 - r["labels"]["TEDS-S"]) + r["labels"]["ReadingOrder"] for r in records],
            ),
            bound=1e-9,
            kind="check",
        )
    )
    report.add_claim(
        judge_every(
            "sft_loss_decreases",
            "The TinyPageParser learned: its mean SFT loss over the last 10% of steps is at most 0.7 of the first "
            "10% (a diagnostic of the learned component).",
            ("late / early SFT loss", [_late_early(r["sft_loss"]) for r in records]),
            bound=0.7,
            kind="check",
        )
    )

    steps = cfg.sft_steps + cfg.rl_steps
    report.set_tuning("category_rl", configs=1, steps=steps, note=f"{cfg.sft_steps} SFT + {cfg.rl_steps} GRPO steps")
    report.set_tuning("page_rl", configs=1, steps=steps, note=f"{cfg.sft_steps} SFT + {cfg.rl_steps} GRPO steps")
    report.set_tuning("sft_only", configs=1, steps=steps, note=f"{steps} SFT steps (the RL steps spent on more SFT)")
    report.set_tuning(
        "cascade",
        configs=len(cfg.dilations),
        steps=0,
        note="no trainable parameters; layout dilation picked on training pages from the grid",
    )

    rows = []
    for arm in [
        a
        for a in ("cascade", "cascade_tesseract", "cascade_rapidocr_same_pages", *ARMS[1:])
        if a in records[0]["scores"]
    ]:
        for lay in (None, "1col", "2col"):
            if lay and lay not in records[0]["scores"][arm]:
                continue
            row = {"method": arm, "pages": lay or "all"}
            for k in METRICS:
                v = [x for x in _vals(records, arm, k, lay) if not np.isnan(x)]
                row[k] = float(np.mean(v)) if v else float("nan")  # a category no page of this kind scored
            rows.append(row)
    report.add_table(
        "metrics",
        rows,
        "OmniDocBench metrics on the test pages (mean over seeds). TextEdit, "
        "FormulaEdit (formula edit distance, not CDM), ReadingOrder: lower is better; TEDS, TEDS-S, "
        "Overall: higher is better. cascade_tesseract is on the first n_tess test pages only.",
    )
    report.add_table(
        "labels",
        [{"seed": r["seed"], **r["labels"]} for r in records],
        "Bootstrapped label quality on the kept training pages against the truth.",
    )
    report.add_note(
        "Text edit distance is reported honestly: the cascade reads each crop with a production OCR model and may "
        "win on plain text; the end-to-end claims are about structure (reading order, tables). Formula scores are "
        "formula edit distance (OmniDocBench v1.0), not CDM, and Overall uses (1 - FormulaEdit) * 100 in place of "
        "CDM. Precondition tuning: tables are drawn with ruling lines with probability "
        f"{cfg.table_rule_prob:g} (the cascade detects tables by their lines), 2-column pages shift each column by "
        f"up to {cfg.col_offset} px so block tops interleave."
    )
    _figures(cfg, records, report)


def _late_early(losses: list[float]) -> float:
    k = max(1, len(losses) // 10)
    return float(np.mean(losses[-k:]) / np.mean(losses[:k]))


def _figures(cfg: Config, records: list[dict], report: Report) -> None:
    import matplotlib.pyplot as plt

    arms = [a for a in ARMS if a in records[0]["scores"]]
    fig, axes = plt.subplots(1, 5, figsize=(15, 3.2))
    for ax, k in zip(axes, METRICS[:5]):
        v = [np.nanmean(_vals(records, a, k)) for a in arms]
        ax.bar(range(len(arms)), v, color=[f"C{i}" for i in range(len(arms))])
        ax.set_xticks(range(len(arms)))
        ax.set_xticklabels(arms, rotation=30, ha="right", fontsize=8)
        ax.set_title(k + (" (lower better)" if k in ("TextEdit", "FormulaEdit", "ReadingOrder") else ""))
        ax.set_ylabel(k)
        ax.set_xlabel("method")
    fig.suptitle("OmniDocBench metrics per method and element type (mean over seeds)")
    fig.tight_layout()
    report.add_figure("metric_bars", fig, "Text, formula, table (TEDS, TEDS-S) and reading-order scores per method.")

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    for r in records:
        axes[0].plot(r["sft_loss"], lw=0.8, label=f"seed {r['seed']}")
        for arm, c in (("category_rl", "C3"), ("page_rl", "C2")):
            cur = r["curves"][arm]
            key = "page" if arm == "page_rl" else None
            ys = [
                st[key] if key else np.mean([st[x] for x in ("text", "table", "formula", "order") if x in st])
                for st in cur
            ]
            axes[1].plot(ys, color=c, lw=0.8, label=arm if r is records[0] else None)
    axes[0].set_title("SFT loss (teacher forcing)")
    axes[0].set_xlabel("step")
    axes[0].set_ylabel("cross-entropy")
    axes[0].legend(fontsize=7)
    axes[1].set_title("GRPO mean reward of the samples")
    axes[1].set_xlabel("GRPO step")
    axes[1].set_ylabel("reward (own objective)")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    report.add_figure("training_curves", fig, "Learned-component diagnostic: SFT loss and RL reward over steps.")

    r0 = records[0]
    test = SyntheticPages(cfg.n_test, r0["test_seed"], cfg.spec(), cfg.frac_2col)
    import textwrap

    show = r0["examples"]["index"]
    fig, axes = plt.subplots(len(show), 4, figsize=(14, 3.6 * len(show)), squeeze=False)
    for row, i in enumerate(show):
        axes[row, 0].imshow(test.pil(i), cmap="gray")
        axes[row, 0].set_title(f"test page {i} ({test.layouts[i]})")
        axes[row, 0].axis("off")
        for col, key in enumerate(("truth", "cascade", "category_rl")):
            ax = axes[row, col + 1]
            ax.axis("off")
            ax.set_title(key)
            txt = "\n".join(textwrap.fill(ln, 48) for ln in r0["examples"][key][row].splitlines())
            ax.text(0, 1, txt[:900], va="top", family="monospace", fontsize=6, parse_math=False)
    fig.suptitle(f"Example pages: true vs predicted Markdown (seed {r0['seed']})")
    fig.tight_layout()
    report.add_figure("examples", fig, "A 2-column and a 1-column test page with true and predicted Markdown.")


EXPERIMENT = register(
    Experiment(
        slug="ovisocr",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 1, "full": 3},
        measure=measure,
        judge=judge,
        threads=1,
    )
)
