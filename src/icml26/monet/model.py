"""MoNet: multimodal nested learning, decoupled per-modality streams (DMSM) + multi-timescale fusion (AMCF).

INFERRED DESIGN.  The paper's text and code were not available (the official repository,
github.com/Yangl1nFeng/MoNet, holds a README only); what follows is our reading of its abstract in the vocabulary
of Nested Learning (Behrouz et al., NeurIPS 2025).  Every piece has a switch so a later reading can change it.

Level 1, DMSM (outer level: decoupled modality streams with a stable memory).  Modality ``m`` has an encoder
``phi_m``, a unimodal head ``h_m`` and its own optimizer ``O_m`` on ``L_m = CE(h_m(phi_m(x_m)), y)``; the fused
loss does not reach ``phi_m`` (``encoder_fusion_grad = 0``; ``lambda > 0`` lets ``lambda * dL_f/dphi`` through).
A slow copy ``phi_bar_m <- tau phi_bar_m + (1 - tau) phi_m`` (``ema_tau``, updated every step) is the stable memory
the fusion reads from.

Level 2, AMCF (inner level: adaptive coordination of the multi-timescale fusion memory).
``s_m <- 0.9 s_m + 0.1 mean_i softmax(h_m(phi_m(x_i)))_{y_i}`` tracks how well each stream fits;
``w_m = M softmax_m(-beta (s_m - mean_k s_k))`` up-weights the lagging modality (``sum_m w_m = M``; equal scores give
``w_m = 1``), and the fusion input is ``u = concat_m(w_m LayerNorm_m(phi_bar_m(x_m)))``.  The fusion is a
:class:`~icml26.monet.cms.ContinuumMemoryMLP` with periods ``cms_periods`` (default ``(1, 4, 16)``) followed by a
linear classifier (period 1), trained on ``L_f = CE(fusion(u), y)``.

Inference: fused logits (``ensemble=True`` adds ``sum_m h_m(phi_m(x_m))``).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from .cms import ContinuumMemoryMLP, _check_periods

__all__ = ["MoNet", "MLPEncoder", "TrainingDiverged", "check_modalities", "check_labels", "adaptive_weights"]


class TrainingDiverged(FloatingPointError):
    """A training step produced a non-finite loss or fit score (the learning rate is too large for the model): no
    parameter was changed by that step.  The experiment scores such a configuration as failed."""


class MLPEncoder(nn.Module):
    """Two-layer MLP encoder ``ReLU(W_2 ReLU(W_1 x))`` from ``in_dim`` to ``out_dim`` features."""

    def __init__(self, in_dim: int, out_dim: int = 64, hidden: int = 128) -> None:
        super().__init__()
        for name, v in (("in_dim", in_dim), ("out_dim", out_dim), ("hidden", hidden)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        self.in_dim, self.out_dim = in_dim, out_dim
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def check_modalities(encoders, feature_dims) -> tuple[str, ...]:
    """Validate ``encoders`` (a mapping modality -> ``nn.Module``) against ``feature_dims`` (modality -> int);
    returns the modality names in ``encoders``' order."""
    if not isinstance(encoders, Mapping) or len(encoders) == 0:
        raise TypeError(f"encoders must be a non-empty mapping modality -> nn.Module, got {type(encoders).__name__}")
    if not isinstance(feature_dims, Mapping):
        raise TypeError(f"feature_dims must be a mapping modality -> int, got {type(feature_dims).__name__}")
    for m, e in encoders.items():
        if not isinstance(m, str) or not m:
            raise TypeError(f"encoders keys must be non-empty strings, got {m!r}")
        if not isinstance(e, nn.Module):
            raise TypeError(f"encoders[{m!r}] must be an nn.Module, got {type(e).__name__}")
    if set(encoders) != set(feature_dims):
        missing, extra = sorted(set(encoders) - set(feature_dims)), sorted(set(feature_dims) - set(encoders))
        raise ValueError(
            f"feature_dims keys must equal encoders keys: feature_dims lacks {missing} and has extra "
            f"{extra} (encoders: {sorted(encoders)})"
        )
    for m, d in feature_dims.items():
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise ValueError(f"feature_dims[{m!r}] must be an integer >= 1, got {d!r}")
    return tuple(encoders)


def _check_inputs(inputs, modalities: Sequence[str], n: int | None = None) -> None:
    """``inputs`` must map exactly ``modalities`` to finite tensors with the same batch size (``n``: that of ``y``)."""
    if not isinstance(inputs, Mapping):
        raise TypeError(f"inputs must be a mapping modality -> tensor, got {type(inputs).__name__}")
    if set(inputs) != set(modalities):
        raise ValueError(f"inputs must have exactly the modalities {sorted(modalities)}, got {sorted(inputs)}")
    sizes = {}
    for m in modalities:
        x = inputs[m]
        if not isinstance(x, torch.Tensor) or x.ndim < 1:
            raise TypeError(f"inputs[{m!r}] must be a tensor of shape (batch, ...), got {type(x).__name__}")
        if x.is_floating_point() and not bool(torch.isfinite(x).all()):
            raise ValueError(f"inputs[{m!r}] holds non-finite values (NaN or inf): clean or drop those rows first")
        sizes[m] = int(x.shape[0])
    if len(set(sizes.values())) > 1 or (n is not None and any(v != n for v in sizes.values())):
        raise ValueError(
            "inputs must have the same batch size for every modality"
            + (f" and as y ({n})" if n is not None else "")
            + f", got {sizes}"
        )


def _check_in_width(m: str, encoder: nn.Module, x: torch.Tensor) -> None:
    in_dim = getattr(encoder, "in_dim", None)
    if isinstance(in_dim, int) and (x.ndim != 2 or int(x.shape[1]) != in_dim):
        raise ValueError(f"inputs[{m!r}] must have shape (batch, {in_dim}) for encoders[{m!r}], got {tuple(x.shape)}")


def _check_width(m: str, z: torch.Tensor, feature_dims: Mapping[str, int]) -> None:
    if z.ndim != 2 or int(z.shape[1]) != feature_dims[m]:
        raise ValueError(
            f"feature_dims[{m!r}] = {feature_dims[m]} disagrees with encoders[{m!r}]'s output shape "
            f"{tuple(z.shape)}: feature_dims must give each encoder's output width"
        )


def check_labels(y, n_classes: int) -> None:
    """``y`` must be an integer tensor of class indices in ``[0, n_classes)``; ValueError/TypeError naming ``y``."""
    if not isinstance(y, torch.Tensor) or y.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise TypeError(f"y (the labels) must be an integer tensor, got {getattr(y, 'dtype', type(y).__name__)}")
    if y.numel() and (int(y.min()) < 0 or int(y.max()) >= n_classes):
        raise ValueError(
            f"y (the labels) must lie in [0, n_classes={n_classes}), got values in [{int(y.min())}, {int(y.max())}]"
        )


def adaptive_weights(scores: torch.Tensor, beta: float) -> torch.Tensor:
    """``w_m = M softmax_m(-beta (s_m - mean_k s_k))``: the modality with the lower fit score gets the larger weight;
    the weights sum to ``M`` and are all 1 when the scores are equal (or ``beta = 0``)."""
    s = scores.float()
    if not bool(torch.isfinite(s).all()):
        raise ValueError(f"scores must be finite, got {s.tolist()}")
    return s.numel() * torch.softmax(-beta * (s - s.mean()), dim=0)


class MoNet(nn.Module):
    """Multimodal nested learning (module docstring; the design is inferred).

    Parameters
    ----------
    encoders : mapping modality -> ``nn.Module`` mapping ``x_m`` of shape ``(n, *)`` to ``(n, feature_dims[m])``.
    feature_dims : mapping modality -> int, the encoders' output widths (same keys as ``encoders``).
    n_classes : number of classes (>= 2).
    cms_periods : update periods ``C_l`` of the fusion memory blocks (integers >= 1).
    ema_tau : stable-memory decay ``tau`` in [0, 1) (0: the fusion reads the fast encoders' current values).
    beta : temperature of the adaptive coordination weights (>= 0; 0 disables them: ``w_m = 1``).
    encoder_fusion_grad : ``lambda`` in [0, 1], the share of the fused loss's gradient let into the fast encoders.
    ensemble : add the unimodal heads' logits to the fused logits at inference.
    score_momentum : momentum of the fit scores ``s_m`` (0.9).
    cms_lr_scale : ``"inverse_period"`` (``eta_l = eta / C_l``) or ``"none"``.
    """

    def __init__(
        self,
        encoders: Mapping[str, nn.Module],
        feature_dims: Mapping[str, int],
        n_classes: int,
        cms_periods: Sequence[int] = (1, 4, 16),
        ema_tau: float = 0.99,
        beta: float = 2.0,
        encoder_fusion_grad: float = 0.0,
        ensemble: bool = False,
        score_momentum: float = 0.9,
        cms_lr_scale: str = "inverse_period",
    ) -> None:
        super().__init__()
        self.modalities = check_modalities(encoders, feature_dims)
        if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 2:
            raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
        for name, v, lo, hi, hi_open in (
            ("ema_tau", ema_tau, 0.0, 1.0, True),
            ("encoder_fusion_grad", encoder_fusion_grad, 0.0, 1.0, False),
            ("score_momentum", score_momentum, 0.0, 1.0, True),
            ("beta", beta, 0.0, float("inf"), True),
        ):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"{name} must be a number, got {type(v).__name__}")
            if not (lo <= v and (v < hi if hi_open else v <= hi)):
                raise ValueError(f"{name} must lie in [{lo:g}, {hi:g}{')' if hi_open else ']'}, got {v!r}")
        if cms_lr_scale not in ("inverse_period", "none"):
            raise ValueError(f"cms_lr_scale must be 'inverse_period' or 'none', got {cms_lr_scale!r}")
        self.n_classes = n_classes
        self.feature_dims = {m: int(feature_dims[m]) for m in self.modalities}
        self.cms_periods = _check_periods(cms_periods)
        self.ema_tau, self.beta, self.encoder_fusion_grad = float(ema_tau), float(beta), float(encoder_fusion_grad)
        self.ensemble, self.score_momentum, self.cms_lr_scale = bool(ensemble), float(score_momentum), cms_lr_scale
        self.encoders = nn.ModuleDict({m: encoders[m] for m in self.modalities})
        self.heads = nn.ModuleDict({m: nn.Linear(self.feature_dims[m], n_classes) for m in self.modalities})
        self.ema_encoders = nn.ModuleDict({m: copy.deepcopy(encoders[m]) for m in self.modalities})
        for p in self.ema_encoders.parameters():
            p.requires_grad_(False)
        self.norms = nn.ModuleDict({m: nn.LayerNorm(self.feature_dims[m]) for m in self.modalities})
        width = sum(self.feature_dims.values())
        self.fusion = ContinuumMemoryMLP(width, self.cms_periods)
        self.classifier = nn.Linear(width, n_classes)
        self.register_buffer("scores", torch.full((len(self.modalities),), 1.0 / n_classes))
        self.register_buffer("weights", torch.ones(len(self.modalities)))
        # the nested step counter drives the CMS schedule: a buffer, so a saved state_dict keeps its phase
        self.register_buffer("steps_done", torch.zeros((), dtype=torch.long))
        self.modality_optimizers: dict[str, torch.optim.Optimizer] = {}
        self.fusion_optimizer: torch.optim.Optimizer | None = None
        self._dry_run()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, *args, **kwargs):
        key = prefix + "steps_done"
        if key not in state_dict:  # saved before the counter was a buffer: start the CMS schedule from 0, as then
            warnings.warn(
                f"{key!r} is missing from the state_dict (saved by an older icml26): step_count starts at 0, so the "
                "CMS schedule's phase restarts",
                stacklevel=2,
            )
            state_dict[key] = torch.zeros((), dtype=torch.long)
        v = state_dict[key]
        if not isinstance(v, torch.Tensor) or v.numel() != 1:
            raise TypeError(f"{key!r} (step_count) must be a one-element tensor, got {v!r:.80}")
        if v.is_complex() or not bool(torch.isfinite(v.double()).all()) or float(v) != int(float(v)) or float(v) < 0:
            raise ValueError(
                f"{key!r} (step_count) must be an integer >= 0 (the nested training steps taken), got {v.item()!r}"
            )
        state_dict[key] = v.reshape(()).to(torch.long)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, *args, **kwargs)

    @property
    def step_count(self) -> int:
        """Nested training steps taken (``training_step`` calls), saved in the ``state_dict`` as ``steps_done``: a
        reloaded model keeps its CMS schedule's phase (block ``l`` steps when ``step_count % C_l == 0``)."""
        return int(self.steps_done)

    @torch.no_grad()
    def _dry_run(self) -> None:
        """Check ``feature_dims`` at construction: every encoder with an ``in_dim`` attribute (``MLPEncoder``) is run
        on two zero rows and its output width compared (others are checked on their first batch)."""
        for m in self.modalities:
            in_dim = getattr(self.encoders[m], "in_dim", None)
            if isinstance(in_dim, int) and in_dim > 0:
                was = self.encoders[m].training
                self.encoders[m].eval()
                _check_width(m, self.encoders[m](torch.zeros(2, in_dim)), self.feature_dims)
                self.encoders[m].train(was)

    # -- optimisation ---------------------------------------------------------------------------------------------
    def configure_optimizers(
        self, lr: float = 1e-3, optimizer: type[torch.optim.Optimizer] = torch.optim.Adam, **kwargs
    ) -> dict[str, torch.optim.Optimizer]:
        """One optimizer ``O_m`` per modality stream (encoder ``phi_m`` + head ``h_m``), one for the fusion's
        LayerNorms and classifier (period 1) and one per CMS block (``eta_l`` by ``cms_lr_scale``); returns them
        by name (``"<modality>"``, ``"fusion"``, ``"cms<l>"``)."""
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
            raise ValueError(f"lr must be a positive number, got {lr!r}")
        self.modality_optimizers = {
            m: optimizer([*self.encoders[m].parameters(), *self.heads[m].parameters()], lr=lr, **kwargs)
            for m in self.modalities
        }
        self.fusion_optimizer = optimizer([*self.norms.parameters(), *self.classifier.parameters()], lr=lr, **kwargs)
        cms = self.fusion.configure_optimizers(lr, optimizer, lr_scale=self.cms_lr_scale, **kwargs)
        return {
            **self.modality_optimizers,
            "fusion": self.fusion_optimizer,
            **{f"cms{i}": o for i, o in enumerate(cms)},
        }

    @torch.no_grad()
    def update_memory(self) -> None:
        """Stable memory: ``phi_bar_m <- tau phi_bar_m + (1 - tau) phi_m`` for every parameter and buffer."""
        for m in self.modalities:
            for pb, p in zip(self.ema_encoders[m].parameters(), self.encoders[m].parameters()):
                pb.mul_(self.ema_tau).add_(p.detach(), alpha=1.0 - self.ema_tau)
            for bb, b in zip(self.ema_encoders[m].buffers(), self.encoders[m].buffers()):
                bb.copy_(b)

    def fusion_features(
        self, inputs: Mapping[str, torch.Tensor], fast: Mapping[str, torch.Tensor] | None = None
    ) -> torch.Tensor:
        """``u = concat_m(w_m LayerNorm_m(phi_bar_m(x_m)))``.  With ``fast`` features and ``lambda > 0`` the value
        stays ``phi_bar_m(x_m)`` while ``lambda * dL_f/dphi_m`` flows into the fast encoder."""
        parts = []
        for i, m in enumerate(self.modalities):
            _check_in_width(m, self.encoders[m], inputs[m])
            with torch.no_grad():
                z = self.ema_encoders[m](inputs[m])
            _check_width(m, z, self.feature_dims)
            if fast is not None and self.encoder_fusion_grad > 0:
                f = fast[m]
                z = z + self.encoder_fusion_grad * (f - f.detach())
            parts.append(self.weights[i] * self.norms[m](z))
        return torch.cat(parts, dim=1)

    def training_step(self, batch: tuple[Mapping[str, torch.Tensor], torch.Tensor]) -> dict[str, float]:
        """One nested step on ``batch = (inputs, y)``: (1) every stream ``m`` steps ``O_m`` on ``L_m``; the fit scores
        and coordination weights are updated; (2) the fusion steps on ``L_f`` computed from the stable memory (CMS
        blocks only when due); (3) the stable memory moves toward the fast encoders.  Returns the losses, ``w_m``,
        ``s_m`` and which CMS blocks stepped."""
        if not self.modality_optimizers or self.fusion_optimizer is None:
            raise RuntimeError("call configure_optimizers(lr) before training_step")
        inputs, y = batch
        check_labels(y, self.n_classes)
        _check_inputs(inputs, self.modalities, int(y.shape[0]) if y.ndim else None)
        if not self.training:
            self.train()
        self.steps_done += 1
        for o in self.modality_optimizers.values():
            o.zero_grad(set_to_none=True)
        self.fusion_optimizer.zero_grad(set_to_none=True)
        fast, losses, fits = {}, {}, []
        for m in self.modalities:
            _check_in_width(m, self.encoders[m], inputs[m])
            fast[m] = self.encoders[m](inputs[m])
            _check_width(m, fast[m], self.feature_dims)
            logits = self.heads[m](fast[m])
            losses[m] = F.cross_entropy(logits, y)
            with torch.no_grad():
                fits.append(torch.softmax(logits, 1).gather(1, y[:, None]).mean())
        if not all(bool(torch.isfinite(v)) for v in (*losses.values(), *fits)):
            raise TrainingDiverged(
                f"step {self.step_count}: a stream's loss or fit score is not finite "
                f"({ {m: float(v.detach()) for m, v in losses.items()} }): the learning rate is too large"
            )
        with torch.no_grad():
            self.scores.mul_(self.score_momentum).add_(torch.stack(fits), alpha=1 - self.score_momentum)
            self.weights.copy_(adaptive_weights(self.scores, self.beta))
        loss_f = F.cross_entropy(self.classifier(self.fusion(self.fusion_features(inputs, fast))), y)
        if not bool(torch.isfinite(loss_f)):
            raise TrainingDiverged(f"step {self.step_count}: the fused loss is not finite: lr too large")
        (sum(losses.values()) + loss_f).backward()  # disjoint parameters: each loss reaches only its own level
        for o in self.modality_optimizers.values():
            o.step()
        self.fusion_optimizer.step()
        self.fusion.accumulate()
        stepped = self.fusion.maybe_step(self.step_count)
        self.update_memory()
        out = {"loss_fused": loss_f.item(), **{f"loss_{m}": v.item() for m, v in losses.items()}}
        out.update({f"w_{m}": float(self.weights[i]) for i, m in enumerate(self.modalities)})
        out.update({f"s_{m}": float(self.scores[i]) for i, m in enumerate(self.modalities)})
        out["cms_stepped"] = [bool(s) for s in stepped]
        return out

    # -- inference ------------------------------------------------------------------------------------------------
    def forward(self, inputs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Fused logits ``classifier(CMS(u))`` (+ ``sum_m h_m(phi_m(x_m))`` with ``ensemble=True``)."""
        _check_inputs(inputs, self.modalities)
        logits = self.classifier(self.fusion(self.fusion_features(inputs)))
        if self.ensemble:
            logits = logits + sum(self.heads[m](self.encoders[m](inputs[m])) for m in self.modalities)
        return logits

    def encode(self, modality: str, x: torch.Tensor) -> torch.Tensor:
        """The features of ``modality`` the fused prediction reads: the stable memory ``phi_bar_m(x)``."""
        if modality not in self.modalities:
            raise ValueError(f"modality must be one of {list(self.modalities)}, got {modality!r}")
        return self.ema_encoders[modality](x)
