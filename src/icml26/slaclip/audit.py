"""Privacy audits of a SlaClip optimizer that can fail: they measure the release, not the accountant.

Equal accountant histories say only that the same ``(sigma, q)`` was *booked*; they cannot see an optimizer
that releases something else.  These four audits run the optimizer itself and look at what it releases:

* :func:`audit_release_noise`: over repeated releases of one fixed batch, *every* released coordinate (the ``d``
  gradient coordinates and the ``K`` slots) minus its un-noised value (the clean clipped sum, the clean slack sum),
  divided by ``sigma C_t``, is standard normal: per coordinate (a chi-square test of its variance and a z test of
  its mean, Bonferroni over coordinates) and pooled per block (gradients, slots).  The only audit that sees the
  gradient noise: in :func:`audit_sensitivity` the noise cancels, :func:`audit_slot_noise` reads the slots only.

* :func:`audit_sensitivity`: the un-normalised release ``S(D) = sum_i [clip(g_i); v_i]`` (gradient coordinates
  and the ``K`` slack slots) of a batch and of the same batch with one sample removed, under the same noise
  draws, differ by at most ``C_t`` in L2 norm: the sensitivity the Gaussian mechanism is calibrated to.
* :func:`audit_slot_noise`: over repeated releases of one fixed batch, the slot noise (release minus the
  un-noised slack sum) has standard deviation ``sigma C_t`` in every slot (a two-sided chi-square interval).
* :func:`audit_controller_inputs`: after a step nothing the optimizer keeps, and nothing the controller is fed,
  equals the un-noised slack statistic (a controller or a logger holding the optimizer could read it).

Each takes a factory ``make_optimizer(params) -> SlaClipDPOptimizer`` that must seed the noise generator the
same way on every call (``generator=torch.Generator().manual_seed(s)``), a factory ``make_model() -> nn.Module``
that returns identical models, and one batch ``(x, y)``; ``loss_fn(outputs, y)`` defaults to cross-entropy.
All three return a small dict with the measured numbers and a boolean ``passed``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from opacus import GradSampleModule
from torch import nn

from ._slack import _encode, slack_indicator
from .optimizer import SlaClipDPOptimizer

__all__ = ["audit_release_noise", "audit_sensitivity", "audit_slot_noise", "audit_controller_inputs", "released_sum"]

MakeOptimizer = Callable[..., SlaClipDPOptimizer]


def _check_factories(make_optimizer, make_model, x, y) -> None:
    if not callable(make_optimizer):
        raise TypeError(f"make_optimizer must be callable (params) -> SlaClipDPOptimizer, got {type(make_optimizer)}")
    if not callable(make_model):
        raise TypeError(f"make_model must be callable () -> nn.Module, got {type(make_model).__name__}")
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor) or len(x) != len(y) or len(x) < 2:
        raise ValueError("x and y must be tensors with the same number (>= 2) of samples")


def _build(make_optimizer, make_model) -> tuple[nn.Module, SlaClipDPOptimizer]:
    """A fresh per-sample-gradient model and its optimizer from the two factories."""
    model = GradSampleModule(make_model())
    opt = make_optimizer(model.parameters())
    if not isinstance(opt, SlaClipDPOptimizer):
        raise TypeError(f"make_optimizer must return a SlaClipDPOptimizer, got {type(opt).__name__}")
    return model, opt


def _step(make_optimizer, make_model, x, y, loss_fn) -> tuple[nn.Module, SlaClipDPOptimizer]:
    """One logical step on a fresh model; the learning rate does not matter (the release is read from grads)."""
    model, opt = _build(make_optimizer, make_model)
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
    return model, opt


def _norms(model: nn.Module) -> torch.Tensor:
    """Per-sample gradient norms of the last backward pass (the norms the optimizer clips)."""
    per = [p.grad_sample.reshape(len(p.grad_sample), -1).norm(2, dim=-1) for p in model.parameters()]
    return torch.stack(per, 1).norm(2, dim=1).detach()


def _released_slots(optimizer: SlaClipDPOptimizer, clip: float) -> torch.Tensor:
    """The noised slot sum of the last release: :func:`slack_indicator` undone."""
    return optimizer.slack_indicator.double() * (clip / math.sqrt(optimizer.num_slots) * optimizer.expected_batch_size)


def released_sum(optimizer: SlaClipDPOptimizer, clip: float) -> torch.Tensor:
    """The un-normalised release ``[sum_i clip(g_i) + noise ; sum_i v_i + noise]`` of the last step.

    Opacus divides the gradient release by ``expected_batch_size * accumulated_iterations`` (mean reduction) and
    SlaClip divides the slots by ``(C_t / sqrt(K)) * expected_batch_size``; this undoes both.  ``clip`` is the
    threshold that step used (``optimizer.clip_history[-1]``).
    """
    if optimizer.slack_indicator is None:
        raise ValueError("optimizer has not released anything yet: call step() first")
    scale = optimizer.expected_batch_size if optimizer.loss_reduction == "mean" else 1
    grads = torch.cat([p.grad.reshape(-1) for p in optimizer.params]) * scale
    return torch.cat([grads.double(), _released_slots(optimizer, clip)])


def _default_loss(outputs, y):
    return nn.functional.cross_entropy(outputs, y)


def audit_sensitivity(
    make_optimizer: MakeOptimizer,
    make_model: Callable[[], nn.Module],
    x: torch.Tensor,
    y: torch.Tensor,
    loss_fn=_default_loss,
    n_neighbours: int = 8,
    tol: float = 1e-4,
) -> dict:
    """Removing one sample changes the release by at most ``C_t``: ``max_i ||S(D) - S(D \\ i)|| / C_t <= 1 + tol``.

    ``n_neighbours`` samples are removed one at a time: the ``n_neighbours // 2`` with the smallest gradient norms
    (the most slack: slots scaled by ``s`` push a sample of norm ``n`` past ``C`` only if ``n < (s^2 - 1) C``, e.g.
    ``n < 0.69 C`` for ``s = 1.3``, since ``||v||^2`` reaches ``C (C - n)``) and the rest evenly spaced over the
    batch.  Both releases draw the same noise (the factory seeds the generator alike), which cancels in the
    difference: what is left is the removed sample's contribution, clipped gradient and slack slots together (so
    this audit cannot see the noise: :func:`audit_release_noise` does).  Only samples *inside* the threshold carry
    slack, so the audit has power against a mis-scaled slot encoding only if some removed samples have ``||g_i|| < C_t``
    (reported as ``removed_inside_threshold``).
    """
    _check_factories(make_optimizer, make_model, x, y)
    if isinstance(n_neighbours, bool) or not isinstance(n_neighbours, int) or n_neighbours < 1:
        raise ValueError(f"n_neighbours must be an integer >= 1, got {n_neighbours!r}")
    model, full = _step(make_optimizer, make_model, x, y, loss_fn)
    clip = full.clip_history[-1]
    s_full = released_sum(full, clip)
    norms = _norms(model)
    ratios, inside = [], 0
    n_pick = min(n_neighbours, len(x))
    smallest = torch.argsort(norms)[: n_pick // 2].tolist()
    spaced = [i for i in np.linspace(0, len(x) - 1, len(x)).round().astype(int).tolist() if i not in smallest]
    picks = smallest + [spaced[j] for j in np.linspace(0, len(spaced) - 1, n_pick - len(smallest)).round().astype(int)]
    for i in picks:
        keep = torch.arange(len(x)) != int(i)
        _, nb = _step(make_optimizer, make_model, x[keep], y[keep], loss_fn)
        ratios.append(float((s_full - released_sum(nb, clip)).norm()) / clip)
        inside += int(norms[i] < clip)
    worst = max(ratios)
    return {
        "max_change_over_clip": worst,
        "ratios": ratios,
        "clip": clip,
        "removed_inside_threshold": inside,
        "passed": worst <= 1.0 + tol,
    }


def audit_slot_noise(
    make_optimizer: MakeOptimizer,
    make_model: Callable[[], nn.Module],
    x: torch.Tensor,
    y: torch.Tensor,
    loss_fn=_default_loss,
    n_releases: int = 400,
    level: float = 1e-3,
) -> dict:
    """Slot noise sd equals ``sigma C_t``: a two-sided chi-square test of the pooled slot-noise variance.

    The same batch is released ``n_releases`` times by one optimizer (its generator advances, so every release
    draws fresh noise, and its controller keeps moving the threshold); before each release the un-noised slack
    sum is recomputed from the per-sample gradient norms.  The noise of every slot, divided by the threshold
    ``C_t`` of its release, should have variance ``sigma^2``: ``passed`` if ``sigma^2`` lies inside the
    ``1 - level`` confidence interval of the pooled variance.
    """
    from scipy.stats import chi2

    _check_factories(make_optimizer, make_model, x, y)
    if isinstance(n_releases, bool) or not isinstance(n_releases, int) or n_releases < 10:
        raise ValueError(f"n_releases must be an integer >= 10, got {n_releases!r}")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    model, opt = _build(make_optimizer, make_model)
    noise = []
    for _ in range(n_releases):
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        clip = opt.current_clip
        clean = _encode(_norms(model), clip, opt.num_slots).sum(0)
        opt.step()
        noise.append((_released_slots(opt, clip) - clean.double()) / clip)  # in units of this release's threshold
    e = torch.stack(noise)  # (n_releases, K)
    dof = e.numel()
    var = float((e**2).sum()) / dof  # mean known (zero): chi-square with dof degrees of freedom
    lo, hi = var * dof / chi2.ppf(1 - level / 2, dof), var * dof / chi2.ppf(level / 2, dof)
    target = opt.noise_multiplier**2
    return {
        "sd_over_clip": math.sqrt(var),
        "noise_multiplier": opt.noise_multiplier,
        "sd_interval": [math.sqrt(lo), math.sqrt(hi)],
        "passed": lo <= target <= hi,
    }


def _clean_release(model: nn.Module, optimizer: SlaClipDPOptimizer, clip: float) -> torch.Tensor:
    """The un-noised release of the current backward pass: ``[sum_i clip(g_i) ; sum_i v_i]`` in float64, with the
    clip factor ``min(1, C_t / (n_i + 1e-6))`` of Opacus's flat clipping (the parameters in the optimizer's order)."""
    norms = _norms(model)
    factor = (clip / (norms + 1e-6)).clamp(max=1.0).double()
    grads = [torch.einsum("i,i...", factor, p.grad_sample.double()).reshape(-1) for p in optimizer.params]
    return torch.cat([*grads, _encode(norms.double(), clip, optimizer.num_slots).sum(0)])


def audit_release_noise(
    make_optimizer: MakeOptimizer,
    make_model: Callable[[], nn.Module],
    x: torch.Tensor,
    y: torch.Tensor,
    loss_fn=_default_loss,
    n_releases: int = 200,
    level: float = 1e-3,
) -> dict:
    r"""Every released coordinate carries Gaussian noise of sd ``sigma C_t``, centred on the clean release.

    The same batch is released ``n_releases`` times by one optimizer (fresh noise each time; its controller keeps
    moving ``C_t`` and its learning rate the model); before each release the clean clipped gradient sum and clean
    slack sum are recomputed from the per-sample gradients.  ``z[r, j] = (S_j - clean_j) / (sigma C_t)`` must be
    ``N(0, 1)`` for every coordinate ``j`` of ``[gradients (d) ; slots (K)]``.  Four tests, each at ``level``:

    * per coordinate, ``sum_r z[r, j]^2 ~ chi2(n_releases)`` (two-sided) and ``mean_r z[r, j] sqrt(n) ~ N(0, 1)``,
      Bonferroni over the ``2 (d + K)`` tests (catches one coordinate released without noise, or with a bias);
    * per block (gradients, slots), the pooled variance in its two-sided chi-square interval and the pooled mean
      in its z interval (catches a noise sd off by a few percent on a whole block).

    and three independence tests (the marginal tests above cannot see noise that is re-used: slot noise copied from
    gradient-noise draws, one draw shared by several coordinates, or one draw released twice, leaves every coordinate
    exactly ``N(0, 1)``):

    * slots against gradients: the largest ``|corr(z[:, slot], z[:, coordinate])|`` over the ``K d`` pairs, as a
      t statistic with ``n - 2`` degrees of freedom, Bonferroni over the pairs;
    * every pair of coordinates (inside a block too): the largest ``|corr|`` over the ``(d + K)(d + K - 1) / 2``
      pairs, the same t statistic, Bonferroni over those pairs (bound 0.451 at n = 200, 9,614 coordinates; catches
      the K slots sharing one draw, a bias's or a layer's noise copied from another tensor's draws);
    * across releases: the lag-1 products ``z[r, j] z[r+1, j]`` summed over releases and coordinates, per block
      (gradients, slots), ``/ sqrt((n - 1) m)`` ~ ``N(0, 1)`` (the products are uncorrelated with unit variance),
      Bonferroni over the two blocks.  (A per-coordinate lag test needs tail probabilities ~1e-8 of a sum of ~60
      products of normals, whose tails are heavier than the normal's: it raised false alarms, so it is not used.)

    ``passed`` if no test rejects.  Returns the pooled sd / (sigma C_t) per block, the number of coordinates flagged,
    the smallest per-coordinate p-value and ``independence`` (its statistics, bounds and verdict).  Detection limits
    (measured by the referee at n = 200, level 1e-3): a noise shortfall on a whole block from ~1% (gradients) to
    ~10% (slots); on 10 coordinates ~20% (10% is not seen); a correlation of one slot with one gradient coordinate
    from ~0.4 (0.65 at 60 releases); of any two coordinates from ~0.45 (so an exact copy of one draw on two
    coordinates is caught, a correlation of 0.3 or a weak one spread over many pairs is not); a lag-1 correlation
    common to a block from ~0.003 (gradients) / ~0.1 (slots).
    """
    from scipy.stats import chi2, norm

    _check_factories(make_optimizer, make_model, x, y)
    if isinstance(n_releases, bool) or not isinstance(n_releases, int) or n_releases < 10:
        raise ValueError(f"n_releases must be an integer >= 10, got {n_releases!r}")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    model, opt = _build(make_optimizer, make_model)
    z = []
    for _ in range(n_releases):
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        clip = opt.current_clip
        clean = _clean_release(model, opt, clip)
        opt.step()
        z.append((released_sum(opt, clip) - clean) / (opt.noise_multiplier * clip))
    z = torch.stack(z).numpy()  # (n_releases, d + K)
    n, dim = z.shape
    k = opt.num_slots
    ss, mean = (z**2).sum(0), z.mean(0)
    p_var = 2 * np.minimum(chi2.cdf(ss, n), chi2.sf(ss, n))
    p_mean = 2 * norm.sf(np.abs(mean) * math.sqrt(n))
    per_level = level / (2 * dim)
    flagged = (p_var < per_level) | (p_mean < per_level)
    blocks = {}
    for name, part in (("gradients", z[:, : dim - k]), ("slots", z[:, dim - k :])):
        m = part.size
        var = float((part**2).sum()) / m  # mean known (zero): chi-square with m degrees of freedom
        lo, hi = m / chi2.ppf(1 - level / 2, m), m / chi2.ppf(level / 2, m)  # interval of var / true var
        z_mean = float(part.mean()) * math.sqrt(m)
        blocks[name] = {
            "coordinates": int(part.shape[1]),
            "sd_over_sigma_clip": math.sqrt(var),
            "var_interval": [var * lo, var * hi],
            "mean_z": z_mean,
            "flagged": int(flagged[: dim - k].sum() if name == "gradients" else flagged[dim - k :].sum()),
            "passed": bool(var * lo <= 1.0 <= var * hi and abs(z_mean) <= norm.ppf(1 - level / 2)),
        }
    independence = _independence(z, k, level)
    return {
        "blocks": blocks,
        "independence": independence,
        "releases": n,
        "coordinates": dim,
        "flagged": int(flagged.sum()),
        "min_p": float(min(p_var.min(), p_mean.min())),
        "noise_multiplier": opt.noise_multiplier,
        "passed": bool(not flagged.any() and all(b["passed"] for b in blocks.values()) and independence["passed"]),
    }


def _independence(z: np.ndarray, k: int, level: float) -> dict:
    """Slots against gradient coordinates (max |corr|, Bonferroni over the ``K d`` pairs), every pair of released
    coordinates (max |corr| over the ``D (D - 1) / 2`` pairs, ``D = d + K``, Bonferroni: catches noise shared inside a
    block - slots sharing one draw, a bias or a layer whose noise is a copy of another tensor's draws; referee 2, issue
    46) and lag-1 across releases (pooled per block, Bonferroni over the two blocks) of the standardised residuals
    ``z`` (releases x (d + K)).  Each of the three tests at ``level``; a copy shows as |corr| = 1.  Untested: weak
    correlations spread over many pairs, and lags other than 1."""
    from scipy.stats import norm
    from scipy.stats import t as student_t

    n, dim = z.shape
    c = z - z.mean(0)
    c = c / np.maximum(np.sqrt((c**2).sum(0)), 1e-300)
    corr = c[:, dim - k :].T @ c[:, : dim - k]  # (K, d) sample correlations
    pairs = max(corr.size, 1)
    r_max = float(np.abs(corr).max()) if corr.size else 0.0
    t_bound = float(student_t.ppf(1 - level / (2 * pairs), n - 2))
    r_bound = t_bound / math.sqrt(n - 2 + t_bound**2)  # |r| above this rejects
    all_max, all_bound = _max_pair_corr(c, level)
    prod = z[1:] * z[:-1]  # noise sd known (1): mean 0, variance 1, uncorrelated under independence
    lag_z = {
        name: float(part.sum() / math.sqrt(part.size)) if part.size else 0.0
        for name, part in (("gradients", prod[:, : dim - k]), ("slots", prod[:, dim - k :]))
    }
    lag_bound = float(norm.ppf(1 - level / 4))  # two-sided, Bonferroni over the two blocks
    return {
        "max_abs_corr_slot_gradient": r_max,
        "corr_bound": r_bound,
        "max_abs_corr_all_pairs": all_max,
        "all_pairs_bound": all_bound,
        "lag1_z": lag_z,
        "pooled_lag1_z": max(lag_z.values(), key=abs),
        "lag1_bound": lag_bound,
        "passed": bool(r_max <= r_bound and all_max <= all_bound and all(abs(v) <= lag_bound for v in lag_z.values())),
    }


def _max_pair_corr(c: np.ndarray, level: float, block: int = 2048) -> tuple[float, float]:
    """Largest |sample correlation| over every pair of columns of ``c`` (centred, unit-norm columns; releases x D) and
    the Bonferroni bound at ``level`` over the ``D (D - 1) / 2`` pairs (t test of r with n - 2 degrees of freedom).
    Blocked float32 Gram products: under a second for the full preset's 200 x 9,614 residuals."""
    from scipy.stats import t as student_t

    n, dim = c.shape
    if dim < 2 or n < 3:
        return 0.0, 1.0
    c32 = c.astype(np.float32)
    best = 0.0
    for i in range(0, dim, block):
        b = min(block, dim - i)
        g = c32[:, i : i + b].T @ c32[:, i:]  # rows i..i+b against columns i..D
        g[:, :b][np.tril_indices(b)] = 0.0  # the diagonal and the pairs counted in the other order
        best = max(best, float(np.abs(g).max()))
    pairs = dim * (dim - 1) / 2
    t_bound = float(student_t.isf(level / (2 * pairs), n - 2))
    return best, t_bound / math.sqrt(n - 2 + t_bound**2)


def audit_controller_inputs(
    make_optimizer: MakeOptimizer,
    make_model: Callable[[], nn.Module],
    x: torch.Tensor,
    y: torch.Tensor,
    loss_fn=_default_loss,
) -> dict:
    """Neither the controller's input nor any tensor the optimizer keeps after the step is the un-noised slack.

    The controller is replaced by a recorder; the clean slack sum and clean indicator are recomputed from the
    per-sample norms.  ``passed`` if the fed ``s_hat`` differs from the clean indicator and no tensor attribute of
    the optimizer (searched one level deep, lists and dicts included) equals the clean sum or indicator.
    """
    _check_factories(make_optimizer, make_model, x, y)
    fed: list[torch.Tensor] = []

    def recorder(clip, s_hat):
        fed.append(torch.as_tensor(s_hat).detach().clone())
        return clip

    model, opt = _build(make_optimizer, make_model)
    opt.controller = recorder
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    clip = opt.current_clip
    clean_sum = _encode(_norms(model), clip, opt.num_slots).sum(0)
    clean_ind = slack_indicator(clean_sum, clip, opt.num_slots, opt.expected_batch_size * opt.accumulated_iterations)
    opt.step()

    def same(t):
        return (
            isinstance(t, torch.Tensor)
            and t.shape == clean_sum.shape
            and (torch.allclose(t.double(), clean_sum.double()) or torch.allclose(t.double(), clean_ind.double()))
        )

    leaks = []
    for name, value in vars(opt).items():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        if any(same(v) for v in items):
            leaks.append(name)
    fed_clean = bool(fed) and same(fed[-1])
    return {
        "fed": len(fed),
        "fed_clean": fed_clean,
        "leaks": leaks,
        "passed": bool(fed) and not fed_clean and not leaks,
    }
