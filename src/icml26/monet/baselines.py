"""The imbalanced-multimodal baselines, one interface (BalanceMM-style strategy objects), written in plain torch.

A :class:`JointConcat` model (encoders + a linear head on the concatenated features + per-modality linear heads
that some strategies use) is trained by :func:`fit` with a strategy: :class:`Joint` (vanilla), :class:`OGMGE`,
:class:`PMR`, :class:`MMPareto`, :class:`MLALite` (alternating unimodal updates through a shared head) or
:class:`UnimodalEnsemble` (the honesty baseline).  Each strategy has ``setup(model, generator)``,
``on_epoch_start(model, train, epoch)``, ``step(model, optimizer, inputs, y, epoch) -> dict`` and
``predict(model, inputs) -> logits``.  :func:`fit` also trains a :class:`~icml26.monet.model.MoNet` (``method=None``),
so every arm runs through the same loop, batches and budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

import torch
from torch import nn
from torch.nn import functional as F

from .data import BimodalSplit
from .model import MoNet, TrainingDiverged, _check_inputs, check_labels, check_modalities

__all__ = [
    "JointConcat",
    "Strategy",
    "Joint",
    "OGMGE",
    "PMR",
    "MMPareto",
    "MLALite",
    "UnimodalEnsemble",
    "fit",
    "predict",
    "accuracy",
    "ogm_coefficients",
    "pmr_coefficients",
    "mmpareto_combine",
    "class_prototypes",
]


class JointConcat(nn.Module):
    """Encoders ``phi_m`` + a linear head ``W [phi_1; ...; phi_M] + b`` on the concatenated features (the fused
    classifier of the whole line of work), plus per-modality linear heads ``uni_heads[m]`` (used by MMPareto's
    unimodal losses and the unimodal ensemble).  ``forward`` gives the fused logits."""

    def __init__(self, encoders: Mapping[str, nn.Module], feature_dims: Mapping[str, int], n_classes: int) -> None:
        super().__init__()
        self.modalities = check_modalities(encoders, feature_dims)
        if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 2:
            raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
        self.n_classes = n_classes
        self.feature_dims = {m: int(feature_dims[m]) for m in self.modalities}
        self.encoders = nn.ModuleDict({m: encoders[m] for m in self.modalities})
        self.head = nn.Linear(sum(self.feature_dims.values()), n_classes)
        self.uni_heads = nn.ModuleDict({m: nn.Linear(self.feature_dims[m], n_classes) for m in self.modalities})
        self.predictor: Callable[[JointConcat, Mapping[str, torch.Tensor]], torch.Tensor] | None = None

    def features(self, inputs: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        _check_inputs(inputs, self.modalities)
        return {m: self.encoders[m](inputs[m]) for m in self.modalities}

    def fused_logits(self, feats: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self.head(torch.cat([feats[m] for m in self.modalities], dim=1))

    def head_slices(self) -> dict[str, slice]:
        out, i = {}, 0
        for m in self.modalities:
            out[m] = slice(i, i + self.feature_dims[m])
            i += self.feature_dims[m]
        return out

    def concat_unimodal_logits(self, feats: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """OGM-GE's unimodal logits from the concat head: ``o_m = W_m phi_m + b / M``."""
        sl = self.head_slices()
        return {
            m: feats[m] @ self.head.weight[:, sl[m]].T + self.head.bias / len(self.modalities) for m in self.modalities
        }

    def forward(self, inputs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        if self.predictor is not None:
            return self.predictor(self, inputs)
        return self.fused_logits(self.features(inputs))

    def encode(self, modality: str, x: torch.Tensor) -> torch.Tensor:
        """``phi_m(x)``: the features a linear probe of ``modality`` reads."""
        if modality not in self.modalities:
            raise ValueError(f"modality must be one of {list(self.modalities)}, got {modality!r}")
        return self.encoders[modality](x)


def _encoder_weights(model: JointConcat, m: str):
    """Encoder ``m``'s weight tensors (``ndim >= 2``; OGM-GE leaves biases untouched)."""
    return [p for p in model.encoders[m].parameters() if p.ndim >= 2]


def _one_vs_others(scores: Mapping[str, float], m: str) -> float:
    others = [s for k, s in scores.items() if k != m]
    return (sum(others) / len(others)) if others else scores[m]


# -- strategies -------------------------------------------------------------------------------------------------
class Strategy:
    """Vanilla joint training: one cross-entropy on the fused logits, one optimizer over everything."""

    name = "joint"

    def setup(self, model: JointConcat, generator: torch.Generator) -> None:
        self.generator = generator

    def on_epoch_start(self, model: JointConcat, train: BimodalSplit, epoch: int) -> None:
        self.epoch = epoch

    def step(self, model: JointConcat, optimizer: torch.optim.Optimizer, inputs, y, epoch: int) -> dict:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model.fused_logits(model.features(inputs)), y)
        loss.backward()
        optimizer.step()
        return {"loss": loss.item()}

    def predict(self, model: JointConcat, inputs) -> torch.Tensor:
        return model.fused_logits(model.features(inputs))


class Joint(Strategy):
    """Joint concatenation training (the vanilla baseline)."""


def ogm_coefficients(scores: Mapping[str, float], alpha: float) -> dict[str, float]:
    """OGM's modulation coefficients (Peng et al., CVPR 2022): with ``rho_m = s_m / s_other`` (the OTHER modality's
    score; one-vs-mean-of-others for ``M > 2``), ``k_m = 1 - tanh(alpha * rho_m)`` if ``rho_m > 1`` else ``1``.
    Only the dominant modality (``rho_m > 1``) is slowed down."""
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha!r}")
    bad = {m: s for m, s in scores.items() if not (float(s) >= 0 and math.isfinite(float(s)))}
    if bad:
        raise ValueError(f"scores must be finite and >= 0 (summed softmax probabilities), got {bad}")
    out = {}
    for m, s in scores.items():
        rho = float(s) / max(_one_vs_others(scores, m), 1e-12)
        out[m] = 1.0 - float(torch.tanh(torch.tensor(alpha * rho))) if rho > 1.0 else 1.0
    return out


class OGMGE(Strategy):
    """On-the-fly Gradient Modulation with Generalization Enhancement (Peng et al., CVPR 2022).

    After the fused loss's backward, with ``s_m = sum_i softmax(o_m)_i[y_i]`` from the concat head's unimodal logits
    ``o_m = W_m phi_m + b / M`` and ``k_m`` from :func:`ogm_coefficients`, every encoder-``m`` weight gradient becomes
    ``k_m g + N(0, std(g)^2)`` (the GE noise; ``ge=False`` drops it); biases are untouched.  Active for epochs
    ``start <= epoch < end`` (``end=None``: to the last epoch).
    """

    name = "ogm_ge"

    def __init__(self, alpha: float = 0.5, start: int = 0, end: int | None = None, ge: bool = True) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha >= 0:
            raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError(f"start must be an integer >= 0, got {start!r}")
        if end is not None and (isinstance(end, bool) or not isinstance(end, int) or end < start):
            raise ValueError(f"end must be None or an integer >= start={start}, got {end!r}")
        self.alpha, self.start, self.end, self.ge = float(alpha), start, end, bool(ge)
        self.last_coefficients: dict[str, float] = {}

    def active(self, epoch: int) -> bool:
        return epoch >= self.start and (self.end is None or epoch < self.end)

    def scores(self, model: JointConcat, feats, y) -> dict[str, float]:
        with torch.no_grad():
            uni = model.concat_unimodal_logits({m: f.detach() for m, f in feats.items()})
            return {m: float(torch.softmax(o, 1).gather(1, y[:, None]).sum()) for m, o in uni.items()}

    def modulate(self, model: JointConcat, coefficients: Mapping[str, float]) -> None:
        """``g <- k_m g (+ N(0, std(g)^2))`` on encoder ``m``'s weight gradients."""
        for m, k in coefficients.items():
            for p in _encoder_weights(model, m):
                if p.grad is None:
                    continue
                g = p.grad
                new = g * k
                if self.ge:
                    std = float(g.std()) if g.numel() > 1 else 0.0
                    new = new + torch.randn(g.shape, generator=self.generator, dtype=g.dtype) * (std + 1e-8)
                p.grad = new

    def step(self, model, optimizer, inputs, y, epoch):
        optimizer.zero_grad(set_to_none=True)
        feats = model.features(inputs)
        loss = F.cross_entropy(model.fused_logits(feats), y)
        if not bool(torch.isfinite(loss)):
            raise TrainingDiverged(f"epoch {epoch}: the fused loss is not finite: the learning rate is too large")
        loss.backward()
        k = ogm_coefficients(self.scores(model, feats, y), self.alpha) if self.active(epoch) else None
        if k is not None:
            self.modulate(model, k)
            self.last_coefficients = k
        optimizer.step()
        return {"loss": loss.item(), **({f"k_{m}": v for m, v in k.items()} if k else {})}


@torch.no_grad()
def class_prototypes(feats: torch.Tensor, y: torch.Tensor, n_classes: int) -> torch.Tensor:
    """``c^k = mean_{i: y_i = k} phi(x_i)``, shape ``(n_classes, d)`` (zero for a class with no sample)."""
    c = torch.zeros(n_classes, feats.shape[1], dtype=feats.dtype)
    c.index_add_(0, y, feats)
    n = torch.bincount(y, minlength=n_classes).clamp(min=1).to(feats.dtype)
    return c / n[:, None]


def pmr_coefficients(scores: Mapping[str, float]) -> dict[str, float]:
    """PMR's prototype-loss weights (Fan et al., CVPR 2023): ``rho_m = s_other / s_m`` (one-vs-mean-of-others);
    the weaker modality gets ``clip(rho_m - 1, 0, 1)``, the stronger 0 (two modalities: ``rho = s_a / s_v >= 1``
    gives ``beta_a = 0``, ``lam_v = clip(rho - 1, 0, 1)``)."""
    return {m: min(max(_one_vs_others(scores, m) / max(float(s), 1e-12) - 1.0, 0.0), 1.0) for m, s in scores.items()}


class PMR(Strategy):
    """Prototypical Modal Rebalance (Fan et al., CVPR 2023).

    At each epoch's start, class prototypes ``c_m^k`` (:func:`class_prototypes` of the current encoders on the train
    split); prototype logits ``-||phi_m(x) - c_m^k||^2``, scores ``s_m^p = sum_i softmax(.)_i[y_i]``, and the loss
    ``CE(fused) + alpha * sum_m coef_m * CE(prototype logits_m, y)`` with ``coef_m`` from :func:`pmr_coefficients`
    (the prototype CE accelerates the slow modality).
    """

    name = "pmr"

    def __init__(self, alpha: float = 1.0) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha >= 0:
            raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
        self.alpha = float(alpha)
        self.prototypes: dict[str, torch.Tensor] = {}
        self.last_coefficients: dict[str, float] = {}

    def on_epoch_start(self, model, train, epoch):
        super().on_epoch_start(model, train, epoch)
        with torch.no_grad():
            was = model.training
            model.eval()
            feats = model.features(dict(train.x))
            model.train(was)
        self.prototypes = {m: class_prototypes(f, train.y, model.n_classes) for m, f in feats.items()}

    def step(self, model, optimizer, inputs, y, epoch):
        optimizer.zero_grad(set_to_none=True)
        feats = model.features(inputs)
        loss = F.cross_entropy(model.fused_logits(feats), y)
        plog = {m: -(torch.cdist(f, self.prototypes[m]) ** 2) for m, f in feats.items()}
        with torch.no_grad():
            s = {m: float(torch.softmax(v, 1).gather(1, y[:, None]).sum()) for m, v in plog.items()}
        coef = pmr_coefficients(s)
        total = loss + sum(self.alpha * coef[m] * F.cross_entropy(plog[m], y) for m in plog if coef[m] > 0)
        total.backward()
        optimizer.step()
        self.last_coefficients = coef
        return {"loss": loss.item(), **{f"coef_{m}": v for m, v in coef.items()}}


def mmpareto_combine(g_mm: torch.Tensor, g_u: torch.Tensor) -> tuple[torch.Tensor, float]:
    """MMPareto's gradient for one encoder (Wei & Hu, ICML 2024) from the flattened fused-loss gradient ``g_mm`` and
    unimodal-loss gradient ``g_u``: if ``cos(g_mm, g_u) > 0`` the weights are ``(1/2, 1/2)``, so ``g = g_mm + g_u``;
    otherwise the two-task min-norm (MGDA) weights ``gamma = clip(<g_u - g_mm, g_u> / ||g_mm - g_u||^2, 0, 1)`` on
    ``g_mm`` and ``1 - gamma`` on ``g_u``, and ``g = 2 (gamma g_mm + (1 - gamma) g_u)`` rescaled to the norm of
    ``g_mm + g_u`` (a direction that does not increase either loss, at the magnitude of the summed gradient).
    Returns ``(g, cos)``."""
    if g_mm.shape != g_u.shape:
        raise ValueError(f"g_mm and g_u must have the same shape, got {tuple(g_mm.shape)} and {tuple(g_u.shape)}")
    n_mm, n_u = g_mm.norm(), g_u.norm()
    cos = float(g_mm @ g_u / (n_mm * n_u)) if n_mm > 0 and n_u > 0 else 1.0
    if cos > 0:
        return g_mm + g_u, cos
    diff = g_mm - g_u
    denom = float(diff @ diff)
    gamma = 0.5 if denom == 0 else min(max(float((g_u - g_mm) @ g_u) / denom, 0.0), 1.0)
    g = 2.0 * (gamma * g_mm + (1.0 - gamma) * g_u)
    target = (g_mm + g_u).norm()
    gn = g.norm()
    if gn <= 1e-9 * max(float(n_mm), float(n_u)):  # Pareto-stationary (opposite gradients): no common descent
        return torch.zeros_like(g), cos  # direction exists; rescaling round-off would invent one
    return g * (target / gn), cos


class MMPareto(Strategy):
    """MMPareto (Wei & Hu, ICML 2024): the fused loss plus one unimodal loss per modality (``uni_heads``); each
    encoder's gradient is :func:`mmpareto_combine` of its fused and unimodal gradients; heads get their own losses'
    gradients as usual."""

    name = "mmpareto"

    def __init__(self) -> None:
        self.last_cos: dict[str, float] = {}

    def step(self, model, optimizer, inputs, y, epoch):
        optimizer.zero_grad(set_to_none=True)
        feats = model.features(inputs)
        l_mm = F.cross_entropy(model.fused_logits(feats), y)
        l_u = {m: F.cross_entropy(model.uni_heads[m](feats[m]), y) for m in model.modalities}
        enc = {m: [p for p in model.encoders[m].parameters() if p.requires_grad] for m in model.modalities}
        flat = [p for m in model.modalities for p in enc[m]]
        g_mm_all = torch.autograd.grad(l_mm, flat, retain_graph=True, allow_unused=True)
        g_mm = {}
        i = 0
        for m in model.modalities:
            g_mm[m] = g_mm_all[i : i + len(enc[m])]
            i += len(enc[m])
        combined = {}
        for m in model.modalities:
            g_u = torch.autograd.grad(l_u[m], enc[m], retain_graph=True, allow_unused=True)
            a = torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(g_mm[m], enc[m])])
            b = torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(g_u, enc[m])])
            combined[m], self.last_cos[m] = mmpareto_combine(a, b)
        (l_mm + sum(l_u.values())).backward()  # heads: their own losses' gradients
        for m in model.modalities:
            j = 0
            for p in enc[m]:
                p.grad = combined[m][j : j + p.numel()].view_as(p).clone()
                j += p.numel()
        optimizer.step()
        return {"loss": l_mm.item(), **{f"cos_{m}": v for m, v in self.last_cos.items()}}


class MLALite(Strategy):
    """MLA-style alternating training (after Zhang et al., CVPR 2024, "Multimodal Representation Learning by
    Alternating Unimodal Adaptation"), simplified: per batch, each modality in turn takes one optimizer step on
    ``CE(H(phi_m(x_m)), y)`` through ONE shared linear head ``H``; the head's gradient is projected orthogonally to
    the running (EMA) head gradient of the other modalities (``g <- g - <g, v> v / ||v||^2``) to limit forgetting;
    at test the unimodal logits are fused with per-sample weights ``softmax_m(-entropy_m)``.  Needs equal feature
    widths.  The orthogonal projection replaces MLA's full gradient-projection matrix (our simplification)."""

    name = "mla"

    def __init__(self, momentum: float = 0.9) -> None:
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must lie in [0, 1), got {momentum!r}")
        self.momentum = float(momentum)
        self.head_grads: dict[str, torch.Tensor] = {}

    def setup(self, model, generator):
        super().setup(model, generator)
        dims = set(model.feature_dims.values())
        if len(dims) != 1:
            raise ValueError(f"MLALite needs equal feature_dims for its shared head, got {model.feature_dims}")
        if not hasattr(model, "shared_head"):
            model.add_module("shared_head", nn.Linear(dims.pop(), model.n_classes))
        model.predictor = self.predict

    def step(self, model, optimizer, inputs, y, epoch):
        head = model.shared_head
        out = {}
        for m in model.modalities:
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(head(model.encoders[m](inputs[m])), y)
            loss.backward()
            g = torch.cat([p.grad.reshape(-1) for p in head.parameters()])
            raw = g.clone()
            for k, v in self.head_grads.items():
                if k != m and float(v @ v) > 0:
                    g = g - (g @ v) / (v @ v) * v
            j = 0
            for p in head.parameters():
                p.grad = g[j : j + p.numel()].view_as(p).clone()
                j += p.numel()
            prev = self.head_grads.get(m)
            self.head_grads[m] = raw if prev is None else self.momentum * prev + (1 - self.momentum) * raw
            optimizer.step()
            out[f"loss_{m}"] = loss.item()
        return out

    def predict(self, model, inputs):
        logits = torch.stack([model.shared_head(model.encoders[m](inputs[m])) for m in model.modalities])
        p = torch.softmax(logits, -1)
        ent = -(p * torch.log(p.clamp_min(1e-12))).sum(-1)  # (M, n)
        w = torch.softmax(-ent, 0)[..., None]
        return (w * logits).sum(0)


class UnimodalEnsemble(Strategy):
    """The honesty baseline: each modality's encoder + its own linear head trained alone on its own CE; prediction
    = the sum of the unimodal logits.  The losses touch disjoint parameters and Adam is per-parameter, so one
    optimizer over the summed losses is exactly separate training on the same batches."""

    name = "ensemble"

    def setup(self, model, generator):
        super().setup(model, generator)
        model.predictor = self.predict

    def step(self, model, optimizer, inputs, y, epoch):
        optimizer.zero_grad(set_to_none=True)
        feats = model.features(inputs)
        losses = {m: F.cross_entropy(model.uni_heads[m](feats[m]), y) for m in model.modalities}
        sum(losses.values()).backward()
        optimizer.step()
        return {f"loss_{m}": v.item() for m, v in losses.items()}

    def predict(self, model, inputs):
        feats = model.features(inputs)
        return sum(model.uni_heads[m](feats[m]) for m in model.modalities)

    @staticmethod
    def unimodal_logits(model, inputs, modality: str) -> torch.Tensor:
        return model.uni_heads[modality](model.encode(modality, inputs[modality]))


# -- training loop ----------------------------------------------------------------------------------------------
OPTIMIZERS = {"adam": (torch.optim.Adam, {}), "sgd": (torch.optim.SGD, {"momentum": 0.9, "weight_decay": 1e-4})}


def fit(
    model: nn.Module,
    train: BimodalSplit | Iterable,
    method: Strategy | None = None,
    epochs: int = 40,
    batch_size: int = 64,
    lr: float = 1e-3,
    seed: int = 0,
    optimizer: str = "adam",
    callback: Callable[[int, nn.Module], None] | None = None,
) -> list[dict]:
    """Train ``model`` on ``train`` for ``epochs`` epochs of mini-batches (order and any strategy noise drawn from
    ``seed``) with ``optimizer`` at ``lr``: ``"adam"`` or ``"sgd"`` (momentum 0.9, weight decay 1e-4, the protocol
    of the balancing literature).  A :class:`~icml26.monet.model.MoNet` trains with its own ``training_step``
    (``method`` must be ``None``); a :class:`JointConcat` with ``method``.  ``callback(epoch, model)`` runs after
    every epoch.  ``train`` is a :class:`BimodalSplit` (shuffled from ``seed`` into ``batch_size`` batches) or, as
    PyTorch users pass data, a re-iterable of ``(inputs, y)`` batches such as a ``torch.utils.data.DataLoader``
    (``inputs`` a mapping modality -> tensor; its own batching and order are used; PMR then needs a BimodalSplit
    for its prototypes).  Returns the per-epoch mean of the step logs."""
    for name, v, lo in (("epochs", epochs, 1), ("batch_size", batch_size, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {sorted(OPTIMIZERS)}, got {optimizer!r}")
    opt_cls, opt_kw = OPTIMIZERS[optimizer]
    if not isinstance(train, BimodalSplit):
        if isinstance(train, Mapping) or not isinstance(train, Iterable) or iter(train) is train:
            raise TypeError(
                "train must be a BimodalSplit or a re-iterable of (inputs, y) batches such as a DataLoader, got "
                f"{type(train).__name__}"
                + (
                    " (a one-shot iterator: it would be empty after the first epoch)"
                    if isinstance(train, Iterable) and iter(train) is train
                    else ""
                )
            )
        if isinstance(method, PMR):
            raise TypeError("train must be a BimodalSplit for PMR (its prototypes need the whole training split)")
    g = torch.Generator().manual_seed(int(seed))
    if isinstance(model, MoNet):
        if method is not None:
            raise ValueError("method must be None for MoNet (it trains with its own training_step)")
        model.configure_optimizers(lr, opt_cls, **opt_kw)
    elif isinstance(model, JointConcat):
        if not isinstance(method, Strategy):
            raise TypeError(f"method must be a Strategy (Joint(), OGMGE(), ...), got {type(method).__name__}")
        method.setup(model, g)
        opt = opt_cls(model.parameters(), lr=lr, **opt_kw)
    else:
        raise TypeError(f"model must be MoNet or JointConcat, got {type(model).__name__}")
    history = []
    for epoch in range(epochs):
        model.train()
        if method is not None:
            method.on_epoch_start(model, train, epoch)
        logs: list[dict] = []
        batches = train.batches(batch_size, g) if isinstance(train, BimodalSplit) else _loader_batches(train, model)
        for inputs, y in batches:
            if isinstance(model, MoNet):
                logs.append(model.training_step((inputs, y)))
            else:
                logs.append(method.step(model, opt, inputs, y, epoch))
                bad = {k: v for k, v in logs[-1].items() if isinstance(v, float) and not math.isfinite(v)}
                if bad:
                    raise TrainingDiverged(f"epoch {epoch}: non-finite training values {bad}: lr too large")
        if not logs:
            raise ValueError("train yielded no batches")
        keys = [k for k, v in logs[0].items() if isinstance(v, float)]
        history.append({k: sum(r[k] for r in logs) / len(logs) for k in keys})
        model.eval()
        if callback is not None:
            callback(epoch, model)
    model.eval()
    return history


def _loader_batches(train: Iterable, model: nn.Module):
    """``(inputs, y)`` batches of a user's loader, validated: a pair, a mapping of the model's modalities, labels in
    range (lists/tuples of two items from a default-collated dict dataset are accepted)."""
    n_classes = model.n_classes
    for i, batch in enumerate(train):
        if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
            raise TypeError(f"train must yield (inputs, y) batches; batch {i} is a {type(batch).__name__}")
        inputs, y = batch
        _check_inputs(inputs, model.modalities)
        check_labels(y, n_classes)
        yield inputs, y


@torch.no_grad()
def predict(model: nn.Module, inputs: Mapping[str, torch.Tensor]) -> torch.Tensor:
    was = model.training
    model.eval()
    out = model(inputs)
    model.train(was)
    return out


def accuracy(model: nn.Module, split: BimodalSplit) -> float:
    """Test accuracy of ``model``'s predictions (its ``forward``) on ``split``."""
    return float((predict(model, dict(split.x)).argmax(1) == split.y).float().mean())
