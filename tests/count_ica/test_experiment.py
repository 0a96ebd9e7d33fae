"""Smoke test of the quick preset through the core runner; mutants move verdicts."""

import json
from dataclasses import replace

import numpy as np
import pytest

from icml26.core import VERDICTS
from icml26.count_ica import CountICA, make_arpln_data
from icml26.count_ica.model import ARPLNICA

KINDS = {
    "fastica_degraded_moderate": "precondition",
    "fastica_fine_high": "precondition",
    "beats_ica_moderate": "claim",
    "beats_ica_moderate_no_temporal_prior": "control",
    "paper_family_beats_ica_moderate": "claim",
    "paper_family_beats_ica_moderate_no_temporal_prior": "control",
    "refinement_beats_ica_moderate": "claim",
    "refinement_beats_ica_moderate_no_temporal_prior": "control",
    "beats_chance_moderate": "claim",
    "beats_chance_moderate_no_temporal_prior": "control",
    "posterior_predictive_sw": "claim",
    "posterior_predictive_sw_no_temporal_prior": "control",
    "parity_high": "claim",
    "parity_high_no_temporal_prior": "control",
    "truth_start_stays_high": "claim",
    "truth_start_stays_high_factorised": "control",
    "truth_elbo_not_beaten_high": "claim",
    "truth_elbo_not_beaten_high_factorised": "control",
    "regime_viterbi_accuracy": "claim",
    "regime_viterbi_accuracy_one_regime": "control",
    "forward_backward_exact": "check",
    "sample_path_truth_sw": "check",
    "align_planted_exact": "check",
}


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("count_ica")
    result = json.loads((run_dir / "result.json").read_text())
    by_id = {c["id"]: c for c in result["claims"]}
    assert {c["id"]: c["kind"] for c in result["claims"]} == KINDS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    for cid, kind in KINDS.items():
        if kind == "check":
            assert by_id[cid]["verdict"] == "holds", by_id[cid]
        if kind == "claim":
            assert by_id[cid]["controls"], cid
    assert by_id["beats_ica_moderate"]["requires"] == ["fastica_degraded_moderate"]
    assert by_id["parity_high"]["requires"] == ["fastica_fine_high"]
    assert by_id["beats_ica_moderate"]["test"]["min_effect"] == 0.08
    b = result["budgets"]
    assert b["ARPLN-ICA (random start)"]["budget"] == b["ARPLN-ICA without temporal prior"]["budget"]
    assert b["ARPLN-ICA (random start)"]["configs"] == 2  # the most starts of any scenario (quick: 2 at moderate)
    assert "of FastICA's configurations" in b["FastICA (tuned)"]["note"]  # the gap is stated
    assert "random non-negative columns (data-free) |cos| (moderate)" in {
        x["name"] for x in by_id["beats_ica_moderate"]["baselines"]
    }
    assert "source_recovery_mcc" in result["tables"] and "temporal_prior_effect" in result["tables"]
    assert "truth_start" in result["tables"]
    assert by_id["truth_start_stays_high"]["controls"] == ["truth_start_stays_high_factorised"]
    for name in ("elbo_curve.png", "mixing_columns.png", "regime_paths.png", "report.md"):
        assert (run_dir / name).exists()


def test_the_main_arm_is_not_started_from_fastica(monkeypatch):
    """The main arm (and its control) start from a random mixing: FastICA is called only by the baselines and by
    the labelled FastICA-started arms.  The paper's factorised family gets the main arm's starts (n_init), and the
    truth-start fits run every epoch (tol = 0, no early stopping)."""
    from icml26.count_ica import experiment

    inits, tols = [], []
    real = experiment._fit

    def spy(cfg, X, seed, **kw):
        init = kw.get("init", "random")
        inits.append((init if isinstance(init, str) else "array", kw.get("temporal", True), kw.get("n_regimes", 1)))
        if not isinstance(init, str):  # the truth-start fits: the true mixing, free and frozen, both families
            inits[-1] += (kw["covariance"], kw.get("fix_mixing", False))
            tols.append(cfg.tol)
        elif init == "random" and kw.get("n_regimes", 1) == 1:
            inits[-1] += (kw.get("covariance"), kw.get("n_init", 1))
        return real(replace(cfg, max_epochs=2), X, seed, **kw)

    monkeypatch.setattr(experiment, "_fit", spy)
    cfg = replace(experiment.FULL, n=20, T=6, n_ppc=20, n_projections=10, regime_n=20, fastica_restarts=1)
    experiment.measure(cfg, 0)
    assert dict(cfg.method_restarts) == {"moderate": 4, "high": 2}  # the main arm and its control get equal starts
    assert cfg.covariance == "full"  # every ARPLN arm uses the coupled posterior

    def r(k, cov=None):
        return [("random", True, 1, cov, k), ("random", False, 1, cov, k)]

    fa = [("fastica", True, 1), ("fastica", False, 1)]
    truth = [("array", True, 1, fam, fix) for fam in ("full", "diag") for fix in (False, True, True)]
    regime = [("random", True, 2), ("random", True, 1, None, 1)]  # S-regime: C = 2 and its one-regime control
    assert inits == r(4) + r(4, "diag") + fa + r(2) + truth + regime
    assert tols == [0.0] * 6  # every truth-start fit, free and frozen, runs all its epochs


def test_the_main_arm_is_the_estimators_best_of_n_init_starts(monkeypatch):
    """The experiment's best-of-starts selection is the estimator's own n_init (the highest final ELBO, no labels),
    the same for the main arm and its control."""
    from icml26.count_ica import experiment

    seen = []
    real_fit = CountICA.fit

    def spy(self, X, *a, **k):
        seen.append((self.n_init, self.temporal_prior, self.random_state))
        return real_fit(self, X, *a, **k)

    monkeypatch.setattr(CountICA, "fit", spy)
    X, _ = make_arpln_data(n=12, T=5, n_features=6, n_components=2, seed=0)
    cfg = replace(experiment.FULL, n_components=2, max_epochs=3)
    m = experiment._fit(cfg, X, 7, n_init=3, temporal=False)
    assert seen == [(3, False, 7)] and m.n_init == 3


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, None])
def test_bad_restart_counts_name_the_argument(bad):
    from icml26.count_ica import experiment

    with pytest.raises(ValueError, match="method_restarts"):
        experiment.restarts(replace(experiment.FULL, method_restarts=(("moderate", bad),)), "moderate")
    with pytest.raises(ValueError, match="method_restarts"):
        experiment.restarts(experiment.FULL, "nowhere")


def test_the_temporal_prior_removed_holds_the_ar_coefficient_at_zero():
    X, _ = make_arpln_data(n=20, T=8, n_features=6, n_components=2, seed=0)
    m = CountICA(2, temporal_prior=False, max_epochs=5, random_state=0).fit(X)
    assert np.all(m.ar_coef_ == 0.0)
    assert np.any(CountICA(2, max_epochs=5, random_state=0).fit(X).ar_coef_ != 0.0)


def test_dropping_the_m_step_lowers_the_elbo(monkeypatch):
    """Method mutant: without the closed-form M-step the prior never adapts and the fitted ELBO is lower."""
    X, _ = make_arpln_data(n=40, T=10, n_features=6, n_components=2, seed=0)
    good = CountICA(2, max_epochs=60, tol=0.0, random_state=0).fit(X).score(X)
    monkeypatch.setattr(ARPLNICA, "m_step", lambda self, q, **k: None)
    bad = CountICA(2, max_epochs=60, tol=0.0, random_state=0).fit(X).score(X)
    assert good > bad


def test_notebook_design_is_the_notebooks_realised_setting_and_validates_its_shape():
    """design='notebook' plugs in the notebook's dynamics and Gamma (unit columns; identical across seeds, only the
    paths change); it needs K = 12, d = 5, and an unknown design is refused."""
    import pytest

    from icml26.count_ica.data import NOTEBOOK_DYNAMICS

    X0, t0 = make_arpln_data(n=5, T=4, scenario="high", seed=0, design="notebook")
    X1, t1 = make_arpln_data(n=5, T=4, scenario="high", seed=1, design="notebook")
    assert np.allclose(t0.mixing, t1.mixing) and not np.array_equal(X0, X1)
    assert np.allclose(np.linalg.norm(t0.mixing, axis=0), 1.0)
    assert np.allclose(t0.ar_coef[:, 0], NOTEBOOK_DYNAMICS["ar_coef"])
    assert float(t0.offsets.flat[0]) == 1.5
    with pytest.raises(ValueError, match="n_features=12"):
        make_arpln_data(n=5, T=4, n_features=6, n_components=2, design="notebook")
    with pytest.raises(ValueError, match="design"):
        make_arpln_data(n=5, T=4, design="paper")
