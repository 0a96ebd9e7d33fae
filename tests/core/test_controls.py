"""Evidence v3 in the core (issue 45): control arms, held-out seeds and the ledger, no test without units, win
tolerances, strict bounds, knife edges and check mutants."""

import json
from dataclasses import replace

import numpy as np
import pytest
import toychecks

from icml26.core import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    Report,
    counts,
    judge_every,
    judge_k_of_n,
    judge_non_inferiority,
    judge_superiority,
    judge_threshold,
    load_result,
    run_experiment,
    summary_line,
)
from icml26.core import registry as reg
from icml26.core.testing import mutant
from icml26.verify import knife_edges

RNG = np.random.default_rng(0)
BASE = RNG.normal(0.5, 0.05, 8)
METHOD = BASE + 0.2 + RNG.normal(0, 0.02, 8)


def _report(control_values):
    rep = Report(seeds=list(range(8)))
    c = rep.add_claim(
        judge_superiority(
            "win", "the method beats the base", ("method", METHOD), {"base": BASE}, controls=["win_ablated"]
        )
    )
    rep.add_claim(c.control("win_ablated", "without the mechanism it does not win", ("ablated", control_values)))
    rep.resolve()
    return rep.by_id()


def test_a_control_arm_that_passes_the_rule_makes_the_claim_inconclusive():
    # a generator of its own: the module's RNG would hand each test other draws depending on which tests ran before
    # it in the same xdist worker (CI saw the tie below come out undecided)
    noise = np.random.default_rng(1).normal(0, 0.02, 8)
    by = _report(BASE + 0.19 + noise)  # the ablated arm wins too: the rule does not separate them
    assert by["win_ablated"].kind == "control" and by["win_ablated"].verdict == DOES_NOT_HOLD
    assert by["win_ablated"].test["arm_verdict"] == HOLDS
    assert by["win"].verdict == INCONCLUSIVE and by["win"].measured_verdict == HOLDS
    assert by["win"].reason == "control passes: win_ablated"


def test_a_control_arm_that_fails_the_rule_keeps_the_verdict():
    noise = np.random.default_rng(2).normal(0, 0.02, 8)
    by = _report(BASE - 0.05 + noise)  # the ablated arm is below the base: its own test does not hold
    assert by["win_ablated"].verdict == HOLDS and by["win_ablated"].test["arm_verdict"] != HOLDS
    assert by["win"].verdict == HOLDS and by["win"].reason == "" and by["win"].controls == ("win_ablated",)
    d = by["win"].to_dict()
    assert d["controls"] == ["win_ablated"] and d["no_control"] == ""
    json.dumps([c.to_dict() for c in by.values()])


def test_a_control_applies_the_claims_own_rule_with_its_threshold_and_baselines():
    c = judge_threshold("t", "at least 0.4", ("m", METHOD), threshold=0.4, controls=["t0"])
    k = c.control("t0", "the arm is not", ("arm", BASE - 0.2))
    assert k.test["rule"] == c.test["rule"] and k.test["threshold"] == 0.4 and k.verdict == HOLDS
    rep = Report()
    rep.add_claim(c)
    rep.add_claim(judge_threshold("t0", "a different rule", ("arm", BASE), threshold=0.9, kind="control"))
    with pytest.raises(ValueError, match="rule"):
        rep.resolve()  # a control made by hand with another threshold is refused
    rep = Report()
    rep.add_claim(c)
    rep.add_claim(c.control("t0", "the arm", ("arm", BASE[:3])))
    with pytest.raises(ValueError, match="units"):
        rep.resolve()  # on other seeds: refused
    rep = Report()
    rep.add_claim(judge_threshold("t", "at least 0.4", ("m", METHOD), threshold=0.4))
    rep.add_claim(c.control("t0", "the arm", ("arm", BASE)))
    with pytest.raises(ValueError, match="no claim"):
        rep.resolve()  # a control no claim names


def test_controls_are_validated():
    with pytest.raises(ValueError, match="never both"):
        judge_threshold("t", "s", ("m", METHOD), threshold=0.4, controls=["x"], no_control="closed form")
    with pytest.raises(ValueError, match="only a claim"):
        judge_every("k", "s", ("m", [0.0]), bound=1.0, kind="check", controls=["x"])
    with pytest.raises(ValueError, match="not a claim"):
        judge_every("k", "s", ("m", [0.0]), bound=1.0, kind="check").control("x", "s", ("a", [0.0]))
    with pytest.raises(ValueError, match="precondition"):
        judge_threshold("t", "s", ("m", METHOD), threshold=0.4, kind="control", requires=["p"])
    rep = Report()
    rep.add_claim(judge_every("c", "s", ("m", [0.0]), bound=1.0, controls=["missing"]))
    with pytest.raises(ValueError, match="not control statements"):
        rep.resolve()


def test_uncontrolled_claims_are_counted_apart():
    rep = Report()
    rep.add_claim(judge_every("a", "s", ("m", [0.0]), bound=1.0))
    rep.add_claim(judge_every("b", "s", ("m", [0.0]), bound=1.0, no_control="closed-form truth"))
    rep.resolve()
    k = counts(c.to_dict() for c in rep.claims)
    assert k["uncontrolled"][HOLDS] == 1 and k["claim"][HOLDS] == 1
    line = summary_line(k)
    assert "claims: 1/1 hold" in line and "uncontrolled claims: 1/1 hold" in line
    assert "(uncontrolled)" in rep.to_markdown("T", {}) and "none: closed-form truth" in rep.to_markdown("T", {})


@pytest.mark.parametrize("test", ["wilcoxon", "ttest", "bootstrap"])
def test_no_p_value_from_one_unit_or_zero_variance(test):
    one = judge_superiority("a", "s", ("m", [2.0]), {"b": [1.0]}, test=test)
    assert one.verdict == INCONCLUSIVE and one.test["p_value"] is None and "1 unit" in one.baselines[0]["no_test"]
    flat = judge_superiority("a", "s", ("m", np.arange(6.0) + 1), {"b": np.arange(6.0)}, test=test)
    assert flat.verdict == INCONCLUSIVE and "zero-variance" in flat.baselines[0]["no_test"]
    m = np.array([0.3, 0.7, 1.1, 1.3, 2.9, 3.3])  # better by exactly 0.1: float round-off is not a spread
    roundoff = judge_superiority("a", "s", ("m", m), {"b": m - 0.1}, test=test)
    assert np.ptp(m - (m - 0.1)) > 0 and roundoff.verdict == INCONCLUSIVE
    two = judge_superiority("a", "s", ("m", [2.0, 3.5]), {"b": [1.0, 1.1]}, test=test)
    assert two.verdict == INCONCLUSIVE
    assert judge_superiority("a", "s", ("m", [1.0]), {"b": [2.0]}, test=test).verdict == DOES_NOT_HOLD
    ni = judge_non_inferiority("n", "s", ("m", [1.0, 1.0, 1.0]), {"b": [1.0, 1.0, 1.0]}, margin=0.1)
    assert ni.verdict == INCONCLUSIVE
    assert judge_threshold("t", "s", ("m", [0.9, 0.95]), threshold=0.5).verdict == INCONCLUSIVE


def test_a_bound_met_with_equality_does_not_satisfy_a_strict_sense():
    assert judge_every("e", "less than 0", ("m", [0.0, -1.0]), bound=0.0, sense="<").verdict == DOES_NOT_HOLD
    assert judge_every("e", "at most 0", ("m", [0.0, -1.0]), bound=0.0, sense="<=").verdict == HOLDS
    assert judge_threshold("t", "s", ("m", [1.0, 1.0, 1.0]), threshold=1.0, sense=">").verdict == DOES_NOT_HOLD
    assert judge_threshold("t", "s", ("m", [1.0, 1.0, 1.0]), threshold=1.0, sense=">=").verdict == HOLDS


def test_wins_count_only_beyond_the_measured_tolerance():
    m, b = np.array([1.0, 1.0, 1.0, 1.0]), np.array([0.999, 0.9995, 0.5, 0.6])
    assert judge_k_of_n("k", "s", ("m", m), {"b": b}, k=4).verdict == HOLDS
    c = judge_k_of_n("k", "s", ("m", m), {"b": b}, k=4, tol=0.01)
    assert c.verdict == DOES_NOT_HOLD and c.baselines[0]["wins"] == 2 and c.test["tol"] == 0.01
    assert (
        "0.01" in c.test["rule"]
        and "no rerun tolerance" in judge_k_of_n("k", "s", ("m", m), {"b": b}, k=1).test["rule"]
    )
    with pytest.raises(ValueError, match="tol"):
        judge_k_of_n("k", "s", ("m", m), {"b": b}, k=1, tol=-1.0)


def test_a_verdict_within_verify_tolerance_is_flagged_knife_edge():
    rep = Report()
    rep.add_claim(judge_threshold("near", "s", ("m", [0.505, 0.51, 0.52]), threshold=0.49, no_control="x"))
    rep.add_claim(judge_threshold("far", "s", ("m", [0.9, 0.91, 0.92]), threshold=0.5, no_control="x"))
    rep.add_claim(judge_threshold("slow", "s", ("m", [0.9, 0.91, 0.92]), threshold=0.5, no_control="x"))
    rep.resolve(timing=["slow"])  # a wall-clock statement gets verify's looser timing tolerance (0.5)
    by = rep.by_id()
    assert by["near"].verdict == HOLDS and by["near"].test["knife_edge"] is True
    assert by["far"].test["knife_edge"] is False and by["slow"].test["knife_edge"] is True
    assert "KNIFE EDGE" in rep.to_markdown("T", {})
    result = {"claims": [c.to_dict() for c in rep.claims]}
    assert [e["id"] for e in knife_edges(result)] == ["near"]
    assert [e["id"] for e in knife_edges(result, timing_statements=["slow"])] == ["near", "slow"]


def test_a_check_is_a_knife_edge_only_within_round_off_and_not_when_it_meets_its_bound_exactly():
    rep = Report()
    kw = dict(threshold=0.0, sense="<=", kind="check", mc_se=0.0)
    rep.add_claim(judge_threshold("tie", "s", ("m", [0.0, 0.0, 0.0]), **kw))  # meets its bound by construction
    rep.add_claim(judge_threshold("roundoff", "s", ("m", [-1e-13, -1e-13, -1e-13]), **kw))
    rep.add_claim(judge_threshold("clear", "s", ("m", [-0.05, -0.05, -0.05]), **kw))  # within 0.1 of a claim's bound
    rep.resolve()
    by = rep.by_id()
    assert [i for i in ("tie", "roundoff", "clear") if by[i].test.get("knife_edge")] == ["roundoff"]
    result = {"claims": [c.to_dict() for c in rep.claims]}
    assert [e["id"] for e in knife_edges(result)] == ["roundoff"]


def test_dev_seeds_overlapping_reported_seeds_are_refused_before_any_work(tmp_path, toy_experiment, calls):
    with pytest.raises(ValueError, match=r"quick seeds \[0, 1\] are also dev seeds"):
        replace(toy_experiment, dev_seeds=(0, 1))
    ledger = (
        {"variant": "noise 0.2 instead of 0.1", "seeds": [0, 1], "outcome": "precondition held in 2/2"},
        {"variant": "a lapse: looked at a reported seed", "seeds": [11], "outcome": "recorded, flagged"},
    )
    reg._REGISTRY["toy"] = replace(
        toy_experiment, seeds={"quick": (10, 11, 12), "full": (10, 11, 12)}, dev_seeds=(0, 1), tuning=ledger
    )
    with pytest.raises(ValueError, match=r"seeds \[1\] are dev seeds of toy"):
        run_experiment("toy", seeds=[1, 10, 11], out=tmp_path)
    assert calls == []  # refused before measuring anything
    r = load_result(run_experiment("toy", out=tmp_path))
    assert r["seeds"] == [10, 11, 12] and r["dev_seeds"] == [0, 1] and r["dev_run"] is False
    assert [t["saw reported seeds"] for t in r["tuning"]] == ["no", [11]] and "budgets" in r
    md = (
        tmp_path / "toy" / sorted(p.name for p in (tmp_path / "toy").iterdir() if p.name[0] != ".")[-1] / "report.md"
    ).read_text()
    assert "Tuning ledger" in md and "noise 0.2 instead of 0.1" in md
    dev = load_result(run_experiment("toy", out=tmp_path / "dev", dev=True))
    assert dev["seeds"] == [0, 1] and dev["dev_run"] is True


def test_cli_refuses_dev_seeds_in_one_line(tmp_path, toy_experiment):
    from typer.testing import CliRunner

    from icml26.cli import app

    reg._REGISTRY["toy"] = replace(
        toy_experiment, seeds={"quick": (10, 11, 12), "full": (10, 11, 12)}, dev_seeds=(0, 1, 2)
    )
    r = CliRunner().invoke(app, ["run", "toy", "--seeds", "0,10,11", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "dev seeds of toy" in r.output and "--dev" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["run", "toy", "--dev", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "DEV seeds" in (tmp_path / "toy").glob("2*").__next__().joinpath("report.md").read_text()


# --- every check can fail: one guarded function and one mutant per judge that checks use ---------------------------


def _checks() -> dict:
    seeds = range(3)
    norms = [x for s in seeds for x in toychecks.clipped_norms(s)]
    cov = [toychecks.coverage(np.random.default_rng(s).normal(size=400), 0.9) for s in seeds]
    est = [toychecks.mean_estimate(np.full(50, 2.0) + 0.001 * s) for s in seeds]
    naive = [2.5, 2.6, 2.4]
    return {
        "every": judge_every("clip", "every clipped norm <= C", ("norms", norms), bound=1.0, tol=1e-9, kind="check"),
        "threshold": judge_threshold("cov", "coverage >= 0.85", ("coverage", cov), threshold=0.85, kind="check"),
        "superiority": judge_superiority(
            "sup",
            "closer to 2 than naive",
            ("est", [-abs(e - 2) for e in est]),
            {"naive": [-abs(n - 2) for n in naive]},
            test="ttest",
            kind="check",
        ),
        "non_inferiority": judge_non_inferiority(
            "ni",
            "no worse than 2",
            ("est", est),
            {"two": [2.0, 2.0, 2.0]},
            margin=0.01,
            higher_is_better=False,
            kind="check",
        ),
        "k_of_n": judge_k_of_n(
            "kn",
            "closer in 3/3",
            ("est", [-abs(e - 2) for e in est]),
            {"naive": [-abs(n - 2) for n in naive]},
            k=3,
            tol=1e-6,
            kind="check",
        ),
    }


MUTANTS = {
    "every": ("toychecks.clip_to_norm", lambda v, c: v),  # clipping skipped
    "threshold": ("toychecks.coverage", lambda s, q: float(np.mean(s <= np.quantile(s, q / 2)))),  # quantile halved
    "superiority": ("toychecks.mean_estimate", lambda x: float(np.mean(x)) * 1.5),  # scaled
    "non_inferiority": ("toychecks.mean_estimate", lambda x: float(np.mean(x)) + 0.5),  # a term added
    "k_of_n": ("toychecks.mean_estimate", lambda x: float(np.median(x[:1])) * 0.5),  # a step skipped
}


@pytest.mark.parametrize("kind", sorted(MUTANTS))
def test_each_check_kind_fails_under_a_mutant(kind):
    assert _checks()[kind].verdict == HOLDS
    target, broken = MUTANTS[kind]
    with mutant(target, broken) as original:
        assert callable(original)
        assert _checks()[kind].verdict != HOLDS
    assert _checks()[kind].verdict == HOLDS  # the original is back


def test_mutant_patches_names_imported_elsewhere_and_refuses_bad_targets():
    import icml26.core.judges as judges
    from icml26.core import stats

    with mutant("icml26.core.stats.mean_ci", lambda *a, **k: "mutated"):
        assert stats.mean_ci([1.0]) == "mutated" and judges.mean_ci([1.0]) == "mutated"
    assert judges.mean_ci is stats.mean_ci and stats.mean_ci([1.0, 3.0]).mean == 2.0
    with pytest.raises(ValueError, match="dotted path"):
        with mutant("icml26.core.stats.nope", lambda: 0):
            pass
