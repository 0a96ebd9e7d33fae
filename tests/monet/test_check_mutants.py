"""Every check can fail (evidence v3): each check's judge fails when the code it guards is broken on purpose,
measured on one tiny seed (same code path as the presets)."""

import math
from dataclasses import replace

import pytest
import torch

from icml26.core import DOES_NOT_HOLD, HOLDS, Report
from icml26.core.testing import mutant
from icml26.monet import baselines, cms, model
from icml26.monet.claims import _add_checks
from icml26.monet.experiment import QUICK, measure

# the arms the checks read (joint for OGM-GE's modulation and the per-batch budget, MoNet for the CMS counts)
TINY = replace(QUICK, s1_sizes=(128, 64, 128), epochs=2, probe_every=2, arms=("joint", "monet", "ogm_ge"), ablations=())
SEEDS = [0, 1, 2]
_fusion_features = model.MoNet.fusion_features
_update_memory = model.MoNet.update_memory
_adaptive = model.adaptive_weights
_maybe_step = cms.ContinuumMemoryMLP.maybe_step
_joint_step = baselines.Strategy.step


def _leaky(self, inputs, fast=None):  # the break: encoder_fusion_grad = 1 whatever was configured
    lam, self.encoder_fusion_grad = self.encoder_fusion_grad, 1.0
    try:
        return _fusion_features(self, inputs, fast)
    finally:
        self.encoder_fusion_grad = lam


def _late_leaky(self, inputs, fast=None):  # the v3b referee's break: the leak starts only at the second step
    if self.step_count < 2:
        return _fusion_features(self, inputs, fast)
    return _leaky(self, inputs, fast)


def _leak_from_step_9(self, inputs, fast=None):  # the third referee's break (a): clean for 8 steps, then leaky
    if self.step_count < 9:
        return _fusion_features(self, inputs, fast)
    return _leaky(self, inputs, fast)


def _leak_on_slow_steps(self, inputs, fast=None):  # the third referee's break (b): leaky only when the slowest
    if self.step_count % max(self.cms_periods) != 0:  # CMS block (period 16) updates
        return _fusion_features(self, inputs, fast)
    return _leaky(self, inputs, fast)


@torch.no_grad()
def _copy_memory(self):  # the memory jumps to the fast encoders (tau ignored)
    for m in self.modalities:
        for pb, p in zip(self.ema_encoders[m].parameters(), self.encoders[m].parameters()):
            pb.copy_(p)


def _reads_fast(self, inputs, fast=None):  # the fused path reads the fast encoders instead of the stable memory
    parts = []
    for i, m in enumerate(self.modalities):
        z = self.encoders[m](inputs[m]).detach()
        parts.append(self.weights[i] * self.norms[m](z))
    return torch.cat(parts, 1)


def _every_step(self, step):  # CMS blocks step every time, whatever their period
    return _maybe_step(self, math.lcm(*self.periods))


def _double_step(self, model, optimizer, inputs, y, epoch):  # one arm takes two gradients per batch
    _joint_step(self, model, optimizer, inputs, y, epoch)
    return _joint_step(self, model, optimizer, inputs, y, epoch)


MUTANTS = {
    "decoupled_streams": ("icml26.monet.model.MoNet.fusion_features", _leaky),
    "stable_memory_exact": ("icml26.monet.model.MoNet.update_memory", _copy_memory),
    "coordination_weights_sum": ("icml26.monet.model.adaptive_weights", lambda s, beta: 1.1 * _adaptive(s, beta)),
    "fused_path_reads_memory": ("icml26.monet.model.MoNet.fusion_features", _reads_fast),
    # the adaptive weights switched off (all ones): the sum is still M, the formula is not
    "coordination_weights_formula": ("icml26.monet.model.adaptive_weights", lambda s, beta: torch.ones_like(s)),
    # OGM's self-division bug (BalanceMM): rho = s_m / s_m = 1, so nothing is ever modulated
    "ogm_modulates_gradients": (
        "icml26.monet.baselines.ogm_coefficients",
        lambda scores, alpha: {m: 1.0 for m in scores},
    ),
    "cms_periods_respected": ("icml26.monet.cms.ContinuumMemoryMLP.maybe_step", _every_step),
    "equal_encoder_updates": ("icml26.monet.baselines.Strategy.step", _double_step),
}


def _checks():
    """The judge's checks (``claims._add_checks``, the code the full judge runs) on three tiny seeds."""
    report = Report(seeds=SEEDS)
    _add_checks(TINY, [measure(TINY, s) for s in SEEDS], report)
    return {c.id: c for c in report.claims if c.kind == "check"}


def test_every_check_has_a_mutant_and_holds_unbroken():
    checks = _checks()
    assert set(checks) == set(MUTANTS)
    assert all(c.verdict == HOLDS for c in checks.values()), {k: c.verdict for k, c in checks.items()}


@pytest.mark.parametrize("check", sorted(MUTANTS))
def test_the_mutant_fails_its_check(check):
    target, broken = MUTANTS[check]
    with mutant(target, broken):
        got = _checks()
    assert got[check].verdict == DOES_NOT_HOLD, (check, got[check].method)


def test_a_leak_that_starts_after_the_first_step_fails_the_decoupling_check():
    with mutant("icml26.monet.model.MoNet.fusion_features", _late_leaky):
        got = _checks()
    assert got["decoupled_streams"].verdict == DOES_NOT_HOLD, got["decoupled_streams"].method


@pytest.mark.parametrize("broken", [_leak_from_step_9, _leak_on_slow_steps], ids=["from_step_9", "slow_block_steps"])
def test_a_leak_late_or_only_on_slow_block_steps_fails_the_decoupling_check(broken):
    """The third referee's leaks, which an 8-step window missed: the check follows two full cycles of the slowest
    CMS block with the run's optimizer, so both show."""
    with mutant("icml26.monet.model.MoNet.fusion_features", broken):
        got = _checks()
    assert got["decoupled_streams"].verdict == DOES_NOT_HOLD, got["decoupled_streams"].method
