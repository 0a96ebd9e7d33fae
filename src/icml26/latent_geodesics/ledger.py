"""The tuning ledger of latent_geodesics: every variant tried while designing, with the seeds it saw.

Seeds 0-4 were the reported seeds of v1/v2 (issue 35, quick 0-2).  Seeds 100-109 were the v3 reported seeds (quick
100-102); the v3 referee's probes then looked at them (kNN k = 80, solver starts, the R^8 exp, 150-deg paths), so they
are dev seeds too, as are 300-302 (the referee's fresh probe seeds).  The v3b reported seeds were 200-209 (quick
200-202); the v3b referee then probed 200-204 (digits) and 700-719 (exp, sparse codes), so 200-209 and 700-719 are
dev seeds now.  The v3c reported seeds are 400-409 (quick 400-402), seen by no one before the reference run.
"""

DEV_SEEDS = (0, 1, 2, 3, 4, *range(100, 110), *range(200, 210), 300, 301, 302, *range(700, 720))

TUNING = (
    dict(
        variant="v1: geodesic solver settings (spec tol=1e-5; pure penalty mu = 10, 100, 1000; tol = 1e-2; "
        "tol='auto' = 0.1 tol_constraint)",
        seeds=[0, 1, 2],
        outcome="tol='auto' chosen (60/100/150 deg errors 0.021 / 0.026 / 0.049 vs 0.08 / 0.15 / 0.21 with the spec "
        "default)",
    ),
    dict(
        variant="v1: kNN baseline k in {5, 10, 15, 20, 30} (the solver's 5-configuration budget)",
        seeds=[0, 1, 2],
        outcome="k = 30 chosen (k = 10 gave 2.3x larger errors)",
    ),
    dict(
        variant="v1: projector lr 1e-3 (spec) -> 3e-3 to make linear_leaves_manifold hold",
        seeds=[0, 1, 2],
        outcome="residual on the sphere 0.016 -> 0.012 at 2000 steps; precondition ratio 1.6 -> > 5 on quick",
    ),
    dict(
        variant="v1: digits geodesic init with the baseline's k = 30 (k = 10 disconnected on seed 4)",
        seeds=[0, 1, 2, 3, 4],
        outcome="runs on all seeds; v2 full run: claims 7/9 hold",
    ),
    dict(
        variant="v2 diagnosis: exp on a learned zeta with 'extrapolate then project' and with the learned projector "
        "as the step (instead of the Euler-Lagrange solve); K = 2 / 4 / 8 / 16",
        seeds=[0],
        outcome="endpoint error 1.0-1.2 for both; 0.08 / 0.40 / 0.97 / 0.97 over K: the projector's tangential bias",
    ),
    dict(
        variant="referee (issue 58): the identity solver, the kNN path on digits, the exp drift, the log chord, the "
        "antipodal pair",
        seeds=[0, 1, 2, 3, 4],
        outcome="kNN path 0.033 / 0.063 passes beats_half_linear_s2 / length_error_s2; kNN beats the geodesic on "
        "digits (0.41 vs 0.54); exp endpoint error 0.9-1.45 at 60 deg",
    ),
    dict(
        variant="v3: exp with the multiplier and the constraint restricted to the normal space (SVD of Dzeta, "
        "rank_tol 0.5, midpoint first step), against the v2 exp, learned S^2 at 60 deg, K = 16 (one projector, "
        "4 draws)",
        seeds=[0],
        outcome="endpoint error 0.008 / 0.012 / 0.018 / 0.023 (v2: 1.76 / 1.03 / 0.95 / 0.48); exact sphere 7.5e-4 "
        "(v2 1.5e-3). rank_tol 0.5 is the only value tried",
    ),
    dict(
        variant="v3: the solver's initial path at the spec's k = 10 (E2) and k = 15 doubled until connected "
        "(digits), so that the identity control differs from the tuned kNN baseline (k = 30); single choice, "
        "not tuned",
        seeds=[0, 1, 2, 3, 4],
        outcome="see the next entry (the dev run)",
    ),
    dict(
        variant="v3 quick preset, --dev (the design above; a first run crashed on a KeyError in the antipodal "
        "record, fixed; the antipodal check then used a random pair that the solver leaves the jump path from, so "
        "the axis pair e3 was added and the check reads 'misreported' for both)",
        seeds=[0, 1, 2, 3, 4],
        outcome="40 s for 5 seeds; claims 1/8 hold (beats_knn_s2), exp_learned_accurate_s2 inconclusive at the "
        "quick projector (1000 steps: endpoint error 0.01-0.08), checks 6/6 after the fix",
    ),
    dict(
        variant="v3 full preset, --dev: the design of the first v3 reference run (the spline-energy baseline was added "
        "after it, see below)",
        seeds=[0, 1, 2, 3, 4],
        outcome="234 s; claims 3/11 hold (beats_knn_s2, length_error_s2r8, exp_learned_accurate_s2: 0.025 +- 0.011 "
        "vs v2 1.01); controls reject 4/11: the identity solver passes beats_half_linear_s2, length_error_s2 and "
        "both digits-vs-linear claims (its kNN path already does); on digits the identity path (0.33) beats the "
        "geodesic (0.55) and the kNN baseline (0.41): digits_beats_knn does not hold; checks 6/6, preconditions 3/3",
    ),
    dict(
        variant="a lapse, recorded: after the first v3 reference run on 100-109 (claims 3/11 hold; beats_knn_s2 held "
        "against kNN and projected kNN), the spline-energy baseline of issue 58 was added to the beats_knn_* claims "
        "(a stricter comparison, not a knob); the reference was measured again with it",
        seeds=list(range(100, 110)),
        outcome="see the reference run",
    ),
    dict(
        variant="spline-energy baseline (natural cubic spline, 4 control points started on the k=30 kNN path, "
        "E^K + penalty sum|zeta|^2, BFGS): penalty in {1, 10, 100, 1000, 1e4} per manifold (5 configurations, "
        "the solver's budget), mean error over the 60/100-deg arcs",
        seeds=[0, 1, 2, 3, 4],
        outcome="S^2: 0.145 / 0.033 / 0.055 / 0.136 / 0.248 -> penalty 10; S^2 in R^8: 0.210 / 0.074 / 0.042 / 0.118 "
        "/ 0.201 -> penalty 100 (the geodesic on the same seeds: 0.022 / 0.046)",
    ),
    dict(
        variant="v3 referee (issue 58, v3 review): probes on the then-reported seeds 100-109 and on dev seeds 0-2 and "
        "fresh 300-302: kNN k in {30, 50, 80, 150}, solver started from k = 10 / 30 / 80 paths, the exp on S^2 in R^8 "
        "with rank_tol 0.5 / 0.2, 150-deg paths on R^8",
        seeds=[0, 1, 2, *range(100, 110), 300, 301, 302],
        outcome="kNN k = 80 beats the geodesic on 0-2 (0.019 vs 0.026) and ties it on 100-109 (beats_knn_s2 "
        "inconclusive); the k = 30 / 80 start makes the identity control pass length_error_s2r8; the R^8 exp fails "
        "with rank_tol 0.5 (0.39-0.82: 5 of 6 normal directions kept); seeds 101 / 107 at 150 deg stuck but "
        "converged=True. 100-109 and 300-302 become dev seeds (300-302 not used again)",
    ),
    dict(
        variant="v3b: kNN and projected kNN k in {30, 50, 80, 150} beyond the old grid edge, each arm its own k per "
        "manifold (4 configurations; mean geodesic error over the 60/100-deg arcs)",
        seeds=[0, 1, 2, 3, 4],
        outcome="S^2: kNN 0.041 / 0.024 / 0.023 / 0.021, projected kNN 0.043 / 0.028 / 0.027 / 0.023 -> k = 150 for "
        "both; S^2 in R^8: kNN 0.061 / 0.048 / 0.065 / 0.049 -> k = 50, projected kNN 0.059 / 0.044 / 0.061 / 0.038 "
        "-> k = 150. 150 is the top of this grid (open: not extended further); digits keep k = 30 (not re-tuned)",
    ),
    dict(
        variant="v3b: the exp's normal rank: rank_tol 0.5 (v3) vs a largest-gap rule on the singular values of Dzeta "
        "vs the known intrinsic dimension (rank = ambient - dim, dim = 2), learned zeta, 3 draws per seed at 60 and "
        "90 deg, K = 16",
        seeds=[0, 1, 2, 3, 4],
        outcome="S^2 60 deg: dim 0.024 (max 0.053), rank_tol 0.5 the same, gap rule diverges (ranks flip 1/2 along "
        "the path); S^2 in R^8 60 deg: dim 0.033 (max 0.080, 3/15 > 0.05), rank_tol 0.5 0.61, gap rule 1.09, v2 0.80; "
        "90 deg: dim 0.027 (S^2) / 0.055 (R^8, 8/15 > 0.05). Chosen: dim (an explicit ImplicitManifold argument); "
        "the gap rule was dropped, rank_tol 0.5 stays the default without dim",
    ),
    dict(
        variant="v3b: off-codes test for learned-zeta geodesics (largest node distance to the nearest code / the "
        "codes' median nearest-neighbour distance), S^2 in R^8, arcs 60/100/150 deg",
        seeds=[100, 101, 102, 107],
        outcome="paths with error <= 0.063: ratio <= 1.87; error 0.12-0.98: ratio 2.55-21.2 (incl. 101 / 107 at "
        "150 deg: 4.33 / 2.91). off_codes_tol = 2.5: above it converged=False with a warning",
    ),
    dict(
        variant="v3b: a second identity control on every solver claim: the solver returning the tuned kNN path "
        "(the strongest start; the solver gives the same answer from k = 10 / 30 / 80 starts, v3 referee); the "
        "k = 10 start and its control stay. Exp claim on S^2 in R^8 added with the v2 exp as control; 90 deg "
        "reported, not gated; the spline keeps its k = 30 start (its penalty was tuned from it). Single design, "
        "not tuned",
        seeds=[],
        outcome="see the reference run",
    ),
    dict(
        variant="v3b referee (second pass): re-judged the v3b reference on 200-209 (identity control not rejected on "
        "6/10 solver claims; three controls compare kNN with itself), the exp on fresh 700-709, sparse codes N = 400 / "
        "150 on 710-719, the digits endpoints on 200-204 (moved by 0.22-1.55 by the absolute endpoint_tol = 0.05)",
        seeds=[*range(200, 210), *range(700, 720)],
        outcome="N = 400: geodesic 0.025 beats identity 0.153, kNN k = 20/50, projected kNN k = 50 and spline 10 on "
        "9-10/10 seeds; N = 150: 2/5 seeds fail; R^8 exp inconclusive on 700-709 (interval end 0.057); the dim = 0 "
        "exp 1.24 / 0.94. 200-209 and 700-719 become dev seeds",
    ),
    dict(
        variant="v3c: E2 code count N in {400, 800, 250} (spec 4000), per N the kNN k in {5, 10, 15, 20, 30, 50, 80, "
        "150} (8, the v3b budget), projected kNN k in {20, 30, 50, 80} (4), spline penalty in {1, 10, 100, 1000, 1e4} "
        "(5), the geodesic from the k = 10 start, the exp at 60 deg (v3 / v2 / dim = 0); mean over the 60/100-deg "
        "arcs (benchmarks/latent_geodesics_sparse_tuning.py)",
        seeds=[0, 1, 2, 3, 4],
        outcome="S^2, N = 400: geodesic 0.026, identity 0.127, kNN 0.062 (k = 50), projected kNN 0.041 (k = 50), "
        "spline 0.035 (10); geodesic wins 5/5, 4/5, 5/5; exp 0.012-0.029 (v2 0.9-1.8, dim 0 0.45-1.9). N = 800: "
        "kNN 0.048, 3/10 off_codes flags; N = 250: exp 0.148 on one seed. S^2 in R^8, N = 400: geodesic 0.042, "
        "kNN 0.069 (k = 30), projected kNN 0.057 (k = 50), spline 0.032 (100): the spline beats the geodesic on 4/5 "
        "seeds. Chosen: N = 400 for both manifolds (R^8 at the same N: it costs nothing and shows the spline's win)",
    ),
    dict(
        variant="v3c: precondition graph_path_poor (the setting needs the solver): the lower of the tuned kNN and "
        "projected kNN errors per arc, mean over seeds, >= graph_bar = 0.025 (the only bar tried)",
        seeds=[0, 1, 2, 3, 4],
        outcome="N = 400: per-seed 0.028-0.048 (S^2), 0.042-0.064 (R^8); at N = 4000 (v3b ledger, same seeds) the "
        "tuned kNN paths score 0.021 / 0.023, so the precondition fails there",
    ),
    dict(
        variant="v3c: length-claim bar 5% (spec) -> 2% (the referee's value; the only other bar tried)",
        seeds=[0, 1, 2, 3, 4],
        outcome="N = 400: geodesic length error 0.6-1.5% (S^2), 1.4-3.1% (R^8); the k = 10 identity path 1.8-3.7% / "
        "2.2-8.8%, the tuned kNN path 1.4-1.8% / 0.3-1.0%: 5% lets the k = 10 identity pass; no bar separates the "
        "solver from the tuned kNN path",
    ),
    dict(
        variant="v3c: endpoint_tol 'auto' = max |zeta(codes)| (1e-6 without codes) with a RuntimeWarning when an "
        "endpoint is moved; exp_matches_sphere tolerance 0.01 -> 2.5e-3 (the referee's value: the v2 exp gives 3.5e-3, "
        "v3 1.8e-3); controls that compare the kNN path with itself removed; the dim = 0 exp control added. Single "
        "design, not tuned",
        seeds=[],
        outcome="see the reference run",
    ),
    dict(
        variant="v3c full preset, --dev (the design above, nothing changed after it)",
        seeds=[0, 1, 2, 3, 4],
        outcome="146 s for 5 seeds; claims 3/12 hold (beats_knn_s2 and both exp claims), controls reject 10/21, checks "
        "6/6, preconditions 5/5; beats_half_linear_s2 / length_error_s2 inconclusive (the tuned kNN path passes), "
        "beats_knn_s2r8 and length_error_s2r8 do not hold",
    ),
    dict(
        variant="a lapse, recorded: the folder's tests run the quick preset on its seeds 400-402 (a subset of the "
        "reported seeds, 1000 projector steps). Its log showed a RuntimeWarning that an E2 geodesic endpoint (a true "
        "sphere point between sparse codes) exceeded endpoint_tol='auto' and was moved by 0.2; E2 then got "
        "endpoint_tol=inf, so every arm keeps the same endpoints (the brief's requirement, not a tuned knob). No "
        "claim, number or verdict of those runs was looked at",
        seeds=[400, 401, 402],
        outcome="no design change beyond endpoint_tol=inf in E2",
    ),
)
