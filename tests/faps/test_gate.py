import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.faps import (
    DDIMScheduler,
    FaPSTrainer,
    FrequencyGate,
    HighFrequencyGate,
    RandomPatchGate,
    TinyDiT,
    bernoulli_log_prob,
    bernoulli_nonempty,
    gumbel_topk,
    num_keep,
    plackett_luce_log_prob,
)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 20), data=st.data(), seed=st.integers(0, 10_000))
def test_gumbel_topk_returns_k_distinct_indices(n, data, seed):
    k = data.draw(st.integers(1, n))
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(4, n, generator=g) * 3
    idx, logp = gumbel_topk(logits, k, g)
    assert idx.shape == (4, k)
    assert all(len(set(row.tolist())) == k for row in idx)
    assert torch.all(logp <= 1e-6)


def test_k1_inclusion_frequencies_match_softmax():
    logits = torch.tensor([[1.0, 0.0, -1.0, 2.0]])
    g = torch.Generator().manual_seed(0)
    draws = 20000
    idx, _ = gumbel_topk(logits.expand(draws, -1), 1, g)
    freq = torch.bincount(idx[:, 0], minlength=4).float() / draws
    p = torch.softmax(logits[0], 0)
    assert torch.all((freq - p).abs() < 4 * torch.sqrt(p * (1 - p) / draws))


def _pl_inclusion(logits: torch.Tensor, k: int) -> torch.Tensor:
    w = logits.exp()
    incl = torch.zeros(len(w), dtype=torch.float64)
    for seq in itertools.permutations(range(len(w)), k):
        prob, rest = 1.0, float(w.sum())
        for s in seq:
            prob *= float(w[s]) / rest
            rest -= float(w[s])
        for s in seq:
            incl[s] += prob
    return incl


def test_k2_inclusion_frequencies_match_plackett_luce():
    logits = torch.tensor([0.5, -0.5, 1.5, 0.0])
    draws = 20000
    idx, _ = gumbel_topk(logits.expand(draws, -1), 2, torch.Generator().manual_seed(1))
    freq = torch.zeros(4).index_add_(0, idx.flatten(), torch.ones(idx.numel())) / draws
    p = _pl_inclusion(logits.double(), 2).float()
    assert torch.allclose(p.sum(), torch.tensor(2.0))
    assert torch.all((freq - p).abs() < 4 * torch.sqrt(p * (1 - p) / draws) + 1e-3)


def test_plackett_luce_log_prob_equals_manual_computation():
    logits = torch.tensor([[0.3, -1.2, 2.0, 0.7, 0.0]], requires_grad=True)
    order = torch.tensor([[2, 0, 4, 1, 3]])
    lp = plackett_luce_log_prob(logits, order, 3)
    l = logits[0].detach().tolist()
    manual, remaining = 0.0, [0, 1, 2, 3, 4]
    for s in (2, 0, 4):
        manual += l[s] - math.log(sum(math.exp(l[j]) for j in remaining))
        remaining.remove(s)
    assert lp.item() == pytest.approx(manual, abs=1e-6)
    lp.sum().backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    # the full ordering sums to one over all permutations
    all_lp = [plackett_luce_log_prob(logits.detach(), torch.tensor([perm])).exp().item()
              for perm in itertools.permutations(range(5))]  # fmt: skip
    assert sum(all_lp) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan")])
def test_keep_ratio_outside_unit_interval_raises(bad):
    with pytest.raises(ValueError, match="keep_ratio"):
        FrequencyGate(keep_ratio=bad)
    with pytest.raises(ValueError, match="keep_ratio"):
        RandomPatchGate(keep_ratio=bad)
    with pytest.raises(ValueError, match="keep_ratio"):
        HighFrequencyGate(keep_ratio=bad)
    with pytest.raises(ValueError, match="keep_ratio"):
        num_keep(bad, 16)


def test_keep_ratio_type_and_budget():
    with pytest.raises(TypeError, match="keep_ratio"):
        FrequencyGate(keep_ratio="half")
    assert num_keep(1.0, 64) == 64 and num_keep(0.5, 64) == 32 and num_keep(0.3, 10) == 3 and num_keep(0.01, 10) == 1


def _images_with_one_textured_patch(b: int, g: torch.Generator):
    """4x4 images of smooth constants with one 2x2 checkerboard patch at a random position (N = 4)."""
    x = torch.rand(b, 1, 1, 1, generator=g).expand(b, 1, 4, 4).clone()
    pos = torch.randint(0, 4, (b,), generator=g)
    board = torch.tensor([[1.0, -1.0], [-1.0, 1.0]])
    for i, p in enumerate(pos.tolist()):
        r, c = divmod(p, 2)
        x[i, 0, 2 * r : 2 * r + 2, 2 * c : 2 * c + 2] += board
    return x, pos


def test_reinforce_bandit_learns_to_pick_the_high_frequency_patch():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    gate = FrequencyGate(patch_size=2, n_bands=4, hidden=32, keep_ratio=0.25)  # k = 1 of N = 4
    model = TinyDiT(img_size=4, patch_size=2, width=8, depth=1, heads=2)
    state = {}

    def reward(per_patch, keep_idx, t):  # 1 if the kept patch is the textured one
        return (keep_idx[:, 0] == state["pos"]).float()

    tr = FaPSTrainer(model, DDIMScheduler(100), gate, total_steps=10**6, reward=reward, policy_lr=1e-2,
                     full_finetune_frac=0.0, generator=g)  # fmt: skip
    for _ in range(200):
        x, state["pos"] = _images_with_one_textured_patch(32, g)
        tr.train_step(x)
    x, pos = _images_with_one_textured_patch(256, g)
    with torch.no_grad():
        p = torch.softmax(gate(x, torch.randint(0, 100, (256,), generator=g), 0.5), -1)
    assert p.gather(1, pos[:, None]).mean() > 0.9


def test_trainer_updates_gate_and_finetunes_on_all_patches():
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    gate = FrequencyGate(patch_size=2, keep_ratio=0.5)
    model = TinyDiT(img_size=8, patch_size=2, width=16, depth=1, heads=2)
    tr = FaPSTrainer(model, DDIMScheduler(1000), gate, total_steps=10, full_finetune_frac=0.2, generator=g)
    before = [p.detach().clone() for p in gate.parameters()]
    x, y = torch.randn(8, 1, 8, 8, generator=g), torch.arange(8) % 10
    logs = [tr.train_step(x, y) for _ in range(10)]
    assert [r["keep_frac"] for r in logs] == [0.5] * 8 + [1.0] * 2
    assert all(math.isfinite(r["policy_loss"]) for r in logs[:8]) and math.isnan(logs[-1]["policy_loss"])
    assert any(not torch.equal(a, b) for a, b in zip(before, gate.parameters()))
    assert all(math.isfinite(r["loss"]) for r in logs)


def test_baseline_gates_select_exact_budget():
    x = torch.randn(5, 1, 8, 8)
    t = torch.randint(0, 1000, (5,))
    for gate in (RandomPatchGate(2, 0.5), HighFrequencyGate(2, 0.5), HighFrequencyGate(2, 0.25, t_switch=0.5)):
        idx = gate.select(x, t, 0.0, torch.Generator().manual_seed(0)).keep_idx
        assert idx.shape[1] == (8 if gate.keep_ratio == 0.5 else 4)
        assert all(len(set(r.tolist())) == idx.shape[1] for r in idx)
    # the heuristic keeps the textured patch
    x = torch.zeros(1, 1, 4, 4)
    x[0, 0, 2:, :2] = torch.tensor([[1.0, -1.0], [-1.0, 1.0]])
    assert HighFrequencyGate(2, 0.25).select(x, torch.tensor([5])).keep_idx.tolist() == [[2]]


def test_trainer_bad_arguments():
    m = TinyDiT(img_size=8, patch_size=2, width=16, depth=1, heads=2)
    s = DDIMScheduler(1000)
    with pytest.raises(ValueError, match="total_steps"):
        FaPSTrainer(m, s, None, total_steps=0)
    with pytest.raises(ValueError, match="full_finetune_frac"):
        FaPSTrainer(m, s, None, total_steps=5, full_finetune_frac=1.0)
    with pytest.raises(ValueError, match="reward"):
        FaPSTrainer(m, s, None, total_steps=5, reward="loss")
    with pytest.raises(ValueError, match="loss_weighting"):
        FaPSTrainer(m, s, None, total_steps=5, loss_weighting="snr")
    with pytest.raises(ValueError, match="progress_every"):
        FaPSTrainer(m, s, None, total_steps=5, progress_every=0)
    with pytest.raises(ValueError, match="selection"):
        FrequencyGate(selection="threshold")
    with pytest.raises(ValueError, match="temperature"):
        FrequencyGate(temperature=0.0)
    with pytest.raises(ValueError, match="budget_penalty"):
        FrequencyGate(selection="bernoulli", budget_penalty=-1.0)


# -- Bernoulli selection -----------------------------------------------------------------------------------
def test_bernoulli_log_prob_equals_manual_computation_and_sums_to_one():
    logits = torch.tensor([[0.4, -1.0, 1.3]], requires_grad=True)
    keep = torch.tensor([[True, False, True]])
    p = torch.sigmoid(logits.detach()[0]).tolist()
    empty = (1 - p[0]) * (1 - p[1]) * (1 - p[2])
    manual = math.log(p[0] * (1 - p[1]) * p[2] / (1 - empty))
    lp = bernoulli_log_prob(logits, keep)
    assert lp.item() == pytest.approx(manual, abs=1e-6)
    lp.sum().backward()
    assert torch.isfinite(logits.grad).all()
    subsets = [torch.tensor([s]) for s in itertools.product([False, True], repeat=3) if any(s)]
    total = sum(bernoulli_log_prob(logits.detach(), s).exp().item() for s in subsets)
    assert total == pytest.approx(1.0, abs=1e-6)


def test_bernoulli_sampler_matches_conditional_inclusion_probabilities():
    logits = torch.tensor([-2.5, -1.5, -3.0, -2.0])  # an empty set would be common without conditioning
    draws = 20000
    keep = bernoulli_nonempty(logits.expand(draws, -1), torch.Generator().manual_seed(3))
    assert bool(keep.any(1).all())
    p = torch.sigmoid(logits.double())
    incl = p / (1 - torch.prod(1 - p))  # P(keep_i | |S| >= 1) = p_i / (1 - P(empty))
    freq = keep.double().mean(0)
    assert torch.all((freq - incl).abs() < 4 * torch.sqrt(incl * (1 - incl) / draws))


def test_bernoulli_gate_pads_and_masks_a_variable_budget():
    torch.manual_seed(0)
    gate = FrequencyGate(patch_size=2, keep_ratio=0.5, selection="bernoulli")
    x = torch.randn(16, 1, 8, 8)
    d = gate.select(x, torch.randint(0, 1000, (16,)), 0.0, torch.Generator().manual_seed(0))
    counts = d.mask.sum(1)
    assert d.keep_idx.shape == (16, int(counts.max())) and bool((counts >= 1).all())
    assert len(set(counts.tolist())) > 1  # the number of kept patches varies between images
    for row, m in zip(d.keep_idx, d.mask):
        assert len(set(row[m].tolist())) == int(m.sum())
    assert torch.allclose(d.penalty, gate.budget_penalty * (counts / 16 - 0.5) ** 2)
    # a masked forward equals the forward on the kept tokens alone (padding is invisible)
    model = TinyDiT(img_size=8, patch_size=2, width=16, depth=2, heads=2).eval()
    for p_ in model.parameters():
        torch.nn.init.normal_(p_, std=0.2)
    t, y = torch.randint(0, 1000, (16,)), torch.arange(16) % 10
    padded = model(x, t, y, d.keep_idx, d.mask)
    for i in range(3):
        k = int(counts[i])
        alone = model(x[i : i + 1], t[i : i + 1], y[i : i + 1], d.keep_idx[i : i + 1, :k])
        assert torch.allclose(padded[i, :k], alone[0], atol=1e-5)


def test_budget_penalty_drives_mean_keep_fraction_to_rho():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    gate = FrequencyGate(patch_size=2, keep_ratio=0.25, selection="bernoulli", hidden=16, budget_penalty=20.0)
    torch.nn.init.zeros_(gate.net[-1].bias)  # start at keep probability 0.5, far from rho = 0.25
    model = TinyDiT(img_size=8, patch_size=2, width=8, depth=1, heads=2)
    tr = FaPSTrainer(model, DDIMScheduler(100), gate, total_steps=10**6, reward=lambda pp, idx, t: torch.zeros(len(t)),
                     policy_lr=1e-2, full_finetune_frac=0.0, generator=g)  # fmt: skip
    fracs = [tr.train_step(torch.randn(32, 1, 8, 8, generator=g))["keep_frac"] for _ in range(300)]
    assert fracs[0] > 0.4
    assert abs(sum(fracs[-50:]) / 50 - 0.25) < 0.05


# -- progress reward and Min-SNR weighting -------------------------------------------------------------------
def test_progress_reward_is_the_probe_loss_decrease_over_a_window():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = TinyDiT(img_size=8, patch_size=2, width=16, depth=1, heads=2)
    gate = FrequencyGate(patch_size=2, keep_ratio=0.5, hidden=16)
    tr = FaPSTrainer(model, DDIMScheduler(1000), gate, total_steps=10**6, reward="progress", lr=3e-3,
                     full_finetune_frac=0.0, generator=g)  # fmt: skip
    x = torch.randn(16, 1, 8, 8, generator=torch.Generator().manual_seed(1)) * 0.1 + 0.5  # easy: a constant image
    gate_before = [p.detach().clone() for p in gate.parameters()]
    logs = [tr.train_step(x) for _ in range(10)]
    assert all(math.isnan(r["reward"]) for r in logs[:9])  # one reward per window of M = 10 steps
    assert not any(math.isnan(r["policy_loss"]) for r in logs[9:])
    assert logs[9]["reward"] > 0  # the denoiser learned: the probe loss fell over the window
    before = tr.probe_loss()
    logs = [tr.train_step(x) for _ in range(10)]
    assert logs[-1]["reward"] == pytest.approx(before - tr.probe_loss(), rel=1e-6)
    # the first window's normalised reward is 0 (nothing to compare with); the second one moves the gate
    assert any(not torch.equal(a, b) for a, b in zip(gate_before, gate.parameters()))


def test_min_snr_weights():
    m = TinyDiT(img_size=8, patch_size=2, width=16, depth=1, heads=2)
    s = DDIMScheduler(1000)
    tr = FaPSTrainer(m, s, None, total_steps=5, loss_weighting="min_snr", min_snr_gamma=5.0)
    t = torch.tensor([0, 100, 500, 999])
    a = s.alphas_cumprod[t]
    snr = a / (1 - a)
    assert torch.allclose(tr._weights(t), torch.minimum(snr, torch.tensor(5.0)) / snr)
    assert tr._weights(torch.tensor([999])).item() == pytest.approx(1.0)  # SNR < gamma: weight 1
    assert tr._weights(torch.tensor([0])).item() < 0.01  # nearly clean: down-weighted
    assert math.isfinite(tr.train_step(torch.randn(4, 1, 8, 8))["loss"])


@pytest.mark.parametrize("selection", ["bernoulli", "topk"])
def test_importance_weighted_loss_estimates_the_all_patch_mean(selection):
    """Horvitz-Thompson: E[(1/N) sum_{i in S} l_i / pi_i] = mean_i l_i (exact for Bernoulli; topk uses the
    Monte Carlo inclusion probabilities, so it only has to beat the plain mean clearly)."""
    torch.manual_seed(0)
    gate = FrequencyGate(patch_size=2, keep_ratio=0.5, selection=selection, hidden=16)
    torch.nn.init.normal_(gate.net[-1].weight, std=2.0)  # a clearly non-uniform gate
    x = torch.randn(1, 1, 8, 8).expand(4000, -1, -1, -1)
    t = torch.full((4000,), 300)
    with torch.no_grad():
        logits = gate(x[:1], t[:1])[0]
        d = gate.select(x, t, 0.0, torch.Generator().manual_seed(2), with_inclusion=True)
    losses = 1.0 + (logits - logits.mean()) / logits.std()  # the gate prefers high-loss patches
    valid = torch.ones(d.keep_idx.shape) if d.mask is None else d.mask.float()
    est = (losses[d.keep_idx] * valid / d.inclusion).sum(1) / 16
    unweighted = (losses[d.keep_idx] * valid).sum(1) / valid.sum(1)
    err_ht, err_plain = abs(float(est.mean()) - 1.0), abs(float(unweighted.mean()) - 1.0)
    assert err_plain > 0.1  # the gate's preference biases the plain mean of the kept patches
    if selection == "bernoulli":
        assert err_ht < 3 * float(est.std()) / 4000**0.5 + 1e-3
    else:
        assert err_ht < 0.25 * err_plain


def test_trainer_works_with_a_denoiser_without_keep_mask_for_exact_budgets():
    """A user's DiT with forward(x_t, t, y, keep_idx) (no keep_mask) works with top-k and baseline gates."""

    class MinimalDiT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = TinyDiT(img_size=8, patch_size=2, width=16, depth=1, heads=2)
            self.patch_size = 2

        def forward(self, x_t, t, y=None, keep_idx=None):
            return self.inner(x_t, t, y, keep_idx)

    g = torch.Generator().manual_seed(0)
    for gate in (FrequencyGate(patch_size=2, keep_ratio=0.5), RandomPatchGate(2, 0.5)):
        tr = FaPSTrainer(MinimalDiT(), DDIMScheduler(1000), gate, total_steps=10, generator=g)
        assert math.isfinite(tr.train_step(torch.randn(4, 1, 8, 8, generator=g))["loss"])
