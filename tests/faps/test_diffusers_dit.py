"""FaPS trains a ``diffusers`` DiT built from a config through :class:`DiffusersDiT` (needs the [diffusers] extra)."""

import pytest
import torch

diffusers = pytest.importorskip("diffusers")

from icml26.faps import DDIMScheduler, DiffusersDiT, FaPSTrainer, FrequencyGate, patchify  # noqa: E402


def _dit(seed=0, out_channels=None):
    torch.manual_seed(seed)
    return diffusers.DiTTransformer2DModel(
        num_attention_heads=2,
        attention_head_dim=16,
        in_channels=3,
        out_channels=out_channels,
        num_layers=2,
        sample_size=8,
        patch_size=2,
        num_embeds_ada_norm=10,
    )


@pytest.mark.parametrize("out_channels", [None, 6])  # 6: a DiT that learns its variance
def test_every_token_kept_equals_the_plain_diffusers_forward(out_channels):
    dit = _dit(out_channels=out_channels)
    # adaLN-Zero starts every block as the identity; perturb so the blocks and the head really act
    with torch.no_grad():
        for p in dit.parameters():
            p.add_(0.05 * torch.randn_like(p))
    m = DiffusersDiT(dit).eval()
    x, t, y = torch.randn(3, 3, 8, 8), torch.tensor([5, 500, 900]), torch.tensor([1, 2, 10])
    plain = dit(x, timestep=t, class_labels=y).sample[:, :3]
    assert torch.allclose(m(x, t, y), plain)
    idx = torch.arange(m.num_patches).expand(3, -1)
    assert torch.allclose(m(x, t, y, idx), patchify(plain, 2), atol=1e-5)
    # with fewer tokens attention sees less, so outputs differ from the full run; but the order of the kept tokens
    # must not matter (positions travel with the tokens): the same set permuted gives the same outputs permuted
    sub = torch.randperm(m.num_patches)[:8].expand(3, -1)
    perm = torch.randperm(8)
    a, b = m(x, t, y, sub), m(x, t, y, sub[:, perm])
    assert torch.allclose(a[:, perm], b, atol=1e-5)
    # a masked-out token changes nothing for the others (keep_mask is an attention mask)
    mask = torch.ones(3, 8, dtype=torch.bool)
    mask[:, -2:] = False
    full = m(x, t, y, sub[:, :6])
    padded = m(x, t, y, sub, keep_mask=mask)
    assert torch.allclose(padded[:, :6], full, atol=1e-4)


def test_a_faps_step_at_keep_half_trains_the_diffusers_dit():
    dit = _dit()
    m = DiffusersDiT(dit)
    gate = FrequencyGate(2, keep_ratio=0.5)
    g = torch.Generator().manual_seed(0)
    tr = FaPSTrainer(m, DDIMScheduler(100), gate, total_steps=100, generator=g, lr=1e-3)
    x, y = torch.randn(8, 3, 8, 8).clamp(-1, 1), torch.randint(0, 10, (8,))
    before = {n: p.detach().clone() for n, p in dit.named_parameters()}
    out = tr.train_step(x, y)
    assert out is not None
    moved = [n for n, p in dit.named_parameters() if not torch.equal(p, before[n])]
    assert any("transformer_blocks" in n for n in moved) and any("proj_out" in n for n in moved)


def test_bad_input_is_named():
    m = DiffusersDiT(_dit())
    with pytest.raises(TypeError, match="DiTTransformer2DModel"):
        DiffusersDiT(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="x_t"):
        m(torch.randn(1, 3, 16, 16), torch.tensor([1]))
    with pytest.raises(ValueError, match="keep_idx"):
        m(torch.randn(1, 3, 8, 8), torch.tensor([1]), None, torch.tensor([[99]]))
    with pytest.raises(ValueError, match="y must"):
        m(torch.randn(1, 3, 8, 8), torch.tensor([1]), torch.tensor([11]))
