"""The tuning ledger of the monet reproduction: every variant tried while designing it, the seeds it saw and what it
gave.  From docs/monet.md, ``git log -- src/icml26/monet`` (issue 27, commits 2fe7ae6-f5cc2a1) and the v3 pilots of
issue 53; written to result.json ``tuning`` and shown in report.md.  Seeds 0-4 were the reported seeds of every run
before issue 53 and so are dev seeds now; the reported seeds are 100-104 (quick: 100-102)."""

from __future__ import annotations

DEV_SEEDS = (0, 1, 2, 3, 4)
V1 = [0, 1, 2, 3, 4]  # the seeds the issue-27 runs reported (and so tuned on)

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
)
