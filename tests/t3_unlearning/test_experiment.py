import json

from icml26.core import VERDICTS, run_experiment
from icml26.t3_unlearning.data import make_fictitious_authors, split_forget

CLAIMS = {
    "toy_forget_mass",
    "toy_kl",
    "toy_gap_closes",
    "toy_cg_monotone",
    "lm_fq_vs_cg",
    "lm_fq_vs_finetune",
    "lm_utility_vs_full",
    "lm_utility_vs_finetune",
    "lm_fq_vs_cg_at_utility",
    "lm_fq_vs_finetune_at_utility",
    "lm_utility_vs_full_at_utility",
    "lm_utility_vs_finetune_at_utility",
    "cost_params",
    "cost_fit_time",
    "sanity_full_model_fq",
    "memorisation_hurts_cg_more",
}


def test_quick_preset_end_to_end(tmp_path):
    run_dir = run_experiment("t3_unlearning", preset="quick", out=tmp_path)
    result = json.loads((run_dir / "result.json").read_text())
    assert {c["id"] for c in result["claims"]} == CLAIMS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    m = result["metrics"]
    assert m["retain_model"]["forget_quality"] == 1.0  # the oracle against itself
    for rule in ("fq", "fq_at_utility"):
        chosen = m["chosen_hyperparameters"][rule]
        assert set(chosen) == {"CG", "T3", "GA", "GradDiff", "NPO"}
        assert chosen["CG"]["T"] == 1.0 and chosen["T3"]["T"] > 1.0
        for row in m["per_seed"]:
            assert 0.0 <= row[rule]["T3"]["forget_quality"] <= 1.0 and 0.0 <= row[rule]["T3"]["model_utility"] <= 1.0
    assert 0.0 < m["value_token_prob"]["full_on_forget"] <= 1.0
    assert set(m["memorisation_sweep"]["value_token_prob"]) == {"150", "250"}  # the snapshot and the final model
    for name in ("tofu_scatter.png", "toy_temperature.png", "memorisation_sweep.png", "report.md"):
        assert (run_dir / name).exists()


def test_generator_is_deterministic_author_disjoint_and_well_formed():
    a, b = make_fictitious_authors(20, seed=3), make_fictitious_authors(20, seed=3)
    assert a.qa == b.qa and a.world == b.world and a.tokenizer.vocab == b.tokenizer.vocab
    assert make_fictitious_authors(20, seed=4).qa != a.qa
    sp = split_forget(a, 10, seed=0)
    assert len(sp.forget_authors) == 2 and not sp.forget_authors & sp.retain_authors
    assert {q.group for q in sp.forget} == set(sp.forget_authors)
    assert {q.group for q in sp.retain}.isdisjoint(sp.forget_authors)
    for q in a.qa:
        value = a.authors.value(q.group, q.relation)
        assert value in q.answer.split() and value in q.paraphrase.split()  # the paraphrase has the same fact
        assert q.paraphrase != q.answer and len(set(q.perturbed)) == len(q.perturbed) == 5
        assert all(value not in p.split() for p in q.perturbed)  # perturbed answers are wrong
        for t in (q.prompt, q.answer, q.paraphrase, *q.perturbed):
            a.tokenizer.encode(t)  # every word is in the vocabulary


def test_data_errors():
    import pytest

    with pytest.raises(ValueError, match="n_authors must be"):
        make_fictitious_authors(1)
    with pytest.raises(ValueError, match="percent must lie in"):
        split_forget(make_fictitious_authors(4), 0)
