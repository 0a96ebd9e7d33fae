"""``FILConfig``: every hyperparameter of the federated class-incremental simulation (inferred defaults, spec §2)."""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["FILConfig", "METHODS"]

METHODS = ("finetune", "ewc", "lwf", "exemplar", "joint", "lifil")


@dataclass(frozen=True)
class FILConfig:
    """Local training (``local_epochs`` = Li-FIL's encoder-regularization epochs ``E_e``, ``classifier_epochs`` = its
    classifier-stabilization epochs ``E_c``; a baseline trains the whole model for ``E_e + E_c`` epochs, the same
    passes over the new data), the Li-FIL upload (``tau``, ``m``, ``mixup_alpha``, ``sigma_f``, ``clip_R``), the
    server generator (``generator`` = ``"mlp"`` or ``"gaussian"``, ``n_replay`` features per old class) and the
    baselines' regularisers (LwF ``lwf_T``/``lwf_weight``, EWC ``ewc_lambda``, exemplar buffer ``exemplar_M`` raw
    samples per seen class)."""

    rounds_per_task: int = 10
    local_epochs: int = 2
    classifier_epochs: int = 2
    lr: float = 0.05
    momentum: float = 0.9
    batch_size: int = 32
    lambda_fd: float = 10.0
    tau: float = 0.9
    m: int = 20
    mixup: bool = True
    mixup_alpha: float = 0.4
    sigma_f: float = 0.5
    clip_R: float = 1.0
    n_replay: int = 50
    generator: str = "mlp"
    generator_steps: int = 150
    generator_lr: float = 3e-3
    denoise: bool = True
    decouple: bool = True
    lwf_T: float = 2.0
    lwf_weight: float = 1.0
    ewc_lambda: float = 100.0
    exemplar_M: int = 2
    delta: float = 1e-5

    def __post_init__(self) -> None:
        ints = {
            "rounds_per_task": 1,
            "local_epochs": 0,
            "classifier_epochs": 0,
            "batch_size": 1,
            "m": 1,
            "n_replay": 1,
            "generator_steps": 1,
            "exemplar_M": 1,
        }
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ints:
                if isinstance(v, bool) or not isinstance(v, int) or v < ints[f.name]:
                    raise ValueError(f"{f.name} must be an integer >= {ints[f.name]}, got {v!r}")
        for name in ("lr", "lwf_T", "generator_lr", "clip_R", "mixup_alpha"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        for name in ("lambda_fd", "sigma_f", "lwf_weight", "ewc_lambda"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must lie in [0, 1), got {self.momentum!r}")
        if not 0 <= self.tau <= 1:
            raise ValueError(f"tau must lie in [0, 1], got {self.tau!r}")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta!r}")
        if self.generator not in ("mlp", "gaussian"):
            raise ValueError(f"generator must be 'mlp' or 'gaussian', got {self.generator!r}")
        if self.local_epochs + self.classifier_epochs < 1:
            raise ValueError("local_epochs + classifier_epochs must be >= 1")
