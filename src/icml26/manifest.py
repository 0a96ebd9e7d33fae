"""The manifest: the one list of the papers in this package.

Static data only (no imports), so ``icml26 --help``, ``list``, ``report`` and argument checks run without
importing any paper module or torch.  A paper is imported only to run it (:func:`icml26.core.registry.get`).
``needs`` are the import names of optional dependencies (from the extra named in ``extra``); a paper whose
needs are missing is listed as unavailable with the extra to install.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Entry", "PAPERS", "PLANNED"]


@dataclass(frozen=True)
class Entry:
    """One paper as the manifest lists it (``module`` defaults to ``icml26.<slug>.experiment``)."""

    slug: str
    title: str
    paper: str = ""
    component: str = ""
    module: str = ""
    needs: tuple[str, ...] = ()
    extra: str = ""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.slug):
            raise ValueError(f"slug must be a lowercase python identifier, got {self.slug!r}")
        if not self.module:
            object.__setattr__(self, "module", f"icml26.{self.slug}.experiment")
        object.__setattr__(self, "needs", tuple(self.needs))


PAPERS: tuple[dict, ...] = (
    {
        "slug": "acute_euro",
        "title": "The ACUTE Protocol: LM Activations for Calibration, Utility and Trust (EURO metric)",
        "paper": "Subramani, Goyal, Song, Malek, Xue, Pfister, Palangi, ICML 2026, arXiv 2606.07822",
        "component": "euro / auc_euro / smooth_ece metrics, ACUTEConfidenceEstimator (sklearn), ActivationRecorder, "
        "Platt / isotonic / NWKR calibrators",
    },
    {
        "slug": "count_ica",
        "title": "Independent Component Discovery in Temporal Count Data (ARPLN-ICA)",
        "paper": "Alexandre Chaussard, Anna Bonnet, Sylvain Le Corff, ICML 2026, arXiv 2601.21696",
        "component": "CountICA (scikit-learn transformer, FastICA surface) + ARPLNICA (nn.Module): regime-switching "
        "AR sources, Poisson log-normal emissions, amortised variational EM; make_arpln_data, align_mixing; tuned "
        "FastICA / Picard / AMUSE / PCA / chance baselines; controls without the temporal prior or the regime chain",
    },
    {
        "slug": "crel",
        "title": "Conformal Reliability: A New Evaluation Metric for Conditional Generation",
        "paper": "Gao, Sun, Wang, Shi, Wang, Feng, Fu, ICML 2026, arXiv 2605.30807",
        "component": "ConformalReliability (conformal latent sets + PGD worst-case metric), Ellipsoid, "
        "UnionOfBalls, worst_case",
    },
    {
        "slug": "faps",
        "title": "FaPS: A General and Fast Training Method for Diffusion Models",
        "paper": "Wang, Han & Ding, ICML 2026 (poster 66018)",
        "component": "FaPSTrainer + FrequencyGate (policy-gradient patch gate) around a token-dropping TinyDiT",
    },
    {
        "slug": "focus",
        "title": "FOCUS: DLLMs Know How to Tame Their Compute Bound",
        "paper": "K. Liang, X. Tan, A. Zhong, H. Xu, M. Canini, ICML 2026, arXiv 2601.23278",
        "component": "BlockDiffusionLM + BlockDiffusionDecoder (delayed cache, FOCUS eviction, tokens_per_step "
        "low-confidence remasking, position-rule ablations), focus_* pure functions, AR-then-diffusion training",
    },
    {
        "slug": "fused_orthogonal",
        "title": "Adaptive Estimation and Inference in Semi-parametric Heterogeneous Clustered Multitask "
        "Learning via Neyman Orthogonality",
        "paper": "Hanxiao Chen, Debarghya Mukherjee, ICML 2026, arXiv 2605.01907",
        "component": "AdaptiveFusedOrthogonal: sklearn-style clustered multitask DML (PLR/IRM) with fused "
        "adaptive penalties, pooled refit and Wald CIs; PersonalizedDML/Oracle/ARMUL-like/uniform baselines",
    },
    {
        "slug": "gcf_layer",
        "title": "Universal Representation of Generalized Convex Functions and their Gradients",
        "paper": "Moeen Nehzati, ICML 2026, arXiv 2509.04477",
        "component": "FinitelyConvex layer (soft/hard/STE), MenuMechanism auctions, GeneralCostOT maps, l2_uvp",
        "needs": ("ot",),
        "extra": "ot",
    },
    {
        "slug": "latent_geodesics",
        "title": "Geodesic Calculus on Implicitly Defined Latent Manifolds",
        "paper": "Hartwig, Sassen, Braunsmann, Rumpf, Wirth, ICML 2026, arXiv 2510.09468",
        "component": "LatentProjector (denoising nn.Module, zeta = z - Pi(z)), ImplicitManifold (augmented-Lagrangian "
        "geodesic; batched geomstats-order exp(tangent_vec, base_point) / log(point, base_point) / "
        "geodesic(initial_point, end_point) / dist, energy/length), EuclideanMetric / PullbackMetric, sphere_zeta / "
        "torus_zeta; linear / projected-linear / kNN-graph / spline-energy baselines",
    },
    {
        "slug": "linear_crl",
        "title": "Linear Causal Representation Learning by Topological Ordering, Pruning, and Disentanglement "
        "(CREATOR)",
        "paper": "Hao Chen, Lin Liu, Yu Guang Wang, ICML 2026 (Spotlight), arXiv 2509.22553",
        "component": "CREATOR (sklearn-style, list of environments -> causal_order_, adjacency_matrix_, "
        "components_, surrounded_sets_), LiNGCReL-like / pooled ICA / DirectLiNGAM baselines, LocR^2 / MCC / SHD",
    },
    {
        "slug": "lifil",
        "title": "Lightweight Federated Incremental Learning via Decoupled Replay (Li-FIL)",
        "paper": "ICML 2026, poster 66288 (abstract only; method details inferred)",
        "component": "LiFILClient / LiFILServer (decoupled classifier stabilization + encoder regularization, "
        "privatized mixup feature uploads, FeatureGenerator / GaussianFeatureGenerator replay), DecoupledNet, "
        "split_class_incremental, run_fil; icml26.lifil.flower LiFILStrategy + client_fn; FedAvg-FT / FedEWC / "
        "FedLwF / exemplar / joint baselines",
    },
    {
        "slug": "monet",
        "title": "Multimodal Nested Learning for Decoupled and Coordinated Optimization (MoNet)",
        "paper": "ICML 2026 (poster 65954); official repository github.com/Yangl1nFeng/MoNet holds a README only",
        "component": "MoNet (nn.Module: decoupled per-modality streams + EMA stable memory + adaptive multi-timescale "
        "CMS fusion; inferred design), ContinuumMemoryMLP; Joint / OGM-GE / PMR / MMPareto / MLA-lite / unimodal "
        "ensemble / best-single-modality baselines; make_imbalanced_bimodal (complementary alias_a / alias_b), "
        "make_two_view_digits, modality_probe_accuracy",
    },
    {
        "slug": "opo_cmdp",
        "title": "Near-Optimal Regret for Policy Optimization in Contextual MDPs with General Offline Function "
        "Approximation (OPO-CMDP)",
        "paper": "Orin Levy, Aviv Rosenberg, Alon Cohen, Yishay Mansour, ICML 2026, arXiv 2602.13706",
        "component": "ContextualLayeredMDP (gymnasium.Env), FiniteFunctionClass / FiniteDynamicsClass, LS and "
        "log-loss oracles, OPOCMDP / OPOCMAB, exact-DP regret; greedy / eps-greedy plug-in, uniform, optimal",
        "needs": ("gymnasium",),
        "extra": "rl",
    },
    {
        "slug": "ovisocr",
        "title": "OvisOCR: End-to-End Document Parsing via Aligning Specialized Perception with General Reasoning",
        "paper": "ICML 2026 poster 66130 (model card only; training recipe inferred), AIDC-AI/OvisOCR",
        "component": "OmniDocBench metrics (TextEdit, FormulaEdit, TEDS/TEDS-S, ReadingOrder, Overall); "
        "CascadeParser on RapidOCREngine / TesseractEngine, bootstrap_labels; TinyPageParser (image -> Markdown "
        "tokens); CategoryReward + grpo_step; SyntheticPages",
        "needs": ("rapidocr_onnxruntime", "apted", "rapidfuzz", "lxml", "pylatexenc", "PIL"),
        "extra": "ocr",
    },
    {
        "slug": "sciml_regimes",
        "title": "Unveiling Multi-regime Patterns in SciML: Distinct Failure Modes and Regime-specific Optimization",
        "paper": "Wang, Hu, Zhong, Wang, Lu, Pang, Mahoney, Yan, Ren, Yang, ICML 2026, arXiv 2605.29153",
        "component": "PINN + exact-solution PDE problems (convection, reaction, diffusion, wave, reaction-diffusion), "
        "fit (L-BFGS / Adam / Adam+L-BFGS / curriculum), closure-based hessian_top_eigenvalue / hessian_trace, "
        "linear_cka, mode_connectivity, RegimeSweep, classify_regimes, plot_regime_map",
        "needs": ("pandas", "joblib"),
        "extra": "sciml",
    },
    {
        "slug": "ski_rental",
        "title": "Robust and Consistent Ski Rental with Distributional Advice",
        "paper": "Jihwan Kim, Chenglin Fan, ICML 2026, arXiv 2603.29233",
        "component": "SkiRental, ClampPolicy, RobustStoppingDistribution (LP water-filling), PSK / Karlin / "
        "Cui-Dinitz baselines, exact ECR evaluation",
    },
    {
        "slug": "slaclip",
        "title": "SlaClip: Gradient Norm Slacks can be Indicator for Adaptive Clipping in DP-SGD",
        "paper": "Zou, Wang, Zhu, Li, Dong, Sassone, Wu, ICML 2026 (openreview 48suUeYKdb)",
        "component": "SlaClipDPOptimizer (Opacus DPOptimizer) + make_private_slaclip; AdaClip/AUTO-S baselines",
        "needs": ("opacus",),
        "extra": "dp",
    },
    {
        "slug": "t3_unlearning",
        "title": "Temper-Then-Tilt: Principled Unlearning for Generative Models",
        "paper": "Block, Mohri, Mokhtari, Shakkottai, ICML 2026, arXiv 2602.10217",
        "component": "T3Unlearner + TemperThenTiltLogitsProcessor (HF generate), TOFU metrics, GA/GradDiff/NPO, "
        "exact toy",
    },
    {
        "slug": "trace_du",
        "title": "TRACE-DU: TRAjectory-aware CErtified Decentralized Unlearning",
        "paper": "ICML 2026, OpenReview 45Lk9G28L5 (abstract only; the sensitivity recursion is inferred)",
        "component": "DecentralizedSGD (gossip local SGD with trajectory record) + TraceDU (graph-aware sensitivity, "
        "rewind + calibrated Gaussian noise, Certificate, sequential requests); ring / erdos_renyi / "
        "metropolis_weights / remove_nodes; icml26.trace_du.distributed.run_gossip (torch.distributed gloo); "
        "retrain / last-model noise / graph-agnostic bound / fine-tune baselines; mia_auc, backdoor_asr",
    },
    {
        "slug": "upipe",
        "title": "Untied Ulysses: Memory-Efficient Context Parallelism via Headwise Chunking",
        "paper": "R. Ghadia, M. Abraham, S. Vorobyov, M. Ryabinin, ICML 2026, arXiv 2602.21196",
        "component": "UPipeAttention / upipe_attention (torch.distributed), Ulysses and Ring baselines, "
        "LiveTensorBytes",
    },
)

#: Papers of the project not yet built (the README's "planned" rows): named so the CLI can say so.
PLANNED: tuple[str, ...] = ()
