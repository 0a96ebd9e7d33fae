"""The Continuum Memory System (CMS) of Nested Learning: a chain of MLP blocks updated at different frequencies.

Behrouz et al., "Nested Learning: The Illusion of Deep Learning Architectures" (NeurIPS 2025, arXiv 2512.24695),
Eqs. 30-31: block ``l`` of the chain has a period ``C_l`` and is updated only every ``C_l`` steps, with the
gradients of the steps in between accumulated,

    theta_l <- theta_l - eta_l * sum_{t in chunk} grad_{theta_l} L(t)      when step % C_l == 0,

and left unchanged otherwise.  Fast blocks (``C = 1``) adapt to every batch, slow blocks are a longer-timescale
memory.  With ``lr_scale="inverse_period"`` (the default) ``eta_l = eta / C_l``, so a slow block's update is the
chunk-average gradient times ``eta``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import torch
from torch import nn

__all__ = ["ContinuumMemoryMLP", "ResidualMLPBlock"]


class ResidualMLPBlock(nn.Module):
    """``x + W_2 GELU(W_1 x + b_1) + b_2`` with hidden width ``hidden_mult * dim``."""

    def __init__(self, dim: int, hidden_mult: int = 2) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden_mult * dim)
        self.fc2 = nn.Linear(hidden_mult * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(nn.functional.gelu(self.fc1(x)))


def _check_periods(periods) -> tuple[int, ...]:
    if isinstance(periods, (str, bytes)) or not isinstance(periods, Sequence) or len(periods) == 0:
        raise ValueError(f"periods must be a non-empty sequence of integers >= 1, got {periods!r}")
    out = []
    for p in periods:
        if isinstance(p, bool) or not isinstance(p, int) or p < 1:
            raise ValueError(f"periods must be a non-empty sequence of integers >= 1, got {periods!r}")
        out.append(int(p))
    return tuple(out)


class ContinuumMemoryMLP(nn.Module):
    """A chain of residual MLP blocks, block ``l`` updated every ``periods[l]`` steps (module docstring).

    Use it like any ``nn.Module`` in the forward pass; for the update, after each ``loss.backward()`` call
    :meth:`accumulate` (moves the fresh gradients into per-block accumulators, so an outer ``zero_grad`` cannot
    erase them) and then :meth:`maybe_step` with the 1-based step count: the blocks whose period divides the step
    take one optimizer step on their summed gradients and clear their accumulators.  :meth:`configure_optimizers`
    makes one optimizer per block (``eta_l = lr / C_l`` with ``lr_scale="inverse_period"``, ``lr`` with
    ``"none"``).

    Parameters: ``dim`` (input = output width), ``periods`` (``C_l``, integers >= 1, default ``(1, 4, 16)``),
    ``hidden_mult`` (hidden width of each block as a multiple of ``dim``).

    The ``state_dict`` holds, beside the weights, what an exact resumption needs (``_extra_state``): each block's
    gradients accumulated within its current chunk and its update count ``n_updates``, so a model saved mid-period
    and reloaded takes the same next slow-block step as one never interrupted (the optimizers' own state, e.g.
    momentum, is the caller's to save, as in PyTorch).
    """

    def __init__(self, dim: int, periods: Sequence[int] = (1, 4, 16), hidden_mult: int = 2) -> None:
        super().__init__()
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
        if isinstance(hidden_mult, bool) or not isinstance(hidden_mult, int) or hidden_mult < 1:
            raise ValueError(f"hidden_mult must be an integer >= 1, got {hidden_mult!r}")
        self.dim = dim
        self.periods = _check_periods(periods)
        self.blocks = nn.ModuleList(ResidualMLPBlock(dim, hidden_mult) for _ in self.periods)
        self._acc: list[list[torch.Tensor | None]] = [[None for _ in b.parameters()] for b in self.blocks]
        self.optimizers: list[torch.optim.Optimizer] = []
        self.n_updates = [0 for _ in self.periods]

    def get_extra_state(self) -> dict:
        """Each block's accumulated chunk gradients (``None`` where nothing is pending) and ``n_updates``."""
        return {
            "acc": [[None if a is None else a.detach().clone() for a in acc] for acc in self._acc],
            "n_updates": list(self.n_updates),
        }

    def set_extra_state(self, state) -> None:
        if not isinstance(state, dict) or set(state) != {"acc", "n_updates"}:
            raise ValueError(f"the CMS extra state must be a dict with keys 'acc' and 'n_updates', got {state!r:.80}")
        acc, n = state["acc"], state["n_updates"]
        if (
            not isinstance(n, (list, tuple))
            or len(n) != len(self.periods)
            or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in n)
        ):
            raise ValueError(f"n_updates must be {len(self.periods)} integers >= 0 (one per CMS block), got {n!r}")
        shapes = [[tuple(p.shape) for p in b.parameters()] for b in self.blocks]
        if (
            not isinstance(acc, (list, tuple))
            or len(acc) != len(shapes)
            or any(len(a) != len(s) for a, s in zip(acc, shapes))
            or any(
                t is not None and (not isinstance(t, torch.Tensor) or tuple(t.shape) != sh)
                for a, s in zip(acc, shapes)
                for t, sh in zip(a, s)
            )
        ):
            raise ValueError(
                "the CMS accumulated gradients (acc) must hold, per block, one tensor (or None) of each parameter's "
                f"shape {shapes}"
            )
        params = [list(b.parameters()) for b in self.blocks]
        self._acc = [
            [None if t is None else t.detach().to(p.device, p.dtype).clone() for t, p in zip(a, ps)]
            for a, ps in zip(acc, params)
        ]
        self.n_updates = [int(v) for v in n]

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, *args, **kwargs):
        key = prefix + "_extra_state"
        if key not in state_dict:  # saved before the chunk state was saved: resume with empty accumulators, as then
            warnings.warn(
                f"{key!r} is missing from the state_dict (saved by an older icml26): the CMS blocks' accumulated "
                "gradients and update counts restart empty, so resuming mid-period is not exact",
                stacklevel=2,
            )
            state_dict[key] = {
                "acc": [[None for _ in b.parameters()] for b in self.blocks],
                "n_updates": [0] * len(self.periods),
            }
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, *args, **kwargs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x

    def configure_optimizers(
        self,
        lr: float,
        optimizer: Callable[..., torch.optim.Optimizer] = torch.optim.Adam,
        lr_scale: str = "inverse_period",
        **kwargs,
    ) -> list[torch.optim.Optimizer]:
        """One optimizer per block, ``optimizer(block.parameters(), lr=eta_l, **kwargs)``."""
        if not (isinstance(lr, (int, float)) and lr > 0):
            raise ValueError(f"lr must be a positive number, got {lr!r}")
        if lr_scale not in ("inverse_period", "none"):
            raise ValueError(f"lr_scale must be 'inverse_period' or 'none', got {lr_scale!r}")
        self.optimizers = [
            optimizer(b.parameters(), lr=lr / c if lr_scale == "inverse_period" else lr, **kwargs)
            for b, c in zip(self.blocks, self.periods)
        ]
        return self.optimizers

    @torch.no_grad()
    def accumulate(self) -> None:
        """Add every block parameter's current ``.grad`` to its accumulator and set ``.grad`` to ``None``."""
        for acc, block in zip(self._acc, self.blocks):
            for i, p in enumerate(block.parameters()):
                if p.grad is not None:
                    acc[i] = p.grad.detach().clone() if acc[i] is None else acc[i] + p.grad
                    p.grad = None

    def due(self, step: int) -> list[bool]:
        """Which blocks update at the 1-based ``step``: ``step % C_l == 0``."""
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise ValueError(f"step must be an integer >= 1 (1-based count of accumulated batches), got {step!r}")
        return [step % c == 0 for c in self.periods]

    def maybe_step(self, step: int) -> list[bool]:
        """Step the blocks due at ``step`` on their accumulated (summed) gradients; returns which blocks stepped."""
        due = self.due(step)
        if not self.optimizers:
            raise RuntimeError("call configure_optimizers(lr) before maybe_step")
        for l, (go, acc, block) in enumerate(zip(due, self._acc, self.blocks)):
            if not go:
                continue
            for i, p in enumerate(block.parameters()):
                p.grad = acc[i]
                acc[i] = None
            self.optimizers[l].step()
            for p in block.parameters():
                p.grad = None
            self.n_updates[l] += 1
        return due
