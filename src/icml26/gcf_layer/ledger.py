"""The tuning ledger of the gcf_layer reproduction: every variant tried while designing it, the seeds it saw (all of
them dev seeds, held out from the reported ones) and what it gave.  From docs/gcf_layer.md, ``git log --
src/icml26/gcf_layer`` and the probes of issue 49; written to result.json ``tuning`` and shown in report.md."""

from __future__ import annotations

V1_V2 = [0, 1, 2, 3, 4]  # the seeds every run before issue 49 reported (and so tuned on)

TUNING: tuple[dict, ...] = (
    dict(
        variant="spec schedule: full batches of 8,192 training types, 3,000 soft + 1,000 STE steps, one start "
        "(b06791e-b0a2de8)",
        seeds=V1_V2,
        outcome="the 2-item menu over-fitted (train 0.5503 vs fresh 0.5456 in the first try): minibatches of 2,048 "
        "from 65,536 training types kept",
    ),
    dict(
        variant="unit demand at step size 1e-2 (0e97c4c)",
        seeds=V1_V2,
        outcome="the menu stayed at lotteries worth 0.370: step size 3e-2 (straight-through 3e-3) kept for unit demand",
    ),
    dict(
        variant="one start vs 8 starts x 250 exploring steps at equal total steps (issue 25, b6d1115)",
        seeds=V1_V2,
        outcome="one start: 2-item 0.5445-0.5491 (claim inconclusive); 8 starts: 0.5489-0.5502; the 8-start scheme "
        "kept for every fit, RochetNet's too",
    ),
    dict(
        variant="2-D product mixture N(-2, .5^2), N(0, .5^2), N(2, .5^2) with the separable cost (v2 transport)",
        seeds=V1_V2,
        outcome="the affine map came within 5.6 % (ot_2d_affine_fails did not hold): mixture separated to means "
        "-3/0/3, sd 0.3 (affine 13.4 % on seeds 0, 1 before the run); setting replaced in issue 49",
    ),
    dict(
        variant="full preset resized for the 15-minute budget (326e06d): 1-item 4,000 -> 1,400 steps, 2-item 4,000 "
        "-> 3,500, transport 1,500 -> 1,200",
        seeds=V1_V2,
        outcome="every verdict that held still held; numbers moved within their seed spread",
    ),
    dict(
        variant="learned-candidate transport: 1,500 steps at step size 1e-2",
        seeds=[0, 1],
        outcome="dual gap 4.1-4.2 % on N(0,1) -> Exp(1), p = 3: 600 full-batch steps at 3e-2 kept",
    ),
    dict(
        variant="exact budget projection instead of 100 bisection steps (07b5f64)",
        seeds=V1_V2,
        outcome="unit demand seed 2 moved 0.3818 -> 0.3834 (4/5 -> 5/5 seeds >= 0.3829): a last-bit change flipped "
        "the verdict",
    ),
    dict(
        variant="referee (issue 49): restarts = 1; unit demand on another CPU; a sort-based quantile map as the "
        "transport map",
        seeds=[0, 1, 2],
        outcome="restarts = 1 gave the same 2-item menus on seeds 0, 1; unit demand seed 2 = 0.3790 (< 0.3829) on "
        "another CPU; the quantile map met every transport bound (1.31 / 1.93 / 1.46 % UVP)",
    ),
    dict(
        variant="issue 49 probe: restarts = 1 vs 8 at equal steps, exact revenue (2 items, unit demand)",
        seeds=[0, 1, 5, 6],
        outcome="2 items, 1 start vs 8: 0.5491/0.5491, 0.5492/0.5490, 0.5490/0.5491, 0.5461/0.5490; unit demand: "
        "0.3806/0.3833, 0.3782/0.3847, 0.3818/0.3848 (seeds 0, 1, 5): a restart control arm for both floors",
    ),
    dict(
        variant="issue 49 probe: unit demand rerun with the candidates in reverse order (cross-machine margin)",
        seeds=[0, 1, 5],
        outcome="exact revenue moved by 0.0014, 0.00001, 0.00001 (seed 0's selected start changed): the margin is "
        "measured in every run and the 2-item floors are judged beyond it",
    ),
    dict(
        variant="issue 49 probe: 2-D designs with the cost ||x - y||^p / p, exact maps from ot.emd on 2,000 samples: "
        "correlated Gaussian -> triangle mixture, Gaussian -> banana, box -> ring, 2 diagonal -> 3 anti-diagonal "
        "clusters",
        seeds=[7],
        outcome="exact maps for p = 1.5 vs 3 apart by 2.1 / 7.3 / 2.3 / 17.3 % UVP; quantile map 43 / 19 / 23 / 95 %: "
        "the cluster design kept",
    ),
    dict(
        variant="issue 49 probe: cluster designs (middle weight 0.4 or 0.6, 3 -> 3 clusters, 1 -> 3, 2 -> 2)",
        seeds=[11],
        outcome="kept weights 0.3/0.4/0.3: exact maps p = 1.5 vs 3 19.1 %, p = 2 vs 1.5 / 3 6.8 / 8.5 %, quantile "
        "98 %, Gaussian affine 12 %",
    ),
    dict(
        variant="issue 49 probe: GCF, learned-candidate and POT maps on the banana and cluster designs (1,024 "
        "samples, truth on 3,000)",
        seeds=[5],
        outcome="clusters: GCF 2.1 / 1.6 %, learned candidates 4.0 / 2.7 %, POT 3.3 / 3.2 %, quantile 96 %, GCF "
        "fitted for the other p 18.6 / 20.3 % (p = 1.5 / 3)",
    ),
    dict(
        variant="transport bound 5 % (the spec's 1-D bound) instead of the spec's 10 % for 2-D",
        seeds=[5, 11],
        outcome="at 10 % the quadratic-cost map (6.8-8.5 % from the exact maps) would pass: 5 % kept",
    ),
    dict(
        variant="issue 49 probe: the full preset's measure on one dev seed (i.i.d. mixture samples)",
        seeds=[7],
        outcome="1 item 0.24998; 2 items 0.54904 (one start 0.54909, one option 0.54433, RochetNet 0.5440); "
        "Mussa-Rosen 0.08216 (cost-blind -0.0022); square root 0.12628 (linear kernel 0.0931); unit demand 0.38474 "
        "(one start 0.3689, reverse-order rerun 0.38474); transport GCF 8.0 / 7.7 % UVP, POT 8.7 %: the samples' "
        "random cluster sizes moved mass across clusters; 317 s at load 6-8",
    ),
    dict(
        variant="issue 49 probe: stratified mixture samples (exact cluster sizes) for the fit and the exact map",
        seeds=[7, 8],
        outcome="GCF 2.9 / 2.3 and 2.2 / 2.3 % (p = 1.5 / 3), POT 3.5-4.5 %, quadratic-cost GCF 7.4-9.8 %, quantile "
        "96-101 %, learned candidates 4.2 / 2.5 and 4.6 / 4.0 % (frozen 10.2 / 6.8 and 35.5 / 4.5 %), learned dual "
        "gap 0.4-1.4 % (frozen 5.1-14.6 %): stratified samples kept",
    ),
)
