"""Smoke test of the quick preset (session-wide run): the evidence-v3 layout (every claim controlled, controls as
control statements, preconditions, checks), the named breaks as control arms, and the gloo engine."""

import json

import numpy as np
import torch

from icml26.core import VERDICTS
from icml26.trace_du import DecentralizedSGD, SoftmaxRegression, TraceDU, make_backdoor_digits, metropolis_weights, ring
from icml26.trace_du.claims import (
    AGNOSTIC_BOUND,
    AGNOSTIC_SIGMA,
    CHECKS,
    NO_NOISE,
    NO_REWIND,
    PRECONDITIONS,
    budget_claim_id,
    weak_asr_claim_id,
    weak_claim_id,
)
from icml26.trace_du.distributed import spawn_gossip
from icml26.trace_du.experiment import QUICK, TOPOLOGIES, _draw_seed

UNLEARNING = ("unlearned_asr_close_to_retrain", "unlearned_mia_close_to_retrain", "asr_below_fine_tune")
BUDGET = [budget_claim_id(t, R) for t in TOPOLOGIES for R in QUICK.budgets]
WEAK = [weak_claim_id(t, QUICK.weak_budget, QUICK.weak_epsilon) for t in TOPOLOGIES]
WEAK_ASR = [weak_asr_claim_id(t, QUICK.weak_budget, QUICK.weak_epsilon) for t in TOPOLOGIES]
KINDS = {
    **dict.fromkeys(PRECONDITIONS, "precondition"),
    **dict.fromkeys(CHECKS, "check"),
    **dict.fromkeys(BUDGET + WEAK + WEAK_ASR + list(UNLEARNING), "claim"),
    **dict.fromkeys(
        [c + AGNOSTIC_SIGMA for c in BUDGET]
        + [c + AGNOSTIC_BOUND for c in WEAK]
        + [c + NO_NOISE for c in WEAK_ASR]
        + [c + NO_REWIND for c in UNLEARNING],
        "control",
    ),
}


def test_quick_preset_end_to_end(quick_run):
    run_dir = quick_run("trace_du")
    result = json.loads((run_dir / "result.json").read_text())
    assert result["slug"] == "trace_du" and result["preset"] == "quick"
    assert result["seeds"] == [100, 101, 102] and not set(result["seeds"]) & set(result["dev_seeds"])
    by_id = {c["id"]: c for c in result["claims"]}
    assert {i: c["kind"] for i, c in by_id.items()} == KINDS
    assert all(c["verdict"] in VERDICTS for c in result["claims"])
    assert all(by_id[c]["verdict"] == "holds" for c in CHECKS), {c: by_id[c]["verdict"] for c in CHECKS}
    for cid in BUDGET:  # the efficiency claims: controlled by the agnostic noise level, no precondition needed
        assert by_id[cid]["controls"] == [cid + AGNOSTIC_SIGMA] and by_id[cid]["requires"] == []
    for cid in WEAK:  # the weak certificate against retraining for R rounds, controlled by the agnostic bound
        assert by_id[cid]["controls"] == [cid + AGNOSTIC_BOUND] and by_id[cid]["requires"] == []
    for cid in WEAK_ASR:  # its backdoor companion, controlled by the same rewind without the noise
        assert by_id[cid]["controls"] == [cid + NO_NOISE]
        assert by_id[cid]["requires"] == ["backdoor_learned", "retrain_removes_backdoor"]
    for topo in TOPOLOGIES:  # each arm of the weak cell at its own step size, the no-noise arm at the graph-aware one
        weak = result["records"][0][topo]["weak"]
        assert weak["lr"] == {
            "graph": QUICK.weak_lr_graph,
            "agnostic": QUICK.weak_lr_agnostic,
            "retrain_R": QUICK.weak_lr_retrain,
        }
        assert weak["no_noise"]["t_star"] == weak["graph"]["t_star"] == 60 - QUICK.weak_budget
        assert weak["retrain_R"] != weak["retrain_R_train_lr"]
    for cid in UNLEARNING:  # judged only where the rewind matters (t* >= T/4), against the no-rewind arm
        assert by_id[cid]["controls"] == [cid + NO_REWIND]
        assert by_id[cid]["requires"] == list(PRECONDITIONS)
    rec = result["records"][0]
    for R, row in zip(QUICK.budgets, rec["ring"]["budget"]):  # equal budgets: the same rewind point, own noise
        assert row["graph"]["t_star"] == row["agnostic"]["t_star"] == row["ctl_agnostic_sigma"]["t_star"] == 60 - R
        assert row["graph"]["sigma"] < row["agnostic"]["sigma"] == row["ctl_agnostic_sigma"]["sigma"]
        for key in ("graph", "agnostic", "ctl_agnostic_sigma"):  # M independent draws averaged per arm
            assert len(row[key]["acc_draws"]) == QUICK.noise_draws
            assert row[key]["acc"] == np.mean(row[key]["acc_draws"])
        assert row["graph"]["acc_draws"] != row["agnostic"]["acc_draws"]
        assert set(row["retrain_R"]) == {"acc", "asr", "mia"}
    arms = rec["claim_arms"]  # the no-rewind control: the final model, the same rounds as TRACE-DU
    assert arms["no_rewind"]["t_star"] == 60 and arms["no_rewind"]["rounds"] == arms["trace_du"]["rounds"]
    assert {"methods", "equal_budgets", "sigma_sweep", "learned_diagnostics", "bound_tightness"} <= set(
        result["tables"]
    )
    for name in ("sensitivity_vs_round.png", "equal_budgets.png", "metrics_per_method.png", "training_curve.png"):
        assert (run_dir / name).exists(), name


def test_distributed_engine_matches_in_process():
    data = make_backdoor_digits(seed=0, n_nodes=5, forget=(2,), max_per_node=30, min_per_node=5)
    model = SoftmaxRegression(data.n_features, 10, l2=1e-3)
    W = metropolis_weights(ring(5, chords=1))
    kw = dict(local_steps=2, lr=1.0, batch_size=8, rounds=6, seed=4)
    a = DecentralizedSGD(model, data.node_data, W, **kw).run()
    b = spawn_gossip(2, model, data.node_data, W, **kw)
    assert set(a.checkpoints) == set(b.checkpoints)
    for t in a.checkpoints:
        assert torch.allclose(a.checkpoints[t], b.checkpoints[t], rtol=0, atol=1e-12)
    assert np.allclose(a.distances, b.distances, rtol=0, atol=1e-12)
    assert np.allclose(TraceDU(a).sensitivity([2]).delta, TraceDU(b).sensitivity([2]).delta, atol=1e-10)


def test_every_arm_and_draw_has_its_own_noise_seed():
    """No two arms share a Gaussian draw (the referee's point on the v2 efficiency claims)."""
    seeds = [
        _draw_seed(s, t, j, a, m)
        for s in range(120)
        for t in range(2)
        for j in range(8)
        for a in range(5)
        for m in range(8)
    ]
    assert len(set(seeds)) == len(seeds)
