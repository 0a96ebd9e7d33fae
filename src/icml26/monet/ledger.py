"""The tuning ledger of the monet reproduction: every variant tried while designing it, the seeds it saw and what it
gave.  From docs/monet.md, ``git log -- src/icml26/monet`` (issue 27, commits 2fe7ae6-f5cc2a1) and the v3 pilots of
issue 53; written to result.json ``tuning`` and shown in report.md.  Seeds 0-4 were the reported seeds of every run
before issue 53 and so are dev seeds now.  Seeds 100-104 were the reported seeds of the first issue-53 run; its
referee's probes then retrained arms on them (coupled arm, wider grids, naive fusion), so they are dev seeds too.
Seeds 200-204 were the reported seeds of the v3b run; its referee re-judged and probed them (Bayes rate, lr 0.6 and
0.005 edges, the no_ema / coupled pair) and the v3c changes were decided after seeing them, so they are dev seeds now.
Seeds 300-304 were the reported seeds of the v3c run; its (third) referee re-judged them and retrained arms on 302 and
303 (matched-lr weak probes), so they are dev seeds now; the reported seeds are 400-404 (quick: 400-402), fresh."""

from __future__ import annotations

DEV_SEEDS = (0, 1, 2, 3, 4, 100, 101, 102, 103, 104, 200, 201, 202, 203, 204, 300, 301, 302, 303, 304)
V1 = [0, 1, 2, 3, 4]  # the seeds the issue-27 runs reported (and so tuned on)
V2 = [100, 101, 102, 103, 104]  # the first issue-53 reported seeds, since seen by its referee's probes
V3 = [200, 201, 202, 203, 204]  # the v3b reported seeds, since re-judged and probed by the second referee
V4 = [300, 301, 302, 303, 304]  # the v3c reported seeds, since re-judged and probed by the third referee

TUNING: tuple[dict, ...] = (
    dict(
        variant="issue 27: spec S1 knobs (scale_b 1, noise_b 0.6, no flip, gain 1) with Adam (2fe7ae6)",
        seeds=[0],
        outcome="joint's weak probe matched the unimodal model's (ratio 0.95-1.0): no imbalance; SGD (momentum 0.9, "
        "wd 1e-4, the balancing papers' protocol) kept for every arm",
    ),
    dict(
        variant="issue 27: S1 weak modality sign-flipped (flip_b 0.5), scale_b 2, noise_b 0.4, gain_b 0.2 (2c73a9f)",
        seeds=V1,
        outcome="precondition held (ratio 0.81) but every multimodal arm lost to the best single modality (the "
        "referee of issue 53: 0.739 vs 0.793); replaced by the complementary setting below",
    ),
    dict(
        variant="issue 27: digits weak view gain 0.3 vs 1 with flip 0.5 (2c73a9f)",
        seeds=[0, 1],
        outcome="gain 0.3: ratio 0.50-0.57 but the weak view added nothing; flip 0.5, gain 1 kept (ratio 0.64-0.69); "
        "digits is not part of the v3 reported run (budget, see docs)",
    ),
    dict(
        variant="issue 27: 2 configurations per arm planned, 1 used (2c73a9f)",
        seeds=V1,
        outcome="~90 s per seed for three arms on the shared machine; v3 uses 3 configurations for every arm at 20 "
        "epochs on one dataset instead",
    ),
    dict(
        variant="issue 53 pilot: complementary S1, alias_a 5 (a sees y mod 5), spec weak modality, 20 epochs, lr 0.05",
        seeds=[0],
        outcome="a's probe 0.33, b's 0.35, every arm ~0.47-0.50: both modalities too poor to study fusion",
    ),
    dict(
        variant="issue 53 pilot: alias_a 5, corrupt_a 0.1, b with scale_b 1.5-2 / noise_b 0.4-0.5 (gain 1 or 0.3)",
        seeds=[0],
        outcome="b became the best modality and joint did not starve it (weak-probe ratio ~0.97-0.99): "
        "precondition fails",
    ),
    dict(
        variant="issue 53 pilot: alias_a 8 or 7 (a confuses 8, 9 with 0, 1), corrupt_a 0, spec b (gain 1 or 0.3)",
        seeds=[0],
        outcome="b too weak to help (probe 0.32-0.40); fused ~ a's ceiling; joint beat the ensemble",
    ),
    dict(
        variant="issue 53 pilot -> main setting: alias_a 8, corrupt_a 0, b: scale_b 2, noise_b 0.4, flip_b 0.5, "
        "gain_b 0.2",
        seeds=[0],
        outcome="best single modality (a) 0.82 vs oracle-fused ~0.96 (ratio 0.85); joint's b probe 0.50 vs the "
        "unimodal model's 0.74 (ratio 0.68); kept, confirmed by the --dev run below",
    ),
    dict(
        variant="issue 53 --dev run of the full preset (seeds 0-4): complementary S1, 3 configurations per arm, 20 "
        "epochs, the five control arms at MoNet's selected lr",
        seeds=V1,
        outcome="preconditions held (weak-probe ratio 0.65, best single modality / oracle-fused 0.84); MoNet 0.951 vs "
        "joint 0.945 (+0.6 points: beats_joint does not hold), below MMPareto 0.960 and the ensemble 0.955; the "
        "coupled arm collapsed (weak probe at chance); nothing was changed after it",
    ),
    dict(
        variant="thresholds: min_gain 2 points (issue 27, seen with seeds 0-4), weak-probe ratio 0.9 (spec), "
        "fusion ratio 0.95 (issue 53)",
        seeds=V1,
        outcome="kept as given; not tuned",
    ),
    dict(
        variant="after the reported run: a milder coupled control, encoder_fusion_grad in {0.1, 0.3, 1} at lr "
        "{0.02, 0.05} (MoNet's picks)",
        seeds=[0, 1],
        outcome="the weak stream is damaged at every lambda (b probe 0.10-0.50 vs MoNet's ~0.7; test acc 0.80-0.97): "
        "the damage is not specific to lambda = 1, so the control arm stays encoder_fusion_grad = 1",
    ),
    dict(
        variant="issue 53 first reported run (seeds 100-104, since moved to dev): 3 configurations per arm, control "
        "arms at MoNet's lr, coupled = encoder_fusion_grad 1 at tau 0.99, no_fusion = MoNet's best stream",
        seeds=V2,
        outcome="claims 2/4 hold (weak probe, beats best unimodal), controls reject 5/7; the shipped result of "
        "commit b2d3dbe",
    ),
    dict(
        variant="issue 53 referee probes on seeds 100-104: coupled arm reading the features it differentiates "
        "(encoder_fusion_grad 1, ema_tau 0) at lr {0.05, 0.1, 0.02}; wider grids (joint lr 0.2, MoNet lr 0.01, "
        "OGM-GE / PMR alpha grids at lr 0.1); naive logit-sum fusion of the separately trained streams; longer "
        "single-modality budgets (sklearn MLP, seeds 100-102)",
        seeds=V2,
        outcome="coupled arm: weak probe 0.600 > joint's 0.522 (5/5), test 0.9675 > MoNet's 0.9545; joint 0.957, "
        "OGM-GE 0.962, PMR 0.955 at the wider grids; naive fusion passes the best-unimodal rule (0.949 vs 0.810). "
        "WHAT WE TOOK FROM IT (decided after seeing these numbers on 100-104): the coupled control is now the "
        "referee's construction, the naive-fusion control is the unimodal ensemble, every arm's lr grid is widened "
        "to {0.01, 0.02, 0.05, 0.1, 0.2} (OGM-GE / PMR: lr x alpha), control arms tuned on MoNet's grid; hence "
        "seeds 100-104 are dev seeds now and the reported seeds are fresh (200-204)",
    ),
    dict(
        variant="issue 53b --dev run of the full preset (seeds 0-4) with lr {0.01, 0.02, 0.05, 0.1, 0.2} for every "
        "arm and control arm, OGM-GE alpha {1, 2.6} and PMR alpha {1, 2} crossed with it (widened from the edges "
        "the issue-53 --dev run picked on seeds 0-4: joint lr 0.1 5/5, MoNet 0.02 3/5, PMR alpha 2 5/5, OGM-GE "
        "alpha 2.6 3/5), the coupled and naive-fusion controls as now, every control arm tuned on MoNet's grid",
        seeds=V1,
        outcome="759 s wall under load; claims 0/6 hold (beats_joint, beats_naive_fusion, beats_baselines do not "
        "hold; weak_probe, decoupled_probe, beats_best_unimodal inconclusive), controls reject 4/7, checks 8/8, "
        "preconditions 2/2; MoNet 0.952, joint 0.951, MMPareto 0.962, PMR 0.959, ensemble 0.955, coupled 0.968; "
        "top-edge picks: joint lr 0.2 4/5, MLA-lite 4/5, PMR 3/5, ensemble 3/5, no_adaptive 3/5",
    ),
    dict(
        variant="edge probe on seeds 0-4 (after that --dev run): every arm whose pick sat at an edge retrained one "
        "step beyond it (lr 0.4 or 0.005); then joint, the ensemble and MMPareto at lr 0.4 and 0.8",
        seeds=V1,
        outcome="validation would have picked lr 0.4 for joint on 3/4 seeds and the ensemble on 1/3; MoNet and "
        "its control arms diverge at 0.4; lr 0.005 never picked; at lr 0.8 every arm falls to chance or "
        "diverges: lr 0.4 added to every arm's grid (six values), the largest lr that trains; nothing else "
        "changed",
    ),
    dict(
        variant="v3b reported run (seeds 200-204, since moved to dev): the coupled and naive-fusion controls, lr grid "
        "{0.01, ..., 0.4} for every arm and control arm, two no_control claims (monet_decoupled_probe, "
        "monet_beats_naive_fusion)",
        seeds=V3,
        outcome="claims 0/6 hold, controls reject 4/7, checks 8/8, preconditions 2/2 (commit 90ff4b0); MoNet 0.957, "
        "joint 0.957, oracle-fused 0.965, coupled 0.968; weak probes: MoNet 0.730, no_ema 0.797, coupled 0.631, "
        "joint 0.518, unimodal 0.837",
    ),
    dict(
        variant="v3b referee probes: the exact Bayes classifier of S1 (200k samples per seed) on 200-204; lr 0.6 for "
        "joint / the ensemble on seeds 0, 1, 201, 203, 204; lr 0.005 for the coupled arm on 201, 203; the no_ema vs "
        "coupled pair re-read on 200-204; a late-onset fusion-gradient leak (from step 2); a stream-lr {0.1, 0.2, "
        "0.4} x fusion-lr {0.02, 0.05} grid for MoNet on 0-4",
        seeds=[*V1, *V3],
        outcome="Bayes rate 0.980 on every seed (a alone 0.80, b alone 0.905): joint is 0.83 points below the "
        "oracle-fused model, so a 2-point win over joint has no room; lr 0.6 is a cliff (val 0.00-0.60) and 0.005 "
        "is worse than 0.01: grid kept; no_ema beats coupled's weak probe by +16.6 points (5/5, p = 0.008); the late "
        "leak passed all 8 checks; the split grid lifts MoNet 0.952 -> 0.966 (+1.37 points, 5/5) on 0-4: NOT "
        "adopted (out of scope of v3c, stated as open with MoNet's one-lr handicap)",
    ),
    dict(
        variant="v3c, decided after seeing 200-204 and the referee's numbers: precondition joint_headroom (oracle-"
        "fused - joint >= min_gain = 2 points, the claim's own margin, not tuned) required by monet_beats_joint; "
        "monet_decoupled_probe and monet_beats_naive_fusion turned into the direct_comparisons table (no claim "
        "without a control); new claim stop_gradient_weak_probe (no_ema's weak probe > 0.9 x the unimodal "
        "encoder's, the precondition's own 0.9; control: coupled = no_ema minus the stop-gradient), its rule chosen "
        "knowing no_ema's ratio 0.95 and coupled's 0.75 on 200-204; decoupled_streams over 8 training steps",
        seeds=V3,
        outcome="no arm, grid or data knob changed; no new run on dev seeds; all of it judged for the first time on "
        "the fresh seeds 300-304",
    ),
    dict(
        variant="v3c reported run (seeds 300-304, since moved to dev; commit 39e7ac8): joint_headroom precondition, "
        "stop_gradient_weak_probe claim, decoupled_streams over 8 steps (plain SGD)",
        seeds=V4,
        outcome="claims 0/5 hold, controls reject 5/8, checks 8/8, preconditions 2/3 (joint_headroom fails: +0.31 "
        "points, so monet_beats_joint is setting invalid); stop_gradient_weak_probe inconclusive (ratio 0.906, CI "
        "0.751-1.060), its control holds",
    ),
    dict(
        variant="v3c referee probes (not ours, recorded because they saw these seeds): re-judged 300-304; retrained "
        "no_ema, coupled and the ensemble at matched lr 0.02 and 0.1 on 302, 303; alias_a in {5, 6, 7} (and 6 with "
        "gain_b 0.15) for joint and the ensemble on dev seeds 0, 1; a leak from step 9 and one on period-16 steps "
        "only; a mid-period state_dict resumption",
        seeds=[0, 1, *V4],
        outcome="at matched lr no_ema's and coupled's weak probes differ by 0-2.4 points (coupled's ratio 0.97-1.00 "
        "at lr 0.1): the stop-gradient claim's control holds through lr selection; alias_a 6 gives +2.0 / +2.5 "
        "points of room above joint (a 2-point claim needs ~4): setting NOT changed; both leaks passed the 8-step "
        "check; resumption inexact (CMS chunk gradients and n_updates not saved)",
    ),
    dict(
        variant="v3d, decided after seeing 300-304 and the referee's numbers: decoupled_streams follows 2 x lcm(CMS "
        "periods) = 32 steps on the run's optimizer (SGD, momentum 0.9, wd 1e-4) against a reference trajectory; "
        "the CMS chunk state saved in the state_dict; a note that counts the controls of setting-invalid claims "
        "apart",
        seeds=V4,
        outcome="no arm, grid, data knob or threshold changed; no new run on dev seeds; judged on the fresh seeds "
        "400-404",
    ),
)
