"""CMS: a block with period C changes only at multiples of C, by exactly -eta_l * (sum of its C gradients)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.monet import ContinuumMemoryMLP


def _snapshot(cms):
    return [[p.detach().clone() for p in b.parameters()] for b in cms.blocks]


@pytest.mark.parametrize("lr_scale", ["none", "inverse_period"])
def test_block_updates_equal_summed_gradients(lr_scale):
    torch.manual_seed(0)
    periods, lr = (1, 2, 3), 0.1
    cms = ContinuumMemoryMLP(4, periods)
    cms.configure_optimizers(lr, torch.optim.SGD, lr_scale=lr_scale)
    start = _snapshot(cms)
    manual = [[torch.zeros_like(p) for p in b.parameters()] for b in cms.blocks]
    last = _snapshot(cms)
    for step in range(1, 7):
        x = torch.randn(5, 4)
        loss = cms(x).pow(2).mean()
        grads = torch.autograd.grad(loss, [p for b in cms.blocks for p in b.parameters()], retain_graph=True)
        loss.backward()
        i = 0
        for b_idx, b in enumerate(cms.blocks):
            for j, _ in enumerate(b.parameters()):
                manual[b_idx][j] += grads[i]
                i += 1
        cms.accumulate()
        stepped = cms.maybe_step(step)
        now = _snapshot(cms)
        for b_idx, c in enumerate(periods):
            assert stepped[b_idx] == (step % c == 0)
            changed = any(not torch.equal(a, b) for a, b in zip(now[b_idx], last[b_idx]))
            assert changed == (step % c == 0)
            if step % c == 0:
                eta = lr / c if lr_scale == "inverse_period" else lr
                for a, b, g in zip(now[b_idx], last[b_idx], manual[b_idx]):
                    torch.testing.assert_close(a, b - eta * g, rtol=1e-5, atol=1e-6)
                manual[b_idx] = [torch.zeros_like(g) for g in manual[b_idx]]
        last = now
    assert cms.n_updates == [6, 3, 2]
    assert any(not torch.equal(a, b) for a, b in zip(start[2], last[2]))


def test_accumulate_survives_outer_zero_grad():
    torch.manual_seed(1)
    cms = ContinuumMemoryMLP(3, (2,))
    cms.configure_optimizers(0.1, torch.optim.SGD, lr_scale="none")
    x = torch.randn(4, 3)
    cms(x).sum().backward()
    g1 = [p.grad.clone() for p in cms.parameters()]
    cms.accumulate()
    cms.zero_grad()  # an outer zero_grad must not erase the accumulated chunk
    assert all(p.grad is None for p in cms.parameters())
    cms(x).sum().backward()
    g2 = [p.grad.clone() for p in cms.parameters()]
    before = [p.detach().clone() for p in cms.parameters()]
    cms.accumulate()
    cms.maybe_step(2)
    for p, b, a, c in zip(cms.parameters(), before, g1, g2):
        torch.testing.assert_close(p.detach(), b - 0.1 * (a + c))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.integers(1, 20))
def test_update_counts_are_floor_steps_over_period(periods, steps):
    cms = ContinuumMemoryMLP(2, periods)
    cms.configure_optimizers(0.01, torch.optim.SGD)
    for t in range(1, steps + 1):
        cms(torch.ones(1, 2)).sum().backward()
        cms.accumulate()
        cms.maybe_step(t)
    assert cms.n_updates == [steps // c for c in periods]


def test_bad_inputs():
    with pytest.raises(ValueError, match="dim"):
        ContinuumMemoryMLP(0)
    with pytest.raises(ValueError, match="periods"):
        ContinuumMemoryMLP(4, (1, 0))
    with pytest.raises(ValueError, match="periods"):
        ContinuumMemoryMLP(4, ())
    with pytest.raises(ValueError, match="hidden_mult"):
        ContinuumMemoryMLP(4, hidden_mult=0)
    cms = ContinuumMemoryMLP(4)
    with pytest.raises(RuntimeError, match="configure_optimizers"):
        cms.maybe_step(1)
    with pytest.raises(ValueError, match="lr_scale"):
        cms.configure_optimizers(0.1, lr_scale="sqrt")
    with pytest.raises(ValueError, match="lr"):
        cms.configure_optimizers(-1.0)
    cms.configure_optimizers(0.1)
    with pytest.raises(ValueError, match="step"):
        cms.maybe_step(0)
