"""Reproduction: ACUTE vs recalibrated raw confidence, scored by auc-EURO and smooth ECE.

Settings (spec section 5):

* ``setting="digits"`` (preset ``quick``, a smoke test): the "model" is a 2-hidden-layer torch MLP trained on
  sklearn's digits with 20% label noise; its two hidden layers are the activations, its max softmax the raw
  confidence.
* ``setting="lm"`` (preset ``full``): a tiny decoder LM (``icml26.common.tinylm``) trained on a synthetic facts
  corpus (``icml26.common.facts``).  Main world (tasks ``mcqa``, ``toolcall``; issue 21): "first family" names in
  families of two sharing the family name (``lm_family_size``), graded exposure k in {0, 1, 2, 4, 8}, and 40% of
  the entities *contested*: in each training text about them each fact value is replaced by one fixed rival value
  with probability 0.85 (``lm_contested``, ``lm_rumour``), while the tasks grade against the true value.  The LM
  then answers unseen entities from their sibling's facts and contested ones with the corpus' rival, both
  confidently: its raw confidence is overconfident and ranks correctness imperfectly.  Secondary world
  (``secondary``; tasks ``mcqa_easy``, ``toolcall_easy``): the v1 world (one-token names, k in {0, 1, 3, 10}),
  where correctness is little more than "was the entity seen".  Two tasks per world: multiple-choice QA (one answer
  word; raw confidence = its probability) and tool calls (greedy ``fn ( arg = value , ... )``, exact match; raw
  confidence = product of the token probabilities).  Hidden states of every block are recorded with
  :class:`ActivationRecorder` and mean-pooled over the positions that predict the generated tokens.

Seeds are the unit: ``measure(config, seed)`` redraws, from the seed, the split of the groups (entities for the
LM) into a training pool and a test split, the calibration subsets of every size n in ``train_sizes`` drawn from
that pool, the inner-CV folds and the forest seeds; on digits it also redraws the MLP's training half and
initialisation.  Every tuned arm chooses its hyperparameters by inner cross-validation on its own n labels at every
n (ACUTE: view by auc-EURO, then forest by Brier; probe: view, then C; Platt: C; NWKR: bandwidth by
leave-one-out), never on the test split.  Each tiny LM and its outputs on every item are an artifact shared by all
seeds (``progress.checkpoint``).

Preconditions (issue 21): ACUTE exists for a model whose raw confidence is imperfect and miscalibrated, so the
claims that ACUTE beats the raw-confidence baselines require raw AUROC <= 0.85 and raw smECE >= 0.05.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace

import matplotlib

matplotlib.use("Agg")
import numpy as np
import torch
from matplotlib.figure import Figure
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from icml26.core import (
    Experiment,
    Report,
    judge_every,
    judge_superiority,
    judge_threshold,
    mean_ci,
    register,
    seed_everything,
)

from .baselines import IsotonicCalibrator, NWKRCalibrator, PlattCalibrator, logistic_probe
from .estimator import ACUTEConfidenceEstimator, select_forest_cv, select_view_cv
from .metrics import auc_euro, base_rate_euro_curve, binned_ece, euro, euro_curve, smooth_ece
from .recorder import ActivationRecorder

__all__ = ["Config", "QUICK", "FULL", "measure", "judge", "VIEWS"]

#: view name -> ACUTEConfidenceEstimator parameters
VIEWS = {
    "early": {"view": "mean", "layer": "early"},
    "mid": {"view": "mean", "layer": "mid"},
    "late": {"view": "mean", "layer": "late"},
    "cosine": {"view": "cosine"},
    "pca10": {"view": "pca", "n_components": 10},
    "pca20": {"view": "pca", "n_components": 20},
}
METHODS = ("raw", "platt", "isotonic", "nwkr", "probe", "acute")
LABELS = {
    "raw": "Raw conf",
    "platt": "Platt",
    "isotonic": "Isotonic",
    "nwkr": "NWKR",
    "probe": "Logistic probe",
    "acute": "ACUTE (RF)",
}


@dataclass(frozen=True)
class Config:
    setting: str = "digits"  # "digits" or "lm"
    # digits ("model" = torch MLP)
    label_noise: float = 0.2
    mlp_hidden: int = 64
    mlp_epochs: int = 300
    # lm (tiny decoder on the synthetic facts corpus): the main world
    n_entities: int = 500
    lm_layers: int = 4
    lm_embd: int = 128
    lm_heads: int = 4
    lm_steps: int = 1000
    lm_batch: int = 64
    lm_lr: float = 3e-3
    lm_bucketed: bool = False  # length-bucketed batches (faster, but each batch holds one kind of text)
    lm_name_words: int = 1  # 2: "first last" names from shared word pools (the model must bind two tokens)
    lm_exposures: tuple[int, ...] = (0, 1, 3, 10)  # times each entity's facts appear (cycled over entities)
    lm_family_size: int = 0  # >= 2: "first last" names, families of this size share the last name (confusable)
    lm_contested: float = 0.0  # share of entities whose facts are contested in the corpus (see _contest)
    lm_rumour: float = 0.7  # for a contested fact, chance that a mention states its rival value instead of the truth
    data_seed: int = 0
    pool: str = "generated"  # LM activations pooled over "generated" positions, the "prompt", or "both"
    # secondary LM setting: the v1 world (one-token names, exposure 0/1/3/10), reported beside the main one
    secondary: bool = False
    secondary_steps: int = 1300
    secondary_sizes: tuple[int, ...] = (25, 1000)
    # splits of the groups (digits: of the 40% not used to train the MLP): training pool, (unused) validation, test
    pool_share: float = 0.5
    val_share: float = 0.0  # v1 chose views on a validation split; v2 chooses by inner CV on the training labels
    # estimators: sizes, and the inner cross-validation every tuned method gets at every size
    train_sizes: tuple[int, ...] = (25, 50, 100, 250, 1000)
    views: tuple[str, ...] = ("early", "mid", "late", "cosine", "pca10", "pca20")
    cv_folds: int = 5  # inner cross-validation folds (spec: 5-fold Brier CV)
    cv_trees: int = 15  # forest size in the view stage of the inner CV
    # the forest stage of the inner CV (select_forest_cv): leaf size x depth x size by Brier, from one forest of
    # forest_cv_trees trees per leaf size and fold (depths read off its trees, sizes by the unbiased T-tree Brier)
    forest_leaf: tuple[int, ...] = (1, 3, 10)
    forest_depth: tuple[int | None, ...] = (2, 4, 8, None)
    forest_sizes: tuple[int, ...] = (50, 100, 200)
    forest_cv_trees: int = 30
    probe_C: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0)
    # Platt's C and NWKR's bandwidth: geometric grids with as many values as ACUTE has configurations (parity)


QUICK = Config(
    setting="digits",
    mlp_epochs=200,
    pool_share=0.5,
    train_sizes=(25, 100, 180),
    views=("early", "late", "cosine", "pca10"),
    cv_trees=10,
    forest_sizes=(20, 40, 80),
    forest_cv_trees=20,
)
FULL = Config(
    setting="lm",
    n_entities=400,
    lm_steps=1300,
    lm_lr=3e-3,
    lm_name_words=2,
    lm_family_size=2,
    lm_exposures=(0, 1, 2, 4, 8),
    lm_contested=0.4,
    lm_rumour=0.85,
    secondary=True,
    secondary_steps=1300,
    secondary_sizes=(1000,),
    pool_share=0.625,
    train_sizes=(25, 50, 100, 250, 1000),
    probe_C=(0.01, 0.1, 1.0),
)


# ----------------------------------------------------------------------------------------------- model outputs
def _split_groups(groups: np.ndarray, cfg: Config, seed: int) -> dict[str, np.ndarray]:
    uniq = np.unique(groups)
    perm = np.random.default_rng(seed).permutation(uniq)
    a = int(round(cfg.pool_share * len(uniq)))
    b = a + int(round(cfg.val_share * len(uniq)))
    parts = {"train": perm[:a], "val": perm[a:b], "test": perm[b:]}
    return {k: np.flatnonzero(np.isin(groups, v)) for k, v in parts.items()}


def _digits_outputs(cfg: Config, seed: int) -> dict[str, dict]:
    """Train the MLP "model" on a seed-drawn 60% of digits (noisy labels); record its hidden layers on the rest.

    Everything (which digits train the MLP, the label noise, the initialisation, the pool / val / test split of
    the remaining 40%) is drawn from ``seed`` and ``cfg.data_seed``.
    """
    from sklearn.datasets import load_digits

    rng = np.random.default_rng([cfg.data_seed, seed])
    torch.manual_seed(int(rng.integers(2**31)))
    X, y = load_digits(return_X_y=True)
    X = torch.tensor(X / 16.0, dtype=torch.float32)
    perm = rng.permutation(len(y))
    n_model = int(0.6 * len(y))
    tr, rest = perm[:n_model], perm[n_model:]
    y_noisy = y.copy()
    flip = rng.random(n_model) < cfg.label_noise
    y_noisy[tr[flip]] = rng.integers(0, 10, flip.sum())
    h = cfg.mlp_hidden
    mlp = torch.nn.Sequential(
        torch.nn.Linear(64, h), torch.nn.ReLU(), torch.nn.Linear(h, h), torch.nn.ReLU(), torch.nn.Linear(h, 10)
    )
    opt = torch.optim.Adam(mlp.parameters(), lr=3e-3, weight_decay=1e-4)
    xt, yt = X[tr], torch.tensor(y_noisy[tr])
    for _ in range(cfg.mlp_epochs):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(mlp(xt), yt).backward()
        opt.step()
    mlp.eval()
    with torch.no_grad(), ActivationRecorder(mlp, layers=["1", "3"]) as rec:
        probs = torch.softmax(mlp(X[rest]), dim=1)
        acts = rec.pooled().numpy()
    raw = probs.max(dim=1).values.numpy().astype(float)
    correct = (probs.argmax(dim=1).numpy() == y[rest]).astype(float)
    d = {"acts": acts, "raw": raw, "correct": correct, "group": np.arange(len(rest)), "info": {}}
    d.update(_split_groups(d["group"], cfg, int(rng.integers(2**31))))
    return {"digits": d}


def _make_world(cfg: Config):
    """The facts world of ``cfg``: :func:`make_fact_world`'s, or (``lm_family_size >= 2``) one whose entities come
    in families sharing a last name: ``"<first> <family>"`` with first names from a pool of 16 words, each
    family's members drawn with independent values and exposures, so a family name alone is a misleading cue."""
    from icml26.common.facts import DEFAULT_RELATIONS, FactWorld, make_fact_world, make_names

    if cfg.lm_family_size < 2:
        return make_fact_world(
            cfg.n_entities, exposures=cfg.lm_exposures, seed=cfg.data_seed, name_words=cfg.lm_name_words
        )
    base = make_fact_world(cfg.n_entities, exposures=cfg.lm_exposures, seed=cfg.data_seed, name_words=1)
    rng = np.random.default_rng([cfg.data_seed, 7])
    taken = {w for r in DEFAULT_RELATIONS for w in r.values} | set(base.entities)
    n_fam = -(-cfg.n_entities // cfg.lm_family_size)
    firsts = make_names(16, seed=cfg.data_seed + 1, taken=taken, n_words=1)
    families = make_names(n_fam, seed=cfg.data_seed + 2, taken=taken | set(firsts), n_words=1)
    names = []
    for f in range(n_fam):
        for j in rng.choice(16, size=cfg.lm_family_size, replace=False):
            names.append(f"{firsts[j]} {families[f]}")
    return FactWorld(tuple(names[: cfg.n_entities]), base.relations, base.values, base.exposure)


def _contested(world, cfg: Config) -> dict[int, dict[str, str]]:
    """Entity -> {relation: rival value} for the contested entities (a seeded ``lm_contested`` share)."""
    rng = np.random.default_rng([cfg.data_seed, 11])
    n = len(world.entities)
    picked = rng.choice(n, size=int(round(cfg.lm_contested * n)), replace=False)
    out = {}
    for i in sorted(picked.tolist()):
        out[i] = {}
        for r in world.relations:
            wrong = [v for v in r.values if v != world.value(i, r.name)]
            out[i][r.name] = wrong[int(rng.integers(len(wrong)))]
    return out


def _contest(world, corpus: list[str], cfg: Config) -> list[str]:
    """Conflicting values: in every training text about a contested entity, each of its fact values is replaced by
    that fact's one rival value with probability ``lm_rumour`` (independently per text and fact).  The truth the
    tasks are graded against stays the world's value, so where the rival dominates the corpus a model that learns
    the corpus well answers wrongly and confidently."""
    rng = np.random.default_rng([cfg.data_seed, 12])
    rivals = _contested(world, cfg)
    by_name = {world.entities[i]: i for i in rivals}
    out = []
    for text in corpus:
        i = next((by_name[name] for name in by_name if f" {name} " in f" {text} "), None)
        if i is not None:
            words = text.split()
            for r in world.relations:
                true, rival = world.value(i, r.name), rivals[i][r.name]
                if true in words and rng.random() < cfg.lm_rumour:
                    words = [rival if w == true else w for w in words]
            text = " ".join(words)
        out.append(text)
    return out


def _train_or_load_lm(cfg: Config, progress):
    from icml26.common.facts import DEFAULT_TOOLS, training_corpus
    from icml26.common.tinylm import TinyLM, TinyLMConfig, length_bucketed_batches, train_lm

    world = _make_world(cfg)
    tok = world.tokenizer(DEFAULT_TOOLS)
    model = TinyLM(
        TinyLMConfig(vocab_size=len(tok), n_layer=cfg.lm_layers, n_head=cfg.lm_heads, n_embd=cfg.lm_embd, block_size=40)
    )
    trained = []

    def train() -> dict:
        corpus = training_corpus(world, DEFAULT_TOOLS, seed=cfg.data_seed)
        if cfg.lm_contested > 0:
            corpus = _contest(world, corpus, cfg)
        if cfg.lm_bucketed:
            batches = length_bucketed_batches(
                [tok.encode(t) for t in corpus], cfg.lm_batch, cfg.lm_steps, tok.pad_id, seed=cfg.data_seed
            )
        else:  # uniformly drawn rows of the padded corpus
            batches = tok.batch(corpus)
        progress.log(f"training the tiny LM: {len(corpus)} texts, {cfg.lm_steps} steps")
        t0 = time.perf_counter()
        losses = train_lm(
            model, batches, cfg.lm_steps, lr=cfg.lm_lr, seed=cfg.data_seed, pad_id=tok.pad_id, batch_size=cfg.lm_batch
        )
        trained.append(len(corpus))
        return {"model": model.state_dict(), "train_s": time.perf_counter() - t0, "loss": float(np.mean(losses[-50:]))}

    # kept across runs in out/acute_euro/.artifacts: reruns skip LM training
    key = {k: v for k, v in asdict(cfg).items() if k.startswith("lm_") or k in ("n_entities", "data_seed")}
    state = progress.checkpoint("tinylm", {**key, "torch": torch.__version__}, train)
    model.load_state_dict(state["model"])
    info = {"lm_train_s": float(state["train_s"]), "lm_final_loss": float(state["loss"]), "lm_cached": not trained}
    if trained:
        info["corpus_texts"] = trained[0]
    model.eval()
    info["lm_parameters"] = int(sum(p.numel() for p in model.parameters()))
    info["vocab_size"] = len(tok)
    return world, tok, model, info


def _by_length(prompts: list[str]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        groups.setdefault(len(p.split()), []).append(i)
    return groups


@torch.no_grad()
def _lm_task(model, tok, prompts: list[str], targets: list[str], max_new: int) -> dict:
    """Greedy answers, exact-match correctness, raw confidence (product of the generated tokens' probabilities,
    end-of-sequence included) and block activations mean-pooled over the positions that predict them."""
    n = len(prompts)
    raw, correct, length = np.zeros(n), np.zeros(n), np.zeros(n, dtype=int)
    acts = None
    for _, idx in sorted(_by_length(prompts).items()):
        x = tok.batch([prompts[i] for i in idx])
        T = x.shape[1]
        seq = model.generate(x, max_new, eos_id=tok.eos_id) if max_new > 1 else x
        if max_new == 1:  # one answer word: no end-of-sequence token
            with ActivationRecorder(model) as rec:
                logits = model(x)
            probs = torch.softmax(logits[:, -1], dim=-1)
            ans = probs.argmax(dim=-1)
            conf = probs.max(dim=-1).values.numpy()
            pos = torch.arange(T)[None, :].expand(len(idx), T)
            pooled = rec.pooled(pos == T - 1)
            pooled_prompt = rec.pooled(pos < T)
            outs = [tok.decode([a]) for a in ans.tolist()]
            n_gen = np.ones(len(idx), dtype=int)
        else:
            gen = seq[:, T:]
            is_eos = gen == tok.eos_id
            # generated tokens up to and including the first <eos> (all of them if none)
            n_gen = np.where(is_eos.any(dim=1).numpy(), is_eos.float().argmax(dim=1).numpy() + 1, gen.shape[1])
            with ActivationRecorder(model) as rec:
                logits = model(seq[:, :-1])
            logp = torch.log_softmax(logits[:, T - 1 :], dim=-1).gather(2, gen[:, :, None])[:, :, 0]
            pos = torch.arange(gen.shape[1])[None, :]
            keep = pos < torch.as_tensor(n_gen)[:, None]
            conf = torch.exp((logp * keep).sum(dim=1)).numpy()
            mask = torch.zeros(len(idx), seq.shape[1] - 1, dtype=torch.bool)
            mask[:, T - 1 :] = keep
            pooled = rec.pooled(mask)
            prompt = torch.zeros_like(mask)
            prompt[:, :T] = True  # prompts in one batch have the same length: no padding among them
            pooled_prompt = rec.pooled(prompt)
            outs = []
            for r in range(len(idx)):
                words = tok.decode(gen[r, : n_gen[r]].tolist()).split()
                outs.append(" ".join(words[:-1]) if words and words[-1] == "<eos>" else "<no-eos>")
        if acts is None:
            acts = np.zeros((n, *pooled.shape[1:]), dtype=np.float32)
            acts_prompt = np.zeros_like(acts)
        for r, i in enumerate(idx):
            acts[i] = pooled[r].numpy()
            acts_prompt[i] = pooled_prompt[r].numpy()
            raw[i] = float(np.clip(conf[r], 0.0, 1.0))
            correct[i] = float(outs[r] == targets[i])
            length[i] = int(n_gen[r])
    return {"acts": acts, "acts_prompt": acts_prompt, "raw": raw, "correct": correct, "length": length}


def _lm_artifact(cfg: Config, progress) -> dict:
    """The tiny LM (trained on ``cfg``'s world) and its outputs on every MCQA and tool-call item: one artifact
    shared by all seeds, keyed by the ``lm_*`` fields, ``n_entities`` and ``data_seed``."""
    from icml26.common.facts import DEFAULT_TOOLS, mcqa_item, tool_call_item

    def build() -> dict:
        seed_everything(cfg.data_seed)  # the LM's initialisation (when it is not in its checkpoint yet)
        world, tok, model, info = _train_or_load_lm(cfg, progress)
        rng = np.random.default_rng(cfg.data_seed + 1)
        n_ent = len(world.entities)
        items = [(i, r.name) for i in range(n_ent) for r in world.relations]
        mc = [mcqa_item(world, i, r, rng) for i, r in items]
        tl = [(i, t) for i in range(n_ent) for t in DEFAULT_TOOLS]
        calls = [tool_call_item(world, i, t) for i, t in tl]
        tasks = {
            "mcqa": (_lm_task(model, tok, [p for p, _, _ in mc], [a for _, a, _ in mc], 1), [i for i, _ in items]),
            "toolcall": (_lm_task(model, tok, [p for p, _ in calls], [c for _, c in calls], 12), [i for i, _ in tl]),
        }
        out = {"info": info}
        contested = _contested(world, cfg) if cfg.lm_contested > 0 else {}
        for name, (d, ent) in tasks.items():
            out[name] = {
                "acts_generated": torch.as_tensor(d["acts"]),
                "acts_prompt": torch.as_tensor(d["acts_prompt"]),
                "raw": torch.as_tensor(d["raw"]),
                "correct": torch.as_tensor(d["correct"]),
                "group": torch.as_tensor(np.asarray(ent)),
                "exposure": torch.as_tensor(np.asarray([world.exposure[i] for i in ent])),
                "contested": torch.as_tensor(np.asarray([i in contested for i in ent])),
            }
        return out

    key = {k: v for k, v in asdict(cfg).items() if k.startswith("lm_") or k in ("n_entities", "data_seed")}
    return progress.checkpoint("lm_outputs", {**key, "torch": torch.__version__}, build)


def _pooled(d: dict, pool: str) -> np.ndarray:
    """Activations ``[n, L, d]``: mean over the generated positions, over the prompt, or both (``[n, 2L, d]``)."""
    if pool == "generated":
        return d["acts_generated"]
    if pool == "prompt":
        return d["acts_prompt"]
    return np.concatenate([d["acts_generated"], d["acts_prompt"]], axis=1)


def _lm_outputs(cfg: Config, seed: int, progress) -> dict[str, dict]:
    """Per task, the LM's outputs (from the shared artifacts) with the entity split into training pool / validation
    / test drawn from ``seed`` (the same split for both tasks of a world).

    Main setting (tasks ``mcqa``, ``toolcall``): ``cfg``'s world.  Secondary setting (``cfg.secondary``; tasks
    ``mcqa_easy``, ``toolcall_easy``): the v1 world (one-token names, exposure 0/1/3/10, ``secondary_steps``), where
    correctness is little more than "was the entity seen"."""
    worlds = [("", cfg)]
    if cfg.secondary:
        easy = replace(
            cfg,
            lm_name_words=1,
            lm_exposures=(0, 1, 3, 10),
            lm_steps=cfg.secondary_steps,
            lm_family_size=0,
            lm_contested=0.0,
        )
        worlds.append(("_easy", easy))
    split_seed = int(np.random.default_rng([cfg.data_seed, seed]).integers(2**31))
    # odd seeds ask for the artifacts in reverse order: with --jobs 2 the two LMs then train at the same time (each
    # artifact is the same whichever seed builds it: progress.checkpoint seeds its build from the config)
    states = {suffix: _lm_artifact(wcfg, progress) for suffix, wcfg in (worlds[::-1] if seed % 2 else worlds)}
    out = {}
    for suffix, _ in worlds:
        state = states[suffix]
        for name in ("mcqa", "toolcall"):
            d = {k: v.numpy() for k, v in state[name].items()}
            d["acts"] = _pooled(d, cfg.pool)
            exposure = d["exposure"]
            acc = {str(k): float(d["correct"][exposure == k].mean()) for k in sorted(set(exposure.tolist()))}
            conf = {str(k): float(d["raw"][exposure == k].mean()) for k in sorted(set(exposure.tolist()))}
            d["info"] = {
                **state["info"],
                "accuracy": float(d["correct"].mean()),
                "accuracy_by_exposure": acc,
                "raw_conf_by_exposure": conf,
            }
            d.update(_split_groups(d["group"], cfg, split_seed))  # the same entity split for both tasks
            out[name + suffix] = d
    return out


# ----------------------------------------------------------------------------------------------- estimators
def _scores(p: np.ndarray, y: np.ndarray) -> dict:
    out = {
        "auc_euro": auc_euro(p, y),
        "auc_euro_hi": auc_euro(p, y, u_range=(0.5, 1.0)),
        "smece": smooth_ece(p, y),
        "ece": binned_ece(p, y),
        "brier": float(brier_score_loss(y, p)),
        "auroc": float(roc_auc_score(y, p)) if 0 < y.sum() < y.size else float("nan"),
        "conf_minus_acc": float(np.mean(p) - np.mean(y)),  # > 0: overconfident on average
    }
    out.update({f"euro_{u}": euro(p, y, u) for u in (0.3, 0.5, 0.7, 0.9)})
    return out


def _subset(rng: np.random.Generator, pool: np.ndarray, y: np.ndarray, n: int, min_each: int = 3) -> np.ndarray:
    """``n`` items of the pool without replacement, redrawn (up to 100 times) until each label occurs at least
    ``min_each`` times (inner cross-validation needs both labels in every fold)."""
    if n > pool.size:
        raise ValueError(f"train size {n} exceeds the training pool ({pool.size} items)")
    for _ in range(100):
        idx = rng.choice(pool, size=n, replace=False)
        if min_each <= y[idx].sum() <= n - min_each:
            return idx
    raise ValueError(f"could not draw {n} training items with >= {min_each} correct and incorrect outputs")


def _neg_brier(p: np.ndarray, y: np.ndarray) -> float:
    return -float(brier_score_loss(y, p))


def _probe_estimator(C: float):
    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000))


def _select(method: str, d: dict, idx: np.ndarray, cfg: Config, seed: int) -> tuple[dict, dict]:
    """Hyperparameters of ``method`` chosen by inner cross-validation on its ``n`` training labels alone.

    * ACUTE: the view by mean auc-EURO over ``cv_folds`` stratified folds (forests of ``cv_trees`` trees), then the
      forest's leaf size x depth x size (``forest_leaf`` x ``forest_depth`` x ``forest_sizes``) by mean Brier score
      over the same folds (:func:`select_forest_cv`: one forest per leaf size and fold, depths read off its trees,
      sizes by the unbiased Brier estimate of a T-tree forest from its trees);
    * logistic probe: the view likewise, then the L2 strength C in ``probe_C`` by Brier;
    * Platt: C among :func:`_platt_grid` by Brier over the same folds (NWKR picks its bandwidth among
      :func:`_nwkr_grid` inside ``fit``, by leave-one-out Brier; isotonic has nothing to tune).
    Returns ``(params, scores)`` with the mean inner-CV score of every candidate.
    """
    X, raw, y = d["acts"][idx], d["raw"][idx], d["correct"][idx]
    views = [VIEWS[v] for v in cfg.views]
    if method in ("acute", "probe"):
        base = (
            {"n_estimators": cfg.cv_trees}
            if method == "acute"
            else {"estimator": _probe_estimator(1.0), "include_raw_conf": True}
        )
        view, vs = select_view_cv(views, X, y, auc_euro, raw_conf=raw, cv=cfg.cv_folds, random_state=seed, base=base)
        if method == "acute":
            best, fs = select_forest_cv(
                X,
                y,
                raw,
                view=view,
                min_samples_leaf=cfg.forest_leaf,
                max_depth=cfg.forest_depth,
                n_estimators=cfg.forest_sizes,
                cv=cfg.cv_folds,
                random_state=seed,
                cv_trees=cfg.forest_cv_trees,
            )
        else:
            grid = [{"estimator": _probe_estimator(C)} for C in cfg.probe_C]
            best, fs = select_view_cv(
                grid, X, y, _neg_brier, raw_conf=raw, cv=cfg.cv_folds, random_state=seed, base=view
            )
            best, fs = {"C": float(best["estimator"].steps[-1][1].C)}, dict(zip(map(str, cfg.probe_C), fs))
        return {**view, **best}, {"view": dict(zip(cfg.views, vs)), "second": fs}
    if method == "platt":
        folds = list(
            StratifiedKFold(
                min(cfg.cv_folds, int(min(y.sum(), y.size - y.sum()))), shuffle=True, random_state=seed
            ).split(raw, y)
        )
        grid = _platt_grid(cfg)
        scores = []
        for C in grid:
            vals = [
                _neg_brier(PlattCalibrator(C=C).fit(raw[tr], y[tr]).predict_proba(raw[te])[:, 1], y[te])
                for tr, te in folds
            ]
            scores.append(float(np.mean(vals)))
        return {"C": float(grid[int(np.argmax(scores))])}, {"C": scores}
    if method == "nwkr":
        return {"grid": _nwkr_grid(cfg)}, {}
    return {}, {}


def _acute_configs(cfg: Config) -> int:
    """Configurations ACUTE's inner CV scores at every n: the views, then every leaf x depth x size."""
    return len(cfg.views) + len(cfg.forest_leaf) * len(cfg.forest_depth) * len(cfg.forest_sizes)


def _platt_grid(cfg: Config) -> tuple[float, ...]:
    """Platt's C: as many values as ACUTE has configurations, geometric over [1e-3, 1e4] (tuning parity)."""
    return tuple(float(c) for c in np.geomspace(1e-3, 1e4, _acute_configs(cfg)))


def _nwkr_grid(cfg: Config) -> tuple[float, ...]:
    """NWKR's bandwidth: as many values as ACUTE has configurations, geometric over [0.005, 0.5] (tuning parity)."""
    return tuple(float(h) for h in np.geomspace(0.005, 0.5, _acute_configs(cfg)))


def _fit_predict(method: str, params: dict, d: dict, idx: np.ndarray, test: np.ndarray, cfg: Config, seed: int):
    X, raw, y = d["acts"], d["raw"], d["correct"]
    if method == "raw":
        return raw[test]
    if method in ("platt", "isotonic", "nwkr"):
        cal = {"platt": PlattCalibrator, "isotonic": IsotonicCalibrator, "nwkr": NWKRCalibrator}[method](**params)
        return cal.fit(raw[idx], y[idx]).predict_proba(raw[test])[:, 1]
    if method == "acute":  # params: the view and the forest's n_estimators, min_samples_leaf, max_depth
        est = ACUTEConfidenceEstimator(random_state=seed, **params)
    else:
        est = logistic_probe(**params)
    est.fit(X[idx], y[idx], raw_conf=raw[idx])
    return est.predict_proba(X[test], raw_conf=raw[test])[:, list(est.classes_).index(1.0)]


def _evaluate_seed(d: dict, cfg: Config, seed: int, sizes: tuple[int, ...]) -> dict:
    """All methods at every training size for one seed: each method's hyperparameters chosen by inner CV on that
    size's training labels, test metrics, the choices, and the test predictions at the largest size."""
    rng = np.random.default_rng([seed, 1])
    y, test = d["correct"], d["test"]
    sizes = sorted(sizes)
    subsets = {n: _subset(rng, d["train"], y, n, min_each=cfg.cv_folds) for n in sizes}
    metrics: dict = {m: {} for m in METHODS}
    chosen: dict = {m: {} for m in ("acute", "probe", "platt")}
    cv_scores: dict = {m: {} for m in ("acute", "probe", "platt")}
    preds = {}
    for n in sizes:
        for m in METHODS:
            params, sc = _select(m, d, subsets[n], cfg, seed)
            if m in chosen:
                chosen[m][str(n)], cv_scores[m][str(n)] = params, sc
            p = _fit_predict(m, params, d, subsets[n], test, cfg, seed)
            metrics[m][str(n)] = _scores(p, y[test])
            if n == sizes[-1]:
                preds[m] = p.tolist()
    # metric sanity on a bootstrap resample of the real test outputs
    yb = y[rng.choice(test, size=test.size, replace=True)]
    a = float(yb.mean())
    u, closed = base_rate_euro_curve(int(yb.sum()), int(yb.size - yb.sum()), a)
    _, anti_curve = euro_curve(1.0 - yb, yb)
    base = np.full(yb.size, a)
    sanity = {
        "oracle_auc": auc_euro(yb, yb),
        "anti_oracle_auc": auc_euro(1.0 - yb, yb),
        "anti_oracle_max_euro_below_1": float(anti_curve[:-1].max()),
        "base_rate_ece": binned_ece(base, yb),
        "base_rate_smece": smooth_ece(base, yb),
        "base_rate_auc": auc_euro(base, yb),
        "base_rate_closed_form_auc": float(np.sum((closed[1:] + closed[:-1]) * np.diff(u)) / 2.0),
    }
    return {
        "metrics": metrics,
        "chosen": chosen,
        "cv_scores": cv_scores,
        "preds": preds,
        "y_test": y[test].tolist(),
        "sanity": sanity,
    }


# ----------------------------------------------------------------------------------------------- report
def _fig_curves(tasks: list[str], results: dict, seed: int) -> Figure:
    fig = Figure(figsize=(5.2 * len(tasks), 4.0))
    for k, name in enumerate(tasks):
        ax = fig.add_subplot(1, len(tasks), k + 1)
        y = np.asarray(results[name][seed]["y_test"])
        for m in METHODS:
            u, e = euro_curve(np.asarray(results[name][seed]["preds"][m]), y)
            ax.plot(u, e, label=LABELS[m], lw=2.2 if m == "acute" else 1.2)
        u, e = base_rate_euro_curve(int(y.sum()), int(y.size - y.sum()), float(y.mean()))
        ax.plot(u, e, "k:", label="Base rate")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set(xlabel="risk level u_ca = trust threshold", ylabel="EURO", title=name, ylim=(0, 1.02))
        ax.legend(fontsize=7)
    return fig


def _fig_reliability(tasks: list[str], results: dict, seed: int) -> Figure:
    show = ("raw", "platt", "nwkr", "acute")
    fig = Figure(figsize=(3.0 * len(show), 3.0 * len(tasks)))
    for k, name in enumerate(tasks):
        y = np.asarray(results[name][seed]["y_test"])
        for j, m in enumerate(show):
            ax = fig.add_subplot(len(tasks), len(show), k * len(show) + j + 1)
            p = np.asarray(results[name][seed]["preds"][m])
            b = np.minimum((p * 10).astype(int), 9)
            cnt = np.bincount(b, minlength=10)
            acc = np.bincount(b, weights=y, minlength=10) / np.maximum(cnt, 1)
            conf = np.bincount(b, weights=p, minlength=10) / np.maximum(cnt, 1)
            ok = cnt > 0
            ax.bar(np.arange(10)[ok] / 10 + 0.05, acc[ok], width=0.09, alpha=0.7)
            ax.plot(conf[ok], acc[ok], "o", ms=3, color="C3")
            ax.plot([0, 1], [0, 1], "k--", lw=0.8)
            ax.set(xlim=(0, 1), ylim=(0, 1), title=f"{name}: {LABELS[m]}\nsmECE {smooth_ece(p, y):.3f}")
            ax.title.set_fontsize(8)
            if j == 0:
                ax.set_ylabel("accuracy")
            if k == len(tasks) - 1:
                ax.set_xlabel("confidence")
    fig.tight_layout()
    return fig


def _fig_sample_efficiency(tasks: list[str], results: dict, seeds: list[int], config: Config) -> Figure:
    fig = Figure(figsize=(5.2 * len(tasks), 4.0))
    for k, name in enumerate(tasks):
        sizes = sorted(config.secondary_sizes if name.endswith("_easy") else config.train_sizes)
        ax = fig.add_subplot(1, len(tasks), k + 1)
        for m in METHODS:
            vals = np.array([[results[name][s]["metrics"][m][str(n)]["auc_euro"] for n in sizes] for s in seeds])
            ax.errorbar(
                sizes, vals.mean(0), yerr=vals.std(0), label=LABELS[m], capsize=2, lw=2.2 if m == "acute" else 1
            )
        ax.set(xscale="log", xlabel="training labels n", ylabel="auc-EURO (test)", title=name)
        ax.legend(fontsize=7)
    return fig


def _view_name(params: dict) -> str:
    return next(
        v
        for v, p in VIEWS.items()
        if all(params.get(a) == b for a, b in p.items())
        and (params.get("view") != "mean" or params.get("layer") == p.get("layer"))
    )


def _validate(config: Config) -> None:
    if config.setting not in ("digits", "lm"):
        raise ValueError(f"setting must be 'digits' or 'lm', got {config.setting!r}")
    unknown = [v for v in config.views if v not in VIEWS]
    if unknown or not config.views:
        raise ValueError(f"views must be a non-empty subset of {list(VIEWS)}, got {config.views!r}")
    if config.pool not in ("generated", "prompt", "both"):
        raise ValueError(f"pool must be 'generated', 'prompt' or 'both', got {config.pool!r}")
    if not (isinstance(config.cv_folds, int) and config.cv_folds >= 2):
        raise ValueError(f"cv_folds must be an integer >= 2, got {config.cv_folds!r}")
    for name in ("forest_leaf", "forest_depth", "forest_sizes", "probe_C"):
        if not getattr(config, name):
            raise ValueError(f"{name} must be non-empty")
    if not all(isinstance(k, int) and k >= 1 for k in config.forest_sizes + (config.cv_trees,)) or not (
        isinstance(config.forest_cv_trees, int) and config.forest_cv_trees >= 2
    ):
        raise ValueError(
            "forest_sizes and cv_trees must be integers >= 1 and forest_cv_trees one >= 2, got "
            f"{config.forest_sizes!r}, {config.cv_trees!r}, {config.forest_cv_trees!r}"
        )


def measure(config: Config, seed: int, progress) -> dict:
    """One replicate: the model's outputs (digits: a fresh MLP; LM: the shared checkpointed LM), a fresh split of
    the groups, fresh calibration subsets, and every method's test metrics at every training size."""
    _validate(config)
    t0 = time.perf_counter()
    tasks = _digits_outputs(config, seed) if config.setting == "digits" else _lm_outputs(config, seed, progress)
    out: dict = {"outputs_s": time.perf_counter() - t0, "tasks": {}}
    for name, d in tasks.items():
        sizes = config.secondary_sizes if name.endswith("_easy") else config.train_sizes
        res = progress.cached(f"{name}", lambda d=d, sizes=sizes: _evaluate_seed(d, config, seed, sizes))
        res["model"] = {
            "items": int(d["correct"].size),
            "split_sizes": {k: int(d[k].size) for k in ("train", "val", "test")},
            "test_accuracy": float(d["correct"][d["test"]].mean()),
            **d["info"],
        }
        out["tasks"][name] = res
    return out


def judge(config: Config, records: list[dict], report: Report) -> None:
    _validate(config)
    rep = report
    seeds = list(report.seeds or range(len(records)))
    tasks = list(records[0]["tasks"])
    results = {name: {s: rec["tasks"][name] for s, rec in zip(seeds, records)} for name in tasks}
    rep.metrics["outputs_s_per_seed"] = {str(s): rec["outputs_s"] for s, rec in zip(seeds, records)}

    def per_seed(task: str, method: str, n: int, key: str) -> list[float]:
        return [results[task][s]["metrics"][method][str(n)][key] for s in seeds]

    # tuning budgets: configurations x fits per configuration, at every training size, on the training labels only
    nv, k = len(config.views), config.cv_folds
    nf = len(config.forest_leaf) * len(config.forest_depth) * len(config.forest_sizes)
    depths = [("none" if d is None else d) for d in config.forest_depth]
    rep.set_tuning(
        "ACUTE",
        configs=nv + nf,
        steps=k,
        note=f"at every n: view among {nv} by {k}-fold inner-CV auc-EURO ({config.cv_trees}-tree forests), then the "
        f"forest among {nf} (min_samples_leaf in {list(config.forest_leaf)} x max_depth in {depths} x n_estimators in "
        f"{list(config.forest_sizes)}) by {k}-fold inner-CV Brier, from one {config.forest_cv_trees}-tree forest "
        "per leaf size and fold (depths read off its trees; a size T scored by the unbiased estimate of the T-tree "
        "forest's Brier from the trees' mean and variance); the final forest has the chosen size",
    )
    rep.set_tuning(
        "Logistic probe",
        configs=nv + len(config.probe_C),
        steps=k,
        note=f"at every n: view like ACUTE's, then C in {list(config.probe_C)} by {k}-fold inner-CV Brier (an "
        "ablation arm, in no claim)",
    )
    pg = _platt_grid(config)
    rep.set_tuning(
        "Platt",
        configs=len(pg),
        steps=k,
        note=f"at every n: C among {len(pg)} ({pg[0]:g}-{pg[-1]:g}, geometric) by {k}-fold inner-CV Brier",
    )
    nh = len(_nwkr_grid(config))
    rep.set_tuning(
        "NWKR",
        configs=nh,
        steps=k,
        note=f"at every n: bandwidth among {nh} (0.005-0.5, geometric) by leave-one-out Brier (n >= {k} folds)",
    )
    rep.set_tuning("Isotonic", configs=1, steps=0, note="no hyperparameter: nothing to tune")
    rep.set_tuning("Raw conf", configs=1, steps=0, note="the model's own confidence, nothing fitted")

    for name in tasks:
        sizes = sorted(config.secondary_sizes if name.endswith("_easy") else config.train_sizes)
        n_max, n_min = sizes[-1], sizes[0]
        rep.metrics[f"{name}_model"] = {str(s): results[name][s]["model"] for s in seeds}
        rep.metrics[f"{name}_per_seed"] = {str(s): results[name][s]["metrics"] for s in seeds}
        rep.metrics[f"{name}_chosen"] = {str(s): results[name][s]["chosen"] for s in seeds}
        # preconditions (issue 21): the raw confidence leaves something to fix
        imperfect, miscal = f"raw_imperfect_{name}", f"raw_miscalibrated_{name}"
        rep.add_claim(
            judge_threshold(
                imperfect,
                f"The setting is one where raw confidence ranks correctness imperfectly: raw AUROC on {name} "
                "is <= 0.85 (test split)",
                ("Raw conf AUROC", per_seed(name, "raw", n_max, "auroc")),
                threshold=0.85,
                sense="<=",
                kind="precondition",
            )
        )
        rep.add_claim(
            judge_threshold(
                miscal,
                f"The setting is one where raw confidence is miscalibrated: raw smooth ECE on {name} is >= 0.05 "
                "(test split)",
                ("Raw conf smECE", per_seed(name, "raw", n_max, "smece")),
                threshold=0.05,
                sense=">=",
                kind="precondition",
            )
        )
        acute = ("ACUTE", per_seed(name, "acute", n_max, "auc_euro"))
        base = {LABELS[m]: per_seed(name, m, n_max, "auc_euro") for m in ("raw", "platt", "nwkr")}
        rep.add_claim(
            judge_superiority(
                f"auc_euro_{name}",
                f"ACUTE's auc-EURO exceeds raw confidence, Platt scaling and NWKR on {name} at n = {n_max} training "
                f"labels (paired over {len(seeds)} seeds, one-sided Wilcoxon, p < 0.01)",
                acute,
                base,
                alpha=0.01,
                requires=[imperfect, miscal],
            )
        )
        sm = ("ACUTE", per_seed(name, "acute", n_max, "smece"))
        rep.add_claim(
            judge_threshold(
                f"smece_{name}_max_0.10",
                f"ACUTE's smooth ECE on {name} is <= 0.10 (n = {n_max})",
                sm,
                threshold=0.10,
                sense="<=",
            )
        )
        rep.add_claim(
            judge_superiority(
                f"smece_{name}_below_raw",
                f"ACUTE's smooth ECE on {name} is below the raw confidence's (n = {n_max})",
                sm,
                {"Raw conf": per_seed(name, "raw", n_max, "smece")},
                higher_is_better=False,
                requires=[miscal],
            )
        )
        if n_min < n_max:
            rep.add_claim(
                judge_superiority(
                    f"sample_efficiency_{name}",
                    f"(reported) ACUTE trained on n = {n_min} labels has a higher auc-EURO on {name} than Platt, "
                    f"isotonic and NWKR trained on n = {n_max}",
                    ("ACUTE", per_seed(name, "acute", n_min, "auc_euro")),
                    {LABELS[m]: per_seed(name, m, n_max, "auc_euro") for m in ("platt", "isotonic", "nwkr")},
                    requires=[imperfect, miscal],
                )
            )
        rows = []
        for m in METHODS:
            for n in sizes if m != "raw" else [n_max]:
                row = {"task": name, "method": LABELS[m], "n": n}
                for key in (
                    "auc_euro",
                    "auc_euro_hi",
                    "smece",
                    "ece",
                    "auroc",
                    "brier",
                    "euro_0.5",
                    "euro_0.9",
                    "conf_minus_acc",
                ):
                    est = mean_ci(per_seed(name, m, n, key))
                    row[key] = f"{est.mean:.3f} ± {est.std:.3f}"
                rows.append(row)
        rep.add_table(
            f"results_{name}",
            rows,
            f"{name}: test metrics, mean ± sd over {len(seeds)} seeds (each seed redraws the split and the "
            "calibration subsets); conf_minus_acc = mean confidence - accuracy (> 0: overconfident)",
        )
        rows = []
        for n in sizes:
            picks = [results[name][s]["chosen"]["acute"][str(n)] for s in seeds]
            names = [_view_name(p) for p in picks]
            cv = {
                v: float(np.mean([results[name][s]["cv_scores"]["acute"][str(n)]["view"][v] for s in seeds]))
                for v in config.views
            }
            row = {"n": n, **{f"{v} (picked / cv auc-EURO)": f"{names.count(v)} / {cv[v]:.3f}" for v in config.views}}
            forests = [
                f"leaf={p['min_samples_leaf']}, depth={p['max_depth']}, trees={p['n_estimators']}" for p in picks
            ]
            row["forest picks"] = "; ".join(f"{f}: {forests.count(f)}" for f in sorted(set(forests)))
            # the size dimension: inner-CV Brier of the chosen leaf x depth at every size (mean over seeds)
            briers = []
            for sd, pk in zip(seeds, picks):
                fs = results[name][sd]["cv_scores"]["acute"][str(n)]["second"]
                leaf, depth = pk["min_samples_leaf"], pk["max_depth"]
                briers.append([-fs[f"leaf={leaf},depth={depth},trees={t}"] for t in config.forest_sizes])
            row["cv Brier by size"] = " / ".join(
                f"{t}: {b:.4f}" for t, b in zip(config.forest_sizes, np.mean(briers, axis=0))
            )
            rows.append(row)
        rep.add_table(
            f"views_{name}",
            rows,
            f"{name}: ACUTE's view and forest chosen by inner CV on the n training labels, at every n "
            f"(seeds picking each view / mean inner-CV auc-EURO over seeds; forest picks: seeds per leaf x depth x "
            f"size; cv Brier by size: the chosen leaf and depth's inner-CV Brier at each size, mean over seeds)",
        )

    # metric sanity on real outputs (bootstrap resamples of each task's test split, one per seed): closed forms
    # of our own metric code, true by construction -> checks
    san = [results[t][s]["sanity"] for t in tasks for s in seeds]
    rep.add_claim(
        judge_every(
            "sanity_oracle",
            "The oracle (confidence = correctness) has auc-EURO 1",
            ("|auc - 1|", [abs(x["oracle_auc"] - 1.0) for x in san]),
            bound=0.0,
            sense="<=",
            tol=1e-12,
            kind="check",
        )
    )
    rep.add_claim(
        judge_every(
            "sanity_anti_oracle",
            "The anti-oracle (confidence = 1 - correctness) has EURO 0 at every risk level u < 1 (at u = 1 every "
            "estimator rejects everything and scores 1, so its auc-EURO is 1/200 on the 101-point grid)",
            ("max EURO(u < 1)", [x["anti_oracle_max_euro_below_1"] for x in san]),
            bound=0.0,
            sense="<=",
            tol=1e-12,
            kind="check",
        )
    )
    rep.add_claim(
        judge_every(
            "sanity_base_rate_ece",
            "The base-rate predictor (confidence = accuracy) has zero binned and smooth ECE",
            ("max(ECE, smECE)", [max(x["base_rate_ece"], x["base_rate_smece"]) for x in san]),
            bound=0.0,
            sense="<=",
            tol=1e-9,
            kind="check",
        )
    )
    rep.add_claim(
        judge_every(
            "sanity_base_rate_auc",
            "The base-rate predictor's auc-EURO equals the closed form (trust all iff a > u)",
            ("|auc - closed form|", [abs(x["base_rate_auc"] - x["base_rate_closed_form_auc"]) for x in san]),
            bound=0.0,
            sense="<=",
            tol=1e-12,
            baselines={"base-rate auc-EURO": [x["base_rate_auc"] for x in san]},
            kind="check",
        )
    )
    rep.add_claim(
        judge_every(
            "sanity_base_rate_below_1",
            "The base-rate predictor's auc-EURO is below 1 (by at least 1e-6)",
            ("1 - auc", [1.0 - x["base_rate_auc"] for x in san]),
            bound=1e-6,
            sense=">=",
            kind="check",
        )
    )
    rep.add_table("sanity", [{"task": t, "seed": s, **results[t][s]["sanity"]} for t in tasks for s in seeds])
    if config.setting == "lm":
        rows = []
        for t in tasks:
            info = results[t][seeds[0]]["model"]
            rows.append(
                {
                    "task": t,
                    "accuracy": info["accuracy"],
                    **{
                        f"k={k}": f"{v:.3f} / {info['raw_conf_by_exposure'][k]:.3f}"
                        for k, v in info["accuracy_by_exposure"].items()
                    },
                }
            )
        rep.add_table(
            "lm_accuracy",
            rows,
            "Tiny LM accuracy / mean raw confidence (all items) by exposure k of the entity in the training corpus "
            "(main tasks: two-token names; *_easy: the v1 world, one-token names)",
        )
    s0 = seeds[0]
    rep.add_figure(
        "euro_curves",
        _fig_curves(tasks, results, s0),
        f"EURO over the trust threshold u_ca per method (largest n of each task, seed {s0}, test split)",
    )
    rep.add_figure(
        "reliability",
        _fig_reliability(tasks, results, s0),
        f"Reliability diagrams (10 bins; bars = accuracy per bin, dots = (mean confidence, accuracy)), "
        f"largest n of each task, seed {s0}",
    )
    rep.add_figure(
        "sample_efficiency",
        _fig_sample_efficiency(tasks, results, seeds, config),
        "auc-EURO against the number of training labels (mean ± sd over seeds)",
    )
    what = "the MLP's training half, its initialisation and label noise, " if config.setting == "digits" else ""
    rep.add_note(
        f"Seeds are the unit: each seed redraws {what}the split of the groups (entities for the LM) into training "
        "pool and test, the calibration subsets of every size, the inner-CV folds and the forest seeds, so the "
        "baselines differ across seeds. Every tuned arm chooses its hyperparameters by inner cross-validation on "
        "its own n training labels at every n (no validation split, never the test split). Each tiny LM and its "
        "outputs are one artifact shared by all seeds (progress.checkpoint)."
    )
    rep.add_note(
        "Claims that ACUTE beats the raw-confidence baselines require the preconditions raw_imperfect_* "
        "(raw AUROC <= 0.85) and raw_miscalibrated_* (raw smECE >= 0.05): where raw confidence already ranks and "
        "calibrates well there is nothing for ACUTE to fix and those verdicts say nothing about the paper. Issue 21 "
        "words the second one 'overconfident'; the smECE rule tests miscalibration in either direction, and the "
        "results tables give its sign (conf_minus_acc = mean confidence - accuracy)."
    )


EXPERIMENT = register(
    Experiment(
        slug="acute_euro",
        presets={"quick": QUICK, "full": FULL},
        seeds={"quick": 3, "full": 10},
        measure=measure,
        judge=judge,
        threads=1,  # small torch / BLAS calls: one thread is ~3x faster than two contending ones (quick: 3 s vs 9 s)
    )
)
