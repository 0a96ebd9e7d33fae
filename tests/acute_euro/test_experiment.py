"""Smoke test of the quick preset, per-seed redraws (units), a mutant, and the LM pipeline on a tiny model."""

import json
from dataclasses import replace

import numpy as np
import torch

from icml26.core import VERDICTS, Progress, run_experiment

PRECONDITIONS = {"raw_imperfect_digits", "raw_miscalibrated_digits"}
CLAIMS = {"auc_euro_digits", "smece_digits_max_0.10", "smece_digits_below_raw", "sample_efficiency_digits"}
CHECKS = {
    "sanity_oracle",
    "sanity_anti_oracle",
    "sanity_base_rate_ece",
    "sanity_base_rate_auc",
    "sanity_base_rate_below_1",
}


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("acute_euro")
    result = json.loads((run_dir / "result.json").read_text())
    kinds = {c["id"]: c["kind"] for c in result["claims"]}
    assert kinds == {
        **{i: "precondition" for i in PRECONDITIONS},
        **{i: "claim" for i in CLAIMS},
        **{i: "check" for i in CHECKS},
    }
    by_id = {c["id"]: c for c in result["claims"]}
    assert set(by_id["auc_euro_digits"]["requires"]) == PRECONDITIONS
    assert set(by_id["sample_efficiency_digits"]["requires"]) == PRECONDITIONS
    assert by_id["smece_digits_below_raw"]["requires"] == ["raw_miscalibrated_digits"]
    assert by_id["smece_digits_max_0.10"]["requires"] == []
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    # the metric sanity checks are exact properties of our metric code: they must hold on real outputs
    assert all(by_id[i]["verdict"] == "holds" for i in CHECKS)
    assert {"euro_curves.png", "reliability.png", "sample_efficiency.png"} <= {p.name for p in run_dir.iterdir()}
    assert set(result["budgets"]) == {"ACUTE", "Logistic probe", "NWKR", "Platt", "Isotonic", "Raw conf"}
    # seeds are the unit: every seed redraws the split and the calibration pool, so the baselines vary
    recs = result["records"]
    assert len({json.dumps(r["tasks"]["digits"]["y_test"]) for r in recs}) == len(recs)
    platt = [r["tasks"]["digits"]["metrics"]["platt"]["180"]["auc_euro"] for r in recs]
    assert len(set(platt)) == len(platt)


def _small():
    from icml26.acute_euro.experiment import QUICK

    return replace(
        QUICK,
        mlp_epochs=60,
        train_sizes=(25, 100),
        views=("late", "cosine"),
        cv_trees=5,
        forest_leaf=(3,),
        forest_depth=(None,),
        forest_sizes=(15,),
        probe_C=(1.0,),
    )


def test_mutants_move_verdicts(tmp_path, monkeypatch):
    """Two mutants.  (1) ACUTE broken (its confidence inverted, p -> 1 - p): the absolute smECE claim moves to
    'does not hold'.  (2) The raw confidence shuffled across items: it no longer ranks correctness, so the
    precondition raw_imperfect_digits (raw AUROC <= 0.85) moves from 'does not hold' to 'holds'."""
    from icml26.acute_euro import experiment as ex

    cfg = _small()

    def verdicts(name):
        d = run_experiment("acute_euro", preset="quick", seeds=[0, 1, 3], out=tmp_path / name, overrides=vars(cfg))
        return {c["id"]: c["verdict"] for c in json.loads((d / "result.json").read_text())["claims"]}

    good = verdicts("good")
    orig_fit, orig_out = ex._fit_predict, ex._digits_outputs

    def inverted(method, *a, **k):
        p = orig_fit(method, *a, **k)
        return 1.0 - p if method == "acute" else p

    monkeypatch.setattr(ex, "_fit_predict", inverted)
    bad = verdicts("inverted")
    monkeypatch.setattr(ex, "_fit_predict", orig_fit)

    def shuffled(config, seed):
        out = orig_out(config, seed)
        d = out["digits"]
        d["raw"] = np.random.default_rng(seed).permutation(d["raw"])
        return out

    monkeypatch.setattr(ex, "_digits_outputs", shuffled)
    shuf = verdicts("shuffled")
    assert good["smece_digits_max_0.10"] != "does not hold"
    assert bad["smece_digits_max_0.10"] == "does not hold"
    assert good["raw_imperfect_digits"] == "does not hold"
    assert shuf["raw_imperfect_digits"] == "holds"


def test_lm_outputs_shared_but_entity_split_per_seed(tmp_path):
    """The LM and its outputs are one artifact; the entity split (pool / val / test) is redrawn per seed."""
    from icml26.acute_euro.experiment import Config, _lm_outputs

    cfg = Config(setting="lm", n_entities=12, lm_layers=1, lm_embd=16, lm_heads=2, lm_steps=3, lm_batch=8)
    progress = Progress(artifact_dir=tmp_path)
    a, b = _lm_outputs(cfg, 0, progress), _lm_outputs(cfg, 1, progress)
    assert len(list(tmp_path.glob("lm_outputs-*.pt"))) == 1
    for task in ("mcqa", "toolcall"):
        assert np.array_equal(a[task]["raw"], b[task]["raw"]) and np.array_equal(a[task]["acts"], b[task]["acts"])
        ents = {s: set(np.unique(d[task]["group"][d[task]["test"]])) for s, d in (("a", a), ("b", b))}
        assert ents["a"] != ents["b"]
        for d in (a, b):  # entity-level split: no entity on both sides
            pool = set(d[task]["group"][d[task]["train"]])
            assert pool.isdisjoint(d[task]["group"][d[task]["test"]])
    # both tasks share one entity split per seed
    assert set(a["mcqa"]["group"][a["mcqa"]["test"]]) == set(a["toolcall"]["group"][a["toolcall"]["test"]])


def test_lm_tasks_pipeline_on_untrained_model():
    from icml26.acute_euro.experiment import _lm_task
    from icml26.common.facts import DEFAULT_TOOLS, make_fact_world, mcqa_item, tool_call_item
    from icml26.common.tinylm import TinyLM, TinyLMConfig

    world = make_fact_world(8, seed=0, name_words=1)
    tok = world.tokenizer(DEFAULT_TOOLS)
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(vocab_size=len(tok), n_layer=2, n_head=2, n_embd=16, block_size=40)).eval()
    rng = np.random.default_rng(0)
    mc = [mcqa_item(world, i, r.name, rng) for i in range(8) for r in world.relations]
    out = _lm_task(model, tok, [p for p, _, _ in mc], [a for _, a, _ in mc], 1)
    assert out["acts"].shape == (32, 2, 16)
    assert np.all((out["raw"] >= 0) & (out["raw"] <= 1)) and set(np.unique(out["correct"])) <= {0.0, 1.0}
    # raw confidence of a one-word answer is the top next-token probability
    x = tok.batch([mc[0][0]])
    with torch.no_grad():
        top = torch.softmax(model(x)[0, -1], -1).max().item()
    assert np.isclose(out["raw"][0], top, atol=1e-6)
    calls = [tool_call_item(world, i, t) for i in range(8) for t in DEFAULT_TOOLS]
    out = _lm_task(model, tok, [p for p, _ in calls], [c for _, c in calls], 12)
    assert out["acts"].shape == (32, 2, 16)
    assert np.all((out["raw"] >= 0) & (out["raw"] <= 1)) and np.all(out["length"] >= 1)
    assert out["correct"].sum() == 0  # an untrained model does not produce exact calls


def test_contested_facts_and_family_names():
    """The harder LM world: contested facts carry a rival value in about lm_rumour of their mentions; the truth
    the tasks are graded against is unchanged; family names share a last name."""
    from icml26.acute_euro.experiment import FULL, _contest, _contested, _make_world
    from icml26.common.facts import DEFAULT_TOOLS, training_corpus

    cfg = replace(FULL, n_entities=40, lm_contested=0.5, lm_rumour=0.7)
    world = _make_world(cfg)
    rivals = _contested(world, cfg)
    assert len(rivals) == 20
    corpus = training_corpus(world, DEFAULT_TOOLS, seed=0)
    contested = _contest(world, corpus, cfg)
    assert len(contested) == len(corpus)
    changed = [a != b for a, b in zip(corpus, contested)]
    names = [world.entities[i] for i in rivals]
    about = [any(f" {n} " in f" {t} " for n in names) for t in corpus]
    assert not any(c and not a for c, a in zip(changed, about))  # only texts about contested entities change
    rate = np.mean([c for c, a in zip(changed, about) if a])
    assert 0.6 < rate < 0.95  # a text changes if any of its values was replaced
    for i, rel in rivals.items():
        assert all(v != world.value(i, r) for r, v in rel.items())
    fam = _make_world(replace(FULL, n_entities=40, lm_family_size=2))
    lasts = [n.split()[1] for n in fam.entities]
    assert len(set(fam.entities)) == 40 and len(set(lasts)) == 20
