import copy
import json

import pytest

from icml26.core import (
    VERDICTS,
    judge_records,  # noqa: E402
)
from icml26.t3_unlearning.data import make_fictitious_authors, split_forget
from icml26.t3_unlearning.experiment import QUICK

KINDS = {
    "toy_cg_monotone": "precondition",
    "toy_forget_mass": "claim",
    "toy_kl": "claim",
    "toy_gap_grows": "claim",
    "full_model_remembers": "precondition",
    "lm_cg_fails": "precondition",
    "lm_fq_vs_cg": "claim",
    "lm_fq_vs_finetune": "claim",
    "lm_utility_vs_full": "claim",
    "lm_utility_vs_finetune": "claim",
    "lm_fq_vs_temper": "claim",
    "lm_cg_fails_at_utility": "precondition",
    "lm_fq_vs_cg_at_utility": "claim",
    "lm_fq_vs_finetune_at_utility": "claim",
    "lm_utility_vs_full_at_utility": "claim",
    "lm_utility_vs_finetune_at_utility": "claim",
    "lm_fq_vs_temper_at_utility": "claim",
    "cg_hurt_by_memorisation": "precondition",
    "memorisation_hurts_cg_more": "claim",
    "cost_fit_time": "claim",
    "cost_gap_grows": "claim",
}
REQUIRES = {
    "toy_forget_mass": ["toy_cg_monotone"],
    "toy_gap_grows": ["toy_cg_monotone"],
    "lm_fq_vs_temper": ["full_model_remembers"],
    "lm_fq_vs_temper_at_utility": ["full_model_remembers"],
    "lm_fq_vs_cg": ["full_model_remembers", "lm_cg_fails"],
    "lm_fq_vs_cg_at_utility": ["full_model_remembers", "lm_cg_fails_at_utility"],
    "lm_fq_vs_finetune": ["full_model_remembers"],
    "lm_fq_vs_finetune_at_utility": ["full_model_remembers"],
    "memorisation_hurts_cg_more": ["cg_hurt_by_memorisation"],
}


@pytest.fixture(scope="module")
def quick(quick_run):
    run_dir = quick_run("t3_unlearning")
    return run_dir, json.loads((run_dir / "result.json").read_text())


def test_quick_preset_end_to_end(quick):
    run_dir, result = quick
    by_id = {c["id"]: c for c in result["claims"]}
    assert {i: c["kind"] for i, c in by_id.items()} == KINDS
    assert {i: c["requires"] for i, c in by_id.items() if c["requires"]} == REQUIRES
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    assert not [c for c in result["claims"] if c["kind"] == "check"]  # no guarantee is judged here
    for c in result["claims"]:
        if c["kind"] == "claim" and any(by_id[r]["verdict"] != "holds" for r in c["requires"]):
            assert c["verdict"] == "inconclusive" and c["reason"].startswith("setting invalid")
    assert by_id["toy_forget_mass"]["test"]["unit"] == "instance"  # independent toy problems, 2 per seed
    assert by_id["toy_forget_mass"]["test"]["n_units"] == 2 * len(result["seeds"])
    assert by_id["lm_fq_vs_finetune"]["test"]["n_units"] == len(result["seeds"])  # LM statements: seeds are the unit
    tuning = result["budgets"]
    assert tuning["CG"]["configs"] == len(QUICK.cg_guidances) and tuning["Temper"]["steps"] == 0
    assert tuning["GA"]["configs"] == len(QUICK.ft_lrs) * len(QUICK.ft_eval_epochs)
    assert tuning["GA"]["steps"] == QUICK.ft_epochs
    cost = result["metrics"]["cost_sweep"]
    assert [r["width"] for r in cost["rows"]] == list(QUICK.cost_widths)
    assert all(0 < r["share"] < 1 and r["t3_fit_seconds"] > 0 and r["ga_seconds"] > 0 for r in cost["rows"])
    assert by_id["cost_fit_time"]["test"]["n_units"] == len(QUICK.cost_widths)  # judged on the sweep
    m = result["metrics"]
    assert m["retain_model"]["forget_quality"] == 1.0  # the oracle against itself
    for rule in ("fq", "fq_at_utility"):
        chosen = m["chosen_hyperparameters"][rule]
        assert set(chosen) == {"CG", "T3", "Temper", "GA", "GradDiff", "NPO"}
        assert chosen["CG"]["T"] == 1.0 and chosen["T3"]["T"] > 1.0 and chosen["T3"]["lambda"] > 0
        assert chosen["Temper"]["lambda"] == 0.0 and chosen["CG"]["lambda"] in QUICK.cg_guidances
        assert chosen["GA"]["epochs"] in QUICK.ft_eval_epochs
        for row in m["per_seed"]:
            assert 0.0 <= row[rule]["T3"]["forget_quality"] <= 1.0 and 0.0 <= row[rule]["T3"]["model_utility"] <= 1.0
    assert 0.0 < m["value_token_prob"]["full_on_forget"] <= 1.0
    assert set(m["memorisation_sweep"]["value_token_prob"]) == {"150", "250"}  # the snapshot and the final model
    for name in ("tofu_scatter.png", "toy_temperature.png", "memorisation_sweep.png", "report.md"):
        assert (run_dir / name).exists()
    arts = sorted("-".join(p.name.split("-")[:2]) for p in (run_dir.parent / ".artifacts").glob("*.pt"))
    assert arts == ["t3-cost", "t3-selection", "tinylm-full", "tinylm-retain"]  # built once, shared by the seeds


def _rejudge(result, mutate):
    records = copy.deepcopy(result["records"])
    for r in records:
        mutate(r)
    return judge_records("t3_unlearning", QUICK, records, result["seeds"]).by_id()


def test_mutants_move_the_verdicts(quick):
    result = quick[1]

    def cg_succeeds_and_t3_fits_slowly(r):  # CG already forgets: the precondition fails, T3 vs CG is not judged
        for rule in ("fq", "fq_at_utility"):
            r["lm"][rule]["CG"]["log10_fq"] = 0.0
        for row in r["shared"]["cost_sweep"]["rows"]:  # and a T3 fit as slow as GA at every width
            row["ga_over_t3_seconds"] = 0.5

    c = _rejudge(result, cg_succeeds_and_t3_fits_slowly)
    assert c["lm_cg_fails"].verdict == "does not hold"
    assert c["lm_fq_vs_cg"].verdict == "inconclusive" and c["lm_fq_vs_cg"].reason == "setting invalid: lm_cg_fails"
    assert c["cost_fit_time"].verdict == "does not hold" and c["cost_gap_grows"].verdict == "does not hold"

    def t3_is_cg_and_temper_but_fast(r):  # a T3 that does nothing beyond CG or tempering never beats them
        for rule in ("fq", "fq_at_utility"):
            for name in ("CG", "T3", "Temper"):
                r["lm"][rule][name]["log10_fq"] = -5.0
        r["shared"]["full_model"]["forget_quality"] = 1e-6
        for row, ratio in zip(r["shared"]["cost_sweep"]["rows"], (2.0, 9.0), strict=True):
            row["ga_over_t3_seconds"] = ratio

    c = _rejudge(result, t3_is_cg_and_temper_but_fast)
    assert c["lm_cg_fails"].verdict == "holds" and c["full_model_remembers"].verdict == "holds"
    assert c["lm_fq_vs_cg"].verdict == "does not hold" and c["lm_fq_vs_temper"].verdict == "does not hold"
    assert c["cost_fit_time"].verdict == "holds" and c["cost_gap_grows"].verdict == "holds"


def test_toy_mutants_move_the_verdicts(quick):
    result = quick[1]

    def no_tempering_gain(r):  # CG fails badly at m = 0.99 but T3 = CG at every m: the claims must fail
        rows = r["toy"]["rows"]
        for x in rows:
            if x["T"] == 1.0 and x["m"] == max(QUICK.toy_masses):
                x["forget_mass"] += 1.0
        cg = {(x["m"], x["seed"]): x for x in rows if x["T"] == 1.0}
        for x in rows:
            x.update({k: cg[(x["m"], x["seed"])][k] for k in ("forget_mass", "kl", "tv")})

    c = _rejudge(result, no_tempering_gain)
    assert c["toy_cg_monotone"].verdict != "does not hold"
    assert c["toy_forget_mass"].verdict in ("does not hold", "inconclusive")
    assert c["toy_gap_grows"].verdict in ("does not hold", "inconclusive")

    def cg_improves_when_concentrated(r):
        for x in r["toy"]["rows"]:
            if x["T"] == 1.0 and x["m"] == max(QUICK.toy_masses):
                x["forget_mass"] = 1e-6

    c = _rejudge(result, cg_improves_when_concentrated)
    assert c["toy_cg_monotone"].verdict == "does not hold"
    assert c["toy_forget_mass"].reason == "setting invalid: toy_cg_monotone"


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
    with pytest.raises(ValueError, match="n_authors must be"):
        make_fictitious_authors(1)
    with pytest.raises(ValueError, match="percent must lie in"):
        split_forget(make_fictitious_authors(4), 0)
