"""Every check can fail (evidence v3): each check's judge fails when the code it guards is broken on purpose.

Measured on one seed of a shrunk preset (digits, logistic regression, one epoch, vanilla and SlaClip at one C0; the
four privacy audits on the digits MLP with few releases).  The issue's privacy defect: removing or halving the noise
on the gradient coordinates passed the three v2 audits and A1 (the noise cancels in the sensitivity audit, the slot
audit reads only the K slots); ``privacy-release_noise`` reads every released coordinate and A1 relies on it."""

import math
from dataclasses import replace

import pytest

pytest.importorskip("opacus")

from opacus.optimizers.optimizer import DPOptimizer, _generate_noise  # noqa: E402

from icml26.core import DOES_NOT_HOLD, HOLDS, judge_records  # noqa: E402
from icml26.core.testing import mutant  # noqa: E402
from icml26.slaclip import _slack, optimizer  # noqa: E402
from icml26.slaclip import experiment as E  # noqa: E402

SEED = 0  # a dev seed: checks are guarantees of the code, nothing here is judged as a finding
CFG = replace(
    E.QUICK,
    c0_grid=(1.0,),
    grid_seeds=(SEED,),
    digits_methods=("vanilla", "slaclip"),
    digits_epochs=1,
    mlp_methods=(),
    synthetic_methods=(),
    vanish_methods=(),
    audit_releases=40,
    release_audit_releases=40,
    audit_neighbours=4,
)
CHECKS = ("A1", "privacy-release_noise", "privacy-sensitivity", "privacy-slot_noise", "privacy-controller_inputs")
ADD_NOISE = optimizer.SlaClipDPOptimizer.add_noise
ENCODE = _slack._encode


def _checks():
    report = judge_records(E.EXPERIMENT, CFG, [E.measure(CFG, SEED)], [SEED])
    return {c.id: c for c in report.claims if c.kind == "check"}


def _noise_scaled(grad_scale: float, slot_scale: float):
    """SlaClip's add_noise with the gradient noise and the slot noise scaled (0: removed, 0.5: halved)."""

    def add_noise(self):
        sigma = self.noise_multiplier
        self.noise_multiplier = sigma * grad_scale
        try:
            DPOptimizer.add_noise(self)  # Opacus's gradient noise, at grad_scale x sigma
        finally:
            self.noise_multiplier = sigma
        clip = float(self.max_grad_norm)
        noise = _generate_noise(
            std=sigma * clip * slot_scale, reference=self._slack_sum, generator=self.generator, secure_mode=False
        )
        released, self._slack_sum, self._accumulation_clip = self._slack_sum + noise, None, None
        batch = self.expected_batch_size * self.accumulated_iterations
        self.slack_indicator = released / (clip / math.sqrt(self.num_slots) * batch)
        self._released = True

    return add_noise


def _slots_copy_gradient_noise(self):
    """Slot noise = a copy of the first K gradient-noise draws: every coordinate is still N(0, sigma^2 C^2)
    marginally, but slots minus those gradient coordinates is noise-free (epsilon infinite; referee, issue 46)."""
    DPOptimizer.add_noise(self)
    p = self.params[0]
    k = self.num_slots
    noise = (p.grad.reshape(-1)[:k] - p.summed_grad.reshape(-1)[:k]).to(self._slack_sum.dtype)
    released, self._slack_sum, self._accumulation_clip = self._slack_sum + noise, None, None
    batch = self.expected_batch_size * self.accumulated_iterations
    self.slack_indicator = released / (float(self.max_grad_norm) / math.sqrt(self.num_slots) * batch)
    self._released = True


def _release_slots(self, noise):
    released, self._slack_sum, self._accumulation_clip = self._slack_sum + noise, None, None
    batch = self.expected_batch_size * self.accumulated_iterations
    self.slack_indicator = released / (float(self.max_grad_norm) / math.sqrt(self.num_slots) * batch)
    self._released = True


def _slot_draw(self, reference):
    std = self.noise_multiplier * float(self.max_grad_norm)
    return _generate_noise(std=std, reference=reference, generator=self.generator, secure_mode=False)


def _slots_share_one_draw(self):
    """One scalar draw broadcast to all K slots: each slot is N(0, sigma^2 C^2), but slot k minus slot k+1 is
    noise-free, so the slot histogram is released exactly (referee 2, issue 46)."""
    DPOptimizer.add_noise(self)
    _release_slots(self, _slot_draw(self, self._slack_sum[:1]).expand_as(self._slack_sum).clone())


def _copy_grad_noise(src: int, dst: int, n: int | None):
    """Gradient noise of parameter ``dst`` (its first ``n`` coordinates, or all) replaced by a copy of parameter
    ``src``'s first draws: marginals exact, one direction noise-free (referee 2, issue 46)."""

    def add_noise(self):
        DPOptimizer.add_noise(self)
        ps = self.params
        if len(ps) < 4:  # the logistic-regression training runs (2 tensors): left unbroken, the audit's MLP is not
            return _release_slots(self, _slot_draw(self, self._slack_sum))
        noise = (ps[src].grad - ps[src].summed_grad).reshape(-1)
        p = ps[dst]
        m = p.numel() if n is None else n
        g = p.grad.reshape(-1).clone()
        g[:m] = p.summed_grad.reshape(-1)[:m] + noise[:m]
        p.grad = g.reshape(p.grad.shape)
        _release_slots(self, _slot_draw(self, self._slack_sum))

    return add_noise


def _noise_reused(self):
    """Every second release draws the same noise as the one before (the generator rewound)."""
    state = getattr(self, "_mutant_state", None)
    if state is None:
        self._mutant_state = self.generator.get_state()
    else:
        self.generator.set_state(state)
        self._mutant_state = None
    ADD_NOISE(self)


def _keeps_raw_slack(self):  # a copy of the un-noised slack sum stays on the optimizer after the release
    self.raw_slack = self._slack_sum.clone()
    ADD_NOISE(self)


def _scaled_slots(norms, clip, k):  # slots x 1.3: one sample moves the release by up to ~1.05-1.3 C
    return 1.3 * ENCODE(norms, clip, k)


def _books_other_sigma(self, hook):  # the accountant books twice the noise multiplier released: history differs
    def booked(optim):
        sigma = optim.noise_multiplier
        optim.noise_multiplier = 2 * sigma
        try:
            hook(optim)
        finally:
            optim.noise_multiplier = sigma

    return DPOptimizer.attach_step_hook(self, booked)


ADD = "icml26.slaclip.optimizer.SlaClipDPOptimizer.add_noise"
MUTANTS = {  # check -> [(target, replacement, what)]
    "privacy-release_noise": [
        (ADD, _noise_scaled(0.0, 0.0), "noise removed"),
        (ADD, _noise_scaled(0.5, 1.0), "noise halved on the gradient coordinates"),
        (ADD, _noise_scaled(0.0, 1.0), "noise removed on the gradient coordinates"),
        (ADD, _noise_scaled(1.0, 0.0), "noise removed on the slots"),
        (ADD, _slots_copy_gradient_noise, "slot noise copied from the first K gradient-noise draws"),
        (ADD, _noise_reused, "noise re-used on every second release"),
        (ADD, _slots_share_one_draw, "one draw shared by all K slots"),
        (ADD, _copy_grad_noise(0, -1, None), "last bias's noise copied from the first weight's draws"),
        (ADD, _copy_grad_noise(0, 2, None), "second layer's weight noise copied from the first layer's"),
    ],
    "privacy-sensitivity": [("icml26.slaclip.optimizer._encode", _scaled_slots, "slots scaled by 1.3")],
    "privacy-slot_noise": [(ADD, _noise_scaled(1.0, 0.0), "noise removed on the slots")],
    "privacy-controller_inputs": [(ADD, _keeps_raw_slack, "raw slack kept on the optimizer")],
    "A1": [
        (ADD, _noise_scaled(0.5, 1.0), "noise halved on the gradient coordinates"),
        (ADD, _noise_scaled(0.0, 1.0), "noise removed on the gradient coordinates"),
        (
            "icml26.slaclip.optimizer.SlaClipDPOptimizer.attach_step_hook",
            _books_other_sigma,
            "accountant books 2 sigma",
        ),
        (ADD, _slots_copy_gradient_noise, "slot noise copied from the first K gradient-noise draws"),
        (ADD, _slots_share_one_draw, "one draw shared by all K slots"),
        (ADD, _copy_grad_noise(0, -1, None), "last bias's noise copied from the first weight's draws"),
        (ADD, _copy_grad_noise(0, 2, None), "second layer's weight noise copied from the first layer's"),
    ],
}
CASES = [(check, *m) for check, ms in MUTANTS.items() for m in ms]


def test_every_check_has_a_mutant_and_holds_unbroken():
    checks = _checks()
    assert set(checks) == set(CHECKS) == set(MUTANTS)
    assert all(checks[k].verdict == HOLDS for k in CHECKS), {k: checks[k].test for k in CHECKS}


@pytest.mark.parametrize("check, target, broken, what", CASES, ids=[f"{c[0]}: {c[3]}" for c in CASES])
def test_each_check_fails_under_a_mutant_of_the_code_it_guards(check, target, broken, what):
    with mutant(target, broken):
        checks = _checks()
    assert checks[check].verdict == DOES_NOT_HOLD, (what, checks[check].method, checks[check].test)
    assert optimizer.SlaClipDPOptimizer.add_noise is ADD_NOISE and optimizer._encode is ENCODE


def test_release_audit_flags_every_gradient_coordinate_when_their_noise_is_halved():
    """Power at the preset's sizes: with the gradient noise halved every gradient coordinate is flagged at the full
    preset's release count, and the pooled gradient block fails at the quick preset's (60 releases)."""
    for releases, every in ((E.FULL.release_audit_releases, True), (E.QUICK.release_audit_releases, False)):
        cfg = replace(CFG, release_audit_releases=releases)
        with mutant(ADD, _noise_scaled(0.5, 1.0)):
            audit = E._audits(cfg, SEED, 1.2)["release_noise"]
        grads = audit["blocks"]["gradients"]
        assert not grads["passed"] and abs(grads["sd_over_sigma_clip"] - 0.5) < 0.01
        if every:
            assert grads["flagged"] == grads["coordinates"]
        assert audit["blocks"]["slots"]["passed"]  # the slots kept their noise
