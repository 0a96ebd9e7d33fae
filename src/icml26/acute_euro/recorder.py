"""Record per-layer hidden states of any ``nn.Module`` with forward hooks."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn as nn

__all__ = ["ActivationRecorder"]


def _default_layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The children of the first ``nn.ModuleList`` in ``model`` (breadth-first): the block stack of almost every
    transformer (our ``TinyLM.blocks``, GPT-2's ``transformer.h``, Llama's ``model.layers``)."""
    queue: list[tuple[str, nn.Module]] = [("", model)]
    while queue:
        prefix, mod = queue.pop(0)
        for name, child in mod.named_children():
            full = f"{prefix}.{name}" if prefix else name
            if isinstance(child, nn.ModuleList) and len(child) > 0:
                return [(f"{full}.{i}", m) for i, m in enumerate(child)]
            queue.append((full, child))
    raise ValueError(
        "layers='all' looks for an nn.ModuleList of blocks and found none in this model; pass layers as a list "
        "of submodule names (see model.named_modules()) or modules"
    )


class ActivationRecorder:
    """Context manager that records the output of chosen layers on every forward pass.

    Parameters
    ----------
    model: any ``torch.nn.Module`` (our ``TinyLM``, a Hugging Face model, an ``nn.Sequential`` MLP, ...).
    layers: ``"all"`` (the children of the first ``nn.ModuleList``, i.e. the transformer blocks), or a sequence
        of submodule names (as in ``model.named_modules()``) or of submodules.  Outputs that are tuples (Hugging
        Face blocks return ``(hidden, ...)``) are recorded by their first element.
    to_cpu: move recorded tensors to the CPU (they are always detached).

    Each forward pass overwrites the previous record.  After a forward, :meth:`stacked` gives ``[B, T, L, d]``
    (or ``[B, L, d]`` for layers with 2-D outputs) and :meth:`pooled` averages over the positions of a mask.

    Example::

        with ActivationRecorder(model) as rec:
            logits = model(ids)
        feats = rec.pooled(answer_mask)   # [B, L, d], input of ACUTEConfidenceEstimator
    """

    def __init__(self, model: nn.Module, layers: str | Sequence[str | nn.Module] = "all", to_cpu: bool = True):
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if isinstance(layers, str):
            if layers != "all":
                raise ValueError(f"layers must be 'all' or a sequence of submodule names/modules, got {layers!r}")
            self.layers = _default_layers(model)
        else:
            by_name = dict(model.named_modules())
            chosen = []
            for item in layers:
                if isinstance(item, str):
                    if item not in by_name:
                        raise ValueError(f"layers: {item!r} is not a submodule name of the model")
                    chosen.append((item, by_name[item]))
                elif isinstance(item, nn.Module):
                    name = next((n for n, m in by_name.items() if m is item), None)
                    if name is None:
                        raise ValueError("layers: a module given is not part of the model")
                    chosen.append((name, item))
                else:
                    raise TypeError(f"layers must hold submodule names or modules, got {type(item).__name__}")
            if not chosen:
                raise ValueError("layers must name at least one submodule")
            self.layers = chosen
        self.model = model
        self.to_cpu = to_cpu
        self.names = [n for n, _ in self.layers]
        self._outputs: dict[str, torch.Tensor] = {}
        self._handles: list = []

    def _hook(self, name: str):
        def hook(module, inputs, output):
            out = output[0] if isinstance(output, (tuple, list)) else output
            if not isinstance(out, torch.Tensor):
                raise TypeError(f"layer {name!r} returned {type(out).__name__}, not a tensor")
            out = out.detach()
            self._outputs[name] = out.cpu() if self.to_cpu else out

        return hook

    def __enter__(self) -> ActivationRecorder:
        if self._handles:
            raise RuntimeError("this ActivationRecorder is already active")
        self._outputs = {}
        self._handles = [m.register_forward_hook(self._hook(n)) for n, m in self.layers]
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    @property
    def activations(self) -> dict[str, torch.Tensor]:
        """The last forward's output per layer name."""
        return dict(self._outputs)

    def stacked(self) -> torch.Tensor:
        """Outputs of all layers of the last forward, stacked on a new axis after time: ``[B, T, L, d]``."""
        missing = [n for n in self.names if n not in self._outputs]
        if missing:
            raise RuntimeError(f"no activations recorded for {missing}; run a forward pass inside the context")
        shapes = {tuple(self._outputs[n].shape) for n in self.names}
        if len(shapes) != 1:
            raise ValueError(f"recorded layers have different shapes {sorted(shapes)}; record same-width layers")
        return torch.stack([self._outputs[n] for n in self.names], dim=-2)

    def pooled(self, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Mean over positions: ``h_bar[b, l] = sum_t mask[b, t] h[b, t, l] / sum_t mask[b, t]``, shape ``[B, L, d]``.

        ``mask`` (``[B, T]``, bool or 0/1) selects positions (e.g. the generated tokens, not padding); ``None``
        averages over all positions.  Every row must select at least one position.
        """
        h = self.stacked()
        if h.dim() == 3:  # [B, L, d]: nothing to pool
            if mask is not None:
                raise ValueError("mask given but the recorded outputs have no time axis")
            return h
        if mask is None:
            return h.mean(dim=1)
        m = torch.as_tensor(mask, device=h.device)
        if m.shape != h.shape[:2]:
            raise ValueError(f"mask must have shape {tuple(h.shape[:2])} (batch, time), got {tuple(m.shape)}")
        m = m.to(h.dtype)
        counts = m.sum(dim=1)
        if bool((counts == 0).any()):
            raise ValueError("mask selects no position in some rows; every row needs at least one")
        return (h * m[:, :, None, None]).sum(dim=1) / counts[:, None, None]
